"""Persisted fragments from a test's side: fetched from the URLs brokers sign for them, and
decompressed as their codec says, to be compared with what was appended.

    >>> decompress("SNAPPY", bytes.fromhex("ff060000734e61507059" "01060000" "00000000" "6869"))
    b'hi'
"""

from __future__ import annotations

import gzip
import io
import urllib.request

# gazctl prints a fragment's codec as the number of Gazette's CompressionCodec enum.
CODECS = {1: "NONE", 2: "GZIP", 3: "ZSTANDARD", 4: "SNAPPY", 5: "GZIP_OFFLOAD_DECOMPRESSION"}


def fetch(url: str, timeout: float = 10.0) -> tuple[bytes, str]:
    """The body of an HTTP GET of `url` and its Content-Encoding ("" when none)."""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read(), r.headers.get("Content-Encoding", "")


def decompress(codec: str | int, data: bytes, content_encoding: str = "") -> bytes:
    """A fragment file's content. GZIP files hold several gzip members; SNAPPY files are in
    snappy's framing format; a GZIP_OFFLOAD_DECOMPRESSION file is gzip that a store may or may not
    have decompressed on the way (`content_encoding` "gzip": it did not)."""
    codec = CODECS.get(codec, codec) if isinstance(codec, int) else codec
    if codec == "NONE" or (codec == "GZIP_OFFLOAD_DECOMPRESSION" and content_encoding != "gzip"):
        return data
    if codec in ("GZIP", "GZIP_OFFLOAD_DECOMPRESSION"):
        return gzip.decompress(data)
    if codec == "SNAPPY":
        return snappy_framed(data)
    if codec == "ZSTANDARD":
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        return reader.read()
    raise ValueError(f"unknown codec {codec!r}")


def snappy_framed(data: bytes) -> bytes:
    """Snappy's framing format: chunks of a type byte and a 3-byte little-endian length. The
    stream identifier (0xff), compressed (0x00) and uncompressed (0x01) data, each after a 4-byte
    checksum (not checked here: the caller compares the result), and skippable chunks
    (0x80-0xfe)."""
    out = bytearray()
    at = 0
    while at < len(data):
        kind, size = data[at], int.from_bytes(data[at + 1 : at + 4], "little")
        body = data[at + 4 : at + 4 + size]
        if len(body) != size:
            raise ValueError(f"snappy chunk at {at} is cut short")
        if kind == 0xFF:
            if body != b"sNaPpY":
                raise ValueError(f"bad snappy stream identifier at {at}")
        elif kind == 0x00:
            out += snappy_block(body[4:])
        elif kind == 0x01:
            out += body[4:]
        elif kind < 0x80:
            raise ValueError(f"unskippable snappy chunk type {kind:#x} at {at}")
        at += 4 + size
    return bytes(out)


def snappy_block(data: bytes) -> bytes:
    """One snappy block: its length as a varint, then literals and back-references."""
    length, shift, at = 0, 0, 0
    while True:
        b = data[at]
        at += 1
        length |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    out = bytearray()
    while at < len(data):
        tag = data[at]
        at += 1
        kind = tag & 3
        if kind == 0:  # literal; lengths past 60 follow in 1 to 4 bytes
            n = tag >> 2
            if n >= 60:
                extra = n - 59
                n = int.from_bytes(data[at : at + extra], "little")
                at += extra
            n += 1
            out += data[at : at + n]
            at += n
            continue
        if kind == 1:  # copy: 3-bit length, 11-bit offset
            n, offset = 4 + ((tag >> 2) & 7), ((tag >> 5) << 8) | data[at]
            at += 1
        else:  # copy: 6-bit length, 2- or 4-byte offset
            width = 2 if kind == 2 else 4
            n, offset = 1 + (tag >> 2), int.from_bytes(data[at : at + width], "little")
            at += width
        if offset == 0 or offset > len(out):
            raise ValueError(f"snappy copy offset {offset} outside the {len(out)} bytes so far")
        for _ in range(n):  # byte by byte: a copy may overlap what it writes
            out.append(out[-offset])
    if len(out) != length:
        raise ValueError(f"snappy block decoded to {len(out)} bytes, not {length}")
    return bytes(out)
