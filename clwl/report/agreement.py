"""The replay against MQ's own answer: on how many traced puts they agree (the run summary's counts, else
the replay cube's), where they differ, why puts traced at LOW have no answer, and every disagreement listed (the
first ``MAX_DISAGREEMENTS``) with the `clwl query` that lists them all."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from clwl.report.model import MAX_DISAGREEMENTS, Day, Report, TableView, pct, table_view

MQ_COUNTS = ("traced", "agreed", "disagreed")  # gold.run_summary's counts of MQ's answers (absent in older lakes)

def mq_counts(summary: dict) -> tuple[int, int, int] | None:
    """(traced, agreed, disagreed) from the run summary row, or None when it has not got all three."""
    values = [summary.get(k) for k in MQ_COUNTS] if summary else [None]
    if any(v is None or pd.isna(v) for v in values):
        return None
    traced, agreed, disagreed = (int(v) for v in values)
    return traced, agreed, disagreed


def cube_counts(cube: pd.DataFrame) -> tuple[int, int, int]:
    """(traced, agreed, disagreed) counted in the replay cube: what run_summary holds, for lakes before it did."""
    if cube.empty:
        return 0, 0, 0
    agreed = int(cube.loc[cube["agrees"] == "yes", "messages"].sum())
    disagreed = int(cube.loc[cube["agrees"] == "no", "messages"].sum())
    return agreed + disagreed, agreed, disagreed


def _puts(n: int) -> str:
    return f"{n} put" if n == 1 else f"{n} puts"


def low_trace_sentence(low_puts: int) -> str:
    """Why some puts have no observed answer: traced at LOW, where no resolved names are printed."""
    has, their = ("has", "its") if low_puts == 1 else ("have", "their")
    return (f"{_puts(low_puts)} {has} no observed answer because {their} trace level was LOW: at LOW the activity "
            "trace prints no resolved queue manager, so the replay ran but could not be checked. Trace those "
            "applications at MEDIUM (TraceLevel=MEDIUM in the mqat.ini AllActivityTrace stanza) or HIGH to have "
            "MQ's answer.")


def agreement_findings(cube: pd.DataFrame, counts: tuple[int, int, int] | None = None,
                       low_puts: int = 0) -> list[str]:
    """The replay against MQ's own answer: how many traced puts agree (counts: run_summary's traced, agreed,
    disagreed; else counted in the cube), where they differ, and why LOW-level puts have no answer."""
    total = int(cube["messages"].sum()) if not cube.empty else 0
    traced, agreed, disagreed = counts if counts is not None else cube_counts(cube)
    out = []
    if traced:
        head = f"The replay agrees with MQ on {agreed} of {traced} traced puts ({pct(agreed, traced)})"
        head += (f"; {disagreed} {'disagrees' if disagreed == 1 else 'disagree'}, listed below." if disagreed
                 else ": no disagreement.")
        if total:
            head += f" {traced} of the {total} replayed messages ({pct(traced, total)}) have MQ's answer."
        out.append(head)
    elif total:
        out.append(f"None of the {total} replayed messages has MQ's answer (an activity trace at MEDIUM or HIGH, "
                   "or a put file's observed_qmgr): the replay cannot be checked against what MQ did.")
    else:
        out.append("No messages were replayed for this run date.")
    if not cube.empty:
        wrong = (cube[cube["agrees"] == "no"].groupby(["sending_qmgr", "queue", "final_qmgr", "observed_qmgr"])
                 ["messages"].sum().sort_values(ascending=False))
        if len(wrong):
            out.append("Where they differ: " + "; ".join(
                f"{s} {q}: replayed {f}, MQ {o}{' over another transmission queue' if f == o else ''} ({int(m)})"
                for (s, q, f, o), m in wrong.head(8).items())
                + (f"; and {len(wrong) - 8} more combinations." if len(wrong) > 8 else "."))
    if low_puts:
        out.append(low_trace_sentence(low_puts))
    return out


DISAGREEMENT_COLS = ("sending_qmgr", "msg_id", "put_time", "queue", "replay_qmgr", "replay_xmitq", "mq_qmgr",
                     "mq_xmitq", "decided_by", "config_time", "trace")

def disagreement_query(day: dt.date, whatif: str | None = None) -> str:
    """The `clwl query` (docs/tables.md, "Disagreements, one by one") for one run date: every disagreement."""
    option = f" --whatif {whatif}" if whatif else ""
    return (
        'clwl query "SELECT r.run_date, r.sending_qmgr, r.msg_id, r.put_time, r.queue, r.bind,\n'
        "                   r.final_qmgr AS replay_qmgr, r.final_xmitq AS replay_xmitq,\n"
        "                   r.observed_qmgr AS mq_qmgr, r.observed_xmitq AS mq_xmitq,\n"
        "                   r.decided_by, r.trace, r.reallocations, r.config_time, e.source, e.source_file, "
        "e.position\n"
        "            FROM routing_replay r\n"
        "            LEFT JOIN message_events e\n"
        "              ON e.run_date = r.run_date AND e.sending_qmgr = r.sending_qmgr AND e.msg_id = r.msg_id\n"
        f"            WHERE r.agrees = false AND r.run_date = DATE '{day.isoformat()}'\n"
        f'            ORDER BY r.sending_qmgr, r.put_time"{option}'
    )


def disagreement_view(rows: pd.DataFrame, total: int) -> TableView:
    """The disagreements shown (the first `MAX_DISAGREEMENTS` in query order) out of total."""
    named = rows.rename(columns={"final_qmgr": "replay_qmgr", "final_xmitq": "replay_xmitq",
                                 "observed_qmgr": "mq_qmgr", "observed_xmitq": "mq_xmitq"})
    view = table_view("disagreements", named, DISAGREEMENT_COLS, "The replay agrees with MQ on every traced put.",
                      wrap=("msg_id",), limit=MAX_DISAGREEMENTS)
    view.details = frozenset({"trace"})
    view.total = max(total, len(view.rows))
    return view


def agreement_section(day: Day, rep: Report) -> None:
    """MQ's answer: the counts from the run summary (older lakes: the cube), every disagreement listed."""
    counts = mq_counts(day.summary[0])
    rep.findings_agreement = agreement_findings(day.routing_cube, counts, day.low_puts)
    wrong = day.disagreements
    if wrong is not None and not wrong.empty:
        total = len(wrong) if day.disagreement_total is None else day.disagreement_total
        rep.disagreements = disagreement_view(wrong, total)
        rep.disagreement_query = disagreement_query(day.run_date, day.whatif)
    elif (counts or cube_counts(day.routing_cube))[2]:  # counted but not read (a lake without the columns)
        rep.disagreement_query = disagreement_query(day.run_date, day.whatif)
