"""clwl.analyses.advise on hand-made estates (tests/handmade.py: runmqsc output of QM1's view, one cluster CL1, every channel
RUNNING, every CLUSRCVR CLWLWGHT(50) unless a test says otherwise).

The share arithmetic every expectation below rests on (docs/algorithm.md step 12, clwl/engine/shares.py): with step 12
alone deciding, each choice adds 1000 / CLWLWGHT to the chosen channel's DestSeqFactor and the lowest goes next,
so after W messages (W the sum of the weights in the rotation) each channel was chosen exactly its weight's
number of times: a queue manager's share is the sum of its channels' weights over W. The search
(clwl.analyses.advise.choose_totals) gives the largest target's queue manager (the anchor) every total s its channels
allow and the others round(s x their target / the anchor's), and keeps the best by: largest residual, sum of
residuals, fewest other queues over the changed channels, fewest queue managers changed, sum of weights nearest
today's, smaller sum.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from clwl.analyses.advise import (
    AdviseError,
    Weight,
    advise,
    check_target,
    choose_totals,
    parse_target,
    split_total,
    with_weights,
)
from clwl.engine.shares import engine_shares
from clwl.engine.view import build_view, read_captures
from tests.handmade import config_capture

TWO = {"QM2": {}, "QM3": {}}
THREE = {"QM2": {}, "QM3": {}, "QM4": {}}


def view_of(tmp_path, remotes, queues, qmgr_attrs=None, extra: str = ""):
    """QM1's view from its capture (and ``extra``, a second capture file, when given)."""
    folder = tmp_path / "captures"
    folder.mkdir()
    (folder / "qm1.mqsc").write_text(config_capture("QM1", remotes, queues, qmgr_attrs), encoding="utf-8")
    if extra:
        (folder / "qm1_more.mqsc").write_text(extra, encoding="utf-8")
    caps = read_captures([folder])
    view, problems = build_view(caps.records, "QM1")
    assert not problems and not caps.problems
    return view


def proposed(advice) -> dict[str, int]:
    return {w.channel: w.clwlwght for w in advice.proposal}


# -- the weights ------------------------------------------------------------------------------------------------
def test_two_destinations_get_80_20_at_todays_total(tmp_path):
    """TO.QM2 and TO.QM3 both 50: 50 % each now. Target QM2 80, QM3 20: the anchor QM2 takes s, QM3 round(s/4);
    exact (residual 0) for every s = 4k, and every exact s changes both queue managers (50 is no exact pair:
    s=50 gives QM3 round(12.5) = 13). Nearest today's sum 100: s + s/4 = 100, s = 80: 80 and 20, exactly
    80 % and 20 %."""
    view = view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM3": {}}})
    a = advise(view, "Q", {"QM2": 80, "QM3": 20})
    assert proposed(a) == {"TO.QM2": 80, "TO.QM3": 20}
    assert a.current == {"QM2": 50.0, "QM3": 50.0}
    assert a.achieved == {"QM2": 80.0, "QM3": 20.0} and a.exact and a.max_residual == 0
    assert [c["command"] for c in a.commands()] == ["ALTER CHANNEL(TO.QM2) CHLTYPE(CLUSRCVR) CLWLWGHT(80)",
                                                    "ALTER CHANNEL(TO.QM3) CHLTYPE(CLUSRCVR) CLWLWGHT(20)"]
    assert [c["qmgr"] for c in a.commands()] == ["QM2", "QM3"]  # each on the receiver's own queue manager
    assert not a.blocked and not a.side_effects


def test_weights_already_on_target_are_kept(tmp_path):
    """TO.QM2 80 and TO.QM3 20 give 80 % and 20 % already: every s = 4k is exact, and s = 80 changes nobody
    (the third criterion), so nothing changes and there is no command."""
    view = view_of(tmp_path, {"QM2": {"CLWLWGHT": "80"}, "QM3": {"CLWLWGHT": "20"}}, {"Q": {"QM2": {}, "QM3": {}}})
    a = advise(view, "Q", {"QM2": 80, "QM3": 20})
    assert proposed(a) == {"TO.QM2": 80, "TO.QM3": 20} and a.changes == [] and a.commands() == []
    assert a.achieved == a.current == {"QM2": 80.0, "QM3": 20.0}


