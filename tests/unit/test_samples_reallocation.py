"""The sample estate re-allocates messages, and the replay (clwl/engine/replay.py) agrees with the generator about them.

samples/make_samples.py scripts a network outage on 2026-11-20: QM5's channels TO.QM2, TO.QM3 and TO.QM4 go
RETRYING at 09:52, so the eligible APP.BILLING messages of the 10:05-10:50 burst wait behind all three (step 12
alternates); TO.QM2 comes back at 10:52 while the other two still retry, and at their next failed retry their
eligible messages are re-allocated to QM2. The bound ones (the 10:20 bind-on-open session, the recon message
naming QM3) stay until 11:52. The captures at 10:00 (all RETRYING) and 11:00 (TO.QM2 RUNNING, the others still
RETRYING) let the replay see it; facts.json names the messages the generator re-allocated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from clwl.engine.replay import PutEvent, replay, timeline_from_captures
from clwl.parse.mqsc import parse_mqsc_file
from clwl.parse.puts import parse_puts_file

ROOT = Path(__file__).resolve().parents[2]
LANDING = ROOT / "samples" / "landing"
FACTS = json.loads((ROOT / "samples" / "facts.json").read_text())
DAY = "2026-11-20"
OUTAGE = FACTS[f"network_outage_QM5_{DAY}"]


# samples/README.md, "Deliberate defects", D1: the one capture of QM5 with a problem. Its last record is cut off
# and quarantined; its 4 complete records are accepted (and replayed), as the pipeline does.
TRUNCATED = {f"{DAY}/QM5/chstatus_210000.mqsc": 1}


def _captures(qm: str):
    """QM5's captures (config and chstatus, runmqsc) in time order, as the pipeline reads them. Only names that are
    no capture are skipped; a capture the parser fails on fails the test (nothing is dropped silently), and a
    capture with problems other than D1's does too."""
    out = []
    for day in sorted(LANDING.iterdir()):
        for f in sorted((day / qm).glob("*.mqsc")):
            if not f.name.startswith(("config_", "chstatus_")):
                continue
            t = datetime.strptime(day.name + f.stem.split("_")[1], "%Y-%m-%d%H%M%S").replace(tzinfo=timezone.utc)
            cap = parse_mqsc_file(f)
            name = f.relative_to(LANDING).as_posix()
            assert len(cap.problems) == TRUNCATED.get(name, 0), (name, cap.problems)
            out.append((t, {"CHSTATUS"} if f.name.startswith("chstatus") else set(), cap.records))
    return out


def _replay_qm5_day() -> dict[str, object]:
    tl = timeline_from_captures("QM5", _captures("QM5"))
    recs, _ = parse_puts_file(LANDING / DAY / "QM5" / "puts.csv")
    events = sorted((PutEvent(r.msg_id, r.put_time, r.queue, r.target_qmgr, r.bind, r.open_handle or "",
                              r.group_id or "", r.logical_order, r.from_cluster_channel, r.pcf, r.length,
                              r.observed_qmgr) for r in recs), key=lambda e: e.put_time)
    return {r.msg_id: r for r in replay("QM5", tl, events)}


def _t(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_the_samples_name_reallocated_messages():
    moved = FACTS["reallocated"]["messages"]
    assert FACTS["reallocated"]["count"] == len(moved) >= 1
    assert OUTAGE["reallocated"] >= 1 and OUTAGE["stayed_not_reallocatable"] >= 1
    for m in moved:
        assert m["first_dest"] != m["dest"] and m["bind"] == "notfixed" and not m["target_qmgr"]


def test_the_replay_reallocates_what_the_generator_reallocated_and_they_are_not_stuck():
    rows = _replay_qm5_day()
    moved = [m for m in FACTS["reallocated"]["messages"] if m["msg_id"] in rows]
    assert moved and len(moved) == FACTS["reallocated"]["by_sender"]["QM5"]
    eleven = datetime.fromisoformat(f"{DAY}T11:00:00+00:00")  # the capture showing TO.QM2 running again
    for m in moved:
        r = rows[m["msg_id"]]
        assert r.qmgr == m["first_dest"] and r.channel == m["first_channel"], (m, r)  # where it first waited
        assert r.reallocations >= 1 and r.final_qmgr == m["dest"] and r.final_channel == m["channel"], (m, r)
        assert r.final_xmitq == m["xmitq"]
        assert r.held_from == r.put_time and r.released_at == eleven and not r.held
        assert not r.stayed and r.stay_reason is None  # re-allocated away: not a stuck message
        assert r.agrees is not False


def test_what_stayed_in_the_outage_stayed_in_the_replay_too():
    """The messages that waited and were not re-allocated (bound or named, or behind TO.QM2, the channel that
    came back first) stay in the replay, with a reason, and go where the generator sent them."""
    rows = _replay_qm5_day()
    stayed = [m for m in OUTAGE["messages"] if "reallocated_at" not in m]
    assert len(stayed) == OUTAGE["stayed"] >= 1
    for m in stayed:
        r = rows[m["msg_id"]]
        assert r.stayed and r.reallocations == 0 and r.final_qmgr == m["dest"] == m["first_dest"], (m, r)
        if m["reason"].startswith("not re-allocatable"):
            assert r.stay_reason == "not-reallocatable"
        # delivered at the first capture that shows its channel running again
        assert _t(m["sent"]) <= r.released_at < _t(m["sent"]) + timedelta(minutes=10), (m, r)


def test_the_committed_samples_are_what_make_samples_writes(tmp_path):
    """samples/make_samples.py --check: every file under samples/landing, samples/captures and samples/facts.json
    is byte for byte what the script (and the renderer it shares with clwl generate) writes now, and none is
    extra. Run as a script from another folder, without PYTHONPATH: it must find the renderer by itself."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(ROOT / "samples" / "make_samples.py"), "--check"], cwd=tmp_path,
                         env=env, capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
