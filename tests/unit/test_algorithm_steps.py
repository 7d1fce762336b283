"""Each step of the default profile (docs/algorithm.md) in a scenario where that step decides.

Every test derives its expectation from the reference text and the binding readings of cli-contract.md
("Readings of the reference that this contract fixes", quoted as "reading N"). The arithmetic of step 12:
a channel's DestSeqFactor starts at 0 and grows by exactly 1000/CLWLWGHT each time it is chosen (50 -> +20);
its DestSeqNumber is the sending queue manager's choice counter (1, 2, 3, ...) when last chosen, 0 if never.
Step 12 picks the lowest DestSeqFactor, then the lowest DestSeqNumber, then queue manager name, then channel
name (contract tie-break).

Setup common to all tests (see clwl_builders): the sending queue manager is QM1 in cluster CL1; channels are
TO.<qm>; trace labels are "QM/CHANNEL" or "QM1/local".
"""

from __future__ import annotations

import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from clwl_builders import (  # noqa: E402
    chan,
    deciding_entry,
    dest,
    eliminated_at,
    entries,
    factor,
    inst,
    make_view,
    not_applied,
    qmgr_alias,
    qmgrs,
    req,
    route_n,
    seqno,
    spread_view,
    steps_in_trace,
)

from clwl.engine.algorithm import PROFILES  # noqa: E402
from clwl.engine.router import Route, RouteError, Router  # noqa: E402


def explain(router, request=None, **kw):
    r = router.route(request or req(), explain=True, **kw)
    assert isinstance(r, Route), r
    return r


# =====================================================================================================
# Step 1: a queue name is specified
# =====================================================================================================
def test_step1_put_disabled_instance_is_eliminated():
    """Step 1, first sentence: "queues that are not PUT enabled are eliminated".

    Q1 on QM2 is PUT(DISABLED), on QM3 PUT(ENABLED). Candidates QM2/TO.QM2, QM3/TO.QM3; step 1 removes
    QM2/TO.QM2, leaving one: QM3, decided_by "1".
    """
    view = spread_view(("QM2", "QM3"), inst_attrs={"QM2": {"put_enabled": False}})
    r = explain(Router(view))
    assert (r.qmgr, r.channel, r.decided_by) == ("QM3", "TO.QM3", "1")
    assert eliminated_at(r, "1") == ("QM2/TO.QM2",)
    assert deciding_entry(r).remaining == ("QM3/TO.QM3",)


def test_step1_all_instances_put_disabled_fails_2268():
    """Step 1 eliminates every instance: nothing can receive the put -> MQRC_CLUSTER_PUT_INHIBITED (2268)
    (test_documented_behaviours.py B13)."""
    view = spread_view(("QM2", "QM3"), inst_attrs={"QM2": {"put_enabled": False}, "QM3": {"put_enabled": False}})
    r = Router(view).route(req(), explain=True)
    assert isinstance(r, RouteError)
    assert (r.error, r.reason) == ("MQRC_CLUSTER_PUT_INHIBITED", 2268)


def test_step1_remote_instance_not_sharing_a_cluster_is_eliminated():
    """Step 1, second sentence: "Remote instances of queues that do not share a cluster with the local
    queue manager are then eliminated".

    QM1 is only in CL1. QM2's instance of Q1 is advertised in CL2 only (its channel TO.QM2 is in CL2);
    QM3's instance is in CL1. QM2/TO.QM2 goes, QM3/TO.QM3 is the only one left: decided_by "1".
    """
    view = make_view([chan("QM2", clusters=("CL2",)), chan("QM3")],
                     [inst("QM2", clusters=("CL2",)), inst("QM3")])
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "1")
    assert eliminated_at(r, "1") == ("QM2/TO.QM2",)
    rules = [t.rule for t in entries(r, "1") if t.eliminated]
    assert len(rules) == 1 and "share a cluster" in rules[0]


def test_step1_channel_not_in_the_queues_cluster_is_eliminated():
    """Step 1, third sentence: "remote CLUSRCVR channels that are not in the same cluster as the queue are
    eliminated".

    QM1 is in CL1 and CL2. QM2 has two CLUSRCVRs, TO.QM2.CL1 (CL1) and TO.QM2.CL2 (CL2); Q1 on QM2 is in CL1
    only. Candidates QM2/TO.QM2.CL1 and QM2/TO.QM2.CL2; the channel in CL2 is not in Q1's cluster and goes.
    One left: decided_by "1", over TO.QM2.CL1.
    """
    view = make_view([chan("QM2", "TO.QM2.CL1", clusters=("CL1",)), chan("QM2", "TO.QM2.CL2", clusters=("CL2",))],
                     [inst("QM2", clusters=("CL1",))], local_clusters=("CL1", "CL2"))
    r = explain(Router(view))
    assert (r.qmgr, r.channel, r.decided_by) == ("QM2", "TO.QM2.CL1", "1")
    assert eliminated_at(r, "1") == ("QM2/TO.QM2.CL2",)


def test_step1_local_instance_put_disabled_is_eliminated_before_step3():
    """Step 1 comes before step 3: QM1's own instance PUT(DISABLED) (CLWLUSEQ LOCAL by default) is removed
    in step 1, QM2/TO.QM2 remains alone: decided_by "1", not the local instance."""
    view = spread_view(("QM2",), local_instance={"put_enabled": False})
    r = explain(Router(view))
    assert (r.qmgr, r.channel, r.decided_by) == ("QM2", "TO.QM2", "1")
    assert eliminated_at(r, "1") == ("QM1/local",)


