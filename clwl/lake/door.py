"""The map of the lake: every folder and table under ``<lake>/``, named once. Pure Python (no pyspark).

::

    <lake>/
      bronze/<table>/            parsed records as read, one row per accepted record
      silver/<table>/            typed, de-duplicated inputs of the replay, and the configuration history
      staging/<table>/           a run's gold tables before the quality gate (write-audit-publish)
      gold/<table>/              the published tables
      gold/_published.json       the versions readers see (clwl/lake/published.py): the commit point of a publish
      validation/<run_id>/<date>/  the quality gate's results
      reports/<date>/            report.html and summary.md of the published day
      whatif/<name>/             a what-if run's own staging/, gold/, validation/ and reports/
      _lock                      the writer lock (clwl/lake/lock.py)

The schemas, partitioning and keys of the tables are the Spark side's (spark/tables.py, which checks that it
registers exactly the tables named here); `clwl query`, the report, the DAGs and the publish take the names
from this module.

It is also the lake's one door for everything read without Spark (deltalake, imported only when a table is
opened): :class:`Lake` (a lake root: its folders, its tables by key, their latest and published versions, their
rows with filters, the rows a commit wrote, the files of a partition), the same by table folder
(:func:`latest_version`, :func:`read_rows`, :func:`rows_committed`), :func:`snapshot` (one version of a table opened
once: its version, columns, schema and properties, its rows whole or batch by batch with columns and filters, its
files, its registration with DataFusion), and :func:`default_lake_location`, the one reading of ``$CLWL_LAKE``. Spark
reads a table through ``spark.tables.read_table``. :func:`open_delta` (the raw ``deltalake.DeltaTable``) is this
module's own: only spark/delta_commits.py (which writes Delta commits itself) calls it elsewhere
(tests/unit/test_lake_access.py).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Sequence

# The lake's own metadata files are read through clwl.lake.lake_files (regular files of bounded size, Delta logs checked
# for FIFOs); the readers find its names here too (``as`` marks them as re-exported).
from clwl.lake.lake_files import MAX_METADATA_BYTES as MAX_METADATA_BYTES
from clwl.lake.lake_files import LakeFileError as LakeFileError
from clwl.lake.lake_files import check_delta_log as check_delta_log
from clwl.lake.lake_files import is_remote as is_remote
from clwl.lake.lake_files import read_lake_file as read_lake_file
from clwl.lake.lake_files import read_lake_json as read_lake_json
from clwl.lake.published import POINTER_FILE, Published, read_published
from clwl.lake.storage import (
    LakeLocation,
    arrow_filesystem,
    is_object_store,
    lake_root,
    list_folders,
    list_prefix,
    storage_options,
    store_for,
)

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow
    from deltalake import DeltaTable


LAYERS = ("bronze", "silver", "gold")

BRONZE_TABLES = ("capture_files", "mqsc_objects", "put_records", "xmitq_messages", "queue_accounting",
                 "activity_operations", "channel_statistics")
SILVER_TABLES = ("config_history", "channel_status", "message_events", "xmitq_contents", "queue_accounting",
                 "channel_statistics", "quarantine", "ingest_files")
#: The published tables, in the order a publish writes them: run_summary last, since it records the others'
#: versions. trend_facts is the day's numbers kept for the trends across days (clwl/analyses/trend.py); queue_depth
#: every queue's depth rebuilt from the trace (clwl/analyses/depth.py).
GOLD_TABLES = ("routing_replay", "stuck_messages", "distribution", "trend_facts", "queue_depth", "run_summary")

TABLES_BY_LAYER = {"bronze": BRONZE_TABLES, "silver": SILVER_TABLES, "gold": GOLD_TABLES}
#: Every table as ``<layer>.<name>``.
TABLE_KEYS = tuple(f"{layer}.{name}" for layer, names in TABLES_BY_LAYER.items() for name in names)

#: The silver tables a run reads; run_summary.table_versions records the version of each it read.
RUN_INPUTS = ("silver.config_history", "silver.channel_status", "silver.message_events", "silver.xmitq_contents",
              "silver.queue_accounting", "silver.channel_statistics", "silver.quarantine", "silver.ingest_files")

STAGING = "staging"
VALIDATION = "validation"
REPORTS = "reports"
WHATIF = "whatif"
LOCK_FILE = "_lock"


def split_key(key: str) -> tuple[str, str]:
    """``"silver.quarantine"`` -> ``("silver", "quarantine")``; ValueError for a table the lake does not have."""
    if key not in TABLE_KEYS:
        raise ValueError(f"no table {key!r}; known: {', '.join(TABLE_KEYS)}")
    layer, name = key.split(".", 1)
    return layer, name


def whatif_root(lake: Path | str | LakeLocation, name: str) -> Path | LakeLocation:
    """Where a what-if run named ``name`` writes everything it produces."""
    return lake_root(lake) / WHATIF / name


def _object_location(table: Path | str | LakeLocation) -> LakeLocation | None:
    """The table's location when it is on an object store this lake supports (``s3://``), else None."""
    if isinstance(table, LakeLocation):
        return table
    text = str(table)
    return lake_root(text) if text.startswith("s3://") else None  # type: ignore[return-value]


