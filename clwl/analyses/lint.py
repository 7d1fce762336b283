"""``clwl lint``: configuration findings from the captures, once per object (docs/lint.md).

Each rule is a small named function over a :class:`LintContext` (every observing queue manager's view, and the
manual channel definitions it captured), registered once in :data:`RULES` with its name, what MQ will do and
the remedy in MQ's terms. A rule reads what was captured; where the captures do not show what it needs, it says
nothing rather than guessing. MQ's defaults count as values: the view already holds them for attributes a
capture left out (queue CLWLUSEQ(QMGR), queue manager CLWLUSEQ(LOCAL), DEFBIND(OPEN), CLWLMRUC(999999999)). A
finding is placed on the queue manager its object belongs to, with the observers that see it (``seen_by``); where
the day's put records are known (:attr:`LintContext.traffic`), a default no message went through is a notice.

Pure: no Spark. :func:`lint_lake` reads the lake through :func:`clwl.lake.silver.load_timelines` (the last
configuration of the day of each observing queue manager) and :class:`clwl.lake.door.Lake`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Callable, Iterable, Iterator, Mapping, Optional

from clwl.engine.candidates import ALTER_TYPE, BIND_AS_DEFBIND, DefbindSource, alter_defbind, defbind_source
from clwl.engine.model import ClusterView, QueueInstance
from clwl.engine.view import build_view, latest_records
from clwl.lake.storage import Location
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
    captured (``channels_captured`` False: nothing is known of them, and rules about them say nothing)."""

    qmgr: str
    view: ClusterView
    channel_definitions: tuple[ChannelDefinition, ...] = ()
    channels_captured: bool = False


def observe(qmgr: str, records: Iterable[MqscRecord]) -> Observation:
    """The observation of ``qmgr`` from its records (later records of one object replace earlier ones)."""
    recs = latest_records(records)
    view, _ = build_view(recs, qmgr)
    channels = tuple(sorted((ChannelDefinition.from_record(r) for r in recs if r.kind == "CHANNEL"),
                            key=lambda c: (c.name, c.chltype)))
    return Observation(qmgr, view, channels, any(r.kind == "CHANNEL" for r in recs))


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

    def as_dict(self) -> dict:
        return {"rule": self.rule, "qmgr": self.qmgr, "object": self.object, "detail": self.detail,
                "remedy": self.remedy, "severity": self.severity, "seen_by": list(self.seen_by)}


@dataclass(frozen=True)
class Hit:
    """What a rule's check yields: the finding without the rule's own words."""

    qmgr: str
    object: str
    seen: str  # what the captures show, in this estate's names
    remedy: str
    seen_by: tuple[str, ...] = ()  # the observers whose captures show it (default: ``qmgr`` alone)
    severity: str = WARNING


@dataclass(frozen=True)
class Rule:
    name: str
    mq_does: str  # what MQ will do, in general
    remedy: str  # the remedy in general, in MQ's terms
    check: Callable[[LintContext], Iterable[Hit]]

    def run(self, ctx: LintContext) -> Iterator[Finding]:
        for h in self.check(ctx):
            yield Finding(self.name, h.qmgr, h.object, f"{h.seen}: {self.mq_does}", h.remedy, h.severity,
                          tuple(sorted(set(h.seen_by or (h.qmgr,)))))


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


# -- the rules ----------------------------------------------------------------------------------------------
def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(set(names)))


def _cluster_queues(view: ClusterView) -> dict[str, list[QueueInstance]]:
    """Cluster queues of the view (queue manager aliases left out), each with its instances."""
    out: dict[str, list[QueueInstance]] = {}
    for i in view.instances:
        if not i.qmgr_alias:
            out.setdefault(i.queue, []).append(i)
    return out


