"""The Python suites inside docker-compose (`make test-compose`, after docker/test-compose.sh has
built the images).

testcontainers brings up etcd, the broker and the journals of tests/specs and waits for their
healthchecks; the Spark runner (the `tests` service) then runs `make test`'s Python suites
(`pytest -q tests` without chaos and soak) against that broker, beside it on the broker's network.
The runner, the cluster and its volume go down at the end, also when the suites fail or the run
is interrupted (Ctrl-C, SIGTERM). The exit status is pytest's.
"""

import signal
import subprocess
import sys
import time
from pathlib import Path

from testcontainers.compose import DockerCompose

DOCKER = Path(__file__).resolve().parent
PROJECT = "spark-gazette"  # docker-compose.yml's `name`
RUNNER = f"{PROJECT}-tests-run"  # named, so that the teardown finds it (`down` leaves `run`'s containers)


def interrupted(signum, frame):
    raise KeyboardInterrupt


def leftovers() -> list[str]:
    """The project's containers and volumes that still exist."""
    found = []
    for kind in ("container", "volume"):
        out = subprocess.run(
            [
                "docker",
                kind,
                "ls",
                "-q",
                *(["-a"] if kind == "container" else []),
                "--filter",
                f"label=com.docker.compose.project={PROJECT}",
            ],
            capture_output=True,
            text=True,
        ).stdout.split()
        found += [f"{kind} {name}" for name in out]
    return found


def teardown(compose: DockerCompose) -> None:
    # The runner first and synchronously: the volume cannot go while it still holds it.
    subprocess.run(["docker", "rm", "-f", "-v", RUNNER], capture_output=True)
    compose.stop()  # down --volumes
    for _ in range(30):
        if not leftovers():
            print("[test-compose] cluster down: no containers or volumes left", flush=True)
            return
        time.sleep(1)
        subprocess.run(
            [*compose.compose_command_property, "--profile", "tests", "down", "--volumes", "--remove-orphans"],
            cwd=DOCKER,
            capture_output=True,
        )
    print("[test-compose] left behind: " + ", ".join(leftovers()), file=sys.stderr, flush=True)


def main() -> int:
    signal.signal(signal.SIGTERM, interrupted)
    compose = DockerCompose(context=str(DOCKER), compose_file_name="docker-compose.yml", build=False, wait=True)
    status = 130
    try:
        compose.start()
        print(
            "[test-compose] cluster up:",
            ", ".join(f"{c.Service} {c.State}" for c in compose.get_containers(include_all=True)),
            flush=True,
        )
        # Other pytest arguments than the service's command replace it.
        pytest = [".venv/bin/python", "-m", "pytest", *sys.argv[1:]] if len(sys.argv) > 1 else []
        print("[test-compose] in the runner:", " ".join(pytest) or "the tests service's command", flush=True)
        run = [*compose.compose_command_property, "--profile", "tests", "run", "--rm", "--name", RUNNER, "tests"]
        status = subprocess.run(run + pytest, cwd=DOCKER).returncode
        if status != 0:
            logs, _ = compose.get_logs("gazette")
            print("[test-compose] the broker's log (tail):\n" + logs[-4000:], file=sys.stderr)
    except KeyboardInterrupt:
        print("[test-compose] interrupted: tearing down", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the teardown short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        teardown(compose)
    return status


if __name__ == "__main__":
    sys.exit(main())