def open_delta(table: Path | str | LakeLocation, version: int | None = None) -> "DeltaTable":
    """``deltalake.DeltaTable`` of the table at ``table``, at ``version`` (None: the latest), its log checked
    first (:func:`check_delta_log`): the one way the readers open a Delta table with deltalake.

    Its pyarrow reads (``to_pyarrow_dataset``, and so ``to_pyarrow_table`` and ``to_pandas``) read a local
    table's Parquet files with Arrow's own file system (``pyarrow.fs.LocalFileSystem`` under the table's folder),
    not with deltalake's default, a file system written in Python (``pyarrow.fs.PyFileSystem`` over
    ``deltalake.fs.DeltaStorageHandler``). With that default, Arrow's I/O threads call into Python: they read
    through Python file objects and free the Python buffers the reads returned, and a scan leaves some of that
    work to them after the read has returned (all of it when a read stops early: ``head``, a batch loop left
    with ``break`` or an exception). When the interpreter exits meanwhile, Python 3.11 ends such a thread
    where it waits for the GIL (``pthread_exit``), and the process aborts ("terminate called without an
    active exception", exit 134), crashes (exit 139) or hangs in Arrow's thread pool shutdown: after one plain
    read in 30 to one in 3 (the busier the machine, the more), after most reads that stop early (deltalake 1.0
    to 1.6.6 and pyarrow 23 to 26.0.1 alike).
    Arrow's own file system never calls Python, so no read can do that (tests/unit/test_reader_exit.py). A
    table on an object store (``s3://bucket/...``) is opened with the environment's storage options
    (clwl/lake/storage.py) and read with Arrow's own S3 file system, for the same reason."""
    check_delta_log(table)
    return _lake_delta_table()(table, version)


@functools.cache
def _lake_delta_table() -> type:
    """The class of the tables :func:`open_delta` opens, made at the first open (importing this module loads
    neither deltalake nor pyarrow)."""
    import pyarrow.fs as pafs
    from deltalake import DeltaTable

    class LakeDeltaTable(DeltaTable):
        """A ``deltalake.DeltaTable`` that reads a local table's files with Arrow's own file system (see
        :func:`open_delta`); a ``filesystem`` given to a read is used as given."""

        def __init__(self, table: Path | str | LakeLocation, version: int | None = None) -> None:
            self._object = _object_location(table)
            super().__init__(str(table), version=version, storage_options=storage_options(self._object))
            self._local_root = None if is_remote(table) else os.path.abspath(str(table).removeprefix("file://"))

        def to_pyarrow_dataset(self, partitions: Any = None, filesystem: Any = None, *args: Any, **kwargs: Any):
            if filesystem is None and self._local_root is not None:
                filesystem = pafs.SubTreeFileSystem(self._local_root, pafs.LocalFileSystem())
            elif filesystem is None and self._object is not None:
                filesystem = arrow_filesystem(self._object)
            return super().to_pyarrow_dataset(partitions, filesystem, *args, **kwargs)

    return LakeDeltaTable