def clussdr_workload_attrs(ctx: LintContext) -> Iterator[Hit]:
    """CLWLRANK, CLWLPRTY or CLWLWGHT other than MQ's default on a manually defined CLUSSDR (DISPLAY CHANNEL)."""
    for o in ctx.observations:
        for ch in o.channel_definitions:
            if ch.chltype != "CLUSSDR":
                continue
            set_here = [(k, n, d) for k, d in CLUSSDR_WORKLOAD_DEFAULTS if (n := ch.number(k)) is not None and n != d]
            if not set_here:
                continue
            route = next((c for c in o.view.channels if c.name == ch.name), None)
            target = route.qmgr if route is not None else ""
            values = " ".join(f"{k}({n})" for k, n, _ in set_here)
            seen = f"the manually defined CLUSSDR {ch.name} on {o.qmgr} sets {values}"
            if route is not None:
                advertised = " ".join(f"{k}({getattr(route, k.lower())})" for k, _, _ in set_here)
                seen += f"; {target}'s CLUSRCVR advertises {advertised} (DISPLAY CLUSQMGR)"
            defaults = " ".join(f"{k}({d})" for k, _, d in set_here)
            where = f"on {target}" if target else "on the queue manager it reaches"
            yield Hit(o.qmgr, ch.name, seen,
                      f"set them where MQ reads them, ALTER CHANNEL({ch.name}) CHLTYPE(CLUSRCVR) {values} {where}; "
                      f"then ALTER CHANNEL({ch.name}) CHLTYPE(CLUSSDR) {defaults} on {o.qmgr}, so that the "
                      f"definition says what MQ does")


def _traffic_words(ctx: LintContext, puts: Optional[Puts], senders: Iterable[str], queue: str,
                   bound: bool = False) -> tuple[str, str]:
    """(the words on the day's messages, the severity) of a finding about a default: a warning where messages were
    put through it that day (``bound``: bound on open, for DEFBIND), a notice where none was; without the day's
    messages (captures alone) a warning, with nothing said of them."""
    if puts is None:
        return "", WARNING
    who, day = _names(senders), ctx.run_date or "that day"
    n = puts.bound_on_open if bound else puts.messages
    if bound:
        if n:
            return (f"; on {day} {puts.bound_on_open:,} of the {puts.messages:,} messages {who} put on {queue} were "
                    f"bound on open"), WARNING
        if puts.messages:
            return (f"; on {day} none of the {puts.messages:,} messages {who} put on {queue} was bound on open "
                    f"(their applications chose MQOO_BIND_NOT_FIXED or group)"), NOTICE
        return f"; no message was put on {queue} from {who} on {day}", NOTICE
    if n:
        return f"; on {day} {n:,} messages were put on {queue} by applications on {who}", WARNING
    return f"; no message was put on {queue} by an application on {who} on {day}", NOTICE


def local_instance_wins(ctx: LintContext) -> Iterator[Hit]:
    """A put-enabled local instance of a cluster queue whose CLWLUSEQ (or the queue manager's) is LOCAL,
    MQ's defaults included, where another queue manager hosts the queue too (on its only host there is nothing
    else to choose: no finding). A warning where the host's applications put on it that day, else a notice."""
    for o in ctx.observations:
        qm = o.view.qmgr
        for inst in o.view.instances:
            if not inst.local or inst.clusqt != "QLOCAL" or not inst.put_enabled:
                continue  # CLWLUSEQ is a local queue's attribute; a PUT(DISABLED) instance is gone at step 1
            useq = inst.clwluseq.upper()
            if useq == "LOCAL":
                why = "CLWLUSEQ(LOCAL) on the queue"
                remedy = f"ALTER QLOCAL({inst.queue}) CLWLUSEQ(ANY) on {o.qmgr}"
            elif useq == "QMGR" and qm.clwluseq.upper() == "LOCAL":
                why = "CLWLUSEQ(QMGR) on the queue and CLWLUSEQ(LOCAL) on the queue manager (MQ's defaults)"
                remedy = (f"ALTER QLOCAL({inst.queue}) CLWLUSEQ(ANY) on {o.qmgr}, or ALTER QMGR CLWLUSEQ(ANY) "
                          f"for every queue left at CLWLUSEQ(QMGR)")
            else:
                continue
            others = sorted(ctx.hosts_seen(inst.queue) - {o.qmgr})
            if not others:
                continue  # the only host: step 3 has nothing to keep from anyone
            names = [inst.queue] + sorted(a.name for a in o.view.aliases if a.target == inst.queue)
            traffic, severity = _traffic_words(ctx, ctx.puts([o.qmgr], names), [o.qmgr], inst.queue)
            yield Hit(o.qmgr, inst.queue,
                      f"{o.qmgr} hosts an instance of {inst.queue} with {why}; the instances on {', '.join(others)} "
                      f"get none of the messages put on {o.qmgr}{traffic}",
                      remedy + "; if keeping them local is intended, nothing", severity=severity)


