"""The Delta-enabled session works end to end: a broken jar/Spark pairing fails here first."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spark.config import PipelineConfig

pytestmark = pytest.mark.spark

SCHEMA = "id INT, qmgr STRING, weight INT"
ORIGINAL = [(1, "QM1", 10), (2, "QM2", 20), (3, "QM3", 30)]
CHANGES = [(2, "QM2", 25), (4, "QM4", 40)]  # update id 2, insert id 4
AFTER_MERGE = [(1, "QM1", 10), (2, "QM2", 25), (3, "QM3", 30), (4, "QM4", 40)]


def _rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


def test_delta_write_merge_history_time_travel_and_read_without_jvm(spark, tmp_lake):
    import deltalake
    from delta.tables import DeltaTable

    path = PipelineConfig(lake=tmp_lake).table_path("silver", "cluster_qmgrs")
    assert path == str(tmp_lake / "silver" / "cluster_qmgrs")

    spark.createDataFrame(ORIGINAL, SCHEMA).write.format("delta").save(path)
    assert _rows(spark.read.format("delta").load(path)) == ORIGINAL

    (
        DeltaTable.forPath(spark, path)
        .alias("t")
        .merge(spark.createDataFrame(CHANGES, SCHEMA).alias("s"), "t.id = s.id")
        .whenMatchedUpdateAll()
        .whenNotMatchedInsertAll()
        .execute()
    )
    assert _rows(spark.read.format("delta").load(path)) == AFTER_MERGE

    history = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").orderBy("version").collect()
    assert [(h.version, h.operation) for h in history] == [(0, "WRITE"), (1, "MERGE")]
    metrics = history[1].operationMetrics
    assert (metrics["numTargetRowsUpdated"], metrics["numTargetRowsInserted"]) == ("1", "1")

    assert _rows(spark.read.format("delta").option("versionAsOf", 0).load(path)) == ORIGINAL

    # The `deltalake` package (delta-rs, no JVM) reads what Spark wrote: latest version and version 0.
    dt = deltalake.DeltaTable(path)
    assert dt.version() == 1
    assert "deletionVectors" not in (dt.protocol().reader_features or [])
    latest = dt.to_pyarrow_table(columns=["id", "qmgr", "weight"]).to_pylist()
    assert sorted((r["id"], r["qmgr"], r["weight"]) for r in latest) == AFTER_MERGE
    v0 = deltalake.DeltaTable(path, version=0).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["qmgr"], r["weight"]) for r in v0) == ORIGINAL


def test_session_settings_and_jar_pairing(spark):
    import pyspark

    from spark.jars import delta_packages
    from spark.session import get_spark

    assert get_spark() is spark  # the active session is reused, not rebuilt
    assert spark.conf.get("spark.sql.shuffle.partitions") == "4"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.conf.get("spark.databricks.delta.properties.defaults.enableDeletionVectors") == "false"
    assert spark.conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert spark.version == pyspark.__version__
    # The Delta jar on the JVM belongs with the Python delta-spark (same major.minor) and with this Spark.
    jvm_delta = spark._jvm.io.delta.package.VERSION()
    assert jvm_delta.split(".")[:2] == importlib.metadata.version("delta_spark").split(".")[:2]
    spark_mm = ".".join(pyspark.__version__.split(".")[:2])
    assert delta_packages() == f"io.delta:delta-spark_{spark_mm}_2.13:{jvm_delta}"
    # ... and it came from local files, the main jar first: no Ivy resolution at start.
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.jars.packages") is None
    assert Path(conf.get("spark.jars").split(",")[0]).name == f"io.delta_delta-spark_{spark_mm}_2.13-{jvm_delta}.jar"


# A session started as the CLI starts it, in a child process (a fresh JVM) whose current folder is empty: what it
# prints, what it leaves in that folder, where its jars came from.
START_IN_EMPTY_FOLDER = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    from spark.jars import local_jar_folder
    from spark.session import get_spark
    spark = get_spark(app_name="clwl-session-test")
    spark.range(3).write.format("delta").save("t")  # a relative path: the current (empty) folder
    assert spark.sql(f"DESCRIBE HISTORY delta.`{os.path.abspath('t')}`").count() == 1  # the catalog is used
    conf = spark.sparkContext.getConf()
    print(json.dumps({"packages": conf.get("spark.jars.packages"), "jars": conf.get("spark.jars").split(","),
                      "folder": str(local_jar_folder()), "warehouse": conf.get("spark.sql.warehouse.dir")}))
""")


