"""`clwl drift` (issue 28): what changed in the configuration since the previous run date, and its effect on the
configured shares, from hand-made silver.config_history rows (dicts in the table's shape), without Spark.

The estate (QM1's view, cluster CL1; the run date D = 2026-11-20, the baseline the configuration in force at its
start, 2026-11-20 00:00 UTC, the end of 2026-11-19). Every version below opens at 2026-11-19 06:00 unless said:

  QMGR QM1 (CLWLMRUC 999999999), CLUSRCVR TO.QM1, CLUSSDRA TO.QM2 and TO.QM3 (CLWLWGHT 50 each),
  QCLUSTER APP.Q on QM2 and on QM3 (PUT ENABLED), QLOCAL APP.LOCAL (CURDEPTH 0).

  D 09:00  TO.QM2 CLWLWGHT 50 -> 75, ALTDATE/ALTTIME 2026-11-20 08.55.00 (an ALTER), CLUSTIME renewed,
           STATUS RUNNING -> INACTIVE                    one Change: CLWLWGHT 50 -> 75, stamp "altered ... 08:55:00"
  D 10:00  TO.QM3 STATUS RUNNING -> RETRYING, CLUSDATE/CLUSTIME renewed    no Change: none is configuration
  D 11:00  APP.LOCAL CURDEPTH 0 -> 40, IPPROCS 0 -> 1                       no Change: runtime counters
  D 12:00  APP.Q on QM3 gone (its version ends, no successor)               one Change: (object) (present) -> (absent)
  D 15:00  CLUSQMGR QM4 (TO.QM4, CLWLWGHT 50) and APP.Q on QM4 appear      two Changes: (absent) -> (present)
  D 18:00  APP.Q on QM2 PUT ENABLED -> DISABLED                             one Change: PUT ENABLED -> DISABLED
  (D 07:00 a CHSTATUS row, which is channel status, not configuration: nothing)

The configured shares of APP.Q on QM1 (docs/algorithm.md): step 1 drops PUT(DISABLED) instances; with several
candidates left and nothing stateful (CLWLMRUC above the number of channels), step 12 chooses the least recently
used and adds 1000 / CLWLWGHT to the chosen one's DestSeqFactor, so each candidate i gets w_i / W of the messages
(clwl/engine/shares.py's docstring), W the sum of the candidates' weights:

  baseline  QM2 50, QM3 50 of W 100                       50 % / 50 %
  09:00     QM2 75, QM3 50 of W 125                       60 % / 40 %
  10:00, 11:00: the engine's view is the same (channel status is set RUNNING for the configured share; a queue
            depth is not in the view): no effect
  12:00     QM3 has no instance left: QM2 alone           100 %  (QM3 0 %)
  15:00     QM2 75, QM4 50 of W 125                       QM2 60 %, QM4 40 %
  18:00     QM2 dropped by step 1: QM4 alone              QM2 0 %, QM4 100 %
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from clwl.analyses.drift import (
    ABSENT,
    FLAG,
    NOT_SHOWN,
    OBJECT,
    PRESENT,
    DriftError,
    compare,
    drift_from_rows,
    not_configuration,
    object_label,
    versions_by_qmgr,
)
from clwl.cli.drift import readable
from clwl.engine.view import record_identity
from clwl.parse.common import MqscRecord

DAY = "2026-11-20"
UTC = timezone.utc


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


BASE = at(19, 6)


def row(kind: str, attrs: dict, valid_from: datetime = BASE, valid_to: datetime | None = None,
        qmgr: str = "QM1") -> dict:
    """A silver.config_history row: its object_key is the ingest's (clwl/engine/view.py record_identity, joined)."""
    key = "|".join(str(p) for p in record_identity(MqscRecord(kind, attrs, "", 0)))
    stamp = valid_from.strftime("%H%M%S")
    return {"observing_qmgr": qmgr, "kind": kind, "object_key": key, "attrs": attrs, "valid_from": valid_from,
            "valid_to": valid_to, "source_file": f"{valid_from:%Y-%m-%d}/{qmgr}/config_{stamp}.mqsc"}