def bind_on_open_default(ctx: LintContext) -> Iterator[Hit]:
    """MQOO_BIND_AS_Q_DEF resolves to OPEN for a cluster queue, a clustered queue manager alias, or a local
    alias whose target is a cluster queue (the definition that decides, as the replay reads it). Once per
    definition: DEFBIND(OPEN) advertised by every instance of a cluster queue is one finding, placed on its hosts
    and seen by every queue manager it decides for (a host whose own QLOCAL decides it among them). A warning
    where those queue managers' applications put messages bound on open through it that day, else a notice."""
    shared: dict[tuple[str, tuple[str, ...]], dict] = {}  # (queue, hosts) -> what the finding needs
    own: list[tuple[Observation, BindDecision, str]] = []
    for o in ctx.observations:
        view = o.view
        names = {i.queue for i in view.instances}
        names |= {a.name for a in view.aliases if view.instances_of(a.target)}
        for name in sorted(names):
            d = bind_decision(view, name)
            if d.bind != "open":
                continue
            insts = view.instances_of(name)
            if d.source.kind == "QALIAS":
                what = "the alias"
            elif insts and all(i.qmgr_alias for i in insts):
                what = "the queue manager alias"
            else:
                what = "the cluster queue"
            if d.source.kind == "QCLUSTER":
                entry = shared.setdefault((name, tuple(d.source.hosts)), {"decision": d, "what": what,
                                                                         "observers": set()})
                entry["observers"].add(o.qmgr)
            else:
                own.append((o, d, what))
    for o, d, what in own:  # a host's own QLOCAL that says what its instance advertises: the same definition
        entry = next((e for (q, hosts), e in shared.items() if q == d.queue and o.qmgr in hosts), None)
        if d.source.kind == "QLOCAL" and entry is not None:
            entry["observers"].add(o.qmgr)
            continue
        fix = alter_defbind(d.source, "NOTFIXED", o.view.local_name)
        traffic, severity = _traffic_words(ctx, ctx.puts([o.qmgr], [d.queue]), [o.qmgr], d.queue, bound=True)
        yield Hit(o.qmgr, d.queue,
                  f"MQOO_BIND_AS_Q_DEF on {o.qmgr} binds {what} {d.queue} on open: {d.why}{traffic}",
                  f"{fix}, or open with MQOO_BIND_NOT_FIXED in the application; keep OPEN only where every "
                  f"message of a handle must reach the same queue manager", severity=severity)
    for (name, hosts), e in sorted(shared.items()):
        d, observers = e["decision"], sorted(e["observers"])
        fix = alter_defbind(d.source, "NOTFIXED", "")
        traffic, severity = _traffic_words(ctx, ctx.puts(observers, [name]), observers, name, bound=True)
        yield Hit(", ".join(hosts), name,
                  f"MQOO_BIND_AS_Q_DEF on {', '.join(observers)} binds {e['what']} {name} on open: {d.why}{traffic}",
                  f"{fix}, or open with MQOO_BIND_NOT_FIXED in the application; keep OPEN only where every "
                  f"message of a handle must reach the same queue manager", seen_by=tuple(observers),
                  severity=severity)


