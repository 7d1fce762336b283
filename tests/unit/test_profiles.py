"""The algorithm profiles other than the default: ``legacy`` (docs/algorithm.md (legacy profile)) and ``mq9`` (the 8.0 /
9.x ordering of docs/algorithm.md, "Profiles").

legacy, 001: "3. If the result above contains the local instance of the queue, choose it." - no CLWLUSEQ, and
the steps know no CLWLRANK, CLWLPRTY, CLWLWGHT or CLWLMRUC; step 12 is "choose the least recently used
channel", i.e. the lowest DestSeqNumber (then queue manager name, channel name - contract tie-break).

mq9, notes section 4: "1. drop remote queues/topics/CLUSRCVRs not sharing a cluster; 2. drop CLUSRCVRs not in
its cluster; 3. drop channels/QM aliases with CLWLRANK < max; 4. drop queues with CLWLRANK < max; 5. if more
than one instance and any put-enabled => drop put-disabled (all disabled => only inquire works, else
MQRC_CLUSTER_PUT_INHIBITED); 6. local-instance rule", then the rest as in the default. "Consequences vs v6:
rank is evaluated before the local-instance rule (a lower-ranked local queue can lose to a higher-ranked
remote instance); put-disabled elimination is conditional."

What I concluded for the PUT(DISABLED) case: under mq9 rank comes first, so when the highest-ranked instance
is PUT(DISABLED) it is the only one left after step 4; step 5 then finds no put-enabled instance among the
remaining ones ("all disabled") and the put fails with 2268. Under the default profile PUT(DISABLED) queues
are removed first (step 1), so rank is only compared among the enabled ones and the put succeeds.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from clwl_builders import chan, counts, eliminated_at, inst, make_view, qmgrs, req, route_n, spread_view  # noqa: E402

from clwl.engine.algorithm import PROFILES  # noqa: E402
from clwl.engine.router import Route, RouteError, Router  # noqa: E402


def test_profiles_known():
    """The three profiles exist; an unknown name is refused."""
    assert {"default", "legacy", "mq9"} <= set(PROFILES)
    with pytest.raises(ValueError):
        Router(spread_view(), "no-such-profile")


# =====================================================================================================
# legacy
# =====================================================================================================
@pytest.mark.parametrize("queue_useq,qm_useq", [("ANY", "ANY"), ("ANY", "LOCAL"), ("QMGR", "ANY"), ("LOCAL", "LOCAL")])
def test_legacy_local_instance_always_chosen(queue_useq, qm_useq):
    """001 step 3: the local instance is chosen whenever it is in the result - CLWLUSEQ(ANY) changes nothing
    (the attribute did not exist). Local instance + QM2, QM3: 10 puts all local, decided_by "3"."""
    view = spread_view(("QM2", "QM3"), local_instance={"clwluseq": queue_useq}, clwluseq=qm_useq)
    rs = route_n(Router(view, "legacy"), req(), 10, explain=True)
    assert {(r.qmgr, r.channel, r.decided_by) for r in rs} == {("QM1", None, "3")}
    assert eliminated_at(rs[0], "3") == ("QM2/TO.QM2", "QM3/TO.QM3")


def test_legacy_ignores_rank():
    """No rank step in 001: channel rank 9 on QM2 / queue rank 9 on QM3 do not eliminate anything; plain
    round robin QM2, QM3, QM4, QM2 ... (default profile: always QM2 by 4a)."""
    view = spread_view(chan_attrs={"QM2": {"clwlrank": 9}}, inst_attrs={"QM3": {"clwlrank": 9}})
    assert qmgrs(route_n(Router(view, "legacy"), req(), 6)) == ["QM2", "QM3", "QM4"] * 2
    assert set(qmgrs(route_n(Router(view), req(), 6))) == {"QM2"}


def test_legacy_ignores_priority():
    """No CLWLPRTY step in 001: QM2's channel CLWLPRTY 9 and QM3's queue CLWLPRTY 9 change nothing."""
    view = spread_view(chan_attrs={"QM2": {"clwlprty": 9}}, inst_attrs={"QM3": {"clwlprty": 9}})
    assert qmgrs(route_n(Router(view, "legacy"), req(), 6)) == ["QM2", "QM3", "QM4"] * 2


def test_legacy_ignores_weight():
    """001 step 12: "choose the least recently used channel" - lowest DestSeqNumber, no weights.
    CLWLWGHT 80 vs 20: 1: both never used (0/0) -> QM_A by name; 2: QM_B (seq 0 < 1); 3: QM_A (1 < 2) ...
    strict alternation, 50/50 over 100 (the default profile gives 80/20, see B2)."""
    view = make_view([chan("QM_A", clwlwght=80), chan("QM_B", clwlwght=20)], [inst("QM_A"), inst("QM_B")])
    got = qmgrs(route_n(Router(view, "legacy"), req(), 100))
    assert got == ["QM_A", "QM_B"] * 50


def test_legacy_ignores_clwlmruc():
    """No 11c in 001: CLWLMRUC(1) still rotates over all three (default: only QM2)."""
    view = spread_view(clwlmruc=1)
    assert qmgrs(route_n(Router(view, "legacy"), req(), 6)) == ["QM2", "QM3", "QM4"] * 2


def test_legacy_keeps_put_suspend_state_and_netprty_steps():
    """001 steps 1, 5, 6-9 and 11 are there: PUT(DISABLED) QM2 eliminated (1); suspended QM3 avoided (5);
    STOPPED QM4 below INACTIVE QM5 (6); QM5's NETPRTY(1) channel beats its NETPRTY(0) one (11)."""
    view = make_view(
        [chan("QM2"), chan("QM3", suspended=True), chan("QM4", state="STOPPED"), chan("QM5", "TO.QM5.A"),
         chan("QM5", "TO.QM5.B", netprty=1)],
        [inst("QM2", put_enabled=False), inst("QM3"), inst("QM4"), inst("QM5")])
    r = Router(view, "legacy").route(req(), explain=True)
    assert (r.qmgr, r.channel, r.decided_by) == ("QM5", "TO.QM5.B", "11")
    assert eliminated_at(r, "1") == ("QM2/TO.QM2",)
    assert eliminated_at(r, "5") == ("QM3/TO.QM3",)
    assert eliminated_at(r, "6") == ("QM4/TO.QM4",)
    dead = spread_view(inst_attrs={q: {"put_enabled": False} for q in ("QM2", "QM3", "QM4")})
    e = Router(dead, "legacy").route(req())
    assert isinstance(e, RouteError) and e.reason == 2268


