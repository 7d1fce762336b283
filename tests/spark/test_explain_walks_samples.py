"""`clwl explain` tells the report's story for every stuck message of the samples' 2026-11-20 (issue 27 item 6,
"a test walks them all"): each gold.stuck_messages row, explained, ends with the report's own line (stuck from,
until, from which evidence, why), and the replay's fate it shows leads to it:

- released by the channel status captures: the replay held it from the same time, for the same reason, and
  released it when the report says;
- released by the channel agents' trace: the trace's departure is the report's release, and the replay either
  held it from the same time or delivered it at once while the trace has it leave late (a disagreement) or a
  browse saw it waiting (a sighting);
- seen by a transmission queue browse only: the replay delivered it at once, and explain states the browse.

The lake is the session's published samples (tests/conftest.py ``samples_lake``)."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]
DAY = dt.date(2026, 11, 20)


def _iso(t):
    return t.isoformat() if t is not None else None


def _explain(lake, msg_id: str, *extra: str) -> tuple[int, str]:
    from clwl.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["explain", msg_id, "--lake", str(lake), "--date", DAY.isoformat(), *extra])
    return code, out.getvalue()


def test_explain_tells_every_stuck_message_of_the_samples_as_the_report_does(samples_lake):
    import pandas as pd

    from clwl.lake.door import Lake
    from clwl.report.stuck import _released

    lake = Lake(samples_lake.lake)
    stuck = lake.rows("gold.stuck_messages", filters=[("run_date", "=", DAY)],
                      version=lake.published_version("gold.stuck_messages")).to_pylist()
    summary = lake.rows("gold.run_summary", filters=[("run_date", "=", DAY)],
                        version=lake.published_version("gold.run_summary")).to_pylist()
    assert stuck and len(stuck) == summary[-1]["messages_stuck"]  # every message the report counts
    sources = set()
    traced_and_seen: list[str] = []
    for row in stuck:
        code, out = _explain(lake.root, row["msg_id"], "--json")
        assert code == 0, out
        d = json.loads(out)
        fate, report, source = d["fate"], d["report"], row["timing_source"]
        sources.add(source)
        assert report == {"stuck": True, "held_from": _iso(row["held_from"]), "released_at": _iso(row["released_at"]),
                          "why": row["why"], "detail": row["detail"], "source": source}, row["msg_id"]
        if source == "channel status":
            assert (fate["held_from"], fate["stay_reason"], fate["released_at"]) == (
                _iso(row["held_from"]), row["why"], _iso(row["released_at"])), row["msg_id"]
        elif source == "channel agent trace":
            assert fate["observed_left_at"] == _iso(row["released_at"]), row["msg_id"]
            assert (fate["held_from"] == _iso(row["held_from"])
                    or (fate["held_from"] is None and (d["sighting"] is not None or fate["timing_agrees"] is False)))
        else:
            assert source == "xmitq browse", source
            assert fate["held_from"] is None and d["sighting"] is not None, row["msg_id"]
        # Evidence by evidence (issue 39 item 1): the browse keeps its own time beside a traced release, in the gold
        # row (seen_at), in explain and in the report's line; a release the trace saw is never "unknown".
        line = _released(pd.DataFrame([row]).assign(held_from=lambda f: pd.to_datetime(f["held_from"], utc=True),
                                                    released_at=lambda f: pd.to_datetime(f["released_at"], utc=True)))
        if row["released_at"] is not None:
            assert "unknown" not in line and f"{row['released_at']:%H:%M}" in line, (row["msg_id"], line)
        if row["seen_at"] is not None and row["observed_on_xmitq"]:
            if d["sighting"] is not None:
                assert d["sighting"]["seen_at"] == _iso(row["seen_at"]), row["msg_id"]
            if row["released_at"] is not None and not row["channel_state"]:  # seen by the browse, left by the trace
                traced_and_seen.append(row["msg_id"])
                assert f"seen waiting by the {row['seen_at']:%H:%M} browse" in line, (row["msg_id"], line)
    # The samples have all three kinds of evidence on 2026-11-20, and one message both browsed and traced (...022D).
    assert sources == {"channel status", "channel agent trace", "xmitq browse"}, sources
    assert any(m.endswith("022D") for m in traced_and_seen), traced_and_seen
    # And in words: the text ends its fate with the report's line.
    code, out = _explain(lake.root, stuck[0]["msg_id"])
    assert code == 0 and "in the report: stuck from " in out


def test_a_message_the_report_does_not_list_says_so(samples_lake):
    from clwl.lake.door import Lake

    lake = Lake(samples_lake.lake)
    stuck = {r["msg_id"] for r in lake.rows("gold.stuck_messages", ["msg_id"],
                                           filters=[("run_date", "=", DAY)]).to_pylist()}
    replay = lake.rows("gold.routing_replay", ["msg_id", "held_from"], filters=[("run_date", "=", DAY)]).to_pylist()
    free = next(r["msg_id"] for r in replay if r["msg_id"] not in stuck and r["held_from"] is None)
    code, out = _explain(lake.root, free, "--json")
    assert code == 0 and json.loads(out)["report"] == {"stuck": False}
    assert "in the report: not stuck" in _explain(lake.root, free)[1]
