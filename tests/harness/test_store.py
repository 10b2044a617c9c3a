"""The harness's S3 fragment store: brokers persist fragments of every codec to the cluster's S3
server (MinIO, which checks every request's signature), hand out signed URLs that serve their bytes
to anyone with HTTP, and Gazette's own reader reads the journals back from the store alone; the
server stops and starts on its port and data. Then the cloud stores (GCS and Azure), below."""

import doctest
import json
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import fragments
import judge
from cluster import LocalCluster, State, alive, s3_request
from conftest import requires_local_binaries
from fragments import decompress, fetch
from messages import gazette_uuid
from specs import journal_specs

pytestmark = requires_local_binaries

ROOT = Path(__file__).resolve().parents[2]
HARNESS = [sys.executable, str(ROOT / "tests" / "harness" / "cluster.py")]
CODECS = ["NONE", "GZIP", "SNAPPY", "ZSTANDARD", "GZIP_OFFLOAD_DECOMPRESSION"]
POSTFIX = 'utc_date={{.Spool.FirstAppendTime.Format "2006-01-02"}}'
APPENDS, LINES = 5, 8  # each append (about 1.3 KiB) is over the fragment length: one fragment each


def journal(codec: str) -> str:
    return f"stored/{codec.lower()}"


def put(broker: str, journal: str, body: bytes) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{broker}/{journal}", data=body, method="PUT"), timeout=30).read()