def is_delta_table(path: Path | str | LakeLocation) -> bool:
    """Whether ``path`` is a Delta table: a folder with a ``_delta_log`` (on an object store: objects under
    ``<path>/_delta_log/``)."""
    location = _object_location(path)
    if location is not None:  # a commit object in the log (not only the folder marker S3A makes)
        return any(name.endswith(".json") for name, _ in list_prefix(location / "_delta_log"))
    return (Path(path) / "_delta_log").is_dir()


def latest_version(path: Path | str) -> int | None:
    """The latest committed version of the local Delta table at ``path`` from its commit files (None: no table
    or no commit), without reading the table. A table that is not on a local file system (``s3://...``): its
    version as deltalake reads it from the log (None: no table there)."""
    location = _object_location(path)
    if location is not None:
        storage_options(location)  # no credentials, a bad endpoint: one line (StorageError), not "no version"
        # The names of the log's commit objects, as locally: a log prefix with no commit yet (Spark's S3A leaves
        # a folder marker when it starts a table) is no version, not an error.
        names = [name for name, _ in list_prefix(location / "_delta_log")]
        versions = [int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit()]
        return max(versions) if versions else None
    if is_remote(path):
        try:
            return open_delta(path).version()
        except Exception:  # deltalake's TableNotFoundError, or a store it cannot reach: no version to read
            return None
    log = Path(path) / "_delta_log"
    if not log.is_dir():
        return None
    check_delta_log(path)  # a FIFO named as a commit is damage, not a version
    versions = [int(p.name[:-5]) for p in log.glob("*.json") if p.name[:-5].isdigit()]
    return max(versions) if versions else None


def read_rows(table: Path | str | LakeLocation, columns: Sequence[str] | None = None, filters: Any = None,
              version: int | None = None) -> "pyarrow.Table":
    """The rows of the Delta table at ``table`` (at ``version``; None: the latest) as a pyarrow Table: only
    ``columns`` (None: all), only the rows ``filters`` selects (deltalake's DNF filters, e.g. ``[("run_date",
    "=", day)]``, or a ``pyarrow.dataset`` expression; applied to the partition values and the files' statistics
    first, so the files of other partitions are not read). The whole answer is held: a table with a row per
    message is read with :meth:`Snapshot.batches`."""
    return snapshot(table, version).rows(columns, filters)


#: Rows per batch of :meth:`Snapshot.batches` when the caller does not say.
BATCH_ROWS = 1 << 18


class DataFile(NamedTuple):
    """A data file of a table version, from its add action in the Delta log: ``path`` as the log names it
    (relative to the table, partition values percent-encoded), its size, its rows (None: the log has no
    statistics of it) and its partition values by column, typed as the table's schema types them."""

    path: str
    size_bytes: int
    num_records: int | None
    partition: dict[str, Any]


