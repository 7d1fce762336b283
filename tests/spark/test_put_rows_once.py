"""Each put row is stored once (issue 30 item 3): silver.message_events stores the rows the replay takes, the
files of bronze.put_records only the rows held back from it, and every reader reads bronze.put_records as the
view of clwl.lake.put_records (silver's rows as bronze had them, then the held-back rows).

One hand-made day, sender QM1 (tests/handmade.py), two put files; a fresh lake reads both in one run, so copies are
kept by file name, then line (docs/tables.md, silver.message_events; clwl.landing.held_back):

run 1   puts_a.csv  line 2 msg 1, line 3 msg 2, line 4 msg 3 (10:00-10:02), line 5 msg 4 put the day before;
        puts_b.csv  (with the optional application column, "billing") line 2 msg 3 again, line 3 msg 5, line 4 msg 6.
        Held back: a line 5 (put time not on the run date) and b line 2 (msg 3, kept in a, the earlier name).
        silver: a 1, 2, 3 and b 5, 6; bronze stores the two held rows; the view has all seven accepted rows.
run 2   puts_a.csv changed: line 4 is now msg 5 (msg 3 gone). It keeps its first-ingest time (run 1), so it still
        ranks before puts_b.csv: b's msg 3 is no longer repeated (held -> kept) and b's msg 5 now is (kept ->
        held), though puts_b.csv itself did not change. Held back: a line 5 and b line 3.

Run 2 is what the write order guards: both flips happen to rows of a file the run does not touch, which the next
run reads from the lake only. Stopped after each phase of its writes (CLWL_TEST_STOP_AFTER_PUT_PHASE, the state a
killed process leaves: the phase's commits done, the run log not appended), the next ingest must give what an
uninterrupted one gives, which is what a fresh lake of the final landing gives.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from spark.config import PipelineConfig
from tests.handmade import PUTS_HEADER, chstatus_capture, config_capture, msg, put_row, write_day
from tests.lake_compare import comparable_rows

pytestmark = [pytest.mark.spark]

DAY = "2026-11-20"
T0 = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.timezone.utc)
KEYS = ("silver.message_events", "bronze.put_records", "silver.quarantine")
ROOT = Path(__file__).resolve().parents[2]
# The ingest of _ingest, in a child process (the same configuration, so the same files count as touched): the one
# that SIGKILLs itself after a phase.
INGEST_SCRIPT = """
import sys
from spark.config import PipelineConfig
from spark.ingest import ingest
ingest(PipelineConfig(lake=sys.argv[1], landing=sys.argv[2]), [sys.argv[3]], progress=lambda m: None)
print("INGESTED", flush=True)
"""


def _put(minute: int, n: int) -> str:
    return put_row(T0 + dt.timedelta(minutes=minute), "QM1", "APP.ORDERS", msg(n))


def _landing(root, run: int):
    a = [_put(0, 1), _put(1, 2), _put(2, 3) if run == 1 else _put(5, 5),
         put_row(dt.datetime(2026, 11, 19, 23, 59, 59, tzinfo=dt.timezone.utc), "QM1", "APP.ORDERS", msg(4))]
    b = [r + ",billing" for r in (_put(2, 3), _put(5, 5), _put(6, 6))]
    write_day(root, DAY, "QM1", {
        "config_060000.mqsc": config_capture("QM1", {"QM2": {}, "QM3": {}}, {"APP.ORDERS": {"QM2": {}, "QM3": {}}}),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        "puts_a.csv": "\n".join([PUTS_HEADER, *a]) + "\n",
        "puts_b.csv": "\n".join([PUTS_HEADER + ",application", *b]) + "\n"})
    return root


def _ingest(spark, config):
    from spark.ingest import ingest

    lines: list[str] = []
    ingest(config, [DAY], spark=spark, progress=lines.append)
    return lines


def _stored(config) -> list[tuple[str, int]]:
    """The rows bronze.put_records' own files hold: (file name, line)."""
    from clwl.lake.door import Lake

    rows = Lake(config.lake).open("bronze.put_records").to_pyarrow_table().to_pylist()
    return sorted((r["source_file"].rsplit("/", 1)[1], r["position"]) for r in rows)


