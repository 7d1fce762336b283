"""``clwl generate --event``: planned events on chosen days (issue 42 item 4), and the generator's split into modules
by what they render (issue 41 item 7) pinned to the bytes the generator wrote before it.

The estate of most tests has no random event and no special put (every rate and share 0), one cluster queue with three
instances, so what each planned event does can be derived by hand from docs/algorithm.md."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest

from clwl.cli import main
from clwl.engine.view import parse_capture_file
from clwl.generate import GenerateOptions, generate
from clwl.generate.build import build_estate

QUIET = dict(outages=0.0, suspends=0.0, weight_changes=0.0, priority_changes=0.0, put_disabled=0.0,
             bind_open_share=0.0, bind_group_share=0.0, named_qmgr_share=0.0, skew=0, broken_records=0)
# seed 7, one queue: APP.ORDERS on QM03, QM04, QM05 (CLWLWGHT 50, 50, 25); senders QM01, QM02 (QM02's puts.csv has
# the application column)
ESTATE = dict(seed=7, days=4, queues=1, messages_per_day=2000, observed_every=1, **QUIET)
EVENTS = ("2:weight:QM05=80", "3:outage:QM03@1000-1200", "3:disable:APP.ORDERS@QM04",
          "2026-11-22:bind-on-open:qm02-svc")
DAYS = ("2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22")


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("events") / "landing"
    return out, generate(GenerateOptions(out=str(out), quiet=True, events=EVENTS, **ESTATE))


def _records(path: Path, kind: str) -> list[dict]:
    return [r.attrs for r in parse_capture_file(path).records if r.kind == kind]


def _captures(root: Path, qm: str, prefix: str) -> list[tuple[str, str, Path]]:
    """(day, HHMMSS, file) of a queue manager's captures, in time order."""
    return sorted((d, p.stem.split("_")[1], p) for d in DAYS for p in (root / d / qm).glob(f"{prefix}_*.mqsc"))


