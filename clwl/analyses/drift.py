"""``clwl drift``: what changed in the configuration since the previous run date, and what it did to the shares.

The configuration history is silver.config_history (docs/tables.md): one row per version of an object as one
queue manager saw it, from the capture that first showed it (``valid_from``) to the capture that showed it
changed or gone (``valid_to``). For a run date D:

1. The baseline of each observing queue manager is its configuration in force at the end of the day before D
   (or at the end of ``since``): the versions in force just before B, the first instant of D (a capture of
   00:00:00 belongs to D, as its landing folder says). A queue manager with nothing in force then is compared
   from its first capture after B ("first captured"): every object of a first capture is not a change.
2. Every moment from B to the end of D at which a version begins or ends is a capture that changed something;
   the configuration in force there (the same rule: ``valid_from <= t < valid_to``, as the replay's timeline,
   clwl/engine/replay.py ``timeline_from_history``) is compared object by object with the one just before: each
   attribute whose value differs is a :class:`Change`, an object that appears or goes is one too (its value
   ``(absent)``). Attributes that are not configuration (:data:`NOT_CONFIGURATION`) are left out of the
   comparison; MQ's own stamps of a change (:data:`STAMPS`) are shown beside it.
3. At each such moment, the configured share of every cluster queue the queue manager sees is asked of the engine
   (clwl/engine/shares.py ``engine_shares`` over ``steady`` views of clwl/lake/silver.py's timeline) before and after; each
   queue whose shares differ is a :class:`ShareEffect`.

Pure Python: :func:`drift_from_rows` takes the history rows as dicts; :func:`drift` reads them from a lake through
its one door (clwl/lake/door.py). Nothing here needs Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Iterable, Mapping, Optional

from clwl.days import RunDate, as_utc, day_bounds
from clwl.engine.model import ClusterView
from clwl.engine.replay import Snapshot
from clwl.engine.shares import engine_shares, steady
from clwl.lake.silver import timelines_from_rows
from clwl.lake.storage import Location
from clwl.mqsc_attributes import is_known_attribute

#: The columns of silver.config_history drift reads.
HISTORY_COLUMNS = ("observing_qmgr", "kind", "object_key", "attrs", "valid_from", "valid_to", "source_file")
HISTORY_TABLE = "silver.config_history"
#: The captures themselves (the history records changes, not captures): what tells a day without captures from a
#: day whose captures changed nothing.
CAPTURE_TABLE = "bronze.capture_files"
CAPTURE_COLUMNS = ("observing_qmgr", "capture_time", "capture_type")
CONFIG_CAPTURE = "config"

ABSENT = "(absent)"  # the object is not in the configuration
PRESENT = "(present)"  # the object is in it (the old or new value of an object that appears or goes)
NOT_SHOWN = "(not shown)"  # the object's record does not carry the attribute
FLAG = "(set)"  # a keyword attribute without a value (e.g. HARDENBO, NOTRIGGER) that the record carries
OBJECT = "(object)"  # the attribute of a change that is an object appearing or going

#: Kinds of the history that are not configuration: channel status is the channels' runtime state.
NOT_CONFIGURATION_KINDS = frozenset({"CHSTATUS"})

#: The lake's timestamps are microseconds: the instant just before another.
LAKE_TICK = timedelta(microseconds=1)

#: Shares equal to this many decimals are the same share (the engine's exact shares are ratios of weights).
SHARE_DIGITS = 6


class DriftError(Exception):
    """The drift cannot be computed (no history table, no configuration for the date): one line for stderr."""


@dataclass(frozen=True)
class NotConfiguration:
    """Attributes left out of the comparison, for the kinds given (None: every kind), and why."""

    kinds: Optional[frozenset[str]]
    attributes: frozenset[str]
    why: str

    def covers(self, kind: str, attribute: str) -> bool:
        return attribute in self.attributes and (self.kinds is None or kind in self.kinds)


#: What changes without the configuration changing: an attribute here never makes a Change.
NOT_CONFIGURATION: tuple[NotConfiguration, ...] = (
    NotConfiguration(None, frozenset({"ALTDATE", "ALTTIME"}),
                     "when the object was last altered: a stamp of a change, shown beside the attributes it changed"),
    NotConfiguration(frozenset({"CLUSQMGR", "QCLUSTER"}), frozenset({"CLUSDATE", "CLUSTIME"}),
                     "when the cluster's information about the object last reached this queue manager: a stamp, "
                     "renewed by every republication"),
    NotConfiguration(frozenset({"CLUSQMGR"}), frozenset({"STATUS"}),
                     "the cluster channel's status, its runtime state, not its definition"),
    NotConfiguration(frozenset({"QLOCAL", "QMODEL"}), frozenset({"CURDEPTH", "IPPROCS", "OPPROCS"}),
                     "runtime counters: messages on the queue and handles open on it"),
)


@dataclass(frozen=True)
class Stamp:
    """A pair of attributes in which MQ records when something happened to an object (its own clock)."""

    date_attr: str
    time_attr: str
    what: str


#: MQ's stamps of a change, first found first: the ALTER that made it, else the cluster update that brought it.
STAMPS: tuple[Stamp, ...] = (Stamp("ALTDATE", "ALTTIME", "altered"), Stamp("CLUSDATE", "CLUSTIME", "cluster update"))


def not_configuration(kind: str, attribute: str) -> bool:
    """Whether ``attribute`` of a ``kind`` record is left out of the comparison (:data:`NOT_CONFIGURATION`)."""
    return any(rule.covers(kind, attribute) for rule in NOT_CONFIGURATION)


# -- how an object is named -------------------------------------------------------------------------------------
def _named(*attrs: str) -> Callable[[str, Mapping], str]:
    """A label: the kind, then the values of ``attrs``, the first as the object's name and the rest in brackets."""

    def label(kind: str, a: Mapping) -> str:
        values = [a.get(x) or "?" for x in attrs]
        rest = f" ({', '.join(values[1:])})" if len(values) > 1 else ""
        return f"{kind} {values[0]}{rest}"

    return label


