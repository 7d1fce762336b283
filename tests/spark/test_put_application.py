"""silver.message_events.application (issue 27 item 3): who put each message, by one rule.

The rule is clwl.analyses.incidents.application_of: the put file's optional ``application`` column when given, else for
a traced put the activity trace's ApplName, else the first field of an open handle of the form
``application:pid:handle`` (not a trace's connection id); each name stripped, a blank one skipped. The ingest
applies it as Spark columns (spark.ingest.message_events.application_column): the first test holds the two to
one table of cases, so they cannot drift apart.

The ingest test's landing is made by hand, one day of QM1 with the three sources:

- ``puts_app.csv`` has the column: ``billing-svc`` given beside the handle ``orders-api:2831:1`` (the column
  wins), an empty value beside ``orders-api:2831:2`` (the handle names ``orders-api``), an empty value beside
  the handle ``h7`` (no ``application:pid:handle`` form: no application);
- ``puts_plain.jsonl`` has no such column: the handle ``recon-job:77:3`` names ``recon-job``;
- ``QM1.2026-11-20.amqsact`` is tests/fixtures/amqsact_trace/notfixed_medium.amqsact: connection ``AMQCQM1 ...``
  with ``ApplicationName: 'payments'``, two MQPUTs on a handle whose first part is the connection (hex, not a
  name) and one MQPUT1 (no handle at all): ``payments`` for all three, from the trace.

bronze.put_records keeps the column as given (``billing-svc`` only). The same lake, then written back as the
previous layout left it (its two tables without the column), takes the column on the next ingest (a late put
file of the same day, ``late-batch`` given): the column is added where the registry has it and the day's events
are rebuilt with their applications, the files read before included (their bronze rows keep a null, so
``billing-svc`` gives way to the handle's ``orders-api`` until puts_app.csv is read again).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clwl.analyses.incidents import application_of
from spark.config import REPO_ROOT, PipelineConfig
from spark.ingest.message_events import PY_SPACES

DAY = "2026-11-20"
TRACE = REPO_ROOT / "tests" / "fixtures" / "amqsact_trace" / "notfixed_medium.amqsact"
TOKEN = "0431303031" + "00" * 26 + "06"
CONNECTION = "414D5143514D312020202020202020206B576B5420000701"  # the fixture's Correl_id
HEADER = ("put_time,sending_qmgr,queue,target_qmgr,bind,open_handle,group_id,logical_order,from_cluster_channel,"
          "pcf,length,persistent,accounting_token,msg_id,observed_qmgr,observed_channel,observed_xmitq")


def mid(n: int) -> str:
    return f"414D5120514D312020202020202020205A45396A{n:08X}"


def row(n: int, handle: str, application: str | None = None) -> str:
    fields = [f"2026-11-20T09:00:{n:02d}.000Z", "QM1", "CLUS.Q", "", "notfixed", handle, "", "false", "false",
              "false", "100", "true", TOKEN, mid(n), "", "", ""]
    return ",".join(fields + ([] if application is None else [application]))


def csv_with_column() -> str:
    return "\n".join([HEADER + ",application", row(1, "orders-api:2831:1", "billing-svc"),
                      row(2, "orders-api:2831:2", ""), row(3, "h7", "")]) + "\n"


def jsonl_without_column() -> str:
    return json.dumps(dict(zip(HEADER.split(","), row(4, "recon-job:77:3").split(","))), separators=(",", ":")) + "\n"


def quiet(_line: str) -> None:
    pass


def table(cfg: PipelineConfig, key: str) -> list[dict]:
    from clwl.lake.door import Lake

    return Lake(cfg.lake).rows(key).to_pylist()


def applications(cfg: PipelineConfig, key: str) -> dict[str, str | None]:
    return {r["msg_id"]: r["application"] for r in table(cfg, key)}


TRACED = {f"414D5120514D3120202020202020202000000000000000{n:02X}": "payments" for n in (1, 2, 3)}
EXPECTED = {mid(1): "billing-svc", mid(2): "orders-api", mid(3): None, mid(4): "recon-job", **TRACED}


# -- the rule, in Python and in Spark ---------------------------------------------------------------------------

def test_the_listed_spaces_are_what_str_strip_removes():
    assert set(PY_SPACES) == {c for c in map(chr, range(0x110000)) if c.isspace()}


# (open_handle, the trace's ApplName, the put file's column): what application_of says is what Spark says
CASES = [
    ("orders-api:2831:1", None, None),
    ("orders-api:2831:1", None, "billing-svc"),
    ("orders-api:2831:1", "payments    ", None),
    ("orders-api:2831:1", "payments", "billing"),
    ("orders-api:2831:1", "   ", "  "),
    ("orders-api:2831:1", "", ""),
    (None, None, None),
    ("", None, None),
    ("h1", None, None),
    (":1:2", None, None),
    ("  :1:2", None, None),
    ("  orders-api :1:1", None, None),
    (f"{CONNECTION}:2:0.1", None, None),
    (f"{CONNECTION}:2:0.1", "payments", None),
    (f"{CONNECTION[:31]}:2", None, None),  # 31 hex digits: a name, not a connection id
    ("abcdef0123456789abcdef0123456789:1", None, None),
    (f" {CONNECTION} :1", None, None),
    (f"abc\n{CONNECTION}:1", None, None),
    (f"{CONNECTION}\n:1", None, None),
    (None, "payments ", None),
    (None, None, "billing"),
    ("x:1", None, "\u3000billing\u2028"),
    ("\u00a0app\u00a0:1", None, None),
    ("a:b:c", None, "\x1c"),
    ("Ünïcode-app:1:1", None, None),
    ("name with blanks:1:1", None, None),
    ("tab\tinside:1", "\t", "\n"),
    ("::", None, None),
    (":", "x", None),
]


@pytest.mark.spark
@pytest.mark.slow
def test_the_spark_rule_is_application_of(spark):
    from pyspark.sql import functions as F

    from spark.ingest.message_events import application_column

    df = spark.createDataFrame([(i, *c) for i, c in enumerate(CASES)],
                               "i int, open_handle string, traced string, application string")
    got = dict(df.select("i", application_column(F.col("application"), F.col("traced"), F.col("open_handle"))
                         .alias("a")).collect())
    want = {i: application_of(h, t, c) for i, (h, t, c) in enumerate(CASES)}
    assert got == want
    # the table holds every outcome: each source named, and none
    assert {"billing-svc", "payments", "orders-api", None} <= set(want.values())


# -- the ingest -------------------------------------------------------------------------------------------------

def landing_of(root: Path) -> Path:
    folder = root / DAY / "QM1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "puts_plain.jsonl").write_text(jsonl_without_column())
    shutil.copy(TRACE, folder / "QM1.2026-11-20.amqsact")
    (folder / "puts_app.csv").write_text(csv_with_column())
    return root


def drop_the_column(spark, cfg: PipelineConfig, key: str) -> None:
    """The table as a version before the column wrote it: the same rows, the column dropped. That version stored
    every put row in bronze too, and silver had none of the columns it now keeps for bronze's view
    (clwl.lake.put_records): bronze's files are given the view's rows back and lose the layout property."""
    import deltalake

    from clwl.lake.put_records import LAYOUT_PROPERTY
    from clwl.lake.registry import spec
    from spark.tables import path, read_table

    where = path(cfg, key)
    if key == "bronze.put_records":
        old = read_table(spark, cfg, key).drop("application")
        spark.sql(f"ALTER TABLE delta.`{where}` UNSET TBLPROPERTIES ('{LAYOUT_PROPERTY}')")
    else:
        old = spark.read.format("delta").load(where).drop("application", "application_given", "ingest_run_id")
    rows, schema = old.collect(), old.schema
    (spark.createDataFrame(rows, schema).write.format("delta").mode("overwrite")
     .option("overwriteSchema", "true").partitionBy(*spec(key).partition_by).save(where))
    assert "application" not in deltalake.DeltaTable(where).schema().to_arrow().names


@pytest.mark.spark
@pytest.mark.slow
def test_message_events_name_the_application_from_each_source_and_an_old_lake_takes_the_column(spark, tmp_path):
    """A fresh lake, then the same lake as the previous layout left it (bronze.put_records and
    silver.message_events without the column): a new put file of the same sender and day makes the ingest add
    the column where the registry has it (after observed_xmitq) and rebuild the day with its applications."""
    import deltalake

    from clwl.lake.registry import spec
    from spark.ingest import ingest
    from spark.tables import path

    landing = landing_of(tmp_path / "landing")
    cfg = PipelineConfig(lake=tmp_path / "lake", landing=landing)
    summary = ingest(cfg, spark=spark, progress=quiet)
    assert all(f.records_quarantined == 0 for f in summary.files), summary.files

    assert applications(cfg, "silver.message_events") == EXPECTED
    # bronze keeps the put file's column as given: only the one value written
    assert applications(cfg, "bronze.put_records") == {**dict.fromkeys(EXPECTED), mid(1): "billing-svc"}
    sources = {r["msg_id"]: r["source"] for r in table(cfg, "silver.message_events")}
    assert {sources[m] for m in TRACED} == {"activity_trace"} and sources[mid(4)] == "jsonl"

    # the previous layout, and a late file of the same day
    for key in ("bronze.put_records", "silver.message_events"):
        drop_the_column(spark, cfg, key)
    late = "\n".join([HEADER + ",application", row(5, "orders-api:2831:1", "late-batch")]) + "\n"
    (landing / DAY / "QM1" / "puts_late.csv").write_text(late)
    ingest(cfg, spark=spark, progress=quiet)
    for key in ("bronze.put_records", "silver.message_events"):
        assert deltalake.DeltaTable(path(cfg, key)).schema().to_arrow().names == list(spec(key).columns)
    # The files read before keep their bronze rows, written without the column (null): puts_app.csv's
    # billing-svc is gone until that file is read again, and its handle names orders-api meanwhile. The late
    # file's value is read.
    assert applications(cfg, "bronze.put_records") == {**dict.fromkeys(EXPECTED), mid(5): "late-batch"}
    assert applications(cfg, "silver.message_events") == {**EXPECTED, mid(1): "orders-api", mid(5): "late-batch"}
