"""Issue 13, items 2 and 3: put rows that silver must not take as they are.

2. A msg_id repeated in two put files of one sender and date (a re-sent or late file) is kept once in
   silver.message_events; the later copy (the file ingested later; in one run, the later name) is a
   silver.quarantine row naming both files, and the later file's run-log counts say so. The decision is
   recomputed when either file changes or goes.
3. A put row whose put time is not on its folder's run date is quarantined with a reason naming both dates and
   the folder to put it in; it is never replayed with the run date's configuration.

Every landing here is built by hand in tmp_path from the sample estate's QM1 captures and a few of its put rows,
except the end-to-end run's: the sample day with a re-sent file, against the session's run of that day.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from spark.config import REPO_ROOT, PipelineConfig
from spark.ingest import ingest
from spark.tables import path

pytestmark = pytest.mark.spark

SAMPLE_QM1 = REPO_ROOT / "samples" / "landing" / "2026-11-20" / "QM1"
DAY = "2026-11-20"
_LINES = (SAMPLE_QM1 / "puts.csv").read_text().splitlines()
HEADER, ROWS = _LINES[0], _LINES[1:]
LEVEL = "message"  # silver.quarantine level of the rows decided when silver is built from bronze


def msg_id(row: str) -> str:
    return row.split(",")[13]


def at(row: str, put_time: str) -> str:
    """The row with another put time."""
    return ",".join([put_time] + row.split(",")[1:])


def captures(landing: Path, day: str = DAY) -> None:
    """QM1's configuration and channel status captures of the sample day, in ``<landing>/<day>/QM1``."""
    folder = landing / day / "QM1"
    folder.mkdir(parents=True, exist_ok=True)
    for p in sorted(SAMPLE_QM1.glob("c*_*.mqsc")):
        shutil.copy(p, folder / p.name)


def puts(landing: Path, name: str, rows: list[str], day: str = DAY) -> Path:
    p = landing / day / "QM1" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join([HEADER, *rows]) + "\n")
    return p


def rows(cfg: PipelineConfig, key: str, **equal) -> list[dict]:
    import deltalake

    from clwl.lake.door import Lake

    out = (Lake(cfg.lake).rows(key) if key == "bronze.put_records"  # a view (clwl.lake.put_records)
           else deltalake.DeltaTable(path(cfg, key)).to_pyarrow_table()).to_pylist()
    return [r for r in out if all(r[k] == v for k, v in equal.items())]


def log(cfg: PipelineConfig, summary) -> dict[str, tuple]:
    """This run's log rows: source file name -> (status, read, accepted, quarantined)."""
    return {r["source_file"].rsplit("/", 1)[1]: (r["status"], r["records_read"], r["records_accepted"],
                                                 r["records_quarantined"])
            for r in rows(cfg, "silver.ingest_files", ingest_run_id=summary.run_id)
            if "puts" in r["source_file"]}


def events(cfg: PipelineConfig, day: str = DAY) -> list[tuple[str, str, int]]:
    return sorted((r["msg_id"], r["source_file"].rsplit("/", 1)[1], r["position"])
                  for r in rows(cfg, "silver.message_events") if r["run_date"].isoformat() == day)


def held_back(cfg: PipelineConfig) -> list[dict]:
    return sorted((r for r in rows(cfg, "silver.quarantine") if r["level"] == LEVEL),
                  key=lambda r: (r["source_file"], r["position"]))


def quiet(_line: str) -> None:
    pass


def check_reconciles(cfg: PipelineConfig, summary) -> None:
    """Per file, read = accepted + quarantined, and the quarantine rows of every file are as many as its run-log
    row says (the derived rows included)."""
    from collections import Counter

    quarantined = Counter(r["source_file"] for r in rows(cfg, "silver.quarantine"))
    for f in summary.files:
        if f.status == "removed":
            continue
        assert f.records_read == f.records_accepted + f.records_quarantined, f
        assert quarantined[f.source_file] == f.records_quarantined, f
    keys = [(r["source_file"], r["seq"]) for r in rows(cfg, "silver.quarantine")]
    assert len(keys) == len(set(keys))


# -- item 2: a msg_id in two put files of one sender ----------------------------------------------------------