#: How an object of each kind is shown: its name and what else tells it from its namesakes (its identity in the
#: history, clwl/engine/view.py ``record_identity``).
LABELS: dict[str, Callable[[str, Mapping], str]] = {
    "CLUSQMGR": _named("CLUSQMGR", "CHANNEL", "CLUSTER"),
    "QCLUSTER": lambda kind, a: f"QCLUSTER {a.get('QUEUE') or '?'} on {a.get('CLUSQMGR') or '?'} "
                                f"({a.get('CLUSTER') or '?'})",
    "QMGR": lambda kind, a: "QMGR",
    "QLOCAL": _named("QUEUE"), "QALIAS": _named("QUEUE"), "QREMOTE": _named("QUEUE"), "QMODEL": _named("QUEUE"),
    "CHANNEL": _named("CHANNEL"),
    "NAMELIST": _named("NAMELIST"),
    "CFSTRUCT": _named("CFSTRUCT"),
    "QSGMEMBER": lambda kind, a: f"queue-sharing group {a.get('QSGNAME') or '?'} member {a.get('QSGMEMBER') or '?'}",
}


def object_label(kind: str, object_key: str, attrs: Mapping) -> str:
    """The object as an administrator names it (``QCLUSTER APP.ORDERS on QM4 (CL1)``)."""
    label = LABELS.get(kind)
    if label is not None:
        return label(kind, attrs)
    return " ".join(object_key.split("|"))


# -- what drift finds ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Change:
    """One attribute of one object that a capture showed changed (or an object that appeared or went)."""

    at: datetime  # the capture time that showed it (valid_from of the new version, or valid_to of a version gone)
    qmgr: str  # the observing queue manager
    kind: str
    object_key: str
    object: str  # object_label
    attribute: str  # OBJECT for an object that appeared or went
    old: str
    new: str
    stamp: Optional[str] = None  # MQ's stamp of it, on the queue manager's clock ("altered 2026-11-20 17:55:00")
    source_file: Optional[str] = None  # the capture of the new version (None: the object went)

    def as_dict(self) -> dict:
        return {"at": self.at.isoformat(), "qmgr": self.qmgr, "kind": self.kind, "object": self.object,
                "object_key": self.object_key, "attribute": self.attribute, "old": self.old, "new": self.new,
                "stamp": self.stamp, "source_file": self.source_file}


