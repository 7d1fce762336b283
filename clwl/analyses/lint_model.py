"""``clwl lint``'s words: what a rule reads (:class:`LintContext`, the observations), what it yields (:class:`Hit`,
:class:`Finding`) and how a rule is declared (:class:`Rule`). The rules are clwl/analyses/lint_rules.py's; the
entry points clwl/analyses/lint.py's (docs/lint.md). Pure: no Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

from clwl.engine.candidates import BIND_AS_DEFBIND, DefbindSource, defbind_source
from clwl.engine.model import ClusterView
from clwl.engine.replay import PutEvent
from clwl.engine.view import build_view, latest_records
from clwl.landing.formats import CAPTURE_NAME
from clwl.parse.common import MqscRecord


class LintInputError(Exception):
    """The lint cannot run on what it was given (a date the lake does not hold, no captures): one line."""



# -- what a rule reads ----------------------------------------------------------------------------------------
#: The workload attributes a manual CLUSSDR can carry, with MQ's defaults (the CLUSRCVR's are what MQ uses).
CLUSSDR_WORKLOAD_DEFAULTS = (("CLWLRANK", 0), ("CLWLPRTY", 0), ("CLWLWGHT", 50))

#: A cluster queue instance's CLUSQT -> the MQSC object type an administrator alters on its host.
@dataclass(frozen=True)
class ChannelDefinition:
    """A DISPLAY CHANNEL record of the observing queue manager: the channel as defined there (the view keeps
    only what DISPLAY CLUSQMGR shows, which for a manual CLUSSDR are the CLUSRCVR's advertised values)."""

    name: str
    chltype: str
    attrs: Mapping[str, Optional[str]]

    @staticmethod
    def from_record(r: MqscRecord) -> "ChannelDefinition":
        return ChannelDefinition((r.get("CHANNEL") or "").strip(), (r.get("CHLTYPE") or "").strip().upper(),
                                 dict(r.attrs))

    def number(self, key: str) -> Optional[int]:
        """The attribute as a number, None when it was not captured (or is not a number)."""
        v = self.attrs.get(key)
        try:
            return int(v.strip()) if v is not None and v.strip() else None
        except ValueError:
            return None


@dataclass(frozen=True)
class Observation:
    """One observing queue manager: its view, and its manual channel definitions if DISPLAY CHANNEL was
    captured (``channels_captured`` False: nothing is known of them, and rules about them say nothing);
    ``captured_at``: when its configuration in force was captured (None: not known), so that two queue managers'
    views are compared only where the one held for the reference is not older."""

    qmgr: str
    view: ClusterView
    channel_definitions: tuple[ChannelDefinition, ...] = ()
    channels_captured: bool = False
    captured_at: Optional[datetime] = None


def capture_time_of(records: Iterable[MqscRecord]) -> Optional[datetime]:
    """The latest configuration capture the records come from, by its landing name (``<date>/<QM>/config_HHMMSS``,
    read as UTC as the ingest reads it); None when no record comes from a file so named."""
    from clwl.days import RunDate

    times = []
    for r in records:
        p = PurePosixPath(str(r.source).replace("\\", "/"))
        m = CAPTURE_NAME.match(p.name)
        stamp = m.group(2) if m and m.group(1).lower() == "config" else ""
        if len(stamp) != 6 or not stamp.isdigit():
            continue
        try:
            day = RunDate(p.parent.parent.name).day
            times.append(datetime(day.year, day.month, day.day, int(stamp[:2]), int(stamp[2:4]), int(stamp[4:]),
                                  tzinfo=timezone.utc))
        except ValueError:
            continue
    return max(times, default=None)


def observe(qmgr: str, records: Iterable[MqscRecord]) -> Observation:
    """The observation of ``qmgr`` from its records (later records of one object replace earlier ones)."""
    records = list(records)
    recs = latest_records(records)
    view, _ = build_view(recs, qmgr)
    channels = tuple(sorted((ChannelDefinition.from_record(r) for r in recs if r.kind == "CHANNEL"),
                            key=lambda c: (c.name, c.chltype)))
    return Observation(qmgr, view, channels, any(r.kind == "CHANNEL" for r in recs), capture_time_of(records))


@dataclass(frozen=True)
class Puts:
    """The day's messages a sending queue manager's applications put on one queue name (arrived over a cluster
    channel left out: MQ does not route them again), and how many of them were bound on open (the put record's
    bind ``open``, or MQOO_BIND_AS_Q_DEF left for DEFBIND to decide)."""

    messages: int = 0
    bound_on_open: int = 0


#: The put records' bind values that the DEFBIND(OPEN) finding is about.
BOUND_ON_OPEN = frozenset({"open", "as_q_def"})


def count_puts(rows: Iterable[tuple[str, str, Optional[str], Optional[bool]]]) -> dict[tuple[str, str], Puts]:
    """(sending queue manager, queue) -> :class:`Puts`, from (sending_qmgr, queue, bind, from_cluster_channel)
    of each put record the replay takes (silver.message_events, or the put files as the ingest would take them)."""
    out: dict[tuple[str, str], list[int]] = {}
    for sender, queue, bind, from_channel in rows:
        if from_channel:
            continue
        n = out.setdefault((sender, queue), [0, 0])
        n[0] += 1
        n[1] += (bind or "").lower() in BOUND_ON_OPEN
    return {k: Puts(*v) for k, v in out.items()}


@dataclass(frozen=True)
class LintContext:
    """Everything the rules read: the observations, by queue manager name."""

    observations: tuple[Observation, ...]
    #: Per sending queue manager with IGQ(ENABLED): (messages the day replayed to another member of its group,
    #: of those too large for intra-group queuing). Empty where no day's messages are known (captures alone).
    igq_traffic: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    #: The day's put records per (sending queue manager, queue name opened): None where no day's messages are
    #: known (captures alone), so that a default's severity cannot be judged and stays a warning.
    traffic: Optional[Mapping[tuple[str, str], "Puts"]] = None
    run_date: str = ""  # the day ``traffic`` counts
    #: The day's messages an application on a sending queue manager put on any of some queue names (sender, names)
    #: -> :class:`DayMessage` in put order, what the stale-knowledge rules replay; None where no day's messages
    #: are known (captures alone). A function: only the few senders and queues a finding is about are read.
    messages: Optional[Callable[[str, frozenset[str]], Sequence["DayMessage"]]] = None
    #: The configurations in force over the day, oldest first: (from when, every observation then); the last is
    #: ``observations``. Empty with captures alone (one moment): a difference's duration is then not known.
    moments: tuple[tuple[datetime, tuple["Observation", ...]], ...] = ()

    def puts(self, senders: Iterable[str], queues: Iterable[str]) -> Optional["Puts"]:
        """The day's messages ``senders`` put on any of ``queues`` (None: no day's messages known)."""
        if self.traffic is None:
            return None
        queues = set(queues)
        found = [p for (s, q), p in self.traffic.items() if s in set(senders) and q in queues]
        return Puts(sum(p.messages for p in found), sum(p.bound_on_open for p in found))

    def group_members(self, o: "Observation") -> frozenset[str]:
        """The other members of ``o``'s queue-sharing group: every observer whose DISPLAY QMGR shows the same
        QSGNAME, and the members its own view holds (its DISPLAY GROUP, or the group the timeline built)."""
        group = o.view.qmgr.qsgname
        if not group:
            return frozenset()
        same = {x.qmgr for x in self.observations if x.view.qmgr.qsgname == group}
        return frozenset((same | o.view.qsg_members) - {o.qmgr})

    def hosts_seen(self, queue: str) -> frozenset[str]:
        """Every queue manager any observer sees hosting ``queue`` (a partial repository knows only the
        instances it has used; the others' views complete it)."""
        return frozenset(i.qmgr for o in self.observations for i in o.view.instances_of(queue) if not i.qmgr_alias)


@dataclass(frozen=True)
class DayMessage:
    """One put record of the day, as the replay takes it, with the application that put it."""

    event: PutEvent
    application: str = ""


def messages_of(records: Iterable[tuple[str, datetime, str, Mapping]]) -> Callable[[str, frozenset[str]], list[DayMessage]]:
    """:attr:`LintContext.messages` over put records (sending_qmgr, put_time, msg_id, silver.message_events fields)
    of a landing date (:func:`clwl.analyses.check.put_records`), each made a PutEvent as the lake's replay makes it
    (:func:`clwl.lake.silver.put_event`); its application by :func:`clwl.analyses.incidents.application_of`, from
    the put file (a traced put's ApplName is the lake's alone)."""
    from clwl.analyses.incidents import application_of
    from clwl.lake.silver import put_event

    by_sender: dict[str, list[DayMessage]] = {}
    for sender, put_time, msg_id, f in records:
        if f.get("from_cluster_channel"):
            continue  # MQ does not route it again
        c = {k: [f.get(k)] for k in ("queue", "target_qmgr", "bind", "open_handle", "group_id", "logical_order",
                                     "from_cluster_channel", "pcf", "observed_qmgr", "observed_xmitq")}
        c.update(msg_id=[msg_id], put_time=[put_time], length=[f.get("length") or 0], source=[None])
        app = application_of(f.get("open_handle"), None, f.get("application")) or ""
        by_sender.setdefault(sender, []).append(DayMessage(put_event(c, 0), app))
    for ms in by_sender.values():
        ms.sort(key=lambda m: (m.event.put_time, m.event.msg_id))
    return lambda sender, queues: [m for m in by_sender.get(sender, ()) if m.event.queue in queues]


@dataclass(frozen=True)
class RoutingEffect:
    """What a stale or inconsistent piece of cluster knowledge did that day: the day's messages the sender(s) put
    on the queue(s) concerned, replayed once with the view as captured and once as the full repositories (or the
    definition) have it; ``changed``: the message ids whose first destination differs, in put order."""

    messages: int
    changed: tuple[str, ...] = ()
    first: Optional[datetime] = None  # the first and last changed message's put time
    last: Optional[datetime] = None
    applications: tuple[str, ...] = ()  # of the changed messages

    def as_dict(self) -> dict:
        return {"messages": self.messages, "changed": list(self.changed),
                "first": self.first.isoformat() if self.first else None,
                "last": self.last.isoformat() if self.last else None, "applications": list(self.applications)}


# -- findings ---------------------------------------------------------------------------------------------------
#: A finding's severity: ``warning`` unless a default only matters for messages and none was put through it that
#: day (``notice``): MQ's defaults DEFBIND(OPEN) and CLWLUSEQ(LOCAL) are everywhere, and worth acting on where
#: messages meet them.
WARNING, NOTICE = "warning", "notice"
SEVERITIES = (WARNING, NOTICE)


@dataclass(frozen=True)
class Finding:
    """One finding, once per object: the rule, the queue manager the object belongs to (where it is defined: the
    host of an instance, the suspended queue manager, the observer's own alias, channel or CLWLMRUC; the hosts,
    comma-separated, of a cluster queue whose instances all advertise the value), the object, what was seen and
    what MQ will do, the remedy in MQ's terms, the severity, and the observing queue managers whose captures
    show it."""

    rule: str
    qmgr: str
    object: str
    detail: str
    remedy: str
    severity: str = WARNING
    seen_by: tuple[str, ...] = ()
    routing: Optional[RoutingEffect] = None  # the stale-knowledge rules' replay, where the day's messages are known

    def as_dict(self) -> dict:
        d = {"rule": self.rule, "qmgr": self.qmgr, "object": self.object, "detail": self.detail,
             "remedy": self.remedy, "severity": self.severity, "seen_by": list(self.seen_by)}
        if self.routing is not None:
            d["routing"] = self.routing.as_dict()
        return d


@dataclass(frozen=True)
class Hit:
    """What a rule's check yields: the finding without the rule's own words."""

    qmgr: str
    object: str
    seen: str  # what the captures show, in this estate's names
    remedy: str
    seen_by: tuple[str, ...] = ()  # the observers whose captures show it (default: ``qmgr`` alone)
    severity: str = WARNING
    routing: Optional[RoutingEffect] = None


@dataclass(frozen=True)
class Rule:
    name: str
    mq_does: str  # what MQ will do, in general
    remedy: str  # the remedy in general, in MQ's terms
    check: Callable[[LintContext], Iterable[Hit]]

    def run(self, ctx: LintContext) -> Iterator[Finding]:
        for h in self.check(ctx):
            yield Finding(self.name, h.qmgr, h.object, f"{h.seen}: {self.mq_does}", h.remedy, h.severity,
                          tuple(sorted(set(h.seen_by or (h.qmgr,)))), h.routing)


# -- MQOO_BIND_AS_Q_DEF: which definition decides ---------------------------------------------------------------
@dataclass(frozen=True)
class BindDecision:
    """What MQOO_BIND_AS_Q_DEF means for a queue name on one queue manager, in words: ``source`` is the engine's
    answer (:func:`clwl.engine.candidates.defbind_source`, the one the replay uses); ``definition`` names the definition
    whose DEFBIND decided it, empty when none did (no definition known, or instances that disagree: OPEN, MQ's
    default DEFBIND)."""

    queue: str
    bind: str  # open | notfixed | group
    definition: str  # e.g. "QALIAS(ALIAS.IN) on QM1"; "" when MQ's default decided
    why: str  # one sentence
    source: DefbindSource

    @property
    def defbind(self) -> str:
        return BIND_AS_DEFBIND[self.bind]

    @property
    def decided(self) -> bool:
        return bool(self.definition)


def bind_decision(view: ClusterView, queue: str) -> BindDecision:
    """Which definition decides MQOO_BIND_AS_Q_DEF for ``queue`` on the view's queue manager
    (:func:`clwl.engine.candidates.defbind_source`), named in an administrator's words."""
    src = defbind_source(view, queue)
    here = view.local_name
    if src.kind == "QALIAS":
        definition = f"QALIAS({queue}) on {here}"
        why = (f"DEFBIND({src.defbind}) of the local alias QALIAS({queue}) on {here} (an alias's DEFBIND wins over "
               f"its target's)")
    elif src.kind == "QLOCAL":
        definition = f"QLOCAL({queue}) on {here}"
        why = f"DEFBIND({src.defbind}) of the local queue QLOCAL({queue}) on {here}"
    elif src.kind == "QCLUSTER":
        hosts = ", ".join(src.hosts)
        definition = f"the cluster queue {queue} ({hosts})"
        why = f"DEFBIND({src.defbind}) advertised by the instances of {queue} on {hosts} (DISPLAY QCLUSTER)"
    elif src.instances:
        each = ", ".join(f"{i.qmgr} {i.defbind.upper()}" for i in sorted(src.instances, key=lambda i: i.qmgr))
        definition = ""
        why = (f"the instances of {queue} advertise different DEFBIND values ({each}): OPEN, MQ's default DEFBIND, "
               f"is taken")
    else:
        definition = ""
        why = f"no definition of {queue} is known on {here}: OPEN, MQ's default DEFBIND"
    return BindDecision(queue, src.bind, definition, why, src)


