"""``clwl lint``'s stale-knowledge rules: where queue managers' views of the cluster disagree, and whether that
changed where the day's messages went (docs/lint.md, "Stale and inconsistent cluster knowledge").

Who knows best (docs/algorithm.md, pitfall 6; the reference's DISPLAY CLUSQMGR notes): a full repository holds
every member of its cluster and every instance of every cluster queue; a partial repository holds only the queue
managers and queues it has used, plus the full repositories. A queue manager is a full repository for the clusters
its DISPLAY QMGR names in REPOS (or REPOSNL's namelist), and where another queue manager's DISPLAY CLUSQMGR shows it
QMTYPE(REPOS). The full repositories' view of a cluster is therefore the reference a partial repository's is
compared with, but only for what the partial repository knows: a queue it never used is no difference.

The routing effect: a sender's day of put records is replayed twice (clwl.engine.replay, as the pipeline does),
once with its view as captured and once with the view corrected (the full repositories' instances and queue
managers, or the host's own definition), and the messages whose first destination differs are listed. Pure: no
Spark.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Callable, Iterable, Iterator, Optional

from clwl.analyses.lint_model import WARNING, DayMessage, Hit, LintContext, Observation, RoutingEffect
from clwl.engine.model import ClusterChannel, ClusterView, LocalQueue, QueueInstance
from clwl.engine.replay import Snapshot, replay

#: The instance attributes a partial repository holds from the cluster's records (DISPLAY QCLUSTER) that routing
#: reads: steps 1 (PUT), 4 (CLWLRANK), 6-9 (CLWLPRTY) and the binding (DEFBIND).
INSTANCE_ATTRS = ("CLWLRANK", "CLWLPRTY", "PUT", "DEFBIND")
#: The queue manager attributes it holds (DISPLAY CLUSQMGR: its CLUSRCVR's advertised values) that routing reads.
QMGR_ATTRS = ("CLWLRANK", "CLWLPRTY", "CLWLWGHT", "NETPRTY", "SUSPEND")
FULL_VIEW = "the full repositories' view"  # what a stale view is replayed against


def _routing_values(rank: int, prty: int, put_enabled: bool, defbind: str) -> dict[str, str]:
    """An instance's (or a local queue's) :data:`INSTANCE_ATTRS` as MQSC prints them."""
    return dict(zip(INSTANCE_ATTRS, (str(rank), str(prty), "ENABLED" if put_enabled else "DISABLED",
                                     defbind.upper())))


def _instance_values(i: QueueInstance) -> dict[str, str]:
    return _routing_values(i.clwlrank, i.clwlprty, i.put_enabled, i.defbind)


def _local_values(q: LocalQueue) -> dict[str, str]:
    """Only what its DISPLAY QLOCAL showed: a capture that left an attribute out says nothing of it."""
    values = _routing_values(q.clwlrank, q.clwlprty, q.put_enabled, q.defbind)
    return {k: v for k, v in values.items() if k in q.shown}


def _qmgr_values(c: ClusterChannel) -> dict[str, str]:
    """A queue manager's :data:`QMGR_ATTRS` as MQSC prints them."""
    return dict(zip(QMGR_ATTRS, (str(c.clwlrank), str(c.clwlprty), str(c.clwlwght), str(c.netprty),
                                 "YES" if c.suspended else "NO")))


def _differs(mine: dict[str, str], theirs: dict[str, str]) -> list[str]:
    return [f"{k}({mine[k]}) against {k}({theirs[k]})" for k in mine if k in theirs and mine[k] != theirs[k]]


# -- the full repositories' view ------------------------------------------------------------------------------
@dataclass(frozen=True)
class FullView:
    """What the observed full repositories know: their clusters, every member (its advertised CLUSRCVR values) and
    every cluster queue instance; ``names``: the full repositories."""

    names: tuple[str, ...]
    clusters: frozenset[str]
    members: dict[str, ClusterChannel]  # queue manager -> its record (the first full repository's, by name)
    instances: dict[tuple[str, str], QueueInstance]  # (queue, host) -> the instance
    captured_at: Optional[datetime] = None  # the oldest of their captures (None: one is not known)

    def covers(self, clusters: Iterable[str]) -> bool:
        return bool(self.clusters & set(clusters))


