"""Fragment stores whose brokers sign URLs for cloud hosts: GCS on fake-gcs-server, Azure Blob
Storage on Azurite, each reached as production names it.

Gazette's GCS store signs URLs for `storage.googleapis.com` with a service account's key (its own
calls follow STORAGE_EMULATOR_HOST); its Azure store calls and signs for
`https://<account>.blob.core.windows.net`, with no endpoint to override. So the emulator serves
TLS on port 443 of a loopback address of its own (127.x.y.z, one a cluster), with a certificate
for those names from a CA made for the cluster, and whoever fetches a signed URL resolves the
cloud host to that address and trusts that CA:

- brokers run in a mount namespace of their own whose /etc/hosts is the cluster's `hosts` file,
  bind-mounted as `ip netns exec` mounts /etc/netns/<name>/hosts (the network stays the
  machine's: brokers, Spark and the emulator all meet on loopback), with SSL_CERT_FILE naming the CA;
- a JVM reading the store (Spark tasks) looks names up in the same file through
  `-Djdk.net.hosts.file`, and trusts the CA through its own SSL context.

Azurite checks every Shared Key and SAS signature; fake-gcs-server checks none.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import os
import random
import ssl
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

from security import RSA_KEY, certificate_authority, issue, openssl

KINDS = ("gcs", "azure")
BUCKET = "gazette"  # GCS's bucket, Azure's container
GCS_HOST = "storage.googleapis.com"
AZURE_ACCOUNT = "gazetteharness"
AZURE_HOST = f"{AZURE_ACCOUNT}.blob.core.windows.net"
AZURE_VERSION = "2021-08-06"
SERVICE_ACCOUNT = "gazette-harness@spark-gazette-test.iam.gserviceaccount.com"


AZURITE_VERSION = "3.37.0"  # build/setup.sh's
# Azurite saves its index of blobs every 5 s (LokiJS's autosave): what it acknowledged within one
# save survives it once this much has passed.
AZURITE_SAVE_SECONDS = 5.5


def emulator_binary(kind: str, find_binary) -> str:
    """The emulator `make setup` installed: fake-gcs-server in Go's bin directory, Azurite in its
    npm prefix under ~/.cache."""
    if kind == "gcs":
        return find_binary("fake-gcs-server")
    azurite = Path.home() / ".cache" / "spark-gazette" / f"azurite-{AZURITE_VERSION}" / "bin" / "azurite-blob"
    if not os.access(azurite, os.X_OK):
        raise FileNotFoundError(
            f"Azurite {AZURITE_VERSION} is not installed in {azurite.parent.parent}; run `make setup`"
        )
    return str(azurite)


def new_address() -> str:
    """A loopback address for a cluster's emulator, so that several clusters each have port 443."""
    return f"127.{random.randrange(64, 250)}.{random.randrange(1, 250)}.{random.randrange(2, 250)}"


