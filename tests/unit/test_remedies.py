"""Causes and remedies (clwl/analyses/remedies.py, docs/diagnosis.md "Causes and remedies"): one table, the cause of each
stay reason, the object that pinned a bind on open, and the remedies of unexpected distributions. Hand-made views
(clwl.engine.model objects); the DEFBIND order is MQ's (docs/algorithm.md; the reference's "MQOPEN option for cluster
queue": a QALIAS's DEFBIND overrides the base queue's, MQ's default DEFBIND is OPEN)."""

from __future__ import annotations

import re
from pathlib import Path

from clwl.analyses.remedies import (
    BY_KEY,
    HELD_BACK,
    REMEDIES,
    STEP_CAUSES,
    distribution_causes,
    pinned_by,
    remedy,
    stay_cause,
)
from clwl.engine import algorithm
from clwl.engine.candidates import defbind_source, queue_defbind
from clwl.engine.model import ClusterView, LocalAlias, LocalQueue, QmgrAttributes, QueueInstance, RemoteDefinition
from clwl.landing import held_back

DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnosis.md"


def view(**kw) -> ClusterView:
    inst = kw.pop("instances", (QueueInstance("APP.ORDERS", "QM2", frozenset({"C"}), defbind="NOTFIXED"),
                                QueueInstance("APP.ORDERS", "QM3", frozenset({"C"}), defbind="NOTFIXED")))
    return ClusterView(qmgr=QmgrAttributes("QM1"), instances=tuple(inst), **kw)


def test_one_table_with_unique_keys_each_documented():
    keys = [r.key for r in REMEDIES]
    assert len(keys) == len(set(keys))
    docs = DOCS.read_text()
    for r in REMEDIES:
        assert f"| `{r.key}` | {r.title} | {r.mq_did} | {r.remedy} |" in docs, r.key  # the docs say what the code does
        assert r.mq_did and r.remedy and r.template


def test_every_step_of_the_algorithm_has_a_cause():
    """A still-most-favourable message's stay reason names the step that decided it (clwl/engine/algorithm.py); every
    step id of every profile maps to a cause in the table."""
    ids = {s.id for steps in algorithm.PROFILES.values() for s in steps}
    assert ids <= set(STEP_CAUSES)
    assert set(STEP_CAUSES.values()) <= set(BY_KEY)
    for steps in algorithm.PROFILES.values():
        for s in steps:
            assert stay_cause("still-most-favourable", s.stay_reason) == STEP_CAUSES[s.id], s.stay_reason


def test_the_stay_reasons_map_to_their_causes():
    assert stay_cause("not-reallocatable", "bind-on-open") == "bind-on-open"
    assert stay_cause("not-reallocatable", "named-qmgr; on the transmission queue at 15:30") == "named-qmgr"
    assert stay_cause("not-reallocatable", "bind-on-group") == "bind-on-group"
    assert stay_cause("still-most-favourable", algorithm.STAY_ONLY_ELIGIBLE) == "only-eligible"
    assert stay_cause("still-most-favourable", algorithm.STAY_ONLY_ELIGIBLE, single_instance=True) == \
        "single-instance"
    assert stay_cause("still-most-favourable", "channel CLWLRANK (step 4a): rank is taken before channel state") \
        == "rank"
    # A browse saw it after the replay delivered it: the application's cause stays its cause (issue 39 item 3); the
    # channel failing between captures is the cause only when nothing of the application's kept it there.
    assert stay_cause("not-reallocatable", "bind-on-open", browse=True) == "bind-on-open"
    assert stay_cause("still-most-favourable", "eligible", browse=True) == "between-captures"


def test_the_defbind_source_follows_mqs_order_and_agrees_with_the_engine():
    """An alias's DEFBIND wins (ALIAS.ORDERS DEFBIND(OPEN) over its target's NOTFIXED), then a local queue's, then
    the cluster queue's as its instances advertise it; instances that disagree: MQ's default OPEN. Each time the
    value is the one clwl.engine.candidates.queue_defbind takes for MQOO_BIND_AS_Q_DEF."""
    v = view(aliases=(LocalAlias("ALIAS.ORDERS", "APP.ORDERS", "OPEN"),),
             local_queues=(LocalQueue("LOCAL.Q", defbind="GROUP"),))
    cases = {"ALIAS.ORDERS": ("QALIAS", "OPEN"), "LOCAL.Q": ("QLOCAL", "GROUP"), "APP.ORDERS": ("QCLUSTER", "NOTFIXED")}
    for queue, (kind, defbind) in cases.items():
        obj = defbind_source(v, queue)
        assert (obj.kind, obj.defbind) == (kind, defbind)
        assert queue_defbind(v, queue) == defbind.lower()
    mixed = view(instances=(QueueInstance("Q", "QM2", frozenset({"C"}), defbind="OPEN"),
                            QueueInstance("Q", "QM3", frozenset({"C"}), defbind="NOTFIXED")))
    assert (defbind_source(mixed, "Q").kind, defbind_source(mixed, "Q").defbind) == ("default", "OPEN")
    assert queue_defbind(mixed, "Q") == "open"