def test_a_target_whole_weights_cannot_make_reports_its_residual(tmp_path):
    """Target QM2 99.5, QM3 0.5: a ratio of 199 to 1, beyond 99. The anchor QM2 takes s = 1..99; QM3
    round(s/199) = 0, kept at the minimum 1. QM3's share 100/(s+1) comes nearest 0.5 at s = 99: 99 and 1, so
    99 % and 1 %, a residual of 0.5 points each way."""
    view = view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM3": {}}})
    a = advise(view, "Q", {"QM2": 99.5, "QM3": 0.5})
    assert proposed(a) == {"TO.QM2": 99, "TO.QM3": 1}
    assert a.achieved == {"QM2": 99.0, "QM3": 1.0}
    assert a.residual == pytest.approx({"QM2": -0.5, "QM3": 0.5}) and a.max_residual == pytest.approx(0.5)


def test_a_queue_manager_over_two_channels_counts_their_sum(tmp_path):
    """QM2 is reached over TO.QM2 (CL1) and CL2.QM2 (CL2), the queue being in both clusters; QM3 over TO.QM3.
    All 50: QM2 has 100 of 150, 66.67 %. Target 50/50: QM2 (the anchor, first by name of the equal targets)
    takes s = 2..198 over its two channels, QM3 s (at most 99): exact for s <= 99. s = 50 leaves QM3 unchanged
    (one change; keeping QM2's 100 would need QM3 at 100). QM2's 50 split evenly: 25 and 25."""
    more = (config_capture("QM1", {"QM2": {}}, {"Q": {"QM2": {}}})
            .replace("CLUSTER(CL1)", "CLUSTER(CL2)").replace("CHANNEL(TO.QM", "CHANNEL(CL2.QM"))
    view = view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM3": {}}}, extra=more)
    assert engine_shares(view, "Q") == pytest.approx({"QM2": 100 * 100 / 150, "QM3": 100 * 50 / 150})
    a = advise(view, "Q", {"QM2": 50, "QM3": 50})
    assert proposed(a) == {"CL2.QM2": 25, "TO.QM2": 25, "TO.QM3": 50}
    assert a.achieved == {"QM2": 50.0, "QM3": 50.0} and a.exact
    assert [w.channel for w in a.changes] == ["CL2.QM2", "TO.QM2"]


def test_the_local_instance_competes_with_the_senders_own_receiver(tmp_path):
    """QM1 hosts an instance; CLWLUSEQ(ANY) on the queue manager makes it compete in step 12 with the weight of
    QM1's own CLUSRCVR TO.QM1 (docs/algorithm.md, reading 2). Target QM1 20, QM2 50, QM3 30: the anchor QM2
    takes s, QM1 round(2s/5), QM3 round(3s/5): exact for s = 5k. Keeping QM1 at 50 would need s = 125, QM3 at
    50 s = 83.3; s = 50 keeps QM2 (50 today): the one exact scale with a queue manager unchanged, so 20 / 50 /
    30. The command for QM1 goes to QM1 itself."""
    view = view_of(tmp_path, TWO, {"Q": {"QM1": {}, "QM2": {}, "QM3": {}}}, {"CLWLUSEQ": "ANY"})
    a = advise(view, "Q", {"QM1": 20, "QM2": 50, "QM3": 30})
    assert proposed(a) == {"TO.QM1": 20, "TO.QM2": 50, "TO.QM3": 30}
    assert a.achieved == {"QM1": 20.0, "QM2": 50.0, "QM3": 30.0}
    assert {c["qmgr"]: c["channel"] for c in a.commands()} == {"QM1": "TO.QM1", "QM3": "TO.QM3"}