class CloudStore:
    """The emulator of a `gcs` or `azure` cluster: its files live in `directory`, it listens on
    `address`:443, and `secret` is Azure's account key (base64), which the brokers sign with. A
    `revoked` Azure emulator has an account key of its own: it refuses the brokers' signatures."""

    def __init__(self, kind: str, directory: str, address: str, secret: str, revoked: bool = False):
        self.kind, self.dir, self.address, self.secret = kind, Path(directory), address, secret
        self.host = GCS_HOST if kind == "gcs" else AZURE_HOST
        self.key = base64.b64encode(hashlib.sha512(secret.encode()).digest()).decode() if revoked else secret

    @staticmethod
    def new_secret() -> str:
        return base64.b64encode(os.urandom(64)).decode()

    # -- files --------------------------------------------------------------------------------

    @property
    def ca_file(self) -> str:
        return str(self.dir / "ca.pem")

    @property
    def hosts_file(self) -> str:
        return str(self.dir / "hosts")

    @property
    def credentials_file(self) -> str:
        return str(self.dir / "service-account.json")

    def prepare(self) -> None:
        """The CA, the emulator's certificate, the hosts file and (GCS) a service account's key:
        made once for the cluster, kept across restarts of the emulator."""
        if Path(self.hosts_file).exists():
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        d = str(self.dir)
        certificate_authority(d, self.ca_file, "/CN=spark-gazette test store CA", RSA_KEY)
        issue(d, "server", self.ca_file, f"DNS:{self.host},IP:{self.address}", "serverAuth", RSA_KEY, self.host)
        if self.kind == "gcs":
            openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", f"{d}/sa.key")
            key = Path(d, "sa.key").read_text()
            Path(self.credentials_file).write_text(
                json.dumps(
                    {
                        "type": "service_account",
                        "project_id": "spark-gazette-test",
                        "private_key_id": hashlib.sha1(key.encode()).hexdigest(),
                        "private_key": key,
                        "client_email": SERVICE_ACCOUNT,
                        "client_id": "1",
                        "token_uri": "https://oauth2.googleapis.com/token",
                    }
                )
            )
        system = Path("/etc/hosts").read_text()
        Path(self.hosts_file).write_text(f"{system.rstrip()}\n{self.address} {self.host}\n")

    # -- processes -------------------------------------------------------------------------------

    def command(self, binary: str) -> tuple[list[str], dict[str, str]]:
        """The emulator's command line and environment."""
        d = str(self.dir)
        data = str(self.dir / "data")
        os.makedirs(data, exist_ok=True)
        if self.kind == "gcs":
            return [
                binary,
                "-scheme",
                "https",
                "-host",
                self.address,
                "-port",
                "443",
                "-cert-location",
                f"{d}/server.pem",
                "-private-key-location",
                f"{d}/server.key",
                "-backend",
                "filesystem",
                "-filesystem-root",
                data,
                "-public-host",
                GCS_HOST,
                "-external-url",
                f"https://{GCS_HOST}",
                "-log-level",
                "error",
            ], dict(os.environ)
        env = {**os.environ, "AZURITE_ACCOUNTS": f"{AZURE_ACCOUNT}:{self.key}"}
        return [
            binary,
            "--blobHost",
            self.address,
            "--blobPort",
            "443",
            "--cert",
            f"{d}/server.pem",
            "--key",
            f"{d}/server.key",
            "--location",
            data,
            "--silent",
            "--skipApiVersionCheck",
            "--disableTelemetry",
        ], env

    def broker_prefix(self) -> list[str]:
        """Runs a command with the cluster's hosts file as its /etc/hosts (it execs: the pid stays
        the command's)."""
        return [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            'mount --bind "$0" /etc/hosts && exec "$@"',
            self.hosts_file,
        ]

    def broker_env(self, base: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if not k.startswith(("GOOGLE_", "AZURE_", "STORAGE_EMULATOR"))}
        env["SSL_CERT_FILE"] = self.ca_file
        if self.kind == "gcs":
            return {
                **env,
                "GOOGLE_APPLICATION_CREDENTIALS": self.credentials_file,
                "STORAGE_EMULATOR_HOST": f"https://{GCS_HOST}",
            }
        return {**env, "AZURE_ACCOUNT_NAME": AZURE_ACCOUNT, "AZURE_ACCOUNT_KEY": self.secret}

    def store_url(self, prefix: str = "") -> str:
        return f"{'gs' if self.kind == 'gcs' else 'azure'}://{BUCKET}/{prefix}"

    # -- requests --------------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path_and_query: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 10,
    ):
        """A request to the emulator at its address, naming the cloud host (Azure's signed with the
        account key)."""
        headers = {"Host": self.host, **(headers or {})}
        if self.kind == "azure":
            headers |= self._shared_key(method, path_and_query, len(body or b""), headers)
        ctx = ssl.create_default_context(cafile=self.ca_file)
        req = urllib.request.Request(
            f"https://{self.address}{path_and_query}", data=body, method=method, headers=headers
        )
        return urllib.request.urlopen(req, timeout=timeout, context=ctx)

    def _shared_key(self, method: str, path_and_query: str, length: int, headers: dict[str, str]) -> dict[str, str]:
        now = datetime.datetime.now(datetime.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
        ms = {"x-ms-date": now, "x-ms-version": AZURE_VERSION}
        path, _, query = path_and_query.partition("?")
        params = sorted((k.lower(), v) for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True))
        resource = f"/{AZURE_ACCOUNT}{path}" + "".join(f"\n{k}:{v}" for k, v in params)
        content_type = headers.get("Content-Type", "")
        sts = "\n".join([method, "", "", str(length) if length else "", "", content_type, "", "", "", "", "", ""])
        sts += "\n" + "".join(f"{k}:{v}\n" for k, v in sorted(ms.items())) + resource
        mac = hmac.new(base64.b64decode(self.key), sts.encode(), hashlib.sha256).digest()
        return {**ms, "Authorization": f"SharedKey {AZURE_ACCOUNT}:{base64.b64encode(mac).decode()}"}

    def fetch(self, url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> tuple[int, bytes, str]:
        """A GET of a signed URL naming the cloud host, sent to the emulator as is (its path,
        query and Host): the status, body and Content-Encoding."""
        parts = urllib.parse.urlsplit(url)
        if parts.hostname != self.host:
            raise ValueError(f"{url} does not name {self.host}")
        ctx = ssl.create_default_context(cafile=self.ca_file)
        req = urllib.request.Request(
            f"https://{self.address}{parts.path}?{parts.query}", headers={"Host": self.host, **(headers or {})}
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
                return r.status, r.read(), r.headers.get("Content-Encoding", "")
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers.get("Content-Encoding", "")

    def serves(self) -> bool:
        try:
            path = "/storage/v1/b" if self.kind == "gcs" else "/?comp=list"
            with self._request("GET", path, timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def create_bucket(self) -> None:
        if self.kind == "gcs":
            body = json.dumps({"name": BUCKET}).encode()
            self._request(
                "POST", "/storage/v1/b?project=spark-gazette-test", body, {"Content-Type": "application/json"}
            ).close()
        else:
            self._request("PUT", f"/{BUCKET}?restype=container").close()

    def keys(self, prefix: str = "") -> list[str]:
        """The names of the objects under `prefix`, every page."""
        keys: list[str] = []
        token = ""
        while True:
            if self.kind == "gcs":
                q = urllib.parse.urlencode({"prefix": prefix, **({"pageToken": token} if token else {})})
                with self._request("GET", f"/storage/v1/b/{BUCKET}/o?{q}") as r:
                    page = json.loads(r.read())
                keys += [o["name"] for o in page.get("items", [])]
                token = page.get("nextPageToken", "")
            else:
                q = urllib.parse.urlencode(
                    {"restype": "container", "comp": "list", "prefix": prefix, **({"marker": token} if token else {})},
                    quote_via=urllib.parse.quote,
                )
                with self._request("GET", f"/{BUCKET}?{q}") as r:
                    page = ET.fromstring(r.read())
                keys += [b.findtext("Name") for b in page.iter("Blob")]
                token = page.findtext("NextMarker") or ""
            if not token:
                return keys

    def delete(self, key: str) -> None:
        if self.kind == "gcs":
            self._request("DELETE", f"/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(key, safe='')}").close()
        else:
            self._request("DELETE", f"/{BUCKET}/{urllib.parse.quote(key)}").close()
