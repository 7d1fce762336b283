"""gold.trend_facts as `clwl run` publishes it for the bundled samples (the session's samples_lake: no pipeline run
of its own). Each day's facts agree with the day's other gold tables of the same publish, and `clwl trend` reads
them without a JVM. The re-run of a day replacing its facts: tests/spark/test_unchanged_dates.py."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date

import pytest

from clwl.cli import main
from clwl.lake.door import Lake

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAYS = ("2026-11-19", "2026-11-20")
KEY = ("metric", "mq_cluster", "queue", "qmgr", "sending_qmgr", "channel", "facet")


def _gold(lake, table: str, day: str) -> list[dict]:
    lk = Lake(lake)
    return lk.rows(f"gold.{table}", filters=[("run_date", "=", date.fromisoformat(day))],
                   version=lk.published().version(table)).to_pylist()


@pytest.mark.parametrize("day", DAYS)
def test_each_published_day_has_its_facts_and_they_agree_with_its_gold_tables(samples_lake, day):
    facts = _gold(samples_lake.lake, "trend_facts", day)
    keys = [tuple(r[k] for k in KEY) for r in facts]
    assert facts and len(keys) == len(set(keys))  # one row per metric and subject
    by = defaultdict(list)
    for r in facts:
        by[r["metric"]].append(r)
    # stuck per sender and channel adds up to the day's gold.stuck_messages (53 on 2026-11-20, README), and the
    # not re-allocatable ones to those with why = not-reallocatable
    stuck = _gold(samples_lake.lake, "stuck_messages", day)
    assert sum(r["value"] for r in by["stuck"]) == len(stuck)
    assert sum(r["value"] for r in by["not_reallocatable"]) == sum(r["why"] == "not-reallocatable" for r in stuck)
    if day == "2026-11-20":
        assert len(stuck) == 53
    # each sender's observed shares of a queue add up to 1, over the messages behind them
    totals = defaultdict(float)
    for r in by["share_observed"]:
        totals[(r["facet"], r["sending_qmgr"], r["queue"], r["messages"])] += r["value"]
    assert totals and all(abs(v - 1) < 1e-9 for v in totals.values()), totals
    # the trace agreement is the run summary's agreed / traced
    summary = _gold(samples_lake.lake, "run_summary", day)[0]
    if summary["traced"]:
        (agreement,) = by["trace_agreement"]
        assert agreement["value"] == summary["agreed"] / summary["traced"]
        assert agreement["messages"] == summary["traced"]


def test_the_days_configuration_change_is_kept_with_its_share_effect(samples_lake):
    # README, clwl drift: on 2026-11-20 QM4's APP.ORDERS PUT(DISABLED), seen at 18:00, takes QM1's share to QM4
    # from 21.7 % to 0.
    rows = [r for r in _gold(samples_lake.lake, "trend_facts", "2026-11-20") if r["metric"] == "config_changes"
            and r["detail"]]
    detail = [json.loads(r["detail"]) for r in rows]
    changes = [c for d in detail for c in d["changes"]]
    assert any(c["attribute"] == "PUT" and c["new"] == "DISABLED" and "APP.ORDERS" in c["object"] for c in changes)
    effects = [e for d in detail for e in d["effects"] if e["qmgr"] == "QM1" and e["queue"] == "APP.ORDERS"]
    assert any(round(e["before"].get("QM4", 0), 1) == 21.7 and e["after"].get("QM4", 0) == 0 for e in effects)


def test_clwl_trend_reads_the_samples_without_flags_for_two_days(samples_lake, capsys):
    # Two published days: fewer than the 7 a window needs, so nothing is flagged; both days are shown.
    code = main(["trend", "--lake", str(samples_lake.lake), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert doc["dates"] == list(DAYS) and doc["flags"] == []