def test_step1_single_instance_not_sharing_a_cluster_is_not_a_destination():
    """Step 1 applies all three of its eliminations, also when only one candidate is in front of it.
    QM1 is in CL1 only; the only instance of Q1 is QM2's, advertised in CL2 (channel TO.QM2 in CL2):
    "Remote instances of queues that do not share a cluster with the local queue manager are then
    eliminated" -> no destination remains, so the message cannot be routed (to QM2 or anywhere)."""
    view = make_view([chan("QM2", clusters=("CL2",))], [inst("QM2", clusters=("CL2",))])
    r = Router(view).route(req(), explain=True)
    assert isinstance(r, RouteError), f"routed to {r.qmgr} over {r.channel} (decided_by {r.decided_by})"


def test_step1_single_channel_not_in_the_queues_cluster_is_not_a_destination():
    """QM1 in CL1 and CL2; Q1 on QM2 is in CL1, but the only channel to QM2 is TO.QM2 in CL2: "remote
    CLUSRCVR channels that are not in the same cluster as the queue are eliminated" -> nothing remains."""
    view = make_view([chan("QM2", clusters=("CL2",))], [inst("QM2", clusters=("CL1",))],
                     local_clusters=("CL1", "CL2"))
    r = Router(view).route(req(), explain=True)
    assert isinstance(r, RouteError), f"routed to {r.qmgr} over {r.channel} (decided_by {r.decided_by})"


def test_unreachable_enabled_instance_is_not_reported_put_inhibited():
    """Q1's only instance (QM2, PUT(ENABLED)) has no known channel: the put cannot be routed, but not because
    the queue is PUT(DISABLED) - MQRC_CLUSTER_PUT_INHIBITED (2268) is the answer when the instances are
    not PUT enabled (step 1; notes B13), which is not the case here."""
    r = Router(make_view([], [inst("QM2")])).route(req(), explain=True)
    assert isinstance(r, RouteError)
    assert r.reason != 2268, r


def test_unknown_queue_is_2085():
    """Contract: a message that cannot be routed because the object is unknown: MQRC_UNKNOWN_OBJECT_NAME."""
    r = Router(spread_view()).route(req("NO.SUCH.Q"))
    assert isinstance(r, RouteError) and (r.error, r.reason) == ("MQRC_UNKNOWN_OBJECT_NAME", 2085)


# =====================================================================================================
# Step 2: a queue manager name is specified
# =====================================================================================================
def test_step2_named_qmgr_channel_not_in_local_cluster_is_eliminated():
    """Step 2: "Remote CLUSRCVR channels that are not in the same cluster as the local queue manager are
    then eliminated". Reading 6: with a named target queue manager the candidates are the channels to it.

    The application names QM3. QM3 has TO.QM3.CL1 (CL1) and TO.QM3.CL9 (CL9); QM1 is in CL1 only, so
    TO.QM3.CL9 goes and one channel remains: decided_by "2". QM2's instance of Q1 with CLWLPRTY 9 plays no
    part (the queue steps do not apply, reading 6).
    """
    view = make_view([chan("QM2"), chan("QM3", "TO.QM3.CL1"), chan("QM3", "TO.QM3.CL9", clusters=("CL9",))],
                     [inst("QM2", clwlprty=9), inst("QM3")])
    r = explain(Router(view), req(target_qmgr="QM3"))
    assert (r.qmgr, r.channel, r.decided_by) == ("QM3", "TO.QM3.CL1", "2")
    assert eliminated_at(r, "2") == ("QM3/TO.QM3.CL9",)
    assert "1" not in steps_in_trace(r) and "3" not in steps_in_trace(r)


def test_step2_single_channel_not_in_local_cluster_is_not_a_destination():
    """Step 2 with one channel only: the application names QM3, whose only channel TO.QM3.CL9 is in CL9,
    a cluster QM1 is not in: "Remote CLUSRCVR channels that are not in the same cluster as the local queue
    manager are then eliminated" -> nothing remains; the message is not routed over TO.QM3.CL9."""
    view = make_view([chan("QM3", "TO.QM3.CL9", clusters=("CL9",))], [inst("QM3", clusters=("CL9",))])
    r = Router(view).route(req(target_qmgr="QM3"), explain=True)
    assert isinstance(r, RouteError), f"routed to {r.qmgr} over {r.channel} (decided_by {r.decided_by})"


@pytest.mark.parametrize("how", ["named-qmgr", "queue-name"])
def test_step2_put_disabled_qmgr_alias_is_eliminated(how):
    """Step 2: "queue manager aliases that are not PUT enabled are eliminated".

    The clustered queue manager alias QMALIAS is advertised by QM2 (PUT(DISABLED)) and QM3 (enabled).
    Whether the application names QMALIAS as the target queue manager or opens it as the queue (contract:
    --queue may be a queue manager alias), QM2's alias goes and QM3's is the one left: decided_by "2".
    """
    view = make_view([chan("QM2"), chan("QM3")],
                     [qmgr_alias("QM2", put_enabled=False), qmgr_alias("QM3")])
    request = req("APP.Q", target_qmgr="QMALIAS") if how == "named-qmgr" else req("QMALIAS")
    r = explain(Router(view), request)
    assert (r.qmgr, r.decided_by) == ("QM3", "2")
    assert eliminated_at(r, "2") == ("QM2/TO.QM2",)


