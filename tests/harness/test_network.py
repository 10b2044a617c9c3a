"""The network-fault harness (tests/harness/network.py) on its own: parties in namespaces reach one
another, a partition drops what it names (both ways or one), toxiproxy's toxics reach through the
NAT into a proxy, and nothing is left behind, even when the owner is SIGKILLed."""

import os
import signal
import subprocess
import sys
import time

from conftest import requires_network_faults
from network import PREFIX, Network

pytestmark = requires_network_faults

CLIENT = (
    "import sys, time, urllib.request\n"
    "t = time.monotonic()\n"
    "try:\n"
    "    urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])).read()\n"
    "    print(round(time.monotonic() - t, 3))\n"
    "except Exception as e:\n"
    "    print('failed', type(e).__name__)\n"
)


def fetch(net: Network, client: str, server: str, timeout: float = 2.0) -> str:
    """What a GET from `client`'s namespace to `server`'s HTTP server gives: seconds, or `failed`."""
    url = f"http://{net.address(server)}:8000/"
    out = subprocess.run([*net.prefix(client), sys.executable, "-c", CLIENT, url, str(timeout)], capture_output=True)
    return out.stdout.decode().strip()


def leftovers() -> list[str]:
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in (names + links).splitlines() if line.startswith(PREFIX)]


def test_partitions_and_toxics_between_parties_and_nothing_left_behind():
    before = set(leftovers())
    with Network(["client", "server"]) as net:
        server = subprocess.Popen(
            [*net.prefix("server"), sys.executable, "-m", "http.server", "8000"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while fetch(net, "client", "server").startswith("failed"):
            assert time.monotonic() < deadline, "the server in its namespace never answered"
            time.sleep(0.2)
        for direction in ("both", "to", "from"):  # a TCP exchange needs both ways
            net.partition("client", "server", direction)
            assert fetch(net, "client", "server", timeout=1.0).startswith("failed"), direction
            net.heal()
            assert not fetch(net, "client", "server").startswith("failed"), direction
        net.proxy_into("client", "server", 8000)
        assert float(fetch(net, "client", "server")) < 0.4
        net.toxic("server", "latency", latency=600)
        assert float(fetch(net, "client", "server")) >= 0.6  # the client dialled the same address
        net.partition("client", "server", "both")  # partitions hold through the NAT
        assert fetch(net, "client", "server", timeout=1.0).startswith("failed")
        net.heal()
        net.clear_toxics()
        net.toxic("server", "reset_peer", timeout=0)
        assert fetch(net, "client", "server") == "failed ConnectionResetError"
        net.clear_toxics()
        assert float(fetch(net, "client", "server")) < 0.4
    server.wait(10)  # killed by the teardown, with whatever else ran in the namespaces
    assert set(leftovers()) == before


def test_a_killed_owner_leaves_nothing_behind():
    """The watchdog tears everything down once the process that made the network is gone."""
    before = set(leftovers())
    here = os.path.dirname(os.path.abspath(__file__))
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sys, time; sys.path.insert(0, {here!r}); from network import Network; "
            "n = Network(['a', 'b']).start(); n.start_toxiproxy(); print('up', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout.readline().strip() == "up"
    assert len(set(leftovers()) - before) >= 5  # two namespaces, the bridge, two veth ends
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 30
    while set(leftovers()) != before:
        assert time.monotonic() < deadline, f"left behind: {set(leftovers()) - before}"
        time.sleep(0.2)
