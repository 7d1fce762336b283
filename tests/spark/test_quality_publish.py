"""The quality gate with real Spark, Delta and Great Expectations: a good run is published, a broken one is
blocked and gold keeps its last good version; `clwl query` reads what Spark published without a JVM."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from clwl.lake.door import GOLD_TABLES, Lake
from spark.config import PipelineConfig

pytestmark = pytest.mark.spark

DAY = dt.date(2026, 11, 20)
DAY2 = dt.date(2026, 11, 21)
GOLD = tuple(t for t in GOLD_TABLES if t not in ("trend_facts", "queue_depth"))  # the tables gold_frames publishes

RR_SCHEMA = (
    "run_date date, sending_qmgr string, msg_id string, put_time timestamp, queue string, target_qmgr string, "
    "bind string, length long, qmgr string, channel string, xmitq string, path string, decided_by string, "
    "reallocatable boolean, not_reallocatable_reason string, trace string, error string, reason_code int, "
    "config_time timestamp, reallocations int, final_qmgr string, final_channel string, final_xmitq string, "
    "held boolean, held_from timestamp, released_at timestamp, delivered_at timestamp, hold_state string, "
    "stay_reason string, stay_detail string, observed_qmgr string, observed_xmitq string, agrees boolean, "
    "profile string"
)
SM_SCHEMA = (
    "run_date date, sending_qmgr string, msg_id string, queue string, qmgr string, channel string, xmitq string, "
    "channel_state string, held_from timestamp, released_at timestamp, age_seconds long, why string, "
    "detail string, observed_on_xmitq boolean"
)
DI_SCHEMA = (
    "run_date date, sending_qmgr string, queue string, interval_start timestamp, interval_end timestamp, "
    "qmgr string, expected long, observed long, deviation double, p_value double, verdict string, "
    "explanation string, source string, channel string"
)
RS_SCHEMA = (
    "run_id string, run_date date, started_at timestamp, finished_at timestamp, rows_read long, rows_accepted long, "
    "rows_quarantined long, messages_replayed long, messages_stuck long, distribution_unexpected long, traced long, "
    "agreed long, disagreed long, table_versions map<string,long>, status string, validation_result string"
)
EV_SCHEMA = "msg_id string, sending_qmgr string, queue string, put_time timestamp, bind string, source string"
SCTQ = "SYSTEM.CLUSTER.TRANSMIT.QUEUE"


def at(day: dt.date, hh: int, mm: int, ss: int = 0) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=dt.timezone.utc)


def replay_rows(day: dt.date) -> list[tuple]:
    """12 messages: 10 from QM1 (one unroutable, one bound on open, one re-allocated), 2 from QM2."""
    cfg = at(day, 6, 0)

    def msg(n, sender, t, qmgr, channel, path, *, queue="APP.ORDERS", bind="notfixed", realloc=True,
            reason=None, error=None, code=None, reallocations=0, final=None, final_ch=None, held=False,
            observed=None):
        final = final or qmgr
        final_ch = final_ch or channel
        agrees = None if observed is None else observed == final
        xmitq = None if path in (None, "local") else SCTQ
        waiting = dict(held_from=t, hold_state="STOPPED",
                       stay_reason="still-most-favourable" if realloc else "not-reallocatable") if held else {}
        return (day, sender, f"{sender}-{day:%m%d}-{n:03d}", t, queue, None, bind, 100 + n, qmgr, channel, xmitq, path,
                None if error else "12", None if error else realloc, reason, None if error else f"12:={qmgr}",
                error, code, cfg, reallocations, None if error else final, None if error else final_ch,
                None if error or path == "local" else SCTQ, held, waiting.get("held_from"), None,
                None if error or held else t, waiting.get("hold_state"), waiting.get("stay_reason"),
                reason if held and not realloc else None, observed, None, agrees, "default")

    return [
        msg(1, "QM1", at(day, 10, 0, 5), "QM1", None, "local", observed="QM1"),
        msg(2, "QM1", at(day, 10, 0, 10), "QM2", "TO.QM2", "cluster", observed="QM2"),
        msg(3, "QM1", at(day, 10, 0, 15), "QM3", "TO.QM3", "cluster", held=True),
        msg(4, "QM1", at(day, 10, 0, 20), "QM4", "TO.QM4", "cluster", observed="QM4"),
        msg(5, "QM1", at(day, 10, 0, 25), "QM2", "TO.QM2", "cluster", observed="QM2"),
        msg(6, "QM1", at(day, 10, 0, 30), "QM3", "TO.QM3", "cluster", bind="open", realloc=False,
            reason="bind-on-open", held=True),
        msg(7, "QM1", at(day, 10, 5), "QM2", "TO.QM2", "cluster", observed="QM2"),
        msg(8, "QM1", at(day, 10, 6), "QM4", "TO.QM4", "cluster", observed="QM2"),
        msg(9, "QM1", at(day, 10, 10), "QM3", "TO.QM3", "cluster", reallocations=1, final="QM2", final_ch="TO.QM2"),
        msg(10, "QM1", at(day, 10, 20), None, None, None, queue="APP.NOPE", error="MQRC_UNKNOWN_OBJECT_NAME",
            code=2085),
        msg(11, "QM2", at(day, 10, 30), "QM2", None, "local"),
        msg(12, "QM2", at(day, 11, 30), "QM1", "TO.QM1", "cluster"),
    ]


def stuck_rows(day: dt.date) -> list[tuple]:
    return [
        (day, "QM1", f"QM1-{day:%m%d}-003", "APP.ORDERS", "QM3", "TO.QM3", SCTQ, "STOPPED", at(day, 10, 0, 15), None,
         50385, "still-most-favourable", "QM3 keeps the highest CLWLRANK (5) among the remaining channels", True),
        (day, "QM1", f"QM1-{day:%m%d}-006", "APP.ORDERS", "QM3", "TO.QM3", SCTQ, "STOPPED", at(day, 10, 0, 30), None,
         50370, "not-reallocatable", "bind-on-open: AccountingToken is all zeros", True),
    ]


def distribution_rows(day: dt.date) -> list[tuple]:
    """10:00-11:00 on APP.ORDERS: QM1's observed destinations (the 6 messages with one) and receiver accounting
    for all senders (the 8 messages delivered; the 2 held behind TO.QM3 are not)."""
    s, e = at(day, 10, 0), at(day, 11, 0)

    def row(sender, qmgr, expected, observed, p, verdict, why, source):
        return (day, sender, "APP.ORDERS", s, e, qmgr, expected, observed, float(observed - expected), p, verdict,
                why, source, None)

    outage = "channel TO.QM3 STOPPED from 10:00:12: 2 messages held on SYSTEM.CLUSTER.TRANSMIT.QUEUE"
    few = "fewer than 20 messages: no test"
    return [
        row("QM1", "QM1", 1, 1, None, "insufficient data", few, "observed_destination"),
        row("QM1", "QM2", 3, 4, None, "insufficient data", few, "observed_destination"),
        row("QM1", "QM4", 2, 1, None, "insufficient data", few, "observed_destination"),
        row("*", "QM1", 1, 1, 0.02, "expected", "local instance preferred (CLWLUSEQ)", "accounting"),
        row("*", "QM2", 5, 9, 0.02, "unexpected", "QM2 received more than CLWLWGHT(80) explains", "accounting"),
        row("*", "QM3", 0, 0, 0.02, "expected", outage, "accounting"),
        row("*", "QM4", 2, 2, 0.02, "expected", "CLWLWGHT(50)", "accounting"),
    ]


def summary_rows(day: dt.date, run_id: str, replayed: int = 12, stuck: int = 2, unexpected: int = 1,
                 traced: tuple[int, int, int] = (6, 5, 1)) -> list[tuple]:
    """traced, agreed, disagreed: replay_rows has 6 messages with an observed destination (1, 2, 4, 5, 7, 8), of
    which only 8's (QM2, replayed to QM4) is not the replay's."""
    return [(run_id, day, at(day, 23, 59), None, 14, 12, 2, replayed, stuck, unexpected, *traced,
             {"silver.message_events": 0}, "published", "passed")]


def gold_frames(spark, day: dt.date, run_id: str) -> dict:
    return {
        "routing_replay": spark.createDataFrame(replay_rows(day), RR_SCHEMA),
        "stuck_messages": spark.createDataFrame(stuck_rows(day), SM_SCHEMA),
        "distribution": spark.createDataFrame(distribution_rows(day), DI_SCHEMA),
        "run_summary": spark.createDataFrame(summary_rows(day, run_id), RS_SCHEMA),
    }


ARROW_TYPES = {"string": "string", "date": "date32", "timestamp": "timestamp_utc", "long": "int64", "int": "int32",
               "boolean": "bool_", "double": "float64", "map<string,long>": "map"}


def arrow_table(rows: list[tuple], ddl: str):
    """A pyarrow table from rows and a Spark DDL schema (the types these tests use)."""
    import pyarrow as pa

    fields = []
    for part in ddl.split(", "):
        name, kind = part.split(" ", 1)
        t = ARROW_TYPES[kind]
        fields.append(pa.field(name, pa.timestamp("us", tz="UTC") if t == "timestamp_utc"
                               else pa.map_(pa.string(), pa.int64()) if t == "map" else getattr(pa, t)()))
    schema = pa.schema(fields)
    return pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema)


def write_delta(path: str, rows: list[tuple], ddl: str, partition_by: list[str] | None = None) -> None:
    """Write a Delta table with the deltalake package: quicker than a Spark job, and any Delta writer will do
    for the silver inputs and the report's gold tables."""
    import deltalake

    deltalake.write_deltalake(path, arrow_table(rows, ddl), partition_by=partition_by, mode="append")


