"""Routing state (MQWDR.DestSeqFactor / DestSeqNumber), its resets, and bound destinations.

000 step 12: "The destination sequence factor of the choice is increased by the queue manager, by
approximately 1000/(Channel weight) (CLWLWGHT). The destination sequence factors of all destinations are reset
to zero if the cluster workload attributes of available destinations are altered (CLUSRCVR), or if new cluster
destinations become available. Modifications to workload attributes of manually-defined CLUSSDR channels do not
reset the Destination Sequence Factor."
Contract: DestSeqNumber = the sending queue manager's choice counter (1, 2, 3, ...) when the channel was last
chosen; exactly 1000/CLWLWGHT is added; the state advances on every choice, whichever step made it (reading 5).
Only the factors are reset; the DestSeqNumbers are kept (the reference resets "the destination sequence
factors" only).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from clwl_builders import (  # noqa: E402
    chan,
    factor,
    inst,
    make_view,
    qmgrs,
    req,
    route_n,
    seqno,
    spread_view,
)

from clwl.engine.router import Router  # noqa: E402
from clwl.engine.state import RoutingState  # noqa: E402


def two_qm_view(qm3_channel=None, **kw):
    """QM2 CLWLWGHT 10 (+100), QM3 CLWLWGHT 50 (+20)."""
    c3 = qm3_channel or chan("QM3")
    return make_view([chan("QM2", clwlwght=10), c3], [inst("QM2"), inst("QM3")], **kw)


def routed_three(view):
    """Messages 1-3 over two_qm_view: 1: tie 0/0 -> QM2 (100, seq 1); 2: QM3 (0 < 100; 20, seq 2);
    3: QM3 (20 < 100; 40, seq 3). Without a reset, message 4 would be QM3 (40 < 100)."""
    router = Router(view)
    assert qmgrs(route_n(router, req(), 3)) == ["QM2", "QM3", "QM3"]
    assert (factor(router, "TO.QM2"), factor(router, "TO.QM3")) == (100, 40)
    assert (seqno(router, "TO.QM2"), seqno(router, "TO.QM3")) == (1, 3)
    return router


def test_destseq_numbers_follow_the_choice_counter():
    """DestSeqNumber = the counter value when last chosen; factor = choices x 1000/CLWLWGHT."""
    router = Router(spread_view())
    route_n(router, req(), 5)  # QM2, QM3, QM4, QM2, QM3
    assert router.state.counter == 5
    assert [seqno(router, f"TO.{q}") for q in ("QM2", "QM3", "QM4")] == [4, 5, 3]
    assert [factor(router, f"TO.{q}") for q in ("QM2", "QM3", "QM4")] == [40, 40, 20]


def test_clusrcvr_workload_attribute_change_resets_factors_keeps_numbers():
    """After messages 1-3 (see routed_three) QM3's CLUSRCVR NETPRTY changes 0 -> 5 (a workload attribute;
    QM3 has one channel, so routing itself is unaffected). Factors reset to 0, DestSeqNumbers kept
    (QM2 1, QM3 3). Message 4: 0 = 0, seq 1 < 3 -> QM2 (without the reset it would be QM3)."""
    router = routed_three(two_qm_view())
    assert router.set_view(two_qm_view(chan("QM3", netprty=5))) is True
    assert (factor(router, "TO.QM2"), factor(router, "TO.QM3")) == (0, 0)
    assert (seqno(router, "TO.QM2"), seqno(router, "TO.QM3")) == (1, 3)
    assert router.route(req()).qmgr == "QM2"


def test_clwlwght_change_resets_factors():
    """CLWLWGHT is a workload attribute: QM3 50 -> 40 resets. Message 4: 0 = 0, seq 1 < 3 -> QM2."""
    router = routed_three(two_qm_view())
    assert router.set_view(two_qm_view(chan("QM3", clwlwght=40))) is True
    assert router.route(req()).qmgr == "QM2"


def test_new_destination_resets_factors():
    """A new destination (QM4's channel and instance appear). Factors reset to 0; DestSeqNumbers QM2 1,
    QM3 3, QM4 0. Message 4: all 0, lowest DestSeqNumber is QM4's 0 -> QM4; message 5: QM2 (0, seq 1 < 3);
    message 6: QM3 (0)."""
    router = routed_three(two_qm_view())
    bigger = make_view([chan("QM2", clwlwght=10), chan("QM3"), chan("QM4")], [inst("QM2"), inst("QM3"), inst("QM4")])
    assert router.set_view(bigger) is True
    assert qmgrs(route_n(router, req(), 3)) == ["QM4", "QM2", "QM3"]


def test_manual_clussdr_change_does_not_reset():
    """DEFTYPE CLUSSDR: a manually defined CLUSSDR the target has not replaced with its CLUSRCVR values.
    Changing its NETPRTY (or CLWLWGHT) does not reset: message 4 is QM3 (40 < 100), as without change."""
    router = routed_three(two_qm_view(chan("QM3", deftype="CLUSSDR")))
    assert router.set_view(two_qm_view(chan("QM3", deftype="CLUSSDR", netprty=5))) is False
    assert (factor(router, "TO.QM2"), factor(router, "TO.QM3")) == (100, 40)
    assert router.route(req()).qmgr == "QM3"


def test_manual_clussdr_weight_change_does_not_reset():
    """DEFTYPE CLUSSDR, CLWLWGHT 50 -> 99 on the manual definition: no reset, QM2 keeps factor 100."""
    router = routed_three(two_qm_view(chan("QM3", deftype="CLUSSDR")))
    assert router.set_view(two_qm_view(chan("QM3", deftype="CLUSSDR", clwlwght=99))) is False
    assert factor(router, "TO.QM2") == 100


def test_clussdrb_change_resets():
    """DEFTYPE CLUSSDRB (manual + auto-defined): the attributes shown are the target's CLUSRCVR ones, so
    a change there is a CLUSRCVR change: reset."""
    router = routed_three(two_qm_view(chan("QM3", deftype="CLUSSDRB")))
    assert router.set_view(two_qm_view(chan("QM3", deftype="CLUSSDRB", clwlprty=1))) is True


def test_local_clusrcvr_change_resets():
    """The local instance's destination is the local CLUSRCVR (reading 2): altering its CLWLWGHT is a
    CLUSRCVR workload attribute change."""
    router = routed_three(two_qm_view())
    assert router.set_view(two_qm_view(local_weight=20)) is True


def test_unchanged_or_non_workload_changes_do_not_reset():
    """Same view again, a channel state change, a queue attribute change, CLWLMRUC: none is a CLUSRCVR
    workload attribute nor a new destination."""
    router = routed_three(two_qm_view())
    assert router.set_view(two_qm_view()) is False
    assert router.set_view(two_qm_view(chan("QM3", state="RUNNING"))) is False
    assert router.set_view(make_view([chan("QM2", clwlwght=10), chan("QM3", state="RUNNING")],
                                     [inst("QM2", clwlprty=3), inst("QM3")])) is False
    assert router.set_view(make_view([chan("QM2", clwlwght=10), chan("QM3", state="RUNNING")],
                                     [inst("QM2", clwlprty=3), inst("QM3")], clwlmruc=5)) is False
    assert (factor(router, "TO.QM2"), factor(router, "TO.QM3")) == (100, 40)


def test_removed_destination_does_not_reset():
    """Removing QM3 is neither an altered attribute nor a new destination: no reset."""
    router = routed_three(two_qm_view())
    assert router.set_view(make_view([chan("QM2", clwlwght=10)], [inst("QM2")])) is False
    assert factor(router, "TO.QM2") == 100


def test_state_advances_when_step3_decides():
    """Reading 5: the state advances on every choice, whichever step made it. Local instance CLWLUSEQ(LOCAL):
    message 1 chosen by step 3 -> the local destination's factor 1000/50 = 20, DestSeqNumber 1. Switch the
    queue to CLWLUSEQ(ANY) (a queue attribute, no reset): message 2: QM1 20 vs QM2 0 -> QM2."""
    local_only = spread_view(("QM2",), local_instance={"clwluseq": "LOCAL"})
    router = Router(local_only)
    r = router.route(req())
    assert (r.qmgr, r.decided_by) == ("QM1", "3")
    assert (factor(router, ""), seqno(router, ""), router.state.counter) == (20, 1, 1)
    assert router.set_view(spread_view(("QM2",), local_instance={"clwluseq": "ANY"})) is False
    assert router.route(req()).qmgr == "QM2"


def test_state_advances_when_named_qmgr():
    """A put naming QM2 (step 2 decides) still counts as a choice of TO.QM2: afterwards an ordinary
    put sees QM2 20 vs QM3 0 and goes to QM3 (without it, the name tie would give QM2)."""
    router = Router(spread_view(("QM2", "QM3")))
    assert router.route(req(target_qmgr="QM2")).decided_by == "2"
    assert factor(router, "TO.QM2") == 20
    assert router.route(req()).qmgr == "QM3"


def test_shared_routing_state_is_per_sending_qmgr_across_routers():
    """The state belongs to the sending queue manager: two routers over one RoutingState continue each
    other's rotation (QM2 from the first, QM3 from the second)."""
    state = RoutingState()
    a, b = Router(spread_view(("QM2", "QM3")), state=state), Router(spread_view(("QM2", "QM3")), state=state)
    assert [a.route(req()).qmgr, b.route(req()).qmgr] == ["QM2", "QM3"]


def test_exact_factor_after_weight_denominator_widens():
    """Factors are exact rationals: CLWLWGHT 30 and 7 -> 2 x 1000/30 + ... kept exactly."""
    view = make_view([chan("QM2", clwlwght=30), chan("QM3", clwlwght=7)], [inst("QM2"), inst("QM3")])
    router = Router(view)
    rs = qmgrs(route_n(router, req(), 12))
    n2, n3 = rs.count("QM2"), rs.count("QM3")
    assert factor(router, "TO.QM2") == Fraction(1000, 30) * n2
    assert factor(router, "TO.QM3") == Fraction(1000, 7) * n3


# =====================================================================================================
# Binding
# =====================================================================================================
def test_bind_on_open_survives_a_view_change_and_channel_stop():
    """002: "Using bind-on-open - all message must go to the same queue instance": after QM2's channel
    stops (new capture), the open handle still puts to QM2; a new handle avoids it (step 6)."""
    router = Router(spread_view(("QM2", "QM3")))
    assert router.route(req(), bind="open", handle="h1").qmgr == "QM2"
    router.set_view(spread_view(("QM2", "QM3"), chan_attrs={"QM2": {"state": "STOPPED"}}))
    assert qmgrs(route_n(router, req(), 3, bind="open", handle="h1")) == ["QM2"] * 3
    assert router.route(req(), bind="open", handle="h2").qmgr == "QM3"


def test_close_handle_releases_the_binding():
    """After MQCLOSE the next MQOPEN runs the algorithm again: open h1 -> QM2 (seq 1); close; open h1 again
    -> QM3 (0 < 20)."""
    router = Router(spread_view(("QM2", "QM3")))
    assert router.route(req(), bind="open", handle="h1").qmgr == "QM2"
    router.close_handle("h1")
    assert router.route(req(), bind="open", handle="h1").qmgr == "QM3"


def test_bind_on_open_is_per_queue():
    """One handle per opened queue: Q1 and Q2 opened with the same handle name bind separately.
    Q1 -> QM2 (tie), Q2 -> QM3 (QM2's channel already has factor 20)."""
    view = make_view([chan("QM2"), chan("QM3")], [inst(q, n) for q in ("QM2", "QM3") for n in ("Q1", "Q2")])
    router = Router(view)
    assert router.route(req("Q1"), bind="open", handle="h").qmgr == "QM2"
    assert router.route(req("Q2"), bind="open", handle="h").qmgr == "QM3"
    assert router.route(req("Q1"), bind="open", handle="h").qmgr == "QM2"


def test_bound_messages_do_not_advance_the_state():
    """The algorithm runs once at MQOPEN; the 9 further puts of the handle do not move the state."""
    router = Router(spread_view())
    route_n(router, req(), 10, bind="open", handle="h")
    assert (router.state.counter, factor(router, "TO.QM2")) == (1, 20)


def test_bind_group_new_group_runs_the_algorithm_once():
    """Two groups of 4 with logical order: the algorithm ran once per group -> choice counter 2."""
    router = Router(spread_view())
    for g in ("a", "b"):
        route_n(router, req(), 4, bind="group", handle="h", group_id=g)
    assert router.state.counter == 2


def test_notfixed_messages_are_reallocatable():
    """002: only bind-on-open, bind-on-group with logical order and a named target zero the token; NOTFIXED
    puts to a cluster queue stay eligible for re-allocation."""
    rs = route_n(Router(spread_view()), req(), 3)
    assert all(r.reallocatable and r.not_reallocatable_reason is None for r in rs)


def test_route_many_named_qmgr_not_reallocatable():
    """002: "Putting application has explicitly named the target queue manager" -> the message is not
    eligible for re-allocation, whichever API routed it: route_many must agree with route()."""
    view = spread_view(("QM2", "QM3"))
    single = Router(view).route(req(target_qmgr="QM3"))
    many = Router(view).route_many(req(target_qmgr="QM3"), 3)
    assert single.not_reallocatable_reason == "named-qmgr"
    assert [(r.qmgr, r.reallocatable, r.not_reallocatable_reason) for r in many] == [("QM3", False, "named-qmgr")] * 3


def test_view_replace_helper_sanity():
    """The builders mark the local queue manager's instance local (used throughout these tests)."""
    v = spread_view(("QM2",), local_instance={})
    assert [i.local for i in v.instances] == [False, True]
    assert replace(v.instances[0], local=True).local


# -- MQOO_BIND_AS_Q_DEF (an activity-traced MQOPEN without a bind option) ------------------------------------
def test_bind_as_q_def_takes_the_queue_definitions_defbind():
    """MQOO_BIND_AS_Q_DEF means the DEFBIND of the queue definition the open resolves through: a local alias's
    DEFBIND overrides its target's (IBM, "MQOPEN option for cluster queue": CLQ1 DEFBIND(OPEN) opened through
    ACLQ1 DEFBIND(NOTFIXED) is not fixed); a cluster queue's as its instances advertise it; OPEN by default."""
    from clwl.engine.candidates import queue_defbind
    from clwl.engine.model import ClusterView, LocalAlias, QmgrAttributes, QueueInstance

    inst = lambda q, qm, d: QueueInstance(q, qm, frozenset({"CL1"}), defbind=d)  # noqa: E731
    view = ClusterView(QmgrAttributes("QM1"),
                       instances=(inst("CLQ1", "QM2", "OPEN"), inst("CLQ1", "QM3", "OPEN"),
                                  inst("NF", "QM2", "NOTFIXED"), inst("NF", "QM3", "NOTFIXED"),
                                  inst("MIXED", "QM2", "NOTFIXED"), inst("MIXED", "QM3", "GROUP")),
                       aliases=(LocalAlias("ACLQ1", "CLQ1", "NOTFIXED"),))
    assert queue_defbind(view, "CLQ1") == "open"
    assert queue_defbind(view, "ACLQ1") == "notfixed"  # the alias wins over the target's OPEN
    assert queue_defbind(view, "NF") == "notfixed"
    assert queue_defbind(view, "MIXED") == "open"  # instances disagree: MQ's default
    assert queue_defbind(view, "UNKNOWN") == "open"


def test_a_put_with_bind_as_q_def_routes_as_the_defbind_says():
    """Two instances, equal weights (step 12 alternates QM2, QM3 for not-fixed puts): a handle opened with
    MQOO_BIND_AS_Q_DEF on a DEFBIND(NOTFIXED) queue alternates like MQOO_BIND_NOT_FIXED; on DEFBIND(OPEN) every
    put of the handle goes where its first went, and is not eligible for re-allocation (bind-on-open)."""
    notfixed = Router(spread_view(("QM2", "QM3"), inst_attrs={q: {"defbind": "NOTFIXED"} for q in ("QM2", "QM3")}))
    assert qmgrs(route_n(notfixed, req(), 4, bind="as_q_def", handle="h1")) == ["QM2", "QM3", "QM2", "QM3"]
    on_open = Router(spread_view(("QM2", "QM3")))  # DEFBIND(OPEN), MQ's default
    results = route_n(on_open, req(), 3, bind="as_q_def", handle="h1")
    assert qmgrs(results) == ["QM2", "QM2", "QM2"]
    assert {r.not_reallocatable_reason for r in results} == {"bind-on-open"}
