"""Trends across days, end to end (issue 42, "Done when"): a generated 21-day estate with three planned events
gives exactly those three departures, each with its cause, through `clwl trend --json`.

The estate (`clwl generate`, every random event rate 0, no accounting skew, no broken record): from 2026-11-01,
six queue managers (two full repositories, one sender, three back ends hosting the cluster queue), and three planned events
(README, "Planned events"; `_generate.json` `planned_events` says what each did):

- day 15 (2026-11-15): `weight` - CLWLWGHT of one back end's cluster receivers changes at 05:59:59 and stays. The
  CLWL algorithm's last step (000_0afde381a4318fee.txt, step 12: CLWLWGHT shares the traffic among the channels
  left) gives that instance a new share from that day on: flagged with cause `drift` (the change, its old and new
  value, MQ's ALTDATE/ALTTIME), and a new baseline from that day, so days 16-21 are not flagged for it.
- day 18 (2026-11-18): `outage` - QM03's receivers are unreachable for the business day (06:30-21:30): the
  senders' channels go RETRYING, messages wait behind them (stuck) and the algorithm's step 3 (channel state:
  RETRYING is less preferred than RUNNING) sends the rest elsewhere, so QM03's share of the day falls from about
  a third to near nothing (a two-hour outage moves a day's share of 400 messages by about 3 points, inside the
  days' own spread of 2-3 points: no departure to flag): cause `incident` (the outage, as the report numbers it).
  A one-day event does not move the baseline.
- day 20 (2026-11-20): `bind-on-open` - the sender's service application opens with MQOO_BIND_ON_OPEN from that
  day and keeps its handle all day: the algorithm runs once, at the open (not per message), so all the
  service's messages go to the one instance chosen then, whose share rises from about a third to most of the
  day's; they cannot be re-allocated: cause `application`.

So every flag raised is on one of those three days, with that day's cause, and each of the three is raised.
21 pipeline dates make this the costliest test of the suite: `extended`, last in CI's time box.
"""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]

START = "2026-11-01"
EVENTS = {"2026-11-15": ("weight", "drift"), "2026-11-18": ("outage:QM03@0630-2130", "incident"),
          "2026-11-20": ("bind-on-open", "application")}


@pytest.fixture(scope="module")
def three_weeks(spark, tmp_path_factory):
    from clwl.cli import main
    from spark.config import PipelineConfig
    from spark.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("trend21")
    landing = root / "landing"
    code = main(["generate", "--out", str(landing), "--days", "21", "--start-date", START, "--qmgrs", "6",
                 "--queues", "1", "--senders", "1", "--messages-per-day", "400", "--outages", "0", "--suspends", "0",
                 "--weight-changes", "0", "--priority-changes", "0", "--put-disabled", "0", "--skew", "0",
                 "--broken-records", "0", "--quiet",
                 *[a for day, (kind, _) in EVENTS.items() for a in ("--event", f"{day}:{kind}")]])
    assert code == 0
    truth = json.loads((landing / "_generate.json").read_text())
    config = PipelineConfig(lake=root / "lake", landing=landing)
    outcome = run_pipeline(config, spark=spark, progress=lambda _m: None)
    assert outcome.published and len(outcome.dates) == 21
    return config, truth


def test_three_planned_events_give_three_departures_with_their_causes(three_weeks, capsys):
    from clwl.cli import main

    config, truth = three_weeks
    planned = {e["date"]: e["kind"] for e in truth["planned_events"]}
    assert planned == {"2026-11-15": "weight_change", "2026-11-18": "outage", "2026-11-20": "bind_on_open"}

    capsys.readouterr()
    assert main(["trend", "--lake", str(config.lake), "--days", "21", "--json"]) == 0
    flags = json.loads(capsys.readouterr().out)["flags"]
    raised = {(f["date"], f["cause"]["kind"]) for f in flags}
    assert raised == {(day, cause) for day, (_, cause) in EVENTS.items()}, sorted(raised)
    for f in flags:  # each flag carries its numbers and the subject's labels
        assert {"metric", "value", "baseline_mean", "baseline_std", "z"} <= set(f) and abs(f["z"]) >= 3, f
    drift = [f["cause"] for f in flags if f["cause"]["kind"] == "drift"]
    assert all(c["changes"] and c["changes"][0]["attribute"] == "CLWLWGHT" for c in drift), drift

    assert main(["trend", "--lake", str(config.lake), "--days", "21"]) == 0  # the readable form, same flags
    out = capsys.readouterr().out
    assert out.count("\n  ! ") == len(flags), out