def not_older(reference: Optional[datetime], other: Optional[datetime]) -> bool:
    """Whether a view captured at ``reference`` can say what another, captured at ``other``, should hold: not when
    it is older (a change between the two captures is not staleness). Unknown times are taken as comparable."""
    return reference is None or other is None or reference >= other


def full_repositories(observations: Iterable[Observation]) -> list[Observation]:
    """The observers that are full repositories: REPOS/REPOSNL in their own DISPLAY QMGR, or QMTYPE(REPOS) in their
    own CLUSRCVR record or in another observer's DISPLAY CLUSQMGR."""
    observations = list(observations)
    said = {c.qmgr for o in observations for c in (*o.view.channels, *o.view.local_receivers) if c.qmtype == "REPOS"}
    return [o for o in observations if o.view.qmgr.repos or o.qmgr in said]


def full_view(observations: Iterable[Observation]) -> Optional[FullView]:
    """The full repositories' view, None when no full repository is observed."""
    fulls = sorted(full_repositories(observations), key=lambda o: o.qmgr)
    if not fulls:
        return None
    clusters: set[str] = set()
    members: dict[str, ClusterChannel] = {}
    instances: dict[tuple[str, str], QueueInstance] = {}
    for o in fulls:
        clusters |= o.view.qmgr.repos or o.view.local_clusters
        for c in (*o.view.local_receivers, *o.view.channels):
            members.setdefault(c.qmgr, c)
        for i in o.view.instances:
            instances.setdefault((i.queue, i.qmgr), i)
    times = [o.captured_at for o in fulls]
    oldest = None if None in times else min(t for t in times if t is not None)
    return FullView(tuple(o.qmgr for o in fulls), frozenset(clusters), members, instances, oldest)


def _partials(ctx: LintContext, full: FullView) -> list[Observation]:
    """The partial repositories whose captures the full repositories' are not older than."""
    return [o for o in ctx.observations if o.qmgr not in full.names and not_older(full.captured_at, o.captured_at)]


# -- the routing effect -------------------------------------------------------------------------------------
def _destinations(sender: str, view: ClusterView, messages: list[DayMessage]) -> dict[str, Optional[str]]:
    """msg_id -> the queue manager the replay sends it to first (None: the put failed)."""
    start = min(m.event.put_time for m in messages)
    return {r.msg_id: r.qmgr for r in replay(sender, [Snapshot(start, view)], [m.event for m in messages])}


def routing_effect(ctx: LintContext, changes: Iterable[tuple[str, ClusterView, ClusterView]],
                   queues: Iterable[str]) -> Optional[RoutingEffect]:
    """Replay each sender's messages on ``queues`` with its view as captured and as corrected ((sender, captured,
    corrected) in ``changes``): the messages whose first destination differs. None without the day's messages."""
    if ctx.messages is None:
        return None
    names = frozenset(queues)
    total, changed = 0, []
    for sender, captured, corrected in changes:
        messages = list(ctx.messages(sender, names))
        if not messages:
            continue
        total += len(messages)
        before = _destinations(sender, captured, messages)
        after = _destinations(sender, corrected, messages)
        changed += [m for m in messages if before.get(m.event.msg_id) != after.get(m.event.msg_id)]
    changed.sort(key=lambda m: (m.event.put_time, m.event.msg_id))
    if not changed:
        return RoutingEffect(total)
    return RoutingEffect(total, tuple(m.event.msg_id for m in changed), changed[0].event.put_time,
                         changed[-1].event.put_time, tuple(sorted({m.application for m in changed} - {""})))


def _hhmmss(t: Optional[datetime]) -> str:
    return f"{t:%H:%M:%S}" if t else ""


def routing_words(ctx: LintContext, effect: Optional[RoutingEffect], senders: Iterable[str], queues: Iterable[str],
                  corrected: str) -> str:
    """The finding's words on what it did to the day's messages (nothing said without them)."""
    if effect is None:
        return ""
    day, who, what = ctx.run_date or "that day", ", ".join(sorted(set(senders))), ", ".join(sorted(set(queues)))
    if not effect.messages:
        return f"; no message was put on {what} by an application on {who} on {day}, so it changed no routing"
    if not effect.changed:
        return (f"; replayed with {corrected}, none of the {effect.messages:,} messages {who} put on {what} on {day} "
                f"would have gone elsewhere: it changed no routing that day")
    ids = ", ".join(effect.changed[:10]) + (f" and {len(effect.changed) - 10:,} more" if len(effect.changed) > 10
                                            else "")
    apps = f"; applications {', '.join(effect.applications)}" if effect.applications else ""
    return (f"; replayed with {corrected}, {len(effect.changed):,} of the {effect.messages:,} messages {who} put on "
            f"{what} on {day} would have gone elsewhere (first {_hhmmss(effect.first)}, last "
            f"{_hhmmss(effect.last)} UTC{apps}: {ids})")


