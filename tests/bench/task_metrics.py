"""Executor CPU and wall time of the tasks a Spark job group ran, from Spark's monitoring REST API
(the session's UI must be on: `spark.ui.enabled`, `spark.ui.port`)."""

import json
import time
import urllib.request
from dataclasses import dataclass

# The description of the job that the split read committed runs while planned (PieceStates.runJob).
FIRST_PASS = "Gazette source: the producers' states"


@dataclass(frozen=True)
class Stage:
    id: int
    first_pass: bool  # a stage of the first pass's job
    cpu: list[float]  # each successful task's executor CPU, s
    wall: list[float]  # each successful task's duration, s


def get(url: str):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def settle(spark, ui: str, timeout: float = 120) -> None:
    """Runs a small job of its own and waits until the REST API lists it as succeeded: the
    status listener takes Spark's events in order, after the jobs return, so every job run before
    is then listed in full."""
    group = f"settle-{time.monotonic_ns()}"
    spark.sparkContext.setJobGroup(group, "the status listener caught up")
    spark.range(1).collect()
    deadline = time.monotonic() + timeout
    while not any(j.get("jobGroup") == group and j["status"] == "SUCCEEDED" for j in get(f"{ui}/jobs")):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the REST API did not list job group {group} as succeeded in {timeout} s")
        time.sleep(0.2)


def group_stages(ui: str, group: str, timeout: float = 60) -> list[Stage]:
    """The stages the jobs of `group` ran, in order, each once (adaptive execution's final job
    lists the shuffle stage an earlier job ran, as skipped), with their successful tasks; polled
    until every job succeeded and the tasks listed are all the jobs completed."""
    deadline = time.monotonic() + timeout
    while True:
        jobs = [j for j in get(f"{ui}/jobs") if j.get("jobGroup") == group]
        stages = {}
        for job in sorted(jobs, key=lambda j: j["jobId"]):
            for sid in sorted(job["stageIds"]):
                if sid in stages:
                    continue
                cpu, wall = [], []
                for attempt in get(f"{ui}/stages/{sid}"):
                    url = f"{ui}/stages/{sid}/{attempt['attemptId']}/taskList?offset=0&length=100000"
                    for t in get(url):
                        if t["status"] == "SUCCESS":
                            cpu.append(t["taskMetrics"]["executorCpuTime"] / 1e9)
                            wall.append(t["duration"] / 1e3)
                if cpu:  # else skipped, never run
                    first = job.get("description", "").startswith(FIRST_PASS)
                    stages[sid] = Stage(sid, first, cpu, wall)
        done = all(j["status"] == "SUCCEEDED" for j in jobs)
        if jobs and done and sum(j["numCompletedTasks"] for j in jobs) == sum(len(s.cpu) for s in stages.values()):
            return list(stages.values())
        if time.monotonic() > deadline:
            raise TimeoutError(f"the jobs of group {group} did not all show succeeded in {timeout} s: {jobs}")
        time.sleep(0.5)