@dataclass(frozen=True)
class UnknownAttribute:
    """An attribute clwl does not know (clwl.mqsc_attributes: an attribute of a newer MQ level, or one a capture
    made up) on one object of one queue manager: not compared as configuration, so that a capture that shows it
    and the next that does not are not two changes. ``values``: (capture time, value) each time what the
    captures showed of it changed in the window, the first being the value at its start (NOT_SHOWN: not
    carried)."""

    qmgr: str
    kind: str
    object_key: str
    object: str
    attribute: str
    values: tuple[tuple[datetime, str], ...]

    def shown(self) -> str:
        """The values in order, each with the capture that first showed it: ``(not shown), 12:00:00 NONE, ...``."""
        return ", ".join(f"{t:%H:%M:%S} {v}" for t, v in self.values)

    def as_dict(self) -> dict:
        return {"qmgr": self.qmgr, "kind": self.kind, "object": self.object, "object_key": self.object_key,
                "attribute": self.attribute, "values": [{"at": t.isoformat(), "value": v} for t, v in self.values]}


@dataclass(frozen=True)
class ShareEffect:
    """What a capture's changes did to one queue's configured shares on one queue manager: per destination queue
    manager, the percentage of the queue's messages the engine sends there before and after (empty: the put
    fails, no destination)."""

    at: datetime
    qmgr: str  # the sending (observing) queue manager
    queue: str
    before: dict[str, float]
    after: dict[str, float]

    def destinations(self) -> list[tuple[str, float, float]]:
        """(destination, share before, share after) for every destination of either side, by name."""
        names = sorted(set(self.before) | set(self.after))
        return [(q, self.before.get(q, 0.0), self.after.get(q, 0.0)) for q in names]

    def as_dict(self) -> dict:
        return {"at": self.at.isoformat(), "qmgr": self.qmgr, "queue": self.queue,
                "before": {q: round(v, 3) for q, v in sorted(self.before.items())},
                "after": {q: round(v, 3) for q, v in sorted(self.after.items())},
                "destinations": [{"qmgr": q, "before": round(b, 3), "after": round(a, 3)}
                                 for q, b, a in self.destinations()]}


@dataclass
class Drift:
    """The configuration changes of a run date against the previous one, and their effect on the shares."""

    run_date: str
    since: str  # the run date whose end is the baseline
    baseline_at: datetime  # the end of ``since``: the configuration in force then is the baseline
    until: datetime  # the end of ``run_date``
    qmgrs: tuple[str, ...]  # the observing queue managers with configuration in the window
    first_captured: dict[str, datetime] = field(default_factory=dict)  # no baseline: compared from this capture
    captures: Optional[dict[str, int]] = None  # configuration captures in the window per queue manager (None: unknown)
    changes: list[Change] = field(default_factory=list)
    effects: list[ShareEffect] = field(default_factory=list)
    profile: str = "default"
    unknown: list[UnknownAttribute] = field(default_factory=list)  # attributes clwl does not know, not compared

    def rows(self) -> list[dict]:
        """The changes, one dict a row (a report section's table)."""
        return [c.as_dict() for c in self.changes]

    def effect_rows(self) -> list[dict]:
        """The share effects, one dict per queue manager, queue and destination."""
        return [{"at": e.at.isoformat(), "qmgr": e.qmgr, "queue": e.queue, "destination": q,
                 "before": round(b, 3), "after": round(a, 3)}
                for e in self.effects for q, b, a in e.destinations()]

    def as_dict(self) -> dict:
        return {
            "run_date": self.run_date, "since": self.since, "baseline_at": self.baseline_at.isoformat(),
            "until": self.until.isoformat(), "profile": self.profile, "observing_qmgrs": list(self.qmgrs),
            "first_captured": {q: t.isoformat() for q, t in sorted(self.first_captured.items())},
            "captures": self.captures,
            "changes": self.rows(), "share_effects": [e.as_dict() for e in self.effects],
            "unknown_attributes": [u.as_dict() for u in self.unknown],
            "not_configuration": [{"kinds": sorted(r.kinds) if r.kinds else None, "attributes": sorted(r.attributes),
                                   "why": r.why} for r in NOT_CONFIGURATION],
        }


# -- the comparison -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Version:
    kind: str
    object_key: str
    attrs: dict
    valid_from: datetime
    valid_to: Optional[datetime]
    source_file: Optional[str]


def versions_by_qmgr(rows: Iterable[Mapping]) -> dict[str, list[Version]]:
    """The configuration versions per observing queue manager (channel status left out)."""
    out: dict[str, list[Version]] = {}
    for r in rows:
        if r["kind"] in NOT_CONFIGURATION_KINDS:
            continue
        out.setdefault(r["observing_qmgr"], []).append(Version(
            r["kind"], r["object_key"], dict(r["attrs"] or ()), as_utc(r["valid_from"]), as_utc(r["valid_to"]),
            r.get("source_file")))
    return out


