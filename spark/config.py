"""The one configuration object for the pipeline's Spark jobs.

Importable without pyspark (DAG files and the CLI read it), and it holds no credentials: the lake is a
location (clwl/lake/storage.py): a local or mounted folder (a Path), or ``s3://bucket/prefix`` (a LakeLocation) whose
credentials are read from the environment where they are used, never kept here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from clwl.lake.door import DEFAULT_LAKE, REPORTS, Lake, default_lake_location
from clwl.lake.storage import LakeLocation, absolute_location, lake_root

#: The source checkout this package lives in (an editable install keeps it there).
REPO_ROOT = Path(__file__).resolve().parents[1]

#: Where pyproject.toml's data-files puts the quality gate's suites in an installed package, under its prefix.
INSTALLED_EXPECTATIONS = Path("share") / "clwl-analytics" / "expectations"


def expectations_dir() -> Path:
    """The folder of the quality gate's suites (`<layer>.<table>.json`): the checkout's `expectations/` (source
    tree, editable install), else the copy a wheel installed under its prefix, located through the installed
    distribution's file list (so a venv, `--user` or system install alike). Neither: the checkout's path, so
    loading a suite names the folder it looked in."""
    checkout = REPO_ROOT / "expectations"
    if checkout.is_dir():
        return checkout
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("clwl-analytics")
    except PackageNotFoundError:
        dist = None
    for f in (dist.files or []) if dist is not None else []:
        if f.suffix == ".json" and tuple(f.parent.parts[-3:]) == INSTALLED_EXPECTATIONS.parts:
            return Path(dist.locate_file(f)).resolve().parent
    return checkout

_ENV = {  # the lake's variable, CLWL_LAKE, is read by clwl.lake.door.default_lake_location (the one default)
    "landing": "CLWL_LANDING",
    "master": "CLWL_SPARK_MASTER",
    "remote": "CLWL_SPARK_REMOTE",
}


#: ``spark`` turns on the put CSV fast path (PipelineConfig.put_csv_reader).
PUT_CSV_READER_ENV = "CLWL_PUT_CSV_READER"


def _abs(p: Path | str) -> Path:
    # Absolute paths: Spark executors, deltalake and Airflow tasks may not share the caller's cwd.
    return Path(p).expanduser().absolute()


def _location(p: Path | str | LakeLocation) -> Path | LakeLocation:
    """The lake as a location: ``s3://...`` a LakeLocation (a typo of one: StorageError, one line), else an
    absolute Path."""
    return absolute_location(lake_root(p))


@dataclass(frozen=True)
class PipelineConfig:
    lake: Path | LakeLocation = field(default_factory=lambda: DEFAULT_LAKE)
    landing: Path = field(default_factory=lambda: REPO_ROOT / "samples" / "landing")
    master: str = "local[2]"
    # A Spark Connect server to attach to (`sc://host:port`, `python -m spark.connect_server`) instead of starting a
    # JVM in this process; None: a session of its own on `master`.
    remote: str | None = None
    reports: Path | LakeLocation | None = None  # None -> <lake>/reports
    shuffle_partitions: int = 4
    # How a run reads and shows: carried here, not through os.environ, from the command line or the environment.
    trace_tz: str | None = None  # the zone activity traces print local times in (None: UTC)
    verbose: bool = False  # Spark's own output on the terminal instead of its log file
    # Put CSV files whose every record is clean read by Spark's CSV reader (the rest by the Python parser, the same
    # rows either way: spark/ingest/put_csv.py); off by default, slower than the parser on 2 cores.
    put_csv_reader: bool = False

    def __post_init__(self) -> None:
        lake = _location(self.lake)
        object.__setattr__(self, "lake", lake)
        object.__setattr__(self, "landing", _abs(self.landing))
        object.__setattr__(self, "reports", _location(self.reports) if self.reports is not None
                           else lake / REPORTS)
        if not self.master:
            raise ValueError("master must not be empty")
        if self.remote is not None and not str(self.remote).startswith("sc://"):
            raise ValueError(f"remote must be a Spark Connect URL sc://host:port, got {self.remote!r}")
        if int(self.shuffle_partitions) < 1:
            raise ValueError(f"shuffle_partitions must be >= 1, got {self.shuffle_partitions!r}")
        object.__setattr__(self, "shuffle_partitions", int(self.shuffle_partitions))

    @classmethod
    def from_env(cls, **overrides: object) -> PipelineConfig:
        """Defaults, then CLWL_LAKE / CLWL_LANDING / CLWL_SPARK_MASTER / CLWL_SPARK_REMOTE / CLWL_TRACE_TZ /
        CLWL_SPARK_VERBOSE / CLWL_PUT_CSV_READER (empty = unset), then `overrides`."""
        values: dict[str, object] = {"lake": default_lake_location()}  # $CLWL_LAKE, else ./lake
        for name, var in _ENV.items():
            raw = os.environ.get(var, "").strip()
            if raw:
                values[name] = raw
        if os.environ.get("CLWL_TRACE_TZ", "").strip():
            values["trace_tz"] = os.environ["CLWL_TRACE_TZ"].strip()
        values["verbose"] = os.environ.get("CLWL_SPARK_VERBOSE", "").strip().lower() in ("1", "true", "yes")
        values["put_csv_reader"] = os.environ.get(PUT_CSV_READER_ENV, "").strip().lower() == "spark"
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # an unknown override name is a TypeError, on purpose

    def table_path(self, layer: str, table: str) -> str:
        """`<lake>/<layer>/<table>` as a string, the form both Spark and deltalake take."""
        return str(Lake(self.lake).table(layer, table))