# Quiet, what every command does by default, in the everyday suite; verbose (the same start with the JVM's output
# let through, half a minute for a second JVM) with the extended tests, which CI runs too.
@pytest.mark.parametrize("verbose", [False, pytest.param(True, marks=pytest.mark.extended)], ids=["quiet", "verbose"])
def test_a_second_start_uses_the_local_jars_prints_nothing_and_leaves_no_warehouse(spark, tmp_path, verbose):
    """The `spark` fixture's start made the local jar folder complete (fetching it at most once); a later start,
    in a new JVM, passes those files as spark.jars: no spark.jars.packages, so no Ivy resolution, and nothing on
    stderr (no Ivy report, no Spark banner, no log4j line: the JVM's output goes to a log file) unless
    CLWL_SPARK_VERBOSE=1 (`--verbose`). Its current folder gets the Delta table it wrote and no spark-warehouse/
    (the warehouse is a temp folder)."""
    from spark.jars import local_delta_jars

    before = local_delta_jars()
    work = tmp_path / "cwd"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLWL_SPARK_VERBOSE"}
    if verbose:
        env["CLWL_SPARK_VERBOSE"] = "1"
    done = subprocess.run([sys.executable, "-c", START_IN_EMPTY_FOLDER, str(Path(__file__).resolve().parents[2])],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    if verbose:  # the JVM's own output, as Spark prints it
        assert "log4j" in done.stderr and "Ivy" not in done.stderr and ":: resolving" not in done.stderr
    else:
        assert done.stderr == ""
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["packages"] is None
    assert seen["jars"] == before and all(Path(j).parent == Path(seen["folder"]) for j in seen["jars"])
    assert sorted(p.name for p in work.iterdir()) == ["t"]
    assert not Path(seen["warehouse"]).is_relative_to(work)


def test_excluded_jars_are_shipped_by_pyspark():
    import pyspark

    from spark.jars import PROVIDED_BY_PYSPARK

    jars = Path(pyspark.__file__).parent / "jars"
    missing = [c for c in PROVIDED_BY_PYSPARK if not list(jars.glob(f"{c.split(':')[1]}-[0-9]*.jar"))]
    assert missing == [], f"excluded from the Delta download but not in pyspark/jars: {missing}"


def test_pipeline_config_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CLWL_LAKE", str(tmp_path / "l"))
    monkeypatch.setenv("CLWL_LANDING", "")  # empty means unset
    monkeypatch.setenv("CLWL_SPARK_MASTER", "local[1]")
    cfg = PipelineConfig.from_env(shuffle_partitions=2)
    assert (cfg.lake, cfg.master, cfg.shuffle_partitions) == (tmp_path / "l", "local[1]", 2)
    assert cfg.reports == tmp_path / "l" / "reports"
    assert cfg.landing.parts[-2:] == ("samples", "landing")
    assert PipelineConfig.from_env(master="local[3]").master == "local[3]"
    assert cfg.table_path("gold", "routing_replay") == str(tmp_path / "l" / "gold" / "routing_replay")
    with pytest.raises(ValueError):
        cfg.table_path("gold", "../x")
    with pytest.raises(TypeError):
        PipelineConfig.from_env(no_such_field=1)


def test_a_table_partitioned_the_old_way_gets_a_clear_error(tmp_path):
    """silver.message_events is partitioned by run date and sender (the replay reads one sender's files per
    task); a lake an earlier version made has it by run date only. Writing into it would fail deep in Delta;
    the check names the table, both layouts and the way out."""
    import deltalake
    import pyarrow as pa

    from spark.tables import TABLES, check_partitioning

    old = tmp_path / "silver" / "message_events"
    deltalake.write_deltalake(str(old), pa.table({"run_date": ["2026-11-19"], "sending_qmgr": ["QM1"], "msg_id": ["m1"]}),
                              partition_by=["run_date"])
    with pytest.raises(RuntimeError) as e:
        check_partitioning(TABLES["silver.message_events"], str(old))
    assert str(old) in str(e.value) and "(run_date)" in str(e.value) and "(run_date, sending_qmgr)" in str(e.value)
    assert "clwl ingest" in str(e.value)
    new = tmp_path / "new"
    deltalake.write_deltalake(str(new), pa.table({"run_date": ["2026-11-19"], "sending_qmgr": ["QM1"], "msg_id": ["m1"]}),
                              partition_by=["run_date", "sending_qmgr"])
    check_partitioning(TABLES["silver.message_events"], str(new))  # the layout this version writes: no error
