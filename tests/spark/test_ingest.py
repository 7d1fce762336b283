"""Ingest into real Delta tables on a real local Spark: bronze rows per parser, silver history semantics,
idempotent and incremental re-runs, quarantine of every kind of bad input, reconciliation on the samples.

One ingest of samples/ is shared by the module (``samples_ingested``); the other tests build small landing folders
with hand-written runmqsc text in the real format.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import pytest

from spark.config import REPO_ROOT, PipelineConfig
from spark.ingest import ingest
from spark.tables import INGEST_TABLES, path

pytestmark = pytest.mark.spark

SAMPLES = REPO_ROOT / "samples" / "landing"
FACTS = json.loads((REPO_ROOT / "samples" / "facts.json").read_text())

# -- runmqsc text as the tool prints it ----------------------------------------------------------------------

QMGR_MSG = "AMQ8408I: Display Queue Manager details."
CLUSQMGR_MSG = "AMQ8441I: Display Cluster Queue Manager details."
QUEUE_MSG = "AMQ8409I: Display Queue details."
CHSTATUS_MSG = "AMQ8417I: Display Channel Status details."


def rec(message: str, *pairs: str) -> str:
    """One record: the AMQ line, then KEY(value) pairs two to a line at runmqsc's columns."""
    lines = [message]
    for i in range(0, len(pairs), 2):
        right = pairs[i + 1] if i + 1 < len(pairs) else ""
        lines.append(("   " + pairs[i].ljust(40) + right).rstrip())
    return "\n".join(lines) + "\n"


def runmqsc(qmgr: str, *commands: tuple[str, list[str]]) -> str:
    out = [f"5724-H72 (C) Copyright IBM Corp. 1994, 2025.\nStarting MQSC for queue manager {qmgr}.\n\n\n"]
    for n, (command, records) in enumerate(commands, 1):
        out.append(f"{n:>6} : {command}\n")
        out.extend(records)
    count = "One MQSC command" if len(commands) == 1 else f"{len(commands)} MQSC commands"
    out.append(f"{count} read.\nNo commands have a syntax error.\nAll valid MQSC commands were processed.\n")
    return "".join(out)


def config_capture(qmgr: str, weight: int, queues: list[str], depth: int = 0, extra: tuple[str, ...] = ()) -> str:
    return runmqsc(
        qmgr,
        ("DISPLAY QMGR ALL", [rec(QMGR_MSG, f"QMNAME({qmgr})", "CLWLUSEQ(LOCAL)", "DEFCLXQ(SCTQ)",
                                  f"QMID({qmgr}_2025-01-01_00.00.00)", "DESCR( )")]),
        ("DISPLAY CLUSQMGR(*) ALL", [rec(CLUSQMGR_MSG, "CLUSQMGR(QMB)", "CHANNEL(TO.QMB)", "CLUSTER(CL1)",
                                         f"CLWLWGHT({weight})", "CONNAME(qmb.example.com(1414))",
                                         "DEFTYPE(CLUSSDRA)", "QMTYPE(NORMAL)", "SUSPEND(NO)", *extra)]),
        ("DISPLAY QLOCAL(*) ALL", [rec(QUEUE_MSG, f"QUEUE({q})", "TYPE(QLOCAL)", f"CURDEPTH({depth})",
                                       "PUT(ENABLED)", "USAGE(NORMAL)") for q in queues]),
    )


def chstatus_capture(qmgr: str, status: str | None) -> str:
    if status is None:  # an inactive channel has no status record at all
        records = ["AMQ8420I: Channel Status not found.\n"]
    else:
        records = [rec(CHSTATUS_MSG, "CHANNEL(TO.QMB)", "CHLTYPE(CLUSSDR)", "CONNAME(qmb.example.com(1414))",
                       "CURRENT", "RQMNAME(QMB)", f"STATUS({status})",
                       "SUBSTATE(MQGET)" if status == "RUNNING" else "SUBSTATE( )",
                       "XMITQ(SYSTEM.CLUSTER.TRANSMIT.QUEUE)")]
    return runmqsc(qmgr, ("DISPLAY CHSTATUS(*) ALL", records))


