"""The run's OpenLineage events: START, then COMPLETE or FAIL, for each stage of each run date (docs/lineage.md).

The events are built in clwl/lake/lineage.py; this module knows the stages and writes the run's file. It needs no
Spark. The stages carry it themselves (:func:`lineage_stage` on replay_stage, detect_stage, publish_stage and
report_stage in spark/pipeline.py; :func:`ingest_lineage` around the ingest), so `clwl run` and the DAG tasks emit
the same events. What a stage wrote is found cheaply, without Spark: the lake's tables whose Delta version moved
while it ran (versions read from the logs' file names), the publish's own versions and validation results, the
report's folder. The events' parent is `clwl run`'s own run (:func:`run_lineage`), or under Airflow the task
instance's run as the OpenLineage provider names it (:func:`set_parent`, from the DAG support module), so the
DAG's events and ours share ids.

Transport: every event is appended to ``<lake>/lineage/<run_id>.jsonl`` through the lake's storage (an s3:// lake
too), no network; when ``OPENLINEAGE_URL`` (or ``OPENLINEAGE_CONFIG``) is set, the client also sends it there,
as the client configures itself (Marquez, OpenMetadata; a key in ``OPENLINEAGE_API_KEY``, never in code).
Lineage never fails a run: a failure to build or emit an event is a warning in the log.
"""

from __future__ import annotations

import functools
import logging
import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from clwl.lake.door import GOLD_TABLES, RUN_INPUTS, STAGING_KEYS, TABLE_KEYS, Lake
from clwl.lake.lineage import (
    LINEAGE,
    GateRunFacet,
    RunDateFacet,
    assertions_facet,
    dataset_name,
    folder_input,
    folder_output,
    namespace,
    new_run_uuid,
    parent_facet,
    stage_event,
    table_input,
    table_output,
    to_line,
)
from clwl.lake.storage import lake_root, store_for

log = logging.getLogger(__name__)

#: The run the stages of this process belong to (OpenLineage's parent run facet).
_PARENT: ContextVar[Any] = ContextVar("clwl_lineage_parent", default=None)
#: Whether the client sends events beyond the lake's file (the client's own environment variables).
REMOTE_ENV = ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG")
_MAX_FILE = 1 << 30  # an object-store lineage file is read whole to append a line


def lineage_file(lake: Lake, run_id: str):
    """``<lake>/lineage/<run_id>.jsonl``: the run's events, one JSON object a line, in order."""
    return lake.root / LINEAGE / f"{run_id}.jsonl"


def emit(lake: Lake, run_id: str, event) -> None:
    """Append ``event`` to the run's lineage file, and send it when an endpoint is configured. Never raises."""
    try:
        line = (to_line(event) + "\n").encode("utf-8")
        path = lineage_file(lake, run_id)
        store_for(path).append(path, line, _MAX_FILE)  # on an object store: the file so far and this line, whole
        client = _remote_client()
        if client is not None:
            client.emit(event)
    except Exception as e:  # lineage is a record of the run, never a reason to fail it
        log.warning("lineage: could not emit %s of %s (run %s): %s", getattr(event, "eventType", "?"),
                    getattr(getattr(event, "job", None), "name", "?"), run_id, e)


@functools.lru_cache(maxsize=1)
def _remote_client_for(config: tuple) -> Any:
    from openlineage.client import OpenLineageClient

    return OpenLineageClient()


def _remote_client() -> Any:
    config = tuple(os.environ.get(k, "") for k in REMOTE_ENV)
    return _remote_client_for(config) if any(config) else None


def _versions(lake: Lake, keys: Sequence[str]) -> dict[str, int]:
    """The tables' latest versions, from their Delta logs' file names (None, left out: no table)."""
    return {k: v for k in keys if (v := lake.version(k)) is not None}


@dataclass
class _Stage:
    result: Any = None  # what the stage returned (a PublishOutcome, the report's paths)


