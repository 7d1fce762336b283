"""Which version of each gold table is published: ``<gold>/_published.json``, the commit point of a publish.

A publish (spark/publish.py) writes the gold tables one Delta commit each, then replaces this small file in one
atomic step through the lake's store (:meth:`clwl.lake.stores.Store.replace`: locally a temporary file, then
``os.replace``; on an object store, which has no rename, one conditional put that replaces exactly the version
read). Readers take every gold table at the version the file
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from clwl.lake.lake_files import LakeFileError
from clwl.lake.storage import LakeLocation, StorageConflict, lake_root, store_for

POINTER_FILE = "_published.json"
FORMAT = 1

#: The pointer file exists but cannot be read (one line naming it): the lake's one error for damaged metadata.
PublishedError = LakeFileError


class PublishedConflict(StorageConflict):
    """Another writer replaced the pointer on the object store between this writer's read and its write."""


@dataclass(frozen=True)
class Published:
    gold: Path | LakeLocation  # the gold folder the pointer belongs to (a location on an object store)
    exists: bool  # False: no pointer file, every table is read at its latest version
    tables: dict[str, int] = field(default_factory=dict)  # bare table name -> published Delta version
    dates: dict[str, str] = field(default_factory=dict)  # run date (ISO) -> run id
    inputs: dict[str, dict[str, str]] = field(default_factory=dict)  # run date -> digests (clwl/lake/fingerprint.py)
    raw: dict = field(default_factory=dict, repr=False)
    etag: Optional[str] = None  # the version of the pointer read (write_published(expect=))

    def visible(self, table: str) -> bool:
        """Whether readers see the table at all (False: a table whose first publish has not finished)."""
        return not self.exists or table in self.tables

    def version(self, table: str) -> Optional[int]:
        """The version to read (None: the latest, as for a lake without the pointer file)."""
        return self.tables.get(table) if self.exists else None


def pointer_path(gold: Path | str | LakeLocation) -> Path | LakeLocation:
    root = _gold(gold)
    return root / POINTER_FILE


def _gold(gold: Path | str | LakeLocation) -> Path | LakeLocation:
    """The gold folder as a Path, or a LakeLocation when it is on an object store (``s3://...``)."""
    return gold if isinstance(gold, (Path, LakeLocation)) else lake_root(gold)


def read_published(gold: Path | str | LakeLocation) -> Published:
    """The pointer of the gold folder ``gold`` (``<lake>/gold``, or a what-if run's ``<lake>/whatif/<n>/gold``),
    local or on an object store; ``etag`` names the version read."""
    root = _gold(gold)
    path = pointer_path(root)
    try:  # a regular file of bounded size only (a FIFO or a link to /dev/zero is one line, not a hang)
        stored = store_for(root).get(path)
    except FileNotFoundError:
        return Published(root, False)
    data, etag = _json_of(path, stored.data), stored.etag
    try:
        tables = {str(k): _version(k, v) for k, v in (data.get("tables") or {}).items()}
        dates = {str(k): str(v) for k, v in (data.get("dates") or {}).items()}
        inputs = {str(k): {str(n): str(d) for n, d in v.items()} for k, v in (data.get("inputs") or {}).items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise PublishedError(f"{path} is not a valid published-versions file ({exc})") from None
    return Published(root, True, tables, dates, inputs, data, etag)


def _version(table: object, value: object) -> int:
    """A table's published version: a Delta version is a whole number from 0 (not -5, 1.5, "3" or true)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = json.dumps(value)
        raise ValueError(f"the version of {str(table)!r} is {shown if len(shown) <= 40 else shown[:37] + '...'}, "
                         f"not a Delta version: a whole number from 0")
    return value


def _json_of(path: object, raw: bytes) -> object:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PublishedError(f"{path} is not UTF-8 text (byte {exc.start}): the lake is damaged") from None
    except json.JSONDecodeError as exc:
        raise PublishedError(f"{path} is not JSON ({exc}): the lake is damaged") from None
    except ValueError:  # int() refuses more than 4,300 digits, as read_lake_json says of a local pointer
        raise PublishedError(f"{path} holds an integer too long to read (over 4,300 digits): the lake is "
                             f"damaged") from None
    except RecursionError:
        raise PublishedError(f"{path} is JSON nested too deeply to read: the lake is damaged") from None


def published_version(table_path: Path | str | LakeLocation) -> tuple[bool, Optional[int]]:
    """(visible, version) of the gold table at ``table_path`` (``<gold>/<table>``): see :class:`Published`."""
    p = _gold(table_path)
    pub = read_published(p.parent)
    return pub.visible(p.name), pub.version(p.name)


def write_published(gold: Path | str | LakeLocation, tables: Mapping[str, int],
                    dates: Mapping[str, str] | None = None, *, run_id: str | None = None,
                    run_date: str | None = None, inputs: Mapping[str, Mapping[str, str]] | None = None,
                    expect: Published | None = None) -> Path | LakeLocation:
    """Replace the pointer atomically through the lake's store (:meth:`clwl.lake.stores.Store.replace`). A local
    folder: a temporary file beside it, fsync, os.replace, fsync the folder. An object store, which has no rename:
    one conditional put, replacing exactly the version of the pointer ``expect`` read (default: the version there
    now), or creating it when there was none; a writer that lost that race gets :class:`PublishedConflict` and the
    pointer stays the winner's."""
    root = _gold(gold)
    data = {"format": FORMAT, "tables": {k: int(v) for k, v in sorted(tables.items())},
            "dates": dict(sorted((dates or {}).items())),
            "inputs": {d: dict(sorted(v.items())) for d, v in sorted((inputs or {}).items())},
            "run_id": run_id, "run_date": run_date,
            "updated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    path = pointer_path(root)
    store = store_for(root)
    # Only a store that checks the condition needs the version read (locally the lake lock keeps writers apart).
    base = (read_published(root) if expect is None else expect) if store.atomic_conditions else None
    try:
        if base is not None and base.exists and base.etag is None:
            raise PublishedConflict(f"{path}: the pointer to replace was not read from the object store")
        store.replace(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"), base.etag if base else None)
    except StorageConflict:
        raise PublishedConflict(f"{path} was changed by another publish since this one read it; not replaced "
                                f"(one writer per lake: is the lake lock held?)") from None
    return path
