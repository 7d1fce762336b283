"""Delta commits this project writes itself, as the Delta protocol's JSON files, where Spark would spend jobs on
work that is only metadata: a new table's first commit (spark/tables.py) and a run date's published files
(spark/publish.py: gold takes the staged Parquet files themselves instead of a copy of their rows).

Local (or mounted) tables and tables on an object store (``s3://``), and only tables whose protocol needs nothing
of a writer beyond what these commits do (:func:`plain_protocol`); a caller falls back to Spark's writer whenever a
function here returns None. Every commit is put-if-absent (locally a hard link of a finished file onto
``<version>.json``; on an object store a conditional put, ``If-None-Match: *``), so it never replaces another
writer's commit; the callers hold the lake lock. A published file is a hard link of the staged one locally and a
server-side copy on an object store (which has no links): either way no row passes through this process.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Mapping

from clwl.lake.door import is_delta_table, open_delta
from clwl.lake.registry import constraints_in, same_expression
from clwl.lake.storage import (
    StorageConflict,
    delete_object,
    lake_root,
    put_if_absent,
    read_object,
    store_for,
)

#: Writer features a table may list for these commits to be complete: NOT NULL columns (enforced when the
#: files were written, under the same schema), timestamps without a zone (a type, nothing to do on write), and
#: appendOnly (refused below when it is switched on). CHECK constraints only when the caller checked the rows
#: against each (plain_protocol's ``checked``).
_PLAIN_WRITER_FEATURES = {"invariants", "timestampNtz", "appendOnly"}
#: A path in the log as written on disk: no character that the log would URI-encode.
_PLAIN_PATH = re.compile(r"^[A-Za-z0-9_=./-]+$")


def _where(location: str | Path):
    """The table's location: a LakeLocation for ``s3://...``, else a Path (clwl.lake.storage.lake_root)."""
    return lake_root(location)


def log_dir(location: str | Path):
    return _where(location) / "_delta_log"


def _has_log(location: str | Path) -> bool:
    return is_delta_table(_where(location))


def _read_log_file(log, name: str) -> bytes:
    """A commit file of the log (bounded, never a FIFO); FileNotFoundError when there is none."""
    return read_object(log / name).data


def write_commit(location: str | Path, version: int, actions: list[dict] | dict, suffix: str = "json") -> bool:
    """Write ``actions`` as commit ``version`` of the table at ``location`` (with ``suffix="crc"``, one dict: its
    checksum file); False when that file exists (another writer was first: nothing is replaced)."""
    log = log_dir(location)
    lines = [actions] if isinstance(actions, dict) else actions
    text = "".join(json.dumps(a) + "\n" for a in lines)
    try:  # locally a finished file linked onto the name; on an object store If-None-Match: *
        put_if_absent(log / f"{version:020d}.{suffix}", text.encode("utf-8"))
        return True
    except StorageConflict:
        return False


def plain_protocol(table, checked: Mapping[str, str] | None = None) -> bool:
    """Whether a writer that adds and removes whole files, with their statistics, writes all that the table's
    protocol asks (``table``: a ``deltalake.DeltaTable``). ``checked``: CHECK constraints (name -> expression)
    the caller verified every row of the files satisfies; a table whose constraints are all among them asks
    nothing more of such a writer (its NOT NULL columns were enforced when the files were written)."""
    p = table.protocol()
    config = table.metadata().configuration or {}
    have = constraints_in(config)
    verified = all(n in (checked or {}) and same_expression(e, checked[n]) for n, e in have.items())
    if p.min_writer_version > 7 or p.min_writer_version in (4, 5, 6):  # CDF, generated columns, column mapping
        return False
    if p.min_writer_version == 3 and not verified:  # CHECK constraints
        return False
    features = _PLAIN_WRITER_FEATURES | ({"checkConstraints"} if verified else set())
    if p.min_writer_version == 7 and not set(p.writer_features or ()) <= features:
        return False
    if config.get("delta.appendOnly", "false").lower() == "true" or config.get(
            "delta.enableChangeDataFeed", "false").lower() == "true":
        return False
    return verified


def _raw_adds(location: str | Path, version: int, paths: set[str]) -> dict[str, dict] | None:
    """The add actions, as written in the log, of ``paths`` (files live at ``version``): the newest add of each,
    read from the commit files from ``version`` back. None when a commit file that would be needed is gone
    (the log was cleaned up) before all were found."""
    found: dict[str, dict] = {}
    log = log_dir(location)
    v = version
    while len(found) < len(paths) and v >= 0:
        try:
            lines = _read_log_file(log, f"{v:020d}.json").decode("utf-8").splitlines()
        except FileNotFoundError:
            return None
        for line in lines:
            add = json.loads(line).get("add") if line.strip() else None
            if add and add.get("path") in paths and add["path"] not in found:
                found[add["path"]] = add
        v -= 1
    return found if len(found) == len(paths) else None


def _partition_files(table, column: str, value: str) -> list[dict]:
    """The live files of one partition (``column = value``) of a ``deltalake.DeltaTable``: path, size, rows."""
    import pyarrow as pa

    actions = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    return [{"path": p, "size": s, "rows": n}
            for p, s, n, part in zip(actions["path"], actions["size_bytes"], actions["num_records"],
                                     actions[f"partition.{column}"])
            if str(part) == value]