@contextmanager
def stage_lineage(stage: str, run_id: str, run_date: Optional[str], *, reads: Lake, writes: Lake,
                  read_keys: Sequence[str] = (), write_keys: Sequence[str] = (*TABLE_KEYS, *STAGING_KEYS),
                  landing: Sequence[Any] = ()) -> Iterator[_Stage]:
    """START now (the tables ``read_keys`` at their versions, the ``landing`` folders), then COMPLETE with every
    table of ``write_keys`` in ``writes`` whose version moved (or FAIL with the error, raised again). A key
    ``staging.*`` or ``gold.*`` is read from ``writes`` (a what-if run's own lake), the rest from ``reads``."""
    box = _Stage()
    started = None
    try:
        ol_run = new_run_uuid()
        parent = _PARENT.get()
        if isinstance(parent, _ParentRun):
            parent.start()
            parent = parent.facet
        facets = {"clwlRun": RunDateFacet(runId=run_id, runDate=run_date)}
        written = tuple(write_keys)
        before = _versions(writes, written)
        read = {k: _versions(_lake_of(k, reads, writes), [k]).get(k) for k in read_keys}
        inputs = [table_input(_lake_of(k, reads, writes).table(k), v) for k, v in read.items() if v is not None]
        inputs += list(landing)
        emit(writes, run_id, stage_event("START", f"clwl.{stage}", ol_run, inputs=inputs,
                                         parent=parent, run_facets=facets))
        started = (ol_run, parent, facets, before, written, inputs)
    except Exception as e:
        log.warning("lineage: no events for %s %s (run %s): %s", stage, run_date, run_id, e)
    try:
        yield box
    except BaseException as error:
        if started:
            ol_run, parent, facets, *_ = started
            emit(writes, run_id, stage_event("FAIL", f"clwl.{stage}", ol_run, parent=parent,
                                             run_facets=facets, error=error))
        raise
    if not started:
        return
    try:
        ol_run, parent, facets, before, written, inputs = started
        after = _versions(writes, written)
        moved = {k: v for k, v in after.items() if v != before.get(k)}
        inputs, outputs, facets = _ended(box.result, reads, writes, moved, inputs, dict(facets), run_date)
        emit(writes, run_id, stage_event("COMPLETE", f"clwl.{stage}", ol_run, inputs=inputs,
                                         outputs=outputs, parent=parent, run_facets=facets))
    except Exception as e:
        log.warning("lineage: no COMPLETE event for %s %s (run %s): %s", stage, run_date, run_id, e)


def _lake_of(key: str, reads: Lake, writes: Lake) -> Lake:
    return writes if key.split(".", 1)[0] in ("staging", "gold") else reads


def _ended(result: Any, reads: Lake, writes: Lake, moved: dict, inputs: list, facets: dict, run_date: Optional[str]):
    """(inputs, outputs, run facets) of a stage that ended: the tables it moved; for the publish, the gate's
    assertions on the tables it validated and its verdict; for the report, its folder."""
    assertions: dict[str, Any] = {}
    versions = dict(moved)
    if hasattr(result, "outcomes") and hasattr(result, "published"):  # spark.publish.PublishOutcome
        for outcome in result.outcomes:
            assertions[outcome.table] = assertions_facet(outcome.result_json)
        versions.update(result.table_versions)
        facets["clwlGate"] = GateRunFacet(published=bool(result.published), runDate=str(run_date),
                                          failures=list(result.failures),
                                          validationResult=str(result.result_path) if result.result_path else None)
        # The gate validated the staged tables (and silver): the assertions are on them as inputs too.
        by_name = {dataset_name(writes.table(f"staging.{t}"))[1]: assertions.get(f"gold.{t}") for t in GOLD_TABLES}
        by_name.update({dataset_name(reads.table(k))[1]: assertions[k] for k in RUN_INPUTS if k in assertions})
        inputs = _with_assertions(inputs, by_name)
    outputs = [table_output(writes.table(k), v, assertions.get(k)) for k, v in sorted(versions.items())
               if k in moved or k.startswith("gold.")]
    if isinstance(result, tuple) and len(result) == 2 and all(isinstance(p, str) for p in result):
        outputs.append(folder_output(lake_root(result[0]).parent))  # the report's folder (html, md)
    return inputs, outputs, facets