PUT_HEADER = ("put_time,sending_qmgr,queue,target_qmgr,bind,open_handle,group_id,logical_order,"
              "from_cluster_channel,pcf,length,persistent,accounting_token,msg_id,observed_qmgr,"
              "observed_channel,observed_xmitq")


def put_row(n: int, bind: str = "notfixed", token: str = "04" + "0" * 61 + "1") -> str:
    msg_id = f"414D5120514D44{n:034X}"
    return (f"2026-01-06T07:00:{n:02d}.000Z,QMD,APP.Q,,{bind},app:1,,false,false,false,100,true,"
            f"{token},{msg_id},,,")


# -- helpers -------------------------------------------------------------------------------------------------


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def table(spark, cfg: PipelineConfig, key: str):
    """A table read back by Spark."""
    return spark.read.format("delta").load(path(cfg, key))


def rows(cfg: PipelineConfig, key: str, **equal) -> list[dict]:
    """A table read back without a JVM (deltalake), as dicts; ``equal``: column == value filters."""
    import deltalake

    from clwl.lake.door import Lake

    out = (Lake(cfg.lake).rows(key) if key == "bronze.put_records"  # a view (clwl.lake.put_records)
           else deltalake.DeltaTable(path(cfg, key)).to_pyarrow_table()).to_pylist()
    return [r for r in out if all(r[k] == v for k, v in equal.items())]