def alias_overrides_bind(ctx: LintContext) -> Iterator[Hit]:
    """A local QALIAS whose DEFBIND differs from its target cluster queue's (when the target's is known)."""
    for o in ctx.observations:
        view = o.view
        for alias in sorted(view.aliases, key=lambda a: a.name):
            if view.instances_of(alias.name) or not view.instances_of(alias.target):
                continue  # a clustered alias is a cluster queue itself; a non-cluster target is no concern here
            target = bind_decision(view, alias.target)
            mine = alias.defbind.upper()
            if not target.decided or mine == target.defbind:
                continue
            # Agree on the binding that is not OPEN (OPEN is what bind-on-open-default warns about).
            fix = alter_defbind(target.source, mine, view.local_name) if target.defbind == "OPEN" else \
                f"ALTER QALIAS({alias.name}) DEFBIND({target.defbind}) on {o.qmgr}"
            yield Hit(o.qmgr, alias.name,
                      f"QALIAS({alias.name}) on {o.qmgr} has DEFBIND({mine}); its target {alias.target} has "
                      f"DEFBIND({target.defbind}) ({target.definition})",
                      f"make them agree, {fix}; if the difference is intended, nothing")


def put_disabled_instance(ctx: LintContext) -> Iterator[Hit]:
    """An instance (or a clustered queue manager alias) advertised with PUT(DISABLED): once per instance, on its
    host, seen by every observer that knows it; the observers whose every known instance is disabled are named."""
    found: dict[tuple[str, str], dict] = {}  # (host, queue) -> kind, observers, observers with every one disabled
    for o in ctx.observations:
        for inst in o.view.instances:
            if inst.put_enabled:
                continue
            e = found.setdefault((inst.qmgr, inst.queue), {"kind": ALTER_TYPE.get(inst.clusqt, "QLOCAL"),
                                                           "observers": set(), "all_off": set()})
            e["observers"].add(o.qmgr)
            known = o.view.instances_of(inst.queue)
            # "every other" only from a view that knows others (a partial repository may know just its own)
            if len(known) > 1 and not any(i.put_enabled for i in known):
                e["all_off"].add(o.qmgr)
    for (host, queue), e in sorted(found.items()):
        seen = f"{host}'s instance of {queue} is PUT(DISABLED)"
        if e["all_off"]:
            who = _names(e["all_off"])
            seen += (f" and so is every other instance {who} {'knows' if len(e['all_off']) == 1 else 'know'}: "
                     f"puts on {who} fail with MQRC_CLUSTER_PUT_INHIBITED (2268)")
        yield Hit(host, queue, seen,
                  f"ALTER {e['kind']}({queue}) PUT(ENABLED) on {host} once it should take messages again",
                  seen_by=tuple(sorted(e["observers"])))


def single_instance(ctx: LintContext) -> Iterator[Hit]:
    """A cluster queue hosted by one queue manager, in every observer's view: once per queue, on its host."""
    found: dict[str, dict] = {}  # queue -> host, clusters, observers
    for o in ctx.observations:
        for queue, instances in _cluster_queues(o.view).items():
            hosts = {i.qmgr for i in instances}
            if len(hosts) != 1 or ctx.hosts_seen(queue) != hosts:
                continue
            e = found.setdefault(queue, {"host": next(iter(hosts)), "clusters": set(), "observers": set()})
            e["clusters"].update(*(i.clusters for i in instances))
            e["observers"].add(o.qmgr)
    for queue, e in sorted(found.items()):
        clusters = sorted(e["clusters"]) or ["the cluster"]
        cluster = f"CLUSTER({clusters[0]})" if len(clusters) == 1 else f"the clusters {', '.join(clusters)}"
        yield Hit(e["host"], queue, f"{queue} is hosted by {e['host']} alone",
                  f"DEFINE QLOCAL({queue}) {cluster} on a second queue manager, with the same attributes, "
                  f"if its consumers can run there too", seen_by=tuple(sorted(e["observers"])))