class Snapshot:
    """One version of a Delta table, opened once (:func:`snapshot`): what the readers ask of it. Every answer
    is of that version, so a reader that checks the columns, reads the rows and reports the version read gets
    all three from the same commit even while a writer commits the next one."""

    def __init__(self, table: Path | str | LakeLocation, version: int | None = None) -> None:
        self.location = table
        self._delta = open_delta(table, version)

    @property
    def version(self) -> int:
        """The version opened (the latest when none was asked for)."""
        return self._delta.version()

    @property
    def schema(self) -> Any:
        """The table's schema as deltalake gives it (``deltalake.Schema``: fields with name, type, nullable)."""
        return self._delta.schema()

    @property
    def columns(self) -> tuple[str, ...]:
        """The table's column names, in the schema's order."""
        return tuple(f.name for f in self._delta.schema().fields)

    @property
    def partition_columns(self) -> tuple[str, ...]:
        """The columns the table is partitioned by, from its metadata."""
        return tuple(self._delta.metadata().partition_columns)

    @property
    def configuration(self) -> dict[str, str]:
        """The table's properties (``TBLPROPERTIES``), from its metadata."""
        return dict(self._delta.metadata().configuration)

    def rows(self, columns: Sequence[str] | None = None, filters: Any = None) -> "pyarrow.Table":
        """The rows as one pyarrow Table (:func:`read_rows`): ``columns`` (None: all), ``filters`` (DNF filters or
        a ``pyarrow.dataset`` expression)."""
        return self._delta.to_pyarrow_table(columns=list(columns) if columns is not None else None, filters=filters)

    def batches(self, columns: Sequence[str] | None = None, filters: Any = None,
                batch_size: int = BATCH_ROWS) -> "Iterator[pyarrow.RecordBatch]":
        """The rows batch by batch (at most ``batch_size`` rows each, some possibly empty), read as they are
        asked for: only one batch's worth is held at a time. ``columns`` and ``filters`` as :meth:`rows`."""
        from pyarrow.parquet import filters_to_expression

        expr = filters_to_expression(filters) if filters is not None else None
        yield from self._delta.to_pyarrow_dataset().to_batches(
            columns=list(columns) if columns is not None else None, filter=expr, batch_size=batch_size)

    def files(self, partition: dict[str, Any] | None = None) -> list[DataFile]:
        """The version's data files (:class:`DataFile`), in the log's order; only those of ``partition``
        (``{"run_date": day}``; KeyError for a column the table is not partitioned by) when given. From the Delta
        log alone: no row is read."""
        import pyarrow as pa

        actions = pa.table(self._delta.get_add_actions(flatten=True))
        parts = [c for c in actions.column_names if c.startswith("partition.")]
        want = {f"partition.{k}": v for k, v in (partition or {}).items()}
        cols = {c: actions.column(c).to_pylist() for c in ("path", "size_bytes", "num_records", *parts, *want)}
        return [DataFile(p, int(n), cols["num_records"][i], {c[len("partition."):]: cols[c][i] for c in parts})
                for i, (p, n) in enumerate(zip(cols["path"], cols["size_bytes"]))
                if all(cols[c][i] == v for c, v in want.items())]

    def register(self, ctx: Any, name: str) -> None:
        """Registers this version as ``name`` with the DataFusion ``SessionContext`` ``ctx``. A local table goes
        in as deltalake's own table provider (DataFusion scans its files itself, pruned by the query's
        predicates); a table on an object store as its pyarrow dataset, scanned by Arrow's own S3 file system
        (:func:`open_delta`): the engine's provider would need a store of its own, and it has none."""
        if _object_location(self.location) is not None:
            ctx.register_dataset(name, self._delta.to_pyarrow_dataset())
        else:
            ctx.register_table(name, self._delta)


def snapshot(table: Path | str | LakeLocation, version: int | None = None) -> Snapshot:
    """The Delta table at ``table`` at ``version`` (None: the latest), opened once, its log checked first
    (:func:`open_delta`): its version, columns, rows (whole or batch by batch) and files."""
    return Snapshot(table, version)


def rows_committed(table: Path | str, version: int | None = None) -> int:
    """The rows the commit ``version`` (None: the latest) of the Delta table at ``table`` wrote, from its commit
    metrics in the Delta log: no row is read. Spark records them as ``numOutputRows`` (and, for a write of no
    rows, which adds no files, nothing at all: 0); delta-rs as ``num_added_rows``. LookupError when the log has
    no such commit."""
    delta = open_delta(table)
    latest = delta.version()
    want = latest if version is None else int(version)
    if not 0 <= want <= latest:
        raise LookupError(f"{table}: no commit {want} (the latest is {latest})")
    for commit in delta.history(latest - want + 1):
        if commit.get("version") == want:
            metrics = commit.get("operationMetrics") or {}
            return int(metrics.get("numOutputRows", metrics.get("num_added_rows", 0)) or 0)
    raise LookupError(f"{table}: commit {want} is no longer in the Delta history")