def test_rows_repeated_in_a_second_file_are_kept_once_and_the_copies_quarantined(spark, tmp_path):
    landing = tmp_path / "landing"
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    captures(landing)
    puts(landing, "puts_a.csv", ROWS[:20])
    repeated = [ROWS[12], ROWS[3], ROWS[17]]
    puts(landing, "puts_b.csv", repeated + ROWS[20:22])  # lines 2-4 repeat puts_a's lines 14, 5, 19
    summary = ingest(cfg, spark=spark, progress=quiet)

    assert len(rows(cfg, "bronze.put_records")) == 25  # bronze keeps every row it read
    ev = events(cfg)
    assert len(ev) == 22 and len({m for m, _, _ in ev}) == 22
    assert {(m, f) for m, f, _ in ev if m in {msg_id(r) for r in repeated}} == \
        {(msg_id(r), "puts_a.csv") for r in repeated}
    q = held_back(cfg)
    a, b = f"{DAY}/QM1/puts_a.csv", f"{DAY}/QM1/puts_b.csv"
    assert [(r["source_file"], r["position"], r["seq"]) for r in q] == [(b, 2, 0), (b, 3, 1), (b, 4, 2)]
    assert q[0]["reason"] == (
        f"duplicate msg_id {msg_id(ROWS[12])}: already in {a} line 14 (kept there, replayed once); this copy in "
        f"{b} line 2 is not replayed (the same record)")
    assert all(a in r["reason"] and b in r["reason"] for r in q)
    # raw is the record as a puts CSV row: under the header it parses back to the bronze record
    from clwl.parse.puts import parse_puts_csv_text

    [again], problems = parse_puts_csv_text(f"{HEADER}\n{q[0]['raw']}\n", "x")
    assert not problems and again.msg_id == msg_id(ROWS[12])
    assert q[0]["raw"].split(",")[1:] == ROWS[12].split(",")[1:]
    assert log(cfg, summary) == {"puts_a.csv": ("ingested", 20, 20, 0), "puts_b.csv": ("ingested", 5, 2, 3)}
    check_reconciles(cfg, summary)


def test_duplicate_decision_follows_first_ingest_and_is_recomputed_when_a_file_changes_or_goes(spark, tmp_path):
    landing = tmp_path / "landing"
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    captures(landing)
    a, b = f"{DAY}/QM1/puts_a.csv", f"{DAY}/QM1/puts_b.csv"
    # run 1: puts_b only
    puts(landing, "puts_b.csv", [ROWS[5], ROWS[9], ROWS[14], ROWS[30], ROWS[31]])
    ingest(cfg, spark=spark, progress=quiet)
    assert held_back(cfg) == [] and len(events(cfg)) == 5

    # run 2: puts_a arrives later and repeats 3 of puts_b's rows: its copies are the later ones, though its
    # name sorts first (puts_b was ingested first)
    puts(landing, "puts_a.csv", ROWS[:20])
    run2 = ingest(cfg, spark=spark, progress=quiet)
    assert [(r["source_file"], r["position"]) for r in held_back(cfg)] == [(a, 7), (a, 11), (a, 16)]
    assert all(f"already in {b} line" in r["reason"] for r in held_back(cfg))
    ev = events(cfg)
    assert len(ev) == 22 and len({m for m, _, _ in ev}) == 22
    assert log(cfg, run2) == {"puts_a.csv": ("ingested", 20, 17, 3), "puts_b.csv": ("unchanged", 5, 5, 0)}
    check_reconciles(cfg, run2)

    # run 3: puts_b corrected, it no longer holds two of the rows: those copies in puts_a are replayed now
    puts(landing, "puts_b.csv", [ROWS[5], ROWS[30], ROWS[31]])
    run3 = ingest(cfg, spark=spark, progress=quiet)
    assert [(r["source_file"], r["position"]) for r in held_back(cfg)] == [(a, 7)]
    assert len(events(cfg)) == 22
    assert log(cfg, run3) == {"puts_a.csv": ("unchanged", 20, 19, 1), "puts_b.csv": ("ingested", 3, 3, 0)}
    check_reconciles(cfg, run3)

    # run 4: puts_b removed: every row of puts_a is replayed from puts_a
    (landing / b).unlink()
    run4 = ingest(cfg, spark=spark, progress=quiet)
    assert held_back(cfg) == []
    assert events(cfg) == sorted((msg_id(r), "puts_a.csv", i + 2) for i, r in enumerate(ROWS[:20]))
    assert log(cfg, run4) == {"puts_a.csv": ("unchanged", 20, 20, 0), "puts_b.csv": ("removed", 0, 0, 0)}
    check_reconciles(cfg, run4)
    assert len(rows(cfg, "bronze.put_records")) == 20

    # and the same landing ingested into a fresh lake gives the same silver
    fresh = PipelineConfig(lake=tmp_path / "fresh", landing=landing)
    ingest(fresh, spark=spark, progress=quiet)
    assert events(fresh) == events(cfg) and held_back(fresh) == []