def test_other_queues_over_the_changed_channels_are_side_effects(tmp_path):
    """A on QM2 and QM3, B on QM2 and QM4, C on QM3 alone, D on QM4 and QM5. Target A: QM2 80, QM3 20 gives
    TO.QM2 80 and TO.QM3 20 (as in the first test). B shares TO.QM2 with TO.QM4 (50): before 50/50, after
    80/130 = 61.54 % and 50/130 = 38.46 %. C has one instance (100 % either way) and D no changed channel:
    neither is listed."""
    remotes = {"QM2": {}, "QM3": {}, "QM4": {}, "QM5": {}}
    queues = {"A": {"QM2": {}, "QM3": {}}, "B": {"QM2": {}, "QM4": {}}, "C": {"QM3": {}},
              "D": {"QM4": {}, "QM5": {}}}
    a = advise(view_of(tmp_path, remotes, queues), "A", {"QM2": 80, "QM3": 20})
    assert proposed(a) == {"TO.QM2": 80, "TO.QM3": 20}
    assert [s.queue for s in a.side_effects] == ["B"]
    (b,) = a.side_effects
    assert b.before == {"QM2": 50.0, "QM4": 50.0}
    assert b.after == pytest.approx({"QM2": 8000 / 130, "QM4": 5000 / 130})
    assert a.as_dict()["side_effects"][0]["after"] == {"QM2": 61.5385, "QM4": 38.4615}


def test_the_channel_no_other_queue_uses_is_the_one_changed(tmp_path):
    """A on QM2 (TO.QM2 80) and QM3 (TO.QM3 20); B on QM2 and QM4. Target A 50/50: the anchor QM2 (first by name
    of the equal targets) takes s, QM3 s: every s is exact. s = 20 keeps QM3 and changes TO.QM2, which B runs
    over too; s = 80 keeps QM2 and changes TO.QM3, which no other queue uses; any other s changes both. So 80
    and 80, and B's shares stay 80/130 and 50/130: no side effect."""
    view = view_of(tmp_path, {"QM2": {"CLWLWGHT": "80"}, "QM3": {"CLWLWGHT": "20"}, "QM4": {}},
                   {"A": {"QM2": {}, "QM3": {}}, "B": {"QM2": {}, "QM4": {}}})
    a = advise(view, "A", {"QM2": 50, "QM3": 50})
    assert proposed(a) == {"TO.QM2": 80, "TO.QM3": 80} and [w.channel for w in a.changes] == ["TO.QM3"]
    assert a.achieved == {"QM2": 50.0, "QM3": 50.0} and a.side_effects == []


