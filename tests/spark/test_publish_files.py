"""Publishing a staged run date by committing the staged files to gold (spark/delta_commits.py).

A gold table holds two run dates; a staging table holds new rows of one of them. After
`replace_partition_with_files`, gold must read (in Spark, with data skipping, and in deltalake) as if Spark had
replaced that date with the staged rows: the other date untouched, the staged rows exactly, statistics that skip
correctly; and Spark must go on writing, restoring and rolling back the table as before. Where such a commit
would not be complete or true (another schema, an append-only table, a log cleaned up), the
function declines (None) and publish writes the rows with Spark, as before. A first publish creates the gold
table by such a commit, shaped as Spark's first write would shape it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from spark.delta_commits import replace_partition_with_files
from spark.publish import write_run_date

pytestmark = pytest.mark.spark

D1, D2 = dt.date(2026, 11, 19), dt.date(2026, 11, 20)
# Long ids, as MQ's are (48 hex digits): Delta truncates their statistics to 32 characters, and the max of a
# truncated value carries a tie-breaker character; the commit must keep the staged statistics as Spark wrote them.
IDS = [f"414D5120514D{n:02d}2020202020202020{n:016X}" for n in range(1, 41)]


def _frame(spark, day: dt.date, tag: str, ids=IDS):
    rows = [(day, f"QM{1 + i % 3}", m, f"{tag}-{i}", i) for i, m in enumerate(ids)]
    return spark.createDataFrame(rows, "run_date date, sending_qmgr string, msg_id string, note string, n int")


def _write(df, path: Path, day: dt.date, options=None) -> None:
    write_run_date(df.repartition(3), str(path), day, options)


def _rows(spark, path: Path, version: int | None = None, where: str | None = None) -> list[tuple]:
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    df = reader.load(str(path))
    if where:
        df = df.where(where)
    return sorted(tuple(r) for r in df.collect())


def _version(path: Path) -> int:
    from deltalake import DeltaTable

    return DeltaTable(str(path)).version()


@pytest.fixture
def lake(spark, tmp_path):
    """gold with both dates (run 1), staging with D2 of run 2 (other notes, one message fewer)."""
    gold, staging = tmp_path / "gold" / "t", tmp_path / "staging" / "t"
    stats = {"delta.dataSkippingStatsColumns": "sending_qmgr,msg_id"}
    _write(_frame(spark, D1, "run1"), gold, D1, stats)
    _write(_frame(spark, D2, "run1"), gold, D2)
    _write(_frame(spark, D1, "staged-other-date"), staging, D1, stats)
    _write(_frame(spark, D2, "run2", IDS[1:]), staging, D2)
    return gold, staging


def test_gold_takes_the_staged_files_of_the_date_and_reads_as_a_spark_write_would(spark, lake):
    gold, staging = lake
    before = _version(gold)
    d1_before = _rows(spark, gold, where=f"run_date = '{D1}'")
    staged = _rows(spark, staging, where=f"run_date = '{D2}'")

    version = replace_partition_with_files(str(gold), str(staging), _version(staging), "run_date", D2.isoformat())

    assert version == before + 1 == _version(gold)
    assert _rows(spark, gold, where=f"run_date = '{D2}'") == staged  # exactly the staged rows
    assert _rows(spark, gold, where=f"run_date = '{D1}'") == d1_before  # the other date untouched
    assert all(r[3].startswith("run2") for r in staged) and len(staged) == len(IDS) - 1
    # deltalake (clwl query, the report) reads the same rows
    from deltalake import DeltaTable

    rows = DeltaTable(str(gold)).to_pyarrow_table(filters=[("run_date", "=", D2)]).to_pylist()
    assert sorted(r["note"] for r in rows) == sorted(r[3] for r in staged)
    # data skipping on the staged statistics answers right: every message found by its id, the gone one not
    for m in (IDS[1], IDS[17], IDS[-1]):
        assert [r[2] for r in _rows(spark, gold, where=f"run_date = '{D2}' AND msg_id = '{m}'")] == [m]
    assert _rows(spark, gold, where=f"run_date = '{D2}' AND msg_id = '{IDS[0]}'") == []
    # the commit: the staged files' statistics as Spark wrote them (truncated max with its tie-breaker), new
    # names in gold, hard links of the staged files (no bytes copied), old files removed
    actions = [json.loads(line) for line in
               (gold / "_delta_log" / f"{version:020d}.json").read_text(encoding="utf-8").splitlines()]
    adds = [a["add"] for a in actions if "add" in a]
    staged_adds = {a["add"]["size"]: a["add"] for p in sorted((staging / "_delta_log").glob("*.json"))
                   for a in map(json.loads, p.read_text(encoding="utf-8").splitlines())
                   if "add" in a and a["add"]["partitionValues"] == {"run_date": D2.isoformat()}}
    assert adds and all(a["stats"] == staged_adds[a["size"]]["stats"] for a in adds)
    assert any("\u007f" in json.loads(a["stats"])["maxValues"]["msg_id"] for a in adds)
    assert all(os.stat(gold / a["path"]).st_nlink == 2 for a in adds)
    assert {a["remove"]["partitionValues"]["run_date"] for a in actions if "remove" in a} == {D2.isoformat()}
    info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
    assert info["operationMetrics"]["numOutputRows"] == str(len(IDS) - 1)


def test_spark_writes_restores_and_rolls_back_after_such_a_commit(spark, lake):
    gold, staging = lake
    published = _version(gold)
    run1 = _rows(spark, gold)
    version = replace_partition_with_files(str(gold), str(staging), _version(staging), "run_date", D2.isoformat())
    after = _rows(spark, gold)
    # a Spark write of the other date on top, then RESTORE (settle_gold) to the version before both
    _write(_frame(spark, D1, "run3"), gold, D1)
    assert _rows(spark, gold, where=f"run_date = '{D2}'") == _rows(spark, gold, version, f"run_date = '{D2}'")
    from delta.tables import DeltaTable

    DeltaTable.forPath(spark, str(gold)).restoreToVersion(published)
    assert _rows(spark, gold) == run1
    DeltaTable.forPath(spark, str(gold)).restoreToVersion(version)
    assert _rows(spark, gold) == after
    # the staged files may go (staging rewritten, vacuumed): gold's links keep their rows
    for p in staging.rglob("*.parquet"):
        p.unlink()
    assert _rows(spark, gold) == after


@pytest.mark.parametrize("case", ["another schema", "append-only", "log cleaned up"])
def test_declines_where_a_file_commit_would_not_be_a_true_write(spark, lake, case):
    from deltalake import DeltaTable
    from pyspark.sql import functions as F

    gold, staging = lake
    if case == "another schema":
        _write(_frame(spark, D2, "run2").withColumn("extra", F.lit("x")), staging, D2)
    elif case == "append-only":
        spark.sql(f"ALTER TABLE delta.`{gold}` SET TBLPROPERTIES ('delta.appendOnly' = 'true')")
    elif case == "log cleaned up":  # a checkpoint, and the commits before it removed (Delta's log retention)
        DeltaTable(str(staging)).create_checkpoint()
        for p in (staging / "_delta_log").glob("*.json"):
            p.unlink()
    before, files = _version(gold), sorted(gold.rglob("*.parquet"))
    assert replace_partition_with_files(str(gold), str(staging), _version(staging), "run_date",
                                        D2.isoformat()) is None
    assert _version(gold) == before and sorted(gold.rglob("*.parquet")) == files  # nothing written


def test_a_first_publish_creates_the_gold_table_as_spark_would(spark, lake):
    """No gold table yet: version 0 holds the staged files of the date, with staging's schema, partitioning,
    properties (the statistics columns) and protocol, and Spark writes to it as to a table it created."""
    from deltalake import DeltaTable

    _, staging = lake
    gold = staging.parent.parent / "gold" / "new"
    version = replace_partition_with_files(str(gold), str(staging), _version(staging), "run_date", D2.isoformat())
    assert version == 0
    assert _rows(spark, gold) == _rows(spark, staging, where=f"run_date = '{D2}'")
    ours, theirs = DeltaTable(str(gold)), DeltaTable(str(staging))
    assert ours.schema().to_json() == theirs.schema().to_json()
    assert ours.metadata().partition_columns == ["run_date"]
    assert ours.metadata().configuration == theirs.metadata().configuration
    assert ours.metadata().configuration["delta.dataSkippingStatsColumns"] == "sending_qmgr,msg_id"
    assert ours.protocol() == theirs.protocol()
    _write(_frame(spark, D1, "run3"), gold, D1)  # Spark's own write on top
    assert {r[0] for r in _rows(spark, gold)} == {D1, D2}


def test_a_commit_taken_meanwhile_fails_and_leaves_no_files(spark, lake, monkeypatch):
    import spark.delta_commits as commits

    gold, staging = lake
    files = sorted(gold.rglob("*.parquet"))
    monkeypatch.setattr(commits, "write_commit", lambda *a, **k: False)  # another writer took the version
    with pytest.raises(RuntimeError, match="committed by another writer"):
        replace_partition_with_files(str(gold), str(staging), _version(staging), "run_date", D2.isoformat())
    assert sorted(gold.rglob("*.parquet")) == files
