"""One rule for which of the sending queue manager's own cluster receivers weighs its local instance
(issue 39, items 5 and 12): the router, the report's configured shares and ``clwl advise`` all ask
``ClusterView.local_receiver``.

The estate (tests/handmade.py, runmqsc's printed shape): QM1 has two cluster receivers, CL2.QM1 in cluster CL2 with
CLWLWGHT(80) (first in name order) and TO.QM1 in CL1 with CLWLWGHT(20). APP.Q has an instance on QM1 and one on QM2,
both in CL1 only; QM1 reaches QM2 over TO.QM2 (CL1, CLWLWGHT(60)); QMGR CLWLUSEQ(ANY), so the local instance
competes in step 12 (docs/algorithm.md, step 3 and reading 2) with the weight of QM1's receiver that shares a
cluster with it: TO.QM1, 20, not the 80 of CL2.QM1 (the largest, and the first in name order).

Step 12 alone decides (every channel running, equal ranks and priorities), so each share is the weight over the
total weight: QM1 20 / (20 + 60) = 25 %, QM2 60 / 80 = 75 %. Taking 80 would give QM1 80 / 140 = 57.14 %.
"""

from __future__ import annotations

import datetime as dt

import pytest

from clwl.analyses.advise import advise, weighted_channel
from clwl.engine.algorithm import Request
from clwl.engine.replay import Snapshot
from clwl.engine.router import Router
from clwl.engine.shares import engine_shares, steady
from clwl.engine.view import build_view, read_captures
from clwl.report.shares import configured_shares
from tests.handmade import config_capture

SIX = dt.datetime(2026, 11, 20, 6, tzinfo=dt.timezone.utc)
RECEIVERS = [("CL2.QM1", "CL2", 80), ("TO.QM1", "CL1", 20)]


def qm1_view(tmp_path):
    folder = tmp_path / "QM1"
    folder.mkdir()
    (folder / "config.mqsc").write_text(config_capture(
        "QM1", {"QM2": {"CLWLWGHT": "60"}}, {"APP.Q": {"QM1": {}, "QM2": {}}}, {"CLWLUSEQ": "ANY"},
        receivers=RECEIVERS), encoding="utf-8")
    caps = read_captures([folder])
    view, problems = build_view(caps.records, "QM1")
    assert not problems and not caps.problems
    assert [(r.name, r.clwlwght) for r in view.local_receivers] == [("CL2.QM1", 80), ("TO.QM1", 20)]
    return view


def test_the_receiver_sharing_the_instances_cluster_weighs_it(tmp_path):
    """The one rule: TO.QM1 (CL1, like the instance), not CL2.QM1 (first by name, largest weight)."""
    view = qm1_view(tmp_path)
    (local,) = [i for i in view.instances_of("APP.Q") if i.qmgr == "QM1"]
    assert view.local_receiver(local).name == "TO.QM1" and view.local_weight(local) == 20


def test_the_engine_shares_use_20(tmp_path):
    """Router: QM1 20 / 80 = 25 %, QM2 60 / 80 = 75 % (exact, step 12 alone)."""
    view = qm1_view(tmp_path)
    assert engine_shares(view, "APP.Q") == pytest.approx({"QM1": 25.0, "QM2": 75.0})
    prep = Router(steady(view)).lru_prepared(Request("APP.Q"))
    assert sorted(zip((c.qmgr for c in prep.cands), prep.weights)) == [("QM1", 20), ("QM2", 60)]


def test_the_report_shows_the_weight_the_share_is_computed_from(tmp_path):
    """The report's configured row for the local instance: weight 20 beside 25 %, not 80 beside 25 %."""
    frame = configured_shares({"QM1": [Snapshot(SIX, qm1_view(tmp_path))]}, dt.date(2026, 11, 20))
    rows = {r["qmgr"]: (int(r["weight"]), round(r["configured_share"], 6)) for _, r in frame.iterrows()}
    assert rows == {"QM1": (20, 25.0), "QM2": (60, 75.0)}


def test_advise_alters_the_receiver_that_weighs_the_local_instance(tmp_path):
    """Target QM1 40, QM2 60: the anchor QM2 takes s, QM1 round(2s/3), exact for s = 3k. s = 60 keeps QM2 (60
    today) and gives QM1 40 (total 100, 20 from today's 80); s = 30 keeps QM1 at 20 (total 50, 30 from today's):
    one change each, the nearer total wins, so TO.QM1 goes from 20 to 40 and the engine then gives exactly 40 / 60.
    Altering CL2.QM1 instead (the first receiver) would change nothing the engine weighs: 25 / 75 would stay."""
    view = qm1_view(tmp_path)
    (local,) = [c for c in Router(steady(view)).lru_prepared(Request("APP.Q")).cands if c.channel is None]
    assert weighted_channel(view, local).name == "TO.QM1"
    a = advise(view, "APP.Q", {"QM1": 40, "QM2": 60})
    assert a.current == pytest.approx({"QM1": 25.0, "QM2": 75.0})
    assert [(w.qmgr, w.channel, w.current, w.clwlwght) for w in a.proposal] == [("QM1", "TO.QM1", 20, 40),
                                                                                ("QM2", "TO.QM2", 60, 60)]
    assert a.commands() == [{"qmgr": "QM1", "channel": "TO.QM1",
                             "command": "ALTER CHANNEL(TO.QM1) CHLTYPE(CLUSRCVR) CLWLWGHT(40)"}]
    assert a.achieved == pytest.approx({"QM1": 40.0, "QM2": 60.0}) and a.exact