def test_step2_all_qmgr_aliases_put_disabled_fails_2268():
    """Step 2 eliminates both PUT(DISABLED) aliases (QM2, QM3): nothing can take the put -> 2268."""
    view = make_view([chan("QM2"), chan("QM3")],
                     [qmgr_alias("QM2", put_enabled=False), qmgr_alias("QM3", put_enabled=False)])
    r = Router(view).route(req("APP.Q", target_qmgr="QMALIAS"))
    assert isinstance(r, RouteError) and r.reason == 2268


# =====================================================================================================
# Step 3: the local instance and CLWLUSEQ
# =====================================================================================================
@pytest.mark.parametrize(
    "queue_useq,qm_useq,from_cluster",
    [
        ("LOCAL", "ANY", False),  # queue CLWLUSEQ(LOCAL): chosen whatever the queue manager says
        ("QMGR", "LOCAL", False),  # queue QMGR + queue manager LOCAL (the defaults)
        ("ANY", "ANY", True),  # received over a cluster channel: "a local queue is chosen"
        ("QMGR", "ANY", True),
        ("ANY", "LOCAL", True),
    ],
)
def test_step3_local_instance_chosen(queue_useq, qm_useq, from_cluster):
    """Step 3: the local instance is chosen when the queue's CLWLUSEQ is LOCAL, or QMGR with the queue
    manager's CLWLUSEQ(LOCAL); otherwise when the message was received over a cluster channel.

    Candidates QM1/local, QM2/TO.QM2, QM3/TO.QM3; step 3 keeps QM1/local: decided_by "3", no channel, no
    transmission queue, path local.
    """
    view = spread_view(("QM2", "QM3"), local_instance={"clwluseq": queue_useq}, clwluseq=qm_useq)
    r = explain(Router(view), req(from_cluster_channel=from_cluster))
    assert (r.qmgr, r.channel, r.xmitq, r.path, r.decided_by) == ("QM1", None, None, "local", "3")
    assert eliminated_at(r, "3") == ("QM2/TO.QM2", "QM3/TO.QM3")


@pytest.mark.parametrize("queue_useq,qm_useq", [("ANY", "LOCAL"), ("QMGR", "ANY"), ("ANY", "ANY")])
def test_step3_local_instance_not_preferred_with_useq_any(queue_useq, qm_useq):
    """Step 3 does not apply (CLWLUSEQ resolves to ANY, message put locally): the local instance is one
    destination among others (reading 2) and step 12 decides.

    All factors 0 and DestSeqNumbers 0 at first: tie -> queue manager name ascending, QM1 (local) < QM2 <
    QM3. Message 1: QM1 (factor 20, seq 1); 2: QM2 (0 < 20); 3: QM3 (0 < 20). Each decided_by "12".
    """
    view = spread_view(("QM2", "QM3"), local_instance={"clwluseq": queue_useq}, clwluseq=qm_useq)
    router = Router(view)
    rs = [explain(router) for _ in range(3)]
    assert [(r.qmgr, r.channel, r.decided_by) for r in rs] == [
        ("QM1", None, "12"), ("QM2", "TO.QM2", "12"), ("QM3", "TO.QM3", "12")]
    assert "3" not in steps_in_trace(rs[0])
    assert "CLWLUSEQ" in not_applied(rs[0], "3")  # the explanation says why the local instance was not forced


# =====================================================================================================
# Step 4: cluster PCF messages
# =====================================================================================================
def test_step4_pcf_qmgr_already_sent_is_eliminated_on_next_pcf():
    """Step 4: "If the message is a cluster PCF message, any queue manager to which a publication or
    subscription has already been sent is eliminated."

    Q1 on QM2 and QM3, both TO.* CLUSSDRA. PCF message 1: nothing sent yet, step 4 eliminates nothing;
    step 12 tie (0/0, seq 0/0) -> QM2 by name. PCF message 2: QM2 was sent one, step 4 eliminates
    QM2/TO.QM2, QM3 is left: decided_by "4".
    """
    router = Router(spread_view(("QM2", "QM3")))
    first = explain(router, req(pcf=True))
    assert (first.qmgr, first.decided_by) == ("QM2", "12")
    assert eliminated_at(first, "4") == ()
    second = explain(router, req(pcf=True))
    assert (second.qmgr, second.decided_by) == ("QM3", "4")
    assert eliminated_at(second, "4") == ("QM2/TO.QM2",)


def test_step4_does_not_apply_to_ordinary_messages():
    """An ordinary message after a PCF one: step 4 is not in the trace (it applies to PCF messages only)."""
    router = Router(spread_view(("QM2", "QM3")))
    explain(router, req(pcf=True))
    r = explain(router)
    assert "4" not in steps_in_trace(r)