def snapshot(cfg: PipelineConfig, drop: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Every table but the run log, as sorted JSON rows (``drop``: columns left out)."""
    return {key: sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True, default=str)
                        for r in rows(cfg, key))
            for key in INGEST_TABLES if key != "silver.ingest_files"}


def versions(cfg: PipelineConfig) -> dict[str, int]:
    import deltalake

    return {key: deltalake.DeltaTable(path(cfg, key)).version() for key in INGEST_TABLES}


def _hhmm(t) -> str | None:
    return None if t is None else t.strftime("%H:%M")


def history_rows(cfg: PipelineConfig, qmgr: str) -> list[tuple]:
    return [(r["kind"], r["object_key"], _hhmm(r["valid_from"]), _hhmm(r["valid_to"]),
             dict(r["attrs"]).get("CLWLWGHT"), r["source_file"])
            for r in sorted(rows(cfg, "silver.config_history", observing_qmgr=qmgr),
                            key=lambda r: (r["kind"], r["object_key"], r["valid_from"]))]


def timeline(cfg: PipelineConfig, qmgr: str) -> list[tuple]:
    return [(r["channel"], r["chltype"], r["status"], _hhmm(r["valid_from"]), _hhmm(r["valid_to"]))
            for r in sorted(rows(cfg, "silver.channel_status", observing_qmgr=qmgr),
                            key=lambda r: (r["channel"], r["valid_from"]))]


def quiet(_line: str) -> None:
    pass


# -- the sample estate, ingested once ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def samples_ingested(spark, tmp_path_factory):
    cfg = PipelineConfig(lake=tmp_path_factory.mktemp("samples") / "lake", landing=SAMPLES)
    lines: list[str] = []
    summary = ingest(cfg, spark=spark, progress=lines.append)
    return cfg, summary, lines


def test_samples_reconcile_and_quarantine_the_deliberate_defects(samples_ingested):
    cfg, summary, lines = samples_ingested
    assert summary.files and all(f.status in ("ingested", "rejected") for f in summary.files)
    for f in summary.files:
        assert f.records_read == f.records_accepted + f.records_quarantined, f
    assert summary.records_read == summary.records_accepted + summary.records_quarantined
    assert summary.records_quarantined > 0

    log = rows(cfg, "silver.ingest_files", ingest_run_id=summary.run_id)
    assert len(log) == len(summary.files)
    assert all(r["records_read"] == r["records_accepted"] + r["records_quarantined"] for r in log)
    totals = tuple(sum(r[c] for r in log) for c in ("records_read", "records_accepted", "records_quarantined"))
    assert totals == (summary.records_read, summary.records_accepted, summary.records_quarantined)

    quarantine = rows(cfg, "silver.quarantine")
    assert len(quarantine) == summary.records_quarantined
    reasons = [r["reason"] for r in quarantine]
    for expected in ("unbalanced parenthesis", "record truncated at end of file", "bad hex in",
                     "not runmqsc output"):
        assert any(reason.startswith(expected) for reason in reasons), (expected, reasons)
    rejected = [r for r in quarantine if r["level"] == "file"]
    assert rejected and all(r["position"] == 0 and r["raw"] for r in rejected)
    assert all(r["source_file"] and r["ingest_run_id"] == summary.run_id for r in quarantine)
    # progress: one line per stage and date, with counts
    assert any(line.startswith("parse 2026-11-20:") and "quarantined" in line for line in lines)


def test_samples_every_parser_lands_in_bronze_with_its_lineage(spark, samples_ingested):
    cfg, summary, _ = samples_ingested
    run = summary.run_id
    accepted = {f.source_file: f.records_accepted for f in summary.files}

    # read back by Spark: runmqsc and REST records with their lineage
    objects = table(spark, cfg, "bronze.mqsc_objects")
    assert objects.where(f"ingest_run_id != '{run}' OR position < 0 OR source_file IS NULL").count() == 0
    qm1 = objects.where("source_file = '2026-11-20/QM1/config_060000.mqsc'").selectExpr(
        "count(*)", "min(position) > 0", "collect_set(date_format(capture_time, 'yyyy-MM-dd HH:mm:ss'))",
        "collect_set(observing_qmgr)", "collect_set(format)", "collect_set(cast(run_date AS string))",
        "collect_set(kind)").first()
    assert qm1[0] == accepted["2026-11-20/QM1/config_060000.mqsc"] and qm1[1]
    assert (qm1[2], qm1[3], qm1[4], qm1[5]) == (["2026-11-20 06:00:00"], ["QM1"], ["mqsc"], ["2026-11-20"])
    assert {"CLUSQMGR", "QCLUSTER", "QMGR", "QLOCAL"} <= set(qm1[6])
    formats = {r.format for r in objects.where("observing_qmgr = 'QM2'").select("format").distinct().collect()}
    assert formats == {"rest", "mqsc"}  # QM2's configuration comes as MQ REST JSON, its CHSTATUS as runmqsc

    # the rest read back without a JVM
    puts = rows(cfg, "bronze.put_records")
    by_source: dict[str, int] = {}
    for r in puts:
        by_source[r["source_file"]] = by_source.get(r["source_file"], 0) + 1
    assert by_source == {f.source_file: f.records_accepted for f in summary.files if f.format == "csv"}
    assert all(r["position"] >= 2 and r["ingest_run_id"] == run and r["put_time"].tzinfo for r in puts)

    browses = rows(cfg, "bronze.xmitq_messages")
    by_file = {(r["source_file"], r["format"], r["capture_time"].strftime("%H:%M:%S")) for r in browses}
    assert by_file == {("2026-11-20/QM1/xmitq_153000.amqsbcg", "amqsbcg", "15:30:00"),
                       ("2026-11-20/QM5/xmitq_153000.dmpmqmsg", "dmpmqmsg", "15:30:00")}
    assert len(browses) == len(FACTS["browse_QM1_SYSTEM.CLUSTER.TRANSMIT.QUEUE_153000"]) + \
        len(FACTS["browse_QM5_CLUS.XMITQ.QM_153000"])
    assert any(r["accounting_token_zero"] for r in browses)  # bind on open / group / named target QM
    assert all(r["remote_q_name"] and r["remote_qmgr_name"] and r["position"] > 0 for r in browses)

    accounting = rows(cfg, "bronze.queue_accounting")
    amqsmon = [f for f in summary.files if f.format == "amqsmon"]
    assert len(accounting) == sum(f.records_accepted - f.records_skipped for f in amqsmon) > 0
    assert all(r["position"] > 0 and r["queue"] and r["interval_end"] > r["interval_start"] for r in accounting)

    # silver: the same records, typed; accounting intervals as UTC instants, with the put total
    assert len(rows(cfg, "silver.message_events")) == len(puts)
    assert len(rows(cfg, "silver.xmitq_contents")) == len(browses)
    silver_acc = {(r["source_file"], r["position"]): r for r in rows(cfg, "silver.queue_accounting")}
    assert len(silver_acc) == len(accounting)
    for r in accounting:
        s = silver_acc[(r["source_file"], r["position"])]
        assert s["interval_start"].replace(tzinfo=None) == r["interval_start"]  # printed time, read as UTC
        assert s["put_count"] == sum(r[c] or 0 for c in ("put_count_nonpersistent", "put_count_persistent",
                                                          "put1_count_nonpersistent", "put1_count_persistent"))


def test_samples_unknown_attribute_is_accepted_and_kept(spark, samples_ingested):
    cfg, _, _ = samples_ingested
    hits = table(spark, cfg, "bronze.mqsc_objects").where("attrs['CLWLHINT'] IS NOT NULL").collect()
    assert hits and all(r.attrs["CLWLHINT"] == "NONE" and r.kind == "CLUSQMGR" for r in hits)
    assert table(spark, cfg, "silver.config_history").where("attrs['CLWLHINT'] = 'NONE'").count() > 0


def test_samples_history_channel_goes_retrying_and_back_and_weight_change(spark, samples_ingested):
    cfg, _, _ = samples_ingested
    to_qm3 = [r for r in timeline(cfg, "QM1") if r[0] == "TO.QM3"]
    statuses = [r[2] for r in to_qm3]
    assert "RETRYING" in statuses and statuses[-1] == "RUNNING"
    assert statuses.index("RETRYING") < len(statuses) - 1
    # QM1's view of QM2's CLUSRCVR weight changes during 2026-11-19: two versions with different CLWLWGHT
    weights = [r[4] for r in history_rows(cfg, "QM1") if r[1] == "CLUSQMGR|QM2|TO.QM2|CL1"]
    assert len(set(weights)) >= 2
    # every history table: per key, intervals are ordered and do not overlap; one current version at most
    for key, cols in (("silver.config_history", "observing_qmgr, kind, object_key"),
                      ("silver.channel_status", "observing_qmgr, channel")):
        table(spark, cfg, key).createOrReplaceTempView("h")
        bad = spark.sql(f"""
            SELECT * FROM (SELECT *, lead(valid_from) OVER (PARTITION BY {cols} ORDER BY valid_from) AS nxt FROM h)
            WHERE (valid_to IS NULL AND nxt IS NOT NULL) OR valid_to != nxt OR valid_to < valid_from""")
        assert bad.count() == 0, key


def test_samples_tables_read_without_a_jvm_have_unique_keys_and_no_deletion_vectors(samples_ingested):
    import deltalake

    cfg, summary, _ = samples_ingested
    # The samples hold no channel statistics (tests/spark/test_channel_statistics.py ingests them): those tables
    # are created, empty; every other ingest table has rows (bronze.activity_operations: QM5's channel agents).
    no_samples = {"bronze.channel_statistics", "silver.channel_statistics"}
    from clwl.lake.door import Lake

    for key, t in INGEST_TABLES.items():
        dt = deltalake.DeltaTable(path(cfg, key))
        assert "deletionVectors" not in (dt.protocol().reader_features or []), key
        data = Lake(cfg.lake).rows(key)  # bronze.put_records: the view (its own files hold no row of the samples)
        assert (data.num_rows == 0 if key in no_samples else data.num_rows > 0), key
        assert data.column_names == list(t.columns), key
        keys = list(zip(*(data.column(c).to_pylist() for c in t.keys)))
        assert len(set(keys)) == len(keys), key
    assert len(rows(cfg, "silver.quarantine")) == summary.records_quarantined


def test_samples_rerun_changes_no_table(spark, samples_ingested):
    cfg, first, _ = samples_ingested
    before, before_versions = snapshot(cfg), versions(cfg)
    again = ingest(cfg, spark=spark, progress=quiet)
    assert {f.status for f in again.files} == {"unchanged"}
    assert [(f.source_file, f.records_read, f.records_accepted, f.records_quarantined) for f in again.files] == \
        [(f.source_file, f.records_read, f.records_accepted, f.records_quarantined) for f in first.files]
    assert snapshot(cfg) == before
    after_versions = versions(cfg)
    assert {k: v for k, v in after_versions.items() if k != "silver.ingest_files"} == \
        {k: v for k, v in before_versions.items() if k != "silver.ingest_files"}
    log = rows(cfg, "silver.ingest_files", ingest_run_id=again.run_id)
    assert len(log) == len(first.files) and {r["status"] for r in log} == {"unchanged"}


# -- files arriving over three runs: history, a corrected file, a removed file, a forced re-run ------------------

QMA = "2026-01-05/QMA"  # history: a weight change, an unchanged capture, captures arriving out of order
QMD = "2026-01-06/QMD"  # a put file corrected after the first run, a capture removed from the landing
BAD_DAY = "2026-02-02"  # QMC: every kind of bad input


@pytest.fixture(scope="module")
def arrivals(spark, tmp_path_factory):
    """One lake, three runs: (1, through ``clwl ingest``) QMA's 18:00 captures, QMD's files with a bad put
    record, and QMC's day of broken files; (2) QMA's earlier captures, QMD's corrected put file, QMD's CHSTATUS
    capture removed; (3) everything read again (force). What each test asserts is collected after its run."""
    root = tmp_path_factory.mktemp("arrivals")
    landing = root / "landing"
    cfg = PipelineConfig(lake=root / "lake", landing=landing)
    seen: dict[str, object] = {}

    write(landing, f"{QMA}/config_180000.mqsc", config_capture("QMA", 80, ["APP.OTHER"]))  # APP.L deleted
    write(landing, f"{QMA}/chstatus_180000.mqsc", chstatus_capture("QMA", "RETRYING"))
    write(landing, f"{QMD}/config_060000.mqsc", config_capture("QMD", 50, ["APP.Q"]))
    write(landing, f"{QMD}/chstatus_060000.mqsc", chstatus_capture("QMD", "RUNNING"))
    puts = write(landing, f"{QMD}/puts.csv",
                 "\n".join([PUT_HEADER, put_row(1), put_row(2, bind="sometimes"), put_row(3)]) + "\n")
    _bad_landing(landing)
    # run 1 through the command line
    from clwl.cli.pipeline import add_ingest_command

    parser = argparse.ArgumentParser(prog="clwl")
    add_ingest_command(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["ingest", "--landing", str(landing), "--lake", str(cfg.lake), "--date", "2026-01-05",
                              "--date", "2026-01-06", "--date", BAD_DAY])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        seen["cli_rc"] = args.func(args)
    seen["cli_out"] = out.getvalue()
    [run_id] = {r["ingest_run_id"] for r in rows(cfg, "silver.ingest_files")}
    seen["run1"] = run_id
    seen["bad_quarantine"] = [r for r in rows(cfg, "silver.quarantine") if r["run_date"].isoformat() == BAD_DAY]
    seen["bad_log"] = [r for r in rows(cfg, "silver.ingest_files") if r["run_date"].isoformat() == BAD_DAY]
    seen["bad_objects"] = rows(cfg, "bronze.mqsc_objects", observing_qmgr="QMC")
    seen["bad_counts"] = {key: len(rows(cfg, key, observing_qmgr="QMC")) for key in (
        "bronze.put_records", "bronze.xmitq_messages", "bronze.queue_accounting")}
    seen["bad_incomplete"] = sum(1 for r in rows(cfg, "bronze.capture_files", observing_qmgr="QMC")
                                 if not r["complete"])
    seen["history1"] = history_rows(cfg, "QMA")
    seen["timeline1"] = timeline(cfg, "QMA")
    seen["timeline_qmd1"] = timeline(cfg, "QMD")
    seen["quarantine1"] = [(r["source_file"], r["position"], r["reason"])
                           for r in rows(cfg, "silver.quarantine", observing_qmgr="QMD")]
    seen["puts1"] = len(rows(cfg, "bronze.put_records", observing_qmgr="QMD"))

    write(landing, f"{QMA}/config_060000.mqsc", config_capture("QMA", 50, ["APP.L"]))
    write(landing, f"{QMA}/config_120000.mqsc", config_capture("QMA", 50, ["APP.L"], depth=12))  # no change
    write(landing, f"{QMA}/chstatus_060000.mqsc", chstatus_capture("QMA", "RUNNING"))
    write(landing, f"{QMA}/chstatus_120000.mqsc", chstatus_capture("QMA", None))  # inactive: no record
    puts.write_text("\n".join([PUT_HEADER, put_row(1), put_row(2), put_row(3)]) + "\n")
    (landing / QMD / "chstatus_060000.mqsc").unlink()
    seen["run2"] = ingest(cfg, spark=spark, progress=quiet)
    seen["history2"] = history_rows(cfg, "QMA")
    seen["timeline2"] = timeline(cfg, "QMA")
    seen["timeline_qmd2"] = timeline(cfg, "QMD")
    seen["history_qmd2"] = history_rows(cfg, "QMD")
    seen["puts2"] = sorted((r["position"], r["ingest_run_id"])
                           for r in rows(cfg, "bronze.put_records", observing_qmgr="QMD"))
    seen["events2"] = len(rows(cfg, "silver.message_events", observing_qmgr="QMD"))
    seen["quarantine2"] = len(rows(cfg, "silver.quarantine", observing_qmgr="QMD"))
    qmd = rows(cfg, "bronze.mqsc_objects", observing_qmgr="QMD")
    seen["qmd_run_ids2"] = {r["ingest_run_id"] for r in qmd}
    seen["qmd_chstatus2"] = sum(1 for r in qmd if r["kind"] == "CHSTATUS")
    seen["qmd_captures2"] = len(rows(cfg, "bronze.capture_files", observing_qmgr="QMD"))
    seen["log2"] = {(r["source_file"], r["status"], r["records_read"])
                    for r in rows(cfg, "silver.ingest_files", ingest_run_id=seen["run2"].run_id)}
    seen["snapshot2"] = snapshot(cfg, drop=("ingest_run_id",))

    seen["run3"] = ingest(cfg, spark=spark, progress=quiet, force=True)
    seen["snapshot3"] = snapshot(cfg, drop=("ingest_run_id",))
    return seen


def test_history_of_captures_arriving_late_first(arrivals):
    assert arrivals["history1"] == [
        ("CLUSQMGR", "CLUSQMGR|QMB|TO.QMB|CL1", "18:00", None, "80", f"{QMA}/config_180000.mqsc"),
        ("QLOCAL", "QLOCAL|APP.OTHER", "18:00", None, None, f"{QMA}/config_180000.mqsc"),
        ("QMGR", "QMGR", "18:00", None, None, f"{QMA}/config_180000.mqsc"),
    ]
    assert arrivals["timeline1"] == [("TO.QMB", "CLUSSDR", "RETRYING", "18:00", None)]


def test_history_change_no_change_and_out_of_order_arrival(arrivals):
    assert sorted((f.source_file, f.status) for f in arrivals["run2"].files if f.source_file.startswith(QMA)) == [
        (f"{QMA}/chstatus_060000.mqsc", "ingested"), (f"{QMA}/chstatus_120000.mqsc", "ingested"),
        (f"{QMA}/chstatus_180000.mqsc", "unchanged"), (f"{QMA}/config_060000.mqsc", "ingested"),
        (f"{QMA}/config_120000.mqsc", "ingested"), (f"{QMA}/config_180000.mqsc", "unchanged")]
    # the 12:00 capture differs from 06:00 only in CURDEPTH (not configuration): no version opens at 12:00
    assert arrivals["history2"] == [
        ("CLUSQMGR", "CLUSQMGR|QMB|TO.QMB|CL1", "06:00", "18:00", "50", f"{QMA}/config_060000.mqsc"),
        ("CLUSQMGR", "CLUSQMGR|QMB|TO.QMB|CL1", "18:00", None, "80", f"{QMA}/config_180000.mqsc"),
        ("QLOCAL", "QLOCAL|APP.L", "06:00", "18:00", None, f"{QMA}/config_060000.mqsc"),
        ("QLOCAL", "QLOCAL|APP.OTHER", "18:00", None, None, f"{QMA}/config_180000.mqsc"),
        ("QMGR", "QMGR", "06:00", None, None, f"{QMA}/config_060000.mqsc"),
    ]
    assert arrivals["timeline2"] == [
        ("TO.QMB", "CLUSSDR", "RUNNING", "06:00", "12:00"),
        ("TO.QMB", "CLUSSDR", "INACTIVE", "12:00", "18:00"),
        ("TO.QMB", "CLUSSDR", "RETRYING", "18:00", None),
    ]


def test_corrected_file_replaces_only_its_own_rows(arrivals):
    run1, run2 = arrivals["run1"], arrivals["run2"].run_id
    assert arrivals["quarantine1"] == [
        (f"{QMD}/puts.csv", 3, "unknown bind value 'sometimes' (expected notfixed, open or group)")]
    assert arrivals["puts1"] == 2
    assert arrivals["puts2"] == [(2, run2), (3, run2), (4, run2)]
    assert arrivals["events2"] == 3 and arrivals["quarantine2"] == 0
    # QMD's config capture was not read or rewritten again: its rows still carry the first run's id
    assert arrivals["qmd_run_ids2"] == {run1}
    assert {f.source_file: f.status for f in arrivals["run2"].files if f.source_file.startswith(QMD)} == {
        f"{QMD}/config_060000.mqsc": "unchanged", f"{QMD}/puts.csv": "ingested",
        f"{QMD}/chstatus_060000.mqsc": "removed"}
    assert (f"{QMD}/puts.csv", "ingested", 3) in arrivals["log2"]
    assert (f"{QMD}/config_060000.mqsc", "unchanged", 3) in arrivals["log2"]


def test_removed_file_leaves_the_tables(arrivals):
    assert arrivals["timeline_qmd1"] == [("TO.QMB", "CLUSSDR", "RUNNING", "06:00", None)]
    assert (f"{QMD}/chstatus_060000.mqsc", "removed", 0) in arrivals["log2"]
    assert arrivals["qmd_chstatus2"] == 0 and arrivals["qmd_captures2"] == 1
    assert arrivals["timeline_qmd2"] == []  # no CHSTATUS capture of QMD left
    assert len(arrivals["history_qmd2"]) == 3


def test_reading_everything_again_gives_the_same_tables(arrivals):
    assert {f.status for f in arrivals["run3"].files} == {"ingested", "rejected"}
    assert arrivals["snapshot3"] == arrivals["snapshot2"]  # all but the run ids and the run log


# -- every kind of bad input, through the command line -------------------------------------------------------

AMQSMON = """\
MonitoringType: QueueAccounting
QueueManager: 'QMC'
IntervalStartDate: '2026-02-02'
IntervalStartTime: '07.00.00'
IntervalEndDate: '2026-02-02'
IntervalEndTime: '07.30.00'
ApplicationName: 'app'
ConnectionId: x'414d5143514d43'
ObjectCount: 1
QueueAccounting: 0
  QueueName: 'APP.Q'
  QueueType: Local
  PutCount: [1, 2]
  PutFailCount: 0
  Put1Count: [0, 0]
  PutBytes: [10, 20]
MonitoringType: QueueAccounting
QueueManager: 'QMC'
IntervalStartDate: '2026-02-02'
IntervalStartTime: '07.30.00'
IntervalEndDate: '2026-02-02'
IntervalEndTime: '08.00.00'
ApplicationName: 'app'
ConnectionId: x'414d5143514d43'
ObjectCount: 1
QueueAccounting: 0
  QueueName: 'APP.Q'
  QueueType: Local
  PutCount: [3]
  PutFailCount: 0
"""


def _bad_landing(landing: Path) -> None:
    day = f"{BAD_DAY}/QMC"
    good_channel = ("CLUSQMGR(QMB)", "CHANNEL(TO.QMB)", "CLUSTER(CL1)", "CLWLHINT(NONE)", "STATUS(RUNNING)")
    write(landing, f"{day}/config_060000.mqsc", runmqsc(
        "QMC",
        ("DISPLAY CLUSQMGR(*) ALL", [
            rec(CLUSQMGR_MSG, *good_channel),  # an attribute this MQ level does not know: kept
            rec(CLUSQMGR_MSG, "CLUSQMGR(QMD)", "CHANNEL(TO.QMD)", "CLUSTER(CL1)", "CONNAME(qmd.example.com(1414)",
                "STATUS(RUNNING)"),  # unbalanced parenthesis
            rec(CLUSQMGR_MSG, "CLUSQMGR(QME)", "CHANNEL(TO.QME)", "CLUSTER(CL1)", "STATUS(INACTIVE)"),
        ])))
    full = chstatus_capture("QMC", "RUNNING")
    cut = full.index("CONNAME(") + len("CONNAME(qmb.ex")
    write(landing, f"{day}/chstatus_060000.mqsc", full[:cut])  # the capture was cut off mid-record
    write(landing, f"{day}/puts.csv", "\n".join([
        PUT_HEADER, put_row(1).replace("QMD", "QMC").replace("2026-01-06", BAD_DAY),
        put_row(2, token="04" + "0" * 60 + "G1").replace("QMD", "QMC").replace("2026-01-06", BAD_DAY)]) + "\n")
    # (bad hex token in the second; both put on the folder's own date, or the date check quarantines them)
    sample = (SAMPLES / "2026-11-20" / "QM5" / "xmitq_153000.dmpmqmsg").read_text().splitlines()
    first_x = next(i for i, line in enumerate(sample) if line.startswith("X "))
    sample[first_x] = "X " + sample[first_x][2:-2] + "ZZ"  # bad hex in the first message's data
    write(landing, f"{day}/xmitq_153000.dmpmqmsg", "\n".join(sample) + "\n")
    write(landing, f"{day}/accounting.amqsmon", AMQSMON)
    write(landing, f"{day}/notes.txt", "capture job notes: nothing to see\n")  # no known format
    write(landing, f"{day}/config_256000.mqsc", config_capture("QMC", 50, ["APP.Q"]))  # no such time
    write(landing, f"{day}/chstatus_080000.mqsc", "ssh: connect to host qmc port 22: No route to host\n")
    write(landing, f"{day}/config_090000.mqsc", config_capture("QMX", 50, ["APP.Q"]))  # another QM's capture
    write(landing, f"{BAD_DAY}/stray.mqsc", config_capture("QMC", 50, []))  # not in a queue manager folder


def test_every_kind_of_bad_input_is_quarantined_and_the_run_succeeds(arrivals):
    assert arrivals["cli_rc"] == 0
    out = arrivals["cli_out"]
    assert f"{BAD_DAY}/QMC/notes.txt" in out and "total (15 files)" in out

    quarantine = {(r["source_file"].split("/", 1)[1], r["level"], r["reason"]) for r in arrivals["bad_quarantine"]}
    expected = {
        ("QMC/config_060000.mqsc", "record", "unbalanced parenthesis"),
        ("QMC/chstatus_060000.mqsc", "record", "record truncated at end of file"),
        ("QMC/puts.csv", "record", "bad hex in accounting_token"),
        ("QMC/xmitq_153000.dmpmqmsg", "record", "bad hex in message data"),
        ("QMC/accounting.amqsmon", "record", "PutCount is not an int list"),
        ("QMC/notes.txt", "file", "no known format"),
        ("QMC/config_256000.mqsc", "file", "bad capture time in file name 'config_256000.mqsc'"),
        ("QMC/chstatus_080000.mqsc", "file", "not runmqsc output"),
        ("QMC/config_090000.mqsc", "file", "capture is of queue manager QMX"),
        ("stray.mqsc", "file", "not in a queue manager folder"),
    }
    for source, level, reason in expected:
        assert any(s == source and lv == level and r.startswith(reason) for s, lv, r in quarantine), \
            (source, reason, quarantine)
    assert len(quarantine) == len(expected)

    log = {r["source_file"].split("/", 1)[1]: r for r in arrivals["bad_log"]}
    assert all(r["records_read"] == r["records_accepted"] + r["records_quarantined"] for r in log.values())
    config_log = log["QMC/config_060000.mqsc"]
    assert (config_log["records_accepted"], config_log["records_quarantined"]) == (2, 1)
    assert log["QMC/notes.txt"]["status"] == "rejected" and log["QMC/notes.txt"]["records_quarantined"] == 1
    # what could be read was kept: the unknown attribute, the good put, the other browsed messages
    [hint] = [r for r in arrivals["bad_objects"] if "CLWLHINT" in dict(r["attrs"])]
    assert dict(hint["attrs"])["CLWLHINT"] == "NONE" and hint["object_key"] == "CLUSQMGR|QMB|TO.QMB|CL1"
    assert arrivals["bad_counts"] == {"bronze.put_records": 1, "bronze.queue_accounting": 1,
                                      "bronze.xmitq_messages": len(FACTS["browse_QM5_CLUS.XMITQ.QM_153000"]) - 1}
    # a capture with a quarantined record closes nothing: both are marked incomplete
    assert arrivals["bad_incomplete"] == 2
