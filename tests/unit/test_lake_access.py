"""The lake's door (clwl/lake/door.py): tables by key, their latest and published versions, their rows with filters,
the rows a commit wrote, the one default lake; and that no other product module opens a Delta table itself.
Pure: tiny tables written by deltalake, no JVM."""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
from pathlib import Path

# Plain imports, not importorskip: the pipeline extra is installed wherever the tests run (make test), and a
# missing one must fail here rather than skip the lake's read-only promises silently.
import deltalake  # noqa: E402
import pyarrow as pa  # noqa: E402
import pytest

from clwl.lake import door as lake_module
from clwl.lake.door import (
    DEFAULT_LAKE,
    Lake,
    LakeFileError,
    default_lake_location,
    read_rows,
    rows_committed,
    snapshot,
)
from clwl.lake.published import write_published
from spark.config import PipelineConfig
from spark.run import PipelineRun

ROOT = Path(__file__).resolve().parents[2]
D1, D2 = dt.date(2026, 11, 20), dt.date(2026, 11, 21)


def _write(path: Path, rows: dict, mode: str = "append") -> None:
    deltalake.write_deltalake(str(path), pa.table(rows), mode=mode, partition_by=["run_date"])


@pytest.fixture
def tiny(tmp_path) -> Lake:
    """silver.ingest_files at versions 0 (3 rows) and 1 (2 rows); gold.run_summary at 0, 1, 2."""
    lake = Lake(tmp_path / "lake")
    files = lake.table("silver.ingest_files")
    _write(files, {"run_date": [D1, D1, D2], "source_file": ["a", "b", "c"], "n": [1, 2, 3]})
    _write(files, {"run_date": [D2, D2], "source_file": ["d", "e"], "n": [4, 5]})
    summary = lake.table("gold.run_summary")
    for v in range(3):
        _write(summary, {"run_date": [D1], "run_id": [f"run-{v}"]}, mode="overwrite")
    return lake


def test_where_tables_and_folders_are(tmp_path):
    lake = Lake(str(tmp_path))
    assert lake.root == tmp_path and str(lake) == str(tmp_path)
    assert lake.table("silver.message_events") == tmp_path / "silver" / "message_events"
    assert lake.table("gold", "run_summary") == lake.table("gold.run_summary") == tmp_path / "gold" / "run_summary"
    assert lake.table("staging.routing_replay") == tmp_path / "staging" / "routing_replay"
    assert lake.layer("gold") == tmp_path / "gold" and lake.layer("validation") == tmp_path / "validation"
    assert lake.whatif("w20") == Lake(tmp_path / "whatif" / "w20")
    with pytest.raises(ValueError, match="no table"):
        lake.table("silver.nonsense")
    with pytest.raises(ValueError, match="no table"):
        lake.table("staging.quarantine")  # only gold tables are staged
    with pytest.raises(ValueError, match="no folder"):
        lake.layer("_ingest")
    for layer, name in (("gold", "../x"), ("..", "t"), ("gold", ""), ("a/b", "t"), ("gold", "x\\y")):
        with pytest.raises(ValueError, match="bad"):
            lake.table(layer, name)


def test_versions_rows_and_commits(tiny):
    assert tiny.exists("silver.ingest_files") and not tiny.exists("silver.quarantine")
    assert tiny.version("silver.ingest_files") == 1 and tiny.version("gold.run_summary") == 2
    assert tiny.version("silver.quarantine") is None

    day2 = tiny.rows("silver.ingest_files", ["source_file", "n"], filters=[("run_date", "=", D2)])
    assert day2.column_names == ["source_file", "n"]
    assert sorted(day2.column("source_file").to_pylist()) == ["c", "d", "e"]
    both = tiny.rows("silver.ingest_files", filters=[("run_date", "in", [D1, D2])])
    assert both.num_rows == 5 and "run_date" in both.column_names
    assert tiny.rows("silver.ingest_files", version=0).num_rows == 3
    assert read_rows(tiny.table("silver.ingest_files"), ["n"]).num_rows == 5
    assert tiny.open("gold.run_summary", 1).version() == 1

    assert tiny.rows_committed("silver.ingest_files") == 2  # the latest commit (delta-rs: num_added_rows)
    assert tiny.rows_committed("silver.ingest_files", 0) == 3
    with pytest.raises(LookupError):
        tiny.rows_committed("silver.ingest_files", 2)


