"""The detect stage alone, its Spark jobs by call site (issue 45; BENCHMARKS.md 6b).

    python bench/detect_jobs.py --lake LAKE [--date 2026-11-20]   # LAKE: a `bench/jobs.py --keep DIR` run's DIR/lake

A copy of LAKE is taken; in a fresh session (UI on a loopback port, as bench/jobs.py), each date is replayed and
then detected, as `clwl run` does; the jobs submitted while detect ran are counted by call site (Spark's job
name: the user code's line that started it), and the staged detect tables' rows digested (as bench/lake_digest.py
does a lake's), so that two checkouts' detect can be compared in jobs and in output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DETECTED = ("stuck_messages", "distribution", "run_summary", "trend_facts", "queue_depth")


def staged_digest(lake, day: str) -> dict[str, str]:
    from bench.lake_digest import _canonical
    from clwl.lake.registry import VOLATILE_COLUMNS

    out = {}
    for t in DETECTED:
        data = lake.rows(f"staging.{t}", filters=[("run_date", "=", day)])
        kept = [c for c in data.column_names if c not in VOLATILE_COLUMNS]
        rows = sorted(json.dumps(_canonical(r), sort_keys=True, default=str) for r in data.select(kept).to_pylist())
        out[t] = f"{len(rows)} rows {hashlib.sha256(chr(10).join(rows).encode()).hexdigest()[:16]}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lake", required=True)
    ap.add_argument("--date", action="append", help="a run date (default: the samples' two)")
    a = ap.parse_args()
    from bench.jobs import _free_port, spark_jobs
    from clwl.days import RunDate
    from spark.config import PipelineConfig
    from spark.run import PipelineRun, new_run_id
    from spark.session import get_spark
    from spark.stages import detect_stage, replay_stage

    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; code {sys.path[0]}")
    tmp = Path(tempfile.mkdtemp(prefix="clwl-detect-jobs-"))
    lake = tmp / "lake"
    shutil.copytree(a.lake, lake, symlinks=True)
    port = _free_port()
    config = PipelineConfig.from_env(lake=lake)
    spark = get_spark(config.master, conf={
        "spark.ui.enabled": "true", "spark.ui.port": str(port), "spark.driver.host": "127.0.0.1",
        "spark.ui.retainedJobs": "100000", "spark.ui.retainedStages": "100000",
        "spark.sql.ui.retainedExecutions": "100000"})
    run = PipelineRun(config, new_run_id("run"))
    windows = []
    for day in a.date or ["2026-11-19", "2026-11-20"]:
        replay_stage(spark, run, RunDate(day))
        t0 = time.time()
        detect_stage(spark, run, RunDate(day))
        windows.append((day, t0, time.time()))
    time.sleep(1.0)  # the listener bus delivers the last job ends asynchronously
    jobs = spark_jobs(port, spark.sparkContext.applicationId)
    spark.stop()
    for day, t0, t1 in windows:
        counts: dict[str, int] = {}
        for s, _, name in jobs:
            if t0 <= s < t1:
                counts[name] = counts.get(name, 0) + 1
        print(f"\n{day} detect: {t1 - t0:.1f} s, {sum(counts.values())} jobs; staged "
              f"{json.dumps(staged_digest(run.out_lake, day))}")
        for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"{n:5d}  {name}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("CLWL_BENCH_CODE", str(ROOT)))  # another checkout: its code, counted the same way
    main()
