"""Helpers for the DAG tests (imported by conftest.py and the test modules; importing this does not import
airflow, so conftest.py can configure Airflow first)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from clwl.lake.door import GOLD_TABLES

ROOT = Path(__file__).resolve().parents[2]
DAGS = ROOT / "dags"
RUN_DATE = "2026-11-20"
UTC = dt.timezone.utc
GOLD = GOLD_TABLES


def load_dag(dag_id: str, *, no_retries: bool = True):
    """Parse dags/ afresh (Asset URIs follow the current CLWL_LAKE) and return one DAG.

    no_retries: for dag.test() only. The DAGs retry twice after 5 and 10 minutes; in a test an unexpected error
    should fail at once instead of waiting (a failed quality gate never retries anyway)."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    assert not bag.import_errors, bag.import_errors
    dag = bag.dags[dag_id]
    if no_retries:
        for t in dag.tasks:
            t.retries = 0
    return dag


def run_state(dag_run) -> str:
    return str(getattr(dag_run.state, "value", dag_run.state))


def task_states(dag_run) -> dict[str, str]:
    from airflow.utils.session import create_session

    with create_session() as session:
        return {ti.task_id: str(getattr(ti.state, "value", ti.state))
                for ti in dag_run.get_task_instances(session=session)}


def delta_versions(root: Path, exclude: tuple[str, ...] = ()) -> dict[str, int]:
    """Delta version of every table under `root` (relative path -> version), skipping `exclude` prefixes."""
    from clwl.lake.door import latest_version

    out = {}
    for log_dir in sorted(root.rglob("_delta_log")):
        rel = log_dir.parent.relative_to(root).as_posix()
        if not rel.startswith(exclude):
            out[rel] = latest_version(log_dir.parent)
    return out
