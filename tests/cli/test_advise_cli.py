"""`clwl advise` end to end: its proposal, written into the capture files, gives the shares it reports through
`clwl route`; bad input is one line and exit 2; `--lake --date` replays the day before and after.

Why `clwl route --count N` must give exactly the achieved shares (docs/algorithm.md step 12, clwl/engine/shares.py):
every DestSeqFactor starts at zero, each choice adds 1000 / CLWLWGHT to the chosen channel's, and the lowest
goes next; after W messages, W the sum of the weights in the rotation, each channel has been chosen exactly its
weight's number of times. So routing 2W messages counts 2w for each channel: the share w / W exactly, which is
what advise reports as achieved, and within its reported residual of the target.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from clwl.cli import main
from tests.handmade import chstatus_capture, config_capture

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "landing"


def advise_json(capsys, *args: str) -> dict:
    code = main(["advise", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def apply_weights(folder: Path, weights: dict[str, int]) -> int:
    """Rewrite CLWLWGHT in every DISPLAY CLUSQMGR record (AMQ8441I) of the channels named, in every capture file
    of ``folder``, as the ALTER CHANNEL commands would make the senders see it. Returns the records changed."""
    changed = 0
    for path in sorted(folder.iterdir()):
        text = path.read_text(encoding="utf-8")
        parts = re.split(r"(?m)^(?=AMQ\d{4}I?:|\s*\d+ : )", text)
        for i, part in enumerate(parts):
            m = re.search(r"\bCHANNEL\(([^)]*)\)", part)
            if part.startswith("AMQ8441") and m and m.group(1) in weights:
                parts[i] = re.sub(r"\bCLWLWGHT\(\d+\)", f"CLWLWGHT({weights[m.group(1)]})", part)
                changed += 1
        path.write_text("".join(parts), encoding="utf-8")
    return changed


def routed_shares(capsys, folder: Path, queue: str, count: int) -> Counter:
    code = main(["route", "--mqsc", str(folder), "--queue", queue, "--count", str(count), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return Counter(json.loads(line)["qmgr"] for line in out.splitlines())


def check_through_route(capsys, folder: Path, queue: str, target: str) -> dict:
    """advise on ``folder``, its proposal written into the captures, 2W messages routed: the counts are twice the
    proposed weights and the shares are the achieved ones, within the residual of the target."""
    advice = advise_json(capsys, "--mqsc", str(folder), "--queue", queue, "--target", target)
    weights = {p["channel"]: p["clwlwght"] for p in advice["proposal"]}
    assert apply_weights(folder, weights) >= len(weights)
    per_qmgr = Counter()
    for p in advice["proposal"]:
        per_qmgr[p["qmgr"]] += p["clwlwght"]
    total = sum(per_qmgr.values())
    counts = routed_shares(capsys, folder, queue, 2 * total)
    assert counts == Counter({q: 2 * w for q, w in per_qmgr.items()})
    for qmgr, n in counts.items():
        assert 100 * n / (2 * total) == pytest.approx(advice["achieved"][qmgr], abs=1e-4)
    for qmgr, share in advice["target"].items():
        assert abs(advice["achieved"].get(qmgr, 0.0) - share) <= advice["max_residual"] + 1e-4
    again = advise_json(capsys, "--mqsc", str(folder), "--queue", queue, "--target", target)
    assert again["commands"] == [] and again["achieved"] == advice["achieved"]  # applied: nothing left to change
    return advice


def test_proposal_applied_to_handmade_captures_routes_to_the_target(tmp_path, capsys):
    """Three destinations at 50 each, target QM2 45, QM3 35, QM4 20 (9:7:4): the anchor QM2 takes s, QM3
    round(7s/9), QM4 round(4s/9), exact for s = 9k; none of 50 is reachable exactly (QM3 50 needs s = 64.3,
    QM4 50 s = 112.5), so every exact s changes all three, and the sum nearest today's 150 is 20s/9 = 150,
    s = 67.5: s = 63 (sum 140) or 72 (sum 160), both 10 away: the smaller, 63, 49, 28. Routed 280 messages:
    126, 98, 56."""
    folder = tmp_path / "QM1"
    folder.mkdir()
    (folder / "qm1.mqsc").write_text(config_capture("QM1", {"QM2": {}, "QM3": {}, "QM4": {}},
                                                    {"APP.Q": {"QM2": {}, "QM3": {}, "QM4": {}}}), encoding="utf-8")
    advice = check_through_route(capsys, folder, "APP.Q", "QM2=45,QM3=35,QM4=20")
    assert [(p["channel"], p["clwlwght"]) for p in advice["proposal"]] == [("TO.QM2", 63), ("TO.QM3", 49),
                                                                           ("TO.QM4", 28)]
    assert advice["achieved"] == {"QM2": 45.0, "QM3": 35.0, "QM4": 20.0} and advice["max_residual"] == 0.0


def test_proposal_applied_to_the_sample_captures_routes_to_the_target(tmp_path, capsys):
    """The samples' QM1 at 18:00 on 2026-11-20: APP.ORDERS on QM1 (CLWLUSEQ(ANY): the local instance competes
    with QM1's own TO.QM1, 50), QM2 (TO.QM2, 80), QM3 (TO.QM3, 50), and QM4, PUT(DISABLED) by then. Target
    QM1 20, QM2 50, QM3 30: the anchor QM2 takes s, QM1 round(2s/5), QM3 round(3s/5), exact for s = 5k; s = 80
    keeps QM2 at 80 (QM1 32, QM3 48), the one exact scale with a queue manager unchanged. Routed 320 messages:
    64, 160, 96. QM4 is named nowhere in the target, so its step-1 elimination is a note, not a block."""
    folder = tmp_path / "QM1"
    folder.mkdir()
    for name in ("config_180000.mqsc", "chstatus_180000.mqsc"):
        shutil.copy(SAMPLES / "2026-11-20" / "QM1" / name, folder / name)
    advice = check_through_route(capsys, folder, "APP.ORDERS", "QM1=20,QM2=50,QM3=30")
    assert {p["channel"]: p["clwlwght"] for p in advice["proposal"]} == {"TO.QM1": 32, "TO.QM2": 80, "TO.QM3": 48}
    assert advice["blocked"] == [] and any("QM4 takes nothing" in n for n in advice["notes"])


def test_text_output_names_shares_blocks_side_effects_and_commands(tmp_path, capsys):
    """Q on QM2, QM3 and QM4 (PUT(DISABLED)), B on QM2 and QM5. Target Q: QM2 80, QM4 20: QM4 is blocked at
    step 1, and what is left all goes to QM2: the anchor QM2 takes s, QM3 (target 0) round(0) kept at 1; QM3's
    share 100/(s+1) is least at s = 99: 99 and 1. B shares TO.QM2 with TO.QM5 (50): 50 % before, 99/149 after.
    The commands are printed per queue manager, not run: the captures are unchanged."""
    folder = tmp_path / "QM1"
    folder.mkdir()
    capture = config_capture("QM1", {"QM2": {}, "QM3": {}, "QM4": {}, "QM5": {}},
                             {"Q": {"QM2": {}, "QM3": {}, "QM4": {"PUT": "DISABLED"}}, "B": {"QM2": {}, "QM5": {}}})
    (folder / "qm1.mqsc").write_text(capture, encoding="utf-8")
    (folder / "qm1_status.mqsc").write_text(chstatus_capture("QM1", {"TO.QM2": "RUNNING"}), encoding="utf-8")
    code = main(["advise", "--mqsc", str(folder), "--queue", "Q", "--target", "QM2=80,QM4=20"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "Advice for Q from QM1 (profile default): target QM2 80 %, QM4 20 %" in out
    assert re.search(r"QM2\s+TO\.QM2\s+50\s+99", out) and re.search(r"QM3\s+TO\.QM3\s+50\s+1", out)
    assert re.search(r"QM2\s+80\.00\s+50\.00\s+99\.00\s+\+19\.00", out)
    assert "QM4 (step 1, put-disabled): QM4's instance of Q is PUT(DISABLED)" in out
    assert "instead: on QM4: ALTER QLOCAL(Q) PUT(ENABLED)" in out
    assert "QM3 (step 12, zero-target)" in out
    assert "B: QM2 50.00 -> 66.44; QM5 50.00 -> 33.56" in out
    assert ("  runmqsc QM2:\n    ALTER CHANNEL(TO.QM2) CHLTYPE(CLUSRCVR) CLWLWGHT(99)\n"
            "  runmqsc QM3:\n    ALTER CHANNEL(TO.QM3) CHLTYPE(CLUSRCVR) CLWLWGHT(1)\n") in out
    assert (folder / "qm1.mqsc").read_text(encoding="utf-8") == capture


def test_json_has_the_issue_keys(tmp_path, capsys):
    folder = tmp_path / "QM1"
    folder.mkdir()
    (folder / "qm1.mqsc").write_text(config_capture("QM1", {"QM2": {}, "QM3": {}}, {"Q": {"QM2": {}, "QM3": {}}}),
                                     encoding="utf-8")
    advice = advise_json(capsys, "--mqsc", str(folder), "--queue", "Q", "--target", "QM2=80,QM3=20")
    assert {"queue", "proposal", "achieved", "side_effects", "blocked", "commands"} <= set(advice)
    assert advice["queue"] == "Q" and advice["achieved"] == {"QM2": 80.0, "QM3": 20.0}
    assert advice["proposal"][0] == {"qmgr": "QM2", "channel": "TO.QM2", "clwlwght": 80, "current": 50}
    assert advice["commands"][0] == {"qmgr": "QM2", "channel": "TO.QM2",
                                     "command": "ALTER CHANNEL(TO.QM2) CHLTYPE(CLUSRCVR) CLWLWGHT(80)"}


@pytest.mark.parametrize("args, says", [
    (["--queue", "Q", "--target", "QM2=60,QM3=30"], "--target: the shares add up to 90, not 100"),
    (["--queue", "Q", "--target", "QM2=50,QM9=50"], "--target: QM9 hosts no instance of Q"),
    (["--queue", "NO.SUCH", "--target", "QM2=100"], "--queue: NO.SUCH is not a cluster queue known to QM1"),
    (["--queue", "Q", "--target", "QM2:50,QM3:50"], "--target: 'QM2:50' is not QMGR=PERCENT"),
    (["--queue", "Q", "--target", "QM2=100", "--date", "2026-11-20"], "--lake and --date go together"),
    (["--queue", "Q", "--target", "QM2=100", "--lake", "{tmp}/nolake", "--date", "2026-11-20"],
     "no lake at {tmp}/nolake"),
    (["--queue", "Q", "--target", "QM2=100", "--lake", "{tmp}", "--date", "2026-11-20"],
     "--lake: {tmp} holds no silver.config_history"),
    (["--queue", "Q", "--target", "QM2=100", "--at", "07:00"], "--at 07:00 chooses among the captures of a landing"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, says):
    folder = tmp_path / "QM1"
    folder.mkdir()
    (folder / "qm1.mqsc").write_text(config_capture("QM1", {"QM2": {}, "QM3": {}}, {"Q": {"QM2": {}, "QM3": {}}}),
                                     encoding="utf-8")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code = main(["advise", "--mqsc", str(folder), *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("clwl advise: ") and says.replace("{tmp}", str(tmp_path)) in err


@pytest.mark.spark
@pytest.mark.slow
def test_lake_replay_shows_the_day_before_and_after(samples_lake, capsys):
    """The published samples, 2026-11-20, QM1's puts to APP.ORDERS replayed as captured (the published
    gold.routing_replay's final destinations, message for message) and with the proposal for QM1 20, QM2 50,
    QM3 30 (TO.QM1 32, TO.QM3 48: the sample test above): the same messages, other destinations."""
    from clwl.lake.door import Lake, read_rows

    advice = advise_json(capsys, "--mqsc", str(samples_lake.landing / "2026-11-20" / "QM1"), "--queue", "APP.ORDERS",
                         "--target", "QM1=20,QM2=50,QM3=30", "--lake", str(samples_lake.lake),
                         "--date", "2026-11-20")
    replay = advice["replay"]
    rows = read_rows(Lake(samples_lake.lake).table("gold.routing_replay"),
                     ["sending_qmgr", "queue", "final_qmgr", "run_date"]).to_pylist()
    published = Counter(r["final_qmgr"] or "(error)" for r in rows if r["sending_qmgr"] == "QM1"
                        and r["queue"] == "APP.ORDERS" and r["run_date"].isoformat() == "2026-11-20")
    assert replay["before_messages"] == dict(published) and replay["messages"] == sum(published.values()) > 0
    assert sum(replay["after_messages"].values()) == replay["messages"]
    assert replay["after_messages"] != replay["before_messages"] and replay["unknown_channels"] == []
    # Why the day lands away from the target (issue 39 item 8), from the samples' story (samples/README.md): the
    # advice is on the 18:00 captures, where QM4's APP.ORDERS is PUT(DISABLED) (17:55); before, from the
    # configuration carried into the day until the 18:00 capture, QM4 was enabled and took a long-run share: one
    # configuration period, 00:00-18:00, and what CLWL placed freely came after it, never to QM4. orders-recon names
    # QM3 at HH:40 from 09 to 17: 9 messages. Every message has one cause or is free.
    assert replay["away"] and replay["gap"] > 1
    assert replay["causes"]["named-qmgr"] == 9
    assert sum(replay["causes"].values()) + replay["free_messages"] == replay["messages"]
    (period,) = replay["configurations"]
    assert (period["from"], period["to"]) == ("2026-11-20T00:00:00+00:00", "2026-11-20T18:00:00+00:00")
    assert period["shares"]["QM4"] > 0 and replay["free_messages"] > 0 and "QM4" not in replay["free_counts"]
    code = main(["advise", "--mqsc", str(samples_lake.landing / "2026-11-20" / "QM1"), "--queue", "APP.ORDERS",
                 "--target", "QM1=20,QM2=50,QM3=30", "--lake", str(samples_lake.lake), "--date", "2026-11-20"])
    out, _ = capsys.readouterr()
    assert code == 0 and f"Replayed 2026-11-20: QM1's {replay['messages']} message(s) to APP.ORDERS" in out
    assert f"\n  it lands {replay['gap']:.2f} percentage points away from the target at most." in out
    assert re.search(r"^ +9  named-qmgr ", out, re.M) and "  configuration 00:00-18:00: long-run shares " in out
    assert "on the messages CLWL was free to place, the target reaches:" in out
    # Captures that are not a landing folder: the other senders come from the lake's configuration at the end of
    # the day; QM5's APP.BILLING moves with TO.QM3 (50 -> 48), as from the landing (tests/unit/test_advise_others.py).
    folder = samples_lake.landing / "2026-11-20" / "QM1"
    files = advise_json(capsys, "--mqsc", str(folder / "config_180000.mqsc"), "--mqsc", str(folder / "chstatus_180000.mqsc"),
                        "--queue", "APP.ORDERS", "--target", "QM1=20,QM2=50,QM3=30", "--lake", str(samples_lake.lake),
                        "--date", "2026-11-20")
    assert files["other_senders_from"].startswith("the configuration of ") and "at the end of 2026-11-20" in \
        files["other_senders_from"]
    (qm5,) = [e for e in files["other_senders"] if e["sender"] == "QM5"]
    assert (qm5["queue"], qm5["after"]["QM3"]) == ("APP.BILLING", round(4800 / 178, 4))
