"""``clwl lint``'s rules: each a small named function over a :class:`LintContext`, registered once in :data:`RULES`
with its name, what MQ will do and the remedy in MQ's terms (docs/lint.md). A rule reads what was captured; where
the captures do not show what it needs, it says nothing rather than guessing. Pure: no Spark.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

from clwl.analyses.lint_model import (
    CLUSSDR_WORKLOAD_DEFAULTS,
    NOTICE,
    WARNING,
    BindDecision,
    DayMessage,
    Finding,
    Hit,
    LintContext,
    Observation,
    Puts,
    Rule,
    bind_decision,
)
from clwl.analyses.lint_stale import (
    backout_or_streamq_differs,
    departed_qmgr_chosen,
    local_definition_differs,
    partial_view_differs,
)
from clwl.engine.candidates import ALTER_TYPE, alter_defbind
from clwl.engine.model import ClusterView, QueueInstance


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
    Rule("partial-view-differs",
         "the partial repository routes by its own view, so its messages may go where the cluster no longer "
         "sends them, or miss instances it should share them with",
         "REFRESH CLUSTER(...) REPOS(NO) on the partial repository, once its channels to the full repositories run",
         partial_view_differs),
    Rule("local-definition-differs",
         "other queue managers route by what the cluster advertises, not by the local definition, so the change "
         "has no effect on them", "have the cluster advertise the definition again", local_definition_differs),
    Rule("departed-qmgr-chosen",
         "the sender can still choose it for the queues its view holds on it, and such messages wait on the "
         "transmission queue for a queue manager that is no longer in the cluster",
         "REFRESH CLUSTER on the sender; RESET CLUSTER ... ACTION(FORCEREMOVE) on a full repository",
         departed_qmgr_chosen),
    Rule("backout-or-streamq-differs",
         "what happens to a message that is backed out again and again (or whether it is streamed) depends on the "
         "instance the algorithm chose", "the same BOTHRESH, BOQNAME and STREAMQ on every instance",
         backout_or_streamq_differs),
)
RULE_NAMES = tuple(r.name for r in RULES)
_ORDER = {name: i for i, name in enumerate(RULE_NAMES)}


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Deterministic order: the finding's queue manager, then the rules' order, then object and detail."""
    return sorted(findings, key=lambda f: (f.qmgr, _ORDER.get(f.rule, len(_ORDER)), f.object, f.detail, f.remedy))


def lint_observations(observations: Iterable[Observation], rules: tuple[Rule, ...] = RULES,
                      igq_traffic: Optional[Mapping[str, tuple[int, int]]] = None,
                      traffic: Optional[Mapping[tuple[str, str], Puts]] = None, run_date: str = "",
                      messages: Optional[Callable[[str, frozenset[str]], Sequence[DayMessage]]] = None,
                      moments: Iterable[tuple[datetime, Iterable[Observation]]] = ()) -> list[Finding]:
    """The findings of the observations; ``traffic``: the day's put records (:func:`count_puts`), None when no day's
    messages are known; ``messages`` and ``moments``: what the stale-knowledge rules replay, and the day's
    configurations they measure a difference's duration over (:class:`LintContext`)."""
    ctx = LintContext(tuple(sorted(observations, key=lambda o: o.qmgr)), dict(igq_traffic or {}),
                      None if traffic is None else dict(traffic), run_date, messages,
                      tuple((t, tuple(sorted(obs, key=lambda o: o.qmgr))) for t, obs in moments))
    return sort_findings(f for rule in rules for f in rule.run(ctx))