def test_a_repeated_row_that_differs_says_which_columns_differ(spark, tmp_path):
    landing = tmp_path / "landing"
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    captures(landing)
    puts(landing, "puts_a.csv", ROWS[:4])
    changed = ROWS[2].split(",")
    changed[2] = "APP.AUDIT" if changed[2] != "APP.AUDIT" else "APP.ORDERS"
    puts(landing, "puts_b.csv", [",".join(changed)])
    summary = ingest(cfg, spark=spark, progress=quiet)
    [q] = held_back(cfg)
    assert q["reason"].endswith("is not replayed (it differs in queue; the kept copy is replayed)")
    assert [r["queue"] for r in rows(cfg, "silver.message_events") if r["msg_id"] == msg_id(ROWS[2])] == \
        [ROWS[2].split(",")[2]]
    check_reconciles(cfg, summary)


# -- item 3: put times outside the run date ------------------------------------------------------------------


def test_put_time_outside_the_run_date_is_quarantined_and_can_be_refiled(spark, tmp_path):
    landing = tmp_path / "landing"
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    captures(landing)
    late = at(ROWS[8], "2026-11-21T00:00:03Z")  # a file spanning midnight
    early = at(ROWS[9], "2026-11-19T23:59:58.250Z")
    edge = at(ROWS[7], "2026-11-20T23:59:59.999999Z")  # still the run date
    puts(landing, "puts.csv", ROWS[:7] + [edge, late, early])
    # the late row repeated in a second file: quarantined for its date in both, not as a duplicate
    puts(landing, "puts_more.csv", [late, ROWS[10]])
    summary = ingest(cfg, spark=spark, progress=quiet)

    ev = events(cfg)
    assert len(ev) == 9 and msg_id(edge) in {m for m, _, _ in ev}
    assert all(r["put_time"].date().isoformat() == DAY for r in rows(cfg, "silver.message_events"))
    q = held_back(cfg)
    assert [(r["source_file"].rsplit("/", 1)[1], r["position"]) for r in q] == [
        ("puts.csv", 10), ("puts.csv", 11), ("puts_more.csv", 2)]
    assert q[0]["reason"] == (
        f"put time 2026-11-21T00:00:03.000Z is not in run date {DAY} (file {DAY}/QM1/puts.csv line 10): not "
        f"replayed, so that it is not routed with {DAY}'s configuration; put the row in a put file of the "
        f"2026-11-21/QM1/ folder")
    assert "put time 2026-11-19T23:59:58.250Z is not in run date 2026-11-20" in q[1]["reason"]
    assert "2026-11-19/QM1/" in q[1]["reason"]
    assert log(cfg, summary) == {"puts.csv": ("ingested", 10, 8, 2), "puts_more.csv": ("ingested", 2, 1, 1)}
    check_reconciles(cfg, summary)

    # the administrator re-files the row, from its raw text, in the 2026-11-21 folder: replayed on its own day
    captures(landing, "2026-11-21")
    refiled = landing / "2026-11-21" / "QM1" / "puts_from_2026-11-20.csv"
    refiled.write_text(f"{HEADER}\n{q[0]['raw']}\n")
    again = ingest(cfg, spark=spark, progress=quiet)
    assert [m for m, _, _ in events(cfg, "2026-11-21")] == [msg_id(late)]
    assert len(held_back(cfg)) == 3  # the 2026-11-20 copies stay quarantined: that file still holds them
    check_reconciles(cfg, again)


# -- end to end: clwl run with a re-sent file ------------------------------------------------------------------


def _destinations(cfg: PipelineConfig) -> dict[str, tuple]:
    import deltalake

    gold = deltalake.DeltaTable(str(cfg.lake / "gold" / "routing_replay")).to_pyarrow_table().to_pylist()
    ids = [r["msg_id"] for r in gold]
    assert len(ids) == len(set(ids)), "a message replayed twice"
    return {r["msg_id"]: (r["qmgr"], r["final_qmgr"], r["error"]) for r in gold}