# =====================================================================================================
# Step 4a: channel (and queue manager alias) rank
# =====================================================================================================
def test_step4a_lower_ranked_channels_are_eliminated():
    """Step 4a: channels with CLWLRANK below the maximum of the remaining ones are eliminated.

    Channel ranks QM2 3, QM3 7, QM4 3: max 7; QM2 and QM4 go, QM3 remains: decided_by "4a".
    """
    view = spread_view(chan_attrs={"QM2": {"clwlrank": 3}, "QM3": {"clwlrank": 7}, "QM4": {"clwlrank": 3}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "4a")
    assert eliminated_at(r, "4a") == ("QM2/TO.QM2", "QM4/TO.QM4")


def test_step4a_never_removes_the_local_instance():
    """Reading 2: the local instance has no channel; channel steps (4a) never remove it.

    QM1's local instance CLWLUSEQ(ANY); channel ranks QM2 9, QM3 0. Step 4a removes QM3/TO.QM3 only,
    QM1/local and QM2/TO.QM2 remain; step 12: tie 0/0, QM1 < QM2 -> QM1/local first, then QM2.
    """
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"clwlrank": 9}},
                       local_instance={"clwluseq": "ANY"})
    router = Router(view)
    r = explain(router)
    assert eliminated_at(r, "4a") == ("QM3/TO.QM3",)
    assert entries(r, "4a")[0].remaining == ("QM1/local", "QM2/TO.QM2")
    assert (r.qmgr, r.channel, r.decided_by) == ("QM1", None, "12")
    assert qmgrs(route_n(router, req(), 3)) == ["QM2", "QM1", "QM2"]


def test_step4a_lower_ranked_qmgr_alias_is_eliminated():
    """Step 4a covers queue manager aliases too: QMALIAS ranked 1 on QM2 and 4 on QM3 (channel ranks
    equal): QM2's goes, decided_by "4a"."""
    view = make_view([chan("QM2"), chan("QM3")], [qmgr_alias("QM2", clwlrank=1), qmgr_alias("QM3", clwlrank=4)])
    r = explain(Router(view), req("APP.Q", target_qmgr="QMALIAS"))
    assert (r.qmgr, r.decided_by) == ("QM3", "4a")
    assert eliminated_at(r, "4a") == ("QM2/TO.QM2",)


# =====================================================================================================
# Step 4b: queue rank
# =====================================================================================================
def test_step4b_lower_ranked_queues_are_eliminated():
    """Step 4b: queue instances with CLWLRANK below the maximum are eliminated. Queue ranks QM2 1, QM3 4,
    QM4 2 -> QM3 only: decided_by "4b"."""
    view = spread_view(inst_attrs={"QM2": {"clwlrank": 1}, "QM3": {"clwlrank": 4}, "QM4": {"clwlrank": 2}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "4b")
    assert eliminated_at(r, "4b") == ("QM2/TO.QM2", "QM4/TO.QM4")


def test_step4b_removes_a_lower_ranked_local_queue():
    """The local instance is a queue: step 4b (not a channel step) compares its CLWLRANK too.

    QM1's instance CLWLUSEQ(ANY), rank 0 (step 3 does not choose it); QM2's instance rank 4. Step 4b removes
    QM1/local: decided_by "4b", QM2.
    """
    view = spread_view(("QM2",), inst_attrs={"QM2": {"clwlrank": 4}}, local_instance={"clwluseq": "ANY"})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM2", "4b")
    assert eliminated_at(r, "4b") == ("QM1/local",)


# =====================================================================================================
# Step 5: suspended queue managers
# =====================================================================================================
def test_step5_resumed_preferred_over_suspended():
    """Step 5: "If only remote instances of a queue remain, resumed queue managers are chosen in preference
    to suspended ones." QM2 and QM4 suspended, QM3 resumed: decided_by "5", QM3."""
    view = spread_view(chan_attrs={"QM2": {"suspended": True}, "QM4": {"suspended": True}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "5")
    assert eliminated_at(r, "5") == ("QM2/TO.QM2", "QM4/TO.QM4")


def test_step5_suspended_used_when_they_are_the_only_option():
    """002: "Eliminate queue managers suspended from the cluster - Unless they're the only option
    remaining!" All of QM2, QM3 suspended: step 5 eliminates nothing, step 12 rotates: QM2 (tie, by name),
    QM3 (0 < 20), QM2 (20/20, seq 1 < 2)."""
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"suspended": True}, "QM3": {"suspended": True}})
    router = Router(view)
    r = explain(router)
    assert eliminated_at(r, "5") == ()
    assert [r.qmgr] + qmgrs(route_n(router, req(), 2)) == ["QM2", "QM3", "QM2"]
    assert r.decided_by == "12"


def test_step5_not_applied_while_the_local_instance_remains():
    """Reading 3: step 5 applies only while no local instance remains.

    Local instance CLWLUSEQ(ANY), QM2 suspended, QM3 resumed: step 5 does not apply, so all three rotate in
    step 12: QM1 (name tie), QM2, QM3 (each 0 < 20 when its turn comes).
    """
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"suspended": True}}, local_instance={"clwluseq": "ANY"})
    router = Router(view)
    r = explain(router)
    assert "5" not in steps_in_trace(r)
    assert "local instance remains" in not_applied(r, "5")
    assert [r.qmgr] + qmgrs(route_n(router, req(), 2)) == ["QM1", "QM2", "QM3"]