def suspended_qmgr(ctx: LintContext) -> Iterator[Hit]:
    """A queue manager advertised SUSPEND(YES) (a CLUSSDR's CLUSQMGR record, or the observer's own CLUSRCVR):
    once per queue manager, seen by every observer that shows it suspended."""
    found: dict[str, dict] = {}  # suspended qmgr -> clusters, observers
    for o in ctx.observations:
        for ch in (*o.view.channels, *o.view.local_receivers):
            if ch.suspended:
                e = found.setdefault(ch.qmgr, {"clusters": set(), "observers": set()})
                e["clusters"].update(ch.clusters)
                e["observers"].add(o.qmgr)
    for qm, e in sorted(found.items()):
        names = sorted(e["clusters"]) or ["(its cluster)"]
        resume = "; ".join(f"RESUME QMGR CLUSTER({c})" for c in names)
        yield Hit(qm, qm, f"{qm} is suspended from {', '.join(names)} (SUSPEND(YES) in DISPLAY CLUSQMGR)",
                  f"{resume} on {qm} when its maintenance is over", seen_by=tuple(sorted(e["observers"])))


def mruc_below_instances(ctx: LintContext) -> Iterator[Hit]:
    """CLWLMRUC lower than the number of other queue managers (reachable over a channel) hosting a cluster queue
    the observer knows."""
    for o in ctx.observations:
        mruc = o.view.qmgr.clwlmruc
        for queue, instances in sorted(_cluster_queues(o.view).items()):
            hosts = sorted({i.qmgr for i in instances if not i.local and o.view.channels_to(i.qmgr)})
            if mruc >= len(hosts):
                continue
            yield Hit(o.qmgr, queue,
                      f"CLWLMRUC({mruc}) on {o.qmgr}, and {queue} is hosted by {len(hosts)} other queue managers "
                      f"({', '.join(hosts)})",
                      f"ALTER QMGR CLWLMRUC({len(hosts)}) or more on {o.qmgr} (MQ's default is 999999999); if "
                      f"restricting the outbound cluster channels is intended, nothing")


def igq_no_member_host(ctx: LintContext) -> Iterator[Hit]:
    """IGQ(ENABLED) on a queue manager of a queue-sharing group, but no cluster queue it sees is hosted by another
    member of its group: intra-group queuing never carries a cluster message (IBM: "Clustering with intra-group
    queuing": only messages whose destination is in the group take it)."""
    for o in ctx.observations:
        q = o.view.qmgr
        if not (q.igq and q.qsgname):
            continue
        members = ctx.group_members(o)
        hosted = sorted({i.queue for i in o.view.instances if i.qmgr in members and not i.qmgr_alias})
        if hosted:
            continue
        who = (f"its other members ({_names(members)}) host none of the cluster queues it sees" if members else
               f"no other member of {q.qsgname} is captured (capture DISPLAY GROUP, or the members' DISPLAY QMGR)")
        yield Hit(o.qmgr, f"QMGR {o.qmgr}", f"IGQ(ENABLED) on {o.qmgr} in queue-sharing group {q.qsgname}, but {who}",
                  f"if intra-group queuing is meant for this cluster traffic, host the cluster queues on a member of "
                  f"{q.qsgname}; else ALTER QMGR IGQ(DISABLED) on {o.qmgr} says what MQ does")


def igq_limit_too_small(ctx: LintContext) -> Iterator[Hit]:
    """Most of the day's messages from an IGQ(ENABLED) sender to members of its group are too large for the
    shared transmission queue (its MAXMSGL, or a structure below CFLEVEL(4)), so they take the cluster path."""
    for o in ctx.observations:
        to_members, too_large = ctx.igq_traffic.get(o.qmgr, (0, 0))
        if not to_members or too_large * 2 <= to_members:
            continue
        why = o.view.igq_limit_why
        fix = ("ALTER QLOCAL(SYSTEM.QSG.TRANSMIT.QUEUE) MAXMSGL(n)" if "MAXMSGL" in why.split(" less ")[0]
               else "ALTER CFSTRUCT(...) CFLEVEL(5) OFFLOAD(SMDS) for the structure of SYSTEM.QSG.TRANSMIT.QUEUE")
        yield Hit(o.qmgr, "QLOCAL SYSTEM.QSG.TRANSMIT.QUEUE",
                  f"{too_large:,} of the {to_members:,} messages {o.qmgr} sent to members of {o.view.qmgr.qsgname} "
                  f"were larger than intra-group queuing takes ({why}) and went over the cluster path",
                  f"{fix} on {o.qmgr}, if these messages should take intra-group queuing; else nothing")