def _in_force(versions: list[Version], t: datetime) -> dict[str, Version]:
    """The versions in force at ``t``, by object (the timeline's rule: valid_from <= t < valid_to)."""
    return {v.object_key: v for v in versions if v.valid_from <= t and (v.valid_to is None or t < v.valid_to)}


def _value(attrs: Mapping, name: str) -> str:
    if name not in attrs:
        return NOT_SHOWN
    value = attrs[name]
    return FLAG if value is None else str(value)


def _stamp(old: Optional[Mapping], new: Mapping) -> Optional[str]:
    """MQ's stamp of the change: the first of STAMPS whose value differs from the old version's (a new object:
    the first it carries), as ``"<what> <date> <time>"`` with MQ's ``HH.MM.SS`` written ``HH:MM:SS``."""
    for s in STAMPS:
        d, t = new.get(s.date_attr), new.get(s.time_attr)
        if not d or not t:
            continue
        if old is None or (old.get(s.date_attr), old.get(s.time_attr)) != (d, t):
            return f"{s.what} {d} {t.replace('.', ':')}"
    return None


def compare(qmgr: str, at: datetime, before: Mapping[str, Version], after: Mapping[str, Version]) -> list[Change]:
    """The changes between two configurations of ``qmgr`` (versions by object), the later shown at ``at``."""
    out: list[Change] = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is new:
            continue
        shown = new or old
        label = object_label(shown.kind, key, shown.attrs)
        if old is None or new is None:
            out.append(Change(at, qmgr, shown.kind, key, label, OBJECT, PRESENT if new is None else ABSENT,
                              ABSENT if new is None else PRESENT, None if new is None else _stamp(None, new.attrs),
                              None if new is None else new.source_file))
            continue
        names = [a for a in sorted(set(old.attrs) | set(new.attrs))
                 if not not_configuration(new.kind, a) and is_known_attribute(a)]
        diffs = [(a, _value(old.attrs, a), _value(new.attrs, a)) for a in names]
        diffs = [d for d in diffs if d[1] != d[2]]
        if diffs:
            stamp = _stamp(old.attrs, new.attrs)
            out.extend(Change(at, qmgr, new.kind, key, label, a, o, n, stamp, new.source_file) for a, o, n in diffs)
    return out


def unknown_differences(before: Mapping[str, Version], after: Mapping[str, Version]) -> list[tuple[str, str, str, str]]:
    """(object key, attribute, old, new) of each attribute clwl does not know whose value differs between two
    configurations, on an object in both (an object that appears or goes is one change, whatever it carries)."""
    out = []
    for key in sorted(set(before) & set(after)):
        old, new = before[key], after[key]
        if old is new:
            continue
        for a in sorted(set(old.attrs) | set(new.attrs)):
            if is_known_attribute(a) or not_configuration(new.kind, a):
                continue
            o, n = _value(old.attrs, a), _value(new.attrs, a)
            if o != n:
                out.append((key, a, o, n))
    return out


def window(run_date: str, since: Optional[str] = None) -> tuple[str, datetime, datetime]:
    """(the baseline run date, its end, the end of ``run_date``): the day before ``run_date`` unless ``since``
    names an earlier one; DriftError for a ``since`` that is not before ``run_date``."""
    day = RunDate(run_date).day
    base = RunDate(since).day if since is not None else day - timedelta(days=1)
    if base >= day:
        raise DriftError(f"--since {base} is not before --date {day}: name an earlier run date")
    # the day before the first run date is a date, not a run date: its end is all that is needed of it
    return base.isoformat(), day_bounds(base)[1], day_bounds(day)[1]


def relevant(rows: Iterable[Mapping], baseline_at: datetime, until: datetime) -> list[Mapping]:
    """The rows that can be in force from the baseline to ``until``: begun before ``until``, not ended before the
    baseline (a version that ended earlier is in force neither at the baseline nor after it)."""
    out = []
    for r in rows:
        vf, vt = as_utc(r["valid_from"]), as_utc(r["valid_to"])
        if vf < until and (vt is None or vt >= baseline_at):
            out.append(r)
    return out


