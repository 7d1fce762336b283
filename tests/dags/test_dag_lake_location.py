"""The DAGs on a lake on an object store (CLWL_LAKE=s3://bucket/prefix, docker-compose.yml's default): the DAG
files parse, the gold Assets are named by the tables' s3:// URIs, and the tasks get the location itself (never a
local path made of the URI). A local lake keeps its file:/// URIs. No Spark, no store: naming a location sends
nothing anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dagtest_support import DAGS, GOLD, ROOT

pytestmark = pytest.mark.airflow

STORE_LAKE = "s3://clwl-lake/nightly/lake"

PARSE_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])  # the bundle folder, as the DAG processor's BundleDagBag does
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
nightly, reports, adhoc = (bag.dags.get(d) for d in ("clwl_nightly", "clwl_reports", "clwl_adhoc"))
print("@@" + json.dumps({
    "import_errors": bag.import_errors,
    "nightly_outlets": [a.uri for a in nightly.get_task("publish").outlets] if nightly else None,
    "adhoc_outlets": [a.uri for a in adhoc.get_task("publish").outlets] if adhoc else None,
    "reports_schedule": [a.uri for a in reports.timetable.asset_condition.objects] if reports else None,
}))
"""


def parse_dags(lake: str) -> dict:
    """The dags/ folder parsed in a fresh interpreter with CLWL_LAKE=``lake`` (Asset URIs are fixed at parse
    time, so a process of its own, as the DAG processor's)."""
    env = {**os.environ, "CLWL_LAKE": lake}
    proc = subprocess.run([sys.executable, "-c", PARSE_SCRIPT, str(DAGS)], env=env, capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("@@"))[2:])


def test_the_dag_files_parse_with_a_lake_on_a_store_and_name_its_tables(airflow_db):
    """CLWL_LAKE=s3://clwl-lake/nightly/lake: every DAG file imports, and the gold Assets that clwl_nightly and
    clwl_adhoc publish and clwl_reports is scheduled on are s3://clwl-lake/nightly/lake/gold/<table>, one per gold
    table in clwl.lake.door.GOLD_TABLES's order."""
    parsed = parse_dags(STORE_LAKE)
    assert parsed["import_errors"] == {}
    expected = [f"{STORE_LAKE}/gold/{t}" for t in GOLD]
    assert parsed["nightly_outlets"] == expected
    assert parsed["adhoc_outlets"] == expected
    assert parsed["reports_schedule"] == expected


def test_env_lake_is_the_location_for_a_store_and_an_absolute_folder_otherwise(monkeypatch, tmp_path):
    from clwl.lake.storage import LakeLocation
    from clwl_dag_support import env_lake, gold_assets, parse_time_lake, pipeline_config, table_uri

    monkeypatch.setenv("CLWL_LAKE", "s3://b-1/p/q")
    assert env_lake() == LakeLocation("s3", "b-1", "p/q") == parse_time_lake()
    assert [a.uri for a in gold_assets()] == [f"s3://b-1/p/q/gold/{t}" for t in GOLD]
    assert table_uri("s3://b-1/p/q", "run_summary", layer="silver") == "s3://b-1/p/q/silver/run_summary"
    # The tasks' configuration (no Variable set: the environment's lake) keeps the location, not a Path of it.
    assert pipeline_config().lake == LakeLocation("s3", "b-1", "p/q")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLWL_LAKE", "rel/lake")
    assert env_lake() == tmp_path / "rel" / "lake"  # made absolute: a worker's cwd is not the user's
    assert [a.uri for a in gold_assets()] == [f"file://{tmp_path}/rel/lake/gold/{t}" for t in GOLD]
    monkeypatch.delenv("CLWL_LAKE")
    assert env_lake() == ROOT / "lake"


def test_a_mistyped_store_lake_is_one_line_never_a_folder_named_s3(monkeypatch, tmp_path):
    from clwl.lake.storage import StorageError
    from clwl_dag_support import env_lake

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLWL_LAKE", "s3:/clwl-lake/lake")
    with pytest.raises(StorageError) as e:
        env_lake()
    assert "s3://clwl-lake/lake" in str(e.value) and "\n" not in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_same_lake_compares_locations_and_folders(tmp_path, monkeypatch):
    """The publish task's check that the Variable's lake is the one the Assets name."""
    from clwl_dag_support import same_lake

    monkeypatch.chdir(tmp_path)
    assert same_lake("s3://b-1/lake", "s3://b-1/lake/")
    assert not same_lake("s3://b-1/lake", "s3://b-1/other")
    assert not same_lake("s3://b-1/lake", tmp_path / "lake")
    assert same_lake("lake", tmp_path / "lake") and same_lake(f"file://{tmp_path}/lake", "lake")
    assert not same_lake(tmp_path / "lake", tmp_path / "other")
