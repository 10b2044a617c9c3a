#!/usr/bin/env bash
# Installs what a make target needs on a fresh machine, and nothing that is already there.
#
#   build/setup.sh                 what `make test` and the other targets need (the default)
#   build/setup.sh demo [4|3.5]    what `make demo` and `make quickstart` need on that Spark line
#   build/setup.sh --compat        beside the default: .venv-compat (`make test-compat`)
#   build/setup.sh --compat-real-time   beside the default: .venv-compat-real-time
#   build/setup.sh --bench-kafka   beside the default: what `bench-latency --real-time` runs Spark's
#                                  Kafka connector with (.venv-bench-kafka, Kafka's jars)
#
# The demo's part:
#   - Gazette's broker and gazctl, and etcd, at the versions pinned in tests/judge/go.mod, into
#     $(go env GOPATH)/bin (Gazette's etcd client refuses etcd servers older than 3.5, so Debian's
#     etcd-server 3.4 will not do), and the Go interop judge (Gazette's own Publisher and
#     readers), into tests/judge/bin,
#   - the sbt launcher (into ~/.m2) and the line's build dependencies (into Coursier's cache),
#   - a virtualenv of the line: .venv with python/requirements-demo.txt (Spark 4), or
#     .venv-spark3.5 with python/requirements-spark3.5.txt (Spark 3.5).
# The rest, for the suites, benchmarks and faults:
#   - gofakes3 and MinIO, the harness's S3 stores (MinIO at the version pinned below), and the
#     emulators of its cloud stores at the versions pinned below: fake-gcs-server (GCS), as
#     $(go env GOPATH)/bin/fake-gcs-server, and Azurite (Azure Blob Storage, from npm; Debian's
#     nodejs and npm when the machine has none) under ~/.cache/spark-gazette/azurite-VERSION,
#   - for the network faults (tests/harness/network.py): nftables (Debian's), and toxiproxy's
#     server at the version pinned below, as $(go env GOPATH)/bin/toxiproxy-server,
#   - every sbt project's dependencies, .venv with python/requirements-dev.txt and .venv-spark3.5.
# The Go builds, the virtualenvs and sbt's resolution (and, the first time, its compile) run side
# by side, each logging to target/setup/; a failure prints the end of its log.
# Downloads land in per-user caches, so a fresh clone on the same machine reuses them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

what=test
spark=4
case "${1:-}" in
  demo) what=demo; spark="${2:-4}" ;;
  --compat | --compat-real-time | --bench-kafka | "") ;;
  *) echo "[setup] unknown argument '$1': build/setup.sh [demo [4|3.5] | --compat | --compat-real-time | --bench-kafka]" >&2; exit 2 ;;
esac
case "$spark" in
  4 | 3.5) ;;
  *) echo "[setup] SPARK=$spark: the connector is built for Spark 4 and 3.5" >&2; exit 2 ;;
esac