def replace_partition_with_files(target: str, source: str, source_version: int, column: str, value: str,
                                 engine: str = "clwl-analytics", checked: Mapping[str, str] | None = None
                                 ) -> int | None:
    """Make partition ``column = value`` of the Delta table at ``target`` hold exactly the files that partition
    has in the table at ``source`` as of ``source_version``, by one commit: the source's files are hard-linked
    (copied across file systems; on an object store copied server-side) into ``target`` under new names, added
    with the statistics the source's log has for them, and the target's files of that partition removed; rows
    are neither read nor rewritten.

    A ``target`` that does not exist yet is created by that commit (version 0), with the source's schema,
    partitioning, properties and protocol, as Spark's first write of these rows would create it.

    The new version of ``target``, or None when this cannot be done by such a commit and the caller must write
    the rows instead: either table is on another kind of storage than this knows (or the two on different
    ones), the two differ in schema or partitioning, the target's protocol
    asks for more (:func:`plain_protocol`; CHECK constraints it has are asked for unless the caller verified
    the partition's rows against each, ``checked``), a file has deletion vectors or a path the log encodes, or
    the source's log no longer has the commits that added the files. RuntimeError when another writer committed
    the version meanwhile."""
    if any("://" in p and not p.startswith(("file:", "s3://")) for p in (target, source)):
        return None
    store = store_for(_where(target))
    if store != store_for(_where(source)) or not _has_log(source):
        return None
    staged = open_delta(source, version=source_version)
    gold = open_delta(target) if _has_log(target) else None
    if staged.metadata().partition_columns != [column] or not plain_protocol(gold or staged, checked):
        return None
    if gold is not None and (gold.metadata().partition_columns != [column]
                             or gold.schema().to_json() != staged.schema().to_json()):
        return None
    files = _partition_files(staged, column, value)
    old = _partition_files(gold, column, value) if gold is not None else []
    if not all(_PLAIN_PATH.match(f["path"]) and ".." not in f["path"] for f in files + old):
        return None
    raw = _raw_adds(source, source_version, {f["path"] for f in files})
    if raw is None or any("deletionVector" in a for a in raw.values()):
        return None

    base = gold.version() if gold is not None else -1
    now = int(time.time() * 1000)
    created = [] if gold is not None else _table_actions(staged, now)
    adds, made = [], []
    try:
        for n, f in enumerate(sorted(files, key=lambda f: f["path"])):
            folder, _, name = f["path"].rpartition("/")
            suffix = name[name.index("."):] if "." in name else ""
            new = f"{folder + '/' if folder else ''}part-{n:05d}-{uuid.uuid4()}{suffix}"
            dest = _where(target) / new
            made.append(dest)
            # A hard link locally (a byte copy across file systems), a server-side copy on an object store (no
            # links there, its copy keeps no time of its own: now): no byte passes through a Spark job.
            modified = store.copy(_where(source) / f["path"], dest)
            modified = now if modified is None else modified
            add = {k: v for k, v in raw[f["path"]].items() if k in ("partitionValues", "size", "stats", "tags")}
            adds.append({"add": {"path": new, **add, "modificationTime": modified, "dataChange": True}})
        removes = [{"remove": {"path": f["path"], "deletionTimestamp": now, "dataChange": True,
                               "extendedFileMetadata": True, "partitionValues": {column: value},
                               "size": f["size"]}} for f in old]
        info = {"commitInfo": {
            "timestamp": now, "operation": "WRITE",
            "operationParameters": {"mode": "Overwrite", "partitionBy": json.dumps([column]),
                                    "predicate": f"{column} = '{value}'"},
            # A new table has no version read (Spark leaves readVersion out; deltalake's history refuses -1).
            **({"readVersion": base} if base >= 0 else {}), "isolationLevel": "Serializable", "isBlindAppend": False,
            "operationMetrics": {"numFiles": str(len(adds)), "numOutputRows": str(sum(f["rows"] or 0 for f in files)),
                                 "numOutputBytes": str(sum(f["size"] for f in files)),
                                 "numRemovedFiles": str(len(removes))},
            "engineInfo": f"{engine} (the files of {source} version {source_version})"}}
        if not write_commit(target, base + 1, [info, *created, *removes, *adds]):
            raise RuntimeError(f"{target}: version {base + 1} was committed by another writer meanwhile")
    except BaseException:
        for dest in made:  # not in any commit: nothing refers to them
            delete_object(dest)
        raise
    return base + 1


def metadata_action(schema: str, partition_columns, configuration: dict, description: str | None,
                    now: int) -> dict:
    """The ``metaData`` of a new table (a new id), as Spark writes it: no description key when there is none."""
    meta = {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
            "partitionColumns": list(partition_columns), "configuration": dict(configuration), "createdTime": now}
    if description:
        meta["description"] = description
    return meta


def _table_actions(table, now: int) -> list[dict]:
    """The metaData and protocol actions of a new table shaped as ``table`` (a ``deltalake.DeltaTable``)."""
    meta, p = table.metadata(), table.protocol()
    metadata = metadata_action(table.schema().to_json(), meta.partition_columns, meta.configuration or {},
                               meta.description, now)
    protocol = {"minReaderVersion": p.min_reader_version, "minWriterVersion": p.min_writer_version}
    if p.min_reader_version >= 3:
        protocol["readerFeatures"] = list(p.reader_features or [])
    if p.min_writer_version >= 7:
        protocol["writerFeatures"] = list(p.writer_features or [])
    return [{"metaData": metadata}, {"protocol": protocol}]