# ----------------------------------------------------------------------------------------------- the door
#: The environment variable that names the lake when a command is not told (``--lake``).
LAKE_ENV = "CLWL_LAKE"
#: The lake when neither ``--lake`` nor ``$CLWL_LAKE`` names one: ``lake`` in the current folder.
DEFAULT_LAKE = Path("lake")

#: Folders of a lake (:meth:`Lake.layer`): the table layers, then the run's own folders.
FOLDERS = (*LAYERS, STAGING, VALIDATION, REPORTS, WHATIF)
#: A run's gold tables before the quality gate, as keys (``staging.routing_replay``).
STAGING_KEYS = tuple(f"{STAGING}.{name}" for name in GOLD_TABLES)


def default_lake_location(base: Path | str | None = None) -> Path | LakeLocation:
    """The one reading of ``$CLWL_LAKE``, as a location (clwl/lake/storage.py): ``s3://bucket/prefix`` is a
    LakeLocation, a typo of one (``s3:/bucket``) StorageError, one line; a local lake a Path (unset: ``lake`` in
    ``base``, None: the current folder; the DAGs give the checkout: an Airflow worker's current folder is not the
    user's)."""
    raw = os.environ.get(LAKE_ENV, "").strip()
    if raw:
        return lake_root(raw)
    return DEFAULT_LAKE if base is None else Path(base) / DEFAULT_LAKE


def _name(what: str, name: str) -> str:
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ValueError(f"bad {what} name: {name!r}")
    return name