RULES: tuple[Rule, ...] = (
    Rule("clussdr-workload-attrs",
         "MQ uses the values the destination's CLUSRCVR advertises, so the values on a manually defined CLUSSDR "
         "are ignored", "set CLWLRANK, CLWLPRTY and CLWLWGHT on the destination's CLUSRCVR",
         clussdr_workload_attrs),
    Rule("local-instance-wins",
         "step 3 chooses the local instance for every message an application puts on this queue manager, so "
         "every such message stays local and the workload is not shared", "ALTER QLOCAL(...) CLWLUSEQ(ANY)",
         local_instance_wins),
    Rule("bind-on-open-default",
         "applications that open with MQOO_BIND_AS_Q_DEF (MQOPEN's default) send every message of a handle to "
         "the destination chosen at open, and those messages can never be re-allocated when its channel stops",
         "DEFBIND(NOTFIXED), or MQOO_BIND_NOT_FIXED in the application", bind_on_open_default),
    Rule("alias-overrides-bind",
         "an application opening the alias with MQOO_BIND_AS_Q_DEF gets the alias's DEFBIND, one opening the "
         "queue gets the queue's: the alias wins, so the same queue is bound two ways",
         "make the alias's DEFBIND and the queue's agree", alias_overrides_bind),
    Rule("put-disabled-instance",
         "step 1 excludes it from every choice while it stays so (step 2 for a queue manager alias)",
         "ALTER QLOCAL(...) PUT(ENABLED)", put_disabled_instance),
    Rule("single-instance",
         "nothing else can take its messages: while that queue manager or the channel to it is down, messages "
         "for it wait on the transmission queue", "a second instance of the queue", single_instance),
    Rule("suspended-qmgr",
         "step 5 prefers resumed queue managers: its instances get messages only when no resumed queue manager "
         "hosts the queue", "RESUME QMGR CLUSTER(...)", suspended_qmgr),
    Rule("mruc-below-instances",
         "step 11c keeps only the CLWLMRUC most recently used channels, so some instances are never chosen by "
         "step 12", "ALTER QMGR CLWLMRUC(n)", mruc_below_instances),
    Rule("igq-no-member-host",
         "intra-group queuing carries only messages whose destination is another member of the group, so it "
         "carries no cluster message from here", "host the queue on a member, or IGQ(DISABLED)",
         igq_no_member_host),
    Rule("igq-limit-too-small",
         "a message larger than the shared transmission queue takes (its MAXMSGL or its structure's limit, less the "
         "428-byte MQXQH) goes over the cluster channel instead, so intra-group queuing carries few of them",
         "a larger MAXMSGL, or a CFLEVEL(4)/(5) structure with offload", igq_limit_too_small),
)
RULE_NAMES = tuple(r.name for r in RULES)
_ORDER = {name: i for i, name in enumerate(RULE_NAMES)}


