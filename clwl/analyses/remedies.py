"""Why MQ kept a message where it was, or split a queue's messages as it did, and what to do about it, in MQ's
terms: ONE table (:data:`REMEDIES`), used by the report's stuck groups and unexpected distributions, summary.md
and ``clwl explain`` (docs/diagnosis.md, "Causes and remedies").

A cause is found from what the replay recorded (:func:`stay_cause`: a stuck message's ``why`` and ``detail``, the
stay reasons of clwl/engine/algorithm.py's steps), or from a distribution row's explanation and the interval's puts
(:func:`distribution_causes`). :func:`remedy` fills the cause's template with the objects involved; for a bind on
open, :func:`pinned_by` names what pinned the handle: the MQOPEN option, or the DEFBIND of the object the open
resolved through (:func:`clwl.engine.candidates.defbind_source`: a local alias, a local queue, the cluster queue as its
instances advertise it).

Held-back put rows are not routing causes: their reasons and remedies are clwl/landing/held_back.py's templates
(``DATE_REASON``, ``DUPLICATE_REASON``), linked here by key in :data:`HELD_BACK`, not copied.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Optional

from clwl.engine.candidates import DefbindSource, alter_defbind, defbind_source
from clwl.engine.model import ClusterView
from clwl.landing import held_back


@dataclass(frozen=True)
class Remedy:
    """One cause: what MQ did (``mq_did``), the remedy in MQ's terms, and the sentence naming the objects
    (``template``: str.format fields among :data:`FIELDS`)."""

    key: str
    title: str
    mq_did: str
    remedy: str
    template: str


#: The causes, stuck messages first (the stay reasons), then distributions. One line each in docs/diagnosis.md.
REMEDIES: tuple[Remedy, ...] = (
    Remedy("bind-on-open", "bind on open",
           "MQ chose the destination once, at MQOPEN, for every message put on the handle; such a message's "
           "AccountingToken is all zeros and MQ never re-allocates it",
           "MQOO_BIND_NOT_FIXED on the MQOPEN, or DEFBIND(NOTFIXED) on the object the open resolves through",
           "bound on open by {pinned_by}: MQ fixed {qmgr} at MQOPEN and never re-allocates these messages. "
           "Remedy: {fix}"),
    Remedy("bind-on-group", "message group",
           "a group put in logical order on a handle opened MQOO_BIND_ON_GROUP goes whole to one queue manager",
           "none: by design a group stays whole; MQOO_BIND_NOT_FIXED only if the group need not arrive together",
           "a message group (MQOO_BIND_ON_GROUP, MQPMO_LOGICAL_ORDER): MQ keeps a group whole on {qmgr}, by design. "
           "Remedy: none; the group moves when {channel} runs again (open {queue} with MQOO_BIND_NOT_FIXED only "
           "if its groups need not arrive together)"),
    Remedy("named-qmgr", "named target queue manager",
           "the application named the queue manager in ObjectQMgrName: only that queue manager (or what its "
           "queue-manager alias resolves to) may take the message, and MQ never re-allocates it",
           "leave ObjectQMgrName blank so the cluster chooses, unless the message must go there",
           "the application names {target} in ObjectQMgrName{alias}: {qmgr} is the only destination MQ may use. "
           "Remedy: leave ObjectQMgrName blank on the MQOPEN of {queue} unless the message must go to {target}"),
    Remedy("single-instance", "a single instance",
           "no other queue manager hosts the queue: the re-driven algorithm had nowhere else to send it (step 1)",
           "add an instance of the queue on another queue manager of the cluster",
           "a single instance: no queue manager but {qmgr} hosts {queue}, so MQ had nowhere else to send it "
           "(step 1). Remedy: DEFINE QLOCAL({queue}) CLUSTER(...) on another queue manager"),
    Remedy("only-eligible", "the only eligible instance",
           "the other instances were eliminated at step 1: PUT(DISABLED), or not in a cluster the sender shares",
           "PUT(ENABLED) on the other instances, or share their cluster",
           "still the most favourable: step 1 left {qmgr} the only eligible instance of {queue} (the others "
           "PUT(DISABLED) or not in a cluster {sender} shares). Remedy: ALTER QLOCAL({queue}) PUT(ENABLED) on "
           "the others, or add {sender}'s cluster to them"),
    Remedy("local-first", "local instance first",
           "the local instance was chosen (CLWLUSEQ(LOCAL), or the message arrived over a cluster channel; step 3)",
           "CLWLUSEQ(ANY) on the local queue (or the queue manager) to let remote instances share the load",
           "still the most favourable: the local instance of {queue} is chosen first (step 3). Remedy: ALTER "
           "QLOCAL({queue}) CLWLUSEQ(ANY) on {sender}"),
    Remedy("rank", "rank",
           "a higher CLWLRANK kept the destination above every other (step 4a channel, 4b queue); rank is applied "
           "before channel state, so the destination stays even while its channel moves nothing",
           "the same CLWLRANK on the other destinations, or the channel restored",
           "still the most favourable: {step} kept {qmgr} above the others, before channel state counts. Remedy: "
           "give the other destinations of {queue} the same CLWLRANK (ALTER CHANNEL ... CLWLRANK, ALTER QLOCAL "
           "CLWLRANK), or restore {channel}"),
    Remedy("suspended", "others suspended",
           "the other queue managers were suspended from the cluster (SUSPEND QMGR; step 5)",
           "RESUME QMGR on them, or restore the channel",
           "still the most favourable: the other queue managers were suspended (step 5). Remedy: RESUME QMGR on "
           "them, or restore {channel}"),
    Remedy("channel-state", "no better channel",
           "every other destination's channel was in a state no better (steps 6-9 keep the best tier)",
           "restore the channels (the report's incidents say which side to look at)",
           "still the most favourable: every other channel was no better than {channel} (steps 6-9). Remedy: "
           "restore the channels (the report's incidents say which side to look at)"),
    Remedy("pcf", "cluster PCF routing",
           "a cluster command message is routed by the cluster's own rules (steps 4, 10)", "none: by design",
           "cluster PCF routing ({step}): by design. Remedy: none; it moves when {channel} runs again"),
    Remedy("priority", "priority",
           "a higher NETPRTY or CLWLPRTY kept the destination ahead once the others' channels were no better "
           "(steps 11, 11a, 11b)",
           "the same priority on the other destinations, or the channel restored",
           "still the most favourable: {step} kept {qmgr} ahead of destinations no better placed. Remedy: give "
           "the others the same priority (ALTER CHANNEL ... NETPRTY / CLWLPRTY, ALTER QLOCAL({queue}) CLWLPRTY), "
           "or restore {channel}"),
    Remedy("mruc", "most recently used channels",
           "CLWLMRUC limited the choice to the most recently used channels (step 11c)",
           "ALTER QMGR CLWLMRUC at least the number of destinations",
           "still the most favourable: CLWLMRUC kept only the most recently used channels (step 11c). Remedy: "
           "ALTER QMGR CLWLMRUC(n) on {sender} with n at least the number of destinations of {queue}"),
    Remedy("least-recently-used", "all channels down",
           "the other destinations were behind channels no better either, and step 12 chose this one again",
           "restore the channels; nothing in the configuration kept it there",
           "still the most favourable: every other destination of {queue} was behind a channel no better than "
           "{channel}, so step 12 chose {qmgr} again. Remedy: restore the channels (the report's incidents say "
           "which side to look at); nothing in the configuration kept it there"),
    Remedy("between-captures", "failed between status captures",
           "a browse found the message on the transmission queue although the channel status captures had the "
           "channel moving messages: the channel failed between two captures",
           "DISPLAY CHSTATUS captured more often (the landing folder takes any number)",
           "seen on the transmission queue by {seen} although the status captures had {channel} "
           "moving messages: it failed between two captures. Remedy: capture DISPLAY CHSTATUS more often "
           "around the trouble"),
    Remedy("dist-bind-on-open", "bound handles",
           "a few bound handles send all their messages to one destination each, and the routing state MQ had "
           "before the day's first capture (which decides each handle's first choice) is unknown",
           "MQOO_BIND_NOT_FIXED, or DEFBIND(NOTFIXED) on the object, for an even split",
           "{bound} of the interval's puts were bound on open ({applications}): each handle sends everything to "
           "one queue manager, so the split follows the handles. Remedy: MQOO_BIND_NOT_FIXED in those "
           "applications, or DEFBIND(NOTFIXED) on {queue}, for an even split"),
    Remedy("dist-change-between-captures", "a change between captures",
           "a channel state or queue change the captures saw may have happened earlier or later than captured: "
           "MQ routed by the moment it happened, the replay by the capture",
           "capture the configuration and channel status more often around the change",
           "the captures show a change in the interval ({notes}): MQ routed by the moment it happened, the replay "
           "by the capture. Remedy: capture the configuration and DISPLAY CHSTATUS more often around it"),
    Remedy("dist-unexplained", "not in the captures",
           "nothing the landing folder holds accounts for the split",
           "look for what the landing folder does not hold",
           "nothing captured accounts for it{notes_clause}. Remedy: look for puts not in the put files (receiver "
           "accounting counts every sender's), a configuration change between captures, or a workload exit "
           "(CLWLEXIT on the queue manager)"),
)

BY_KEY = {r.key: r for r in REMEDIES}

#: Held-back put rows (clwl/landing/held_back.py): kind -> the reason template there, which says what to do.
HELD_BACK = {"date": held_back.DATE_REASON, "duplicate": held_back.DUPLICATE_REASON}

#: The fields a template may name; a field not given reads as below.
FIELDS = {"qmgr": "its destination", "queue": "the queue", "channel": "its channel", "sender": "the sender",
          "target": "the named queue manager", "alias": "", "pinned_by": "the MQOPEN", "fix": "", "step": "a step",
          "seen": "a browse", "bound": "some", "applications": "applications not known", "notes": "", "notes_clause": ""}

# A stay reason ends with its step: "... (step 4a)" or "(step 4a): rank is taken before channel state".
_STEP = re.compile(r"\(step (\w+)\)")

#: A step of the algorithm (clwl/engine/algorithm.py's ids) -> the cause of a message that stayed because of it.
STEP_CAUSES = {"1": "only-eligible", "2": "named-qmgr", "3": "local-first", "4": "pcf", "4a": "rank", "4b": "rank",
               "5": "suspended", "6": "channel-state", "7": "channel-state", "8": "channel-state",
               "9": "channel-state", "10": "pcf", "11": "priority", "11a": "priority", "11b": "priority",
               "11c": "mruc", "12": "least-recently-used"}

#: A not-reallocatable reason (clwl.engine.router.not_reallocatable_reason) -> its cause.
NOT_REALLOCATABLE = {"bind-on-open": "bind-on-open", "bind-on-group": "bind-on-group", "named-qmgr": "named-qmgr"}


def stay_cause(why: Optional[str], detail: Optional[str], *, browse: bool = False,
               single_instance: bool = False) -> Optional[str]:
    """The cause key of a message that stayed (gold.stuck_messages' why and detail; clwl.engine.replay's stay_reason and
    stay_detail). browse: a browse saw it after the replay delivered it (its cause is the application's when it
    could not be re-allocated, else the channel failing between captures); single_instance: the queue has one
    instance in the sender's view (turns step 1's "only eligible" into "a single instance")."""
    head = (detail or "").split(";")[0].strip()
    if browse:
        # The application's cause stays the cause (bind on open, on group, a named queue manager): the missing
        # channel status capture is what the evidence lacked, said under the evidence, not a reason it stayed.
        return NOT_REALLOCATABLE.get(head, "between-captures") if why == "not-reallocatable" else "between-captures"
    if why == "not-reallocatable":
        return NOT_REALLOCATABLE.get(head)
    if why == "still-most-favourable":
        m = _STEP.search(head)
        key = STEP_CAUSES.get(m.group(1)) if m else None
        return "single-instance" if key == "only-eligible" and single_instance else key
    return None


def step_of(detail: Optional[str]) -> str:
    """"step 4a" of a stay reason (or "a step")."""
    m = _STEP.search(detail or "")
    return f"step {m.group(1)}" if m else "a step"


def remedy(key: str, **facts: object) -> str:
    """The cause's sentence with its objects named (a fact not given reads as in :data:`FIELDS`)."""
    r = BY_KEY[key]
    names = {name for _, name, _, _ in string.Formatter().parse(r.template) if name}
    values = {n: facts.get(n) if facts.get(n) not in (None, "") else FIELDS.get(n, "") for n in names}
    if key == "bind-on-open" and not facts.get("fix"):
        values["fix"] = r.remedy
    return r.template.format(**values)