@dataclass(frozen=True)
class Lake:
    """The lake at ``root`` (a folder, local or mounted, or ``s3://bucket/prefix``: clwl/lake/storage.py): where each folder and table is, and what the tables
    hold, read without Spark. A table is named by its key, ``"<layer>.<name>"``: a table of the map
    (:data:`TABLE_KEYS`) or a staged gold table (``"staging.routing_replay"``). A what-if run's output is a lake
    of its own (:meth:`whatif`)."""

    root: Path | LakeLocation

    def __post_init__(self) -> None:
        # "s3://bucket/prefix" (clwl/lake/storage.py): a LakeLocation that joins like a path; a typo: StorageError.
        object.__setattr__(self, "root", lake_root(self.root))

    def __str__(self) -> str:
        return str(self.root)

    @classmethod
    def of(cls, lake: "Lake | Path | str | LakeLocation") -> "Lake":
        """The lake given, or the lake at that location: for readers that take either (the door built once is
        handed down; a location is opened here, not at each caller)."""
        return lake if isinstance(lake, Lake) else cls(lake)

    # -- where
    def layer(self, name: str) -> Path:
        """``<lake>/<name>``: a layer (``gold``) or one of the run's folders (``staging``, ``validation``,
        ``reports``, ``whatif``)."""
        if name not in FOLDERS:
            raise ValueError(f"no folder {name!r} in a lake; known: {', '.join(FOLDERS)}")
        return self.root / name

    def table(self, key: str, name: str | None = None) -> Path:
        """The folder of a table: by key (``table("silver.message_events")``, ValueError for a table the lake
        does not have), or by layer and name (``table("gold", "run_summary")``, any well-formed names)."""
        if name is None:
            if key not in TABLE_KEYS and key not in STAGING_KEYS:
                raise ValueError(f"no table {key!r}; known: {', '.join(TABLE_KEYS + STAGING_KEYS)}")
            key, name = key.split(".", 1)
        return self.root / _name("layer", key) / _name("table", name)

    def whatif(self, name: str) -> "Lake":
        """The lake a what-if run named ``name`` writes (``<lake>/whatif/<name>``)."""
        return replace(self, root=whatif_root(self.root, _name("what-if", name)))  # this lake's, rooted there

    # -- what the tables hold
    def exists(self, key: str) -> bool:
        """Whether the table is there (a folder with a ``_delta_log``)."""
        return is_delta_table(self.table(key))

    def version(self, key: str) -> int | None:
        """The table's latest committed version (None: no table, or no commit), from its log's file names."""
        return latest_version(self.table(key))

    def published(self) -> Published:
        """``gold/_published.json`` as read now (clwl/lake/published.py): read it once when several gold tables are
        read together, so that all are of one publish."""
        return read_published(self.layer("gold"))

    def published_version(self, key: str) -> int | None:
        """The version of the gold table ``key`` (``"gold.routing_replay"``, or its bare name) that readers
        see: the one ``gold/_published.json`` names; in a lake without that file, its latest version; None when
        it is not published (no table, or a first publish of it that did not finish)."""
        name = key.removeprefix("gold.")
        path = self.table("gold", name)
        pub = self.published()
        if not pub.visible(name) or not is_delta_table(path):
            return None
        version = pub.version(name)
        return latest_version(path) if version is None else version

    def open(self, key: str, version: int | None = None) -> "DeltaTable":
        """The table as a ``deltalake.DeltaTable`` at ``version`` (None: the latest), its log checked first."""
        return open_delta(self.table(key), version)

    def snapshot(self, key: str, version: int | None = None) -> Snapshot:
        """The table at ``version`` (None: the latest), opened once (:func:`snapshot`): its version, columns, rows
        (whole or batch by batch) and files."""
        return snapshot(self.table(key), version)

    def rows(self, key: str, columns: Sequence[str] | None = None, filters: Any = None,
             version: int | None = None) -> "pyarrow.Table":
        """The table's rows as a pyarrow Table (:func:`read_rows`): ``columns``, ``filters``, ``version``. A table
        read through a view (``bronze.put_records``, clwl.lake.put_records) is the view: ``filters`` on the columns its
        tables share, no ``version``."""
        from clwl.lake.put_records import VIEWS

        if key in VIEWS:
            return self._view_rows(key, columns, filters, version)
        return read_rows(self.table(key), columns, filters, version)

    def _view_rows(self, key: str, columns: Sequence[str] | None, filters: Any, version: int | None
                   ) -> "pyarrow.Table":
        """The rows of a view of clwl.lake.put_records, by its SQL (DataFusion over the two tables' rows)."""
        import pyarrow.dataset as ds
        from datafusion import SessionContext

        from clwl.lake.put_records import VIEWS, view_sql

        if version is not None:
            raise ValueError(f"{key} is a view of {' and '.join(VIEWS[key])}: it has no version of its own")
        ctx = SessionContext()
        stored, events = (read_rows(self.table(k), None, filters) for k in VIEWS[key])
        ctx.register_dataset("stored", ds.dataset(stored))
        ctx.register_dataset("events", ds.dataset(events))
        out = ctx.sql(view_sql("stored", "events", stored.column_names, events.column_names)).to_arrow_table()
        out = out.cast(stored.schema)  # the stored table's types (the engine may answer in string views)
        return out.select(list(columns)) if columns is not None else out

    def rows_committed(self, key: str, version: int | None = None) -> int:
        """The rows the table's commit ``version`` (None: the latest) wrote (:func:`rows_committed`)."""
        return rows_committed(self.table(key), version)

    def files(self, key: str, partition: dict[str, Any] | None = None) -> list[tuple[str, int]]:
        """The data files of the table's latest version, as (path in the table, size in bytes), sorted; only
        those of ``partition`` (``{"run_date": day}``) when given. From the Delta log alone: no row is read.
        A Delta data file is never rewritten in place, so the list names exactly the rows the table holds."""
        return sorted((f.path, f.size_bytes) for f in snapshot(self.table(key)).files(partition))


# ------------------------------------------------------------------ the published state, for other readers

def gold_tables(gold: Path | str | LakeLocation) -> list[Path | LakeLocation]:
    """The Delta tables in the folder ``gold`` (local, or a prefix on an object store), by name."""
    folder = lake_root(gold)
    return [folder / name for name in list_folders(folder) if is_delta_table(folder / name)]