def write_silver(cfg: PipelineConfig, day: dt.date) -> None:
    events = [(r[2], r[1], r[4], r[3], r[6], "csv") for r in replay_rows(day)]
    write_delta(cfg.table_path("silver", "message_events"), events, EV_SCHEMA)
    write_delta(cfg.table_path("silver", "quarantine"),
                [("landing/puts/QM1.csv", 7, "bad timestamp '25:00'"), ("landing/puts/QM1.csv", 9, "unknown bind 'x'")],
                "source_file string, position long, reason string")
    write_delta(cfg.table_path("silver", "config_history"),
                [("QM1", "CLUSQMGR", "QM2", at(day, 6, 0), None),
                 ("QM1", "CLUSQMGR", "QM3", at(day, 6, 0), at(day, 9, 0))],
                "observing_qmgr string, kind string, name string, valid_from timestamp, valid_to timestamp")


def rows_of(cfg: PipelineConfig, table: str) -> list[dict]:
    """A gold table's rows, read with deltalake (no Spark job; and it reads what Spark wrote)."""
    import deltalake

    rows = deltalake.DeltaTable(cfg.table_path("gold", table)).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def latest_version(path: str) -> int:
    import deltalake

    return deltalake.DeltaTable(path).version()


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate") / "lake"
    root.mkdir()
    return root


