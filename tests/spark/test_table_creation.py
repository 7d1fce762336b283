"""A new table's first commit is written without Spark (spark.tables._create_empty): it must be the commit
Spark's own CREATE TABLE writes for that table (protocol, schema, partitioning, properties), and Spark must
write to it, read it and enforce its NOT NULL columns as on a table it created itself."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from spark.config import PipelineConfig

pytestmark = pytest.mark.spark


def _version0(location: str, commits: int = 1) -> dict:
    """The table's protocol and metadata after its first ``commits`` commits (the latest action of each kind);
    the lists of table features as sets (Spark lists them in no fixed order once it added one)."""
    actions = {}
    for version in range(commits):
        for line in (Path(location) / "_delta_log" / f"{version:020d}.json").read_text().splitlines():
            action = json.loads(line)
            actions.update(action)
    meta = dict(actions["metaData"])
    meta["schema"] = json.loads(meta.pop("schemaString"))
    for volatile in ("id", "createdTime"):
        meta.pop(volatile)
    # a CHECK constraint's text without spaces: Spark keeps the text of ALTER TABLE ADD CONSTRAINT re-spaced
    meta["configuration"] = {k: "".join(v.split()) if k.startswith("delta.constraints.") else v
                             for k, v in meta["configuration"].items()}
    protocol = {k: set(v) if isinstance(v, list) else v for k, v in actions["protocol"].items()}
    return {"protocol": protocol, "metaData": meta}


def _checksum0(location: str) -> dict:
    """Version 0's checksum file, which Spark reads instead of replaying the log (its volatile fields out;
    Spark also writes a file size histogram, all zeros for no files, which is optional)."""
    crc = json.loads((Path(location) / "_delta_log" / "00000000000000000000.crc").read_text())
    for volatile in ("txnId", "fileSizeHistogram"):
        crc.pop(volatile, None)
    meta = crc.pop("metadata")
    meta["schema"] = json.loads(meta.pop("schemaString"))
    for volatile in ("id", "createdTime"):
        meta.pop(volatile)
    meta["configuration"] = {k: "".join(v.split()) if k.startswith("delta.constraints.") else v
                             for k, v in meta["configuration"].items()}
    crc["protocol"] = {k: set(v) if isinstance(v, list) else v for k, v in crc["protocol"].items()}
    return {**crc, "metadata": meta}


def test_every_table_is_created_as_spark_creates_it(spark, tmp_path):
    from delta.tables import DeltaTable

    from clwl.lake.put_records import TABLE_PROPERTIES
    from spark.tables import TABLES, ensure_tables, path

    ours, sparks = PipelineConfig(lake=tmp_path / "ours"), PipelineConfig(lake=tmp_path / "spark")
    ensure_tables(spark, ours, TABLES.values())
    for key, t in TABLES.items():
        builder = DeltaTable.createIfNotExists(spark).location(path(sparks, key)).addColumns(t.schema)
        if t.partition_by:
            builder = builder.partitionedBy(*t.partition_by)
        if t.stats_columns:
            builder = builder.property("delta.dataSkippingStatsColumns", ",".join(t.stats_columns))
        for name, value in TABLE_PROPERTIES.get(key, {}).items():  # bronze.put_records' layout (clwl.lake.put_records)
            builder = builder.property(name, value)
        if t.change_data_feed:
            builder = builder.property("delta.enableChangeDataFeed", "true")
        builder.comment(t.description).execute()
        for name, expr in t.checks:  # Spark sets a CHECK constraint only so, a commit each
            spark.sql(f"ALTER TABLE delta.`{path(sparks, key)}` ADD CONSTRAINT {name} CHECK ({expr})")
        assert _version0(path(ours, key)) == _version0(path(sparks, key), 1 + len(t.checks)), key
        if not t.checks:  # Spark writes a checksum of each commit; ours is version 0's, all there is
            assert _checksum0(path(ours, key)) == _checksum0(path(sparks, key)), key
        ours0 = _checksum0(path(ours, key))
        assert ours0["metadata"] == _version0(path(ours, key))["metaData"]
        assert ours0["protocol"] == _version0(path(ours, key))["protocol"]
    # the registry has every kind: tables Spark gives the legacy protocol (1/2, 1/3 with CHECK constraints) and
    # tables that need table features (a timestamp without time zone, the change data feed)
    protocols = {json.dumps(_version0(path(ours, k))["protocol"], sort_keys=True, default=sorted) for k in TABLES}
    assert len(protocols) == 5


def test_spark_writes_reads_and_checks_a_table_created_so(spark, tmp_path):
    from pyspark.sql import Row
    from pyspark.sql.types import StructField, StructType

    from spark.tables import TABLES, ensure_table, path, read

    config = PipelineConfig(lake=tmp_path / "lake")
    # bronze.queue_accounting has timestamp_ntz columns (table features), silver.quarantine has not
    for key in ("bronze.queue_accounting", "silver.quarantine"):
        ensure_table(spark, config, key)
        t = TABLES[key]
        empty = spark.createDataFrame([], t.schema)
        empty.write.format("delta").mode("append").save(path(config, key))
        assert read(spark, config, key).count() == 0
        assert read(spark, config, key).schema == t.schema
        not_null = next(f.name for f in t.schema.fields if not f.nullable and f.name not in t.partition_by)
        values = {f.name: None for f in t.schema.fields}
        values["run_date"] = date(2026, 11, 20)
        row = spark.createDataFrame([Row(**values)], StructType(
            [StructField(f.name, f.dataType, True) for f in t.schema.fields]))
        with pytest.raises(Exception) as refused:  # the NOT NULL invariant holds as on Spark's own tables
            row.write.format("delta").mode("append").save(path(config, key))
        assert "NOT NULL" in str(refused.value).upper() and not_null in str(refused.value)
    # created again: left as it is (no second version 0, no error)
    before = (Path(path(config, "silver.quarantine")) / "_delta_log" / "00000000000000000000.json").read_bytes()
    ensure_table(spark, config, "silver.quarantine")
    assert (Path(path(config, "silver.quarantine")) / "_delta_log" / "00000000000000000000.json").read_bytes() \
        == before
