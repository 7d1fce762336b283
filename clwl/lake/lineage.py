"""OpenLineage events of a run, built from what the run knows, without Spark (docs/lineage.md).

One stage of one run date is one OpenLineage run: a START naming what it reads, then a COMPLETE naming what it
wrote (or a FAIL with the error). Datasets are named by URI, as OpenLineage names files: a local path is
namespace ``file`` and its absolute path; an object-store location ``s3://<bucket>`` and its key. A Delta table
carries its version (the standard ``version`` facet) and its storage (``storage``: delta, parquet); a landing date
folder its file count and a digest of its files' names and sizes (``clwlLanding``). The quality gate's results ride
on the datasets it validated as the standard ``dataQualityAssertions`` facet, one assertion per expectation or
cross-table check, with its success; the gate's verdict is the run facet ``clwlGate`` (published or blocked).

clwl/lake/lineage_stages.py knows the stages and emits these events; this module only builds and serialises them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional
from uuid import UUID

import attr
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.generated.base import DatasetFacet, RunFacet
from openlineage.client.generated.data_quality_assertions_dataset import Assertion, DataQualityAssertionsDatasetFacet
from openlineage.client.generated.dataset_version_dataset import DatasetVersionDatasetFacet
from openlineage.client.generated.error_message_run import ErrorMessageRunFacet
from openlineage.client.generated.parent_run import ParentRunFacet
from openlineage.client.serde import Serde
from openlineage.client.uuid import generate_new_uuid

from clwl import __version__
from clwl.lake.storage import LakeLocation, location_uri

#: Who made the events (OpenLineage's ``producer``: a URI naming the software).
PRODUCER = f"https://github.com/clwl-analytics/clwl-analytics/tree/v{__version__}"
#: Our own facets' schema (documented in docs/lineage.md).
FACETS_SCHEMA = "https://github.com/clwl-analytics/clwl-analytics/blob/main/docs/lineage.md"
#: The jobs' namespace (OpenLineage's convention: the environment variable, else ours).
NAMESPACE_ENV = "OPENLINEAGE_NAMESPACE"
DEFAULT_NAMESPACE = "clwl"
#: The lake's folder of lineage files, one JSON-lines file a run: ``<lake>/lineage/<run_id>.jsonl``.
LINEAGE = "lineage"


@attr.define
class GateRunFacet(RunFacet):
    """The quality gate's verdict on a run date: published, or blocked with the failed expectations."""

    published: bool
    runDate: str  # noqa: N815 (OpenLineage's camel case)
    failures: list[str] = attr.field(factory=list)
    validationResult: Optional[str] = attr.field(default=None)  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return f"{FACETS_SCHEMA}#clwlgate"


@attr.define
class RunDateFacet(RunFacet):
    """Which clwl run and run date an OpenLineage run is a stage of (the run id names <lake>/validation/<run_id>)."""

    runId: str  # noqa: N815
    runDate: Optional[str] = attr.field(default=None)  # noqa: N815 (None: an ingest of several dates)

    @staticmethod
    def _get_schema() -> str:
        return f"{FACETS_SCHEMA}#clwlrun"


@attr.define
class LandingDatasetFacet(DatasetFacet):
    """A landing date folder: how many files it holds and a digest of their relative names and sizes."""

    fileCount: int  # noqa: N815
    digest: str

    @staticmethod
    def _get_schema() -> str:
        return f"{FACETS_SCHEMA}#clwllanding"


@attr.define
class StorageFacet(DatasetFacet):
    """Delta over Parquet (the standard ``storage`` facet's fields, with its own schema URL)."""

    storageLayer: str = "delta"  # noqa: N815
    fileFormat: str = "parquet"  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return "https://openlineage.io/spec/facets/1-0-0/StorageDatasetFacet.json#/$defs/StorageDatasetFacet"


def dataset_name(location: Path | str | LakeLocation) -> tuple[str, str]:
    """(namespace, name) of a file or folder, by OpenLineage's naming: ``file`` and the absolute path, or
    ``s3://<bucket>`` and the key."""
    uri = location_uri(location)
    scheme, _, rest = uri.partition("://")
    if scheme == "file":
        return "file", "/" + rest.lstrip("/")
    bucket, _, key = rest.partition("/")
    return f"{scheme}://{bucket}", key


def table_facets(version: Optional[int]) -> dict[str, DatasetFacet]:
    facets: dict[str, DatasetFacet] = {"storage": StorageFacet()}
    if version is not None:
        facets["version"] = DatasetVersionDatasetFacet(datasetVersion=str(version))
    return facets


def table_input(location: Path | str | LakeLocation, version: Optional[int],
                assertions: Optional[DataQualityAssertionsDatasetFacet] = None) -> InputDataset:
    namespace, name = dataset_name(location)
    return InputDataset(namespace, name, facets=table_facets(version),
                        inputFacets={"dataQualityAssertions": assertions} if assertions else {})