def test_bind_on_open_names_what_pinned_it():
    """APP.ORDERS is advertised DEFBIND(NOTFIXED): a put bound on open asked MQOO_BIND_ON_OPEN itself, so the remedy
    is the open option. Through ALIAS.ORDERS DEFBIND(OPEN) with MQOO_BIND_AS_Q_DEF, the alias pinned it: ALTER
    QALIAS ... DEFBIND(NOTFIXED)."""
    v = view(aliases=(LocalAlias("ALIAS.ORDERS", "APP.ORDERS", "OPEN"),))
    by, fix = pinned_by("open", v, "APP.ORDERS")
    assert by.startswith("the application's MQOPEN option MQOO_BIND_ON_OPEN (the cluster queue APP.ORDERS")
    assert "DEFBIND(NOTFIXED)" in by and fix.startswith("open APP.ORDERS with MQOO_BIND_NOT_FIXED")
    by, fix = pinned_by("as_q_def", v, "ALIAS.ORDERS")
    assert by == "MQOO_BIND_AS_Q_DEF and the DEFBIND(OPEN) of the alias QALIAS(ALIAS.ORDERS)"
    assert fix.startswith("ALTER QALIAS(ALIAS.ORDERS) DEFBIND(NOTFIXED)")
    text = remedy("bind-on-open", qmgr="QM3", pinned_by=by, fix=fix)
    assert text.startswith("bound on open by MQOO_BIND_AS_Q_DEF and the DEFBIND(OPEN) of the alias "
                           "QALIAS(ALIAS.ORDERS): MQ fixed QM3 at MQOPEN")


def test_a_named_queue_manager_alias_is_said_to_be_one():
    from clwl.analyses.remedies import alias_note

    v = view(remotes=(RemoteDefinition("ORDERS.GW", "", "QM3"),))
    assert alias_note(v, "ORDERS.GW", "QM3") == ", a queue-manager alias (QREMOTE) resolving to QM3"
    text = remedy("named-qmgr", qmgr="QM3", queue="APP.ORDERS", target="ORDERS.GW",
                  alias=alias_note(v, "ORDERS.GW", "QM3"))
    assert text.startswith("the application names ORDERS.GW in ObjectQMgrName, a queue-manager alias (QREMOTE) "
                           "resolving to QM3: QM3 is the only destination")


def test_an_unexpected_distribution_gets_its_causes():
    """The explanation's notes (clwl.analyses.distribution.explain) name a change in the interval: a change between
    captures; puts bound on open in the interval: bound handles; neither: not in the captures."""
    changed = ("observed 9 against 5.0 expected; the configuration in force (CLWLWGHT QM2 80, QM3 50; channel "
               "TO.QM3 RETRYING at 14:00) does not account for it")
    assert distribution_causes(changed) == ["dist-change-between-captures"]
    assert distribution_causes(changed, bound_puts=4) == ["dist-bind-on-open", "dist-change-between-captures"]
    assert distribution_causes("observed 9 against 5.0 expected; no configuration change or channel event "
                               "explains it") == ["dist-unexplained"]
    assert distribution_causes("observed 9 against 5.0 expected; the configuration in force (CLWLWGHT QM2 80, "
                               "QM3 50) does not account for it") == ["dist-unexplained"]


def test_held_back_reasons_are_linked_not_copied():
    assert HELD_BACK == {"date": held_back.DATE_REASON, "duplicate": held_back.DUPLICATE_REASON}
    for r in REMEDIES:
        assert not re.search(r"not replayed", r.template)


def test_clwl_explain_prints_the_remedy_of_the_same_table():
    """A message of QM1 that stayed behind TO.QM3 bound on open (routing_replay's stay_reason not-reallocatable,
    stay_detail bind-on-open): clwl explain's remedy is the table's bind-on-open sentence, with the object named
    from QM1's configuration at the wait (APP.ORDERS advertised DEFBIND(NOTFIXED): the MQOPEN option pinned it);
    a message that never stayed has none."""
    from datetime import datetime, timezone

    from clwl.analyses.explain import stay_remedy
    from clwl.engine.replay import Snapshot

    t = datetime(2026, 11, 20, 14, tzinfo=timezone.utc)
    timeline = [Snapshot(datetime(2026, 11, 20, 12, tzinfo=timezone.utc), view())]
    row = dict(sending_qmgr="QM1", queue="APP.ORDERS", qmgr="QM3", final_qmgr="QM3", channel="TO.QM3",
               final_channel="TO.QM3", bind="open", target_qmgr=None, held_from=t, stay_reason="not-reallocatable",
               stay_detail="bind-on-open")
    by, fix = pinned_by("open", view(), "APP.ORDERS")
    assert stay_remedy(row, timeline) == remedy("bind-on-open", qmgr="QM3", pinned_by=by, fix=fix) + "."
    assert "MQOO_BIND_NOT_FIXED" in stay_remedy(row, timeline)
    assert stay_remedy({**row, "stay_reason": None, "stay_detail": None}, timeline) is None