# What setup says goes to the terminal (fd 3), also from the groups whose output goes to their logs.
exec 3>&1
say() { printf '[setup] %s\n' "$*" >&3; }
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
missing=()
command -v mvn >/dev/null 2>&1 || missing+=(maven)  # fetches the sbt launcher
command -v gcc >/dev/null 2>&1 || missing+=(gcc)  # Gazette's zstd codec is cgo
if [ "$what" = test ]; then
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)  # certificates for the TLS tests
  command -v nft >/dev/null 2>&1 || missing+=(nftables)  # drop rules of the network faults
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)  # Azurite, the Azure store's emulator
fi
[ ${#missing[@]} = 0 ] || apt_install "${missing[@]}"

gobin="$(go env GOPATH)/bin"
pinned() { sed -n -E "s#^(require )?[[:space:]]*$1 (v[^ ]*).*#\2#p" tests/judge/go.mod | head -1; }
installed() { go version -m "$1" 2>/dev/null | awk -v m="$2" '$1=="mod" && $2==m {print $3}'; }
gazette_version="$(pinned go.gazette.dev/core)"
etcd_version="$(pinned go.etcd.io/etcd/server/v3)"
gofakes3_version="$(pinned github.com/johannesboyne/gofakes3)"
# MinIO: pinned here, not in the judge's module, whose dependencies its own would move; the Go
# checksum database checks the download. Its go.mod has replace directives, which `go install
# module@version` refuses without -mod=mod. A couple of minutes on two cores, once.
minio_version=v0.0.0-20260212201848-7aac2a2c5b7c
# Toxiproxy (latency, bandwidth caps and resets of the network faults; the kernel has no netem): not
# a dependency of tests/judge, whose modules it would move, so pinned here; `go install @version`
# checks what it downloads against Go's checksum database.
toxiproxy_version=v2.5.0
# The cloud stores' emulators (tests/harness/cloud_stores.py), pinned here for the same reason.
fake_gcs_version=v1.56.1
azurite_version=3.37.0
azurite_dir="$HOME/.cache/spark-gazette/azurite-$azurite_version"

# Gazette, etcd, gofakes3 and the judge are built from the module pinned in tests/judge, whose go.sum
# checks every download. Without symbol tables and DWARF (-s -w), which nothing here reads, the
# large binaries link in less time; `go version -m` still reads their module versions.
ld=(-ldflags "-s -w")
go_tools() {
  if [ "$(installed "$gobin/gazette" go.gazette.dev/core)" != "$gazette_version" ] ||
     [ "$(installed "$gobin/gazctl" go.gazette.dev/core)" != "$gazette_version" ]; then
    say "building gazette and gazctl $gazette_version into $gobin"
    (cd tests/judge && GOBIN="$gobin" go install "${ld[@]}" go.gazette.dev/core/cmd/gazette go.gazette.dev/core/cmd/gazctl)
  fi
  if [ "$(installed "$gobin/etcd" go.etcd.io/etcd/server/v3)" != "$etcd_version" ]; then
    say "building etcd $etcd_version into $gobin"
    (cd tests/judge && go build "${ld[@]}" -o "$gobin/etcd" go.etcd.io/etcd/server/v3)
  fi
  # The interop judge; go build is incremental.
  (cd tests/judge && go build "${ld[@]}" -o bin/judge .)
  [ "$what" = test ] || return 0
  if [ "$(installed "$gobin/gofakes3" github.com/johannesboyne/gofakes3)" != "$gofakes3_version" ]; then
    say "building gofakes3 $gofakes3_version into $gobin"
    (cd tests/judge && go build "${ld[@]}" -o "$gobin/gofakes3" github.com/johannesboyne/gofakes3/cmd/gofakes3)
  fi
  if [ "$(installed "$gobin/minio" github.com/minio/minio)" != "$minio_version" ]; then
    say "building minio $minio_version into $gobin"
    GOFLAGS=-mod=mod GOBIN="$gobin" go install "${ld[@]}" "github.com/minio/minio@$minio_version"
  fi
  if [ "$(installed "$gobin/toxiproxy-server" github.com/Shopify/toxiproxy/v2)" != "$toxiproxy_version" ]; then
    say "building toxiproxy-server $toxiproxy_version into $gobin"
    local tmp
    tmp="$(mktemp -d)"
    GOBIN="$tmp" go install "${ld[@]}" "github.com/Shopify/toxiproxy/v2/cmd/server@$toxiproxy_version"
    mv "$tmp/server" "$gobin/toxiproxy-server" && rmdir "$tmp"
  fi
  if [ "$(installed "$gobin/fake-gcs-server" github.com/fsouza/fake-gcs-server)" != "$fake_gcs_version" ]; then
    say "building fake-gcs-server $fake_gcs_version into $gobin"
    GOBIN="$gobin" go install "${ld[@]}" "github.com/fsouza/fake-gcs-server@$fake_gcs_version"
  fi
  if [ ! -x "$azurite_dir/bin/azurite-blob" ]; then
    # npm checks each package against the registry's integrity hashes. Azurite asks for Node 22
    # and runs on Debian's 20 (npm warns of the engine).
    say "installing azurite $azurite_version into $azurite_dir"
    npm install --global --no-fund --no-audit --prefix "$azurite_dir" "azurite@$azurite_version"
  fi
}

# A virtualenv that holds a requirements file's packages. Its stamp lists, by content, what it was
# installed from: a requirements file and the files it includes (`-r`) as one, and each included
# file on its own, so the demo's .venv serves `make test` after one incremental install, the
# other way round without one, and a change to any of the files installs again.
requirements_closure() {
  local req="$1"
  echo "$req"
  sed -n -E 's/^-r[[:space:]]+(.*)$/\1/p' "$req" | while read -r inc; do
    requirements_closure "$(dirname "$req")/$inc"
  done
}
requirements_hash() { requirements_closure "$1" | xargs cat | sha256sum | cut -d' ' -f1; }
venv() {
  local dir="$1" req="$2" stamp="$1/.requirements.sha256" want
  want="$(requirements_hash "$req")"
  if [ ! -x "$dir/bin/python" ] || ! grep -qx "$want" "$stamp" 2>/dev/null; then
    say "installing $req into $dir"
    [ -x "$dir/bin/python" ] || { python3 -m venv "$dir" && "$dir/bin/pip" install -q --upgrade pip; }
    "$dir/bin/pip" install -q -r "$req"
    requirements_closure "$req" | while read -r installed; do requirements_hash "$installed"; done >> "$stamp"
  fi
}
python_envs() {
  if [ "$what" = demo ]; then
    if [ "$spark" = 3.5 ]; then venv .venv-spark3.5 python/requirements-spark3.5.txt
    else venv .venv python/requirements-demo.txt; fi
    return 0
  fi
  venv .venv python/requirements-dev.txt
  # Spark 3.5 with Scala 2.12: the jars the connectorSpark35 build compiles against, and its suites.
  venv .venv-spark3.5 python/requirements-spark3.5.txt
}

# sbt: build/sbt fetches its launcher on first use; `update` warms Coursier's cache, once per
# clone and machine: every project's for the suites, the line's project only for the demo (a later
# `make test` still resolves the others). The same first time, what the target builds next is built
# too (the line's jar for the demo; both lines' jars and suites for the tests), while Go still
# compiles beside it rather than after it: on two cores, a minute or more off a fresh clone's run.
# A compile error is not setup's: the build that follows reports it.
sbt_build() {
  local project="connector" marker compile
  [ "$spark" = 4 ] || project="connectorSpark35"
  compile=("$project/assembly")
  if [ "$what" != demo ]; then
    project=""
    compile=(connector/assembly connectorSpark35/assembly connector/Test/compile connectorSpark35/Test/compile)
  fi
  marker="$logs/sbt-update${project:+-$project}.done"
  if [ ! -d "$HOME/.sbt/boot" ] || [ ! -f "$marker" ]; then
    say "resolving the sbt build${project:+ ($project)} and compiling it"
    if ! build/sbt -Dsbt.log.noformat=true "${project:+$project/}update" "${compile[@]}"; then
      build/sbt -Dsbt.log.noformat=true "${project:+$project/}update"
    fi
    touch "$marker"
  fi
}

# Each group in the background with its output in target/setup/<group>.log: Go compiles while pip
# and Coursier download.
logs=target/setup
mkdir -p "$logs"
pids=()
names=()
for group in go_tools python_envs sbt_build; do
  ( start=$SECONDS; "$group" >"$logs/$group.log" 2>&1; echo $((SECONDS - start)) >"$logs/$group.seconds" ) &
  pids+=($!)
  names+=("$group")
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    failed=1
    echo "[setup] ${names[$i]} failed; the end of $logs/${names[$i]}.log:" >&2
    tail -30 "$logs/${names[$i]}.log" >&2
  fi
done
[ "$failed" = 0 ] || exit 1

# `make test-compat` (setup.sh --compat): the oldest pyspark the connector supports, beside .venv.
[ "${1:-}" != "--compat" ] || venv .venv-compat python/requirements-compat.txt
# `make test-compat-real-time` (setup.sh --compat-real-time): the oldest pyspark with `trigger(realTime=...)`.
[ "${1:-}" != "--compat-real-time" ] || venv .venv-compat-real-time python/requirements-compat-real-time.txt

# `bench-latency --real-time` (setup.sh --bench-kafka): Spark's Kafka connector beside ours on the pyspark
# Maven serves it for (python/requirements-bench-kafka.txt), and Kafka's broker. build/bench-kafka
# resolves both through sbt into Coursier's cache; their classpaths go to target/bench-kafka/, once
# per version of its build.sbt.
bench_kafka() {
  venv .venv-bench-kafka python/requirements-bench-kafka.txt
  local out=target/bench-kafka want
  want="$(sha256sum build/bench-kafka/build.sbt project/build.properties | sha256sum | cut -d' ' -f1)"
  if ! grep -qx "$want" "$out/resolved.sha256" 2>/dev/null; then
    say "resolving Kafka's broker and Spark's Kafka connector (build/bench-kafka)"
    mkdir -p "$out"
    mkdir -p build/bench-kafka/project && cp project/build.properties build/bench-kafka/project/
    (cd build/bench-kafka && ../sbt -Dsbt.log.noformat=true "export broker/Runtime/fullClasspath" \
      "export sparkKafka/Runtime/fullClasspath") >"$logs/bench_kafka.log" 2>&1 ||
      { echo "[setup] resolving build/bench-kafka failed; the end of $logs/bench_kafka.log:" >&2; tail -30 "$logs/bench_kafka.log" >&2; exit 1; }
    # `export` prints each classpath on a line of its own; the projects' empty class directories are left out.
    local lines
    mapfile -t lines < <(grep -E '^/.*\.jar' "$logs/bench_kafka.log")
    [ "${#lines[@]}" = 2 ] || { echo "[setup] build/bench-kafka printed ${#lines[@]} classpaths, not 2; see $logs/bench_kafka.log" >&2; exit 1; }
    printf '%s\n' "${lines[0]}" | tr ':' '\n' | grep '\.jar$' | paste -sd: - >"$out/broker.classpath"
    printf '%s\n' "${lines[1]}" | tr ':' '\n' | grep '\.jar$' | paste -sd: - >"$out/spark-kafka.classpath"
    echo "$want" >"$out/resolved.sha256"
  fi
}
[ "${1:-}" != "--bench-kafka" ] || bench_kafka

line_python=.venv/bin/python
[ "$spark" = 4 ] || line_python=.venv-spark3.5/bin/python
ready="gazette $gazette_version, etcd $etcd_version"
[ "$what" = demo ] || ready="$ready, gofakes3 $gofakes3_version, minio $minio_version, toxiproxy $toxiproxy_version, fake-gcs-server $fake_gcs_version, azurite $azurite_version"
took="go tools $(cat "$logs/go_tools.seconds") s, virtualenvs $(cat "$logs/python_envs.seconds") s, sbt $(cat "$logs/sbt_build.seconds") s"
say "ready ($took): $ready, sbt $(sed -n 's/^sbt.version=//p' project/build.properties), $($line_python -c 'import pyspark; print("pyspark", pyspark.__version__)')"