# -- bind on open: what pinned it ---------------------------------------------------------------------------------
def pinned_by(bind: Optional[str], view: Optional[ClusterView], queue: str) -> tuple[str, str]:
    """(what pinned a bind-on-open handle, the fix) for a put whose bind was ``bind`` as the put file or trace
    gave it (``open``: MQOO_BIND_ON_OPEN or the queue's DEFBIND, the put file does not say which; ``as_q_def``:
    the DEFBIND). With the sender's configuration, the object is named: when its DEFBIND is not OPEN, the
    application itself asked for MQOO_BIND_ON_OPEN."""
    if view is None:
        return (f"the MQOPEN of {queue} (MQOO_BIND_ON_OPEN, or the DEFBIND(OPEN) of the object it resolves "
                "through)", f"open {queue} with MQOO_BIND_NOT_FIXED, or set DEFBIND(NOTFIXED) on that object")
    obj = defbind_source(view, queue)
    named = _object_name(obj)
    if obj.defbind != "OPEN" and bind != "as_q_def":
        return (f"the application's MQOPEN option MQOO_BIND_ON_OPEN ({named} has DEFBIND({obj.defbind}))",
                f"open {queue} with MQOO_BIND_NOT_FIXED (or MQOO_BIND_AS_Q_DEF) in the application")
    how = "MQOO_BIND_AS_Q_DEF and " if bind == "as_q_def" else ""
    alter = alter_defbind(obj, "NOTFIXED", view.local_name)
    return (f"{how}the DEFBIND(OPEN) of {named}",
            f"{alter}, or open with MQOO_BIND_NOT_FIXED" if not how
            else f"{alter} (the application opens with MQOO_BIND_AS_Q_DEF)")


