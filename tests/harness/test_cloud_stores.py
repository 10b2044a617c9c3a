"""The harness's cloud fragment stores: brokers persist fragments to GCS (fake-gcs-server) and
Azure (Azurite) as they do in production, signing URLs that name storage.googleapis.com and
<account>.blob.core.windows.net, which reach the emulators through the cluster's hosts file and
CA; what each emulator checks of a signature, and how each serves a GZIP_OFFLOAD_DECOMPRESSION
fragment, is pinned here, since the docs claim it."""

import json
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from cluster import LocalCluster
from conftest import requires_local_binaries
from fragments import decompress
from specs import journal_specs

pytestmark = requires_local_binaries

CODECS = ["NONE", "GZIP_OFFLOAD_DECOMPRESSION"]
LINES = [json.dumps({"n": i, "pad": "x" * 80}) + "\n" for i in range(24)]


def put(broker: str, journal: str, body: bytes) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{broker}/{journal}", data=body, method="PUT"), timeout=30).read()


def signed(cluster: LocalCluster, name: str, ttl: str = "1m") -> list[dict]:
    out = cluster.gazctl_json("fragments", "--selector", f"name={name}", "--url-ttl", ttl)
    return [f for line in out.splitlines() if line.strip() and (f := json.loads(line))["spec"].get("backing_store")]


@pytest.fixture(scope="module", params=["gcs", "azure"])
def stored(request):
    """A cluster on the cloud store, and a journal a codec with two fragments persisted there."""
    with LocalCluster(brokers=1, store=request.param) as cluster:
        for codec in CODECS:
            name = f"cloud/{codec.lower()}"
            cluster.apply(
                journal_specs(
                    "cloud/",
                    [codec.lower()],
                    codec=codec,
                    length=1024,
                    refresh="1s",
                    store=cluster.store_url("fragments/"),
                )
            )
            put(cluster.broker, name, "".join(LINES[:12]).encode())
            put(cluster.broker, name, "".join(LINES[12:]).encode())
            put(cluster.broker, name, b"")
            deadline = time.monotonic() + 60
            while len(signed(cluster, name)) < 2:
                assert time.monotonic() < deadline, f"{name}'s fragments were not persisted"
                time.sleep(0.2)
        yield cluster


def test_brokers_persist_and_pass_the_health_check_signing_for_the_cloud_host(stored):
    store = stored.cloud_store
    log = Path(stored.state.root, "broker-0.log").read_text()
    assert "store health check failed" not in log
    assert "fragments/.test/health-check" in stored.store_keys("fragments/")
    for f in signed(stored, "cloud/none"):
        url = urllib.parse.urlsplit(f["signed_url"])
        assert (url.scheme, url.hostname, url.port) == ("https", store.host, None), f["signed_url"]
        assert ("Signature=" if store.kind == "gcs" else "sig=") in url.query, f["signed_url"]


@pytest.mark.parametrize("codec", CODECS)
def test_signed_urls_serve_the_appended_bytes(stored, codec):
    store = stored.cloud_store
    content = b""
    for f in signed(stored, f"cloud/{codec.lower()}"):
        status, body, encoding = store.fetch(f["signed_url"], {"Accept-Encoding": "identity"})
        assert status == 200
        content += decompress(f["spec"]["compression_codec"], body, encoding)
    assert content == "".join(LINES).encode()


def test_gzip_offload_fragments_are_transcoded_as_the_store_does(stored):
    """GCS serves an object stored with Content-Encoding: gzip decompressed to a request that
    does not accept gzip (decompressive transcoding), and as stored to one that does; Azure
    never transcodes."""
    store = stored.cloud_store
    f = signed(stored, "cloud/gzip_offload_decompression")[0]
    _, identity, identity_encoding = store.fetch(f["signed_url"], {"Accept-Encoding": "identity"})
    _, gzipped, gzip_encoding = store.fetch(f["signed_url"], {"Accept-Encoding": "gzip"})
    assert gzip_encoding == "gzip" and gzipped[:2] == b"\x1f\x8b"
    if store.kind == "gcs":
        assert identity_encoding == "" and identity == "".join(LINES[:12]).encode()
    else:
        assert identity_encoding == "gzip" and identity == gzipped


def test_what_the_emulator_checks_of_a_signature(stored):
    """Azurite refuses a SAS whose signature or expiry is altered, or that has expired; fake-gcs-server
    checks no signature (the docs say so)."""
    store = stored.cloud_store
    url = signed(stored, "cloud/none")[0]["signed_url"]
    param = "X-Goog-Signature" if "X-Goog-Signature=" in url else ("Signature" if store.kind == "gcs" else "sig")
    sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)[param][0]
    tampered = url.replace(urllib.parse.quote(sig, safe=""), urllib.parse.quote("A" + sig[1:], safe=""))
    assert tampered != url
    expiring = signed(stored, "cloud/none", ttl="1s")[0]["signed_url"]
    time.sleep(2.5)
    for bad in (tampered, expiring):
        status, _, _ = store.fetch(bad)
        assert status == (403 if store.kind == "azure" else 200), bad
