"""Which put records are held back from the replay, and the reason each quarantine row gives: one decision, used by
the ingest (spark/ingest/message_events.py, in Spark, over every bronze put row) and by ``clwl check`` (clwl/analyses/check.py,
in Python, over one landing folder), so that the two say the same thing about the same row.

A put row is held back when

1. its put time (UTC) is not on its run date: it would be routed with another day's configuration (``date``); or,
   among the rows left,
2. its msg_id was put before by the same sending queue manager on the same run date: the copy kept is the first in
   :func:`keep_order` (the file's rank, first ingest then name; then the file's name; then the position), every
   later copy is held back (``duplicate``).

The reasons are templates with named fields (``{source_file}``): Python fills them with ``str.format``; the ingest
builds the same text as a Spark column from :func:`template_parts`.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from clwl.days import run_day

DATE_REASON = ("put time {put_time} is not in run date {run_date} (file {source_file} line {position}): not "
               "replayed, so that it is not routed with {run_date}'s configuration; put the row in a put file of "
               "the {put_date}/{folder}/ folder")
DUPLICATE_REASON = ("duplicate msg_id {msg_id}: already in {kept_file} line {kept_position} (kept there, replayed "
                    "once); this copy in {source_file} line {position} is not replayed ({difference})")
SAME_RECORD = "the same record"
DIFFERS = "it differs in {fields}; the kept copy is replayed"
#: How a put time is written in a reason: milliseconds, UTC (Spark's pattern is PUT_TIME_SPARK).
PUT_TIME_SPARK = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
#: The columns of silver.message_events the rows are identified by; a duplicate names the others that differ.
KEYS = ("run_date", "sending_qmgr", "msg_id")
#: The columns of silver.message_events that carry bronze's view of a row and are not compared.
BRONZE_LINEAGE = ("application_given", "ingest_run_id")


def put_time_text(t: datetime) -> str:
    """A put time as the reasons write it (PUT_TIME_SPARK in Python): ``2026-11-20T13:52:00.120Z``."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def template_parts(template: str) -> list[tuple[str, str | None]]:
    """``[(literal, field or None), ...]`` of a reason template, in order (how Spark builds the same text)."""
    return [(literal, name) for literal, name, _spec, _conv in string.Formatter().parse(template)]


def compared_fields(message_event_columns: Sequence[str]) -> list[str]:
    """The message_events columns a duplicate is compared on: those after the row's place in its file (run date,
    observing queue manager, file, position), less the keys and the columns kept for the bronze.put_records
    view (``application_given`` is compared as ``application``, which holds it during the decision)."""
    return [c for c in message_event_columns[4:] if c not in KEYS and c not in BRONZE_LINEAGE]


def difference(kept: dict[str, Any], copy: dict[str, Any], fields: Sequence[str]) -> str:
    """The reason's last part: the same record, or which fields differ from the kept copy."""
    differs = [f for f in fields if kept.get(f) != copy.get(f)]
    return DIFFERS.format(fields=", ".join(differs)) if differs else SAME_RECORD


def keep_order(file_rank: int | None, source_file: str, position: int) -> tuple[int, str, int]:
    """The order in which copies of one msg_id are kept: the first is replayed. ``file_rank``: the file's place in
    the run log (first ingest, then name); None for a file not ingested yet (after all the others)."""
    return (1 << 30 if file_rank is None else file_rank, source_file, position)


@dataclass(frozen=True)
class Put:
    """One put row, as the decision needs it: where it is, its keys, and the compared fields' values."""

    source_file: str
    position: int
    put_time: datetime
    msg_id: str
    folder: str  # the queue-manager folder the file is in (else the sending queue manager)
    fields: dict[str, Any]


@dataclass(frozen=True)
class HeldBack:
    source_file: str
    position: int
    kind: str  # "date" or "duplicate"
    reason: str


def hold_back(run_date: str, puts: Iterable[Put], fields: Sequence[str],
              file_rank: dict[str, int] | None = None) -> tuple[list[Put], list[HeldBack]]:
    """The rows of one (run date, sending queue manager) that are replayed, and those held back with their
    reasons."""
    day = run_day(run_date)
    rank = file_rank or {}
    replayed: list[Put] = []
    held: list[HeldBack] = []
    kept: dict[str, Put] = {}
    for p in sorted(puts, key=lambda p: keep_order(rank.get(p.source_file), p.source_file, p.position)):
        if p.put_time.date() != day:
            held.append(HeldBack(p.source_file, p.position, "date", DATE_REASON.format(
                put_time=put_time_text(p.put_time), run_date=run_date, source_file=p.source_file,
                position=p.position, put_date=p.put_time.date().isoformat(), folder=p.folder)))
            continue
        first = kept.setdefault(p.msg_id, p)
        if first is not p:
            held.append(HeldBack(p.source_file, p.position, "duplicate", DUPLICATE_REASON.format(
                msg_id=p.msg_id, kept_file=first.source_file, kept_position=first.position,
                source_file=p.source_file, position=p.position,
                difference=difference(first.fields, p.fields, fields))))
            continue
        replayed.append(p)
    return replayed, held
