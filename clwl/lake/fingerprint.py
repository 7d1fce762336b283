"""What a run date's published result was made from, as a few digests: when all of them are what the published
run of that date recorded, a new run would publish the same rows, and ``clwl run`` (and the nightly DAG) leave the
date as it is ("2026-11-20: unchanged since run-..., published as is"); ``--force`` runs it all the same.

The digests (:func:`date_inputs`), each a short SHA-256:

- ``code``: every source file of the packages that turn the lake into gold and reports (clwl/, spark/, the
  report's templates, the quality suites under expectations/): any change to them runs the date again;
- ``options``: what the run was asked for (algorithm profile, what-if, senders, cluster);
- per bronze or silver table partitioned by run date: the data files of the date's partition (path and size,
  from the Delta log; a data file is never rewritten in place, so the same files are the same rows);
- per table not partitioned by run date, the rows the date reads, as values: the configuration and channel-status
  histories up to the end of the day (an end of validity after the day counts as "still valid", so capturing the
  next day changes nothing here), the date's quarantine rows, and the latest ingest-log row of each of the date's
  files (its counts and content hash, not which ingest run wrote it).

They are stored with the publish, in ``gold/_published.json`` (``inputs``: run date -> digests; clwl/lake/published.py),
in the same atomic replace that makes the date's tables visible: a killed publish leaves the previous digests
with the previous tables. Pure Python: the lake is read through clwl.lake.door, without Spark.
"""

from __future__ import annotations

import functools
import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from clwl.days import day_bounds, run_day
from clwl.lake.door import TABLES_BY_LAYER, Lake
from clwl.lake.registry import spec

#: Packages and folders whose files make the published rows (relative to the checkout or the installed packages).
_CODE_PACKAGES = ("clwl", "spark")
_CODE_SUFFIXES = (".py", ".j2", ".json", ".yml", ".yaml")
#: Columns that say which ingest run wrote a row, not what it holds.
_RUN_COLUMNS = frozenset({"ingest_run_id", "ingested_at", "code_version"})


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _code_files() -> list[Path]:
    import clwl

    root = Path(clwl.__file__).resolve().parent.parent
    files: list[Path] = []
    for name in (*_CODE_PACKAGES, "expectations"):
        folder = root / name
        if folder.is_dir():
            files += [p for p in folder.rglob("*") if p.suffix in _CODE_SUFFIXES and "__pycache__" not in p.parts]
    return sorted(files)


@functools.cache
def code_digest() -> str:
    """The digest of the code that makes the published rows (see the module's docstring), taken once per process:
    the code that runs is the one imported, whatever the files become later."""
    h = hashlib.sha256()
    root = Path(__import__("clwl").__file__).resolve().parent.parent
    for p in _code_files():
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _rows(lake: Lake, key: str, filters: Any = None) -> list[dict]:
    keep = [f.name for f in spec(key).fields if f.name not in _RUN_COLUMNS]
    return lake.rows(key, keep, filters=filters).to_pylist()


def _history(lake: Lake, key: str, day_end: datetime) -> list:
    """A history's rows that began before the day's end, an end after it written as "still valid"."""
    out = []
    for r in _rows(lake, key):
        if r["valid_from"] is None or r["valid_from"] >= day_end:
            continue
        if r["valid_to"] is not None and r["valid_to"] >= day_end:
            r["valid_to"] = None
        out.append(r)
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _latest_files(lake: Lake, key: str, day) -> list:
    """The ingest log's latest row per file of the date, without the run that wrote it; a file read again with
    nothing new ("unchanged") holds what it held when it was read (ingested, or rejected: its reason and counts
    say which), so only "removed" is kept of the status."""
    rows = lake.rows(key, filters=[("run_date", "=", day)]).to_pylist()
    latest: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: (r["ingested_at"], r["ingest_run_id"])):
        latest[r["source_file"]] = r
    kept = []
    for r in latest.values():
        r = {k: v for k, v in r.items() if k not in _RUN_COLUMNS}
        r["status"] = "removed" if r["status"] == "removed" else "present"
        kept.append(r)
    return sorted(kept, key=lambda r: r["source_file"])


#: Tables not partitioned by run date: how the rows a date reads are chosen (the others: their partition's files).
_UNPARTITIONED: dict[str, Callable[[Lake, str, Any, datetime], list]] = {
    "silver.config_history": lambda lake, key, day, end: _history(lake, key, end),
    "silver.channel_status": lambda lake, key, day, end: _history(lake, key, end),
    "silver.quarantine": lambda lake, key, day, end: sorted(
        _rows(lake, key, [("run_date", "=", day)]), key=lambda r: json.dumps(r, sort_keys=True, default=str)),
    "silver.ingest_files": lambda lake, key, day, end: _latest_files(lake, key, day),
}


def _input_keys() -> Iterable[str]:
    for layer in ("bronze", "silver"):
        for name in TABLES_BY_LAYER[layer]:
            yield f"{layer}.{name}"


def date_inputs(lake: Lake | Path | str, run_date: str, options: Mapping[str, Any],
                code: str | None = None) -> dict[str, str]:
    """The digests of what ``run_date``'s result is made from in ``lake`` (the module's docstring). ``options``:
    the run's choices (profile, what-if ...), as JSON-able values; ``code``: :func:`code_digest` when the caller
    has it already (it reads every source file)."""
    lake = Lake.of(lake)
    day = run_day(run_date)
    _, end = day_bounds(day)
    out = {"code": code or code_digest(), "options": _digest(dict(options))}
    for key in _input_keys():
        if not lake.exists(key):
            out[key] = "absent"
            continue
        chosen = _UNPARTITIONED.get(key)
        if chosen is not None:
            out[key] = _digest(chosen(lake, key, day, end))
        elif "run_date" in spec(key).partition_by:
            out[key] = _digest(lake.files(key, {"run_date": day}))
        else:  # a table of neither kind: all of it (none today; a new table is safe before it is thought about)
            out[key] = _digest(lake.files(key))
    return out


def changed(now: Mapping[str, str], published: Mapping[str, str] | None) -> list[str]:
    """The names of the digests that differ (every one when nothing was recorded): empty means unchanged."""
    if not published:
        return ["(no inputs recorded with the published run)"]
    return sorted(k for k in set(now) | set(published) if now.get(k) != published.get(k))
