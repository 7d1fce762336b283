"""`clwl trend` over a small lake of 21 published days: gold.trend_facts written as Delta (deltalake, no JVM) with
the published pointer naming it, as a publish leaves them. The days hold four known departures, each worked out
in tests/unit/test_trend.py's way (z against the previous 14 published days, at least 7; floor max(0.01, 5 % of
the mean) for a share, 1 for a count):

- day 11: QM4's share of APP.LOG from QM1 is 90 % against 50 % (z = 0.4 / 0.025 = 16), no cause: unexplained;
  day 12 back at 50 % is not flagged (z = -0.3 against days 1-11);
- day 15: TO.QM2's CLWLWGHT 50 -> 80 takes QM2's share of APP.ORDERS from 33 % to 50 % (z = 10): drift; days
  16-21 are the new baseline's first days (fewer than 7): not flagged;
- day 18: 40 messages stuck behind QM1's TO.QM3 (0 before: z = 40) during incident 1: incident;
- day 20: the application payments binds APP.PAY on open and QM3 gets all of it (z = 40): application.

Four flags, no other."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from clwl.cli import main
from clwl.lake.published import write_published
from clwl.lake.registry import spec

DAYS = [date(2026, 11, 1) + timedelta(days=i) for i in range(21)]
ARROW = {"date": pa.date32(), "string": pa.string(), "double": pa.float64(), "bigint": pa.int64()}


def _row(day: date, metric: str, value: float, **labels) -> dict:
    row = {c: None for c in spec("gold.trend_facts").columns}
    row.update(run_date=day, metric=metric, value=float(value), **labels)
    return row


def _share(day, value, queue, qmgr):
    return _row(day, "share_observed", value, mq_cluster="CL1", queue=queue, qmgr=qmgr, sending_qmgr="QM1",
                facet="observed_destination", messages=600)


def facts() -> list[dict]:
    rows = []
    for i, d in enumerate(DAYS, 1):
        rows.append(_share(d, 1 / 3 if i < 15 else 0.5, "APP.ORDERS", "QM2"))
        rows.append(_share(d, 1 / 3 if i < 20 else 1.0, "APP.PAY", "QM3"))
        rows.append(_share(d, 0.9 if i == 11 else 0.5, "APP.LOG", "QM4"))
        rows.append(_row(d, "stuck", 40 if i == 18 else 0, sending_qmgr="QM1", channel="TO.QM3"))
        bind = {"open": 100} if i >= 20 else {"notfixed": 100}
        rows.append(_row(d, "application_opens", 100, sending_qmgr="QM1", queue="APP.PAY", facet="payments",
                         messages=100, detail=json.dumps({"bind": bind, "target_qmgr": {}, "grouped": 0})))
    at = f"{DAYS[14]}T09:12:00+00:00"
    rows.append(_row(DAYS[14], "config_changes", 1, qmgr="QM1", detail=json.dumps({
        "changes": [{"at": at, "qmgr": "QM1", "object": "CLUSQMGR(QM2) CHANNEL(TO.QM2)", "attribute": "CLWLWGHT",
                     "old": "50", "new": "80", "stamp": f"altered {DAYS[14]} 09:12:00"}],
        "effects": [{"at": at, "qmgr": "QM1", "queue": "APP.ORDERS", "before": {"QM2": 33.333},
                     "after": {"QM2": 50.0}}]})))
    rows.append(_row(DAYS[17], "incidents", 1, qmgr="QM3", facet="receiver", detail=json.dumps([{
        "number": 1, "side": "receiver", "qmgr": "QM3", "start": f"{DAYS[17]}T10:00:00+00:00",
        "end": f"{DAYS[17]}T11:30:00+00:00", "channels": ["QM1/TO.QM3"], "senders": ["QM1"],
        "receivers": ["QM3"]}])))
    return rows


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("trend") / "lake"
    t = spec("gold.trend_facts")
    schema = pa.schema([pa.field(c.name, ARROW[c.type], c.nullable) for c in t.fields])
    rows = facts()
    write_deltalake(str(root / "gold" / "trend_facts"), pa.Table.from_pylist(rows, schema),
                    partition_by=["run_date"])
    write_published(root / "gold", {"trend_facts": 0}, {d.isoformat(): f"run-{i}" for i, d in enumerate(DAYS)})
    return root


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_gives_exactly_the_four_departures_with_their_causes(lake, capsys):
    code, out, err = _clwl(capsys, "trend", "--lake", str(lake), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["dates"] == [d.isoformat() for d in DAYS] and (doc["window"], doc["min_days"]) == (14, 7)
    flags = doc["flags"]
    assert [(f["date"], f["metric"], f.get("queue"), f["cause"]["kind"]) for f in flags] == [
        ("2026-11-11", "share_observed", "APP.LOG", "unexplained"),
        ("2026-11-15", "share_observed", "APP.ORDERS", "drift"),
        ("2026-11-18", "stuck", None, "incident"),
        ("2026-11-20", "share_observed", "APP.PAY", "application")]
    drift = flags[1]
    assert {k: drift[k] for k in ("mq_cluster", "queue", "qmgr", "sender", "source")} == {
        "mq_cluster": "CL1", "queue": "APP.ORDERS", "qmgr": "QM2", "sender": "QM1", "source": "observed_destination"}
    assert drift["value"] == 0.5 and drift["baseline_mean"] == pytest.approx(1 / 3, abs=1e-6)
    assert drift["baseline_std"] == 0.0 and drift["z"] == pytest.approx(10.0, abs=1e-3)
    change = drift["cause"]["changes"][0]
    assert (change["attribute"], change["old"], change["new"], change["stamp"]) == (
        "CLWLWGHT", "50", "80", "altered 2026-11-15 09:12:00")
    assert (flags[2]["sender"], flags[2]["channel"], flags[2]["cause"]["number"]) == ("QM1", "TO.QM3", 1)
    assert flags[3]["cause"]["application"] == "payments"
    # --until and --days: the last shown day is the 17th; day 18's outage and day 20's switch are not there.
    code, out, _ = _clwl(capsys, "trend", "--lake", str(lake), "--json", "--until", "2026-11-17", "--days", "5")
    assert code == 0
    doc = json.loads(out)
    assert doc["dates"][0] == "2026-11-13" and doc["dates"][-1] == "2026-11-17"
    assert [f["date"] for f in doc["flags"]] == ["2026-11-15"]


def test_readable_output_has_each_series_history_and_its_flags_in_words(lake, capsys):
    code, out, err = _clwl(capsys, "trend", "--lake", str(lake))
    assert code == 0, err
    assert "21 published day(s), 2026-11-01 to 2026-11-21" in out and "4 flag(s)" in out
    assert "\nshare_observed  APP.ORDERS from QM1 to QM2 (observed_destination)\n" in out
    assert "\\n" not in out  # the blank line between series is a blank line, not an escaped newline
    assert ("! 2026-11-15  QM2's share of APP.ORDERS from QM1 rose from 33 % to 50 % on 11-15 after CLWLWGHT "
            "50 -> 80 on CLUSQMGR(QM2) CHANNEL(TO.QM2) at QM1 (altered 2026-11-15 09:12:00)") in out
    assert "during incident 1 (receiver QM3, 10:00-11:30)" in out
    assert "application payments changed how it opens APP.PAY: bind on open 0 % -> 100 %" in out


def test_bad_input_is_one_line_and_exit_2(lake, tmp_path, capsys):
    code, out, err = _clwl(capsys, "trend", "--lake", str(lake), "--min-days", "9", "--window", "5")
    assert (code, out, err) == (2, "", "clwl trend: --min-days 9 is more than --window 5\n")
    code, _, err = _clwl(capsys, "trend", "--lake", str(lake), "--until", "2026-10-01")
    assert code == 2 and err.count("\n") == 1 and "no run date published up to 2026-10-01" in err
    (tmp_path / "empty" / "gold").mkdir(parents=True)
    write_published(tmp_path / "empty" / "gold", {"routing_replay": 1}, {"2026-11-01": "run-1"})
    code, _, err = _clwl(capsys, "trend", "--lake", str(tmp_path / "empty"))
    assert code == 2 and err.count("\n") == 1 and "gold.trend_facts is not published yet" in err
    with pytest.raises(SystemExit) as e:  # argparse: usage and one error line
        main(["trend", "--lake", str(lake), "--threshold", "0"])
    assert e.value.code == 2 and "must be a number above 0" in capsys.readouterr().err


def test_the_reports_across_days_section_shows_the_days_and_the_flags_in_words(lake):
    # The report of 2026-11-21 (clwl/report/trends.py): its last 14 published days (11-08 to 11-21) read the same
    # facts and give the same four flags, in words.
    from clwl.report.advice import Answer
    from clwl.report.trends import across_days_answer

    ans = Answer("across-days", "Across days", "")
    across_days_answer(ans, lake, "2026-11-21")
    assert ans.lines[0] == "14 published days from 2026-11-08 to 2026-11-21; 4 flags:"
    assert ans.lines[1].startswith("QM4's share of APP.LOG from QM1 rose from 50 % to 90 % on 11-11 unexplained")
    assert ans.lines[2].startswith("QM2's share of APP.ORDERS from QM1 rose from 33 % to 50 % on 11-15 after "
                                   "CLWLWGHT 50 -> 80")
    assert "during incident 1" in ans.lines[3] and "application payments" in ans.lines[4]
    (_, shares), (_, stuck) = ans.tables
    rows = {tuple(c[0] for c in r[:3]): [c[0] for c in r] for r in shares.rows}
    # one character a day: 33 % on 11-08..11-14 (lowest), 50 % from 11-15 (highest)
    assert rows[("QM1", "APP.ORDERS", "QM2")][3:] == ["▁" * 7 + "█" * 7, "33 %", "50 %", "11-15"]
    assert [[c[0] for c in r] for r in stuck.rows] == [["QM1", "TO.QM3", "▁" * 10 + "█" + "▁" * 3, "40", "0",
                                                        "11-18"]]
    # and its picture: a panel per sender and queue (APP.LOG, APP.ORDERS) and per channel with stuck messages
    # (TO.QM3), in the report's charts (report.html embeds it, summary.md links charts/across_days.png)
    (picture,) = ans.charts
    assert picture.file == "across_days.png" and picture.png.startswith(b"\x89PNG")
    assert "14 published days" in picture.alt and "red ring marks a flagged day" in picture.alt