def test_one_version_opened_once(tiny):
    """A snapshot answers everything of the version it opened, however the table moves on meanwhile."""
    files = tiny.table("silver.ingest_files")
    snap = snapshot(files, 0)
    assert snap.version == 0 and tiny.snapshot("silver.ingest_files").version == 1
    assert snap.columns == ("run_date", "source_file", "n") and [f.name for f in snap.schema.fields] == list(snap.columns)
    assert snap.partition_columns == ("run_date",) and isinstance(snap.configuration, dict)
    assert sorted(snap.rows(["n"]).column("n").to_pylist()) == [1, 2, 3]
    latest = snapshot(files)
    _write(files, {"run_date": [D1], "source_file": ["f"], "n": [6]})  # version 2, after the open
    assert latest.version == 1 and latest.rows().num_rows == 5

    import pyarrow.dataset as ds

    day2 = [("run_date", "=", D2)]
    assert sorted(latest.rows(["source_file"], day2).column("source_file").to_pylist()) == ["c", "d", "e"]
    assert latest.rows(filters=ds.field("n") > 3).num_rows == 2  # an expression, as the DNF filters are
    batches = list(latest.batches(["n"], day2, batch_size=1))
    assert all(b.num_rows <= 1 and b.schema.names == ["n"] for b in batches)
    assert sorted(v for b in batches for v in b.column("n").to_pylist()) == [3, 4, 5]
    assert sum(b.num_rows for b in latest.batches(filters=ds.field("n") >= 2)) == 4
    assert sum(b.num_rows for b in snapshot(files, 2).batches()) == 6


def test_the_files_of_a_partition(tiny):
    files = snapshot(tiny.table("silver.ingest_files"), 1).files()
    assert len(files) == 3 and {f.partition["run_date"] for f in files} == {D1, D2}  # typed, as the schema
    assert sum(f.num_records for f in files) == 5 and all(f.size_bytes > 0 for f in files)
    day2 = snapshot(tiny.table("silver.ingest_files")).files({"run_date": D2})
    assert sum(f.num_records for f in day2) == 3 and all(f.path.startswith("run_date=2026-11-21/") for f in day2)
    assert tiny.files("silver.ingest_files", {"run_date": D2}) == sorted((f.path, f.size_bytes) for f in day2)
    assert tiny.files("silver.ingest_files") == sorted((f.path, f.size_bytes) for f in files)
    with pytest.raises(KeyError):
        snapshot(tiny.table("silver.ingest_files")).files({"sending_qmgr": "QM1"})  # not a partition column


def test_a_snapshot_registered_with_datafusion(tiny):
    from datafusion import SessionContext

    ctx = SessionContext()
    tiny.snapshot("silver.ingest_files", 0).register(ctx, "files")
    assert ctx.sql("SELECT count(*) AS n FROM files").to_arrow_table().column("n").to_pylist() == [3]


def _commit(table: Path, version: int, metrics: dict | None) -> None:
    info = {"timestamp": 0, "operation": "WRITE", "operationParameters": {"mode": "Overwrite"}}
    if metrics is not None:
        info["operationMetrics"] = metrics
    (table / "_delta_log" / f"{version:020d}.json").write_text(json.dumps({"commitInfo": info}) + "\n")


def test_rows_committed_reads_spark_metrics(tiny):
    """Spark records numOutputRows (a string), and nothing at all for a write of no rows."""
    files = tiny.table("silver.ingest_files")
    _commit(files, 2, {"numFiles": "3", "numOutputRows": "1234"})
    _commit(files, 3, None)
    assert rows_committed(files, 2) == 1234
    assert rows_committed(files) == 0 and tiny.version("silver.ingest_files") == 3