# =====================================================================================================
# Steps 6-9: channel state tiers (reading 1)
# =====================================================================================================
def test_step6_inactive_or_running_tier_decides():
    """Step 6 includes INACTIVE/RUNNING channels; later tiers are only consulted if it left nothing.
    QM2 RUNNING, QM3 STOPPED, QM4 RETRYING -> QM2, decided_by "6"."""
    view = spread_view(chan_attrs={"QM2": {"state": "RUNNING"}, "QM3": {"state": "STOPPED"},
                                   "QM4": {"state": "RETRYING"}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM2", "6")
    assert eliminated_at(r, "6") == ("QM3/TO.QM3", "QM4/TO.QM4")
    assert not {"7", "8", "9"} & set(steps_in_trace(r))


def test_step6_inactive_and_running_are_one_tier():
    """INACTIVE and RUNNING are the same tier: QM2 INACTIVE, QM3 RUNNING both kept, QM4 STARTING goes;
    step 12 then picks QM2 (tie, name)."""
    view = spread_view(chan_attrs={"QM2": {"state": "INACTIVE"}, "QM3": {"state": "RUNNING"},
                                   "QM4": {"state": "STARTING"}})
    r = explain(Router(view))
    assert entries(r, "6")[0].remaining == ("QM2/TO.QM2", "QM3/TO.QM3")
    assert (r.qmgr, r.decided_by) == ("QM2", "12")


@pytest.mark.parametrize("state", ["BINDING", "INITIALIZING", "STARTING", "STOPPING"])
def test_step7_second_tier_when_no_inactive_or_running(state):
    """Step 7: no INACTIVE/RUNNING channel, so BINDING/INITIALIZING/STARTING/STOPPING ones are included.
    QM2 <state>, QM3 RETRYING, QM4 STOPPED -> QM2, decided_by "7"; step 6 kept nothing (not in the trace)."""
    view = spread_view(chan_attrs={"QM2": {"state": state}, "QM3": {"state": "RETRYING"},
                                   "QM4": {"state": "STOPPED"}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM2", "7")
    assert "6" not in steps_in_trace(r)
    assert eliminated_at(r, "7") == ("QM3/TO.QM3", "QM4/TO.QM4")


def test_step8_retrying_used_only_when_no_better_tier():
    """Step 8: RETRYING channels only when tiers 6 and 7 left nothing. QM2 RETRYING, QM3 STOPPED,
    QM4 PAUSED -> QM2, decided_by "8". With QM3 STOPPING instead, tier 7 wins: QM3, decided_by "7"."""
    view = spread_view(chan_attrs={"QM2": {"state": "RETRYING"}, "QM3": {"state": "STOPPED"},
                                   "QM4": {"state": "PAUSED"}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM2", "8")
    view = spread_view(chan_attrs={"QM2": {"state": "RETRYING"}, "QM3": {"state": "STOPPING"},
                                   "QM4": {"state": "PAUSED"}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "7")


def test_step9_last_tier_includes_requesting_paused_stopped_and_other_states():
    """Step 9 (reading 1: "REQUESTING/PAUSED/STOPPED (and any other state)"): every channel is in the last
    tier, so step 9 keeps all of them and step 12 decides: QM2 (tie, name), QM3, QM4."""
    view = spread_view(chan_attrs={"QM2": {"state": "STOPPED"}, "QM3": {"state": "REQUESTING"},
                                   "QM4": {"state": "SWITCHING"}})
    router = Router(view)
    r = explain(router)
    assert entries(r, "9")[0].remaining == ("QM2/TO.QM2", "QM3/TO.QM3", "QM4/TO.QM4")
    assert (r.qmgr, r.decided_by) == ("QM2", "12")
    assert qmgrs(route_n(router, req(), 2)) == ["QM3", "QM4"]


def test_switching_is_in_the_last_tier_below_retrying():
    """SWITCHING is "any other state" (reading 1): a RETRYING channel beats it. QM2 SWITCHING, QM3 RETRYING
    -> QM3, decided_by "8"."""
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"state": "SWITCHING"}, "QM3": {"state": "RETRYING"}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "8")


# =====================================================================================================
# Step 10: locally defined CLUSSDR channels for cluster PCF messages
# =====================================================================================================
@pytest.mark.parametrize("deftype", ["CLUSSDRB", "CLUSSDR"])
def test_step10_pcf_prefers_locally_defined_clussdr(deftype):
    """Step 10: "If more than one remote instance of a queue remains and the message is a cluster PCF
    message, locally defined CLUSSDR channels are chosen." TO.QM2 is manually defined (DEFTYPE CLUSSDRB or
    CLUSSDR), TO.QM3 auto-defined (CLUSSDRA): a PCF message goes to QM2, decided_by "10"; an ordinary
    message is not affected (step 10 absent, step 12 decides)."""
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"deftype": deftype}, "QM3": {"deftype": "CLUSSDRA"}})
    r = explain(Router(view), req(pcf=True))
    assert (r.qmgr, r.decided_by) == ("QM2", "10")
    assert eliminated_at(r, "10") == ("QM3/TO.QM3",)
    r = explain(Router(view))
    assert "10" not in steps_in_trace(r) and r.decided_by == "12"


# =====================================================================================================
# Step 11: NETPRTY per queue manager
# =====================================================================================================
def test_step11_highest_netprty_channel_to_a_qmgr():
    """Step 11: "channels with the highest NETPRTY value for each queue manager are chosen". QM2 has
    TO.QM2.A NETPRTY(1) and TO.QM2.B NETPRTY(2); only QM2 hosts Q1: TO.QM2.B, decided_by "11"."""
    view = make_view([chan("QM2", "TO.QM2.A", netprty=1), chan("QM2", "TO.QM2.B", netprty=2)], [inst("QM2")])
    r = explain(Router(view))
    assert (r.qmgr, r.channel, r.decided_by) == ("QM2", "TO.QM2.B", "11")
    assert eliminated_at(r, "11") == ("QM2/TO.QM2.A",)


def test_step11_netprty_is_per_qmgr_not_global():
    """NETPRTY is compared per queue manager: QM3's only channel (NETPRTY 0) stays although QM2's best has
    NETPRTY 2. Remaining QM2/TO.QM2.B and QM3/TO.QM3; step 12: tie -> QM2 first, then QM3."""
    view = make_view([chan("QM2", "TO.QM2.A", netprty=1), chan("QM2", "TO.QM2.B", netprty=2), chan("QM3")],
                     [inst("QM2"), inst("QM3")])
    router = Router(view)
    r = explain(router)
    assert eliminated_at(r, "11") == ("QM2/TO.QM2.A",)
    assert entries(r, "11")[0].remaining == ("QM2/TO.QM2.B", "QM3/TO.QM3")
    assert (r.qmgr, r.channel, r.decided_by) == ("QM2", "TO.QM2.B", "12")
    assert router.route(req()).qmgr == "QM3"


# =====================================================================================================
# Steps 11a, 11b: priority
# =====================================================================================================
def test_step11a_channel_priority():
    """Step 11a (reading 4: applies when a queue is chosen too): channels other than the highest CLWLPRTY
    are eliminated. QM2 3, QM3 7 -> QM3, decided_by "11a"."""
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"clwlprty": 3}, "QM3": {"clwlprty": 7}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "11a")
    assert eliminated_at(r, "11a") == ("QM2/TO.QM2",)