# -- entry points -------------------------------------------------------------------------------------------
def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Deterministic order: the finding's queue manager, then the rules' order, then object and detail."""
    return sorted(findings, key=lambda f: (f.qmgr, _ORDER.get(f.rule, len(_ORDER)), f.object, f.detail, f.remedy))


def lint_observations(observations: Iterable[Observation], rules: tuple[Rule, ...] = RULES,
                      igq_traffic: Optional[Mapping[str, tuple[int, int]]] = None,
                      traffic: Optional[Mapping[tuple[str, str], Puts]] = None, run_date: str = "") -> list[Finding]:
    """The findings of the observations; ``traffic``: the day's put records (:func:`count_puts`), None when no day's
    messages are known."""
    ctx = LintContext(tuple(sorted(observations, key=lambda o: o.qmgr)), dict(igq_traffic or {}),
                      None if traffic is None else dict(traffic), run_date)
    return sort_findings(f for rule in rules for f in rule.run(ctx))


def lint_captures(records_by_qmgr: Mapping[str, Iterable[MqscRecord]],
                  traffic: Optional[Mapping[tuple[str, str], Puts]] = None, run_date: str = "") -> list[Finding]:
    """The findings of queue managers' captures: observing queue manager -> its records (oldest first);
    ``traffic`` and ``run_date``: the day's put records, when known (a landing folder's put files)."""
    return lint_observations((observe(qm, recs) for qm, recs in records_by_qmgr.items()), traffic=traffic,
                             run_date=run_date)


def lint_lake(lake: Location | str, run_date: str, notes: Optional[list[str]] = None) -> list[Finding]:
    """The findings of every queue manager observed on ``run_date``: its last configuration of the day
    (:func:`clwl.lake.silver.load_timelines`), and its DISPLAY CHANNEL records in force then (silver.config_history);
    the day's messages from silver.message_events. LintInputError when the lake holds no captures of that date.
    ``notes`` (when given) gains one line per capture of the day the ingest rejected after the one a queue
    manager is linted at: its previous capture is in force, as on a landing folder (clwl lint --mqsc)."""
    from clwl.days import as_utc, run_day
    from clwl.lake.door import Lake
    from clwl.lake.silver import load_timelines

    lk = Lake(lake)
    for key in ("silver.config_history", "silver.channel_status", "silver.ingest_files"):
        if not lk.exists(key):
            raise LintInputError(f"{lake}: no {key} table (ingest the landing folder first: clwl run or clwl ingest)")
    day = run_day(run_date)
    files = lk.rows("silver.ingest_files", ["run_date", "status", "observing_qmgr", "source_file", "capture_time",
                                            "reason", "ingested_at"]).to_pylist()
    dates = sorted({r["run_date"] for r in files if r["status"] in ("ingested", "unchanged")})
    if day not in dates:
        known = ", ".join(d.isoformat() for d in dates) or "none"
        raise LintInputError(f"{lake}: no captures of {run_date} in the lake (run dates ingested: {known})")
    timelines = load_timelines(lake, run_date)
    if not timelines:
        raise LintInputError(f"{lake}: no configuration of any queue manager on {run_date} in silver.config_history")
    rows = lk.rows("silver.config_history", ["observing_qmgr", "kind", "attrs", "valid_from", "valid_to"],
                   filters=[("kind", "=", "CHANNEL")]).to_pylist()
    observations = []
    for qm, timeline in timelines.items():
        last = timeline[-1]
        recs = [MqscRecord("CHANNEL", dict(r["attrs"] or ()), "silver.config_history", 0) for r in rows
                if r["observing_qmgr"] == qm and as_utc(r["valid_from"]) <= last.time
                and (r["valid_to"] is None or last.time < as_utc(r["valid_to"]))]
        channels = tuple(sorted((ChannelDefinition.from_record(r) for r in recs), key=lambda c: (c.name, c.chltype)))
        captured = any(r["observing_qmgr"] == qm for r in rows)
        observations.append(Observation(qm, last.view, channels, captured))
    if notes is not None:
        notes.extend(_rejected_captures(files, day))
    return lint_observations(observations, igq_traffic=igq_traffic(lk, day, timelines),
                             traffic=lake_traffic(lk, day), run_date=day.isoformat())


def _rejected_captures(files: list[dict], day) -> list[str]:
    """One line per capture of ``day`` (silver.ingest_files) that the ingest rejected and no later capture of the
    same kind and queue manager replaced: the capture before it stays in force, and the lint reads that one."""
    from datetime import datetime, timezone

    from clwl.days import as_utc

    def kind(r: dict) -> str:
        m = CAPTURE_NAME.match(PurePosixPath(r["source_file"]).name)
        return m.group(1).lower() if m else ""

    read: dict[str, dict] = {}  # a file's last reading (an "unchanged" row says it was not read again)
    never = datetime.min.replace(tzinfo=timezone.utc)
    for r in sorted(files, key=lambda r: as_utc(r["ingested_at"]) if r.get("ingested_at") else never):
        if r["status"] != "unchanged" or r["source_file"] not in read:
            read[r["source_file"]] = r
    files = [r for r in read.values() if r["status"] != "removed"]
    usable: dict[tuple[str, str], list] = {}  # (qmgr, kind) -> capture times read, every date up to ``day``
    for r in files:
        if r["status"] in ("ingested", "unchanged") and r.get("capture_time") is not None and r["run_date"] <= day:
            usable.setdefault((r["observing_qmgr"] or "", kind(r)), []).append(as_utc(r["capture_time"]))
    out = []
    for r in sorted(files, key=lambda r: r["source_file"]):
        t, qm, k = r.get("capture_time"), r["observing_qmgr"] or "", kind(r)
        if r["run_date"] != day or r["status"] != "rejected" or t is None or not k:
            continue
        t = as_utc(t)
        times = usable.get((qm, k), [])
        if any(u > t for u in times):
            continue  # a later capture replaced it
        before = max((u for u in times if u < t), default=None)
        instead = f"its {k} capture of {before:%Y-%m-%d %H:%M:%S} UTC is used instead" if before else \
            f"no earlier {k} capture of {qm} is in the lake"
        out.append(f"{qm}: {r['source_file']} was rejected by the ingest ({r.get('reason') or 'unreadable'}): "
                   f"{instead}")
    return out


def lake_traffic(lk, day) -> Optional[dict[tuple[str, str], Puts]]:
    """The day's put records per sender and queue (silver.message_events, the rows the replay takes); None when
    the lake has no such table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not lk.exists("silver.message_events"):
        return None
    t = lk.rows("silver.message_events", ["sending_qmgr", "queue", "bind", "from_cluster_channel"],
                filters=[("run_date", "=", day)])
    # count_puts's rule, counted by Arrow: a day of millions of messages is never turned into Python rows.
    t = t.filter(pc.invert(pc.fill_null(t["from_cluster_channel"], False)))
    bound = pc.is_in(pc.utf8_lower(pc.fill_null(t["bind"], "")), value_set=pa.array(sorted(BOUND_ON_OPEN)))
    t = t.append_column("bound", pc.cast(bound, pa.int64()))
    counts = t.group_by(["sending_qmgr", "queue"]).aggregate([("bound", "count"), ("bound", "sum")]).to_pylist()
    return {(r["sending_qmgr"], r["queue"]): Puts(r["bound_count"], r["bound_sum"] or 0) for r in counts}