def test_published_version(tiny):
    gold = tiny.layer("gold")
    # No pointer (a lake from before it): the latest version is the published one.
    assert not tiny.published().exists and tiny.published_version("gold.run_summary") == 2
    write_published(gold, {"run_summary": 1})
    assert tiny.published().tables == {"run_summary": 1}
    assert tiny.published_version("gold.run_summary") == tiny.published_version("run_summary") == 1
    assert tiny.rows("gold.run_summary", version=tiny.published_version("gold.run_summary")) \
        .column("run_id").to_pylist() == ["run-1"]
    _write(tiny.table("gold.routing_replay"), {"run_date": [D1], "msg_id": ["x"]})
    assert tiny.published_version("gold.routing_replay") is None  # its first publish has not finished
    write_published(gold, {"run_summary": 1, "stuck_messages": 0})
    assert tiny.published_version("gold.stuck_messages") is None  # named, but there is no table


def test_the_door_refuses_a_damaged_log(tiny):
    os.mkfifo(tiny.table("silver.ingest_files") / "_delta_log" / "_last_checkpoint")
    with pytest.raises(LakeFileError, match="FIFO"):
        tiny.rows("silver.ingest_files")
    with pytest.raises(LakeFileError, match="FIFO"):
        tiny.version("silver.ingest_files")


def test_one_default_lake(monkeypatch, tmp_path):
    monkeypatch.delenv("CLWL_LAKE", raising=False)
    assert default_lake_location() == DEFAULT_LAKE == Path("lake")
    assert default_lake_location(tmp_path) == tmp_path / "lake"  # the DAGs: <checkout>/lake
    assert PipelineConfig.from_env().lake == Path("lake").absolute()
    monkeypatch.setenv("CLWL_LAKE", "  ")  # blank: unset
    assert default_lake_location() == Path("lake")
    monkeypatch.setenv("CLWL_LAKE", str(tmp_path / "mine"))
    assert default_lake_location() == default_lake_location(tmp_path / "elsewhere") == tmp_path / "mine"
    assert PipelineConfig.from_env().lake == tmp_path / "mine"
    assert PipelineConfig.from_env(lake=tmp_path / "given").lake == tmp_path / "given"  # --lake wins


def test_the_run_takes_the_lake(tmp_path):
    config = PipelineConfig(lake=tmp_path / "main", landing=tmp_path / "landing")
    plain = PipelineRun(config, "run-1")
    assert plain.lake == Lake(tmp_path / "main") and plain.out_lake is plain.lake and plain.out is config
    other = PipelineRun(config, "run-2", lake=Lake(tmp_path / "other"))
    assert other.lake == Lake(tmp_path / "other") and other.config.lake == tmp_path / "other"
    assert other.config.reports == tmp_path / "other" / "reports" and other.config.landing == config.landing
    assert other.staging("distribution") == str(tmp_path / "other" / "staging" / "distribution")
    assert other.reads("silver.message_events") == str(tmp_path / "other" / "silver" / "message_events")

    from clwl.analyses.whatif import WhatIf

    whatif = PipelineRun(config, "run-3", whatif=WhatIf.from_dict({"name": "w20"}))
    assert whatif.out_lake == Lake(tmp_path / "main" / "whatif" / "w20") == Lake(whatif.out.lake)
    assert whatif.gold("run_summary") == str(tmp_path / "main" / "whatif" / "w20" / "gold" / "run_summary")
    assert whatif.reads("silver.message_events") == str(tmp_path / "main" / "silver" / "message_events")


# ------------------------------------------------------------------------------------------ one door only
#: The modules that may open a Delta table with deltalake themselves: the door, and the commit helpers (which
#: write Delta commits and read the two tables' logs for it).
DOORS = {"clwl/lake/door.py", "spark/delta_commits.py"}


