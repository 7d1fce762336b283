"""Step 2 of a run, the driver's side of the parse: with ``$CLWL_PUT_CSV_READER=spark``, the clean put CSV files
read by Spark's CSV reader first (:mod:`spark.ingest.put_csv`); the other new or changed files packed into parse
tasks, the code shipped to the executors, the tasks run (:func:`spark.ingest.parse_tasks.parse_partition`), their
counts checked, and each table's rows read back from the scratch folder as a DataFrame."""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path

from clwl.landing.discovery import TASK_BYTES as TASK_BYTES
from clwl.landing.discovery import LandingFile, plan_tasks
from spark.ingest.context import IngestRun
from spark.ingest.landing_stage import stage_landing, tasks_read_the_store
from spark.ingest.parse_tasks import ReconciliationError, parse_partition
from spark.ingest.put_csv import PUT_RECORDS, PutCsvRead, read_put_csvs
from spark.ingest.scratch import PARSED_TABLES
from spark.session import code_zip, default_parallelism, is_remote, session_master
from spark.tables import TABLES


def _ship_code(sc, master: str, spark=None) -> None:
    """On a cluster, send the clwl and spark packages to the executors (local mode imports them in place). A
    Spark Connect session (``spark``, ``sc`` None) has them already: :func:`spark.session.remote_spark` ships them
    when it attaches."""
    if spark is not None and is_remote(spark):
        return
    if master.startswith("local") or getattr(sc, "_clwl_code_shipped", False):
        return
    sc.addPyFile(str(code_zip()))
    sc._clwl_code_shipped = True


def _parse_in_arrow(tasks: list[list[LandingFile]], run_id: str, scratch: str, trace_tz: str | None):
    """The parse tasks as a mapInArrow function over ``spark.range(len(tasks))``: a row's id names its task (the
    task list travels in the function's closure), each id's files go through :func:`parse_partition`, and the
    file summaries (JSON) come back as one string column. DataFrame functions only, so it runs in a classic
    session and attached to a Spark Connect server alike."""
    parse = functools.partial(parse_partition, run_id=run_id, scratch=scratch, trace_tz=trace_tz)

    def run(batches):
        import pyarrow as pa

        for batch in batches:
            numbers = batch.column("id").to_pylist()
            summaries = list(parse((n, tasks[n]) for n in numbers))
            yield pa.RecordBatch.from_arrays([pa.array(summaries, pa.string())], names=["summary"])

    return run


def _put_csvs_by_spark(spark, todo: list[LandingFile], run_id: str, scratch: Path, progress) -> PutCsvRead:
    """The put CSV files Spark's CSV reader takes (:mod:`spark.ingest.put_csv`). Should the reader fail, every
    file goes to the Python parser, which reads them all alike: the run is slower, not different."""
    try:
        return read_put_csvs(spark, todo, run_id, scratch, progress)
    except Exception as exc:  # noqa: BLE001 - the Python parser is the exact path for every file
        progress(f"put CSV reader failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
                 f"); its files go to the Python parser")
        return PutCsvRead()


def parse_files(ingest: IngestRun, todo: list[LandingFile], dates: list[str], scratch: Path, task_bytes: int
                ) -> tuple[list[dict], dict[str, object]]:
    """Parse ``todo`` in Spark tasks: ``(per-file summaries, DataFrame of the parsed rows per table key)``, the
    DataFrames reading the Parquet files the tasks wrote to ``scratch``. ``ingest.trace_tz``: the zone the local
    times of activity traces are read in. ``ingest.config.put_csv_reader`` (``$CLWL_PUT_CSV_READER=spark``): True,
    the put CSV files whose every record is clean are read by Spark's CSV reader (:mod:`spark.ingest.put_csv`),
    the others by the Python parser, with the same rows either way; False (the default), every file by the Python
    parser."""
    spark, run_id, progress, trace_tz = ingest.spark, ingest.run_id, ingest.progress, ingest.trace_tz
    put_csv_reader = ingest.config.put_csv_reader
    results: list[dict] = []
    frames: dict[str, object] = {}
    if not todo:
        return results, frames
    t0 = time.monotonic()
    staged = tasks_read_the_store(spark, scratch)
    if staged:  # executors on other hosts: they read the files from the lake's store (spark/ingest/landing_stage.py)
        todo = stage_landing(todo, scratch, progress)
    # Spark's CSV reader takes the files by local path (file://): not where a cluster's workers read the landing.
    fast = (_put_csvs_by_spark(spark, todo, run_id, scratch, progress) if put_csv_reader and not staged
            else PutCsvRead())
    by_python = [f for f in todo if f.source_file not in fast.done]
    tasks = plan_tasks(by_python, default_parallelism(spark), task_bytes)
    if tasks:
        sc = None if is_remote(spark) else spark.sparkContext
        _ship_code(sc, session_master(spark), spark)
        # One Spark task per parse task: spark.range with as many partitions as rows puts one id in each.
        parsed = spark.range(0, len(tasks), 1, len(tasks)).mapInArrow(
            _parse_in_arrow(tasks, run_id, str(scratch), trace_tz), "summary string")
        results = [json.loads(row.summary) for row in parsed.collect()]
    results += fast.results
    if sorted(r["source_file"] for r in results) != sorted(f.source_file for f in todo):
        raise ReconciliationError(f"parse returned {len(results)} file summaries for {len(todo)} files")
    for r in results:  # checked in the task too; a mismatch here means rows were lost on the way
        if r["records_read"] != r["records_accepted"] + r["records_quarantined"]:
            raise ReconciliationError(f"{r['source_file']}: read {r['records_read']} != accepted "
                                      f"{r['records_accepted']} + quarantined {r['records_quarantined']}")
    for key in PARSED_TABLES:
        if any(r["rows"].get(key) for r in results if r["source_file"] not in fast.done):
            frames[key] = spark.read.schema(TABLES[key].schema).parquet(str(scratch / key))
    if fast.frame is not None:
        key = PUT_RECORDS
        frames[key] = frames[key].unionByName(fast.frame) if key in frames else fast.frame
    for r in results:  # file-level remarks of a parser (an activity trace at LOW level, a summary form, ...)
        for note in r.get("notes") or ():
            progress(f"note {r['source_file']}: {note}")
    for d in dates:
        rs = [r for r in results if r["run_date"] == d]
        if rs:
            progress(f"parse {d}: {len(rs)} files ({len(tasks)} tasks in all), "
                     f"{sum(r['records_read'] for r in rs)} records read, "
                     f"{sum(r['records_accepted'] for r in rs)} accepted, "
                     f"{sum(r['records_quarantined'] for r in rs)} quarantined, "
                     f"{sum(1 for r in rs if r['status'] == 'rejected')} files rejected "
                     f"({time.monotonic() - t0:.1f}s)")
    return results, frames
