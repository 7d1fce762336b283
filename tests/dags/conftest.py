"""Real Airflow for the DAG tests: a temporary AIRFLOW_HOME with a SQLite metadata database, migrated once per
test session with `airflow db migrate`, and the project's dags/ folder as the DAGs folder.

Airflow reads its configuration when it is first imported, so the AIRFLOW_* variables are set here, at import
time of this conftest, before anything imports airflow. The CLWL_* variables (the lake and the landing root)
are set only while the DAG tests' fixtures are active and restored afterwards.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dagtest_support import DAGS, ROOT, UTC, load_dag, task_states  # imports no airflow

SAMPLES_LANDING = ROOT / "samples" / "landing"

if "airflow" in sys.modules and not os.environ.get("CLWL_TEST_AIRFLOW_HOME"):
    raise pytest.UsageError("airflow was imported before tests/dags/conftest.py could point it at a temporary "
                            "AIRFLOW_HOME; run the DAG tests in their own pytest process")

_OWN_HOME = not os.environ.get("CLWL_TEST_AIRFLOW_HOME")
_HOME = Path(os.environ.get("CLWL_TEST_AIRFLOW_HOME") or tempfile.mkdtemp(prefix="clwl-airflow-"))
os.environ.update({
    "CLWL_TEST_AIRFLOW_HOME": str(_HOME),
    "AIRFLOW_HOME": str(_HOME),
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
    "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{_HOME / 'airflow.db'}",
    # Unpaused on creation, so an asset event queues a run of clwl_reports and the test can see it.
    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
    "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
})
# The DAG processor puts the bundle folder on sys.path (BundleDagBag); the DagBag the tests use does not.
if str(DAGS) not in sys.path:
    sys.path.insert(0, str(DAGS))


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """`airflow db migrate` once per session (a fresh SQLite file is created from the models, then stamped)."""
    t0 = time.perf_counter()
    cli = Path(sys.executable).with_name("airflow")
    cmd = [str(cli), "db", "migrate"] if cli.exists() else [sys.executable, "-m", "airflow", "db", "migrate"]
    proc = subprocess.run(cmd, env=os.environ.copy(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"airflow db migrate failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    print(f"airflow db migrate: {time.perf_counter() - t0:.1f}s")
    yield _HOME
    if _OWN_HOME:
        shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture(scope="module")
def clwl_env(tmp_path_factory, airflow_db):
    """A landing folder copied from samples/landing and an empty lake, as CLWL_LANDING / CLWL_LAKE (module
    scope: restored before other test folders run in the same session)."""
    base = tmp_path_factory.mktemp("clwl-dags")
    landing = base / "landing"
    shutil.copytree(SAMPLES_LANDING, landing)
    lake = base / "lake"
    saved = {k: os.environ.get(k) for k in ("CLWL_LAKE", "CLWL_LANDING", "CLWL_SPARK_MASTER")}
    os.environ["CLWL_LAKE"] = str(lake)
    os.environ["CLWL_LANDING"] = str(landing)
    os.environ.pop("CLWL_SPARK_MASTER", None)  # local[2], the session the `spark` fixture starts
    yield {"base": base, "landing": landing, "lake": lake}
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def nightly_run(clwl_env, spark):
    """clwl_nightly end to end with dag.test(): logical date 2026-11-20 and no run_date, so the run date comes from
    the rule's manual-trigger case, the logical date given (its data interval, which Airflow infers as
    [11-18 02:30, 11-19 02:30), is not the day: test_dag_runs checks gold holds 11-20 only) (tasks run in this
    process and share the `spark` fixture's session: get_spark reuses the active one). The Variable
    clwl_metrics_file names ``metrics_file``: the `metrics` task writes the day's Prometheus gauges there."""
    from airflow.models.variable import Variable

    dag = load_dag("clwl_nightly")
    metrics_file = clwl_env["base"] / "clwl.prom"
    Variable.set("clwl_metrics_file", str(metrics_file))
    t0 = time.perf_counter()
    try:
        dag_run = dag.test(logical_date=dt.datetime(2026, 11, 20, tzinfo=UTC))
    finally:
        Variable.delete("clwl_metrics_file")
    seconds = time.perf_counter() - t0
    print(f"clwl_nightly dag.test: {seconds:.1f}s")
    return {"dag_run": dag_run, "states": task_states(dag_run), "lake": clwl_env["lake"], "seconds": seconds,
            "metrics_file": metrics_file}
