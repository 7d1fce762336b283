"""`clwl metrics` and `clwl run --metrics-file` on the session's published samples (tests/conftest.py samples_lake):
the text parses as Prometheus text (prometheus_client's parser), every value is what the gold tables of the day say
(read here through the lake's door, at the published versions), the series set of 2026-11-19 is that of
2026-11-20, the incidents and evidence gaps are the report's, and a blocked publish is clwl_publish_blocked 1.
Without the lake: tests/unit/test_metrics.py."""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter, defaultdict
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from prometheus_client.parser import text_string_to_metric_families

from clwl.cli import main
from clwl.lake.door import Lake

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DAYS = ("2026-11-19", "2026-11-20")


def _clwl(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def parsed(text: str) -> dict[str, dict[tuple, float]]:
    """metric -> {sorted label items: value}."""
    out: dict[str, dict[tuple, float]] = defaultdict(dict)
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[s.name][tuple(sorted(s.labels.items()))] = s.value
    return out


@pytest.fixture(scope="module")
def texts(samples_lake, tmp_path_factory):
    """The text of each sample day, as `clwl metrics --date --metrics-file` writes it."""
    folder = tmp_path_factory.mktemp("metrics")
    out = {}
    for day in DAYS:
        code = main(["metrics", "--lake", str(samples_lake.lake), "--date", day, "--metrics-file",
                     str(folder / f"metrics-{day}.prom")])
        assert code == 0
        out[day] = (folder / f"metrics-{day}.prom").read_text(encoding="utf-8")
    return out


def gold(lake, table: str, day: str) -> list[dict]:
    lk = Lake(lake)
    pub = lk.published()
    return lk.rows(f"gold.{table}", filters=[("run_date", "=", datetime.fromisoformat(day).date())],
                   version=pub.version(table)).to_pylist()


def one(metrics: dict, name: str) -> float:
    (value,) = metrics[name].values()
    return value


def test_the_latest_day_is_printed_by_default(samples_lake, texts, capsys):
    code, out, err = _clwl(capsys, "metrics", "--lake", str(samples_lake.lake))
    assert code == 0 and err == "" and out == texts["2026-11-20"]


@pytest.mark.parametrize("day", DAYS)
def test_the_values_are_the_gold_tables(samples_lake, texts, day):
    got = parsed(texts[day])
    lake = samples_lake.lake
    pub = Lake(lake).published()
    # the lake
    assert one(got, "clwl_data_date_timestamp_seconds") == datetime.fromisoformat(day).replace(
        tzinfo=timezone.utc).timestamp()
    assert one(got, "clwl_last_success_timestamp_seconds") == datetime.fromisoformat(
        pub.raw["updated_at"]).timestamp()
    assert one(got, "clwl_publish_blocked") == 0
    assert "clwl_stage_duration_seconds" not in got  # only clwl run knows its stages' times
    # the run summary
    (summary,) = gold(lake, "run_summary", day)
    for metric, column in (("clwl_messages_replayed", "messages_replayed"), ("clwl_records_read", "rows_read"),
                           ("clwl_records_quarantined", "rows_quarantined"),
                           ("clwl_distribution_unexpected_rows", "distribution_unexpected"),
                           ("clwl_trace_observed_messages", "traced"), ("clwl_trace_agreed_messages", "agreed"),
                           ("clwl_trace_disagreed_messages", "disagreed"),
                           ("clwl_timing_observed_messages", "timing_observed"),
                           ("clwl_timing_agreed_messages", "timing_agreed"),
                           ("clwl_timing_disagreed_messages", "timing_disagreed")):
        assert one(got, metric) == summary[column], metric
    assert one(got, "clwl_trace_agreement_ratio") == pytest.approx(summary["agreed"] / summary["traced"])
    assert one(got, "clwl_run_duration_seconds") == pytest.approx(
        (summary["finished_at"] - summary["started_at"]).total_seconds())
    # stuck messages, per sending queue manager and channel
    stuck = gold(lake, "stuck_messages", day)
    want = Counter((r["sending_qmgr"], r["channel"]) for r in stuck)
    series = {dict(k)["qmgr"] + "/" + dict(k)["channel"]: v for k, v in got["clwl_stuck_messages"].items()}
    assert {k: v for k, v in series.items() if v} == {f"{s}/{c}": n for (s, c), n in want.items()}
    fixed = Counter((r["sending_qmgr"], r["channel"]) for r in stuck if r["why"] == "not-reallocatable")
    assert {(dict(k)["qmgr"], dict(k)["channel"]): v for k, v in
            got["clwl_stuck_not_reallocatable_messages"].items() if v} == dict(fixed)
    oldest = defaultdict(int)
    for r in stuck:
        oldest[(r["sending_qmgr"], r["channel"])] = max(oldest[(r["sending_qmgr"], r["channel"])], r["age_seconds"])
    assert {(dict(k)["qmgr"], dict(k)["channel"]): v for k, v in
            got["clwl_stuck_oldest_age_seconds"].items() if v} == dict(oldest)
    # shares: the day's observed and expected counts per source, sender, queue and destination
    sums: dict[tuple, list] = defaultdict(lambda: [0, 0])
    for r in gold(lake, "distribution", day):
        if r["source"] in ("observed_destination", "accounting"):
            sums[(r["source"], r["sending_qmgr"], r["queue"], r["qmgr"])][0] += r["observed"]
            sums[(r["source"], r["sending_qmgr"], r["queue"], r["qmgr"])][1] += r["expected"]
    assert sums

    def share(metric: str) -> dict[tuple, float]:
        return {(d["source"], d["sending_qmgr"], d["queue"], d["qmgr"]): v
                for d, v in ((dict(k), v) for k, v in got[metric].items())}

    observed, configured = share("clwl_share_observed_ratio"), share("clwl_share_configured_ratio")
    deviation = share("clwl_share_deviation_ratio")
    for (source, sender, queue, qmgr), (o, x) in sums.items():
        group = [v for k, v in sums.items() if k[:3] == (source, sender, queue)]
        key = (source, sender, queue, qmgr)
        assert observed[key] == pytest.approx(o / sum(v[0] for v in group)), key
        assert configured[key] == pytest.approx(x / sum(v[1] for v in group)), key
        assert deviation[key] == pytest.approx(observed[key] - configured[key]), key
        assert share("clwl_share_observed_messages")[key] == o and share("clwl_share_expected_messages")[key] == x
    # An instance the configuration shows that the day's rows do not name: a share of 0 when its sender and queue
    # had messages (2026-11-19: QM4, suspended, received none of APP.BILLING), NaN when they had none: not a made-up
    # 0 for a queue nobody put to.
    groups = {k[:3] for k in sums}
    quiet = [k for k in observed if k not in sums]
    assert quiet and all(observed[k] == 0 and configured[k] == 0 for k in quiet if k[:3] in groups)
    assert all(math.isnan(observed[k]) and math.isnan(configured[k]) for k in quiet if k[:3] not in groups)
    assert any(k[:3] not in groups for k in quiet)
    clusters = {dict(k)["mq_cluster"] for k in got["clwl_share_observed_ratio"]}
    assert clusters == {"CL1"}


def test_the_series_set_is_the_same_on_both_days(texts):
    one_day, other = parsed(texts["2026-11-19"]), parsed(texts["2026-11-20"])
    assert {n: set(s) for n, s in one_day.items()} == {n: set(s) for n, s in other.items()}
    # and no label carries a date or a run id
    for name, samples in other.items():
        for labels in samples:
            for _, value in labels:
                assert "2026-11" not in value and not value.startswith("run-"), (name, labels)


def test_trend_flags_are_every_metric_and_cause_and_clwl_trends_count(samples_lake, texts):
    """clwl_trend_flags: each metric clwl trend flags, by each cause it names, always written (no day adds a
    series), valued with the count of the day's flags. The samples have two published days, fewer than the 7 a
    window needs (docs/trends.md, "The flag rule"), so clwl trend flags nothing and every value is 0, not NaN
    (the lake has the trend facts)."""
    from clwl.analyses.trend import CAUSE_KINDS, FLAGGED_METRICS, trend

    assert trend(samples_lake.lake, days=1).flags == []
    for day, text in texts.items():
        flags = parsed(text)["clwl_trend_flags"]
        assert set(flags) == {(("cause", c), ("metric", m)) for m in FLAGGED_METRICS for c in CAUSE_KINDS}, day
        assert set(flags.values()) == {0.0}, day


def test_incidents_and_evidence_gaps_are_the_reports(samples_lake, texts):
    from clwl.report.channels import chstatus_day_gaps
    from clwl.report.incidents import day_incidents
    from clwl.report.read import gather

    for day in DAYS:
        got = parsed(texts[day])
        report_day = gather(samples_lake.lake, datetime.fromisoformat(day).date(), "")
        incidents = Counter((i.side, i.subject) for i in day_incidents(report_day))
        assert {(dict(k)["side"], dict(k)["qmgr"]): v for k, v in got["clwl_incidents"].items() if v} == \
            dict(incidents), day
        gaps = Counter((g.qmgr, g.kind) for g in chstatus_day_gaps(report_day))
        assert {(dict(k)["qmgr"], dict(k)["kind"]): v for k, v in got["clwl_evidence_gaps"].items()
                if v and dict(k)["kind"] in ("no_chstatus", "chstatus_interval")} == dict(gaps), day
    # the samples' 2026-11-20: QM3 unreachable from QM1 and QM5 (a receiver-side incident)
    assert parsed(texts["2026-11-20"])["clwl_incidents"][(("qmgr", "QM3"), ("side", "receiver"))] == 1


def test_findings_and_changes_are_lint_and_drift(samples_lake, texts, capsys):
    got = parsed(texts["2026-11-20"])
    code, out, _ = _clwl(capsys, "lint", "--lake", str(samples_lake.lake), "--date", "2026-11-20", "--json")
    assert code == 0
    lint = Counter((f["rule"], f["severity"]) for f in json.loads(out)["findings"])
    assert {(dict(k)["rule"], dict(k)["severity"]): v for k, v in got["clwl_config_findings"].items() if v} == \
        dict(lint)
    code, out, _ = _clwl(capsys, "drift", "--lake", str(samples_lake.lake), "--date", "2026-11-20", "--json")
    assert code == 0
    drift = Counter(c["qmgr"] for c in json.loads(out)["changes"])
    assert {dict(k)["qmgr"]: v for k, v in got["clwl_config_changes"].items() if v} == dict(drift)


def test_json_and_refusals(samples_lake, capsys):
    lake = str(samples_lake.lake)
    code, out, _ = _clwl(capsys, "metrics", "--lake", lake, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["run_date"] == "2026-11-20"
    assert {m["name"] for m in doc["metrics"]} >= {"clwl_publish_blocked", "clwl_stuck_messages"}
    code, out, err = _clwl(capsys, "metrics", "--lake", lake, "--date", "2026-11-18")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "2026-11-18 is not published (published run dates: 2026-11-19, 2026-11-20)" in err


def test_a_blocked_publish_keeps_the_last_good_day_and_says_blocked(samples_lake, tmp_path, capsys):
    lake = tmp_path / "lake"
    shutil.copytree(samples_lake.lake, lake)
    verdict = lake / "validation" / "run-20261122T023000-0badc0de" / "_publish.json"
    verdict.parent.mkdir(parents=True)
    verdict.write_text(json.dumps({"run_id": "run-20261122T023000-0badc0de", "run_date": "2026-11-21",
                                   "published": False, "failures": ["gold.routing_replay: ..."],
                                   "at": "2099-01-01T02:40:00+00:00"}))
    code, out, _ = _clwl(capsys, "metrics", "--lake", str(lake))
    got = parsed(out)
    assert code == 0 and one(got, "clwl_publish_blocked") == 1
    assert one(got, "clwl_data_date_timestamp_seconds") == datetime(2026, 11, 20, tzinfo=timezone.utc).timestamp()

    # What clwl run does after a blocked run (clwl/cli/pipeline.py): its own outcome says blocked too.
    from clwl.cli.pipeline import _finish

    target = tmp_path / "clwl.prom"
    outcome = SimpleNamespace(run_id="run-x", dates=[], seconds={"ingest": 1.5, "validate": 2.0},
                              published=False)
    args = SimpleNamespace(metrics_file=str(target), pushgateway=None, what_if=None)
    shutil.rmtree(verdict.parent)
    assert _finish(args, SimpleNamespace(lake=lake), outcome) == 4
    got = parsed(target.read_text(encoding="utf-8"))
    assert one(got, "clwl_publish_blocked") == 1
    assert got["clwl_stage_duration_seconds"][(("stage", "validate"),)] == 2.0
    assert "metrics (run date 2026-11-20): written to" in capsys.readouterr().out


def test_clwl_run_writes_the_file_when_nothing_changed(samples_lake, tmp_path, capsys):
    """The samples' lake is as its run left it: `clwl run` starts no Spark, and still writes the gauges."""
    lake = tmp_path / "lake"
    shutil.copytree(samples_lake.lake, lake)
    target = tmp_path / "textfile" / "clwl.prom"
    target.parent.mkdir()
    code, out, err = _clwl(capsys, "run", "--landing", str(samples_lake.landing), "--lake", str(lake),
                           "--metrics-file", str(target))
    assert code == 0, (out, err)
    assert "unchanged since" in out and f"metrics (run date 2026-11-20): written to {target}" in out
    got = parsed(target.read_text(encoding="utf-8"))
    assert one(got, "clwl_publish_blocked") == 0
    assert set(dict(k)["stage"] for k in got["clwl_stage_duration_seconds"]) == {
        "ingest", "replay", "detect", "validate", "publish", "report"}
    assert sorted(p.name for p in target.parent.iterdir()) == ["clwl.prom"]