def qmgr_attrs(name: str = "QM1") -> dict:
    return {"QMNAME": name, "CLWLMRUC": "999999999", "CLWLUSEQ": "LOCAL", "DEFCLXQ": "SCTQ",
            "QMID": f"{name}_2024-01-01_00.00.00", "ALTDATE": "2024-01-01", "ALTTIME": "00.00.00"}


def clusqmgr(qmgr: str, weight: int = 50, deftype: str = "CLUSSDRA", status: str = "RUNNING",
             altered: tuple[str, str] = ("2024-01-01", "00.00.00"), clustime: str = "05.00.00") -> dict:
    return {"CLUSQMGR": qmgr, "CHANNEL": f"TO.{qmgr}", "CLUSTER": "CL1", "CLWLPRTY": "0", "CLWLRANK": "0",
            "CLWLWGHT": str(weight), "DEFTYPE": deftype, "NETPRTY": "0", "QMID": f"{qmgr}_2024-01-01_00.00.00",
            "QMTYPE": "NORMAL", "STATUS": status, "SUSPEND": "NO", "ALTDATE": altered[0], "ALTTIME": altered[1],
            "CLUSDATE": "2026-11-19", "CLUSTIME": clustime,
            "XMITQ": "" if deftype == "CLUSRCVR" else "SYSTEM.CLUSTER.TRANSMIT.QUEUE"}


def qcluster(host: str, put: str = "ENABLED", altered: tuple[str, str] = ("2024-01-01", "00.00.00")) -> dict:
    return {"QUEUE": "APP.Q", "TYPE": "QCLUSTER", "CLUSQMGR": host, "CLUSQT": "QLOCAL", "CLUSTER": "CL1",
            "CLWLPRTY": "0", "CLWLRANK": "0", "DEFBIND": "NOTFIXED", "PUT": put, "QMID": f"{host}_2024-01-01_00.00.00",
            "ALTDATE": altered[0], "ALTTIME": altered[1], "CLUSDATE": "2026-11-19", "CLUSTIME": "05.00.00"}


def qlocal(depth: int, ipprocs: int = 0) -> dict:
    return {"QUEUE": "APP.LOCAL", "TYPE": "QLOCAL", "CURDEPTH": str(depth), "IPPROCS": str(ipprocs),
            "OPPROCS": "0", "PUT": "ENABLED", "ALTDATE": "2024-01-01", "ALTTIME": "00.00.00"}


def estate() -> list[dict]:
    """The module docstring's history."""
    altered = ("2026-11-20", "08.55.00")
    return [
        row("QMGR", qmgr_attrs()),
        row("CLUSQMGR", clusqmgr("QM1", deftype="CLUSRCVR")),
        row("CLUSQMGR", clusqmgr("QM2"), valid_to=at(20, 9)),
        row("CLUSQMGR", clusqmgr("QM2", 75, status="INACTIVE", altered=altered, clustime="08.55.02"), at(20, 9)),
        row("CLUSQMGR", clusqmgr("QM3"), valid_to=at(20, 10)),
        row("CLUSQMGR", clusqmgr("QM3", status="RETRYING", clustime="09.58.00"), at(20, 10)),
        row("QCLUSTER", qcluster("QM2"), valid_to=at(20, 18)),
        row("QCLUSTER", qcluster("QM2", "DISABLED", ("2026-11-20", "17.55.00")), at(20, 18)),
        row("QCLUSTER", qcluster("QM3"), valid_to=at(20, 12)),
        row("QLOCAL", qlocal(0), valid_to=at(20, 11)),
        row("QLOCAL", qlocal(40, 1), at(20, 11)),
        row("CLUSQMGR", clusqmgr("QM4", altered=("2026-11-20", "14.50.00")), at(20, 15)),
        row("QCLUSTER", qcluster("QM4", altered=("2026-11-20", "14.51.00")), at(20, 15)),
        row("CHSTATUS", {"CHANNEL": "TO.QM2", "STATUS": "RETRYING"}, at(20, 7)),
    ]


def captures() -> list[tuple[str, datetime]]:
    """QM1's configuration captures: one on 2026-11-19, seven on D."""
    return [("QM1", BASE)] + [("QM1", at(20, h)) for h in (6, 9, 10, 11, 12, 15, 18)]