def count_captures(captures: Iterable[tuple[str, datetime]], qmgrs: Iterable[str], baseline_at: datetime,
                   until: datetime, run_date: str) -> dict[str, int]:
    """Configuration captures (observing queue manager, capture time) after the baseline and before ``until``, per
    queue manager (every one of ``qmgrs`` named, 0 for none); DriftError when there is none at all: nothing
    was captured to compare, which the history alone cannot tell from captures that changed nothing."""
    captures = [(q, as_utc(t)) for q, t in captures]
    seen = {(q, t) for q, t in captures if baseline_at <= t < until}
    if not seen:
        span = (f" (the lake's configuration captures run from {min(t for _, t in captures):%Y-%m-%d %H:%M} to "
                f"{max(t for _, t in captures):%Y-%m-%d %H:%M} UTC)") if captures else ""
        raise DriftError(f"no configuration capture of {run_date} (none from {baseline_at:%Y-%m-%d %H:%M} to "
                         f"{until:%Y-%m-%d %H:%M} UTC): nothing to compare{span}")
    counts = {q: 0 for q in qmgrs}
    for q, _ in seen:
        counts[q] = counts.get(q, 0) + 1
    return dict(sorted(counts.items()))


def drift_from_rows(rows: Iterable[Mapping], run_date: str, since: Optional[str] = None, profile: str = "default",
                    earliest: Optional[datetime] = None,
                    captures: Optional[Iterable[tuple[str, datetime]]] = None) -> Drift:
    """The drift of ``run_date`` from silver.config_history rows (dicts of HISTORY_COLUMNS; ``attrs`` a dict or
    the map's (key, value) pairs): the module's steps 1-3. DriftError when no configuration was in force;
    ``earliest`` (the history's first capture, when ``rows`` are only some of it) is named in its line.
    ``captures`` (observing queue manager, capture time) of the configuration captures, when known, are counted
    (:func:`count_captures`), and a window without any is a DriftError."""
    base, baseline_at, until = window(run_date, since)
    rows = [r for r in rows if r["kind"] not in NOT_CONFIGURATION_KINDS]
    earliest = earliest or min((as_utc(r["valid_from"]) for r in rows), default=None)
    rows = relevant(rows, baseline_at, until)
    by_qmgr = versions_by_qmgr(rows)
    if not by_qmgr:
        seen = f"the history's first capture is of {earliest:%Y-%m-%d %H:%M} UTC" if earliest else "the history is empty"
        raise DriftError(f"no configuration in force on {run_date} ({seen})")
    found = Drift(str(RunDate(run_date)), base, baseline_at, until, tuple(sorted(by_qmgr)), profile=profile)
    if captures is not None:
        found.captures = count_captures(captures, found.qmgrs, baseline_at, until, found.run_date)
    # The baseline is what was in force just before the run date's first instant: a capture of 00:00:00 is the
    # run date's (its landing folder's), so a change it shows is listed.
    just_before = baseline_at - LAKE_TICK
    timelines = timelines_from_rows(rows, [], just_before, until)
    cache: dict[tuple[ClusterView, str], dict[str, float]] = {}
    for qmgr, versions in sorted(by_qmgr.items()):
        points = sorted({v.valid_from for v in versions} | {v.valid_to for v in versions if v.valid_to is not None})
        later = [t for t in points if baseline_at <= t < until]
        if not any(t < baseline_at for t in points):  # nothing in force before: compared from its first capture
            if not later:
                continue
            found.first_captured[qmgr] = later[0]
            later = later[1:]
        before = _in_force(versions, found.first_captured.get(qmgr, just_before))
        unknown: dict[tuple[str, str], tuple[Version, list[tuple[datetime, str]]]] = {}
        for t in later:
            after = _in_force(versions, t)
            found.changes.extend(compare(qmgr, t, before, after))
            for key, attribute, old, new in unknown_differences(before, after):
                _, values = unknown.setdefault((key, attribute), (after[key], [(found.first_captured.get(
                    qmgr, baseline_at), old)]))
                values.append((t, new))
            before = after
        for (key, attribute), (v, values) in sorted(unknown.items()):
            found.unknown.append(UnknownAttribute(qmgr, v.kind, key, object_label(v.kind, key, v.attrs), attribute,
                                                  tuple(values)))
        found.effects.extend(share_effects(qmgr, timelines.get(qmgr, []), profile, cache))
    found.changes.sort(key=lambda c: (c.at, c.qmgr, c.kind, c.object, c.attribute))
    found.effects.sort(key=lambda e: (e.at, e.qmgr, e.queue))
    return found