def _puts(root: Path, day: str, qm: str) -> list[dict]:
    with open(root / day / qm / "puts.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --------------------------------------------------------------------------------------------------
# the ground truth lists each planned event


def test_the_truth_lists_each_planned_event_with_its_day_kind_subject_and_values(planned):
    _, truth = planned
    weights = {q["name"]: q["initial_clwlwght"] for q in truth["estate"]["qmgrs"]}
    assert (weights["QM03"], weights["QM04"], weights["QM05"]) == (50, 50, 25)
    got = truth["planned_events"]
    # in time order: the lasting changes at 06:00 (05:59:59 plus the one-second lead), the outage in its window
    assert [(p["day"], p["date"], p["kind"], p["given"]) for p in got] == [
        (2, "2026-11-20", "weight_change", "2:weight:QM05=80"),
        (3, "2026-11-21", "put_disabled", "3:disable:APP.ORDERS@QM04"),
        (3, "2026-11-21", "outage", "3:outage:QM03@1000-1200"),
        (4, "2026-11-22", "bind_on_open", "2026-11-22:bind-on-open:qm02-svc")]
    weight, disable, outage, bind = got
    assert weight["subject"] == {"mq_clusters": ["CL1"], "qmgr": "QM05", "channels": ["TO.QM05"]}
    assert (weight["attribute"], weight["old"], weight["new"], weight["lasting"]) == ("CLUSRCVR CLWLWGHT", 25, 80,
                                                                                       True)
    assert (weight["altdate"], weight["alttime"]) == ("2026-11-20", "05.59.59")
    assert disable["subject"] == {"mq_cluster": "CL1", "queue": "APP.ORDERS", "qmgr": "QM04"}
    assert (disable["old"], disable["new"], disable["end"], disable["lasting"]) == ("ENABLED", "DISABLED", None, True)
    assert outage["subject"]["qmgr"] == "QM03" and outage["lasting"] is False
    assert (outage["start"], outage["end"]) == ("2026-11-21T10:00:00.000Z", "2026-11-21T12:00:00.000Z")
    assert "old" not in outage
    assert bind["subject"] == {"sender": "QM02", "application": "qm02-svc"}
    assert bind["new"] == "MQOO_BIND_ON_OPEN"
    # each is one of the estate's events, marked planned; there is no other event (every rate is 0)
    assert [e["planned"]["given"] for e in truth["events"]] == list(p["given"] for p in got)
    assert all(truth["events"][p["event"]]["kind"] == p["kind"] for p in got)
    assert truth["args"]["events"] == list(EVENTS)


# --------------------------------------------------------------------------------------------------
# each event in the captures and put files on its day, not before


def test_a_weight_change_shows_in_the_captures_from_its_day_on_with_its_altdate(planned):
    root, _ = planned
    seen = [(d, hhmmss, r["CLWLWGHT"], r["ALTDATE"], r["ALTTIME"])
            for d, hhmmss, p in _captures(root, "QM01", "config")
            for r in _records(p, "CLUSQMGR") if r["CLUSQMGR"] == "QM05"]
    before = [s for s in seen if (s[0], s[1]) < ("2026-11-20", "060000")]
    after = [s for s in seen if (s[0], s[1]) >= ("2026-11-20", "060000")]
    assert before and {s[2] for s in before} == {"25"}
    assert after[0][:2] == ("2026-11-20", "060000") and {s[0] for s in after} == set(DAYS[1:])
    assert {s[2:] for s in after} == {("80", "2026-11-20", "05.59.59")}


def test_the_routing_follows_the_weight_from_its_day_on(planned):
    """Step 12 (docs/algorithm.md): each choice adds 1000/CLWLWGHT to the chosen channel's DestSeqFactor and the
    lowest factor is chosen next, so over N choices each instance is chosen N * CLWLWGHT / sum(CLWLWGHT) times,
    within one. Day 1: 50, 50, 25 -> 2/5, 2/5, 1/5 of a sender's puts; day 2 (QM05 80 from before the first
    put): 50, 50, 80 -> 5/18, 5/18, 8/18."""
    _, truth = planned
    weights = {"2026-11-19": {"QM03": 50, "QM04": 50, "QM05": 25}, "2026-11-20": {"QM03": 50, "QM04": 50, "QM05": 80}}
    checked = 0
    for day in truth["traffic"]:
        if day["day"] not in weights:
            continue
        w = weights[day["day"]]
        got = day["by_queue_and_destination"]["APP.ORDERS"]
        for qm, weight in w.items():
            assert abs(got[qm] - day["puts"] * weight / sum(w.values())) <= 1, (day["day"], day["sender"], qm)
            checked += 1
    assert checked == 12


def test_an_outage_shows_in_the_status_captures_and_the_routing_on_its_day_only(planned):
    root, _ = planned
    retrying = [(d, hhmmss) for d, hhmmss, p in _captures(root, "QM01", "chstatus")
                for r in _records(p, "CHSTATUS") if r["CHANNEL"] == "TO.QM03" and r["STATUS"] == "RETRYING"]
    # the capture at 10:00 shows it; the one at 12:00 shows it back; no other day has it (a one-day event)
    assert retrying == [("2026-11-21", "100000")]
    # a RETRYING channel is chosen only when no RUNNING one is eligible (docs/algorithm.md, channel state): in the
    # window every put goes to QM05 (QM04's instance is PUT(DISABLED) that day); before it, QM03 has its share
    for qm in ("QM01", "QM02"):
        rows = _puts(root, "2026-11-21", qm)
        window = [r["observed_qmgr"] for r in rows if "T10:00" <= r["put_time"][10:16] < "T12:00"]
        earlier = [r["observed_qmgr"] for r in rows if r["put_time"][10:16] < "T10:00"]
        assert window and set(window) == {"QM05"}
        assert "QM03" in earlier


def test_a_disabled_instance_shows_put_disabled_from_its_day_on_and_gets_no_message(planned):
    root, truth = planned
    put = {(d, hhmmss): r["PUT"] for d, hhmmss, p in _captures(root, "QM01", "config")
           for r in _records(p, "QCLUSTER") if r["QUEUE"] == "APP.ORDERS" and r["CLUSQMGR"] == "QM04"}
    assert {v for k, v in put.items() if k < ("2026-11-21", "060000")} == {"ENABLED"}
    assert {v for k, v in put.items() if k >= ("2026-11-21", "060000")} == {"DISABLED"}
    assert {d for d, _ in put if put[(d, _)] == "DISABLED"} == {"2026-11-21", "2026-11-22"}  # lasting
    to_qm04 = {(d["day"], d["sender"]): d["by_queue_and_destination"]["APP.ORDERS"].get("QM04", 0)
               for d in truth["traffic"]}
    assert all(n > 0 for (day, _), n in to_qm04.items() if day < "2026-11-21")
    assert all(n == 0 for (day, _), n in to_qm04.items() if day >= "2026-11-21")


def test_an_application_switching_to_bind_on_open_shows_in_its_put_records_from_its_day_on(planned):
    root, truth = planned
    day3, day4 = _puts(root, "2026-11-21", "QM02"), _puts(root, "2026-11-22", "QM02")
    assert {(r["application"], r["bind"]) for r in day3} == {("qm02-svc", "notfixed")}
    assert {(r["application"], r["bind"]) for r in day4} == {("qm02-svc", "open")}
    # one handle a queue, kept open all day as a long-running service does: the first put on it chooses, the
    # others follow (zero token, 002)
    handles = {r["open_handle"] for r in day4}
    assert all(h.startswith("qm02-svc:") for h in handles)
    assert len(handles) == len({r["queue"] for r in day4})
    assert {r["accounting_token"] for r in day4} == {"0" * 64}
    for h in handles:
        assert len({r["observed_qmgr"] for r in day4 if r["open_handle"] == h}) == 1
    # the other sender's application is not changed
    assert {r["bind"] for r in _puts(root, "2026-11-22", "QM01")} == {"notfixed"}
    q2 = {d["day"]: d["by_kind"] for d in truth["traffic"] if d["sender"] == "QM02"}
    assert q2["2026-11-21"]["open"] == 0 and q2["2026-11-22"]["notfixed"] == 0 and q2["2026-11-22"]["open"] > 0


def test_bind_on_open_shows_in_the_activity_trace_as_the_open_options_of_the_application(tmp_path):
    generate(GenerateOptions(out=str(tmp_path), quiet=True, seed=7, days=2, messages_per_day=600,
                             puts_format="activity-trace", events=("2:bind-on-open:qm01-svc",), **QUIET))
    mqoo_bind_on_open, mqoo_bind_not_fixed = 0x4000, 0x8000  # cmqc.h

    def svc_open_options(day: str) -> set[int]:
        text = (tmp_path / day / "QM01" / f"QM01.{day}.amqsact").read_text()
        return {int(line.split(":")[1]) for block in text.split("MonitoringType: ")
                if "ApplicationName: 'qm01-svc'" in block
                for line in block.splitlines() if line.strip().startswith("Open_options:")}

    before, after = svc_open_options("2026-11-19"), svc_open_options("2026-11-20")
    assert before and all(o & mqoo_bind_not_fixed and not o & mqoo_bind_on_open for o in before)
    assert after and all(o & mqoo_bind_on_open and not o & mqoo_bind_not_fixed for o in after)


# --------------------------------------------------------------------------------------------------
# random events do not blur a planned one; subjects left out are chosen from the seed


def test_no_random_event_that_day_concerns_a_planned_event_s_queue_manager():
    busy = dict(seed=11, days=3, outages=3.0, suspends=3.0, weight_changes=3.0, priority_changes=3.0,
                put_disabled=3.0)

    def concerning(est, day: str, qm: str) -> list[str]:
        return [e.kind for e in est.events if e.start.date().isoformat() == day and e.qmgr == qm and not e.planned]

    plain = build_estate(GenerateOptions(out="", **busy))
    hosts = sorted({e.qmgr for e in plain.events if e.start.date().isoformat() == "2026-11-20"
                    and e.kind in ("outage", "suspend", "weight_change", "priority_change")})
    qm = hosts[0]
    assert concerning(plain, "2026-11-20", qm)  # without the planned event that day has random ones on qm
    est = build_estate(GenerateOptions(out="", events=(f"2:weight:{qm}", f"2:outage:{qm}@1400-1500"), **busy))
    assert concerning(est, "2026-11-20", qm) == []
    assert len([e for e in est.events if e.planned]) == 2
    # the random ones on other days and queue managers are still there
    assert [e for e in est.events if not e.planned and e.start.date().isoformat() != "2026-11-20"]


def test_a_subject_left_out_is_chosen_from_the_seed_and_written_out():
    def chosen(seed: int) -> list[tuple]:
        est = build_estate(GenerateOptions(out="", seed=seed, days=3, events=("1:weight", "2:outage", "2:disable",
                                                                              "3:bind-on-open"), **QUIET))
        return [(e.kind, e.qmgr, e.queue, e.new, (e.detail or {}).get("application")) for e in est.events]

    first = chosen(5)
    assert first == chosen(5)  # the same seed chooses the same
    assert [k for k, *_ in first] == ["weight_change", "put_disabled", "outage", "bind_on_open"]
    assert all(qm for _, qm, *_ in first) and first[0][3] is not None and first[3][4].endswith("-svc")
    assert any(chosen(s) != first for s in (6, 7, 8))


# --------------------------------------------------------------------------------------------------
# bad --event values: one line, exit 2, nothing written or replaced


@pytest.mark.parametrize("event, says", [
    ("5:weight", "--event '5:weight': day 5 is outside the 4 generated day(s) (1-4: 2026-11-19 to 2026-11-22)"),
    ("2026-11-30:outage", "day 2026-11-30 is outside the 4 generated day(s)"),
    ("0:outage", "day 0 is outside"),
    ("monday:outage", "day 'monday' is neither a day number (1-4) nor a date YYYY-MM-DD"),
    ("2:flood", "unknown kind 'flood' (one of weight, outage, disable, bind-on-open)"),
    ("2", "expected DAY:KIND[:ARGS]"),
    ("2:weight:QM99", "no back end QM99 hosts a cluster queue instance (one of QM03, QM04, QM05)"),
    ("2:weight:QM05=0", "CLWLWGHT '0' is not a whole number from 1 to 99"),
    ("2:weight:QM05=25", "CLWLWGHT of QM05 is 25 on that day already"),
    ("2:outage:QM03@1015-1200", "outage window '1015-1200': HHMM-HHMM on half-hour marks"),
    ("2:disable:APP.NONE@QM03", "no instance APP.NONE@QM03 on a back end"),
    ("2:bind-on-open:qm09-svc", "no application qm09-svc (one of qm01-svc, qm02-svc)"),
    ("2:bind-on-open:qm01-batch", "qm01-batch binds or names its queue manager already"),
])
def test_a_bad_event_is_one_line_naming_it_and_exit_2(tmp_path, capsys, event, says):
    out = tmp_path / "landing"
    out.mkdir()
    (out / "2026-11-19").mkdir()  # what --force would replace: left as it was
    argv = ["generate", "--out", str(out), "--force", "--quiet", "--days", "4", "--queues", "1", "--seed", "7",
            "--event", event]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"clwl generate: --event {event!r}: ") and says in err, err
    assert [p.name for p in out.iterdir()] == ["2026-11-19"]