def test_step11a_qmgr_alias_priority():
    """Step 11a, choosing a queue manager: queue manager aliases other than the highest CLWLPRTY go.
    QMALIAS CLWLPRTY 2 on QM2, 6 on QM3 -> QM3, decided_by "11a"."""
    view = make_view([chan("QM2"), chan("QM3")], [qmgr_alias("QM2", clwlprty=2), qmgr_alias("QM3", clwlprty=6)])
    r = explain(Router(view), req("APP.Q", target_qmgr="QMALIAS"))
    assert (r.qmgr, r.decided_by) == ("QM3", "11a")


def test_step11b_queue_priority():
    """Step 11b: queues other than the highest CLWLPRTY are eliminated. QM2 2, QM3 8 -> QM3, "11b"."""
    view = spread_view(("QM2", "QM3"), inst_attrs={"QM2": {"clwlprty": 2}, "QM3": {"clwlprty": 8}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM3", "11b")
    assert eliminated_at(r, "11b") == ("QM2/TO.QM2",)


def test_step11b_removes_a_lower_priority_local_queue():
    """The local instance (CLWLUSEQ ANY) with queue CLWLPRTY 0 against QM2's instance with 5: step 11b
    keeps QM2 only (a queue step, it applies to the local instance)."""
    view = spread_view(("QM2",), inst_attrs={"QM2": {"clwlprty": 5}}, local_instance={"clwluseq": "ANY"})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM2", "11b")
    assert eliminated_at(r, "11b") == ("QM1/local",)


def test_channel_priority_is_applied_before_queue_priority():
    """Reading 4 / 002 precedence items 7 then 8: channel CLWLPRTY first. QM2: channel 9, queue 0; QM3:
    channel 0, queue 9 -> 11a removes QM3 and decides QM2."""
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"clwlprty": 9}}, inst_attrs={"QM3": {"clwlprty": 9}})
    r = explain(Router(view))
    assert (r.qmgr, r.decided_by) == ("QM2", "11a")


# =====================================================================================================
# Step 11c: CLWLMRUC
# =====================================================================================================
def test_step11c_mruc_1_keeps_a_single_channel():
    """Step 11c keeps the CLWLMRUC channels with the highest DestSeqNumber. CLWLMRUC(1), 3 channels.
    Message 1: all DestSeqNumbers 0, tie -> queue manager name: TO.QM2 kept, decided_by "11c" (seq 1).
    Every later message: TO.QM2 has the highest DestSeqNumber -> QM2 again, decided_by "11c"."""
    router = Router(spread_view(clwlmruc=1))
    rs = [explain(router) for _ in range(5)]
    assert {(r.qmgr, r.decided_by) for r in rs} == {("QM2", "11c")}
    assert eliminated_at(rs[0], "11c") == ("QM3/TO.QM3", "QM4/TO.QM4")


def test_step11c_keeps_the_most_recently_used_channels():
    """11c by DestSeqNumber. Default CLWLMRUC first: messages 1-4 go QM2, QM3, QM4, QM5 (tie rotation), so
    DestSeqNumbers QM2 1, QM3 2, QM4 3, QM5 4, factors all 20. Then CLWLMRUC(2) (a queue manager attribute,
    no reset): 11c keeps the two highest DestSeqNumbers, QM4 and QM5. Step 12: 20/20, seq 3 < 4 -> QM4
    (factor 40, seq 5); next QM5 (20 < 40); then QM4 (40/40, seq 5 < 6). QM2 and QM3 never again."""
    qms = ("QM2", "QM3", "QM4", "QM5")
    router = Router(spread_view(qms))
    assert qmgrs(route_n(router, req(), 4)) == list(qms)
    assert router.set_view(spread_view(qms, clwlmruc=2)) is False
    r = explain(router)
    assert eliminated_at(r, "11c") == ("QM2/TO.QM2", "QM3/TO.QM3")
    assert (r.qmgr, r.decided_by) == ("QM4", "12")
    assert qmgrs(route_n(router, req(), 5)) == ["QM5", "QM4", "QM5", "QM4", "QM5"]


