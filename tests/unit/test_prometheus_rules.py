"""The shipped Prometheus rules, checked by Prometheus's own promtool: `promtool check rules` on
monitoring/prometheus/clwl-rules.yml, `promtool test rules` on every file of tests/fixtures/prometheus/ (each alert
fires on its case and no other: tests/unit/test_metrics.py checks the files ask that), every expression of the
Grafana dashboard parsed by promtool as a rule, and `promtool check metrics` on a text with every metric clwl
writes.

promtool is built once from the Go module github.com/prometheus/prometheus (`make promtool`, into .tools/bin; the
make target does nothing when the binary is there). Without Go the tests are skipped. The first build downloads
and compiles the module (1.8 GB of modules): many minutes on 2 cores, so these tests are `extended`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from clwl.analyses import metrics as m

pytestmark = [pytest.mark.promtool, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PROMTOOL = ROOT / ".tools" / "bin" / "promtool"
RULES = ROOT / "monitoring" / "prometheus" / "clwl-rules.yml"
DASHBOARD = ROOT / "monitoring" / "grafana" / "clwl-dashboard.json"
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "prometheus").glob("*.yml"))


@pytest.fixture(scope="session")
def promtool() -> Path:
    """`make promtool` once (a no-op when .tools/bin/promtool exists)."""
    if not PROMTOOL.exists() and shutil.which("go") is None:
        pytest.skip("promtool is not built and go is not on PATH (make promtool builds it)")
    t0 = time.perf_counter()
    done = subprocess.run(["make", "-s", "promtool"], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(f"make promtool: {time.perf_counter() - t0:.1f} s")
    assert PROMTOOL.is_file()
    return PROMTOOL


def run(promtool: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(promtool), *args], cwd=ROOT, capture_output=True, text=True, input=stdin, timeout=300)


def test_the_rules_file_is_valid(promtool):
    done = run(promtool, "check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 5 rules found" in done.stdout + done.stderr


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_each_alert_fires_on_its_case_and_no_other(promtool, fixture):
    done = run(promtool, "test", "rules", str(fixture))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


def test_promtool_sees_a_wrong_expectation(promtool, tmp_path):
    """The fixtures prove something: the healthy night, told to expect a blocked publish, fails."""
    doc = yaml.safe_load((ROOT / "tests" / "fixtures" / "prometheus" / "healthy.yml").read_text())
    doc["rule_files"] = [str(RULES)]
    for t in doc["tests"][0]["alert_rule_test"]:
        if t["alertname"] == "ClwlPublishBlocked":
            t["exp_alerts"] = [{"exp_labels": {"severity": "warning"}}]
    (tmp_path / "wrong.yml").write_text(yaml.safe_dump(doc))
    done = run(promtool, "test", "rules", str(tmp_path / "wrong.yml"))
    assert done.returncode != 0 and "ClwlPublishBlocked" in done.stdout + done.stderr


def test_every_dashboard_expression_parses(promtool, tmp_path):
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    # Grafana's variables as Prometheus would see them after substitution.
    exprs = [re.sub(r"\$(qmgr|queue)", ".*", e) for e in exprs]
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"clwl:dashboard_{i}", "expr": e}
                                                        for i, e in enumerate(exprs)]}]}
    (tmp_path / "dashboard.yml").write_text(yaml.safe_dump(rules))
    done = run(promtool, "check", "rules", str(tmp_path / "dashboard.yml"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_metrics_text_passes_promtool_check_metrics(promtool):
    """Every metric of the catalogue, with made-up label values, through promtool's linter of the exposition format
    (names, help, types)."""
    families = []
    for name, (labels, _) in m.CATALOGUE.items():
        f = m.family(name)
        f.add(1.5, **{label: f"X{i}" for i, label in enumerate(labels)})
        families.append(f)
    done = run(promtool, "check", "metrics", stdin=m.exposition(families))
    assert done.returncode == 0, done.stdout + done.stderr