def igq_traffic(lk, day, timelines: Mapping[str, list]) -> dict[str, tuple[int, int]]:
    """Per sender with IGQ(ENABLED): the day's replayed messages to another member of its group, and how many of
    them were too large for intra-group queuing (gold.routing_replay, as published; empty when not published)."""
    from clwl.engine.xmitq import igq_applies

    senders = {qm for qm, tl in timelines.items() if any(s.view.qmgr.igq and s.view.qmgr.qsgname for s in tl)}
    if not senders or not lk.exists("gold.routing_replay"):
        return {}
    rows = lk.rows("gold.routing_replay", ["sending_qmgr", "qmgr", "length", "path", "config_time"],
                   filters=[("run_date", "=", day)]).to_pylist()
    out: dict[str, tuple[int, int]] = {}
    for r in rows:
        tl = timelines.get(r["sending_qmgr"])
        if r["sending_qmgr"] not in senders or not tl or r["path"] not in ("igq", "cluster") or not r["qmgr"]:
            continue
        view = _view_at(tl, r["config_time"])
        if not igq_applies(view, r["qmgr"]):
            continue
        n, big = out.get(r["sending_qmgr"], (0, 0))
        out[r["sending_qmgr"]] = (n + 1, big + (r["length"] > view.igq_max_message))
    return out


def _view_at(timeline: list, t) -> ClusterView:
    """The view in force at ``t`` (the first when ``t`` is before it or unknown)."""
    from clwl.days import as_utc

    if t is None:
        return timeline[0].view
    t = as_utc(t)
    current = timeline[0].view
    for snap in timeline:
        if snap.time <= t:
            current = snap.view
    return current


def findings_json(findings: Iterable[Finding]) -> dict:
    """The ``--json`` document: ``{"findings": [{"rule", "qmgr", "object", "detail", "remedy"}, ...]}``."""
    return {"findings": [f.as_dict() for f in findings]}