def test_the_changes_of_the_day():
    """Each capture's changes against the configuration just before it (the module docstring's table): what is not
    configuration (STATUS, CLUSDATE/CLUSTIME, ALTDATE/ALTTIME, CURDEPTH, IPPROCS, channel status) makes none."""
    found = drift_from_rows(estate(), DAY)
    got = [(c.at, c.object, c.attribute, c.old, c.new, c.stamp) for c in found.changes]
    assert got == [
        (at(20, 9), "CLUSQMGR QM2 (TO.QM2, CL1)", "CLWLWGHT", "50", "75", "altered 2026-11-20 08:55:00"),
        (at(20, 12), "QCLUSTER APP.Q on QM3 (CL1)", OBJECT, PRESENT, ABSENT, None),
        (at(20, 15), "CLUSQMGR QM4 (TO.QM4, CL1)", OBJECT, ABSENT, PRESENT, "altered 2026-11-20 14:50:00"),
        (at(20, 15), "QCLUSTER APP.Q on QM4 (CL1)", OBJECT, ABSENT, PRESENT, "altered 2026-11-20 14:51:00"),
        (at(20, 18), "QCLUSTER APP.Q on QM2 (CL1)", "PUT", "ENABLED", "DISABLED", "altered 2026-11-20 17:55:00"),
    ]
    assert {c.qmgr for c in found.changes} == {"QM1"}
    assert found.changes[0].source_file == "2026-11-20/QM1/config_090000.mqsc"
    assert found.changes[1].source_file is None  # an object gone: no version, no file, shows it
    assert found.qmgrs == ("QM1",) and found.first_captured == {}
    assert found.since == "2026-11-19" and found.baseline_at == at(20, 0) and found.until == at(21, 0)


def test_the_effect_on_the_configured_shares():
    """The module docstring's shares: before and after each capture that moved them, and none for 10:00 and
    11:00 (status and queue depth are not in the configured share)."""
    found = drift_from_rows(estate(), DAY)
    got = [(e.at, e.queue, e.destinations()) for e in found.effects]
    assert got == [
        (at(20, 9), "APP.Q", [("QM2", 50.0, 60.0), ("QM3", 50.0, 40.0)]),
        (at(20, 12), "APP.Q", [("QM2", 60.0, 100.0), ("QM3", 40.0, 0.0)]),
        (at(20, 15), "APP.Q", [("QM2", 100.0, 60.0), ("QM4", 0.0, 40.0)]),
        (at(20, 18), "APP.Q", [("QM2", 60.0, 0.0), ("QM4", 40.0, 100.0)]),
    ]
    assert {e.qmgr for e in found.effects} == {"QM1"}


def test_a_put_that_fails_after_the_change_has_no_destination():
    """APP.Q on QM2 alone, put-disabled at 12:00: step 1 drops it and no candidate remains, so the engine's put
    fails (no destination at all, not 0 % everywhere): the after side is empty."""
    rows = [row("QMGR", qmgr_attrs()), row("CLUSQMGR", clusqmgr("QM1", deftype="CLUSRCVR")),
            row("CLUSQMGR", clusqmgr("QM2")), row("QCLUSTER", qcluster("QM2"), valid_to=at(20, 12)),
            row("QCLUSTER", qcluster("QM2", "DISABLED"), at(20, 12))]
    [effect] = drift_from_rows(rows, DAY).effects
    assert (effect.before, effect.after) == ({"QM2": 100.0}, {})
    assert "QM2          100.0 %  -" in readable(drift_from_rows(rows, DAY))


def test_the_baseline_is_the_end_of_since():
    """--since 2026-11-18: the baseline is the configuration in force at 2026-11-19 00:00, before the estate's
    first capture (2026-11-19 06:00), so QM1 is compared from that capture on (first captured) and D's changes
    are the same; a change on 2026-11-19 itself is listed too."""
    rows = estate()
    rows[2] = {**rows[2], "valid_to": at(19, 12)}  # TO.QM2 50 -> 60 at 2026-11-19 12:00, then 75 at D 09:00
    rows.append(row("CLUSQMGR", clusqmgr("QM2", 60), at(19, 12), at(20, 9)))
    plain = drift_from_rows(rows, DAY)
    assert [(c.old, c.new) for c in plain.changes if c.attribute == "CLWLWGHT"] == [("60", "75")]
    wide = drift_from_rows(rows, DAY, since="2026-11-18")
    assert wide.first_captured == {"QM1": BASE} and wide.baseline_at == at(19, 0)
    assert [(c.at, c.old, c.new) for c in wide.changes if c.attribute == "CLWLWGHT"] == [
        (at(19, 12), "50", "60"), (at(20, 9), "60", "75")]
    assert len(wide.changes) == len(plain.changes) + 1


