"""Count the Spark jobs of a `clwl run`, per stage and date, and the driver's time between them (issue 45, lever 1).

    python bench/jobs.py                       # the bundled samples
    python bench/jobs.py --messages 1000000    # one generated day (bench/pipeline.py's estate: 4 senders)
    python bench/jobs.py --landing DIR         # an existing landing folder

Spark's own record is read, not guessed: the run's session is started with its UI on a free loopback port and
long job retention, and after the run the jobs come from the UI's REST endpoint
(``/api/v1/applications/<id>/jobs``: each job's submission and completion time). Each job is put in the stage
whose progress lines ("[n/N] ..." to "... done in") span its submission. Per stage the table shows:

- wall: the stage's time as the pipeline reports it;
- jobs: Spark jobs submitted in it; in jobs: the union of their run intervals;
- between: wall minus in jobs, the driver's own time (Python, planning, delta-rs, GX) and the gaps;
- median job: the median job's length, the fixed cost each job pays when the data is small.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import socket
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STARTS = re.compile(r"^\[(\d+)/(\d+)\] (.*)$")
DONE = re.compile(r"^\s+(\S+) done in ([0-9.]+) s")


@dataclass
class Stage:
    title: str
    start: float
    end: float = float("inf")
    wall: float = float("nan")
    jobs: list[tuple[float, float]] = field(default_factory=list)  # (submitted, completed), epoch seconds

    def busy(self) -> float:
        """The union of the jobs' intervals, clipped to the stage (jobs overlap when Spark runs them together)."""
        total, reach = 0.0, self.start
        for a, b in sorted(self.jobs):
            a, b = max(a, reach), min(b, self.end)
            if b > a:
                total, reach = total + (b - a), b
        return total


class Recorder:
    """The pipeline's progress callback: each stage's start and end on the wall clock."""

    def __init__(self) -> None:
        self.stages: list[Stage] = []

    def __call__(self, line: str) -> None:
        now = time.time()
        for part in str(line).splitlines():
            if m := STARTS.match(part.strip()):
                if self.stages and self.stages[-1].end == float("inf"):
                    self.stages[-1].end = now
                self.stages.append(Stage(m.group(3), now))
            elif (m := DONE.match(part)) and self.stages:
                self.stages[-1].end, self.stages[-1].wall = now, float(m.group(2))

    def close(self) -> None:
        if self.stages and self.stages[-1].end == float("inf"):
            self.stages[-1].end = time.time()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _epoch(text: str) -> float:
    # Spark's REST times look like 2026-11-29T05:40:12.345GMT
    return dt.datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def spark_jobs(port: int, app_id: str) -> list[tuple[float, float, str]]:
    url = f"http://127.0.0.1:{port}/api/v1/applications/{app_id}/jobs"
    with urllib.request.urlopen(url, timeout=30) as r:
        jobs = json.load(r)
    return [(_epoch(j["submissionTime"]), _epoch(j.get("completionTime") or j["submissionTime"]), j["name"])
            for j in jobs if "submissionTime" in j]


def run(landing: Path, lake: Path) -> tuple[list[Stage], list[tuple[float, float, str]], float]:
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline
    from spark.session import get_spark

    port = _free_port()
    config = PipelineConfig.from_env(lake=lake, landing=landing)
    spark = get_spark(config.master, conf={
        "spark.ui.enabled": "true", "spark.ui.port": str(port), "spark.driver.host": "127.0.0.1",
        "spark.ui.retainedJobs": "100000", "spark.ui.retainedStages": "100000",
        "spark.sql.ui.retainedExecutions": "100000"})
    rec = Recorder()
    t = time.perf_counter()
    run_pipeline(config, spark=spark, progress=rec)
    total = time.perf_counter() - t
    rec.close()
    time.sleep(1.0)  # the listener bus delivers the last job ends asynchronously
    jobs = spark_jobs(port, spark.sparkContext.applicationId)
    spark.stop()
    for a, b, _ in jobs:
        for s in rec.stages:
            if s.start <= a < s.end:
                s.jobs.append((a, b))
                break
    return rec.stages, jobs, total


def table(stages: list[Stage], jobs: list, total: float) -> None:
    print(f"{'stage':<44} {'wall s':>7} {'jobs':>5} {'in jobs s':>9} {'between s':>9} {'median job s':>12}")
    for s in stages:
        wall = s.wall if s.wall == s.wall else s.end - s.start
        busy = s.busy()
        med = statistics.median([b - a for a, b in s.jobs]) if s.jobs else float("nan")
        print(f"{s.title[:44]:<44} {wall:7.1f} {len(s.jobs):5d} {busy:9.1f} {wall - busy:9.1f} {med:12.3f}")
    counted = sum(len(s.jobs) for s in stages)
    busy = sum(s.busy() for s in stages)
    print(f"{'whole run':<44} {total:7.1f} {len(jobs):5d} {busy:9.1f} {total - busy:9.1f}   "
          f"({len(jobs) - counted} jobs outside the stages: session start, lock, ingest's own jobs before "
          "the first stage line)")


def sites(stages: list[Stage], jobs: list, text: str) -> None:
    """The jobs of each stage whose title has ``text``, counted by call site (Spark's job name: the user code's
    line that started it)."""
    for s in stages:
        if text not in s.title:
            continue
        counts: dict[str, int] = {}
        for a, _, name in jobs:
            if s.start <= a < s.end:
                counts[name] = counts.get(name, 0) + 1
        print(f"\n{s.title}: {sum(counts.values())} jobs by call site")
        for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"{n:5d}  {name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, help="one generated day of this many messages (default: the samples)")
    ap.add_argument("--senders", type=int, default=4)
    ap.add_argument("--landing", help="an existing landing folder")
    ap.add_argument("--keep", help="keep the landing and lake here")
    ap.add_argument("--sites", metavar="TEXT", help="also list the jobs of each stage whose title has TEXT by call site")
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="clwl-bench-jobs-"))
    if a.landing:
        landing = Path(a.landing)
    elif a.messages:
        from clwl.cli import main as clwl

        landing = root / "landing"
        clwl(["generate", "--out", str(landing), "--days", "1", "--messages-per-day", str(a.messages),
              "--senders", str(a.senders), "--qmgrs", str(6 + 2 * a.senders), "--force", "--quiet"])
    else:
        from spark.config import REPO_ROOT

        landing = REPO_ROOT / "samples" / "landing"
    stages, jobs, total = run(landing, root / "lake")
    print(f"clwl run on {landing}: {len(jobs)} Spark jobs in {total:.1f} s")
    table(stages, jobs, total)
    if a.sites:
        sites(stages, jobs, a.sites)
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("CLWL_BENCH_CODE", str(ROOT)))  # another checkout: its code, counted the same way
    main()
