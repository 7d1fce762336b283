"""The landing format registry (clwl.landing.formats) is the formats' one home (issue 26 item 1): no code under spark/ names
a format, every format discovery gives is an entry, and an entry holds what the ingest and ``clwl check`` need."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from clwl.lake import registry
from clwl.landing import formats
from clwl.landing.discovery import classify_name
from spark.ingest import discover_landing

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "landing"

#: Every name a format goes by: discovery's (LandingFile.parser) and the run log's (the rows' ``format``).
NAMES = ({formats.UNKNOWN} | {f.name for f in formats.FORMATS}
         | {logged for f in formats.FORMATS for logged in (*f.logged, *(e for _, e in f.extensions))})
#: Literals spelled like a format that are something else: a table's column (``xmitq``), a Delta log file's suffix.
COLUMNS = {c for t in registry.SPECS.values() for c in t.columns}
OTHER = {("spark/delta_commits.py", "json")}


def _literals(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_code_under_spark_names_a_format():
    found = []
    for path in sorted((ROOT / "spark").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, text in _literals(path):
            if text in NAMES and text not in COLUMNS and (rel, text) not in OTHER:
                found.append(f"{rel}:{line}: {text!r}")
    assert found == []
    # A column spelled like a format is never compared with what discovery or the run log says of a file.
    for path in sorted((ROOT / "spark").rglob("*.py")):
        assert not re.search(r"""(parser|format)\s*(==|!=|in)\s*\(?["']""", path.read_text()), path


def test_the_registry_is_pure_and_consistent():
    names = [f.name for f in formats.FORMATS]
    assert len(set(names)) == len(names) and formats.UNKNOWN not in names
    for f in formats.FORMATS:
        assert f.patterns or f.globs, f.name
        assert f.unit in (formats.FILE, formats.QMGR_DAY)
        assert set(f.informs) <= {formats.CONFIGURATION, formats.CHANNEL_STATUS, formats.ACCOUNTING, formats.PUTS}
        assert set(f.feeds) <= set(registry.SPECS), f.name
        assert {e for _, e in f.extensions} | ({f.default} - {None}) <= set(f.logged), f.name
        assert f.gives_puts == ("bronze.put_records" in f.feeds), f.name
        assert not f.self_checked or f.gives_puts
        for p in f.patterns:
            assert p.pattern.startswith(r"\A") and p.pattern.endswith(r"\Z"), (f.name, p.pattern)
        module, _, function = f.parse.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), f.parse
    logged = [x for f in formats.FORMATS for x in f.logged]
    assert len(set(logged)) == len(logged)  # a run-log format tells its registry entry (files gone, work units)
    assert formats.EXPECTED_NAMES == ("config_HHMMSS.mqsc|json, chstatus_HHMMSS.mqsc|json, puts*.csv|jsonl|json, "
                                      "xmitq_HHMMSS.amqsbcg|dmpmqmsg, *.amqsmon, *.amqsact|*.amqsact.txt, "
                                      "*.amqsevt.json|*.amqsevt.jsonl")


NAMED = {
    "config_060000.mqsc": "capture", "CHSTATUS_235959.JSONL": "capture", "config_99.txt": "capture",
    "xmitq_153000.amqsbcg": "xmitq", "xmitq_153000.txt": "xmitq", "puts.csv": "puts", "puts_late.jsonl": "puts",
    "accounting.amqsmon": "amqsmon", "QM1.2026-11-20.amqsact": "activity_trace", "x.AMQSACT.txt": "activity_trace",
    "notes.txt": "unknown", "puts.csv\n": "unknown", "config_060000.amqsact.txt": "activity_trace",
    "QM1.2026-11-20.amqsevt.jsonl": "activity_trace_json", "QM1.amqsevt.json": "activity_trace_json",
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_names_take_one_format_at_most(name):
    assert classify_name(name, "2026-11-20")[0] == NAMED[name]
    # Patterns of different formats never take the same name: their order matters for nothing but hints.
    assert sum(1 for f in formats.FORMATS if f.takes_name(name)) == (NAMED[name] != "unknown")


def test_every_format_discovery_gives_is_an_entry_and_every_entry_is_found(tmp_path):
    _, files, _ = discover_landing(SAMPLES)
    seen = {f.parser for f in files}
    assert seen <= set(NAMES) and seen - {formats.UNKNOWN} <= {f.name for f in formats.FORMATS}
    # A landing folder with a file of every entry (the first name each entry's patterns or globs describe).
    day = tmp_path / "2026-11-20" / "QM1"
    day.mkdir(parents=True)
    examples = {"capture": "config_060000.mqsc", "xmitq": "xmitq_153000.amqsbcg", "puts": "puts.csv",
                "amqsmon": "accounting.amqsmon", "activity_trace": "QM1.amqsact",
                "activity_trace_json": "QM1.amqsevt.json"}
    assert set(examples) == {f.name for f in formats.FORMATS}  # a new entry: add an example name here
    for name in examples.values():
        (day / name).write_text("x\n")
    (day / "odd.log").write_text("MonitoringType: MQI Activity Trace\n")  # content takes it
    _, files, _ = discover_landing(tmp_path)
    got = {f.source_file.rsplit("/", 1)[-1]: f.parser for f in files}
    assert got == {**{v: k for k, v in examples.items()}, "odd.log": "activity_trace"}


def test_per_format_facts_read_from_the_registry():
    from spark.ingest import message_events

    assert message_events.PUT_PARSERS == ("activity_trace", "activity_trace_json", "puts")
    assert message_events.SELF_CHECKED_FORMATS == frozenset({"csv", "jsonl", "json"})
    assert formats.TRACE_FORMAT == "amqsact" and formats.of_logged("amqsact").name == "activity_trace"
    assert formats.logged_format("capture", "2026-11-20/QM1/config_1.JSON") == "rest"
    assert formats.logged_format("xmitq", "2026-11-20/QM1/xmitq_1.txt") == "xmitq"  # the content decides
    assert formats.logged_format("unknown", "a/b") == "unknown"
    assert formats.feeds("unknown") == () and "bronze.put_records" in formats.feeds("activity_trace")
