"""Every stage of `clwl run` says it is still at work while it runs and how long it took (spark/pipeline._timed);
no JVM: the wrapper is plain Python."""

from __future__ import annotations

import time

import spark.pipeline as pipeline


def test_a_long_stage_reports_while_it_runs_and_its_time_at_the_end(monkeypatch):
    monkeypatch.setattr(pipeline, "HEARTBEAT_SECONDS", 0.05)
    lines: list[str] = []
    seconds: dict[str, float] = {}
    result = pipeline._timed(seconds, "detect", lambda: (time.sleep(0.3) or "done", None), lines.append)
    assert result == "done"
    assert any(line.startswith("      ... detect: ") for line in lines[:-1]), lines
    assert lines[-1].startswith("      detect done in 0.") and seconds["detect"] >= 0.3


def test_a_stage_with_parts_records_each_part(monkeypatch):
    lines: list[str] = []
    seconds = {"validate": 1.0}
    pipeline._timed(seconds, "publish", lambda: (None, {"validate": 2.0, "publish": 0.5}), lines.append)
    assert seconds == {"validate": 3.0, "publish": 0.5}  # added to what earlier dates took
    assert lines == [lines[0]] and lines[0].endswith("(validate 2.0 s, publish 0.5 s)")


def test_a_failing_stage_stops_its_heartbeat(monkeypatch):
    monkeypatch.setattr(pipeline, "HEARTBEAT_SECONDS", 0.05)
    lines: list[str] = []

    def fail():
        raise RuntimeError("boom")

    try:
        pipeline._timed({}, "replay", fail, lines.append)
    except RuntimeError:
        pass
    seen = len(lines)
    time.sleep(0.2)
    assert len(lines) == seen  # no heartbeat after the stage ended
