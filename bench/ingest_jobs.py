"""The ingest's Spark jobs by step and call site (issue 45, lever 4): `clwl ingest` of a landing folder into a new
lake, then again with nothing new (the re-run), each job put under the progress line it followed.

    python bench/ingest_jobs.py --lake DIR                  # the bundled samples into DIR (a new lake)
    python bench/ingest_jobs.py --lake DIR --landing LAND   # another landing folder

As bench/jobs.py, the session's UI runs on a loopback port and the jobs come from its REST endpoint; per step
the jobs are grouped by their description (Delta names its own: "Compute snapshot for version: N", "Filtering
files for query") and call site. The lake is kept, for bench/lake_digest.py's digest_lake.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from bench.jobs import _epoch, _free_port
    from spark.config import REPO_ROOT, PipelineConfig
    from spark.ingest import ingest
    from spark.session import get_spark

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lake", required=True, help="a new lake folder (kept)")
    ap.add_argument("--landing", default=str(REPO_ROOT / "samples" / "landing"))
    a = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    port = _free_port()
    config = PipelineConfig.from_env(lake=Path(a.lake), landing=Path(a.landing))
    spark = get_spark(config.master, conf={
        "spark.ui.enabled": "true", "spark.ui.port": str(port), "spark.driver.host": "127.0.0.1",
        "spark.ui.retainedJobs": "100000", "spark.ui.retainedStages": "100000",
        "spark.sql.ui.retainedExecutions": "100000"})
    lines: list[tuple[float, str]] = []

    def progress(line: str) -> None:
        lines.append((time.time(), str(line)))

    for run in ("ingest", "re-run"):
        progress(f"=== {run}")
        t = time.perf_counter()
        ingest(config, spark=spark, progress=progress)
        progress(f"=== {run} done in {time.perf_counter() - t:.1f} s, load average {os.getloadavg()[0]:.2f}")
    time.sleep(1.5)  # the listener bus delivers the last job ends asynchronously
    url = f"http://127.0.0.1:{port}/api/v1/applications/{spark.sparkContext.applicationId}/jobs"
    with urllib.request.urlopen(url, timeout=120) as r:
        jobs = json.load(r)
    spark.stop()
    after: dict[int, list[dict]] = collections.defaultdict(list)
    for j in jobs:
        submitted = _epoch(j["submissionTime"])
        after[max((i for i, (t, _) in enumerate(lines) if t <= submitted), default=0)].append(j)
    for i, (_, line) in enumerate(lines):
        if after[i] or line.startswith("==="):
            print(f"{len(after[i]):4d} jobs after: {line[:110]}")
        sites = collections.Counter(f"{(j.get('description') or '')[:50]:<50} | {j['name'][:80]}" for j in after[i])
        for site, n in sites.most_common():
            print(f"        {n:3d}  {site}")
    print(f"{len(jobs)} Spark jobs in all")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