def table_output(location: Path | str | LakeLocation, version: Optional[int],
                 assertions: Optional[DataQualityAssertionsDatasetFacet] = None) -> OutputDataset:
    """A Delta table written, at its version; ``assertions``: the gate's results on it (a gold table)."""
    namespace, name = dataset_name(location)
    facets = table_facets(version)
    if assertions:
        facets["dataQualityAssertions"] = assertions  # what a catalog shows beside the gold table's version
    return OutputDataset(namespace, name, facets=facets)


def folder_input(location: Path | str | LakeLocation,
                 files: Optional[Iterable[tuple[str, int]]] = None) -> InputDataset:
    """A folder read, e.g. a landing date; ``files``: its (relative name, size) pairs, for the count and digest."""
    namespace, name = dataset_name(location)
    facets: dict[str, DatasetFacet] = {}
    if files is not None:
        listed = sorted(files)
        digest = hashlib.sha256("".join(f"{n}\t{s}\n" for n, s in listed).encode()).hexdigest()
        facets["clwlLanding"] = LandingDatasetFacet(fileCount=len(listed), digest=f"sha256:{digest}")
    return InputDataset(namespace, name, facets=facets)


def folder_output(location: Path | str | LakeLocation) -> OutputDataset:
    namespace, name = dataset_name(location)
    return OutputDataset(namespace, name)


def assertions_facet(result: Mapping[str, Any]) -> DataQualityAssertionsDatasetFacet:
    """One assertion per expectation of a suite's validation result (Great Expectations' JSON, as kept under
    ``<lake>/validation/<run_id>/``) and per cross-table check (its ``extra_checks``), each with its success."""
    assertions = []
    for r in result.get("results") or []:
        config = r.get("expectation_config") or {}
        kwargs = config.get("kwargs") or {}
        column = kwargs.get("column") or (", ".join(kwargs["column_list"]) if kwargs.get("column_list") else None)
        assertions.append(Assertion(assertion=str(config.get("type")), success=bool(r.get("success")),
                                    column=column, severity=config.get("severity")))
    for check in result.get("extra_checks") or []:
        assertions.append(Assertion(assertion=str(check.get("check")), success=bool(check.get("success")),
                                    column=check.get("column"), description=check.get("description")))
    return DataQualityAssertionsDatasetFacet(assertions=assertions)


def parent_facet(run_id: str, namespace: str, name: str,
                 root: Optional[tuple[str, str, str]] = None) -> ParentRunFacet:
    """The run a stage belongs to (``clwl run``'s own run, or the Airflow task instance's, as the OpenLineage
    provider names it); ``root``: (run id, namespace, job name) of the outermost run (the DAG run)."""
    from openlineage.client.generated.parent_run import Job as ParentJob
    from openlineage.client.generated.parent_run import Root, RootJob, RootRun
    from openlineage.client.generated.parent_run import Run as ParentRun

    return ParentRunFacet(run=ParentRun(runId=run_id), job=ParentJob(namespace=namespace, name=name),
                          root=Root(run=RootRun(runId=root[0]), job=RootJob(namespace=root[1], name=root[2]))
                          if root else None)


def new_run_uuid() -> str:
    """An OpenLineage run id (a UUID, time-ordered): one per stage run, shared by its START and its end."""
    return str(generate_new_uuid())


def namespace() -> str:
    """The jobs' namespace now: $OPENLINEAGE_NAMESPACE, else ours."""
    return os.environ.get(NAMESPACE_ENV, "").strip() or DEFAULT_NAMESPACE


def stage_event(state: str, job: str, run_uuid: str | UUID, *,
                inputs: Iterable[InputDataset] = (), outputs: Iterable[OutputDataset] = (),
                parent: Optional[ParentRunFacet] = None, run_facets: Optional[Mapping[str, RunFacet]] = None,
                error: Optional[BaseException] = None) -> RunEvent:
    """One event of the job ``job`` (in :func:`namespace`), now: ``state`` START, COMPLETE or FAIL (a FAIL carries
    ``error`` as the errorMessage facet)."""
    facets: dict[str, RunFacet] = dict(run_facets or {})
    if parent is not None:
        facets["parent"] = parent
    if error is not None:
        facets["errorMessage"] = ErrorMessageRunFacet(message=f"{type(error).__name__}: {error}"[:2000],
                                                      programmingLanguage="python")
    when = dt.datetime.now(dt.timezone.utc).isoformat()
    return RunEvent(eventType=RunState[state], eventTime=when, run=Run(runId=str(run_uuid), facets=facets),
                    job=Job(namespace=namespace(), name=job), producer=PRODUCER,
                    inputs=list(inputs), outputs=list(outputs))


def to_line(event: RunEvent) -> str:
    """The event as one line of JSON (OpenLineage's own serialisation)."""
    return Serde.to_json(event).replace("\n", " ")