# -- how long: the same difference over the day's configurations -------------------------------------------
def held_over_the_day(ctx: LintContext, differences: Callable[[LintContext], Iterable[object]]
                      ) -> dict[object, list[datetime]]:
    """Each difference's key -> the moments of the day (:attr:`LintContext.moments`) it was among ``differences``;
    empty with captures alone. Once per rule: every finding of the rule looks its key up."""
    held: dict[object, list[datetime]] = {}
    if len(ctx.moments) < 2:
        return held
    for t, obs in ctx.moments:
        for key in differences(replace(ctx, observations=obs, moments=())):
            held.setdefault(key, []).append(t)
    return held


def span_words(ctx: LintContext, held: list[datetime]) -> str:
    """For how long a difference held (the moments :func:`held_over_the_day` found it at): since when without a
    break up to the day's last configuration, and whether it held earlier too; nothing said without moments."""
    if not held:
        return ""
    times, seen = [t for t, _ in ctx.moments], set(held)
    start = len(times)
    while start > 0 and times[start - 1] in seen:
        start -= 1
    if start == len(times):
        return ""
    earlier = [t for t in held if t < times[start]]
    also = f"; also earlier, from {earlier[0]:%H:%M:%S} to {earlier[-1]:%H:%M:%S} UTC" if earlier else ""
    return (f" (since {times[start]:%H:%M:%S} UTC, the last {len(times) - start} of the day's {len(times)} "
            f"configurations{also})")


# -- partial-view-differs ------------------------------------------------------------------------------------
def _corrected_queue(view: ClusterView, full: FullView, queue: str) -> ClusterView:
    """``view`` with ``queue``'s instances as the full repositories have them (its own local instance kept), and a
    channel to each host it gains (INACTIVE: it starts when a message arrives)."""
    own = [i for i in view.instances if i.queue == queue and i.local]
    theirs = [replace(i, local=False) for (q, h), i in sorted(full.instances.items())
              if q == queue and h != view.local_name]
    instances = tuple(sorted([i for i in view.instances if i.queue != queue] + own + theirs,
                             key=lambda i: (i.queue, i.qmgr)))
    channels = list(view.channels)
    for i in theirs:
        member = full.members.get(i.qmgr)
        if member is not None and not view.channels_to(i.qmgr):
            channels.append(replace(member, deftype="CLUSSDRA", state="INACTIVE", current_xmitq=""))
    return replace(view, instances=instances, channels=tuple(sorted(channels, key=lambda c: (c.qmgr, c.name))))


def _corrected_qmgr(view: ClusterView, member: ClusterChannel) -> ClusterView:
    """``view`` with its channels to ``member``'s queue manager carrying the values the full repositories hold."""
    channels = tuple(replace(c, clwlrank=member.clwlrank, clwlprty=member.clwlprty, clwlwght=member.clwlwght,
                             netprty=member.netprty, suspended=member.suspended) if c.qmgr == member.qmgr else c
                     for c in view.channels)
    return replace(view, channels=channels)


def _partial_differences(ctx: LintContext) -> dict[tuple[str, str], list[str]]:
    """(partial repository, queue or ``QMGR name``) -> what differs from the full repositories' view: instances
    missing or extra (hosted by a member: a departed host is departed-qmgr-chosen's), attributes that differ."""
    full = full_view(ctx.observations)
    out: dict[tuple[str, str], list[str]] = {}
    if full is None:
        return out
    for o in _partials(ctx, full):
        known = {i.queue for i in o.view.instances if not i.qmgr_alias and not i.local and full.covers(i.clusters)}
        for queue in sorted(known):
            mine = {i.qmgr: i for i in o.view.instances_of(queue) if not i.local}
            theirs = {h: i for (q, h), i in full.instances.items() if q == queue and h != o.qmgr}
            words = [f"{h}'s instance is missing" for h in sorted(set(theirs) - set(mine))]
            words += [f"an instance on {h} that the full repositories no longer hold" for h in sorted(set(mine) - set(theirs))
                      if h in full.members]
            for h in sorted(set(mine) & set(theirs)):
                words += [f"{h}'s {d}" for d in _differs(_instance_values(mine[h]), _instance_values(theirs[h]))]
            if words:
                out[(o.qmgr, queue)] = words
        for c in o.view.channels:
            member = full.members.get(c.qmgr)
            if member is not None and full.covers(c.clusters):
                words = _differs(_qmgr_values(c), _qmgr_values(member))
                if words:
                    out[(o.qmgr, f"QMGR {c.qmgr}")] = words
    return out