def test_two_planned_events_that_cannot_both_happen_are_refused(capsys):
    for events, says in [(("2:outage:QM03", "2:outage:QM04@1130-1300"), "overlaps '2:outage:QM03'"),
                         (("2:disable:APP.ORDERS@QM03", "3:disable:APP.ORDERS@QM04", "3:disable:APP.ORDERS@QM05"),
                          "would disable the last enabled instance of APP.ORDERS")]:
        argv = ["generate", "--out", "/nonexistent/never-written", "--quiet", "--days", "4", "--queues", "1",
                "--seed", "7"] + [a for e in events for a in ("--event", e)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, err


# --------------------------------------------------------------------------------------------------
# the split of the generator's modules (issue 41 item 7) changed no byte


#: Three small estates that between them run every module of the generator (captures as runmqsc, REST JSON and
#: CSQUTIL; every random event, partitions, skews, broken records; the put and channel traces as JSON; the
#: queue-sharing group), and the digest of their files as the generator wrote them before the split (commit
#: af857ba): the sha256 over each file's path and sha256, in path order.
SPLIT_CASES = {
    "csv": (dict(seed=21, days=2, messages_per_day=1500, qmgrs=10, clusters=2, rest_qmgrs=2, outages=1.0,
                 suspends=1.0, weight_changes=1.0, priority_changes=1.0, put_disabled=1.0, partitions=1.0, skew=2,
                 broken_records=5, observed_every=2),
            "5a6d48f16f074b4bfa9f2d3e167d895b28f9643c48bfd2107d7d3becbb33231c"),
    "trace": (dict(seed=22, days=2, messages_per_day=1500, puts_format="activity-trace", channel_trace=True,
                   channel_trace_ends="both", trace_format="json"),
              "744bbd336be4b98c2066f0e5482a1137ea637288e97230d58e8515f31f78ccad"),
    "qsg": (dict(seed=23, days=2, messages_per_day=1500, qsg=3, qsg_igq_changes=1.0),
            "7cbfa0422fcec1c430e27e6fc67e49dcc5ebe09f4774f0ecda38d91d5991bd38"),
}


@pytest.mark.parametrize("case", sorted(SPLIT_CASES))
def test_the_generator_writes_the_bytes_it_wrote_before_its_split(tmp_path, case):
    options, expected = SPLIT_CASES[case]
    generate(GenerateOptions(out=str(tmp_path), quiet=True, **options))
    h = hashlib.sha256()
    files = [p for p in sorted(tmp_path.rglob("*")) if p.is_file()]
    for p in files:
        h.update(str(p.relative_to(tmp_path)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    assert len(files) > 100
    assert h.hexdigest() == expected