# =====================================================================================================
# mq9
# =====================================================================================================
def test_mq9_rank_before_local_instance_rule():
    """Notes section 4: "a lower-ranked local queue can lose to a higher-ranked remote instance".
    Local instance (CLWLUSEQ QMGR, queue manager LOCAL: the defaults) queue rank 0; QM2's instance rank 5.
    - mq9: step 4 (queue rank) runs before the local-instance rule: QM1/local is eliminated, QM2 left,
      decided_by "4b" (the default profile's id of the queue-rank step);
    - default: step 3 comes first and chooses the local instance, decided_by "3".
    """
    view = spread_view(("QM2",), inst_attrs={"QM2": {"clwlrank": 5}}, local_instance={})
    r9 = Router(view, "mq9").route(req(), explain=True)
    assert (r9.qmgr, r9.channel, r9.decided_by) == ("QM2", "TO.QM2", "4b")
    assert eliminated_at(r9, "4b") == ("QM1/local",)
    rd = Router(view).route(req(), explain=True)
    assert (rd.qmgr, rd.channel, rd.decided_by) == ("QM1", None, "3")


def test_mq9_local_rule_still_applies_among_equal_ranks():
    """With equal ranks nothing is eliminated by rank and mq9's local-instance rule chooses QM1 (step "3")."""
    view = spread_view(("QM2", "QM3"), local_instance={})
    assert {(r.qmgr, r.decided_by) for r in route_n(Router(view, "mq9"), req(), 5)} == {("QM1", "3")}


def test_mq9_put_disabled_highest_rank_instance_gives_2268():
    """Notes section 4 (mq9 steps 3-5): rank first, then "if more than one instance and any put-enabled =>
    drop put-disabled (all disabled => ... MQRC_CLUSTER_PUT_INHIBITED)".

    QM2's instance PUT(DISABLED), queue rank 5; QM3's PUT(ENABLED), rank 0. mq9: queue rank leaves QM2
    only; no put-enabled instance remains -> the put fails, 2268. (It must not be routed to the
    PUT(DISABLED) instance.)
    """
    view = spread_view(("QM2", "QM3"), inst_attrs={"QM2": {"put_enabled": False, "clwlrank": 5}})
    r = Router(view, "mq9").route(req(), explain=True)
    assert isinstance(r, RouteError), f"mq9 routed to {r.qmgr} (decided_by {r.decided_by}), a PUT(DISABLED) instance"
    assert (r.error, r.reason) == ("MQRC_CLUSTER_PUT_INHIBITED", 2268)


def test_default_put_disabled_highest_rank_instance_routes_to_enabled_one():
    """Same view, default profile: step 1 removes the PUT(DISABLED) QM2 before any rank is compared, QM3 is
    the only one left: decided_by "1"."""
    view = spread_view(("QM2", "QM3"), inst_attrs={"QM2": {"put_enabled": False, "clwlrank": 5}})
    r = Router(view).route(req(), explain=True)
    assert isinstance(r, Route)
    assert (r.qmgr, r.decided_by) == ("QM3", "1")


def test_mq9_single_put_disabled_instance_gives_2268():
    """mq9, one instance only and it is PUT(DISABLED): "all disabled => ... MQRC_CLUSTER_PUT_INHIBITED"."""
    view = spread_view(("QM2",), inst_attrs={"QM2": {"put_enabled": False}})
    r = Router(view, "mq9").route(req())
    assert isinstance(r, RouteError) and r.reason == 2268


def test_mq9_put_disabled_eliminated_while_an_enabled_one_remains():
    """mq9 step 5 with equal ranks: QM3 PUT(DISABLED) is dropped, QM2/QM4 alternate (5 each over 10); all
    three disabled -> 2268."""
    view = spread_view(inst_attrs={"QM3": {"put_enabled": False}})
    assert counts(route_n(Router(view, "mq9"), req(), 10)) == {"QM2": 5, "QM4": 5}
    dead = spread_view(inst_attrs={q: {"put_enabled": False} for q in ("QM2", "QM3", "QM4")})
    r = Router(dead, "mq9").route(req())
    assert isinstance(r, RouteError) and r.reason == 2268


def test_mq9_keeps_the_default_weighting():
    """After the reordered front, mq9 continues as the default (weights 80/20 -> 80:20 over 100, see B2)."""
    view = make_view([chan("QM_A", clwlwght=80), chan("QM_B", clwlwght=20)], [inst("QM_A"), inst("QM_B")])
    assert counts(route_n(Router(view, "mq9"), req(), 100)) == {"QM_A": 80, "QM_B": 20}