def _delta_table_calls(path: Path) -> list[int]:
    """Lines of ``path`` that construct a ``deltalake.DeltaTable``: ``DeltaTable(...)``, ``deltalake.DeltaTable(...)``,
    or a call of a name ``from deltalake import DeltaTable as X`` bound; or that derive a class from it (the door's
    own tables are such a class, clwl.lake.door.open_delta)."""
    tree = ast.parse(path.read_text(), str(path))
    names = {"DeltaTable"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "deltalake":
            names.update(a.asname or a.name for a in node.names if a.name == "DeltaTable")
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id in names) or (isinstance(f, ast.Attribute) and f.attr == "DeltaTable"):
                lines.append(node.lineno)
        elif isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id in names) or (isinstance(b, ast.Attribute) and b.attr == "DeltaTable")
                for b in node.bases):
            lines.append(node.lineno)
    return lines


def test_only_the_door_opens_a_delta_table():
    sources = sorted(p for top in ("clwl", "spark", "dags", "bench") for p in (ROOT / top).rglob("*.py"))
    assert len(sources) > 50 and ROOT / "clwl" / "lake" / "door.py" in sources  # the walk found the product
    found = {str(p.relative_to(ROOT)): lines for p in sources if (lines := _delta_table_calls(p))}
    assert set(found) <= DOORS, {k: v for k, v in found.items() if k not in DOORS}
    assert "clwl/lake/door.py" in found  # open_delta: the test would notice the door itself moving


def test_the_door_loads_no_deltalake_until_a_table_is_opened():
    tree = ast.parse(Path(lake_module.__file__).read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not any("deltalake" in ast.unparse(n) or "pyarrow" in ast.unparse(n) for n in top)


@pytest.mark.objectstore
def test_a_snapshot_on_the_object_store(object_store, monkeypatch):
    """The same door on s3://: batch by batch, the files of a partition, DataFusion (as a pyarrow dataset scanned by
    Arrow's own S3 file system: the engine's own table provider has no store)."""
    from datafusion import SessionContext

    from clwl.lake.storage import storage_options

    object_store.use(monkeypatch)
    lake = Lake(object_store.lake_uri())
    table = lake.table("gold.run_summary")
    rows = pa.table({"run_date": ["2026-11-19", "2026-11-20", "2026-11-20"], "messages": [3, 5, 8]})
    deltalake.write_deltalake(str(table), rows, partition_by=["run_date"], storage_options=storage_options(table))
    deltalake.write_deltalake(str(table), rows.slice(0, 1), mode="append", storage_options=storage_options(table))
    snap = lake.snapshot("gold.run_summary", 0)
    assert snap.version == 0 and snap.columns == ("run_date", "messages")
    assert sorted(v for b in snap.batches(["messages"], batch_size=1) for v in b.column("messages").to_pylist()) \
        == [3, 5, 8]
    assert sum(f.num_records for f in snap.files({"run_date": "2026-11-20"})) == 2
    assert len(lake.files("gold.run_summary")) == 3  # the latest version: the append's file too
    ctx = SessionContext()
    snap.register(ctx, "summary")
    assert ctx.sql("SELECT sum(messages) AS n FROM summary").to_arrow_table().column("n").to_pylist() == [16]


def _open_delta_calls(path: Path) -> list[int]:
    """Lines of ``path`` that call ``open_delta`` (the raw ``deltalake.DeltaTable``): by its name, a name an import
    of it bound (``from clwl.lake.door import open_delta as od``), or as an attribute (``door.open_delta(...)``)."""
    tree = ast.parse(path.read_text(), str(path))
    names = {"open_delta"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name == "open_delta")
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id in names)
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "open_delta"))]


def test_open_delta_is_called_by_the_door_and_the_commit_helpers_only():
    """One door to Delta (issue 41 item 3): every other module reads through clwl.lake.door's Lake, snapshot,
    read_rows and files (batched reads with columns, filters and a version; the files of one partition; the
    published version), so open_delta( stands in the door and in spark/delta_commits.py alone."""
    sources = sorted(p for top in ("clwl", "spark", "dags", "bench") for p in (ROOT / top).rglob("*.py"))
    found = {str(p.relative_to(ROOT)): lines for p in sources if (lines := _open_delta_calls(p))}
    assert set(found) == DOORS, found
