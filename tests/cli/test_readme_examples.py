"""The README's command examples are real.

`clwl route`: each `$ clwl ...` block must print what the README shows. A block may elide its beginning with a line
`...`: then the README's lines must be the end of the output.

`clwl query`: every `clwl query "..."` line of a code block runs, as written, on a lake the pipeline built from the
samples' 2026-11-20 (the day with stuck messages) and answers with rows; a line the README marks
`# no rows on the samples` must answer with none (it says so because the samples have nothing of that kind).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from clwl.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SAMPLE_DAY = "2026-11-20"
NO_ROWS = "no rows on the samples"


def examples() -> list[tuple[str, list[str]]]:
    text = README.read_text()
    out = []
    for block in re.findall(r"```\n(\$ clwl .*?)```", text, flags=re.S):
        lines = block.rstrip("\n").split("\n")
        out.append((lines[0][2:], lines[1:]))
    return out


def query_examples() -> list[str]:
    """Every `clwl query "SQL" ...` line in a code block of the README (the synopsis, `clwl query SQL`, is not one)."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", README.read_text(), flags=re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip().startswith('clwl query "')]


def test_readme_has_route_examples():
    cmds = [c for c, _ in examples()]
    assert any("--explain" in c for c in cmds) and any("--explain" not in c for c in cmds)


@pytest.mark.parametrize("command, shown", examples(), ids=lambda v: v if isinstance(v, str) else "")
def test_readme_example_output(command, shown, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = main(shlex.split(command)[1:])
    actual = capsys.readouterr().out.rstrip("\n").split("\n")
    assert code == 0
    if shown and shown[0] == "...":
        tail = shown[1:]
        assert actual[-len(tail):] == tail
    else:
        assert actual == shown


def test_readme_query_examples_ask_about_one_sample_day():
    """The examples name the samples' day with stuck messages and no other; the distribution example asks for
    what is unexpected, not for everything but `expected` (which is mostly `insufficient data`)."""
    queries = query_examples()
    assert len(queries) >= 4, queries
    days = {d for q in queries for d in re.findall(r"\d{4}-\d{2}-\d{2}", q)}
    assert days == {SAMPLE_DAY}, days
    assert any("verdict = 'unexpected'" in q for q in queries)
    assert not any("verdict <> 'expected'" in q or "verdict != 'expected'" in q for q in queries)
    assert any("group by verdict" in q for q in queries)  # the insufficient-data count, beside the unexpected rows
    assert {"--wide", "--json"} <= {a for q in queries for a in shlex.split(q, comments=True)}


def _rows(out: str, argv: list[str]) -> int:
    """How many rows the output of `clwl query argv` holds, in whichever format argv asked for."""
    fmt = "json" if "--json" in argv else argv[argv.index("--format") + 1] if "--format" in argv else "table"
    lines = out.splitlines()
    if fmt == "json":
        return len([json.loads(line) for line in lines])
    if fmt == "csv":
        return len(lines) - 1
    count = re.fullmatch(r"\((\d+) rows?\)", lines[-1])
    assert count, lines[-1:]
    return int(count.group(1))


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("command", query_examples())
def test_readme_query_example_runs(command, samples_lake, capsys, monkeypatch):
    monkeypatch.setenv("CLWL_LAKE", str(samples_lake.lake))  # the examples name no lake: $CLWL_LAKE, as a user would
    capsys.readouterr()
    argv = shlex.split(command, comments=True)[1:]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    rows = _rows(captured.out, argv)
    if NO_ROWS in command:
        assert rows == 0, captured.out
    else:
        assert rows > 0, captured.out