@pytest.mark.slow
def test_run_with_a_resent_file_publishes_the_same_destinations(spark, samples_day_run, tmp_path):
    """The sample day with a re-sent file (three of QM1's put rows again, in a file whose name sorts after theirs)
    publishes the destinations the same day publishes without it: the session's `clwl run` of that date on
    samples/landing (tests/conftest.py samples_day_run, only read here; source_file is relative to the landing
    root, so the copy's rows are the same). The three copies, and only they, are quarantined, naming both files."""
    from spark.pipeline import run_pipeline

    base_cfg, base_day = samples_day_run.config, samples_day_run.outcome.dates[0]
    assert base_day.run_date == DAY and base_day.published
    landing = tmp_path / "landing"
    shutil.copytree(base_cfg.landing / DAY, landing / DAY)
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    resent_rows = [ROWS[40], ROWS[10], ROWS[25]]
    puts(landing, "puts_resent.csv", resent_rows)
    outcome = run_pipeline(cfg, [DAY], spark=spark, progress=quiet)
    assert outcome.published and outcome.dates[0].published, outcome.dates[0].failures

    base, resent = _destinations(base_cfg), _destinations(cfg)
    assert {msg_id(r) for r in resent_rows} <= set(base)  # the re-sent messages are replayed, once
    assert len(resent) == base_day.messages and resent == base
    b = f"{DAY}/QM1/puts_resent.csv"
    q = [r for r in held_back(cfg) if r["source_file"] == b]
    assert sorted(r["position"] for r in q) == [2, 3, 4]
    assert all(f"{DAY}/QM1/puts.csv line" in r["reason"] and b in r["reason"] for r in q)

    def others(c):  # the day's own held-back rows (the samples' deliberate defects): the same in both runs
        return sorted((r["source_file"], r["position"], r["reason"]) for r in held_back(c) if r["source_file"] != b)

    assert others(cfg) == others(base_cfg)
    assert outcome.dates[0].messages == base_day.messages


def test_a_msg_id_put_twice_in_one_activity_trace_is_replayed_once(spark, tmp_path):
    """An application may put the same MsgId twice (it sets MQMD.MsgId itself). The put file parser refuses a
    repeated msg_id within its file, the activity trace parser does not, so silver must find it even when the
    sender's day has that one trace file and no other (the search across files is left out only for a single
    put file that its parser checked): the second put is held back as a duplicate of the first."""
    from tests.handmade import chstatus_capture, config_capture, write_day
    from tests.spark.test_activity_trace_ingest import SCTQ, _put, _trace_message, connect_and_open
    from tests.spark.test_activity_trace_ingest import msg_id as traced_id

    landing = tmp_path / "landing"
    trace = _trace_message(0, [*connect_and_open(), _put(1, 1, "QM2", SCTQ), _put(2, 2, "QM3", SCTQ),
                               _put(1, 3, "QM3", SCTQ)])  # message 1 again, two seconds later
    write_day(landing, DAY, "QM1", {
        "config_060000.mqsc": config_capture("QM1", {"QM2": {}, "QM3": {}}, {"CLUS.Q": {"QM2": {}, "QM3": {}}}),
        "chstatus_060000.mqsc": chstatus_capture("QM1", {"TO.QM2": "RUNNING", "TO.QM3": "RUNNING"}),
        "QM1.trace.amqsact": "\n".join(trace + ["1 Records Processed.", ""]),
    })
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    summary = ingest(cfg, [DAY], spark=spark, progress=lambda m: None)
    first, again = traced_id(1).hex().upper(), traced_id(2).hex().upper()
    assert sorted(r["msg_id"] for r in rows(cfg, "bronze.put_records")) == sorted([first, first, again])
    events = rows(cfg, "silver.message_events")
    assert sorted(r["msg_id"] for r in events) == sorted([first, again])
    kept = next(r for r in events if r["msg_id"] == first)
    assert kept["put_time"].second == 1  # the first put is the one replayed
    (held,) = rows(cfg, "silver.quarantine", level=LEVEL)
    assert held["reason"].startswith(f"duplicate msg_id {first}: already in {DAY}/QM1/QM1.trace.amqsact line ")
    assert summary.records_read == summary.records_accepted + summary.records_quarantined
    assert summary.records_quarantined == 1