def unsettled(gold: Path | str | LakeLocation) -> list[str]:
    """What a publish that did not finish left in ``gold`` (empty: nothing), from listings only (no table read,
    no Spark): a table whose latest version is past the one the pointer names, a table folder the pointer does not
    name, a half-written pointer file, or gold tables without a pointer. A plain Delta reader (Spark SQL, Trino, a
    BI tool) reads the latest versions, so every command that writes the lake settles these first
    (spark.publish.settle_before_writing): the window in which such a reader sees a half-finished publish ends at
    the next write, not at the next publish. On an object store the pointer is one conditional put: never
    half-written."""
    folder = lake_root(gold) if not isinstance(gold, Path) else gold
    store = store_for(folder)
    if not store.is_folder(folder):
        return []
    left = [f"{p.name} (a pointer write that was killed)" for p in store.temporaries(folder)
            if p.name.startswith(f".{POINTER_FILE}.")]
    found = gold_tables(folder)
    pub = read_published(folder)
    if not pub.exists:
        return left + ([f"{', '.join(p.name for p in found)} (no {POINTER_FILE})"] if found else [])
    for table in found:
        want, latest = pub.tables.get(table.name), latest_version(table)
        if want is None:
            left.append(f"{table.name} (not published: a first publish that did not finish)")
        elif latest is not None and latest > want:
            left.append(f"{table.name} (versions {want + 1}-{latest} after the published {want})")
    return left


def reader_recipes(gold: Path | str, trino_schema: str = "clwl") -> dict:
    """How an outside reader reads exactly what is published in ``gold``: per visible table its version, its
    absolute path and a ready statement for Spark SQL, PySpark, Trino and deltalake (an expression of
    ``DeltaTable`` and ``pyarrow.fs``: the rows as a pyarrow Table), all pinned to that version.
    A reader of the latest versions instead may see a publish that did not finish (:func:`unsettled`). A table
    the pointer names that cannot be read at its version (no table, or a log that ends before it) is under
    ``missing``, with the reason, never left out."""
    root = lake_root(gold) if not isinstance(gold, Path) else gold
    folder = store_for(root).absolute(root, resolve=True)
    pub = read_published(folder)
    tables: dict[str, dict] = {}
    found = gold_tables(folder)
    missing = {name: {"version": version, "path": str(folder / name), "reason": "no Delta table there"}
               for name, version in sorted(pub.tables.items()) if name not in {t.name for t in found}}
    for table in found:
        if not pub.visible(table.name):
            continue
        version = pub.version(table.name)
        latest = latest_version(table)
        if version is None:  # a lake from before the pointer: its latest version is what is published
            version = latest
        if version is None:
            continue
        if latest is None or latest < version:  # its log ends before the version published: damaged
            missing[table.name] = {"version": version, "path": str(table),
                                   "reason": f"its log ends at version {latest}" if latest is not None
                                   else "its log holds no commit"}
            continue
        path = str(table)
        tables[table.name] = {
            "version": version,
            "path": path,
            "spark_sql": f"SELECT * FROM delta.`{path}` VERSION AS OF {version}",
            "pyspark": f'spark.read.format("delta").option("versionAsOf", {version}).load("{path}")',
            "trino": (f'SELECT * FROM delta.{trino_schema}."{table.name}" FOR VERSION AS OF {version}  -- after '
                      f"CALL delta.system.register_table(schema_name => '{trino_schema}', table_name => "
                      f"'{table.name}', table_location => '{path}')"),
            # Arrow's own file system for the files: with deltalake's default (one written in Python) a script
            # can abort at exit after the read (clwl.lake.door.open_delta says why).
            "deltalake": (f'DeltaTable("{path}", version={version}).to_pyarrow_table(filesystem='
                          f'pyarrow.fs.SubTreeFileSystem("{path}", pyarrow.fs.LocalFileSystem()))'
                          if not is_object_store(table) else
                          f'DeltaTable("{path}", version={version}, storage_options=<the AWS_* settings>)'
                          f'.to_pyarrow_table()'),
        }
    return {"gold": str(folder), "pointer": pub.exists, "tables": tables, "missing": dict(sorted(missing.items())),
            "dates": dict(pub.dates), "unsettled": unsettled(folder)}
