"""Pipeline benchmark: `clwl run` stages on a generated estate, against a bare Spark pass as the floor.

    .venv/bin/python bench/pipeline.py [--messages 1000000] [--senders 4] [--keep DIR]

1. `clwl generate` writes an estate with --messages messages in one day (not timed as part of the pipeline).
2. The pipeline runs every stage in one process (local[2]), and each stage's wall time is printed.
3. In the same run, the floor: a bare Spark read of silver.message_events and a Delta write of it, which is the
   least any replay over that table can cost. The goal of issue 4/6: replay within 2x of the floor.
Memory: the driver Python process's peak RSS, and the JVM's RSS at the end (it is a child process).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--senders", type=int, default=4)
    ap.add_argument("--keep", help="keep the landing folder and lake here")
    a = ap.parse_args()

    from clwl.generate.command import main as generate
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline
    from spark.session import get_spark
    from spark.tables import path as table_path

    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="clwl-bench-"))
    landing, lake = root / "landing", root / "lake"
    shutil.rmtree(lake, ignore_errors=True)
    t = time.perf_counter()
    generate(["generate", "--out", str(landing), "--days", "1", "--messages-per-day", str(a.messages),
              "--senders", str(a.senders), "--qmgrs", str(6 + 2 * a.senders), "--force", "--quiet"])
    print(f"generated {a.messages:,} messages in {time.perf_counter() - t:.1f} s into {landing}")

    config = PipelineConfig.from_env(lake=lake, landing=landing)
    spark = get_spark(config.master)
    outcome = run_pipeline(config, spark=spark, progress=lambda m: None)
    d = outcome.dates[0]
    print(f"clwl run: {'published' if d.published else 'BLOCKED'}; {d.messages:,} messages, {d.stuck} stuck, "
          f"{d.unexpected} unexpected distribution rows")
    for stage, secs in outcome.seconds.items():
        print(f"  {stage:<8} {secs:8.1f} s")

    floors = []
    for i in range(3):
        t = time.perf_counter()
        df = spark.read.format("delta").load(table_path(config, "silver.message_events"))
        df.write.format("delta").mode("overwrite").save(str(root / f"floor{i}"))
        floors.append(time.perf_counter() - t)
    floor = sorted(floors)[1]
    replay = outcome.seconds.get("replay", float("nan"))
    print(f"  floor: bare read + Delta write of silver.message_events, median of 3: {floor:.1f} s")
    print(f"  replay / floor = {replay / floor:.2f}x   whole run / floor = {outcome.seconds['total'] / floor:.2f}x")
    import psutil

    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    jvm = max((c.memory_info().rss for c in psutil.Process().children(recursive=True)), default=0) / 2**20
    print(f"  memory: driver Python peak RSS {me:.0f} MiB; JVM (driver + local executors) RSS now {jvm:.0f} MiB")
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