def _hosts(obj: DefbindSource) -> str:
    return ", ".join(obj.hosts)


def _object_name(obj: DefbindSource) -> str:
    if obj.kind == "QALIAS":
        return f"the alias QALIAS({obj.name})"
    if obj.kind == "QLOCAL":
        return f"the local queue QLOCAL({obj.name})"
    if obj.kind == "QCLUSTER":
        return f"the cluster queue {obj.name} (advertised by {_hosts(obj)})"
    return f"{obj.name} (no definition: MQ's default DEFBIND(OPEN))"


def alias_note(view: Optional[ClusterView], target: Optional[str], qmgr: Optional[str]) -> str:
    """", a queue-manager alias of QM3" when the named target queue manager is an alias (a QREMOTE with a blank
    RNAME, or a cluster queue-manager alias)."""
    if view is None or not target or target == qmgr:
        return ""
    remote = view.remote(target)
    if remote is not None and remote.qmgr_alias:
        return f", a queue-manager alias (QREMOTE) resolving to {remote.rqmname or qmgr}"
    if any(i.qmgr_alias and i.queue == target for i in view.instances):
        return f", a cluster queue-manager alias resolving to {qmgr}"
    return ""


def single_instance(view: Optional[ClusterView], queue: str) -> bool:
    """The queue has exactly one instance in the view (local or advertised)."""
    if view is None:
        return False
    hosts = {i.qmgr for i in view.instances_of(queue)}
    if view.local_queue(queue) is not None:
        hosts.add(view.local_name)
    return len(hosts) == 1