def test_a_queue_manager_first_captured_on_the_day_is_compared_from_its_first_capture():
    """QM9's history begins on D at 08:00 (nothing in force at the baseline): its first capture is not a change
    (it would list every object as appeared), only what changed after it, at 13:00."""
    rows = estate() + [
        row("QMGR", qmgr_attrs("QM9"), at(20, 8), qmgr="QM9"),
        row("CLUSQMGR", clusqmgr("QM2", 50), at(20, 8), at(20, 13), qmgr="QM9"),
        row("CLUSQMGR", clusqmgr("QM2", 70), at(20, 13), qmgr="QM9"),
    ]
    found = drift_from_rows(rows, DAY)
    assert found.first_captured == {"QM9": at(20, 8)}
    assert [(c.at, c.attribute, c.old, c.new) for c in found.changes if c.qmgr == "QM9"] == [
        (at(20, 13), "CLWLWGHT", "50", "70")]
    assert "QM9: first captured 2026-11-20 08:00:00 UTC" in readable(found)


def test_a_day_without_change_says_so():
    """2026-11-21: the versions in force at its start run on (valid_to null), so nothing changed; the captures of
    that day are counted (one at 06:00) and the readable answer says there was no change."""
    found = drift_from_rows(estate(), "2026-11-21", captures=captures() + [("QM1", at(21, 6))])
    assert found.changes == [] and found.effects == [] and found.captures == {"QM1": 1}
    text = readable(found)
    assert "No configuration change since the end of 2026-11-20." in text and "Changes" not in text


def test_captures_are_counted_and_a_day_without_any_is_refused():
    """The history records changes, not captures: the captures (bronze.capture_files) tell a day whose captures
    changed nothing from a day without captures, which cannot be compared."""
    found = drift_from_rows(estate(), DAY, captures=captures())
    assert found.captures == {"QM1": 7}
    with pytest.raises(DriftError, match=r"no configuration capture of 2026-11-22 .*nothing to compare \(the "
                                         r"lake's configuration captures run from 2026-11-19 06:00 to 2026-11-20 18:00"):
        drift_from_rows(estate(), "2026-11-22", captures=captures())


def test_no_configuration_and_bad_windows_are_refused():
    with pytest.raises(DriftError, match=r"no configuration in force on 2026-11-18 \(the history's first capture "
                                         r"is of 2026-11-19 06:00 UTC\)"):
        drift_from_rows(estate(), "2026-11-18")
    with pytest.raises(DriftError, match=r"no configuration in force on 2026-11-20 \(the history is empty\)"):
        drift_from_rows([], DAY)
    with pytest.raises(DriftError, match=r"--since 2026-11-20 is not before --date 2026-11-20"):
        drift_from_rows(estate(), DAY, since=DAY)
    only_status = [row("CHSTATUS", {"CHANNEL": "TO.QM2", "STATUS": "RUNNING"})]
    with pytest.raises(DriftError, match="history is empty"):  # channel status is not configuration
        drift_from_rows(only_status, DAY)


