"""Timing: the replay against the channel agents' trace (issue 29 item 2). Where the channel agents were traced,
gold.routing_replay says when each message left its transmission queue and whether the replay's wait agrees
(clwl.analyses.observed.timing_agreement: inside the replay's window, widened by TIMING_TOLERANCE). This section gives the
run summary's counts beside the destination agreement, and lists the disagreements with their likely cause
(clwl.analyses.observed.TIMING_CAUSES), read from the published table of the lake the report was gathered from."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd

from clwl.analyses.observed import TIMING_CAUSES, TIMING_TOLERANCE
from clwl.report.agreement import mq_counts
from clwl.report.model import MAX_DISAGREEMENTS, Day, Report, TableView, pct, table_view

TIMING_COUNTS = ("timing_observed", "timing_agreed", "timing_disagreed")  # gold.run_summary (absent in older lakes)
#: The routing_replay columns read for the list (the disagreements only).
TIMING_READ = ("sending_qmgr", "msg_id", "put_time", "queue", "final_channel", "held_from", "released_at",
               "observed_left_at", "observed_arrived_at", "observed_arrived_qmgr", "timing_agrees", "timing_cause",
               "timing_note")
TIMING_COLS = ("sending_qmgr", "msg_id", "put_time", "queue", "channel", "replay_left", "observed_left_at",
               "cause", "timing_note")


def timing_counts(summary: dict) -> tuple[int, int, int] | None:
    """(observed, agreed, disagreed) from the run summary row, or None when it has not got all three."""
    values = [summary.get(k) for k in TIMING_COUNTS] if summary else [None]
    if any(v is None or pd.isna(v) for v in values):
        return None
    observed, agreed, disagreed = (int(v) for v in values)
    return observed, agreed, disagreed


def read_disagreements(lake: Path, day) -> pd.DataFrame | None:
    """The run date's routing_replay rows whose wait the trace contradicts (timing_agrees false), at the published
    version, by sending queue manager and put time; None when the table or its timing columns are not there."""
    from clwl.lake.door import Lake

    lake = Lake.of(lake)
    version = lake.published_version("gold.routing_replay")
    if version is None:
        return None
    table = lake.snapshot("gold.routing_replay", version)
    if "timing_agrees" not in table.columns:
        return None
    rows = table.rows(TIMING_READ, [("run_date", "=", day), ("timing_agrees", "=", False)]).to_pandas()
    return rows.sort_values(["sending_qmgr", "put_time"]).reset_index(drop=True)


def timing_findings(counts: tuple[int, int, int] | None, destination: tuple[int, int, int] | None,
                    wrong: pd.DataFrame | None, replayed: int) -> list[str]:
    """The counts beside the destination agreement, and the disagreements per likely cause."""
    tolerance = int(TIMING_TOLERANCE.total_seconds())
    if counts is None:
        return ["No timing agreement for this run date: it was published before the channel agents' trace was "
                "compared with the replay."]
    observed, agreed, disagreed = counts
    out = []
    if not observed:
        out.append("No replayed message was seen by a channel agent's trace (mqat.ini ApplClass=MCA, or amqsact "
                   "-c CHANNEL; docs/activity-trace.md, \"Channel agents\"): every wait rests on the channel status "
                   "captures alone.")
    else:
        head = (f"The replay's wait agrees with the channel agents' trace on {agreed} of {observed} traced "
                f"messages ({pct(agreed, observed)}, within {tolerance} s)")
        head += (f"; {disagreed} {'disagrees' if disagreed == 1 else 'disagree'}, listed below." if disagreed
                 else ": no disagreement.")
        if destination is not None and destination[0]:
            head += f" Destination: {destination[1]} of {destination[0]} agree (above)."
        out.append(head)
        if replayed > observed:
            out.append(f"{replayed - observed} of the {replayed} replayed messages were not traced leaving: their "
                       "waits (and stuck_messages' rows of them) rest on the channel status captures.")
    if wrong is not None and not wrong.empty:
        for cause, n in wrong["timing_cause"].value_counts().items():
            out.append(f"{n} {'message' if n == 1 else 'messages'}: {TIMING_CAUSES.get(cause, cause)}.")
    return out


def disagreement_view(wrong: pd.DataFrame) -> TableView:
    """The first MAX_DISAGREEMENTS disagreements: the replay's departure against the trace's, with the cause."""
    shown = wrong.copy()
    shown["channel"] = shown["final_channel"]
    shown["replay_left"] = [("held to the end of the day" if pd.isna(r) and not pd.isna(h) else
                             (r if not pd.isna(r) else p))
                            for r, h, p in zip(shown["released_at"], shown["held_from"], shown["put_time"])]
    shown["cause"] = shown["timing_cause"]
    view = table_view("timing-disagreements", shown, TIMING_COLS, "The replay's waits agree with the trace.",
                      wrap=("msg_id",), limit=MAX_DISAGREEMENTS)
    view.details = frozenset({"timing_note"})
    return view


def timing_section(day: Day, rep: Report) -> None:
    """Timing agreement beside destination agreement; the disagreements listed with their cause."""
    summary = day.summary[0]
    counts = timing_counts(summary)
    # The gold tables' lake (a what-if run's own, beside its validation folder); Day.lake is the silver tables'.
    lake: Optional[Path] = day.validation_root.parent if day.validation_root is not None else day.lake
    wrong = None
    unread = ""
    if counts is not None and counts[2] and lake is not None:
        try:
            wrong = read_disagreements(lake, day.run_date)
        except Exception as e:  # the list lost, not the report (as the report's other optional reads)
            unread = f"The timing disagreements could not be listed ({type(e).__name__}: {e})."
    raw = summary.get("messages_replayed") if summary else None
    replayed = 0 if raw is None or pd.isna(raw) else int(raw)
    rep.findings_timing = timing_findings(counts, mq_counts(summary), wrong, replayed) + ([unread] if unread else [])
    if wrong is not None and not wrong.empty:
        rep.timing_disagreements = disagreement_view(wrong)