def test_step11c_never_removes_the_local_instance():
    """Reading 2: the local instance is not a channel; CLWLMRUC(1) counts channels only. Local instance
    (ANY) + QM2 + QM3: 11c keeps QM1/local and TO.QM2 (seq tie 0 -> name); step 12 alternates QM1, QM2."""
    router = Router(spread_view(("QM2", "QM3"), local_instance={"clwluseq": "ANY"}, clwlmruc=1))
    r = explain(router)
    assert entries(r, "11c")[0].remaining == ("QM1/local", "QM2/TO.QM2")
    assert [r.qmgr] + qmgrs(route_n(router, req(), 3)) == ["QM1", "QM2", "QM1", "QM2"]


# =====================================================================================================
# Step 12: least recently used, weighted
# =====================================================================================================
def test_step12_tie_break_by_qmgr_then_channel_name():
    """Contract: equal DestSeqFactor and DestSeqNumber -> queue manager name, then channel name.

    QM2 reached by two channels of equal NETPRTY, TO.QM2.B and TO.QM2.A; QM3 by A.TO.QM3 (a name sorting
    before both, to show the queue manager name counts first). All start at 0/0:
    1: QM2/TO.QM2.A (QM2 < QM3; TO.QM2.A < TO.QM2.B); 2: QM2/TO.QM2.B (0/0 vs QM3's 0/0, QM2 < QM3);
    3: QM3/A.TO.QM3 (0 < 20); 4: TO.QM2.A again (all 20, lowest seq 1).
    """
    view = make_view([chan("QM2", "TO.QM2.B"), chan("QM2", "TO.QM2.A"), chan("QM3", "A.TO.QM3")],
                     [inst("QM2"), inst("QM3")])
    router = Router(view)
    got = [(r.qmgr, r.channel, r.decided_by) for r in (explain(router) for _ in range(4))]
    assert got == [("QM2", "TO.QM2.A", "12"), ("QM2", "TO.QM2.B", "12"), ("QM3", "A.TO.QM3", "12"),
                   ("QM2", "TO.QM2.A", "12")]


def test_step12_lowest_destseqnumber_breaks_equal_factors():
    """Equal DestSeqFactor: the lower DestSeqNumber (less recently used) wins, not the name.

    QM2 CLWLWGHT 10 (+100), QM3 CLWLWGHT 50 (+20). 1: tie -> QM2 (100, seq 1). 2-6: QM3 five times
    (20, 40, 60, 80, 100; seq 6). 7: 100 vs 100, seq 1 < 6 -> QM2.
    """
    view = spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"clwlwght": 10}})
    router = Router(view)
    assert qmgrs(route_n(router, req(), 7)) == ["QM2"] + ["QM3"] * 5 + ["QM2"]


def test_step12_adds_exactly_1000_over_clwlwght():
    """Contract: step 12 adds exactly 1000/CLWLWGHT (a real number). With CLWLWGHT 30, three choices
    give exactly 3 x 1000/30 = 100 (not 100.00000000000001)."""
    router = Router(spread_view(("QM2",), chan_attrs={"QM2": {"clwlwght": 30}}))
    route_n(router, req(), 3)
    assert factor(router, "TO.QM2") == Fraction(100)
    assert seqno(router, "TO.QM2") == 3


def test_step12_exact_arithmetic_where_floats_would_differ():
    """Why exact: TO.QM_A CLWLWGHT(1) adds 1000; TO.QM_B CLWLWGHT(6) adds 1000/6 = 166.66...

    1: tie -> QM_A (1000, seq 1). 2-7: QM_B six times; exactly 6 x 1000/6 = 1000 (seq 7) - in binary
    floating point the six additions give 999.9999999999999. 8: 1000 = 1000, seq 1 < 7 -> QM_A (a float
    replay would wrongly pick QM_B). 9-14: QM_B (2000 at 14, seq 14); 15: tie, seq 8 < 14 -> QM_A.
    """
    view = make_view([chan("QM_A", clwlwght=1), chan("QM_B", clwlwght=6)], [inst("QM_A"), inst("QM_B")])
    router = Router(view)
    got = qmgrs(route_n(router, req(), 15))
    assert got == ["QM_A"] + ["QM_B"] * 6 + ["QM_A"] + ["QM_B"] * 6 + ["QM_A"]
    assert factor(router, "TO.QM_B") == Fraction(2000)


def test_step12_trace_shows_the_factors():
    """The deciding entry of step 12 keeps exactly the chosen candidate."""
    router = Router(spread_view(("QM2", "QM3")))
    r = explain(router)
    assert deciding_entry(r).remaining == ("QM2/TO.QM2",)
    assert eliminated_at(r, "12") == ("QM3/TO.QM3",)