def _against_full_view(ctx: LintContext, differences: Callable[[LintContext], dict]) -> Optional[tuple]:
    """What a rule that compares views with the full repositories' starts from: the full view, the observations by
    queue manager, the full repositories' names, the differences at the day's last capture and how long each was
    held over the day; None when no full repository was captured (the rule then says nothing)."""
    full = full_view(ctx.observations)
    if full is None:
        return None
    now = differences(ctx)
    return (full, {o.qmgr: o for o in ctx.observations}, ", ".join(full.names), now,
            held_over_the_day(ctx, differences) if now else {})


def partial_view_differs(ctx: LintContext) -> Iterator[Hit]:
    """A partial repository's view of a cluster queue it knows (or of a queue manager) differs from the full
    repositories': a missing or extra instance, a CLWL attribute that differs; for how long, and what it did."""
    against = _against_full_view(ctx, _partial_differences)
    if against is None:
        return
    full, by_name, fulls, now, held = against
    for (qm, obj), words in sorted(now.items()):
        view = by_name[qm].view
        if obj.startswith("QMGR "):
            target = obj[5:]
            corrected = _corrected_qmgr(view, full.members[target])
            queues = {i.queue for i in view.instances if i.qmgr == target}
            what = f"{qm}'s record of the queue manager {target}"
        else:
            corrected, queues, what = _corrected_queue(view, full, obj), {obj}, f"{qm}'s view of {obj}"
        effect = routing_effect(ctx, [(qm, view, corrected)], queues)
        clusters = sorted(view.local_clusters & full.clusters or full.clusters)
        yield Hit(qm, obj, f"{what} differs from the full repositories' ({fulls}): {'; '.join(words)}"
                           f"{span_words(ctx, held.get((qm, obj), []))}"
                           f"{routing_words(ctx, effect, [qm], queues, FULL_VIEW)}",
                  f"check that {qm}'s channels to the full repositories ({fulls}) run; then REFRESH CLUSTER("
                  f"{clusters[0] if clusters else '...'}) REPOS(NO) on {qm}",
                  seen_by=(qm, *full.names), routing=effect)


# -- local-definition-differs --------------------------------------------------------------------------------
def _advertised(ctx: LintContext, queue: str, host: str) -> tuple[Optional[QueueInstance], tuple[str, ...]]:
    """What the cluster advertises for ``host``'s instance of ``queue``: the full repositories' record, else the
    other observers'; with the observers whose views hold it. Only views captured no earlier than the host's."""
    since = next((o.captured_at for o in ctx.observations if o.qmgr == host), None)
    full = full_view(ctx.observations)
    if full is not None and (queue, host) in full.instances and not_older(full.captured_at, since):
        return full.instances[(queue, host)], full.names
    others = [(o.qmgr, i) for o in ctx.observations if o.qmgr != host and not_older(o.captured_at, since)
              for i in o.view.instances_of(queue) if i.qmgr == host]
    return (others[0][1], tuple(q for q, _ in others)) if others else (None, ())


def _local_differences(ctx: LintContext) -> dict[tuple[str, str], list[str]]:
    """(host, queue) -> its local QLOCAL's CLWLPRTY, CLWLRANK, PUT, DEFBIND that differ from its cluster record."""
    out: dict[tuple[str, str], list[str]] = {}
    for o in ctx.observations:
        for lq in o.view.local_queues:
            if not lq.clusters or lq.usage == "XMITQ":
                continue
            advertised, _ = _advertised(ctx, lq.name, o.qmgr)
            if advertised is not None:
                words = _differs(_local_values(lq), _instance_values(advertised))
                if words:
                    out[(o.qmgr, lq.name)] = words
    return out


