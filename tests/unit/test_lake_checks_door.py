"""The Spark side's checks of a lake table read its Delta log through the lake door (clwl.lake.door.snapshot), no
JVM: a table made by an earlier version with other columns (spark.tables.add_missing_columns) and the put rows'
layout property (spark.ingest.put_layout.migrated), on tiny tables written by deltalake."""

from __future__ import annotations

import json

import deltalake
import pyarrow as pa
import pytest

from clwl.lake.door import Lake

ARROW = {"string": pa.string(), "timestamp": pa.timestamp("us", "UTC"), "date": pa.date32(), "bigint": pa.int64()}


def _ingest_files(location: str, drop: tuple[str, ...] = (), retype: dict | None = None) -> None:
    """An empty silver.ingest_files with the registry's columns, less ``drop``, some typed otherwise."""
    from spark.tables import table

    fields = [pa.field(f.name, (retype or {}).get(f.name, ARROW[f.dataType.simpleString()]))
              for f in table("silver.ingest_files").schema.fields if f.name not in drop]
    deltalake.write_deltalake(location, pa.schema(fields).empty_table())


class _Spark:
    def __init__(self):
        self.statements: list[str] = []

    def sql(self, statement: str) -> None:
        self.statements.append(statement)


def test_columns_added_or_refused_from_the_log(tmp_path):
    from spark.tables import add_missing_columns, table

    t = table("silver.ingest_files")
    same, older, retyped, lacking = (str(tmp_path / n) for n in ("same", "older", "retyped", "lacking"))
    _ingest_files(same)
    assert add_missing_columns(None, t, same) == []
    _ingest_files(older, drop=("reason", "content_sha256"))
    spark = _Spark()
    assert add_missing_columns(spark, t, older) == ["content_sha256", "reason"]
    assert "ADD COLUMNS (`content_sha256` string AFTER `size_bytes`)" in spark.statements[0]
    _ingest_files(retyped, retype={"size_bytes": pa.string()})
    with pytest.raises(RuntimeError, match="column size_bytes of this Delta table is string"):
        add_missing_columns(None, t, retyped)
    _ingest_files(lacking, drop=("code_version",))
    with pytest.raises(RuntimeError, match="lacks the column"):
        add_missing_columns(None, t, lacking)


def test_the_put_rows_layout_from_the_tables_properties(tmp_path):
    from clwl.lake.put_records import LAYOUT, LAYOUT_PROPERTY
    from spark.config import PipelineConfig
    from spark.ingest.put_layout import KEY, migrated

    def lake(name: str, properties: dict[str, str]) -> PipelineConfig:
        config = PipelineConfig(lake=tmp_path / name, landing=tmp_path / "landing")
        location = Lake(config.lake).table(KEY)
        deltalake.write_deltalake(str(location), pa.table({"run_date": pa.array([], pa.date32())}))
        # The property as Spark's ALTER TABLE sets it (deltalake's writer refuses a key it does not know).
        commit = location / "_delta_log" / f"{0:020d}.json"
        actions = [json.loads(line) for line in commit.read_text().splitlines()]
        for a in actions:
            if "metaData" in a:
                a["metaData"]["configuration"].update(properties)
        commit.write_text("".join(json.dumps(a) + "\n" for a in actions))
        return config

    assert not migrated(lake("earlier", {}))
    assert migrated(lake("now", {LAYOUT_PROPERTY: LAYOUT}))
