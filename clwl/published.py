"""Which version of each gold table is published: ``<gold>/_published.json``, the commit point of a publish.

A publish (spark/publish.py) writes the gold tables one Delta commit each, then replaces this small file in one
atomic step (a temporary file, then ``os.replace``). Readers take every gold table at the version the file
names, so they see either all the tables of the previous publish or all of the new one, never a mix, even when
the publish is killed between two commits. The file::

    {"format": 1,
     "tables": {"routing_replay": 12, "stuck_messages": 9, "distribution": 9, "run_summary": 14},
     "dates": {"2026-11-20": "run-20261121T023000-1a2b3c4d", ...},   # run id published per run date
     "inputs": {"2026-11-20": {"code": "...", "silver.message_events": "...", ...}},  # what it was made from
     "run_id": "...", "run_date": "...", "updated_at": "..."}        # the last publish

How a reader uses it (:meth:`Published.visible`, :meth:`Published.version`):

- no file (a lake from before the pointer): every gold table at its latest version;
- a table named in ``tables``: that version (deltalake ``DeltaTable(path, version=v)``, Spark
  ``option("versionAsOf", v)``); later commits belong to a publish that has not finished (or was killed);
- a table folder the file does not name: not published yet (a first publish of it did not finish).

Pure Python, no pyspark: `clwl query`, the report and the publish all read it through this module.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from clwl.lake_files import LakeFileError, read_lake_json

POINTER_FILE = "_published.json"
FORMAT = 1

#: The pointer file exists but cannot be read (one line naming it): the lake's one error for damaged metadata.
PublishedError = LakeFileError


@dataclass(frozen=True)
class Published:
    gold: Path  # the gold folder the pointer belongs to
    exists: bool  # False: no pointer file, every table is read at its latest version
    tables: dict[str, int] = field(default_factory=dict)  # bare table name -> published Delta version
    dates: dict[str, str] = field(default_factory=dict)  # run date (ISO) -> run id
    inputs: dict[str, dict[str, str]] = field(default_factory=dict)  # run date -> digests (clwl/fingerprint.py)
    raw: dict = field(default_factory=dict, repr=False)

    def visible(self, table: str) -> bool:
        """Whether readers see the table at all (False: a table whose first publish has not finished)."""
        return not self.exists or table in self.tables

    def version(self, table: str) -> Optional[int]:
        """The version to read (None: the latest, as for a lake without the pointer file)."""
        return self.tables.get(table) if self.exists else None


def pointer_path(gold: Path | str) -> Path:
    return Path(gold) / POINTER_FILE


def read_published(gold: Path | str) -> Published:
    """The pointer of the gold folder ``gold`` (``<lake>/gold``, or a what-if run's ``<lake>/whatif/<n>/gold``)."""
    path = pointer_path(gold)
    try:  # a regular file of bounded size only (a FIFO or a link to /dev/zero is one line, not a hang)
        data = read_lake_json(path)
    except FileNotFoundError:
        return Published(Path(gold), False)
    try:
        tables = {str(k): int(v) for k, v in (data.get("tables") or {}).items()}
        dates = {str(k): str(v) for k, v in (data.get("dates") or {}).items()}
        inputs = {str(k): {str(n): str(d) for n, d in v.items()} for k, v in (data.get("inputs") or {}).items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise PublishedError(f"{path} is not a valid published-versions file ({exc})") from None
    return Published(Path(gold), True, tables, dates, inputs, data)


def published_version(table_path: Path | str) -> tuple[bool, Optional[int]]:
    """(visible, version) of the gold table at ``table_path`` (``<gold>/<table>``): see :class:`Published`."""
    p = Path(table_path)
    pub = read_published(p.parent)
    return pub.visible(p.name), pub.version(p.name)


def write_published(gold: Path | str, tables: Mapping[str, int], dates: Mapping[str, str] | None = None, *,
                    run_id: str | None = None, run_date: str | None = None,
                    inputs: Mapping[str, Mapping[str, str]] | None = None) -> Path:
    """Replace the pointer atomically (write a temporary file beside it, fsync, os.replace, fsync the folder)."""
    folder = Path(gold)
    folder.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "tables": {k: int(v) for k, v in sorted(tables.items())},
            "dates": dict(sorted((dates or {}).items())),
            "inputs": {d: dict(sorted(v.items())) for d, v in sorted((inputs or {}).items())},
            "run_id": run_id, "run_date": run_date,
            "updated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    fd, tmp = tempfile.mkstemp(prefix=f".{POINTER_FILE}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, pointer_path(folder))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:  # pragma: no cover - a file system without directory fsync
        pass
    return pointer_path(folder)