# -- distributions ------------------------------------------------------------------------------------------------
#: Notes of clwl.analyses.distribution.explain that mean something changed in the interval (a state or queue change).
_IN_FORCE = re.compile(r"the configuration in force \((.*)\) does not account")
_CHANGE_NOTES = re.compile(r"PUT\(DISABLED\) from|channel \S+ \S+ at |suspended")


def config_notes(explanation: str) -> str:
    """The configuration notes of an unexpected row's explanation ("...; the configuration in force (<notes>) does
    not account for it"), or ""."""
    m = _IN_FORCE.search(explanation or "")
    return m.group(1) if m else ""


def distribution_causes(explanation: str, bound_puts: int = 0) -> list[str]:
    """The cause keys of an unexpected destination-interval: its explanation's notes (clwl.analyses.distribution.explain)
    and the interval's puts bound on open."""
    notes = config_notes(explanation)
    keys = []
    if bound_puts:
        keys.append("dist-bind-on-open")
    if _CHANGE_NOTES.search(notes):
        keys.append("dist-change-between-captures")
    if not keys:
        keys.append("dist-unexplained")
    return keys


def distribution_remedy(explanation: str, *, queue: str, bound: int = 0, applications: str = "") -> str:
    """The remedies of an unexpected destination-interval, joined."""
    notes = config_notes(explanation)
    out = []
    for key in distribution_causes(explanation, bound):
        out.append(remedy(key, queue=queue, bound=bound, applications=applications, notes=notes,
                          notes_clause=f" (the configuration in force: {notes})" if notes else ""))
    return " ".join(s if s.endswith(".") else s + "." for s in out)
