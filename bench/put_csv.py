"""Put CSV parse benchmark: one generated put CSV file parsed by Spark's CSV reader (spark.ingest.put_csv) and by
the Python parse tasks, in one Spark session (issue 30 item 4).

    .venv/bin/python bench/put_csv.py [--rows 1000000] [--repeat 3] [--keep DIR]

1. A puts.csv of --rows clean records is written (distinct msg_ids, a few queue managers and queues, half of the
   rows with an application; not timed).
2. The ingest's parse step (``spark.ingest.parse_step.parse_files``) runs on it with the put CSV reader and
   without it (the Python parse tasks), alternately, --repeat times each; each time its rows are then read in
   full (a no-op write of the bronze.put_records DataFrame it returns, what the Delta write reads). Printed: each
   path's median of the parse step and of parse + rows, and their ratio. The two paths' rows are compared once
   (same count, same rows).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUN_DATE = "2026-11-20"


def write_puts(path: Path, rows: int, seed: int = 7) -> None:
    """``rows`` clean put records in the documented columns, the optional application among them."""
    from clwl.parse.put_record import PUT_COLUMNS

    rnd = random.Random(seed)
    qmgrs = [f"QM{i}" for i in range(1, 9)]
    queues = ["APP.ORDERS", "APP.PAYMENTS", "APP.AUDIT", "APP.EVENTS"]
    binds = ["notfixed", "open", "group"]
    token = "0431303031" + "00" * 26 + "06"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(c.name for c in PUT_COLUMNS) + "\n")
        start = 7 * 3600 * 1000
        for n in range(rows):
            ms = start + n * 40
            hh, mm, ss, frac = ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60, ms % 1000
            dest = rnd.choice(qmgrs)
            app = "orders-api" if n % 2 else ""
            fh.write(f"{RUN_DATE}T{hh:02d}:{mm:02d}:{ss:02d}.{frac:03d}Z,QM1,{rnd.choice(queues)},,"
                     f"{rnd.choice(binds)},orders-api:2831:{n % 7},,false,false,false,{rnd.randint(100, 4000)},"
                     f"{'true' if n % 3 else 'false'},{token if n % 5 else '0' * 64},"
                     f"414D5120514D31202020202020202020{n:016X},{dest},TO.{dest},SYSTEM.CLUSTER.TRANSMIT.QUEUE,"
                     f"{app}\n")


def landing_file(path: Path):
    from spark.ingest import LandingFile, classify_name

    parser, capture_type, capture_time, reject = classify_name(path.name, RUN_DATE)
    return LandingFile(path=str(path), source_file=f"{RUN_DATE}/QM1/{path.name}", run_date=RUN_DATE,
                       observing_qmgr="QM1", parser=parser, capture_type=capture_type, capture_time=capture_time,
                       reject=reject, size_bytes=path.stat().st_size, content_sha256="0" * 64)


def cpu_seconds() -> float:
    """CPU time of this process and its children (the JVM, the Python workers) so far: on a machine others load
    too, it moves less than the wall time."""
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


def one_parse(spark, spec, root: Path, by_spark: bool, n: int):
    """(parse step seconds, parse + rows read seconds, CPU seconds of both, the bronze.put_records DataFrame)."""
    from clwl.lake.door import Lake
    from spark.config import PipelineConfig
    from spark.ingest.context import IngestRun
    from spark.ingest.parse_step import TASK_BYTES, parse_files

    scratch = root / f"scratch-{'spark' if by_spark else 'python'}-{n}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    cpu = cpu_seconds()
    t = time.perf_counter()
    config = PipelineConfig.from_env(lake=root / "lake", put_csv_reader=by_spark)
    ingest = IngestRun(spark, config, Lake(config.lake), f"bench-{n}", datetime.now(timezone.utc), print)
    results, frames = parse_files(ingest, [spec], [RUN_DATE], scratch, TASK_BYTES)
    parse = time.perf_counter() - t
    frame = frames["bronze.put_records"]
    frame.write.format("noop").mode("overwrite").save()
    whole = time.perf_counter() - t
    assert results[0]["records_accepted"] == results[0]["records_read"], results
    return parse, whole, cpu_seconds() - cpu, frame


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="write the file (and scratch folders) here and keep them")
    a = ap.parse_args()

    from spark.config import PipelineConfig
    from spark.session import get_spark

    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="put-csv-bench-"))
    path = root / "landing" / RUN_DATE / "QM1" / "puts.csv"
    if not path.exists():
        t = time.perf_counter()
        write_puts(path, a.rows)
        print(f"wrote {a.rows:,} put records ({path.stat().st_size / 2**20:,.0f} MiB) in "
              f"{time.perf_counter() - t:.1f} s: {path}")
    spec = landing_file(path)
    spark = get_spark(PipelineConfig.from_env().master, app_name="clwl-put-csv-bench")
    times: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
    frames = {}
    try:
        for n in range(a.repeat):
            for by_spark in (True, False):
                parse, whole, cpu, frames[by_spark] = one_parse(spark, spec, root, by_spark, n)
                times[by_spark].append((parse, whole, cpu))
                print(f"  run {n + 1}: {'Spark CSV reader' if by_spark else 'Python parser  '} parse {parse:6.1f} s,"
                      f" parse + rows {whole:6.1f} s, CPU {cpu:6.1f} s (load average {os.getloadavg()[0]:.1f})")
        cols = [c for c in frames[True].columns if c != "ingest_run_id"]
        fast, exact = frames[True].select(*cols), frames[False].select(*cols)
        same = fast.count() == exact.count() == a.rows and fast.exceptAll(exact).isEmpty()
        print(f"rows of the two paths identical: {same}")
        med = {k: [statistics.median(t[i] for t in v) for i in range(3)] for k, v in times.items()}
        print(f"{a.rows:,} put records, median of {a.repeat}:")
        for k, name in ((True, "Spark CSV reader"), (False, "Python parser")):
            print(f"  {name + ':':<17} parse {med[k][0]:.1f} s, parse + rows {med[k][1]:.1f} s, CPU {med[k][2]:.1f} s")
        print(f"  ratio Python / Spark: parse {med[False][0] / med[True][0]:.2f}x, "
              f"parse + rows {med[False][1] / med[True][1]:.2f}x, CPU {med[False][2] / med[True][2]:.2f}x")
    finally:
        spark.stop()
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
