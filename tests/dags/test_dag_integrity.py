"""DAG integrity for Airflow 3.3: the dags/ folder parses (in a fresh interpreter, quickly, without pyspark,
delta, Great Expectations or deltalake), each DAG has tags, retries and the intended schedule, and the ad-hoc
params' JSON schema accepts what it should and rejects what it should not."""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from dagtest_support import DAGS, ROOT

pytestmark = pytest.mark.airflow

DAG_IDS = {"clwl_nightly", "clwl_reports", "clwl_adhoc"}
HEAVY_MODULES = ("pyspark", "delta", "great_expectations", "deltalake", "py4j")

PARSE_SCRIPT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])  # the bundle folder, as the DAG processor's BundleDagBag does
t0 = time.perf_counter()
from airflow.dag_processing.dagbag import DagBag
t1 = time.perf_counter()
bag = DagBag(dag_folder=sys.argv[1])
t2 = time.perf_counter()
print("@@" + json.dumps({
    "import_errors": bag.import_errors,
    "dag_ids": sorted(bag.dag_ids),
    "files": {s.file: s.duration.total_seconds() for s in bag.dagbag_stats},
    "parse_seconds": t2 - t1,
    "import_airflow_seconds": t1 - t0,
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in %r),
}))
""" % (HEAVY_MODULES,)


@pytest.fixture(scope="module")
def parsed_in_subprocess(airflow_db):
    proc = subprocess.run([sys.executable, "-c", PARSE_SCRIPT, str(DAGS)], env=os.environ.copy(),
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("@@"))
    return json.loads(line[2:])


@pytest.fixture(scope="module")
def dags(airflow_db):
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    assert not bag.import_errors, bag.import_errors
    return bag.dags


def test_dag_folder_parses_fast_without_spark(parsed_in_subprocess):
    r = parsed_in_subprocess
    assert r["import_errors"] == {}
    assert set(r["dag_ids"]) == DAG_IDS  # and no example DAGs (AIRFLOW__CORE__LOAD_EXAMPLES=False)
    assert r["heavy"] == [], f"parsing the DAGs imported {r['heavy']}"
    assert not any(f.endswith("clwl_dag_support.py") for f in r["files"]), ".airflowignore must skip the helper"
    assert max(r["files"].values()) < 2.0 and r["parse_seconds"] < 5.0, r


def test_every_dag_has_tags_retries_and_owner(dags):
    assert set(dags) == DAG_IDS
    for dag in dags.values():
        assert "clwl" in dag.tags and len(dag.tags) >= 2, dag.dag_id
        assert dag.catchup is False, dag.dag_id
        for t in dag.tasks:
            assert t.retries == 2, (dag.dag_id, t.task_id)
            assert t.retry_exponential_backoff > 0 and t.retry_delay == dt.timedelta(minutes=5), t.task_id
            assert t.owner == "clwl"


def test_nightly_schedule_and_tasks(dags):
    from airflow.sdk import CronDataIntervalTimetable

    dag = dags["clwl_nightly"]
    assert isinstance(dag.timetable, CronDataIntervalTimetable)
    assert dag.timetable.expression == "30 2 * * *" and str(dag.timetable.timezone) == "UTC"
    assert dag.max_active_runs == 1
    order = ["ingest", "changed", "replay", "detect", "publish", "report"]  # changed: skips an unchanged date
    assert sorted(dag.task_ids) == sorted([*order, "metrics"])
    for up, down in zip(order, order[1:]):
        assert dag.get_task(up).downstream_task_ids == ({down, "metrics"} if up == "publish" else {down})
    # The Prometheus gauges after the publish, a blocked one too; a leaf beside report, which keeps that run failed.
    assert dag.get_task("metrics").trigger_rule == "all_done" and not dag.get_task("metrics").downstream_task_ids
    lake = os.environ.get("CLWL_LAKE") or str(ROOT / "lake")
    assert [a.uri for a in dag.get_task("publish").outlets] == [
        f"file://{lake}/gold/{t}"
        for t in ("routing_replay", "stuck_messages", "distribution", "trend_facts", "queue_depth", "run_summary")]
    assert dag.params["run_date"] is None


def test_reports_scheduled_on_the_gold_assets(dags):
    from airflow.sdk.definitions.timetables.assets import AssetTriggeredTimetable

    reports, nightly = dags["clwl_reports"], dags["clwl_nightly"]
    assert isinstance(reports.timetable, AssetTriggeredTimetable)
    condition = reports.timetable.asset_condition
    assert type(condition).__name__ == "AssetAll"  # a report needs all four tables; publish writes them together
    assert [a.uri for a in condition.objects] == [a.uri for a in nightly.get_task("publish").outlets]
    assert dags["clwl_adhoc"].get_task("publish").outlets == nightly.get_task("publish").outlets
    assert dags["clwl_adhoc"].get_task("publish_whatif").outlets == []


def test_adhoc_is_manual_only_with_validated_params(dags):
    from airflow.sdk.definitions.param import ParamsDict
    from airflow.sdk.definitions.timetables.simple import NullTimetable
    from airflow.sdk.exceptions import ParamValidationError

    dag = dags["clwl_adhoc"]
    assert isinstance(dag.timetable, NullTimetable) and not dag.timetable.can_be_scheduled

    def check(conf: dict) -> dict:
        params = ParamsDict(copy.deepcopy(dag.params))  # ParamsDict shares its Param objects: copy them
        for k, v in conf.items():
            params[k] = v  # validates this param against its JSON schema
        return params.validate()  # and the rest (a required param without a value fails here)

    good = check({"run_date": "2026-11-20", "sending_qmgrs": ["QM1"], "cluster": "CL1", "profile": "mq9",
                  "channel_attrs": {"TO.QM2": {"CLWLWGHT": "20", "CLWLPRTY": 3}}, "suspend": ["QM3"],
                  "channel_state": {"TO.QM3": "RETRYING"}, "queue_attrs": {"APP.ORDERS@QM4": {"PUT": "DISABLED"}},
                  "whatif_name": "qm2-w20"})
    assert good["profile"] == "mq9" and good["channel_attrs"]["TO.QM2"]["CLWLWGHT"] == "20"
    for bad in ({}, {"run_date": "20-11-2026"}, {"run_date": "2026-11-20", "profile": "mq8"},
                {"run_date": "2026-11-20", "channel_state": {"TO.QM3": "BROKEN"}},
                {"run_date": "2026-11-20", "channel_attrs": {"TO.QM2": "CLWLWGHT=20"}},
                {"run_date": "2026-11-20", "queue_attrs": {"APP.ORDERS": {"PUT": "DISABLED"}}},
                {"run_date": "2026-11-20", "sending_qmgrs": "QM1"},
                {"run_date": "2026-11-20", "whatif_name": "../gold"}):
        with pytest.raises(ParamValidationError):
            check(bad)


def test_adhoc_refuses_a_trailing_newline_and_a_number_that_is_not_an_integer(dags):
    """Issue 25 item 4: every pattern is anchored at the very end (Python's "$" takes a final newline), and
    80.0 (an integer to JSON Schema) is refused when the run is planned, naming the override."""
    from airflow.sdk.definitions.param import ParamsDict
    from airflow.sdk.exceptions import ParamValidationError

    from clwl_dag_support import adhoc_plan

    dag = dags["clwl_adhoc"]
    for bad in ({"run_date": "2026-11-20\n"}, {"run_date": "2026-11-20", "sending_qmgrs": ["QM1\n"]},
                {"run_date": "2026-11-20", "cluster": "CL1\n"}, {"run_date": "2026-11-20", "whatif_name": "w80\n"},
                {"run_date": "2026-11-20", "suspend": ["QM3\n"]}):
        params = ParamsDict(copy.deepcopy(dag.params))
        with pytest.raises(ParamValidationError):
            for k, v in bad.items():
                params[k] = v
    for bad, says in (({"channel_attrs": {"TO.QM2": {"CLWLWGHT": 80.0}}}, "channel_attrs/TO.QM2/CLWLWGHT"),
                      ({"queue_attrs": {"APP.ORDERS@QM4": {"CLWLRANK": True}}}, "queue_attrs/APP.ORDERS@QM4"),
                      ({"whatif_name": "w80\n", "suspend": ["QM3"]}, "name")):
        with pytest.raises(ValueError, match=f"what-if: {says}"):
            adhoc_plan({"run_date": "2026-11-20", **bad})


def test_profiles_enum_matches_the_algorithm():
    from clwl.engine.algorithm import PROFILES
    from clwl_dag_support import PROFILES as DAG_PROFILES

    assert sorted(DAG_PROFILES) == sorted(PROFILES)


def test_adhoc_plan_what_if_or_republish():
    from clwl_dag_support import adhoc_plan

    plain = adhoc_plan({"run_date": "2026-11-20", "profile": "default", "channel_attrs": {}, "suspend": []})
    assert plain == {"run_date": "2026-11-20", "profile": "default", "whatif": None, "senders": None,
                     "cluster": None}
    w = adhoc_plan({"run_date": "2026-11-20", "channel_attrs": {"TO.QM2": {"CLWLWGHT": "20"}}})
    assert w["whatif"]["channel_attrs"] == {"TO.QM2": {"CLWLWGHT": "20"}} and w["whatif"]["name"].startswith("adhoc-")
    assert adhoc_plan({"run_date": "2026-11-20", "sending_qmgrs": ["QM5"]})["whatif"] is not None  # narrowed
    assert adhoc_plan({"run_date": "2026-11-20", "cluster": "CL1"})["whatif"] is not None
    assert adhoc_plan({"run_date": "2026-11-20", "whatif_name": "base"})["whatif"] == {"name": "base"}
    with pytest.raises(ValueError):
        adhoc_plan({"run_date": ""})
    # A typo never makes a plain re-run; values are checked with the CLI's schema (clwl/analyses/whatif.py).
    for bad in ({"channel_attr": {"TO.QM2": {"CLWLWGHT": 20}}}, {"channel_attrs": {"TO.QM2": {"CLWLWGHT": "abc"}}},
                {"channel_attrs": {"TO.QM2": {"CLWLWGHT": 100}}}, {"channel_state": {"TO.QM3": "DOWN"}}):
        with pytest.raises(ValueError):
            adhoc_plan({"run_date": "2026-11-20", **bad})


def test_adhoc_params_use_the_what_if_schema():
    """The DAG's params for the overrides are the CLI's JSON Schema parts, so a value the CLI refuses is
    refused when the run is triggered too."""
    import jsonschema

    from clwl.analyses.whatif import OVERRIDES
    from clwl_dag_support import ADHOC_PARAMS

    for key, schema in OVERRIDES.items():
        param = ADHOC_PARAMS[key].schema
        assert {k: v for k, v in param.items() if k in schema} == schema, key
    bad = {"TO.QM2": {"CLWLWGHT": "abc"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, ADHOC_PARAMS["channel_attrs"].schema)


def test_run_id_resolution():
    from clwl_dag_support import pipeline_run_id

    scheduled = SimpleNamespace(dag_id="clwl_nightly", run_id="scheduled__2026-11-20T02:30:00+00:00")
    rid = pipeline_run_id({"dag_run": scheduled})
    assert rid == "clwl_nightly__scheduled__2026-11-20T02-30-00-00-00" and "/" not in rid and ":" not in rid


def test_a_bad_run_date_fails_the_task_at_once_in_one_line():
    """A run date that is not a date fails the task without retries (AirflowFailException) and says so in one
    line; it stays a ValueError for adhoc_plan's callers."""
    from airflow.sdk.exceptions import AirflowFailException

    from clwl_dag_support import check_date

    for bad in ("2026-13-45", "20261120", "", "2026-11-20T00:00"):
        with pytest.raises(AirflowFailException) as e:
            check_date(bad)
        assert isinstance(e.value, ValueError) and "\n" not in str(e.value) and "run_date" in str(e.value)
    assert check_date("2026-11-20") == "2026-11-20"