def _with_assertions(datasets: list, by_name: dict) -> list:
    """The inputs, each with the gate's assertions on it (``by_name``: dataset name -> facet) as an input facet."""
    for dataset in datasets:
        facet = by_name.get(dataset.name)
        if facet is not None:
            dataset.inputFacets = {**(dataset.inputFacets or {}), "dataQualityAssertions": facet}
    return datasets


def lineage_stage(stage: str, read_keys: Sequence[str] = (), write_keys: Sequence[str] = ()) -> Callable:
    """A stage function ``(spark, run, run_date, ...)`` with its START and COMPLETE/FAIL events: ``read_keys`` its
    input tables, ``write_keys`` the tables it may write."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def staged(spark, run, run_date, *args, **kwargs):
            with stage_lineage(stage, run.run_id, run_date, reads=run.lake, writes=run.out_lake,
                               read_keys=read_keys, write_keys=write_keys) as box:
                box.result = fn(spark, run, run_date, *args, **kwargs)
            return box.result

        return staged

    return wrap


def landing_inputs(landing: Any, run_dates: Sequence[str]) -> list:
    """Each run date's landing folder, with its file count and digest when it is a local folder."""
    datasets = []
    for d in run_dates:
        folder = landing / d if not isinstance(landing, str) else Path(landing) / d
        files = None
        if isinstance(folder, Path) and folder.is_dir():  # a landing folder on this machine (never on a store)
            files = [(p.relative_to(folder).as_posix(), p.stat().st_size)
                     for p in Path(folder).rglob("*") if p.is_file()]
        datasets.append(folder_input(folder, files))
    return datasets


@contextmanager
def ingest_lineage(lake: Lake, landing_root: Any, run_id: str, run_dates: Sequence[str]) -> Iterator[_Stage]:
    """The ingest's events: the landing folders of ``run_dates`` (under ``landing_root``) in, the bronze and silver
    tables it wrote to ``lake`` out."""
    try:
        landing = landing_inputs(landing_root, run_dates)
    except Exception as e:
        log.warning("lineage: landing folders of %s not listed: %s", ", ".join(run_dates), e)
        landing = []
    bronze_silver = tuple(k for k in TABLE_KEYS if k.split(".", 1)[0] in ("bronze", "silver"))
    with stage_lineage("ingest", run_id, run_dates[0] if len(run_dates) == 1 else None, reads=lake, writes=lake,
                       write_keys=bronze_silver, landing=landing) as box:
        yield box


def set_parent(parent: Any) -> None:
    """Make ``parent`` (:func:`clwl.lake.lineage.parent_facet`) the parent run of this process's stage events:
    under Airflow, the task instance's OpenLineage run (dags/clwl_dag_support.py, lineage_parent)."""
    _PARENT.set(parent)


@dataclass
class _ParentRun:
    """`clwl run`'s own OpenLineage run: started by its first stage, so a run with nothing to do writes nothing."""

    lake: Lake
    run_id: str
    ol_run: str
    started: bool = False

    @property
    def facet(self):
        return parent_facet(self.ol_run, namespace(), "clwl.run")

    def start(self) -> None:
        if not self.started:
            self.started = True
            emit(self.lake, self.run_id, stage_event("START", "clwl.run", self.ol_run))


@contextmanager
def run_lineage(lake: Lake, run_id: str) -> Iterator[None]:
    """`clwl run` as an OpenLineage run (job ``clwl.run``), the parent of its stages' runs; its START comes with its
    first stage's, its COMPLETE (or FAIL) at the end, none at all when no stage ran."""
    parent = _ParentRun(lake, run_id, new_run_uuid())
    token = _PARENT.set(parent)
    try:
        yield
    except BaseException as error:
        if parent.started:
            emit(lake, run_id, stage_event("FAIL", "clwl.run", parent.ol_run, error=error))
        raise
    finally:
        _PARENT.reset(token)
    if parent.started:
        emit(lake, run_id, stage_event("COMPLETE", "clwl.run", parent.ol_run))
