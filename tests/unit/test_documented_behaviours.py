"""Documented MQ behaviours B1-B23 (numbered as in the notes this project was written from; docs/algorithm.md
states the ones it models), as seen from one sending queue manager.

Each test quotes its row of the table and derives the expected routes from the default profile
(docs/algorithm.md) and the binding readings of cli-contract.md. Step 12 arithmetic: DestSeqFactor
grows by exactly 1000/CLWLWGHT on every choice (CLWLWGHT 50 -> +20), DestSeqNumber is the choice counter
value when last chosen; the lowest factor wins, then the lowest DestSeqNumber, then queue manager name, then
channel name. The sending queue manager is QM1 (cluster CL1) unless a test says otherwise.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from clwl_builders import (  # noqa: E402
    SCTQ,
    chan,
    counts,
    eliminated_at,
    inst,
    make_view,
    qmgrs,
    req,
    route_n,
    spread_view,
    xmitq,
)

from clwl.engine.model import QSG_XMITQ  # noqa: E402
from clwl.engine.router import Route, RouteError, Router  # noqa: E402


def test_b1_default_round_robin_10_puts_over_3_instances():
    """B1: 3 remote instances, default attributes, 10 NOTFIXED puts -> "each QM gets 3 or 4".

    All channels CLWLWGHT 50 (+20). Message 1: all 0/0 -> QM2 (name); 2: QM3 (0 < 20); 3: QM4; 4: all 20,
    DestSeqNumbers 1, 2, 3 -> QM2; ... a strict rotation QM2, QM3, QM4: QM2 at 1, 4, 7, 10 (4 messages),
    QM3 at 2, 5, 8 (3), QM4 at 3, 6, 9 (3). Every decision is step 12.
    """
    router = Router(spread_view(chan_attrs={q: {"state": "RUNNING"} for q in ("QM3",)}))
    rs = route_n(router, req(), 10)
    assert qmgrs(rs) == ["QM2", "QM3", "QM4"] * 3 + ["QM2"]
    assert counts(rs) == {"QM2": 4, "QM3": 3, "QM4": 3}
    assert {r.decided_by for r in rs} == {"12"}


@pytest.mark.parametrize("wa,wb", [(80, 20), (40, 10)])
def test_b2_weights_80_20_give_exactly_4_to_1_over_100_puts(wa, wb):
    """B2: CLWLWGHT 80 vs 20 (or 40 vs 10), 100 puts -> 80/20.

    TO.QM_A adds 1000/80 = 12.5 (1000/40 = 25), TO.QM_B 1000/20 = 50 (1000/10 = 100): B's step is always 4
    times A's, so both weight pairs give the same sequence. With 12.5/50:
      1: 0/0, seq 0/0, QM_A < QM_B -> A (12.5, s1);   2: B (0; -> 50, s2)
      3, 4, 5: A (25, 37.5, 50; s5);                    6: 50 = 50, seq B 2 < A 5 -> B (100, s6)
      7-10: A (62.5 ... 100, s10);                      11: 100 = 100, seq 6 < 10 -> B (150, s11)
    From then on every 5 messages are B, A, A, A, A: B at 2, 6, 11, 16, ..., 96 (2 + 18 = 20 messages),
    A at the other 80. After 100 messages A = 80 x 12.5 = 1000 and B = 20 x 50 = 1000.
    """
    view = make_view([chan("QM_A", clwlwght=wa), chan("QM_B", clwlwght=wb)], [inst("QM_A"), inst("QM_B")])
    router = Router(view)
    got = qmgrs(route_n(router, req(), 100))
    b_at = [i for i, q in enumerate(got, 1) if q == "QM_B"]
    assert b_at == [2, 6] + list(range(11, 97, 5))
    assert {q: got.count(q) for q in set(got)} == {"QM_A": 80, "QM_B": 20}
    # 80 x 1000/wa == 20 x 1000/wb (1000 for 80/20, 2000 for 40/10): both channels are level again.
    assert router.state.factor("TO.QM_A") == router.state.factor("TO.QM_B") == Fraction(80 * 1000, wa)


def test_b3_weight_state_is_per_channel_across_queues():
    """B3: "counters are per channel across all queues" ("dependent on the total number of times each
    channel was chosen for a message sent to any clustered queue").

    Q_A and Q_B both on QM2 and QM3, CLWLWGHT 25 (+40) on both channels. Interleave Q_A, Q_B, Q_A, ...:
      1 (Q_A): 0/0 -> QM2 (40, s1);  2 (Q_B): QM3 (0 < 40; 40, s2);
      3 (Q_A): 40/40, seq 1 < 2 -> QM2 (80, s3);  4 (Q_B): QM3 (40 < 80; 80, s4); ...
    So every Q_A message goes to QM2 and every Q_B message to QM3 - per queue 100/0, not 50/50, while per
    channel it is 50/50. Routed alone (fresh state), Q_A alternates QM2, QM3.
    """
    chans = [chan("QM2", clwlwght=25), chan("QM3", clwlwght=25)]
    insts = [inst(q, name) for q in ("QM2", "QM3") for name in ("Q_A", "Q_B")]
    router = Router(make_view(chans, insts))
    got = [(q, router.route(req(q)).qmgr) for _ in range(10) for q in ("Q_A", "Q_B")]
    assert {qm for q, qm in got if q == "Q_A"} == {"QM2"}
    assert {qm for q, qm in got if q == "Q_B"} == {"QM3"}
    alone = Router(make_view(chans, insts))
    assert qmgrs(route_n(alone, req("Q_A"), 4)) == ["QM2", "QM3", "QM2", "QM3"]


@pytest.mark.parametrize("primary_state,expected,decided", [
    ("RUNNING", "QM_P", "11a"),  # both tier 6; 11a keeps CLWLPRTY 9
    ("STOPPED", "QM_B", "6"),  # QM_B RUNNING is the better tier; priority is looked at after state
    ("RETRYING", "QM_B", "6"),
    ("STARTING", "QM_B", "6"),  # "while primary channel is STARTING some may go to backup"
])
def test_b4_clwlprty_failover(primary_state, expected, decided):
    """B4: QM_P CLUSRCVR CLWLPRTY(9), QM_B CLWLPRTY(0); primary channel STOPPED/RETRYING -> QM_B.

    Steps 6-9 (state) come before 11a (priority): with the primary in a worse tier than QM_B's RUNNING
    channel, step 6 leaves QM_B alone; with both RUNNING, 11a keeps QM_P (9 > 0).
    """
    view = make_view([chan("QM_P", clwlprty=9, state=primary_state), chan("QM_B", state="RUNNING")],
                     [inst("QM_P"), inst("QM_B")])
    rs = route_n(Router(view), req(), 5, explain=True)
    assert {(r.qmgr, r.decided_by) for r in rs} == {(expected, decided)}


@pytest.mark.parametrize("primary_state", ["STOPPED", "RETRYING", "RUNNING"])
def test_b5_clwlrank_holds_messages_for_the_primary(primary_state):
    """B5: QM_P CLWLRANK(9), QM_B CLWLRANK(0); primary channel STOPPED -> messages stay on the xmitq for
    QM_P: rank (step 4a) is taken before channel state (steps 6-9), so QM_B is gone before state matters.
    """
    view = make_view([chan("QM_P", clwlrank=9, state=primary_state), chan("QM_B", state="RUNNING")],
                     [inst("QM_P"), inst("QM_B")])
    rs = route_n(Router(view), req(), 5, explain=True)
    assert {(r.qmgr, r.channel, r.xmitq, r.decided_by) for r in rs} == {("QM_P", "TO.QM_P", SCTQ, "4a")}
    assert eliminated_at(rs[0], "4a") == ("QM_B/TO.QM_B",)


def test_b6_rank_at_a_gateway():
    """B6: a gateway sees channels ranked 1 and 2 to two queue managers -> always the rank-2 one (4a)."""
    view = make_view([chan("QM2", clwlrank=1), chan("QM3", clwlrank=2)], [inst("QM2"), inst("QM3")], local="GW1")
    assert {(r.qmgr, r.decided_by) for r in route_n(Router(view), req(), 6)} == {("QM3", "4a")}


@pytest.mark.parametrize("final_rank,expected,decided", [(5, "QMF", "4b"), (0, "GW2", "6")])
def test_b7_queue_rank_holds_at_the_gateway(final_rank, expected, decided):
    """B7 as seen by gateway GW1: the real queue at QMF (channel STOPPED) and a cluster alias instance of
    the same name at gateway GW2 (channel RUNNING, CLUSQT QALIAS, rank 0).
    - QMF's queue ranked higher (5): step 4b (before the state steps) leaves QMF -> the message is held for
      QMF, not passed to GW2 (no ping-pong).
    - equal ranks: step 6 prefers GW2's RUNNING channel over QMF's STOPPED one -> forwarded to GW2 (the
      ping-pong the notes describe when ranks are equal).
    """
    view = make_view([chan("QMF", state="STOPPED"), chan("GW2", state="RUNNING")],
                     [inst("QMF", clwlrank=final_rank), inst("GW2", clusqt="QALIAS")], local="GW1")
    r = Router(view).route(req(), explain=True)
    assert (r.qmgr, r.decided_by) == (expected, decided)


def test_b8_netprty_primary_and_secondary_network():
    """B8: TOKYO has NETA NETPRTY(2) and NETB NETPRTY(1).
    - both available: step 11 keeps NETA (highest NETPRTY to TOKYO): all via NETA, decided_by "11";
    - NETA down (STOPPED): step 6 keeps NETB (INACTIVE) only: failover to NETB, decided_by "6".
    """
    up = make_view([chan("TOKYO", "NETA", netprty=2, state="RUNNING"), chan("TOKYO", "NETB", netprty=1)],
                   [inst("TOKYO")])
    assert {(r.channel, r.decided_by) for r in route_n(Router(up), req(), 4)} == {("NETA", "11")}
    down = make_view([chan("TOKYO", "NETA", netprty=2, state="STOPPED"), chan("TOKYO", "NETB", netprty=1)],
                     [inst("TOKYO")])
    assert {(r.channel, r.decided_by) for r in route_n(Router(down), req(), 4)} == {("NETB", "6")}


def test_b9_clwluseq_local_defaults_keep_everything_local():
    """B9: queue CLWLUSEQ(QMGR), queue manager CLWLUSEQ(LOCAL) (the defaults), local instance + remotes ->
    100% local (step 3)."""
    rs = route_n(Router(spread_view(local_instance={})), req(), 20)
    assert {(r.qmgr, r.channel, r.path, r.decided_by) for r in rs} == {("QM1", None, "local", "3")}


@pytest.mark.parametrize("queue_useq,qm_useq", [("ANY", "LOCAL"), ("QMGR", "ANY")])
def test_b10_clwluseq_any_local_is_just_another_instance(queue_useq, qm_useq):
    """B10: queue or queue manager CLWLUSEQ(ANY), 4 instances (local + 3) -> 20 messages, 5 each.

    All weights 50 (local CLUSRCVR too): strict rotation QM1, QM2, QM3, QM4 (name order at each tie of
    factors, then DestSeqNumber order) -> 20 / 4 = 5 each.
    """
    view = spread_view(local_instance={"clwluseq": queue_useq}, clwluseq=qm_useq)
    rs = route_n(Router(view), req(), 20)
    assert qmgrs(rs)[:4] == ["QM1", "QM2", "QM3", "QM4"]
    assert counts(rs) == {"QM1": 5, "QM2": 5, "QM3": 5, "QM4": 5}


def test_b11_arrival_over_cluster_channel_always_local():
    """B11: arrives on a CLUSRCVR at a queue manager with a local instance, CLWLUSEQ(ANY) -> the local
    instance is always chosen (step 3: "a local queue is chosen if ... received over a cluster channel")."""
    view = spread_view(local_instance={"clwluseq": "ANY"}, clwluseq="ANY")
    rs = route_n(Router(view), req(from_cluster_channel=True), 10)
    assert {(r.qmgr, r.decided_by) for r in rs} == {("QM1", "3")}


def test_b12_arrival_over_non_cluster_channel_is_balanced_like_an_app_put():
    """B12: a gateway receiving over a SDR/RCVR (not a cluster channel) treats the message like an app put:
    balanced across QM2/QM4 and, with ANY, the local instance: QM1, QM2, QM4, QM1, QM2, QM4."""
    view = spread_view(("QM2", "QM4"), local_instance={"clwluseq": "ANY"})
    assert qmgrs(route_n(Router(view), req(from_cluster_channel=False), 6)) == ["QM1", "QM2", "QM4"] * 2


def test_b13_put_disabled_never_chosen_and_all_disabled_is_2268():
    """B13: 3 instances, QM3 PUT(DISABLED) -> never chosen (step 1): QM2, QM4 alternate, 5 each over 10.
    All PUT(DISABLED) -> MQRC_CLUSTER_PUT_INHIBITED (2268) on every put."""
    view = spread_view(inst_attrs={"QM3": {"put_enabled": False}})
    assert counts(route_n(Router(view), req(), 10)) == {"QM2": 5, "QM4": 5}
    dead = spread_view(inst_attrs={q: {"put_enabled": False} for q in ("QM2", "QM3", "QM4")})
    rs = route_n(Router(dead), req(), 3)
    assert all(isinstance(r, RouteError) and (r.error, r.reason) == ("MQRC_CLUSTER_PUT_INHIBITED", 2268)
               for r in rs)


def test_b14_suspended_qmgr_avoided_unless_only_option():
    """B14: QM_S SUSPEND(YES), others not -> QM_S avoided (step 5) while a resumed one remains; if only
    suspended ones remain they are still used."""
    view = make_view([chan("QM_R"), chan("QM_S", suspended=True), chan("QM_T")],
                     [inst("QM_R"), inst("QM_S"), inst("QM_T")])
    assert counts(route_n(Router(view), req(), 10)) == {"QM_R": 5, "QM_T": 5}
    only = make_view([chan("QM_S", suspended=True)], [inst("QM_S")])
    assert qmgrs(route_n(Router(only), req(), 3)) == ["QM_S"] * 3


def test_b15_channel_state_tiers():
    """B15: channels RUNNING (QM2), INACTIVE (QM3), RETRYING (QM4) -> only the RUNNING/INACTIVE tier is used
    (10 messages: QM2, QM3 alternate, 5 each). When QM2 and QM3 go STOPPED (a new status capture; state is
    not a workload attribute, so no reset), RETRYING is the best tier left and QM4 is used (step 8)."""
    states = {"QM2": "RUNNING", "QM3": "INACTIVE", "QM4": "RETRYING"}
    router = Router(spread_view(chan_attrs={q: {"state": s} for q, s in states.items()}))
    assert counts(route_n(router, req(), 10)) == {"QM2": 5, "QM3": 5}
    states.update(QM2="STOPPED", QM3="STOPPED")
    assert router.set_view(spread_view(chan_attrs={q: {"state": s} for q, s in states.items()})) is False
    assert {(r.qmgr, r.decided_by) for r in route_n(router, req(), 3)} == {("QM4", "8")}


def test_b16_clwlmruc_only_n_channels_ever_used():
    """B16: 4 eligible channels, CLWLMRUC(2), many puts -> only 2 channels ever used.

    Message 1: DestSeqNumbers all 0, 11c keeps 2 by name: QM2, QM3; step 12 -> QM2 (seq 1). Message 2:
    11c keeps QM2 (seq 1) and the best of the 0s by name, QM3; step 12 -> QM3 (0 < 20). From then on QM2 and
    QM3 hold the two highest DestSeqNumbers and alternate: 40 messages -> 20 each, QM4/QM5 never.
    """
    view = spread_view(("QM2", "QM3", "QM4", "QM5"), clwlmruc=2)
    assert counts(route_n(Router(view), req(), 40)) == {"QM2": 20, "QM3": 20}


def test_b17_bind_on_open():
    """B17: MQOO_BIND_ON_OPEN, 3 instances, 1 MQOPEN + 10 puts -> all 10 to one QM; a second MQOPEN picks
    the next. The algorithm runs once per open (notes section 3: "at MQOPEN for BIND_ON_OPEN"):
    open 1 -> QM2 (tie, name; state counter 1); its 10 puts reuse QM2 without running the algorithm;
    open 2 -> QM3 (0 < 20). The messages' AccountingToken is zeros: not re-allocatable (002: bind-on-open).
    """
    router = Router(spread_view())
    first = route_n(router, req(), 10, bind="open", handle="h1")
    assert qmgrs(first) == ["QM2"] * 10
    assert router.state.counter == 1
    assert all(not r.reallocatable and r.not_reallocatable_reason == "bind-on-open" for r in first)
    assert [r.bound for r in first] == [False] + [True] * 9
    second = route_n(router, req(), 3, bind="open", handle="h2")
    assert qmgrs(second) == ["QM3"] * 3


def test_b18_bind_on_group_with_logical_order():
    """B18: BIND_ON_GROUP + MQPMO_LOGICAL_ORDER, 3 groups x 5 messages -> each group on one QM, groups rotate
    (the algorithm runs at each new group): g1 -> QM2, g2 -> QM3 (0 < 20), g3 -> QM4. The outer
    AccountingToken is zeros -> not re-allocatable (002: bind-on-group with managed groups)."""
    router = Router(spread_view())
    got = {}
    for g in ("g1", "g2", "g3"):
        rs = route_n(router, req(), 5, bind="group", handle="h", group_id=g, logical_order=True)
        assert len(set(qmgrs(rs))) == 1
        assert all(not r.reallocatable and r.not_reallocatable_reason == "bind-on-group" for r in rs)
        got[g] = rs[0].qmgr
    assert got == {"g1": "QM2", "g2": "QM3", "g3": "QM4"}


def test_b18_bind_on_group_without_logical_order_is_not_fixed():
    """002 names bind-on-group only "and actively using managed groups (MQPMO_LOGICAL_ORDER)": without
    logical order each message is routed on its own (QM2, QM3, QM4) and stays re-allocatable."""
    router = Router(spread_view())
    rs = route_n(router, req(), 3, bind="group", handle="h", group_id="g1", logical_order=False)
    assert qmgrs(rs) == ["QM2", "QM3", "QM4"]
    assert all(r.reallocatable for r in rs)


def test_b19_explicit_target_qmgr():
    """B19: MQOD ObjectQMgrName = QM3 -> all to QM3 irrespective of CLWL attributes (QM2 has a higher
    channel rank and priority and is RUNNING; QM3's channel is STOPPED); not re-allocatable. The candidates
    are the channels to QM3 (reading 6); step 2 leaves the single one: decided_by "2"."""
    view = spread_view(chan_attrs={"QM2": {"clwlrank": 9, "clwlprty": 9, "state": "RUNNING"},
                                   "QM3": {"state": "STOPPED"}})
    rs = route_n(Router(view), req(target_qmgr="QM3"), 5)
    assert {(r.qmgr, r.channel, r.decided_by) for r in rs} == {("QM3", "TO.QM3", "2")}
    assert all(not r.reallocatable and r.not_reallocatable_reason == "named-qmgr" for r in rs)


def test_b20_reallocation_redrives_notfixed_messages_only():
    """B20: NOTFIXED messages queued for QM2; the channel stops -> RETRYING. Re-driving the algorithm over the
    new view sends them to QM3/QM4 (RUNNING tier, step 6 leaves QM3/QM4, step 12 rotates). A message with
    a named target queue manager (zero AccountingToken) is not eligible. With QM2 ranked higher it is
    "still most favourable": the re-drive chooses QM2 again (4a)."""
    before = spread_view(chan_attrs={q: {"state": "RUNNING"} for q in ("QM2", "QM3", "QM4")})
    router = Router(before)
    m1 = router.route(req())
    assert (m1.qmgr, m1.reallocatable) == ("QM2", True)
    pinned = router.route(req(target_qmgr="QM2"))
    assert not pinned.reallocatable
    after = spread_view(chan_attrs={"QM2": {"state": "RETRYING"}, "QM3": {"state": "RUNNING"},
                                    "QM4": {"state": "RUNNING"}})
    router.set_view(after)
    redriven = [router.route(req(), explain=True) for _ in range(2)]
    assert {r.qmgr for r in redriven} == {"QM3", "QM4"}
    assert {r.decided_by for r in redriven} == {"12"}
    ranked = spread_view(chan_attrs={"QM2": {"state": "RETRYING", "clwlrank": 5}, "QM3": {"state": "RUNNING"},
                                     "QM4": {"state": "RUNNING"}})
    r = Router(ranked).route(req())
    assert (r.qmgr, r.decided_by) == ("QM2", "4a")


def test_b21_xmitq_selection_sctq_channel_and_clchname():
    """B21 / 003: DEFCLXQ(SCTQ): every CLUSSDR uses SYSTEM.CLUSTER.TRANSMIT.QUEUE; DEFCLXQ(CHANNEL):
    SYSTEM.CLUSTER.TRANSMIT.<CLUSSDR name>; a manual queue with matching CLCHNAME wins over the default and
    the most specific CLCHNAME wins. 003's example: CLUSTER.XMITQ1 CLCHNAME('AAA.*'), CLUSTER.XMITQ2
    CLCHNAME('AAA.BBB'): AAA.BBB -> XMITQ2 (specific), AAA.CCC -> XMITQ1 (generic), XXX.YYY -> DEFCLXQ.
    Routed round robin over QM2 (AAA.BBB), QM3 (AAA.CCC), QM4 (XXX.YYY)."""
    chans = [chan("QM2", "AAA.BBB"), chan("QM3", "AAA.CCC"), chan("QM4", "XXX.YYY")]
    insts = [inst("QM2"), inst("QM3"), inst("QM4")]
    qs = [xmitq("CLUSTER.XMITQ1", "AAA.*"), xmitq("CLUSTER.XMITQ2", "AAA.BBB")]
    sctq = route_n(Router(make_view(chans, insts)), req(), 3)
    assert [(r.channel, r.xmitq, r.path) for r in sctq] == [
        ("AAA.BBB", SCTQ, "cluster"), ("AAA.CCC", SCTQ, "cluster"), ("XXX.YYY", SCTQ, "cluster")]
    per_channel = route_n(Router(make_view(chans, insts, defclxq="CHANNEL")), req(), 3)
    assert [r.xmitq for r in per_channel] == ["SYSTEM.CLUSTER.TRANSMIT.AAA.BBB", "SYSTEM.CLUSTER.TRANSMIT.AAA.CCC",
                                              "SYSTEM.CLUSTER.TRANSMIT.XXX.YYY"]
    for defclxq, default_q in (("SCTQ", SCTQ), ("CHANNEL", "SYSTEM.CLUSTER.TRANSMIT.XXX.YYY")):
        rs = route_n(Router(make_view(chans, insts, defclxq=defclxq, local_queues=qs)), req(), 3)
        assert [r.xmitq for r in rs] == ["CLUSTER.XMITQ2", "CLUSTER.XMITQ1", default_q]


def test_b22_running_channel_keeps_its_current_xmitq():
    """B22: CLCHNAME changed while the channel is RUNNING -> no effect until the channel (re)starts: it still
    uses SYSTEM.CLUSTER.TRANSMIT.QUEUE (its CHSTATUS XMITQ). After a restart it reports the new queue."""
    qs = [xmitq("CLUSTER.XMITQ1", "TO.*")]
    running = make_view([chan("QM2", state="RUNNING", current_xmitq=SCTQ)], [inst("QM2")], local_queues=qs)
    r = Router(running).route(req())
    assert (r.xmitq, r.path) == (SCTQ, "cluster")
    restarted = make_view([chan("QM2", state="RUNNING", current_xmitq="CLUSTER.XMITQ1")], [inst("QM2")],
                          local_queues=qs)
    assert Router(restarted).route(req()).xmitq == "CLUSTER.XMITQ1"
    never_started = make_view([chan("QM2")], [inst("QM2")], local_queues=qs)
    assert Router(never_started).route(req()).xmitq == "CLUSTER.XMITQ1"


def test_b23_igq_small_vs_large_messages():
    """B23 / 004: QMG1, QMG2, QMG3 in queue-sharing group SQ26 with IGQ(ENABLED); QMG4 in the cluster only;
    CLUSQ1 on QMG2, QMG3, QMG4; NOTFIXED puts rotate QMG2, QMG3, QMG4 (step 12, names).
    - small (1000 bytes): to QMG2 / QMG3 over SYSTEM.QSG.TRANSMIT.QUEUE (path igq); to QMG4 over SCTQ;
    - large (100000 bytes, above the 63 KB CFLEVEL(3) limit): all over SCTQ (path cluster).
    """
    view = make_view([chan("QMG2"), chan("QMG3"), chan("QMG4")],
                     [inst(q, "CLUSQ1") for q in ("QMG2", "QMG3", "QMG4")],
                     local="QMG1", qsgname="SQ26", igq=True, qsg_members=("QMG1", "QMG2", "QMG3"))
    router = Router(view)
    small = route_n(router, req("CLUSQ1", size=1000), 3)
    assert [(r.qmgr, r.path, r.xmitq) for r in small] == [
        ("QMG2", "igq", QSG_XMITQ), ("QMG3", "igq", QSG_XMITQ), ("QMG4", "cluster", SCTQ)]
    large = route_n(router, req("CLUSQ1", size=100_000), 3)
    assert [(r.qmgr, r.path, r.xmitq) for r in large] == [
        ("QMG2", "cluster", SCTQ), ("QMG3", "cluster", SCTQ), ("QMG4", "cluster", SCTQ)]
    assert isinstance(small[0], Route)
