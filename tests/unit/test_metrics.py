"""clwl/analyses/metrics.py without a lake: the text parses as Prometheus text (prometheus_client's parser, whatever a
label holds), the file is replaced atomically, the Pushgateway receives the text as one job (a tiny http.server on
127.0.0.1), the gate's verdicts make clwl_publish_blocked, docs/metrics.md lists every metric, and the shipped
rules, fixtures and dashboard name only metrics that exist. The values against the samples' gold tables:
tests/spark/test_metrics_samples.py; promtool: tests/unit/test_prometheus_rules.py."""

from __future__ import annotations

import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from clwl.analyses import metrics as m

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "monitoring" / "prometheus" / "clwl-rules.yml"
DASHBOARD = ROOT / "monitoring" / "grafana" / "clwl-dashboard.json"
FIXTURES = ROOT / "tests" / "fixtures" / "prometheus"


def families_of(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


# ---------------------------------------------------------------------------------------------- the text
def test_the_text_parses_with_any_label_value_and_nan():
    f = m.family("clwl_stuck_messages")
    f.add(3, qmgr='QM"1', channel="TO.\\QM2\nX")
    f.add(0, qmgr="QM5", channel="TO.QM3")
    g = m.family("clwl_trace_agreement_ratio")
    g.add(None)
    h = m.family("clwl_share_deviation_ratio")
    h.add(-0.25, source="accounting", mq_cluster="CL1,CL2", queue="APP.ORDERS", qmgr="QM2", sending_qmgr="*")
    text = m.exposition([f, g, h])
    assert text.endswith("\n") and "# TYPE clwl_stuck_messages gauge" in text
    got = families_of(text)
    samples = {tuple(sorted(s.labels.items())): s.value for s in got["clwl_stuck_messages"]}
    assert samples == {(("channel", "TO.\\QM2\nX"), ("qmgr", 'QM"1')): 3.0,
                       (("channel", "TO.QM3"), ("qmgr", "QM5")): 0.0}
    (nan,) = got["clwl_trace_agreement_ratio"]
    assert nan.value != nan.value  # NaN
    (dev,) = got["clwl_share_deviation_ratio"]
    assert dev.value == -0.25 and dev.labels["sending_qmgr"] == "*" and dev.labels["mq_cluster"] == "CL1,CL2"
    # the same samples in another order give the same text
    f.samples.reverse()
    assert m.exposition([f, g, h]) == text


def test_json_gives_every_sample_and_nan_as_null():
    g = m.family("clwl_trace_agreement_ratio")
    g.add(None)
    doc = m.as_json([g], "2026-11-20")
    assert doc == {"run_date": "2026-11-20", "metrics": [{"name": "clwl_trace_agreement_ratio", "help": g.help,
                                                          "type": "gauge", "samples": [{"labels": {}, "value": None}]}]}
    json.dumps(doc, allow_nan=False)


def test_every_catalogue_name_is_a_prometheus_gauge_name():
    for name, (labels, help_text) in m.CATALOGUE.items():
        assert re.fullmatch(r"clwl_[a-z_]+", name) and not name.endswith(("_total", "_count", "_sum", "_bucket"))
        assert all(re.fullmatch(r"[a-z_]+", label) and not label.startswith("__") for label in labels)
        assert "run_date" not in labels and "run_id" not in labels and "date" not in labels  # never a label
        assert help_text and "\n" not in help_text


# ------------------------------------------------------------------------------------------ the file
def test_the_file_is_replaced_atomically_by_a_temporary_file_beside_it(tmp_path, monkeypatch):
    target = tmp_path / "clwl.prom"
    target.write_text("old\n")
    reader = target.open()  # a scrape in progress keeps the whole old file
    replaced = []
    real_replace = os.replace

    def spy(src, dst):
        src, dst = Path(src), Path(dst)
        replaced.append((src, dst, src.read_text()))
        assert target.read_text() == "old\n"  # nothing written to the target itself before the rename
        return real_replace(src, dst)

    monkeypatch.setattr(m.os, "replace", spy)
    m.write_atomically(target, "clwl_publish_blocked 1\n")
    ((src, dst, text),) = replaced
    assert src.parent == tmp_path and dst == target and text == "clwl_publish_blocked 1\n"
    assert not src.name.endswith(".prom")  # the textfile collector reads *.prom only: never the half-written file
    assert target.read_text() == "clwl_publish_blocked 1\n" and reader.read() == "old\n"
    reader.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clwl.prom"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # as readable as a file written plainly


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "clwl.prom"
    target.write_text("old\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(m.os, "replace", fail)
    with pytest.raises(m.MetricsExportError, match="No space left on device"):
        m.write_atomically(target, "new\n")
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["clwl.prom"]


def test_a_missing_folder_is_one_line(tmp_path):
    with pytest.raises(m.MetricsExportError, match="does not exist"):
        m.write_atomically(tmp_path / "no" / "clwl.prom", "x\n")


# ---------------------------------------------------------------------------------------- the gateway
class _Gateway(BaseHTTPRequestHandler):
    received: list = []
    status = 200

    def do_PUT(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append((self.command, self.path, self.headers["Content-Type"], body.decode()))
        self.send_response(type(self).status)
        self.end_headers()
        self.wfile.write(b"bad metric\n" if type(self).status >= 400 else b"")

    def log_message(self, *args):
        pass


@pytest.fixture
def gateway():
    _Gateway.received, _Gateway.status = [], 200
    server = HTTPServer(("127.0.0.1", 0), _Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Gateway
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_text_is_pushed_as_one_job(gateway):
    url, handler = gateway
    text = "# HELP clwl_publish_blocked x\n# TYPE clwl_publish_blocked gauge\nclwl_publish_blocked 0\n"
    assert m.push(url + "/", text) == f"{url}/metrics/job/clwl"
    assert handler.received == [("PUT", "/metrics/job/clwl", m.CONTENT_TYPE, text)]
    m.push(f"{url}/metrics/job/mq/estate/prod", text)  # a group named in the URL is used as given
    assert handler.received[-1][1] == "/metrics/job/mq/estate/prod"


def test_a_refusing_or_absent_gateway_is_one_line(gateway):
    url, handler = gateway
    handler.status = 400
    with pytest.raises(m.MetricsExportError, match="refused the metrics: HTTP 400: bad metric"):
        m.push(url, "x 1\n")
    with pytest.raises(m.MetricsExportError, match="cannot be reached"):
        m.push("http://127.0.0.1:9", "x 1\n", timeout=5)
    with pytest.raises(m.MetricsExportError, match="not an http"):
        m.push_url("pushgateway:9091")


# ------------------------------------------------------------------------------------------ the gate
def test_a_date_is_blocked_until_a_later_verdict_publishes_it():
    v = m.Verdict
    verdicts = [v("2026-11-19", True, "2026-11-20T02:40:00+00:00"), v("2026-11-20", False, "2026-11-21T02:40:00+00:00")]
    assert m.blocked_dates(verdicts) == ["2026-11-20"]
    assert m.blocked_dates([*verdicts, v("2026-11-20", True, "2026-11-21T09:00:00+00:00")]) == []
    assert m.blocked_dates([v("2026-11-20", True, "2026-11-21T02:40:00"), v("2026-11-20", False, "2026-11-22T02:40")]) \
        == ["2026-11-20"]


def test_the_verdicts_are_read_from_every_run_folder(tmp_path):
    lake = tmp_path / "lake"
    for rel, data in {"run-a/_publish.json": {"run_date": "2026-11-19", "published": True, "at": "2026-11-20T02:40"},
                      "run-a/2026-11-20/_publish.json": {"run_date": "2026-11-20", "published": False,
                                                         "at": "2026-11-20T02:41"},
                      "run-b/_publish.json": {"run_date": "2026-11-20", "published": True, "at": "2026-11-21T02:40"},
                      "run-c/routing_replay.json": {"results": []}}.items():
        (lake / "validation" / rel).parent.mkdir(parents=True, exist_ok=True)
        (lake / "validation" / rel).write_text(json.dumps(data))
    got = m.gate_verdicts(lake)
    assert [(x.run_date, x.published) for x in got] == [("2026-11-19", True), ("2026-11-20", False),
                                                         ("2026-11-20", True)]
    assert m.blocked_dates(got) == []


def test_a_lake_with_nothing_published_and_no_verdict_is_refused(tmp_path):
    (tmp_path / "lake" / "gold").mkdir(parents=True)
    with pytest.raises(m.MetricsError, match="nothing published and no quality gate verdict"):
        m.lake_metrics(tmp_path / "lake")


def test_a_lake_whose_only_run_was_blocked_says_so(tmp_path):
    lake = tmp_path / "lake"
    (lake / "validation" / "run-a").mkdir(parents=True)
    (lake / "validation" / "run-a" / "_publish.json").write_text(json.dumps(
        {"run_date": "2026-11-20", "published": False, "at": "2026-11-21T02:40:00+00:00"}))
    found = m.lake_metrics(lake, stages={"ingest": 30.5, "replay": 12.0})
    assert found.run_date is None and found.blocked == ["2026-11-20"]
    got = families_of(found.text)
    assert [s.value for s in got["clwl_publish_blocked"]] == [1.0]
    assert [s.value for s in got["clwl_last_success_timestamp_seconds"]] == [0.0]
    assert [s.value for s in got["clwl_data_date_timestamp_seconds"]] == [0.0]
    assert {s.labels["stage"]: s.value for s in got["clwl_stage_duration_seconds"]} == {
        "ingest": 30.5, "replay": 12.0, "detect": 0.0, "validate": 0.0, "publish": 0.0, "report": 0.0}


# ---------------------------------------------------------------------------- the command line
def test_clwl_metrics_refuses_a_lake_that_is_not_there(tmp_path, capsys):
    from clwl.cli import main

    assert main(["metrics", "--lake", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no lake at" in err


def test_clwl_run_refuses_metrics_for_a_what_if_before_spark(capsys):
    from clwl.cli import main

    code = main(["run", "--landing", str(ROOT / "samples" / "landing"), "--lake", "/nonexistent/lake",
                 "--what-if", '{"name": "w", "channel_attrs": {"TO.QM2": {"CLWLWGHT": 80}}}',
                 "--metrics-file", "/tmp/x.prom"])
    assert code == 2 and "a what-if run does not change" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------- the docs
def test_docs_metrics_md_lists_every_metric_with_its_labels():
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    rows = {r.group(1): r.group(2) for r in re.finditer(r"^\| `(clwl_[a-z_]+)` \|([^|]*)\|", text, re.M)}
    assert set(rows) == set(m.CATALOGUE), set(rows) ^ set(m.CATALOGUE)
    for name, (labels, _) in m.CATALOGUE.items():
        shown = rows[name].strip()
        if shown == "same":  # the share metrics after the first
            shown = rows["clwl_share_observed_ratio"].strip()
        assert re.findall(r"`([a-z_]+)`", shown) == list(labels), name


def test_the_readme_has_the_alerts_section_and_the_airflow_variables():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "### Alerts in Prometheus and Grafana" in readme
    assert "`clwl_metrics_file`" in readme and "`clwl_pushgateway`" in readme


# ------------------------------------------------------------------ the rules, fixtures and dashboard
def _alerts() -> list[dict]:
    return [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"] if "alert" in r]


def _metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\b((?:clwl|ibmmq)_[a-z_]+)\b", expr))


def test_the_rules_name_only_metrics_clwl_writes():
    alerts = _alerts()
    assert [a["alert"] for a in alerts] == ["ClwlNightlyNotPublished", "ClwlPublishBlocked",
                                            "ClwlNotReallocatableMessagesStuck", "ClwlShareDeviates",
                                            "ClwlEvidenceMissing"]
    for a in alerts:
        names = _metric_names(a["expr"])
        assert names and names <= set(m.CATALOGUE), (a["alert"], names - set(m.CATALOGUE))
        assert a["labels"]["severity"] in ("critical", "warning", "info") and a["annotations"]["summary"]


def test_each_alert_has_a_fixture_where_it_alone_fires():
    alerts = [a["alert"] for a in _alerts()]
    firing: dict[str, list[str]] = {}
    for path in sorted(FIXTURES.glob("*.yml")):
        doc = yaml.safe_load(path.read_text())
        assert doc["rule_files"] == ["../../../monitoring/prometheus/clwl-rules.yml"], path.name
        for group in doc["tests"]:
            tested = [t["alertname"] for t in group["alert_rule_test"]]
            assert sorted(tested) == sorted(alerts), (path.name, group["name"])  # every alert is asked, every time
            fired = [t["alertname"] for t in group["alert_rule_test"] if t.get("exp_alerts")]
            assert len(fired) <= 1, (path.name, group["name"], fired)  # its own alert and no other
            for name in fired:
                firing.setdefault(name, []).append(path.name)
            for s in group["input_series"]:
                assert _metric_names(s["series"]) <= set(m.CATALOGUE), s["series"]
    assert sorted(firing) == sorted(alerts), firing
    assert "healthy.yml" in {p.name for p in FIXTURES.glob("*.yml")}


def test_the_dashboard_shows_clwl_beside_ibmmq():
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    names = set().union(*(_metric_names(e) for e in exprs))
    clwl = {n for n in names if n.startswith("clwl_")}
    assert clwl <= set(m.CATALOGUE), clwl - set(m.CATALOGUE)
    assert {"ibmmq_queue_depth", "ibmmq_channel_status"} <= names
    # a panel that joins them on qmgr: clwl's stuck messages with the cluster transmission queue's depth
    assert any("clwl_stuck_messages" in e and 'ibmmq_queue_depth{queue="SYSTEM.CLUSTER.TRANSMIT.QUEUE"}' in e
               and "on (qmgr)" in e for e in exprs)
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)) and board["uid"] == "clwl-analytics"
    variables = {v["name"] for v in board["templating"]["list"]}
    assert variables == {"datasource", "qmgr", "queue"}
    for e in exprs:
        assert set(re.findall(r"\$(\w+)", e)) <= variables, e