def local_definition_differs(ctx: LintContext) -> Iterator[Hit]:
    """A cluster queue's local definition (CLWLPRTY, CLWLRANK, PUT, DEFBIND of its QLOCAL) differs from what the
    cluster advertises for it: the change did not reach the cluster; senders route by the advertised values."""
    by_name = {o.qmgr: o for o in ctx.observations}
    now = _local_differences(ctx)
    held = held_over_the_day(ctx, _local_differences) if now else {}
    for (host, queue), words in sorted(now.items()):
        lq = by_name[host].view.local_queue(queue)
        _, holders = _advertised(ctx, queue, host)
        changes = []
        for o in ctx.observations:
            if o.qmgr == host or not any(i.qmgr == host for i in o.view.instances_of(queue)):
                continue
            fixed = tuple(replace(i, clwlrank=lq.clwlrank, clwlprty=lq.clwlprty, put_enabled=lq.put_enabled,
                                  defbind=lq.defbind) if (i.queue, i.qmgr) == (queue, host) else i
                          for i in o.view.instances)
            changes.append((o.qmgr, o.view, replace(o.view, instances=fixed)))
        senders = [c[0] for c in changes]
        effect = routing_effect(ctx, changes, [queue])
        local = ", ".join(w.split(" against ")[0] for w in words)
        advertised = ", ".join(w.split(" against ")[1] for w in words)
        yield Hit(host, queue, f"QLOCAL({queue}) on {host} has {local}; the cluster advertises {advertised} (held by "
                               f"{', '.join(holders)})"
                               f"{span_words(ctx, held.get((host, queue), []))}"
                               f"{routing_words(ctx, effect, senders, [queue], 'the definition on ' + host)}",
                  f"check that {host}'s channels to the full repositories run, then ALTER QLOCAL({queue}) again on "
                  f"{host} (or REFRESH CLUSTER(...) REPOS(NO) on {host}) so that the cluster advertises it",
                  seen_by=(host, *holders), routing=effect)


# -- departed-qmgr-chosen ------------------------------------------------------------------------------------
def _departed(ctx: LintContext) -> dict[tuple[str, str], list[str]]:
    """(sender, departed queue manager) -> the cluster queues the sender's view still has on it: a queue manager
    of a cluster the full repositories hold, gone from every full repository's view."""
    full = full_view(ctx.observations)
    out: dict[tuple[str, str], list[str]] = {}
    if full is None:
        return out
    for o in _partials(ctx, full):
        for c in o.view.channels:
            if c.qmgr in full.members or not full.covers(c.clusters):
                continue
            queues = sorted({i.queue for i in o.view.instances if i.qmgr == c.qmgr})
            if queues:
                out[(o.qmgr, c.qmgr)] = queues
    return out


def departed_qmgr_chosen(ctx: LintContext) -> Iterator[Hit]:
    """A queue manager gone from the full repositories' view (it left the cluster, or was removed by RESET
    CLUSTER) that a sender's view still holds instances on, so the sender may still choose it."""
    against = _against_full_view(ctx, _departed)
    if against is None:
        return
    full, by_name, fulls, now, held = against
    for (sender, gone), queues in sorted(now.items()):
        view = by_name[sender].view
        corrected = replace(view, channels=tuple(c for c in view.channels if c.qmgr != gone),
                            instances=tuple(i for i in view.instances if i.qmgr != gone))
        effect = routing_effect(ctx, [(sender, view, corrected)], queues)
        clusters = sorted({cl for c in view.channels if c.qmgr == gone for cl in c.clusters})
        yield Hit(sender, gone, f"{sender} still holds {gone} with instances of {', '.join(queues)}; the full "
                                f"repositories ({fulls}) no longer know {gone}"
                                f"{span_words(ctx, held.get((sender, gone), []))}"
                                f"{routing_words(ctx, effect, [sender], queues, FULL_VIEW)}",
                  f"REFRESH CLUSTER({clusters[0] if clusters else '...'}) REPOS(NO) on {sender}; if {gone} is gone "
                  f"for good and its record lingers, RESET CLUSTER(...) QMNAME({gone}) ACTION(FORCEREMOVE) "
                  f"QUEUES(YES) on a full repository", seen_by=(sender, *full.names), routing=effect)


# -- backout-or-streamq-differs ------------------------------------------------------------------------------
HANDLING_ATTRS = ("BOTHRESH", "BOQNAME", "STREAMQ")