# -- what blocks a target ---------------------------------------------------------------------------------------
BLOCKED_CASES = [
    # (id, remotes, queues, QMGR attributes, blocked queue manager, kind, step, in the cause, in the remedy)
    ("put-disabled", THREE, {"Q": {"QM2": {}, "QM3": {}, "QM4": {"PUT": "DISABLED"}}}, None,
     "QM4", "put-disabled", "1", "PUT(DISABLED)", "on QM4: ALTER QLOCAL(Q) PUT(ENABLED)"),
    ("no-shared-cluster", THREE, {"Q": {"QM2": {}, "QM3": {}, "QM4": {"CLUSTER": "CL9"}}}, None,
     "QM4", "no-shared-cluster", "1", "is in CL9", "a cluster QM1 is a member of"),
    ("channel-rank", {"QM2": {"CLWLRANK": "3"}, "QM3": {"CLWLRANK": "3"}, "QM4": {}},
     {"Q": {"QM2": {}, "QM3": {}, "QM4": {}}}, None,
     "QM4", "rank", "4a", "CLWLRANK(0), below the highest remaining, CLWLRANK(3)",
     "on QM4: ALTER CHANNEL(TO.QM4) CHLTYPE(CLUSRCVR) CLWLRANK(3)"),
    ("queue-rank", THREE, {"Q": {"QM2": {"CLWLRANK": "2"}, "QM3": {"CLWLRANK": "2"}, "QM4": {}}}, None,
     "QM4", "rank", "4b", "CLWLRANK(0), below the highest remaining, CLWLRANK(2)", "on QM4: ALTER QLOCAL(Q) CLWLRANK(2)"),
    ("suspended", {"QM2": {}, "QM3": {}, "QM4": {"SUSPEND": "YES"}}, {"Q": {"QM2": {}, "QM3": {}, "QM4": {}}}, None,
     "QM4", "suspended", "5", "SUSPEND(YES) on TO.QM4", "on QM4: RESUME QMGR CLUSTER(CL1)"),
    ("channel-priority", {"QM2": {"CLWLPRTY": "5"}, "QM3": {"CLWLPRTY": "5"}, "QM4": {}},
     {"Q": {"QM2": {}, "QM3": {}, "QM4": {}}}, None,
     "QM4", "priority", "11a", "CLWLPRTY(0), below the highest remaining, CLWLPRTY(5)",
     "ALTER CHANNEL(TO.QM4) CHLTYPE(CLUSRCVR) CLWLPRTY(5)"),
    ("queue-priority", THREE, {"Q": {"QM2": {"CLWLPRTY": "4"}, "QM3": {"CLWLPRTY": "4"}, "QM4": {}}}, None,
     "QM4", "priority", "11b", "CLWLPRTY(0), below the highest remaining, CLWLPRTY(4)",
     "on QM4: ALTER QLOCAL(Q) CLWLPRTY(4)"),
    ("clwlmruc", THREE, {"Q": {"QM2": {}, "QM3": {}, "QM4": {}}}, {"CLWLMRUC": "2"},
     "QM4", "clwlmruc", "11c", "CLWLMRUC(2) is below the 3 channels", "on QM1: ALTER QMGR CLWLMRUC(3) or more"),
]


@pytest.mark.parametrize("case", BLOCKED_CASES, ids=[c[0] for c in BLOCKED_CASES])
def test_a_destination_eliminated_before_step_12_is_blocked_by_its_step(tmp_path, case):
    """Target QM2 40, QM3 30, QM4 30; QM4 is eliminated before step 12 by the step docs/algorithm.md gives for
    its attribute: PUT(DISABLED) and a cluster the sender is not in (step 1), a lower channel rank (4a) or queue
    rank (4b), SUSPEND(YES) while the others are resumed (5), a lower channel (11a) or queue (11b) priority,
    CLWLMRUC(2) below three channels (11c keeps the two most recently used: at the start, with no choice made,
    the first two by name, QM2 and QM3, and after those two messages the same two for ever). QM4 gets 0 %, a
    residual of -30 points."""
    _, remotes, queues, qmgr_attrs, qmgr, kind, step, cause, remedy = case
    a = advise(view_of(tmp_path, remotes, queues, qmgr_attrs), "Q", {"QM2": 40, "QM3": 30, "QM4": 30})
    (b,) = [b for b in a.blocked if b.qmgr == qmgr]
    assert (b.kind, b.step) == (kind, step)
    assert cause in b.cause and remedy in b.remedy
    assert a.achieved.get("QM4", 0.0) == 0.0 and a.residual["QM4"] == -30.0


def test_what_step_12_shares_out_keeps_the_target_proportions(tmp_path):
    """QM4 PUT(DISABLED), target QM2 50, QM3 25, QM4 25: weights split what is left, 2 to 1. The anchor QM2
    takes s, QM3 round(s/2): exact for even s. Keeping QM3 at today's 50 would need s = 100 (99 gives 99/149,
    not 2:1); s = 50 keeps QM2 at today's 50: 50 and 25, one change. Shares 66.67 and 33.33."""
    view = view_of(tmp_path, THREE, {"Q": {"QM2": {}, "QM3": {}, "QM4": {"PUT": "DISABLED"}}})
    a = advise(view, "Q", {"QM2": 50, "QM3": 25, "QM4": 25})
    assert proposed(a) == {"TO.QM2": 50, "TO.QM3": 25} and [w.channel for w in a.changes] == ["TO.QM3"]
    assert a.achieved == pytest.approx({"QM2": 200 / 3, "QM3": 100 / 3})
    assert a.residual == pytest.approx({"QM2": 200 / 3 - 50, "QM3": 100 / 3 - 25, "QM4": -25.0})
    assert a.max_residual == 25.0