def test_step12_local_instance_competes_with_local_clusrcvr_weight():
    """Reading 2: in step 12 the local instance competes with the CLWLWGHT of the local CLUSRCVR.
    Local CLUSRCVR CLWLWGHT 80 (+12.5), TO.QM2 CLWLWGHT 20 (+50), CLWLUSEQ(ANY).
    1: tie -> QM1 (12.5, s1); 2: QM2 (0; 50, s2); 3-5: QM1 (25, 37.5, 50; s5); 6: 50/50, seq 2 < 5 -> QM2.
    So 10 messages: QM1 at 1,3,4,5,7,8,9,10 and QM2 at 2,6 -> 8:2 = 80:20."""
    view = spread_view(("QM2",), chan_attrs={"QM2": {"clwlwght": 20}}, local_instance={"clwluseq": "ANY"},
                       local_weight=80)
    router = Router(view)
    got = qmgrs(route_n(router, req(), 10))
    assert got == ["QM1", "QM2", "QM1", "QM1", "QM1", "QM2", "QM1", "QM1", "QM1", "QM1"]
    assert factor(router, "") == Fraction(8 * 1000, 80)


# =====================================================================================================
# The fast path: taken wherever the steps' metadata allows it, whatever the steps are called
# =====================================================================================================
# The fast path gives the same routes as the explaining path (test_properties checks it), so switching it off
# by mistake changes no route: these tests look at whether it is taken. ``Router.lru_prepared`` is the fast
# path's own test (route() and the replay's batch path use it): not None when the message is decided by the
# router's least-recently-used heap.
def _renamed(st):
    """The same step under another name and with another function object."""
    def renamed_step(cands, ctx, _apply=st.apply):
        return _apply(cands, ctx)

    return replace(st, name=f"renamed_{st.name}", apply=renamed_step)


@pytest.mark.parametrize("profile", ["default", "mq9"])
def test_fast_path_taken_for_a_plain_weighted_round_robin(profile):
    """Q1 on QM2, QM3, QM4, all CLWLWGHT 50, nothing else differs: steps 1-11b keep all three (nothing reads
    the routing state before 11c), 11c keeps all three (default CLWLMRUC 999999999 >= 3 channels), and step 12
    decides: the fast path. Step 12, factors +20 per choice: 1-3 tie at 0 -> QM2, QM3, QM4 (queue manager
    name); 4-6 tie at 20 -> the lowest DestSeqNumber, QM2 (1), QM3 (2), QM4 (3)."""
    router = Router(spread_view(), profile)
    assert router.lru_prepared(req()) is not None
    assert [(r.qmgr, r.decided_by) for r in router.route_many(req(), 6)] == \
        [("QM2", "12"), ("QM3", "12"), ("QM4", "12")] * 2


def test_renamed_steps_keep_the_fast_path():
    """The router reads what a step is from its metadata, not its name: the default profile with every step
    renamed (and wrapped in a new function) takes the fast path exactly where the default does, and routes the
    same (the round robin of the test above)."""
    view = spread_view()
    renamed = tuple(_renamed(st) for st in PROFILES["default"])
    assert all(a.name != b.name for a, b in zip(renamed, PROFILES["default"]))
    router = Router(view, renamed)
    assert router.lru_prepared(req()) is not None
    assert qmgrs(router.route_many(req(), 6)) == ["QM2", "QM3", "QM4"] * 2
    explained = Router(view, renamed)
    assert [dest(explained.route(req(), explain=True)) for _ in range(6)] == \
        [dest(r) for r in Router(view).route_many(req(), 6)]


@pytest.mark.parametrize("profile,view,message", [
    # Step 4 reads which queue managers were already sent a cluster PCF message: nothing from it on is cached.
    ("default", spread_view(), req(pcf=True)),
    # 11c with CLWLMRUC(2) < 3 channels eliminates by DestSeqNumber, which changes with every message.
    ("default", spread_view(clwlmruc=2), req()),
    # The legacy step 12 orders by DestSeqNumber alone: not what the heap (DestSeqFactor first) does.
    ("legacy", spread_view(), req()),
], ids=["pcf", "mruc-below-channels", "legacy"])
def test_fast_path_not_taken_where_the_state_decides_more(profile, view, message):
    assert Router(view, profile).lru_prepared(message) is None


def test_fast_path_steps_over_11c_only_while_it_keeps_every_channel():
    """Step 11c eliminates channels only "until the number of remaining channels is no greater than" CLWLMRUC:
    with CLWLMRUC(3) and 3 channels it keeps them all, whatever their DestSeqNumbers, so the fast path may step
    over it; with CLWLMRUC(2) it may not (the test above)."""
    assert Router(spread_view(clwlmruc=3)).lru_prepared(req()) is not None


def test_every_step_carries_its_explanation_and_stay_reason():
    """What --explain prints and what the replay says when a message stays are the steps' own metadata; the
    eligibility steps are exactly those of steps 1 and 2 (docs/algorithm.md: they say which destinations are
    possible at all), and only step 12 is done by the heap."""
    for name, steps in PROFILES.items():
        for st in steps:
            assert st.explanation and f"(step {st.id})" in st.stay_reason, (name, st.name)
            assert st.eligibility == (st.id in ("1", "2")), (name, st.name)
            assert not st.heap_choice or st.id == "12", (name, st.name)
