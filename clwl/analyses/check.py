"""The landing doctor behind ``clwl check``: what an ingest of the landing folder would read, accept and
quarantine, file by file, and the gaps in the landing folder that weaken the replay. No Spark: the files are found
by the ingest's own discovery and task plan (clwl.landing.discovery, which the ingest imports too) and each is
parsed in-process by the ingest's own parse task body (:func:`spark.ingest.parse_landing_file`), so the check and
the ingest cannot disagree on a file. That body is the one part of the ingest that stays in its package; it is
imported when the check runs (importing this module loads only the standard library and clwl); the positions of the columns in
the rows they give are the table registry's (clwl/lake/registry.py), not pyspark's schemas. Only the put records the
ingest holds back afterwards (put time outside the run date, a msg_id already put by the same sender that day in
another file) are decided here, by the same rules (docs/landing.md, "Held back"), as a lake built from this
landing folder in one run would decide them (the first copy by file name is kept).

Gaps (docs/cli-contract.md, ``clwl check``): a sender with puts but no configuration capture at or before its
first put (a capture of an earlier date counts: configuration carries across days); channel status captures
further apart than an interval; receivers (hosts of cluster queue instances seen in the configuration) with no
queue accounting that day; a run date with no put record; full repositories named in the captures (QMTYPE(REPOS))
none of which is captured that day, which leaves clwl lint's partial-view-differs and departed-qmgr-chosen
without their reference. Gaps never make the check fail: they are warnings. The
channel status and accounting rules are clwl/landing/evidence.py's, which the ingest and the report apply too.

Nothing is printed here: :func:`check_landing` returns a :class:`LandingCheck`.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable

from clwl.lake import registry
from clwl.landing import formats
from clwl.landing.discovery import LandingFile, discover_landing, plan_tasks, trace_zone
from clwl.landing.evidence import (
    CHSTATUS_INTERVAL_MINUTES,
    Gap,
    accounting_gaps,
    chstatus_gaps,
    full_repository_gaps,
    igq_gaps,
)
from clwl.landing.formats import TRACE_FORMAT
from clwl.landing.held_back import Put as HeldPut
from clwl.landing.held_back import compared_fields, hold_back
from clwl.landing.layout import run_date_folders
from clwl.landing.totals import RecordTotals

#: Problems kept per file (the first ones by position); the counts are always complete.
MAX_PROBLEMS = 20

_RUN_ID = "check"
_PUTS, _OPS, QUARANTINE_TABLE = "bronze.put_records", "bronze.activity_operations", "silver.quarantine"
_COMPARED = compared_fields(registry.spec("silver.message_events").columns)  # what a duplicate's reason compares
_OBJECTS, _CAPTURES, _ACCOUNTING = "bronze.mqsc_objects", "bronze.capture_files", "bronze.queue_accounting"


# ----------------------------------------------------------------------------------------------------------
# Result


@dataclass
class Problem:
    """One record (or the whole file) that would be quarantined: level file | record | message (held back)."""

    position: int
    level: str
    reason: str


@dataclass
class FileCheck:
    """One landing file as the ingest would take it. records_read = records_accepted + records_quarantined,
    the held-back put records counted as quarantined (as in ``gold.run_summary``)."""

    source_file: str
    run_date: str
    observing_qmgr: str | None
    parser: str  # capture | puts | xmitq | amqsmon | activity_trace | unknown
    format: str
    capture_type: str | None
    capture_time: datetime | None
    status: str  # read | rejected (the whole file quarantined) | skipped (never opened)
    records_read: int
    records_accepted: int
    records_quarantined: int
    held_back: int = 0  # put records of records_quarantined that the parser accepted but the replay would not take
    problems: list[Problem] = field(default_factory=list)  # the first MAX_PROBLEMS, by position
    notes: list[str] = field(default_factory=list)  # the parser's file-level remarks (activity traces)

    @property
    def name(self) -> str:
        return self.source_file.rsplit("/", 1)[-1]


@dataclass
class LandingCheck(RecordTotals):  # totals over the files, as an ingest run counts them
    landing: str
    run_dates: list[str]
    chstatus_interval_minutes: int
    files: list[FileCheck]
    gaps: list[Gap]
    notes: list[str]  # discovery's notes: items skipped without being opened

    @property
    def held_back(self) -> int:
        return sum(f.held_back for f in self.files)

    @property
    def quarantining_files(self) -> list[FileCheck]:
        """The files of which something would be quarantined (rejected and skipped files included)."""
        return [f for f in self.files if f.records_quarantined]

    @property
    def clean(self) -> bool:
        """Nothing would be quarantined (gaps do not count)."""
        return not self.quarantining_files

    def summary_line(self) -> str:
        bad = self.quarantining_files
        held = f" ({self.held_back} of them put records held back)" if self.held_back else ""
        verdict = ("nothing would be quarantined" if not bad else
                   f"{len(bad)} file{'s' if len(bad) != 1 else ''} would have records quarantined")
        return (f"{len(self.run_dates)} run date{'s' if len(self.run_dates) != 1 else ''}, {len(self.files)} files, "
                f"{self.records_read} records read, {self.records_accepted} accepted, {self.records_quarantined} "
                f"quarantined{held}; {len(self.gaps)} gap{'s' if len(self.gaps) != 1 else ''}; {verdict}")

    def to_json(self) -> dict:
        def plain(value):
            if isinstance(value, datetime):
                return value.isoformat().replace("+00:00", "Z")
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            if isinstance(value, list):
                return [plain(v) for v in value]
            return value

        return {
            "landing": self.landing, "run_dates": self.run_dates,
            "chstatus_interval_minutes": self.chstatus_interval_minutes,
            "files": [plain(asdict(f)) for f in self.files], "gaps": [asdict(g) for g in self.gaps],
            "notes": self.notes,
            "summary": {"run_dates": len(self.run_dates), "files": len(self.files),
                        "records_read": self.records_read, "records_accepted": self.records_accepted,
                        "records_quarantined": self.records_quarantined, "held_back": self.held_back,
                        "files_quarantining": len(self.quarantining_files), "gaps": len(self.gaps),
                        "clean": self.clean, "line": self.summary_line()},
        }


# ----------------------------------------------------------------------------------------------------------
# Reading the files


def _column(key: str, name: str) -> int:
    return registry.spec(key).index(name)


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


@dataclass
class _Put:
    """What the checks need of one accepted put record (``fields``: those a duplicate is compared on)."""

    position: int
    put_time: datetime
    sending_qmgr: str
    msg_id: str
    fields: dict


@dataclass
class _Facts:
    """What the gap checks need, gathered while the files are parsed."""

    config_times: dict[str, list[datetime]] = field(default_factory=dict)  # qmgr -> usable config capture times
    chstatus_times: dict[tuple[str, str], list[datetime]] = field(default_factory=dict)  # (date, qmgr) -> times
    # observing qmgr -> run date -> {host qmgr -> cluster queues it hosts}, from that date's captures
    hosts: dict[str, dict[str, dict[str, set[str]]]] = field(default_factory=dict)
    accounting: set[tuple[str, str]] = field(default_factory=set)  # (date, qmgr) with queue accounting records
    puts: dict[tuple[str, str], list[tuple[str, _Put]]] = field(default_factory=dict)  # (date, sender) -> in day
    put_days: set[str] = field(default_factory=set)  # run dates with a put record that would be replayed
    # (date, qmgr) -> (QSGNAME, IGQ enabled) of its DISPLAY QMGR; (date, group) -> DISPLAY GROUP's members
    groups: dict[tuple[str, str], tuple[str, bool]] = field(default_factory=dict)
    group_members: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    # date -> the full repositories the day's captures name (QMTYPE(REPOS), or REPOS/REPOSNL of their own QMGR),
    # and the queue managers with a configuration capture that day: clwl lint's stale-knowledge rules need both
    full_repositories: dict[str, set[str]] = field(default_factory=dict)
    configured: set[tuple[str, str]] = field(default_factory=set)


def _parse(landing_file: LandingFile, trace_tz: str, state) -> tuple[dict, dict[str, list[tuple]], list[_Put]]:
    """``parse_landing_file`` as a parse task calls it, with the put records taken as they are parsed: a large
    put file or trace is handed over in chunks (``spill``) whose rows are reduced to :class:`_Put` at once and
    the rest dropped, so memory does not hold whole bronze rows."""
    from clwl.parse.activity_trace import ORIGIN as TRACE_ORIGIN
    from spark.ingest import parse_landing_file

    at = {n: _column(_PUTS, n) for n in ("position", "put_time", "sending_qmgr", "msg_id", "format")}
    compared = {f: _column(_PUTS, f) for f in _COMPARED if f != "source"}
    puts: list[_Put] = []

    def put(r: tuple) -> _Put:
        fields = {f: (_utc(r[i]) if f == "put_time" else r[i]) for f, i in compared.items()}
        # silver.message_events' source: the put file's format; an activity trace's rows are activity_trace events
        fields["source"] = TRACE_ORIGIN if r[at["format"]] == TRACE_FORMAT else r[at["format"]]
        return _Put(int(r[at["position"]]), _utc(r[at["put_time"]]), r[at["sending_qmgr"]], r[at["msg_id"]], fields)

    def take(rows: list[tuple]) -> None:
        puts.extend(put(r) for r in rows)

    with tempfile.TemporaryDirectory(prefix="clwl-check-") as nowhere:
        def spill(key: str, rows: list[tuple]) -> str:
            if key == _PUTS:
                take(rows)
            # Nothing is written: a rejected file "removes" this path, which never existed.
            return str(Path(nowhere) / "not-written")

        summary, rows = parse_landing_file(landing_file, _RUN_ID, spill, trace_tz, state)
    if summary["status"] == "rejected":  # what it gave before it was rejected is dropped, as by the ingest
        return summary, rows, []
    take(rows.get(_PUTS, ()))
    return summary, rows, puts


def _gather(spec: LandingFile, summary: dict, rows: dict[str, list[tuple]], facts: _Facts) -> None:
    if summary["status"] == "rejected":
        return
    d, qmgr = spec.run_date, spec.observing_qmgr
    if formats.informs(spec.parser, formats.CONFIGURATION) and spec.capture_time is not None and qmgr:
        if spec.capture_type == "config" and summary["records_accepted"]:
            facts.config_times.setdefault(qmgr, []).append(spec.capture_time)
            facts.configured.add((d, qmgr))
        if spec.capture_type == "chstatus":  # an empty answer counts: every channel inactive
            facts.chstatus_times.setdefault((d, qmgr), []).append(spec.capture_time)
        kind, attrs = _column(_OBJECTS, "kind"), _column(_OBJECTS, "attrs")
        hosted = facts.hosts.setdefault(qmgr, {}).setdefault(d, {})
        for r in rows.get(_OBJECTS, ()):
            a = r[attrs] or {}
            # Local instances only: accounting is kept for local queues; a clustered alias or queue manager
            # alias puts to a local queue that is a cluster queue instance of its own.
            if r[kind] == "QCLUSTER" and (a.get("CLUSQT") or "QLOCAL").upper() == "QLOCAL" and a.get("CLUSQMGR"):
                hosted.setdefault(a["CLUSQMGR"], set()).add(a.get("QUEUE") or a.get("QNAME") or "?")
            elif r[kind] == "QLOCAL" and ((a.get("CLUSTER") or "").strip() or (a.get("CLUSNL") or "").strip()):
                hosted.setdefault(qmgr, set()).add(a.get("QUEUE") or a.get("QLOCAL") or "?")
            if r[kind] == "CLUSQMGR" and (a.get("QMTYPE") or "").strip().upper() == "REPOS" and a.get("CLUSQMGR"):
                facts.full_repositories.setdefault(d, set()).add(a["CLUSQMGR"].strip())
            elif r[kind] == "QMGR" and ((a.get("REPOS") or "").strip() or (a.get("REPOSNL") or "").strip()):
                facts.full_repositories.setdefault(d, set()).add(qmgr)
            if r[kind] == "QMGR":
                facts.groups[(d, qmgr)] = ((a.get("QSGNAME") or "").strip(), (a.get("IGQ") or "").strip() == "ENABLED")
            elif r[kind] == "QSGMEMBER" and (a.get("QSGNAME") or "").strip():
                facts.group_members.setdefault((d, a["QSGNAME"].strip()), set()).add((a.get("QSGMEMBER") or "").strip())
    elif formats.informs(spec.parser, formats.ACCOUNTING) and qmgr:
        mtype = _column(_ACCOUNTING, "monitoring_type")
        if any(r[mtype] == "QueueAccounting" for r in rows.get(_ACCOUNTING, ())):
            facts.accounting.add((d, qmgr))


def _file_check(spec: LandingFile, summary: dict, rows: dict[str, list[tuple]]) -> FileCheck:
    pos, level, reason = (_column(QUARANTINE_TABLE, n) for n in ("position", "level", "reason"))
    problems = sorted((Problem(int(r[pos] or 0), r[level], r[reason]) for r in rows.get(QUARANTINE_TABLE, ())),
                      key=lambda p: p.position)[:MAX_PROBLEMS]
    status = "skipped" if spec.skipped else ("rejected" if summary["status"] == "rejected" else "read")
    return FileCheck(
        source_file=spec.source_file, run_date=spec.run_date, observing_qmgr=spec.observing_qmgr,
        parser=spec.parser, format=summary["format"], capture_type=spec.capture_type,
        capture_time=spec.capture_time, status=status, records_read=summary["records_read"],
        records_accepted=summary["records_accepted"], records_quarantined=summary["records_quarantined"],
        problems=problems, notes=list(summary.get("notes") or ()))


def _read_files(files: list[LandingFile], trace_tz: str, facts: _Facts) -> list[FileCheck]:
    """Parse every file, in (run date, name) order; the activity traces of one run date and queue manager with
    one handle state handed on in name order, as the ingest's parse task does (``plan_tasks``' units)."""
    from clwl.parse.activity_trace import TraceState

    together = {id(f): i for i, unit in enumerate(plan_tasks(files, 1, task_bytes=0)) if len(unit) > 1 for f in unit}
    states: dict[int, TraceState] = {}
    checks = []
    for spec in sorted(files, key=lambda f: (f.run_date, f.source_file)):
        state = None
        if formats.unit(spec.parser) == formats.QMGR_DAY and not spec.reject:
            state = states.setdefault(together.get(id(spec), -1 - len(states)), TraceState())
        summary, rows, puts = _parse(spec, trace_tz, state)
        check = _file_check(spec, summary, rows)
        _gather(spec, summary, rows, facts)
        for p in puts:
            facts.puts.setdefault((spec.run_date, p.sending_qmgr), []).append((spec.source_file, p))
        checks.append(check)
    return checks


# ----------------------------------------------------------------------------------------------------------
# Held back: the ingest's message-event rules (docs/landing.md, "Held back: put records not replayed")


def _hold_back(checks: list[FileCheck], files: dict[str, LandingFile], facts: _Facts) -> None:
    """Move the put records the ingest would hold back from accepted to quarantined, with the reason: the ingest's
    own decision (clwl.landing.held_back) on a fresh lake, where every file is first ingested in one run, so copies are
    kept by file name, then position. Leaves in ``facts.puts`` only the records that would be replayed."""
    by_file = {c.source_file: c for c in checks}
    held: dict[str, list[Problem]] = {}
    for (d, sender), puts in sorted(facts.puts.items()):
        rows = {(f, p.position): p for f, p in puts}
        replayed, losers = hold_back(d, [
            HeldPut(f, p.position, p.put_time, p.msg_id, files[f].observing_qmgr or sender, p.fields)
            for f, p in puts], _COMPARED)
        for h in losers:
            held.setdefault(h.source_file, []).append(Problem(h.position, "message", h.reason))
        facts.puts[(d, sender)] = [(r.source_file, rows[(r.source_file, r.position)]) for r in replayed]
    for source_file, problems in held.items():
        c = by_file[source_file]
        c.held_back = len(problems)
        c.records_accepted -= len(problems)
        c.records_quarantined += len(problems)
        c.problems = sorted(c.problems + problems, key=lambda p: p.position)[:MAX_PROBLEMS]
    for key in [k for k, v in facts.puts.items() if not v]:
        del facts.puts[key]
    facts.put_days = {d for d, _ in facts.puts}


# ----------------------------------------------------------------------------------------------------------
# Gaps


def _gaps(dates: list[str], facts: _Facts, interval: timedelta) -> list[Gap]:
    gaps: list[Gap] = []
    for d in dates:
        senders = {s: [p for _, p in ps] for (day, s), ps in facts.puts.items() if day == d}
        if d not in facts.put_days:
            gaps.append(Gap("no_puts", d, None, (
                f"no put records for {d}: no put file (puts*.csv|jsonl|json) or activity trace (*.amqsact) with a "
                "record that would be replayed; the day is published with no messages")))
        # Configuration before the first put (a capture of an earlier date counts).
        for s in sorted(senders):
            first = min(p.put_time for p in senders[s])
            before = [t for t in facts.config_times.get(s, ()) if t <= first]
            if not before:
                gaps.append(Gap("no_configuration", d, s, (
                    f"{s} puts from {first.isoformat().replace('+00:00', 'Z')} but no configuration capture of {s} "
                    f"(config_HHMMSS in a {s}/ folder, this date or earlier) is at or before it: its messages "
                    "until the first capture are not routed (NO_CONFIGURATION)")))
        # Channel status: clwl.landing.evidence's one rule (the report and the ingest apply it too).
        captures = {q: times for (day, q), times in facts.chstatus_times.items() if day == d}
        spans = {s: (min(p.put_time for p in ps), max(p.put_time for p in ps)) for s, ps in senders.items()}
        gaps += [g.gap(d) for g in chstatus_gaps(d, captures, spans, interval)]
        # Receivers: hosts of cluster queue instances in the configuration in force that day (per observing
        # queue manager, its captures of the latest date up to this one that has any).
        hosts: dict[str, set[str]] = {}
        seen_by: dict[str, set[str]] = {}
        for observer, by_date in facts.hosts.items():
            latest = max((day for day in by_date if day <= d), default=None)
            for host, queues in (by_date[latest] if latest else {}).items():
                hosts.setdefault(host, set()).update(queues)
                seen_by.setdefault(host, set()).add(observer)
        gaps += accounting_gaps(d, hosts, seen_by, {q for day, q in facts.accounting if day == d})
        gaps += igq_gaps(d, {q: g for (day, q), g in facts.groups.items() if day == d},
                         {g: m for (day, g), m in facts.group_members.items() if day == d})
        gaps += full_repository_gaps(d, facts.full_repositories.get(d, set()),
                                     {q for day, q in facts.configured if day == d})
    return gaps


def _earlier_configuration(landing: Path, checked: list[str], needed: set[str], trace_tz: str, facts: _Facts) -> None:
    """With ``--date``: the configuration that carries into the dates checked from the dates not checked
    (before the last one checked). Read newest first, and no more of them than needed (discovery hashes every
    file of a date): of each date only the config captures of the queue managers still without a usable one
    (parsed, not reported); it stops when every queue manager in ``needed`` has one."""

    earlier = [d for d in run_date_folders(landing)  # the run date folders discovery would take
               if d < checked[-1] and d not in checked]
    found: set[str] = set()
    for d in sorted(earlier, reverse=True):
        if needed <= found:
            break
        _, files, _ = discover_landing(landing, [d])
        usable: set[str] = set()  # every config capture of this date is read: together they are its configuration
        for spec in sorted(files, key=lambda f: f.source_file):
            if (not formats.informs(spec.parser, formats.CONFIGURATION) or spec.capture_type != "config"
                    or spec.reject or not spec.observing_qmgr or spec.observing_qmgr in found):
                continue
            summary, rows, _ = _parse(spec, trace_tz, None)
            _gather(spec, summary, rows, facts)
            if summary["status"] != "rejected" and summary["records_accepted"]:
                usable.add(spec.observing_qmgr)
        found |= usable


def check_landing(landing: Path | str, run_dates: Iterable[str] | None = None,
                  chstatus_interval: timedelta = timedelta(minutes=CHSTATUS_INTERVAL_MINUTES),
                  trace_tz: str | None = None) -> LandingCheck:
    """What an ingest of ``landing`` (its ``run_dates``, default every date folder) would read, accept and
    quarantine, and the gaps that weaken the replay. :class:`spark.ingest.LandingError` when the landing folder
    or a requested date folder cannot be used; ValueError for an unknown ``trace_tz`` (default
    $CLWL_TRACE_TZ, else UTC, as the ingest). Bad files never raise: they are what the check reports."""

    trace_tz = trace_zone(trace_tz)
    root = Path(landing)
    dates, files, notes = discover_landing(root, run_dates)
    facts = _Facts()
    checks = _read_files(files, trace_tz, facts)
    _hold_back(checks, {f.source_file: f for f in files}, facts)
    if run_dates is not None and dates:
        needed = {f.observing_qmgr for f in files if f.observing_qmgr} | {s for _, s in facts.puts}
        _earlier_configuration(root, dates, needed, trace_tz, facts)
    return LandingCheck(landing=str(root), run_dates=dates,
                        chstatus_interval_minutes=int(chstatus_interval.total_seconds() // 60), files=checks,
                        gaps=_gaps(dates, facts, chstatus_interval), notes=notes)


# ----------------------------------------------------------------------------------------------------------
# The day's messages, for clwl lint on a landing folder


def put_records(landing: Path | str, run_date: str, trace_tz: str | None = None) -> list[tuple]:
    """(sending_qmgr, put_time, msg_id, fields) of every put record of ``run_date`` that an ingest of ``landing``
    would replay (``fields``: its silver.message_events columns, as the held-back rule compares them): the date's
    put files and activity traces, parsed by the ingest's own parse task body, the records it would hold back left
    out (:func:`check_landing`'s rules). ``clwl lint`` on a landing folder counts and replays these where ``clwl
    lint --lake`` reads silver.message_events. LandingError when the date folder cannot be used."""

    _, files, _ = discover_landing(Path(landing), [run_date])
    files = [f for f in files if formats.gives_puts(f.parser)]
    facts = _Facts()
    checks = _read_files(files, trace_zone(trace_tz), facts)
    _hold_back(checks, {f.source_file: f for f in files}, facts)
    return [(p.sending_qmgr, p.put_time, p.msg_id, p.fields)
            for (d, _), puts in sorted(facts.puts.items()) if d == run_date for _, p in puts]


def put_traffic(landing: Path | str, run_date: str, trace_tz: str | None = None) -> list[tuple]:
    """(sending_qmgr, queue, bind, from_cluster_channel) of each of :func:`put_records`: what ``clwl lint`` counts."""
    return [(s, f.get("queue"), f.get("bind"), f.get("from_cluster_channel"))
            for s, _, _, f in put_records(landing, run_date, trace_tz)]