def _held(config) -> list[tuple[str, int]]:
    from clwl.lake.door import Lake

    rows = Lake(config.lake).rows("silver.quarantine").to_pylist()
    return sorted((r["source_file"].rsplit("/", 1)[1], r["position"]) for r in rows if r["level"] == "message")


def _tables(config) -> dict[str, list[str]]:
    return {key: comparable_rows(config.lake, key) for key in KEYS}


@pytest.fixture(scope="module")
def final(spark, tmp_path_factory):
    """A fresh lake of run 2's landing: what any history of runs must end in."""
    root = tmp_path_factory.mktemp("put_once_final")
    config = PipelineConfig(lake=root / "lake", landing=_landing(root / "landing", 2))
    _ingest(spark, config)
    return _tables(config)


@pytest.fixture(scope="module")
def run1(spark, tmp_path_factory):
    """A lake after run 1; each test takes a copy (:func:`_copy`)."""
    root = tmp_path_factory.mktemp("put_once_run1")
    config = PipelineConfig(lake=root / "lake", landing=_landing(root / "landing", 1))
    _ingest(spark, config)
    return config


def _copy(run1, tmp_path) -> PipelineConfig:
    shutil.copytree(run1.lake, tmp_path / "lake")
    shutil.copytree(run1.landing, tmp_path / "landing")
    return PipelineConfig(lake=tmp_path / "lake", landing=tmp_path / "landing")


def test_a_day_stores_each_put_row_once_and_the_view_reads_them_all(run1):
    """Run 1 (module docstring): silver holds five rows, bronze's files the two held back, the view seven: per
    file read = accepted + quarantined still (4 = 4 + 0 and 3 = 3 + 0 accepted by the parser; two of them held)."""
    from clwl.lake.door import Lake

    config = run1
    lake = Lake(config.lake)
    events = {(r["source_file"].rsplit("/", 1)[1], r["position"]): r
              for r in lake.rows("silver.message_events").to_pylist()}
    assert sorted(events) == [("puts_a.csv", 2), ("puts_a.csv", 3), ("puts_a.csv", 4), ("puts_b.csv", 3),
                              ("puts_b.csv", 4)]
    assert _held(config) == _stored(config) == [("puts_a.csv", 5), ("puts_b.csv", 2)]

    view = lake.rows("bronze.put_records").to_pylist()
    assert sorted((r["source_file"].rsplit("/", 1)[1], r["position"]) for r in view) == sorted(
        [*events, ("puts_a.csv", 5), ("puts_b.csv", 2)])
    by_place = {(r["source_file"].rsplit("/", 1)[1], r["position"]): r for r in view}
    # bronze as given: the application column of puts_b.csv only; silver's application by its rule (the handle
    # app:1:1 names "app"), and what bronze had of the row beside it
    assert {k: r["application"] for k, r in by_place.items()} == {
        k: ("billing" if k[0] == "puts_b.csv" else None) for k in by_place}
    assert {k: (r["application"], r["application_given"], r["source"]) for k, r in events.items()} == {
        k: ("billing", "billing", "csv") if k[0] == "puts_b.csv" else ("app", None, "csv") for k in events}
    assert {r["format"] for r in view} == {"csv"}
    runs = {r["ingest_run_id"] for r in view}
    assert len(runs) == 1 and None not in runs
    # the same view through clwl query (DataFusion) as through clwl.lake.door
    from clwl.lake.query import run_query

    assert run_query("SELECT count(*) AS n FROM bronze_put_records", config.lake).to_pylist() == [{"n": 7}]


