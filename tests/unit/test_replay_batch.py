"""The replay's fast path (``SenderReplay.put_batch``, columns in, a result index per message out) against the
reference path (``SenderReplay.put``, one PutEvent and one ReplayRow per message), on generated estates with
outages, suspends, weight and priority changes, PUT(DISABLED), bind-on-open / bind-on-group traffic, named
target queue managers and zero-token messages: every message must come out with exactly the same fields.

No expected values are written here: the reference path is the one the documented-behaviour tests pin down,
so agreement with it on a busy estate is what this checks. The batch sizes are odd on purpose, so that
configuration changes and channel events fall inside batches and across their edges."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from clwl.engine.model import ClusterChannel, ClusterView, QmgrAttributes, QueueInstance
from clwl.engine.replay import PutColumns, PutEvent, SenderReplay, Snapshot, replay, timeline_from_captures
from clwl.generate import GenerateOptions, generate
from clwl.parse.mqsc import parse_mqsc_file
from clwl.parse.puts import parse_puts_file

FIELDS = ("qmgr", "channel", "xmitq", "path", "decided_by", "reallocatable", "not_reallocatable_reason", "trace",
          "error", "reason_code", "config_time", "reallocations", "final_qmgr", "final_channel", "final_xmitq",
          "held", "held_from", "released_at", "delivered_at", "hold_state", "stay_reason", "stay_detail", "agrees")


def _estate(root: Path, **kw) -> Path:
    out = root / "landing"
    generate(GenerateOptions(out=str(out), quiet=True, **kw))
    return out


@pytest.fixture(scope="module")
def busy(tmp_path_factory) -> Path:
    return _estate(tmp_path_factory.mktemp("busy"), seed=11, days=1, messages_per_day=8000, observed_every=1,
                   bind_open_share=0.08, bind_group_share=0.08, named_qmgr_share=0.05, outages=2.0, suspends=1.0,
                   weight_changes=1.0, priority_changes=1.0, put_disabled=1.0, skew=1, broken_records=0)


@pytest.fixture(scope="module")
def single_instance(tmp_path_factory) -> Path:
    """One instance per queue: messages behind a retrying channel stay (still the most favourable)."""
    return _estate(tmp_path_factory.mktemp("single"), seed=9, days=1, messages_per_day=4000, instances=1, qmgrs=8,
                   senders=3, queues=3, outages=1.0, observed_every=1, broken_records=0, skew=0)


def _timeline(day: Path, qm: str):
    caps = []
    for f in sorted((day / qm).glob("*.mqsc")):
        if not f.name.startswith(("config_", "chstatus_")):
            continue
        t = datetime.strptime(day.name + f.stem.split("_")[1], "%Y-%m-%d%H%M%S").replace(tzinfo=timezone.utc)
        caps.append((t, {"CHSTATUS"} if f.name.startswith("chstatus") else set(), parse_mqsc_file(f).records))
    return timeline_from_captures(qm, caps)


def _events(day: Path, qm: str) -> list[PutEvent]:
    recs = [r for f in sorted((day / qm).glob("puts*.csv")) for r in parse_puts_file(f)[0]]
    events = [PutEvent(r.msg_id, r.put_time, r.queue, r.target_qmgr or None, r.bind, r.open_handle or "",
                       r.group_id or "", r.logical_order, r.from_cluster_channel, r.pcf, r.length,
                       r.observed_qmgr or None) for r in recs]
    return sorted(events, key=lambda e: e.put_time)  # stable: file order within one put time


def _micros(t: datetime) -> int:
    return (t - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)


def _batch_replay(qm: str, timeline, events: list[PutEvent], size: int, until: datetime) -> dict[str, tuple]:
    """Fields per msg_id from the batch path: results by index for messages final at once, rows otherwise."""
    rep = SenderReplay(qm, timeline)
    out: dict[str, tuple] = {}
    for start in range(0, len(events), size):
        chunk = events[start:start + size]
        codes, rows = rep.put_batch(PutColumns(
            [_micros(e.put_time) for e in chunk], [e.queue for e in chunk], [e.target_qmgr for e in chunk],
            [e.bind for e in chunk], [e.open_handle for e in chunk], [e.group_id for e in chunk],
            [e.logical_order for e in chunk], [e.from_cluster_channel for e in chunk], [e.pcf for e in chunk],
            [e.length for e in chunk]), lambda i, chunk=chunk: chunk[i])
        for r in rows:
            out[r.msg_id] = tuple(getattr(r, f) for f in FIELDS)
        for e, code in zip(chunk, codes):
            if code < 0:
                continue
            res, config_time = rep.outcomes[code]
            ok = res.error is None
            final = res.qmgr if ok else None
            out[e.msg_id] = (
                final, res.channel if ok else None, res.xmitq if ok else None, res.path if ok else None,
                res.decided_by if ok else None, res.reallocatable if ok else None,
                res.not_reallocatable_reason if ok else None, res.summary if ok else res.detail,
                None if ok else res.error, None if ok else res.reason, config_time, 0, final,
                res.channel if ok else None, res.xmitq if ok else None, False, None, None,
                e.put_time if ok else None, None, None, None,
                (e.observed_qmgr == final) if e.observed_qmgr else None)
    for r in rep.finish(until):
        out[r.msg_id] = tuple(getattr(r, f) for f in FIELDS)
    return out


def _same(qm: str, timeline, events: list[PutEvent], until: datetime, sizes=(1, 7, 97, 4096)) -> Counter:
    """Both paths on one sender; returns what the reference rows exercised (so a test can insist on it)."""
    ref_rows = list(replay(qm, timeline, events, until=until))
    reference = {r.msg_id: tuple(getattr(r, f) for f in FIELDS) for r in ref_rows}
    assert len(reference) == len(events)
    for size in sizes:
        fast = _batch_replay(qm, timeline, events, size, until)
        assert fast.keys() == reference.keys()
        diff = [m for m in reference if fast[m] != reference[m]]
        assert not diff, (qm, size, diff[:3], [(reference[m], fast[m]) for m in diff[:1]])
    return Counter(k for r in ref_rows for k, on in (
        ("waited", r.held_from is not None), ("reallocated", r.reallocations > 0), ("held", r.held),
        ("error", r.error is not None), ("bound", r.bind != "notfixed"), ("observed", r.observed_qmgr is not None))
        if on)


def _compare(landing: Path) -> Counter:
    seen: Counter = Counter()
    for day in sorted(p for p in landing.iterdir() if p.is_dir()):
        until = datetime.fromisoformat(day.name).replace(tzinfo=timezone.utc) + timedelta(days=1)
        for qm_dir in sorted(p for p in day.iterdir() if p.is_dir()):
            events = _events(day, qm_dir.name)
            if events:
                seen += _same(qm_dir.name, _timeline(day, qm_dir.name), events, until)
                seen["messages"] += len(events)
    return seen


def test_batch_path_equals_reference_on_a_busy_generated_estate(busy):
    seen = _compare(busy)
    assert seen["messages"] == 8000 and seen["bound"] > 0 and seen["waited"] > 0 and seen["observed"] > 0


def test_batch_path_equals_reference_when_messages_wait_behind_a_single_instance(single_instance):
    seen = _compare(single_instance)
    assert seen["messages"] == 4000 and seen["held"] > 0


T0 = datetime(2026, 11, 20, 6, 0, tzinfo=timezone.utc)
CL = frozenset({"CL1"})


def _view(states: dict[str, str]) -> ClusterView:
    chans = tuple(ClusterChannel(f"TO.{q}", q, CL, state=s) for q, s in states.items())
    inst = tuple(QueueInstance("Q1", q, CL, defbind="NOTFIXED") for q in states)
    return ClusterView(QmgrAttributes("QM1"), chans, inst,
                       local_receivers=(ClusterChannel("TO.QM1", "QM1", CL, deftype="CLUSRCVR"),))


def test_batch_path_equals_reference_through_reallocation_errors_and_no_configuration():
    """What the generated estates do not reach: messages put before the first capture (NO_CONFIGURATION), an
    unknown queue (2085), and re-allocation: at 07:00 TO.QM2 is RUNNING again while TO.QM3 still retries, so
    QM3's eligible waiting messages move to QM2 and the bound ones stay (docs/algorithm.md (re-allocation))."""
    tl = [Snapshot(T0, _view({"QM2": "RETRYING", "QM3": "RETRYING"})),
          Snapshot(T0 + timedelta(hours=1), _view({"QM2": "RUNNING", "QM3": "RETRYING"})),
          Snapshot(T0 + timedelta(hours=2), _view({"QM2": "RUNNING", "QM3": "RUNNING"}))]
    events = []
    for i in range(400):
        at = T0 + timedelta(minutes=i * 0.75 - 10)
        kw = {}
        if i % 5 == 0:
            kw = dict(bind="open", open_handle=f"h{i % 3}")
        elif i % 7 == 0:
            kw = dict(bind="group", open_handle="g", group_id=f"G{i // 50}", logical_order=True)
        events.append(PutEvent(f"{i:048X}", at, "NO.SUCH.QUEUE" if i % 31 == 0 else "Q1", length=100 + i,
                               observed_qmgr="QM2" if i % 2 else None, **kw))
    seen = _same("QM1", tl, events, T0 + timedelta(hours=6))
    assert seen["reallocated"] > 0 and seen["error"] > 0 and seen["waited"] > 0 and seen["bound"] > 0