def test_a_local_instance_that_wins_blocks_every_other(tmp_path):
    """QM1 hosts an instance and CLWLUSEQ(LOCAL) (the queue's CLWLUSEQ QMGR defers to it): step 3 chooses the
    local instance for every message put on QM1. No weight matters: no proposal, QM1 keeps 100 %, and QM2 and
    QM3 are blocked at step 3 with CLWLUSEQ(ANY) as what to change."""
    view = view_of(tmp_path, TWO, {"Q": {"QM1": {}, "QM2": {}, "QM3": {}}})
    a = advise(view, "Q", {"QM2": 50, "QM3": 50})
    assert a.proposal == [] and a.commands() == []
    assert a.achieved == {"QM1": 100.0}
    assert [(b.qmgr, b.kind, b.step) for b in a.blocked] == [("QM2", "local-instance", "3"),
                                                             ("QM3", "local-instance", "3")]
    assert "CLWLUSEQ(QMGR) defers to the queue manager's CLWLUSEQ(LOCAL)" in a.blocked[0].cause
    assert "on QM1: ALTER QLOCAL(Q) CLWLUSEQ(ANY)" in a.blocked[0].remedy


def test_a_zero_target_is_blocked_at_step_12(tmp_path):
    """Target QM2 100 with QM3 in the rotation: a weight is at least 1, so QM3 keeps a share. The anchor QM2
    takes s, QM3 round(0) kept at 1: QM3's 100/(s+1) is least at s = 99: 99 and 1, QM3 1 %."""
    a = advise(view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM3": {}}}), "Q", {"QM2": 100})
    assert proposed(a) == {"TO.QM2": 99, "TO.QM3": 1} and a.achieved == {"QM2": 99.0, "QM3": 1.0}
    (b,) = a.blocked
    assert (b.qmgr, b.kind, b.step) == ("QM3", "zero-target", "12") and "CLWLPRTY" in b.remedy


def test_an_instance_on_an_unknown_queue_manager_is_unreachable(tmp_path):
    """QM5 hosts an instance (DISPLAY QCLUSTER) but QM1's DISPLAY CLUSQMGR has no record of it: no channel, no
    candidate. QM2 alone is left: one destination, no rotation, 100 %."""
    view = view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM5": {}}})
    a = advise(view, "Q", {"QM2": 50, "QM5": 50})
    assert [(b.qmgr, b.kind) for b in a.blocked] == [("QM5", "unreachable")]
    assert a.proposal == [] and a.achieved == {"QM2": 100.0}


def test_a_put_that_fails_blocks_every_destination(tmp_path):
    """Every instance PUT(DISABLED): step 1 leaves nothing and the put fails with 2268."""
    off = {"PUT": "DISABLED"}
    a = advise(view_of(tmp_path, TWO, {"Q": {"QM2": off, "QM3": off}}), "Q", {"QM2": 50, "QM3": 50})
    assert [(b.qmgr, b.kind) for b in a.blocked] == [("QM2", "put-disabled"), ("QM3", "put-disabled")]
    assert a.achieved == {} and any("MQRC_CLUSTER_PUT_INHIBITED" in n for n in a.notes)


def test_the_legacy_profile_uses_no_weights(tmp_path):
    """The legacy profile's step 12 is round robin without CLWLWGHT: no proposal, one blocked entry for every
    destination."""
    a = advise(view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM3": {}}}), "Q", {"QM2": 80, "QM3": 20}, "legacy")
    assert a.proposal == [] and [(b.qmgr, b.kind, b.step) for b in a.blocked] == [(None, "profile", "12")]


# -- the pieces -------------------------------------------------------------------------------------------------
def test_choose_totals_tries_every_scale_of_the_anchor():
    """Targets 50/30/20 with one channel each: s = 10k gives 5:3:2 exactly; today's 50/50/50 (sum 150) keeps QM2
    unchanged at s = 50 (30 and 20): one change fewer than any other exact scale."""
    targets = {"QM2": Fraction(50), "QM3": Fraction(30), "QM4": Fraction(20)}
    ranges = {q: (1, 99) for q in targets}
    assert choose_totals(targets, ranges, {q: 50 for q in targets}) == {"QM2": 50, "QM3": 30, "QM4": 20}


def test_split_total_keeps_current_weights_when_they_make_it():
    assert split_total(100, [30, 70]) == [30, 70]
    assert split_total(51, [30, 70]) == [26, 25]


def test_with_weights_replaces_only_the_named_channels(tmp_path):
    view = view_of(tmp_path, TWO, {"Q": {"QM2": {}, "QM3": {}}})
    after = with_weights(view, {"TO.QM2": 7, "TO.QM1": 9})
    assert {c.name: c.clwlwght for c in after.channels} == {"TO.QM2": 7, "TO.QM3": 50}
    assert [r.clwlwght for r in after.local_receivers] == [9]
    assert Weight("QM2", "TO.QM2", "QM2", 50, 7).command == "ALTER CHANNEL(TO.QM2) CHLTYPE(CLUSRCVR) CLWLWGHT(7)"


@pytest.mark.parametrize("text, expected", [
    ("QM2=50,QM3=25,QM4=25", {"QM2": 50.0, "QM3": 25.0, "QM4": 25.0}),
    (" QM2 = 33.33 , QM3=33.33,QM4=33.34", {"QM2": 33.33, "QM3": 33.33, "QM4": 33.34}),
    ("QM2=100,QM3=0", {"QM2": 100.0, "QM3": 0.0}),
    ("QM2=50.,QM3=.5,QM4=49.5", {"QM2": 50.0, "QM3": 0.5, "QM4": 49.5}),
])
def test_parse_target(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize("text, says", [
    ("QM2=50,QM3=40", "add up to 90, not 100"),
    ("QM2=33,QM3=33,QM4=33", "add up to 99, not 100"),
    ("QM2", "is not QMGR=PERCENT"),
    ("QM2=50,,QM3=50", "is not QMGR=PERCENT"),
    ("=100", "is not QMGR=PERCENT"),
    ("QM2=fifty,QM3=50", "'fifty' is not a number"),
    ("QM2=nan,QM3=100", "'nan' is not a number"),
    ("QM2=150,QM3=-50", "a percentage from 0 to 100"),
    # Shares are ASCII decimals: Python's float() takes each of these (Arabic-Indic digits, an underscore, an
    # exponent that rounds to 0, a sign, infinity).
    ("QM2=\u0661\u0660\u0660", "is not a number (a share is written in ASCII decimals"),
    ("QM2=1_00", "'1_00' is not a number"),
    ("QM2=1e-400,QM3=100", "'1e-400' is not a number"),
    ("QM2=+50,QM3=50", "'+50' is not a number"),
    ("QM2=inf,QM3=100", "'inf' is not a number"),
    ("QM2=50,QM2=50", "QM2 is given twice"),
    ("Q M2=100", "is not a queue manager name"),
])
def test_parse_target_refuses(text, says):
    with pytest.raises(AdviseError, match="^--target: ") as e:
        parse_target(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_check_target_refuses_an_unknown_queue_and_a_queue_manager_without_an_instance(tmp_path):
    view = view_of(tmp_path, THREE, {"Q": {"QM2": {}, "QM3": {}}})
    with pytest.raises(AdviseError, match=r"^--queue: NOPE is not a cluster queue known to QM1"):
        check_target(view, "NOPE", {"QM2": 100})
    with pytest.raises(AdviseError, match=r"^--target: QM4 hosts no instance of Q \(instances: QM2, QM3\)"):
        advise(view, "Q", {"QM2": 50, "QM4": 50})
