"""The README's `clwl route` examples are real: each `$ clwl ...` block must print what the README shows.

A block may elide its beginning with a line `...`: then the README's lines must be the end of the output.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from clwl.cli import main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def examples() -> list[tuple[str, list[str]]]:
    text = README.read_text()
    out = []
    for block in re.findall(r"```\n(\$ clwl .*?)```", text, flags=re.S):
        lines = block.rstrip("\n").split("\n")
        out.append((lines[0][2:], lines[1:]))
    return out


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