def wait_until(cond, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not (result := cond()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.1)
    return result


@pytest.fixture(scope="module")
def stored():
    """An `s3` cluster and one journal a codec, each holding APPENDS fragments, all persisted to the
    S3 server under a `utc_date=` postfix; yields the cluster and each journal's lines."""
    started = time.monotonic()
    with LocalCluster(brokers=1, store="s3") as cluster:
        cluster.started_in = time.monotonic() - started
        lines: dict[str, list[str]] = {}
        for c, codec in enumerate(CODECS):
            name = journal(codec)
            cluster.apply(
                journal_specs(
                    "stored/",
                    [codec.lower()],
                    codec=codec,
                    length=1024,
                    refresh="1s",
                    store=cluster.store_url("fragments/"),
                    path_postfix_template=POSTFIX,
                )
            )
            lines[name] = []
            for a in range(APPENDS):
                batch = [
                    json.dumps(
                        {"_meta": {"uuid": gazette_uuid(c + 1, 16 * (a * LINES + i + 1), 0)}, "n": a * LINES + i}
                        | {"pad": "x" * 80}
                    )
                    + "\n"
                    for i in range(LINES)
                ]
                put(cluster.broker, name, "".join(batch).encode())
                lines[name] += batch
            # An empty append rolls the last fragment, which is over the length, so it is persisted too.
            put(cluster.broker, name, b"")
        for name in lines:
            wait_until(
                lambda name=name: (
                    len(persisted := [f for f in cluster.fragments(name) if f.get("backing_store")]) == APPENDS
                    and persisted
                ),
                f"{name}'s fragments to be persisted",
            )
        yield cluster, lines


def signed(cluster: LocalCluster, name: str) -> list[dict]:
    """`gazctl journals fragments --url-ttl 1m`: each fragment's spec and signed URL."""
    out = cluster.gazctl_json("fragments", "--selector", f"name={name}", "--url-ttl", "1m")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_the_s3_server_starts_at_once_and_the_store_passes_the_health_check(stored):
    cluster, _ = stored
    assert cluster.started_in < 10, cluster.started_in
    log = Path(cluster.state.root, "broker-0.log").read_text()
    assert "store health check failed" not in log
    assert cluster.store_url("x/") == (
        f"s3://gazette/x/?endpoint=http%3A%2F%2F127.0.0.1%3A{cluster.state.s3_port}&region=us-east-1"
    )
    assert "fragments/.test/health-check" in cluster.s3_keys()  # the check's object, under the store's prefix


@pytest.mark.parametrize("codec", CODECS)
def test_signed_urls_serve_the_appended_bytes(stored, codec):
    cluster, lines = stored
    name = journal(codec)
    fragments = [f for f in signed(cluster, name) if f["spec"].get("backing_store")]
    assert len(fragments) == APPENDS
    content = b""
    for f in fragments:
        spec = f["spec"]
        assert spec["backing_store"] == cluster.store_url("fragments/")
        assert spec["mod_time"] > 0
        url = f["signed_url"]
        # The postfix's "=" comes escaped (%3D) in the URL's path.
        assert urllib.parse.unquote(url).startswith(f"{cluster.s3_endpoint}/gazette/fragments/{name}/utc_date=20"), url
        assert "X-Amz-Signature=" in url
        body, encoding = fetch(url)
        assert encoding == ("gzip" if codec == "GZIP_OFFLOAD_DECOMPRESSION" else "")
        data = decompress(spec.get("compression_codec", 0), body, encoding)
        assert len(data) == spec["end"] - spec.get("begin", 0)
        content += data
    assert content == "".join(lines[name]).encode()
    keys = cluster.s3_keys(f"fragments/{name}/")
    assert len(keys) == APPENDS and all("/utc_date=20" in k for k in keys), keys


def test_the_server_serves_a_url_only_as_signed(stored):
    cluster, lines = stored
    url = signed(cluster, journal("NONE"))[0]["signed_url"]
    assert fetch(url)[0] == "".join(lines[journal("NONE")][:LINES]).encode()
    path, query = url.split("?")
    signature = urllib.parse.parse_qs(query)["X-Amz-Signature"][0]
    tampered = [
        url.replace(signature, signature[:-1] + ("1" if signature[-1] == "0" else "0")),
        url.replace("X-Amz-Expires=60", "X-Amz-Expires=61"),  # a signed parameter
        url.replace("127.0.0.1", "localhost"),  # the Host header
        path,  # no signature
    ]
    for bad in tampered:
        assert bad != url
        with pytest.raises(urllib.error.HTTPError) as refused:
            fetch(bad)
        assert refused.value.code == 403, bad


@pytest.mark.parametrize("codec", CODECS)
def test_a_read_names_the_fragment_url(stored, codec):
    """A metadata-only Read through the broker's gateway (HEAD) carries the fragment's signed URL,
    as a Read with `do_not_proxy` does before it closes."""
    cluster, lines = stored
    name = journal(codec)
    offset = len("".join(lines[name][:LINES])) + 7  # inside the second fragment
    with urllib.request.urlopen(urllib.request.Request(f"{cluster.broker}/{name}?offset={offset}", method="HEAD")) as r:
        url = r.headers["X-Fragment-Location"]
        begin, end = (int(x, 16) for x in r.headers["X-Fragment-Name"].split("-")[:2])
    assert url and url.startswith(cluster.s3_endpoint), dict(r.headers)
    body, encoding = fetch(url)
    assert decompress(codec, body, encoding) == "".join(lines[name]).encode()[begin:end]


def test_the_store_stops_and_starts_on_its_port_with_its_objects(stored):
    cluster, lines = stored
    name = journal("SNAPPY")
    keys, port = cluster.s3_keys(), cluster.state.s3_port
    url = signed(cluster, name)[0]["signed_url"]
    cluster.stop_store()
    with pytest.raises(urllib.error.URLError):
        fetch(url, timeout=2)
    started = time.monotonic()
    cluster.start_store()
    assert time.monotonic() - started < 2
    assert cluster.state.s3_port == port and cluster.s3_keys() == keys
    assert decompress("SNAPPY", *fetch(url)) == "".join(lines[name][:LINES]).encode()


def test_gazettes_reader_reads_the_journals_from_the_store_alone(stored):
    """The broker is killed and started again: its spools are gone, and the journals' only copy
    is in the S3 store. Gazette's reader reads them whole through the broker, and fetching the
    fragments itself from their signed URLs (DoNotProxy)."""
    cluster, lines = stored
    cluster.kill_broker(0)
    cluster.start_broker(0)
    for codec in CODECS:
        name = journal(codec)
        want = [line.rstrip("\n") for line in lines[name]]
        proxied = wait_until(lambda name=name: judge.read(cluster.broker, name), f"{name} to be readable again")
        assert [m["payload"] for m in proxied] == want, codec
        direct = judge.read(cluster.broker, name, direct=True)
        assert [m["payload"] for m in direct] == want, codec
        assert proxied[-1]["end"] == sum(len(line) for line in lines[name])


def test_the_snappy_decoder_of_the_tests():
    assert doctest.testmod(fragments).failed == 0
    with pytest.raises(ValueError, match="unskippable"):
        fragments.snappy_framed(bytes.fromhex("02000000"))


def test_cli_runs_the_store_and_stops_it_with_the_cluster(tmp_path):
    def harness(*args: str) -> None:
        subprocess.run(HARNESS + ["--dir", str(tmp_path), *args], capture_output=True, check=True)

    harness("up", "--store", "s3")
    env = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines())
    state = State.load(tmp_path / "state.json")
    endpoint = f"http://127.0.0.1:{state.s3_port}"
    assert env["GAZETTE_S3_ENDPOINT"] == endpoint
    assert env["GAZETTE_S3_STORE"] == (
        f"s3://gazette/?endpoint=http%3A%2F%2F127.0.0.1%3A{state.s3_port}&region=us-east-1"
    )
    assert alive(state.s3_pid)
    harness("stop-store")
    assert not alive(state.s3_pid)
    harness("start-store")
    restarted = State.load(tmp_path / "state.json")
    assert alive(restarted.s3_pid) and restarted.s3_port == state.s3_port
    urllib.request.urlopen(s3_request("GET", endpoint + "/gazette"), timeout=5).read()
    harness("down")
    assert not alive(restarted.s3_pid) and not alive(state.etcd_pid)