def test_attribute_values_shown_and_not_configuration():
    """An attribute a record does not carry is (not shown); a keyword without a value (MQSC's NOHARDENBO) is
    (set); a blank value stays blank; ALTDATE alone changing (an ALTER that set the same values) is no change."""
    before = {"K": row("QLOCAL", {"QUEUE": "Q", "HARDENBO": None, "DESCR": "x", "ALTDATE": "2024-01-01"})}
    after = {"K": row("QLOCAL", {"QUEUE": "Q", "NOHARDENBO": None, "DESCR": "", "ALTDATE": "2026-11-20"},
                      at(20, 9))}
    old = {v.object_key: v for v in versions_by_qmgr(before.values())["QM1"]}
    new = {v.object_key: v for v in versions_by_qmgr(after.values())["QM1"]}
    got = [(c.attribute, c.old, c.new) for c in compare("QM1", at(20, 9), old, new)]
    assert got == [("DESCR", "x", ""), ("HARDENBO", FLAG, NOT_SHOWN), ("NOHARDENBO", NOT_SHOWN, FLAG)]
    assert "(blank)" in readable(_drift_with(compare("QM1", at(20, 9), old, new)))
    same = {"K": row("QLOCAL", {"QUEUE": "Q", "ALTDATE": "2026-11-20"}, at(20, 9))}
    old = {v.object_key: v for v in versions_by_qmgr([row("QLOCAL", {"QUEUE": "Q", "ALTDATE": "2024-01-01"})])["QM1"]}
    assert compare("QM1", at(20, 9), old, {v.object_key: v for v in versions_by_qmgr(same.values())["QM1"]}) == []
    assert not_configuration("CLUSQMGR", "STATUS") and not not_configuration("CHANNEL", "STATUS")
    assert not_configuration("QMODEL", "CURDEPTH") and not not_configuration("QLOCAL", "MAXDEPTH")


def _drift_with(changes):
    from clwl.analyses.drift import Drift

    return Drift(DAY, "2026-11-19", at(20, 0), at(21, 0), ("QM1",), changes=changes)


def test_object_labels_name_what_tells_namesakes_apart():
    assert object_label("QCLUSTER", "x", qcluster("QM4")) == "QCLUSTER APP.Q on QM4 (CL1)"
    assert object_label("CLUSQMGR", "x", clusqmgr("QM4")) == "CLUSQMGR QM4 (TO.QM4, CL1)"
    assert object_label("QMGR", "QMGR", qmgr_attrs()) == "QMGR"
    assert object_label("QLOCAL", "x", qlocal(0)) == "QLOCAL APP.LOCAL"
    assert object_label("AUTHINFO", "AUTHINFO|A", {}) == "AUTHINFO A"  # a kind without a label: its key


def test_the_answer_as_json_and_rows():
    """--json is the answer's as_dict(): every change and share effect, JSON as it is; rows() and effect_rows()
    are the report section's tables."""
    found = drift_from_rows(estate(), DAY, captures=captures())
    d = json.loads(json.dumps(found.as_dict()))
    assert d["run_date"] == DAY and d["since"] == "2026-11-19" and d["captures"] == {"QM1": 7}
    assert d["changes"][0] == {
        "at": "2026-11-20T09:00:00+00:00", "qmgr": "QM1", "kind": "CLUSQMGR", "object": "CLUSQMGR QM2 (TO.QM2, CL1)",
        "object_key": "CLUSQMGR|QM2|TO.QM2|CL1", "attribute": "CLWLWGHT", "old": "50", "new": "75",
        "stamp": "altered 2026-11-20 08:55:00", "source_file": "2026-11-20/QM1/config_090000.mqsc"}
    assert d["share_effects"][0]["destinations"] == [{"qmgr": "QM2", "before": 50.0, "after": 60.0},
                                                     {"qmgr": "QM3", "before": 50.0, "after": 40.0}]
    assert len(found.rows()) == 5 and len(found.effect_rows()) == 8
    assert {"kinds": ["CLUSQMGR"], "attributes": ["STATUS"]}.items() <= d["not_configuration"][2].items()


def test_the_readable_answer():
    text = readable(drift_from_rows(estate(), DAY, captures=captures()))
    lines = text.splitlines()
    assert lines[0] == ("Configuration drift on 2026-11-20: the captures from 2026-11-20 00:00:00 to 2026-11-21 "
                        "00:00:00 UTC against the configuration in force at the end of 2026-11-19; 1 queue manager(s): "
                        "QM1")
    assert "Configuration captures compared: QM1 7" in lines
    change = next(x for x in lines if "CLWLWGHT" in x).split()
    assert change == ["2026-11-20", "09:00:00", "QM1", "CLUSQMGR", "QM2", "(TO.QM2,", "CL1)", "CLWLWGHT", "50", "75",
                      "altered", "2026-11-20", "08:55:00"]
    effect = [x.split() for x in lines if x.startswith("  2026-11-20 18:00:00  QM1   APP.Q  ")]
    assert [e[4:] for e in effect] == [["QM2", "60.0", "%", "0.0", "%"], ["QM4", "40.0", "%", "100.0", "%"]]
    assert lines[-1].startswith("Not compared (not configuration): ALTDATE/ALTTIME; CLUSDATE/CLUSTIME of ")


