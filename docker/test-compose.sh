#!/usr/bin/env bash
# `make test-compose`: the Python suites inside the docker-compose cluster (etcd, a Gazette
# broker, the journals of tests/specs and the Spark runner), brought up and torn down through
# testcontainers (docker/compose_suite.py). Installs what it lacks:
#   - Debian's docker.io and, when no Docker engine answers, starts dockerd (as root; it stays up),
#   - Compose v2, built from the Go module proxy into a private Docker config directory when
#     `docker compose` is missing (so a plain `docker compose` on the machine still fails, and
#     nothing else switches to compose because of it),
#   - testcontainers, in a virtualenv of its own (the project's .venv is left as it is),
#   - base images: the public ones when they can be pulled; otherwise local stand-ins, a Debian
#     made with debootstrap and `docker import`, and Go on top of it (docker/golang/Dockerfile).
# Images are kept: a second run rebuilds only the layers whose sources changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

COMPOSE_VERSION=v2.40.3
GO_VERSION=1.25.14
cache="${XDG_CACHE_HOME:-$HOME/.cache}/spark-gazette"
mkdir -p "$cache"
start=$SECONDS
say() { printf '[test-compose %4ds] %s\n' "$((SECONDS - start))" "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  say "apt-get install $*"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# The engine.
command -v docker >/dev/null 2>&1 && command -v dockerd >/dev/null 2>&1 || apt_install docker.io
if ! docker info >/dev/null 2>&1; then
  say "no Docker engine answers: starting dockerd as root (log: $cache/dockerd.log); it stays up"
  as_root sh -c "nohup dockerd >'$cache/dockerd.log' 2>&1 &"
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up: see $cache/dockerd.log" >&2; exit 1; }
fi

# Compose v2. Its module excludes versions, so `go install pkg@version` refuses it: built in place.
if ! docker compose version >/dev/null 2>&1; then
  export DOCKER_CONFIG="$cache/docker"
  plugin="$DOCKER_CONFIG/cli-plugins/docker-compose"
  if ! docker compose version 2>/dev/null | grep -q "$COMPOSE_VERSION"; then
    say "building Compose $COMPOSE_VERSION into $plugin"
    command -v go >/dev/null 2>&1 || { echo "Go is required to build Compose (or install docker compose v2)" >&2; exit 1; }
    src="$(cd "$cache" && go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    mkdir -p "$(dirname "$plugin")"
    (cd "$src" && go build -trimpath -o "$plugin" \
      -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" ./cmd)
  fi
fi
say "$(docker compose version)"

# testcontainers, in a virtualenv of its own (the project's .venv is left as it is).
venv="$cache/compose-venv"
if ! "$venv/bin/python" -c 'import testcontainers.compose' 2>/dev/null; then
  say "installing testcontainers into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q testcontainers==4.15.0
fi

# Base images: public if pullable, else local stand-ins (built once, then reused).
pullable() { have_image "$1" || docker pull -q "$1" >/dev/null 2>&1; }
export BASE_IMAGE=debian:bookworm-slim GO_IMAGE=golang:1.25-bookworm
if ! pullable "$BASE_IMAGE"; then
  BASE_IMAGE=spark-gazette/debian:bookworm
  if ! have_image "$BASE_IMAGE"; then
    command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap
    rootfs="$(mktemp -d)"
    say "no image registry: building $BASE_IMAGE with debootstrap"
    as_root debootstrap --variant=minbase bookworm "$rootfs" >"$cache/debootstrap.log" 2>&1 ||
      { echo "debootstrap failed: see $cache/debootstrap.log" >&2; exit 1; }
    as_root rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    # The certificate authorities added on this machine (a TLS-inspecting proxy's, say): the
    # images' ca-certificates take them in, and pip is pointed at the system bundle.
    as_root cp -a /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/" 2>/dev/null || true
    as_root tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' \
      --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt' \
      - "$BASE_IMAGE" >/dev/null
    as_root rm -rf "$rootfs"
  fi
fi
if ! pullable "$GO_IMAGE"; then
  GO_IMAGE=spark-gazette/golang:1.25-bookworm
  if ! have_image "$GO_IMAGE"; then
    say "no image registry: building $GO_IMAGE (Go $GO_VERSION) on $BASE_IMAGE"
    docker build -t "$GO_IMAGE" --build-arg BASE_IMAGE="$BASE_IMAGE" \
      --build-arg GO_VERSION="$GO_VERSION" --build-arg GOPROXY="$(go env GOPROXY)" docker/golang \
      >"$cache/golang-image.log" 2>&1 || { tail -20 "$cache/golang-image.log" >&2; exit 1; }
  fi
fi
say "base images: $BASE_IMAGE, $GO_IMAGE"

# The images compose runs, with Docker's own builder (any engine has it; compose's BuildKit path
# wants a newer one than Debian's). Names and arguments as in docker-compose.yml.
build_image() {
  local tag="$1" dockerfile="$2" log="$cache/image-$(basename "$(dirname "$2")").log"
  say "building $tag (log: $log)"
  docker build -t "$tag" --build-arg GO_IMAGE="$GO_IMAGE" --build-arg BASE_IMAGE="$BASE_IMAGE" \
    -f "$dockerfile" . >"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
}
build_image spark-gazette/gazette:v0.103.0 docker/gazette/Dockerfile
build_image spark-gazette/runner:dev docker/spark/Dockerfile

say "cluster up, the suites in the runner, cluster down"
status=0
"$venv/bin/python" docker/compose_suite.py "$@" || status=$?
say "done (exit $status)"
exit $status
