"""The Python suites inside docker-compose (`make test-compose`, after docker/test-compose.sh has
built the images).

testcontainers brings up etcd, the broker and the journals of tests/specs and waits for their
healthchecks; the Spark runner (the `tests` service) then runs `pytest -q tests` against that
broker, beside it on the broker's network. The cluster and its volumes go down at the end, also
when the suites fail or the run is interrupted. The exit status is pytest's.
"""

import subprocess
import sys
from pathlib import Path

from testcontainers.compose import DockerCompose

DOCKER = Path(__file__).resolve().parent


def main() -> int:
    compose = DockerCompose(context=str(DOCKER), compose_file_name="docker-compose.yml",
                            build=False, wait=True)
    with compose:
        print("[test-compose] cluster up:", ", ".join(
            f"{c.Service} {c.State}" for c in compose.get_containers(include_all=True)), flush=True)
        run = [*compose.compose_command_property, "--profile", "tests", "run", "--rm", "tests"]
        if len(sys.argv) > 1:  # other pytest arguments than the service's `-q tests`
            run += [".venv/bin/python", "-m", "pytest", *sys.argv[1:]]
        status = subprocess.run(run, cwd=DOCKER).returncode
        if status != 0:
            logs, _ = compose.get_logs("gazette")
            print("[test-compose] the broker's log (tail):\n" + logs[-4000:], file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