def _handling(q: LocalQueue) -> dict[str, str]:
    return {"BOTHRESH": str(q.bothresh), "BOQNAME": q.boqname or "( )", "STREAMQ": q.streamq or "( )"}


def backout_or_streamq_differs(ctx: LintContext) -> Iterator[Hit]:
    """The hosts of a cluster queue (their own DISPLAY QLOCAL) handle poison messages differently (BOTHRESH, or
    BOQNAME blank on some) or stream differently (STREAMQ): a message's fate depends on the instance chosen."""
    hosts: dict[str, dict[str, LocalQueue]] = {}
    for o in ctx.observations:
        for lq in o.view.local_queues:
            if lq.clusters and lq.usage != "XMITQ":
                hosts.setdefault(lq.name, {})[o.qmgr] = lq
    for queue, defs in sorted(hosts.items()):
        if len(defs) < 2:
            continue
        values = {h: _handling(q) for h, q in sorted(defs.items())}
        differ = [k for k in HANDLING_ATTRS if all(k in q.shown for q in defs.values())
                  and len({v[k] for v in values.values()}) > 1]
        if not differ:
            continue
        each = "; ".join(f"{h} " + " ".join(f"{k}({v[k].strip('( )') or ' '})" for k in differ)
                         for h, v in values.items())
        # The odd ones out: the hosts without a backout queue, else those whose values are the rarer.
        odd = sorted(h for h, q in defs.items() if not q.boqname) if "BOQNAME" in differ else []
        if not odd or len(odd) == len(defs):
            common = max({tuple(v[k] for k in differ) for v in values.values()},
                         key=lambda t: (sum(tuple(v[k] for k in differ) == t for v in values.values()), t))
            odd = sorted(h for h, v in values.items() if tuple(v[k] for k in differ) != common)
        senders = sorted({o.qmgr for o in ctx.observations if any(i.qmgr in odd for i in o.view.instances_of(queue))})
        putters: list[str] = []
        total, concerned = _messages_to(ctx, senders, queue, set(odd), putters)
        effect = None if total is None else RoutingEffect(total)  # no destination changes: the choice is the same
        yield Hit(", ".join(sorted(defs)), queue,
                  f"the instances of {queue} differ in {', '.join(differ)} ({each})"
                  f"{_odd_words(ctx, total, concerned, putters, queue, odd)}",
                  f"make {', '.join(differ)} the same on every host of {queue} (ALTER QLOCAL({queue}) "
                  f"{' '.join(f'{k}(...)' for k in differ)}), with a BOQNAME that exists on each",
                  seen_by=tuple(sorted(defs)), severity=WARNING, routing=effect)


def _messages_to(ctx: LintContext, senders: list[str], queue: str, odd: set[str], putters: list[str]
                 ) -> tuple[Optional[int], list[DayMessage]]:
    """The day's messages the senders put on ``queue`` (None without them), and those their views send to the
    ``odd`` hosts: the messages the difference concerns (it does not change their destination); ``putters`` gains
    the senders that put any."""
    if ctx.messages is None:
        return None, []
    total, hit = 0, []
    by_name = {o.qmgr: o for o in ctx.observations}
    for s in senders:
        messages = list(ctx.messages(s, frozenset({queue})))
        if not messages:
            continue
        total += len(messages)
        putters.append(s)
        dest = _destinations(s, by_name[s].view, messages)
        hit += [m for m in messages if dest.get(m.event.msg_id) in odd]
    hit.sort(key=lambda m: (m.event.put_time, m.event.msg_id))
    return total, hit


def _odd_words(ctx: LintContext, total: Optional[int], concerned: list[DayMessage], senders: list[str], queue: str,
               odd: list[str]) -> str:
    if total is None:
        return ""
    day, where = ctx.run_date or "that day", ", ".join(odd)
    if not concerned:
        return (f"; it changes no destination, and none of the {total:,} messages put on {queue} on {day} went to "
                f"{where}")
    apps = sorted({m.application for m in concerned} - {""})
    ids = ", ".join(m.event.msg_id for m in concerned[:10])
    return (f"; it changes no destination, but {len(concerned):,} of the {total:,} messages {', '.join(senders)} put "
            f"on {queue} on {day} went to {where} (first {_hhmmss(concerned[0].event.put_time)}, last "
            f"{_hhmmss(concerned[-1].event.put_time)} UTC{'; applications ' + ', '.join(apps) if apps else ''}: "
            f"{ids})")
