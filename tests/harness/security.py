"""Credentials for a local cluster whose brokers demand them, made fresh for each cluster: a CA,
a server certificate for the brokers, a client certificate (mutual TLS), and an HS256 auth key
with which tests mint the bearer tokens (JWTs) brokers started with `--broker.auth-keys` check."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import ssl
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# Gazette's capability bits (broker/protocol/auth.go): LIST, APPLY, READ, APPEND, REPLICATE.
ALL_CAPABILITIES = 2 | 4 | 8 | 16 | 32


@dataclass
class Security:
    directory: str
    tls: bool = True
    auth: bool = True

    @property
    def ca_file(self) -> str:
        return os.path.join(self.directory, "ca.pem")

    @property
    def client_cert(self) -> str:
        return os.path.join(self.directory, "client.pem")

    @property
    def client_key(self) -> str:
        return os.path.join(self.directory, "client.key")

    @property
    def key_file(self) -> str:
        """The brokers' keys, comma-separated as `--broker.auth-keys` takes them (base64 each)."""
        return os.path.join(self.directory, "auth.key")

    @property
    def auth_keys(self) -> str:
        return Path(self.key_file).read_text().strip()

    @property
    def auth_key(self) -> str:
        """The first of the brokers' keys: the one they (and gazctl) sign with, and tokens by default."""
        return self.auth_keys.split(",")[0]

    def rotate_key(self) -> str:
        """A new key, added after the current ones (brokers started next accept both and go on signing
        with the old one, so a broker not yet restarted accepts what they proxy); returns it."""
        new = base64.b64encode(os.urandom(32)).decode()
        self._write_keys(f"{self.auth_keys},{new}")
        return new

    def sign_with(self, key: str) -> None:
        """Brokers started next sign with `key` (one of theirs), and go on accepting the others."""
        keys = self.auth_keys.split(",")
        self._write_keys(",".join([key] + [k for k in keys if k != key]))

    def retire_keys(self, keep: str) -> None:
        """Brokers started next hold `keep` alone (once no token signed with another is in use)."""
        self._write_keys(keep)

    def _write_keys(self, keys: str) -> None:
        tmp = Path(self.directory, "auth.key.tmp")
        tmp.write_text(keys)
        os.replace(tmp, self.key_file)  # whole: the judge reads it while brokers restart

    @staticmethod
    def generate(directory: str, tls: bool = True, auth: bool = True) -> Security:
        os.makedirs(directory, exist_ok=True)
        s = Security(directory, tls, auth)
        if tls:
            s._certificates()
        if auth:
            Path(directory, "auth.key").write_text(base64.b64encode(os.urandom(32)).decode())
        return s

    def _certificates(self) -> None:
        certificate_authority(self.directory, self.ca_file, "/CN=test-ca", EC_KEY)
        for name, usage in (("server", "serverAuth,clientAuth"), ("client", "clientAuth")):
            issue(self.directory, name, self.ca_file, "IP:127.0.0.1,DNS:localhost", usage, EC_KEY)

    def broker_flags(self) -> list[str]:
        d, flags = self.directory, []
        if self.tls:
            flags += [
                "--broker.server-cert-file",
                f"{d}/server.pem",
                "--broker.server-cert-key-file",
                f"{d}/server.key",
                "--broker.server-ca-file",
                self.ca_file,  # client certificates are required
                "--broker.peer-cert-file",
                f"{d}/server.pem",
                "--broker.peer-cert-key-file",
                f"{d}/server.key",
                "--broker.peer-ca-file",
                self.ca_file,
            ]
        if self.auth:
            flags += ["--broker.auth-keys", self.auth_keys]
        return flags

    def gazctl_flags(self) -> list[str]:
        flags = []
        if self.tls:
            flags += [
                "--broker.trusted-ca-file",
                self.ca_file,
                "--broker.cert-file",
                self.client_cert,
                "--broker.cert-key-file",
                self.client_key,
            ]
        if self.auth:
            flags += ["--broker.auth-keys", self.auth_keys]
        return flags

    def token(self, capabilities: int = ALL_CAPABILITIES, ttl: int = 3600, key: str | None = None) -> str:
        """A JWT (HS256) for every journal, signed with the brokers' key or `key`."""
        now = int(time.time())
        claims = {"cap": capabilities, "sel": {}, "iat": now, "exp": now + ttl}
        head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = _b64url(json.dumps(claims).encode())
        secret = base64.b64decode(key or self.auth_key)
        sig = _b64url(hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest())
        return f"{head}.{body}.{sig}"

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        ctx = ssl.create_default_context(cafile=self.ca_file)
        ctx.load_cert_chain(self.client_cert, self.client_key)
        return ctx

    def http_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token()}"} if self.auth else {}


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# How `openssl req` makes a new key, unencrypted: the brokers' and clients' (EC), and an RSA one.
EC_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
RSA_KEY = ("-newkey", "rsa:2048", "-nodes")


def certificate_authority(directory: str, ca_file: str, subject: str, key: tuple[str, ...]) -> None:
    """A test CA for two days: its certificate at `ca_file`, its key at `directory`/ca.key."""
    openssl("req", "-x509", *key, "-keyout", f"{directory}/ca.key", "-out", ca_file, "-days", "2", "-subj", subject)


def issue(
    directory: str, name: str, ca_file: str, alt_names: str, usage: str, key: tuple[str, ...], common_name: str = ""
) -> None:
    """`name`.pem and `name`.key in `directory`: a certificate for two days, signed by the CA of
    `certificate_authority`, for `alt_names` (`DNS:host,IP:address`) and `usage` (`serverAuth`, ...),
    whose subject's common name is `common_name` (default: `name`)."""
    d = directory
    Path(d, f"{name}.ext").write_text(f"subjectAltName={alt_names}\nextendedKeyUsage={usage}\n")
    openssl("req", *key, "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", f"/CN={common_name or name}")
    openssl(
        "x509",
        "-req",
        "-in",
        f"{d}/{name}.csr",
        "-CA",
        ca_file,
        "-CAkey",
        f"{d}/ca.key",
        "-CAcreateserial",
        "-out",
        f"{d}/{name}.pem",
        "-days",
        "2",
        "-extfile",
        f"{d}/{name}.ext",
    )


def openssl(*args: str) -> None:
    out = subprocess.run(["openssl", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {out.stderr.strip()}")
