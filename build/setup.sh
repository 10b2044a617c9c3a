#!/usr/bin/env bash
# Installs what this project needs on a fresh machine, and nothing that is already there:
#   - Gazette's broker and gazctl, and etcd, at the versions pinned in tests/judge/go.mod, into
#     $(go env GOPATH)/bin (Gazette's etcd client refuses etcd servers older than 3.5, so Debian's
#     etcd-server 3.4 will not do), and gofakes3, the harness's `gofakes3` store,
#   - MinIO, the S3 server of the harness's `s3` store, at the version pinned below,
#   - for the network faults (tests/harness/network.py): nftables (Debian's), and toxiproxy's
#     server at the version pinned below, as $(go env GOPATH)/bin/toxiproxy-server,
#   - the Go interop judge, into tests/judge/bin,
#   - the sbt launcher (into ~/.m2) and the build's dependencies (into Coursier's cache),
#   - a virtualenv in .venv with python/requirements-dev.txt, and one in .venv-spark3.5 with
#     python/requirements-spark3.5.txt (Spark 3.5's jars for its build and suites).
# Downloads land in per-user caches, so a fresh clone on the same machine reuses them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '[setup] %s\n' "$*"; }
need() { command -v "$1" >/dev/null 2>&1 || { echo "[setup] '$1' is required: $2" >&2; exit 1; }; }

apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  say "apt-get install $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

need java "a JDK 17 or newer"
need go "Go 1.25 or newer (Gazette v0.103.0 needs it)"
need python3 "Python 3.11 or newer (pyspark 4.3 needs it)"
command -v mvn >/dev/null 2>&1 || apt_install maven
command -v gcc >/dev/null 2>&1 || apt_install gcc  # Gazette's zstd codec is cgo
command -v openssl >/dev/null 2>&1 || apt_install openssl  # certificates for the TLS tests
command -v nft >/dev/null 2>&1 || apt_install nftables  # drop rules of the network faults

# Gazette, etcd and gofakes3: built from the module pinned in tests/judge, whose go.sum checks every
# download.
gobin="$(go env GOPATH)/bin"
pinned() { sed -n -E "s#^(require )?[[:space:]]*$1 (v[^ ]*).*#\2#p" tests/judge/go.mod | head -1; }
installed() { go version -m "$1" 2>/dev/null | awk -v m="$2" '$1=="mod" && $2==m {print $3}'; }
gazette_version="$(pinned go.gazette.dev/core)"
etcd_version="$(pinned go.etcd.io/etcd/server/v3)"
gofakes3_version="$(pinned github.com/johannesboyne/gofakes3)"
if [ "$(installed "$gobin/gazette" go.gazette.dev/core)" != "$gazette_version" ] ||
   [ "$(installed "$gobin/gazctl" go.gazette.dev/core)" != "$gazette_version" ]; then
  say "building gazette and gazctl $gazette_version into $gobin"
  (cd tests/judge && GOBIN="$gobin" go install go.gazette.dev/core/cmd/gazette go.gazette.dev/core/cmd/gazctl)
fi
if [ "$(installed "$gobin/etcd" go.etcd.io/etcd/server/v3)" != "$etcd_version" ]; then
  say "building etcd $etcd_version into $gobin"
  (cd tests/judge && go build -o "$gobin/etcd" go.etcd.io/etcd/server/v3)
fi
if [ "$(installed "$gobin/gofakes3" github.com/johannesboyne/gofakes3)" != "$gofakes3_version" ]; then
  say "building gofakes3 $gofakes3_version into $gobin"
  (cd tests/judge && go build -o "$gobin/gofakes3" github.com/johannesboyne/gofakes3/cmd/gofakes3)
fi

# MinIO: pinned here, not in the judge's module, whose dependencies its own would move; the Go
# checksum database checks the download. Its go.mod has replace directives, which `go install
# module@version` refuses without -mod=mod. A couple of minutes on two cores, once.
minio_version=v0.0.0-20260212201848-7aac2a2c5b7c
if [ "$(installed "$gobin/minio" github.com/minio/minio)" != "$minio_version" ]; then
  say "building minio $minio_version into $gobin"
  GOFLAGS=-mod=mod GOBIN="$gobin" go install "github.com/minio/minio@$minio_version"
fi

# Toxiproxy (latency, bandwidth caps and resets of the network faults; the kernel has no netem): not
# a dependency of tests/judge, whose modules it would move, so pinned here; `go install @version`
# checks what it downloads against Go's checksum database.
toxiproxy_version=v2.5.0
if [ "$(installed "$gobin/toxiproxy-server" github.com/Shopify/toxiproxy/v2)" != "$toxiproxy_version" ]; then
  say "building toxiproxy-server $toxiproxy_version into $gobin"
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version"
  mv "$tmp/server" "$gobin/toxiproxy-server" && rmdir "$tmp"
fi

# The interop judge (Gazette's own Publisher and iterators); go build is incremental.
(cd tests/judge && go build -o bin/judge .)

# sbt: build/sbt fetches its launcher on first use; `update` warms Coursier's cache.
if [ ! -d "$HOME/.sbt/boot" ] || [ ! -d connector-scala/target ]; then
  say "resolving the sbt build"
  build/sbt -Dsbt.log.noformat=true update >/dev/null
fi

# Python: a virtualenv whose packages match a requirements file (pip caches the pyspark wheel).
venv() {
  local dir="$1" req="$2" stamp="$1/.requirements.sha256" want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ ! -x "$dir/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "creating $dir from $req"
    python3 -m venv "$dir"
    "$dir/bin/pip" install -q --upgrade pip
    "$dir/bin/pip" install -q -r "$req"
    echo "$want" > "$stamp"
  fi
}
venv .venv python/requirements-dev.txt
# Spark 3.5 with Scala 2.12: the jars the connectorSpark35 build compiles against, and its suites.
venv .venv-spark3.5 python/requirements-spark3.5.txt
# `make test-compat` (setup.sh --compat): the oldest pyspark the connector supports, beside .venv.
[ "${1:-}" != "--compat" ] || venv .venv-compat python/requirements-compat.txt
# `make test-compat-real-time` (setup.sh --compat-real-time): the oldest pyspark with `trigger(realTime=...)`.
[ "${1:-}" != "--compat-real-time" ] || venv .venv-compat-real-time python/requirements-compat-real-time.txt

say "ready: gazette $gazette_version, etcd $etcd_version, gofakes3 $gofakes3_version, minio $minio_version, toxiproxy $toxiproxy_version, sbt $(sed -n 's/^sbt.version=//p' project/build.properties), $(.venv/bin/python -c 'import pyspark; print("pyspark", pyspark.__version__)')"
