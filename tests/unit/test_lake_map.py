"""The map of the lake (clwl/lake/door.py), the table registry built on it (spark/tables.py: schemas only, no JVM)
and the run object (spark/run.py) that computes where a run reads and writes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from clwl.analyses.whatif import WhatIf
from clwl.lake import door as lake
from spark.config import PipelineConfig
from spark.run import PipelineRun
from spark.tables import INGEST_TABLES, TABLES


def test_the_registry_has_a_schema_for_every_table_of_the_map_and_no_other():
    assert tuple(TABLES) == lake.TABLE_KEYS
    assert {t.layer for t in INGEST_TABLES.values()} == {"bronze", "silver"}
    assert tuple(k.split(".")[1] for k in TABLES if k.startswith("gold.")) == lake.GOLD_TABLES
    for t in TABLES.values():
        assert set(t.keys) <= set(t.columns), t.key
        assert set(t.partition_by) <= set(t.columns), t.key
        assert set(t.stats_columns) <= set(t.columns), t.key
    assert all(TABLES[f"gold.{n}"].partition_by == ("run_date",) for n in lake.GOLD_TABLES)


def test_rows_are_built_by_column_name():
    replay = TABLES["gold.routing_replay"]
    values = {c: f"v-{c}" for c in replay.columns}
    build = replay.row_from(run_date="D", sending_qmgr="QM1", profile="default")
    row = build(SimpleNamespace(**values))
    assert row == tuple({**values, "run_date": "D", "sending_qmgr": "QM1", "profile": "default"}[c]
                        for c in replay.columns)
    with pytest.raises(AttributeError):  # a column the object does not carry is an error, never a shift
        build(SimpleNamespace(**{k: v for k, v in values.items() if k != "agrees"}))
    with pytest.raises(ValueError, match="no column"):
        replay.row_from(nonsense=1)
    with pytest.raises(ValueError, match="missing"):
        replay.row(**{k: v for k, v in values.items() if k != "msg_id"})


def test_the_run_computes_its_paths(tmp_path):
    config = PipelineConfig(lake=tmp_path / "lake", landing=tmp_path / "landing")
    plain = PipelineRun(config, "run-1")
    assert plain.out is config
    assert plain.staging("routing_replay") == str(tmp_path / "lake" / "staging" / "routing_replay")
    assert plain.gold("run_summary") == str(tmp_path / "lake" / "gold" / "run_summary")
    assert plain.label == "profile default"

    whatif = PipelineRun(config, "run-2", "mq9", WhatIf.from_dict({"name": "w20"}), ["QM1"])
    root = tmp_path / "lake" / "whatif" / "w20"
    assert whatif.out.lake == root and whatif.out.reports == root / "reports"
    assert whatif.staging("distribution") == str(root / "staging" / "distribution")
    assert whatif.gold("run_summary") == str(root / "gold" / "run_summary")
    # A what-if reads the main lake's silver tables.
    assert whatif.reads("silver.message_events") == str(tmp_path / "lake" / "silver" / "message_events")
    assert whatif.senders == ("QM1",) and whatif.label == "profile mq9, what-if w20"


def test_a_narrowed_run_must_be_a_whatif(tmp_path):
    config = PipelineConfig(lake=tmp_path / "lake")
    with pytest.raises(ValueError, match="what-if"):
        PipelineRun(config, "run-1", senders=["QM1"])
    with pytest.raises(ValueError, match="what-if"):
        PipelineRun(config, "run-1", cluster="CL1")


def test_delta_table_detection_and_version(tmp_path):
    t = tmp_path / "t"
    assert not lake.is_delta_table(t) and lake.latest_version(t) is None
    (t / "_delta_log").mkdir(parents=True)
    assert lake.is_delta_table(t) and lake.latest_version(t) is None
    for v in (0, 1, 7):
        (t / "_delta_log" / f"{v:020d}.json").write_text("{}")
    (t / "_delta_log" / "00000000000000000007.checkpoint.parquet").write_text("")
    assert lake.latest_version(t) == 7
