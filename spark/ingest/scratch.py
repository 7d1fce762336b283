"""The run's scratch folder ``<lake>/_ingest/<run_id>/``: where the parse tasks leave their rows for the driver,
and the clean-up of the folders of runs that are no longer running. On the lake's storage (a local folder or a
prefix of an object store, through clwl.lake.storage), so that executors on other hosts can write it."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone

from clwl.lake.storage import (
    Location,
    arrow_filesystem,
    delete_object,
    is_object_store,
    lake_root,
    list_folders,
    put_object,
    read_object,
    store_for,
)
from spark.config import PipelineConfig

#: Where a parse task puts the rows of a file or record it could not take (one table for every format).
QUARANTINE_TABLE = "silver.quarantine"

# The parse output: each parse task writes the rows of every table it fed as one Parquet file per table under
# the run's scratch folder (``<lake>/_ingest/<run_id>/<table>/``, on the lake's storage so that executors on
# other hosts can write it), and returns only the per-file summaries. Spark then reads each table's files with
# the table's schema and writes it to Delta: the rows cross from Python to the JVM as Arrow columns, not as
# pickled tuples. The scratch folder is removed after the writes.
PARSED_TABLES = ("bronze.capture_files", "bronze.mqsc_objects", "bronze.put_records", "bronze.xmitq_messages",
                  "bronze.queue_accounting", "bronze.activity_operations", "bronze.channel_statistics", QUARANTINE_TABLE)


SCRATCH_STALE_SECONDS = 24 * 3600  # a scratch folder of another host's run this old is taken as abandoned


def make_scratch(config: PipelineConfig, run_id: str) -> Location:
    """Create the run's scratch folder (with ``_owner.json``: pid, host, start), first removing the scratch
    folders of runs that are no longer running (a killed ingest never reaches its ``finally``)."""
    import socket

    root = config.lake / "_ingest"
    for name in list_folders(root):
        if name != run_id and _scratch_is_stale(config, root / name):
            remove_scratch(root / name)
    scratch = root / run_id
    owner = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "run_id": run_id,
                        "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}) + "\n"
    put_object(scratch / "_owner.json", owner.encode("utf-8"))  # a prefix exists once an object is under it
    return scratch


def _scratch_is_stale(config: PipelineConfig, folder: Location) -> bool:
    """Whether the scratch folder belongs to a run that is no longer running: any other run's, when this process
    holds the lake lock (every writer of the lake takes it, so no other ingest can be running); else one whose
    owner ran on this host and whose process is gone; else one older than SCRATCH_STALE_SECONDS."""
    import socket

    from clwl.lake.lock import holds_lock

    if holds_lock(config.lake):
        return True
    try:
        owner = json.loads(read_object(folder / "_owner.json").data)  # bounded: never a FIFO's hang
    except (OSError, ValueError):
        owner = {}
    if isinstance(owner, dict) and owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int):
        try:
            os.kill(owner["pid"], 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive, someone else's
            return False
        return False
    try:
        changed = store_for(folder).folder_time(folder)
    except OSError:
        return False
    if changed is None:  # its start as the owner wrote it (an object store has no folder times)
        try:
            changed = datetime.fromisoformat(owner["started"]).timestamp()
        except (KeyError, TypeError, ValueError):
            return True  # no readable owner: nothing says a run is still writing it
    return time.time() - changed > SCRATCH_STALE_SECONDS


def remove_scratch(scratch: Location) -> None:
    """Remove a scratch folder, and ``<lake>/_ingest`` when it is left empty (an object store has no empty
    folders: the prefix is gone with its last object)."""
    store = store_for(scratch)
    store.delete_prefix(scratch)
    store.remove_if_empty(scratch.parent)


# -- the files a parse task leaves (run in the executors) ----------------------------------------------------------
def write_scratch_file(scratch: str, key: str, name: str, table) -> str:
    """Write ``table`` as ``<scratch>/<key>/<name>`` (Parquet) and return where: a local folder, or a prefix on
    an object store (``s3://...``, with Arrow's own S3 file system and the environment's settings, so an executor
    on another host writes where the driver reads)."""
    import pyarrow.parquet as pq

    root = lake_root(scratch)
    if is_object_store(root):
        pq.write_table(table, f"{key}/{name}", filesystem=arrow_filesystem(root))
        return str(root / key / name)
    folder = root / key
    folder.mkdir(parents=True, exist_ok=True)
    written = str(folder / name)
    pq.write_table(table, written)
    return written


def remove_scratch_file(written: str) -> None:
    """Remove a scratch file :func:`write_scratch_file` wrote (local or on an object store)."""
    delete_object(lake_root(written))
