"""Gazette message UUIDs for test data written from Python."""

import uuid


def gazette_uuid(producer: int, clock: int, flags: int) -> str:
    """A Gazette message UUID: the clock in the v1 timestamp and sequence bits, the flags
    (0 OUTSIDE_TXN, 1 CONTINUE_TXN, 2 ACK_TXN) in the low 10 bits, the producer in the node."""
    t = clock >> 4
    seq = 0x8000 | ((clock & 0xF) << 10) | flags
    return str(
        uuid.UUID(
            fields=(t & 0xFFFFFFFF, (t >> 32) & 0xFFFF, ((t >> 48) & 0x0FFF) | 0x1000, seq >> 8, seq & 0xFF, producer)
        )
    )


def gazette_clock(message_uuid: str) -> int:
    """The clock of a Gazette message UUID (Gazette's GetClock; 0 for none): the inverse of
    `gazette_uuid`'s packing."""
    if not message_uuid:
        return 0
    u = uuid.UUID(message_uuid)
    return (u.time << 4) | ((u.clock_seq >> 10) & 0xF)