# Uninterrupted, run 2 is what the rerun after a stop at phase 1 does (all three phases): extended only.
@pytest.mark.parametrize("stop_after", [pytest.param(None, marks=pytest.mark.extended), 1, 2])
def test_a_run_stopped_between_its_writes_is_completed_by_the_next(spark, tmp_path, run1, final, stop_after):
    """Run 2 (module docstring) after run 1, uninterrupted or stopped after phase 1 (bronze holds the rows held
    back now and still those held before) or phase 2 (silver written too): then an ingest without the stop.
    Every table equals the fresh lake's of run 2's landing, and bronze's files hold exactly the held rows."""
    from spark.ingest.message_events import STOP_AFTER_PHASE_ENV

    config = _copy(run1, tmp_path)
    shutil.rmtree(config.landing)
    _landing(config.landing, 2)
    if stop_after is not None:
        # The ingest in a child process that SIGKILLs itself (and its Spark JVM) after the phase: no finally of ours
        # runs, as with `kill -9` (issue 39 item 12).
        env = {**os.environ, STOP_AFTER_PHASE_ENV: str(stop_after),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.run([sys.executable, "-c", INGEST_SCRIPT, str(config.lake), str(config.landing), DAY],
                              env=env, capture_output=True, text=True, timeout=900, start_new_session=True)
        assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
        assert f"phase {stop_after} of its put rows' writes" in proc.stderr
        if stop_after == 1:  # kept -> held: b's msg 5 is in both tables meanwhile, and read once
            assert ("puts_b.csv", 3) in _stored(config) and ("puts_b.csv", 2) in _stored(config)
    _ingest(spark, config)
    assert _held(config) == _stored(config) == [("puts_a.csv", 5), ("puts_b.csv", 3)]
    assert _tables(config) == final


def test_a_lake_of_the_earlier_layout_is_read_right_and_migrated_once(spark, tmp_path, run1):
    """Run 1's lake turned into the earlier layout (bronze's files hold all seven accepted rows, silver lacks the
    two columns it now carries for bronze, no layout property): the view still reads seven rows; the next ingest,
    with nothing new to read, migrates it once (it says so), leaving bronze's files with the two held rows and
    every table as before; the ingest after that does not migrate again."""
    from clwl.lake.door import Lake
    from clwl.lake.put_records import LAYOUT_PROPERTY
    from spark.ingest.put_layout import migrated
    from spark.tables import path, read_table

    config = _copy(run1, tmp_path)
    before = _tables(config)

    every = read_table(spark, config, "bronze.put_records").collect()
    bronze = path(config, "bronze.put_records")
    (spark.createDataFrame(every, read_table(spark, config, "bronze.put_records").schema).write.format("delta")
     .mode("overwrite").partitionBy("run_date").save(bronze))
    spark.sql(f"ALTER TABLE delta.`{bronze}` UNSET TBLPROPERTIES ('{LAYOUT_PROPERTY}')")
    events = path(config, "silver.message_events")
    old = spark.read.format("delta").load(events).drop("application_given", "ingest_run_id")
    (spark.createDataFrame(old.collect(), old.schema).write.format("delta").mode("overwrite")
     .option("overwriteSchema", "true").partitionBy("run_date", "sending_qmgr").save(events))
    assert len(_stored(config)) == 7 and not migrated(config)
    assert "application_given" not in Lake(config.lake).rows("silver.message_events").column_names
    assert comparable_rows(config.lake, "bronze.put_records") == before["bronze.put_records"]

    lines = _ingest(spark, config)
    assert sum(line.startswith("lake migrated: ") for line in lines) == 1, lines
    assert migrated(config)
    assert _stored(config) == [("puts_a.csv", 5), ("puts_b.csv", 2)]
    assert _tables(config) == before
    assert all(r["ingest_run_id"] for r in Lake(config.lake).rows("silver.message_events").to_pylist())
    assert not any(line.startswith("lake migrated") for line in _ingest(spark, config))


def test_the_samples_write_no_put_row_to_bronze(samples_lake):
    """The samples hold back nothing: every put row is in silver only, and bronze.put_records was never
    written after its creation (version 0), yet reads every accepted put row."""
    from clwl.lake.door import Lake

    lake = Lake(samples_lake.lake)
    assert lake.version("bronze.put_records") == 0
    assert lake.rows("bronze.put_records").num_rows == lake.rows("silver.message_events").num_rows > 1000