def _shares(view: ClusterView, queue: str, profile: str, cache: dict) -> dict[str, float]:
    key = (view, queue)
    if key not in cache:  # a configuration seen again is not routed again
        cache[key] = {q: round(v, SHARE_DIGITS) for q, v in engine_shares(view, queue, profile).items() if v}
    return cache[key]


def share_effects(qmgr: str, timeline: list[Snapshot], profile: str = "default",
                  cache: Optional[dict] = None) -> list[ShareEffect]:
    """Per snapshot after the first of ``qmgr``'s timeline (clwl/lake/silver.py), the queues whose configured shares
    (the engine, every channel running) differ from the snapshot before."""
    cache = {} if cache is None else cache
    out: list[ShareEffect] = []
    snaps = sorted(timeline, key=lambda s: s.time)
    for prev, snap in zip(snaps, snaps[1:]):
        old, new = steady(prev.view), steady(snap.view)
        if old == new:
            continue
        queues = sorted({i.queue for i in old.instances} | {i.queue for i in new.instances})
        for queue in queues:
            before, after = _shares(old, queue, profile, cache), _shares(new, queue, profile, cache)
            if before != after:
                out.append(ShareEffect(snap.time, qmgr, queue, before, after))
    return out


# -- the lake ---------------------------------------------------------------------------------------------------
def read_history(lake: Location | str, baseline_at: datetime, until: datetime) -> tuple[list[dict], Optional[datetime]]:
    """The silver.config_history rows that can be in force from ``baseline_at`` to ``until`` (:func:`relevant`),
    read through the lake's door, and the first capture of the whole history (None: empty); DriftError when the
    lake has no such table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from clwl.lake.door import Lake, LakeFileError

    door = Lake.of(lake)
    if not door.exists(HISTORY_TABLE):
        raise DriftError(f"{lake}: no {HISTORY_TABLE} (ingest the captures first: clwl ingest or clwl run)")
    try:
        tab = door.rows(HISTORY_TABLE, columns=HISTORY_COLUMNS)
    except LakeFileError as e:  # a damaged log, named
        raise DriftError(str(e)) from None
    except Exception as e:  # deltalake's own refusal of a damaged table: one line, not a traceback
        raise DriftError(f"cannot read {door.table(HISTORY_TABLE)}: {' '.join(str(e).split())[:400]}") from None
    # Filtered in Arrow before the rows become dicts: a long history holds many versions ended long ago.
    begun = pc.less(tab.column("valid_from"), pa.scalar(until, tab.schema.field("valid_from").type))
    ended = pc.less(tab.column("valid_to"), pa.scalar(baseline_at, tab.schema.field("valid_to").type))
    keep = pc.and_(begun, pc.invert(pc.fill_null(ended, False)))
    return tab.filter(keep).to_pylist(), as_utc(pc.min(tab.column("valid_from")).as_py())


def read_captures(lake: Location | str) -> Optional[list[tuple[str, datetime]]]:
    """(observing queue manager, capture time) of every configuration capture of bronze.capture_files, read
    through the lake's door; None when the lake has no such table (the captures are then not counted)."""
    import pyarrow.compute as pc

    from clwl.lake.door import Lake

    door = Lake.of(lake)
    if not door.exists(CAPTURE_TABLE):
        return None
    try:
        tab = door.rows(CAPTURE_TABLE, columns=CAPTURE_COLUMNS)
    except Exception as e:  # a damaged table, named (deltalake's refusals are not one class)
        raise DriftError(f"cannot read {door.table(CAPTURE_TABLE)}: {' '.join(str(e).split())[:400]}") from None
    tab = tab.filter(pc.equal(tab.column("capture_type"), CONFIG_CAPTURE))
    return [(r["observing_qmgr"], r["capture_time"]) for r in tab.to_pylist() if r["observing_qmgr"]]


def drift(lake: Location | str, run_date: str, since: Optional[str] = None, profile: str = "default") -> Drift:
    """The drift of ``run_date`` in the lake at ``lake`` (:func:`drift_from_rows` over :func:`read_history` and
    :func:`read_captures`)."""
    _, baseline_at, until = window(run_date, since)
    rows, earliest = read_history(lake, baseline_at, until)
    return drift_from_rows(rows, run_date, since, profile, earliest, read_captures(lake))