# -- The cloud stores (harness/cloud_stores.py) ---------------------------------------------------
# The harness's cloud fragment stores: brokers persist fragments to GCS (fake-gcs-server) and
# Azure (Azurite) as they do in production, signing URLs that name storage.googleapis.com and
# <account>.blob.core.windows.net, which reach the emulators through the cluster's hosts file and
# CA; what each emulator checks of a signature, and how each serves a GZIP_OFFLOAD_DECOMPRESSION
# fragment, is pinned here, since the docs claim it.

CLOUD_CODECS = ["NONE", "GZIP_OFFLOAD_DECOMPRESSION"]
CLOUD_LINES = [json.dumps({"n": i, "pad": "x" * 80}) + "\n" for i in range(24)]


def cloud_signed(cluster: LocalCluster, name: str, ttl: str = "1m") -> list[dict]:
    out = cluster.gazctl_json("fragments", "--selector", f"name={name}", "--url-ttl", ttl)
    return [f for line in out.splitlines() if line.strip() and (f := json.loads(line))["spec"].get("backing_store")]


@pytest.fixture(scope="module", params=["gcs", "azure"])
def cloud_stored(request):
    """A cluster on the cloud store, and a journal a codec with two fragments persisted there."""
    with LocalCluster(brokers=1, store=request.param) as cluster:
        for codec in CLOUD_CODECS:
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
            put(cluster.broker, name, "".join(CLOUD_LINES[:12]).encode())
            put(cluster.broker, name, "".join(CLOUD_LINES[12:]).encode())
            put(cluster.broker, name, b"")
            deadline = time.monotonic() + 60
            while len(cloud_signed(cluster, name)) < 2:
                assert time.monotonic() < deadline, f"{name}'s fragments were not persisted"
                time.sleep(0.2)
        yield cluster


def test_cloud_brokers_persist_and_pass_the_health_check_signing_for_the_cloud_host(cloud_stored):
    store = cloud_stored.cloud_store
    log = Path(cloud_stored.state.root, "broker-0.log").read_text()
    assert "store health check failed" not in log
    assert "fragments/.test/health-check" in cloud_stored.store_keys("fragments/")
    for f in cloud_signed(cloud_stored, "cloud/none"):
        url = urllib.parse.urlsplit(f["signed_url"])
        assert (url.scheme, url.hostname, url.port) == ("https", store.host, None), f["signed_url"]
        assert ("Signature=" if store.kind == "gcs" else "sig=") in url.query, f["signed_url"]


@pytest.mark.parametrize("codec", CLOUD_CODECS)
def test_cloud_signed_urls_serve_the_appended_bytes(cloud_stored, codec):
    store = cloud_stored.cloud_store
    content = b""
    for f in cloud_signed(cloud_stored, f"cloud/{codec.lower()}"):
        status, body, encoding = store.fetch(f["signed_url"], {"Accept-Encoding": "identity"})
        assert status == 200
        content += decompress(f["spec"]["compression_codec"], body, encoding)
    assert content == "".join(CLOUD_LINES).encode()


def test_gzip_offload_fragments_are_transcoded_as_the_store_does(cloud_stored):
    """GCS serves an object stored with Content-Encoding: gzip decompressed to a request that
    does not accept gzip (decompressive transcoding), and as stored to one that does; Azure
    never transcodes."""
    store = cloud_stored.cloud_store
    f = cloud_signed(cloud_stored, "cloud/gzip_offload_decompression")[0]
    _, identity, identity_encoding = store.fetch(f["signed_url"], {"Accept-Encoding": "identity"})
    _, gzipped, gzip_encoding = store.fetch(f["signed_url"], {"Accept-Encoding": "gzip"})
    assert gzip_encoding == "gzip" and gzipped[:2] == b"\x1f\x8b"
    if store.kind == "gcs":
        assert identity_encoding == "" and identity == "".join(CLOUD_LINES[:12]).encode()
    else:
        assert identity_encoding == "gzip" and identity == gzipped


def test_what_the_emulator_checks_of_a_signature(cloud_stored):
    """Azurite refuses a SAS whose signature or expiry is altered, or that has expired; fake-gcs-server
    checks no signature (the docs say so)."""
    store = cloud_stored.cloud_store
    url = cloud_signed(cloud_stored, "cloud/none")[0]["signed_url"]
    param = "X-Goog-Signature" if "X-Goog-Signature=" in url else ("Signature" if store.kind == "gcs" else "sig")
    sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)[param][0]
    tampered = url.replace(urllib.parse.quote(sig, safe=""), urllib.parse.quote("A" + sig[1:], safe=""))
    assert tampered != url
    expiring = cloud_signed(cloud_stored, "cloud/none", ttl="1s")[0]["signed_url"]
    time.sleep(2.5)
    for bad in (tampered, expiring):
        status, _, _ = store.fetch(bad)
        assert status == (403 if store.kind == "azure" else 200), bad