def test_good_run_is_published_and_a_broken_one_is_blocked(spark, lake):
    from pyspark.sql import functions as F

    from spark.publish import PublishRequest, publish

    cfg = PipelineConfig(lake=lake)
    write_silver(cfg, DAY)
    # An earlier run of another date is already published: publishing DAY must replace only DAY's partition.
    write_delta(cfg.table_path("gold", "run_summary"), summary_rows(DAY2, "run-day2", 0, 0, 0, (0, 0, 0)), RS_SCHEMA,
                partition_by=["run_date"])

    # 1. A good run: validated, then all four tables written; run_summary records the versions.
    good = publish(spark, Lake(cfg.lake), DAY, "run-good", PublishRequest(gold_frames(spark, DAY, "run-good")))
    assert good.published, good.failures
    assert good.failures == []
    # A new gold table's version 0 is the empty table with its constraints (spark.tables.create_empty); the
    # run_summary an earlier version made (version 0) gains what it can before the publish: keys_not_null (1) and
    # the change data feed (2); not counts_not_negative, which names columns that table has not got yet (the
    # next run adds it).
    assert good.table_versions == {"gold.routing_replay": 1, "gold.stuck_messages": 1, "gold.distribution": 1,
                                   "gold.run_summary": 3}
    assert good.previous_versions == {"gold.routing_replay": None, "gold.stuck_messages": None,
                                      "gold.distribution": None, "gold.run_summary": 2}
    for t in GOLD:
        assert latest_version(cfg.table_path("gold", t)) == (3 if t == "run_summary" else 1)
    before = {t: rows_of(cfg, t) for t in GOLD}
    assert len(before["routing_replay"]) == 12
    for t in GOLD[:3]:
        assert {r["run_date"] for r in before[t]} == {DAY}
    assert sorted((r["run_id"], r["run_date"]) for r in before["run_summary"]) == [("run-day2", DAY2),
                                                                                   ("run-good", DAY)]
    summary = next(r for r in before["run_summary"] if r["run_id"] == "run-good")
    assert summary["status"] == "published"
    assert dict(summary["table_versions"]) == {"silver.message_events": 0, "gold.routing_replay": 1,
                                               "gold.stuck_messages": 1, "gold.distribution": 1}
    results = json.loads((lake / "validation" / "run-good" / "routing_replay.json").read_text())
    assert results["success"] is True and results["failed"] == []
    assert {x["check"] for x in results["extra_checks"]} >= {"run_date_is_the_run_date",
                                                              "row_count_equals_silver_message_events"}
    assert json.loads((lake / "validation" / "run-good" / "silver.message_events.json").read_text())["success"]

    # 2. A broken run of DAY: a duplicated message, a step that does not exist, totals that do not add up.
    frames = gold_frames(spark, DAY, "run-bad")
    rr = frames["routing_replay"]
    frames["routing_replay"] = rr.withColumn(
        "decided_by", F.when(F.col("msg_id").endswith("-004"), F.lit("13")).otherwise(F.col("decided_by"))
    ).unionByName(rr.where(F.col("msg_id").endswith("-012")))  # 11:30, outside the distribution's interval
    del frames["run_summary"], frames["stuck_messages"]  # a partial publish is gated the same way (and quicker)
    frames["distribution"] = frames["distribution"].withColumn(  # 7 expected for 6 observed messages
        "expected", F.when(F.col("qmgr") == "QM4", F.col("expected") + 1).otherwise(F.col("expected"))
    ).withColumn("deviation", (F.col("observed") - F.col("expected")).cast("double"))
    bad = publish(spark, Lake(cfg.lake), DAY, "run-bad", PublishRequest(frames, validate_silver=False))  # silver passed above

    assert not bad.published
    text = "\n".join(bad.failures)
    assert "gold.routing_replay: expect_compound_columns_to_be_unique (run_date, msg_id)" in text
    assert "gold.routing_replay: expect_column_values_to_be_in_set decided_by: 1 unexpected" in text
    assert '"13"' in text  # the offending value is quoted
    assert "gold.routing_replay: row_count_equals_silver_message_events: 13 rows" in text
    assert "gold.distribution: expected_totals_reconcile_with_replay expected: 1 intervals" in text
    assert "QM1/APP.ORDERS/observed_destination from 2026-11-20T10:00:00" in text
    assert {f.split(":")[0] for f in bad.failures} == {"gold.routing_replay", "gold.distribution"}

    # Gold is untouched: same versions, same rows, for both run dates.
    for t in GOLD:
        assert latest_version(cfg.table_path("gold", t)) == (3 if t == "run_summary" else 1)
        assert rows_of(cfg, t) == before[t]
    assert bad.previous_versions == {"gold.routing_replay": 1, "gold.distribution": 1}

    # The reader finds the failed expectations, with counts and examples, beside the passing tables' results.
    folder = lake / "validation" / "run-bad"
    assert bad.result_path == folder
    rr_json = json.loads((folder / "routing_replay.json").read_text())
    assert rr_json["success"] is False
    failed_types = {r["expectation_config"]["type"] for r in rr_json["results"] if not r["success"]}
    assert failed_types == {"expect_compound_columns_to_be_unique", "expect_column_values_to_be_in_set"}
    in_set = next(r for r in rr_json["results"] if not r["success"]
                  and r["expectation_config"]["type"] == "expect_column_values_to_be_in_set")
    assert in_set["result"]["unexpected_count"] == 1 and in_set["result"]["partial_unexpected_list"] == ["13"]
    di_json = json.loads((folder / "distribution.json").read_text())
    totals = next(x for x in di_json["extra_checks"] if x["check"] == "expected_totals_reconcile_with_replay")
    assert totals["success"] is False and totals["observed"]["intervals"] == 1  # QM1's, accounting stays <= 10
    publish_json = json.loads((folder / "_publish.json").read_text())
    assert publish_json["published"] is False and publish_json["failures"] == bad.failures

    # 3. clwl query answers on what Spark published, without pyspark (and so without a JVM).
    code = (
        "import sys, io, contextlib\n"
        "from clwl.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main(['query', 'SELECT qmgr, count(*) AS n FROM routing_replay WHERE error IS NULL GROUP BY qmgr "
        f"ORDER BY qmgr', '--lake', {str(lake)!r}, '--json'])\n"
        "assert rc == 0, rc\n"
        "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules\n"
        "print(out.getvalue(), end='')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    assert got == [{"qmgr": "QM1", "n": 2}, {"qmgr": "QM2", "n": 4}, {"qmgr": "QM3", "n": 3}, {"qmgr": "QM4", "n": 2}]


def test_validate_table_names_each_failed_check(spark):
    """validate_table on its own: GX expectations and extra checks in one outcome, nothing written by GX."""
    from pyspark.sql import functions as F

    from spark.cross_checks import check_run_date
    from spark.quality import validate_table

    df = spark.createDataFrame(stuck_rows(DAY), SM_SCHEMA)  # passes: the publish test publishes it
    broken = df.withColumn("why", F.lit("stuck")).withColumn("released_at", F.lit(at(DAY, 9, 0)))
    out = validate_table(broken, Path(__file__).parents[2] / "expectations" / "gold.stuck_messages.json",
                         [check_run_date(DAY2)])
    assert not out.success and out.table == "gold.stuck_messages"
    assert sorted(f.split(":")[0] for f in out.failed) == [
        "expect_column_pair_values_a_to_be_greater_than_b released_at,held_from",
        "expect_column_values_to_be_in_set why",
        "run_date_is_the_run_date run_date",
    ]
    assert any('e.g. ["stuck", "stuck"]' in f for f in out.failed)
    assert not (Path.cwd() / "gx").exists()  # the ephemeral context wrote no project folder
    json.dumps(out.result_json)  # the result is JSON as it stands


def test_a_failed_write_puts_back_what_the_publish_already_wrote(spark, tmp_lake):
    """Validation passed but the second table cannot be written (its published schema clashes): the run date of
    the first table is put back as it was, so gold never mixes two runs."""
    import deltalake

    from spark.publish import PublishError, _write_all

    cfg = PipelineConfig(lake=tmp_lake)
    replay_path = cfg.table_path("gold", "routing_replay")
    old = [r for r in replay_rows(DAY) if r[2].endswith(("-001", "-002"))]
    write_delta(replay_path, old, RR_SCHEMA, partition_by=["run_date"])
    write_delta(cfg.table_path("gold", "stuck_messages"), [(DAY, "QM1", "x", "7 days")],
                "run_date date, sending_qmgr string, msg_id string, age_seconds string", partition_by=["run_date"])
    frames = {"routing_replay": spark.createDataFrame(replay_rows(DAY), RR_SCHEMA),
              "stuck_messages": spark.createDataFrame(stuck_rows(DAY), SM_SCHEMA)}
    with pytest.raises(PublishError, match=r"writing gold.stuck_messages failed .*put back gold.routing_replay"):
        _write_all(spark, Lake(cfg.lake), DAY, frames, {"gold.routing_replay": 0, "gold.stuck_messages": 0})
    assert deltalake.DeltaTable(replay_path).version() == 2  # written (1), then put back (2)
    assert sorted(r["msg_id"] for r in rows_of(cfg, "routing_replay")) == ["QM1-1120-001", "QM1-1120-002"]
    assert rows_of(cfg, "stuck_messages") == [{"run_date": DAY, "sending_qmgr": "QM1", "msg_id": "x",
                                               "age_seconds": "7 days"}]


def test_small_tables_are_validated_in_pandas_with_the_results_spark_gives(spark, monkeypatch, tmp_path):
    """A small frame goes through GX's pandas engine (its unexpected_rows queries through one Spark query): the
    verdicts, counts and example values are those of GX's Spark engine on the same frame, passing or failing; a
    frame with a NaN stays on Spark (pandas cannot tell NaN from null)."""
    from pyspark.sql import functions as F

    from spark import quality
    from spark.cross_checks import check_run_date

    def results(outcome) -> list[tuple]:
        return [(r["expectation_config"]["type"],
                 json.dumps({k: v for k, v in r["expectation_config"]["kwargs"].items() if k != "batch_id"},
                            sort_keys=True),
                 r["success"], json.dumps(r.get("result"), sort_keys=True, default=str))
                for r in outcome.result_json["results"]]

    # A Delta read, as publish_stage's frames are: Spark's size estimate of it is its Parquet files' (a frame made
    # with createDataFrame has no estimate and stays on Spark).
    write_delta(str(tmp_path / "distribution"), distribution_rows(DAY), DI_SCHEMA)
    dist = spark.read.format("delta").load(str(tmp_path / "distribution"))
    frames = {
        "passing": dist,
        # one in-set failure (a verdict GX must quote), one unexpected_rows failure (deviation), one null
        "failing": dist.withColumn("verdict", F.when(F.col("qmgr") == "QM2", F.lit("odd")).otherwise(F.col("verdict")))
                       .withColumn("deviation", F.when(F.col("qmgr") == "QM4", F.lit(7.0)).otherwise(F.col("deviation")))
                       .withColumn("queue", F.when(F.col("qmgr") == "QM1", F.lit(None)).otherwise(F.col("queue"))),
    }
    for name, df in frames.items():
        quality.forget_frames()
        local = quality.validate_table(df, "gold.distribution", [check_run_date(DAY)], cache=False)
        monkeypatch.setattr(quality, "SMALL_TABLE_BYTES", -1)  # nothing is small: GX's Spark engine
        quality.forget_frames()
        remote = quality.validate_table(df, "gold.distribution", [check_run_date(DAY)], cache=False)
        monkeypatch.undo()
        assert (local.result_json["engine"], remote.result_json["engine"]) == ("pandas", "spark"), name
        assert results(local) == results(remote), name
        assert local.failed == remote.failed and local.success == remote.success, name
        assert local.result_json["extra_checks"] == remote.result_json["extra_checks"], name
    assert not local.success and len(local.failed) == 3
    assert any('e.g. ["odd", "odd"]' in f for f in local.failed)  # two QM2 rows
    assert any("unexpected_rows_expectation: deviation" in f and "2 unexpected rows" in f for f in local.failed)

    quality.forget_frames()
    nan = dist.withColumn("p_value", F.when(F.col("qmgr") == "QM3", F.lit(float("nan"))).otherwise(F.col("p_value")))
    out = quality.validate_table(nan, "gold.distribution", cache=False)
    assert out.result_json["engine"] == "spark"
    # In Spark a NaN is above every number: p_value NaN is outside [0, 1] (pandas would have skipped it as null).
    assert any(f.startswith("expect_column_values_to_be_between p_value") for f in out.failed)