def test_a_capture_at_midnight_belongs_to_its_run_date():
    """A capture of 00:00:00 on D is in D's landing folder: a change it shows is D's (the baseline is what was in
    force just before it), and not the day before's (whose window ends before D's first instant)."""
    rows = [row("QMGR", qmgr_attrs()), row("CLUSQMGR", clusqmgr("QM2"), valid_to=at(20, 0)),
            row("CLUSQMGR", clusqmgr("QM2", 80), at(20, 0))]
    assert [(c.at, c.old, c.new) for c in drift_from_rows(rows, DAY).changes] == [(at(20, 0), "50", "80")]
    assert drift_from_rows(rows, "2026-11-19").changes == []
    found = drift_from_rows(rows, DAY, captures=[("QM1", at(20, 0))])
    assert found.captures == {"QM1": 1}


def test_an_attribute_clwl_does_not_know_is_marked_once_not_two_changes():
    """Issue 39 item 11. QM1's view of TO.QM2 (the module's estate) as three captures of D show it: 06:00 as on the
    day before; 12:00 carries CLWLHINT(NONE), an attribute of no MQ level clwl knows (as the samples' QM1 12:00
    capture does); 14:00 does not carry it any more, and CLWLWGHT is 60. Compared attribute by attribute, CLWLHINT
    would be two changes ((not shown) -> NONE at 12:00, NONE -> (not shown) at 14:00) for no change of
    configuration: it is one unknown attribute with what the captures showed of it, from the start of D, and the
    one change of the day is CLWLWGHT 50 -> 60 at 14:00. A real MQ keyword that appears in a capture (MAXMSGL on
    TO.QM3 at 12:00) stays a change: the mark is for what clwl does not know, not for what a capture left out."""
    hint = {**clusqmgr("QM2"), "CLWLHINT": "NONE"}
    rows = [row("QMGR", qmgr_attrs()), row("CLUSQMGR", clusqmgr("QM1", deftype="CLUSRCVR")),
            row("CLUSQMGR", clusqmgr("QM2"), valid_to=at(20, 12)),
            row("CLUSQMGR", hint, at(20, 12), at(20, 14)),
            row("CLUSQMGR", clusqmgr("QM2", 60), at(20, 14)),
            row("CLUSQMGR", clusqmgr("QM3"), valid_to=at(20, 12)),
            row("CLUSQMGR", {**clusqmgr("QM3"), "MAXMSGL": "4194304"}, at(20, 12))]
    found = drift_from_rows(rows, DAY)
    assert [(c.at, c.object, c.attribute, c.old, c.new) for c in found.changes] == [
        (at(20, 12), "CLUSQMGR QM3 (TO.QM3, CL1)", "MAXMSGL", NOT_SHOWN, "4194304"),
        (at(20, 14), "CLUSQMGR QM2 (TO.QM2, CL1)", "CLWLWGHT", "50", "60")]
    [unknown] = found.unknown
    assert (unknown.qmgr, unknown.object, unknown.attribute) == ("QM1", "CLUSQMGR QM2 (TO.QM2, CL1)", "CLWLHINT")
    assert unknown.values == ((at(20, 0), NOT_SHOWN), (at(20, 12), "NONE"), (at(20, 14), NOT_SHOWN))
    text = readable(found)
    assert "Attributes clwl does not know (1; not compared as configuration" in text
    line = next(x for x in text.splitlines() if "CLWLHINT" in x).split()
    assert line == ["QM1", "CLUSQMGR", "QM2", "(TO.QM2,", "CL1)", "CLWLHINT", "00:00:00", "(not", "shown),",
                    "12:00:00", "NONE,", "14:00:00", "(not", "shown)"]
    d = json.loads(json.dumps(found.as_dict()))
    assert [u["attribute"] for u in d["unknown_attributes"]] == ["CLWLHINT"]
    assert d["unknown_attributes"][0]["values"][1] == {"at": "2026-11-20T12:00:00+00:00", "value": "NONE"}
    assert "CLWLHINT" not in {c["attribute"] for c in d["changes"]}
