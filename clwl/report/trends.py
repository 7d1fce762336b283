"""The report's "Across days" section (issue 42 item 3): the last 14 published days up to the report's run date,
from gold.trend_facts (clwl.analyses.trend), as small multiples (one row per series, one character per day: each
sender's observed share per queue and instance, and the messages stuck per sender and channel) and the day's flags
with their causes in words ("QM2's share of APP.ORDERS from QM1 rose from 33 % to 50 % on 11-18 after CLWLWGHT
50 -> 80 ...").

It reads through clwl.analyses.trend alone, as the other answers read through theirs (clwl/report/advice.py).
"""

from __future__ import annotations

import pandas as pd

from clwl.analyses.trend import DEFAULT_WINDOW, TrendError, flag_text, sparkline, trend, value_text
from clwl.report.advice import Answer, Question, answer, plural
from clwl.report.model import Chart, Day, Report, png, table_view

DAYS_SHOWN = 14
SHARE_COLS = ("sender", "queue", "qmgr", "days", "first", "last", "flags")
STUCK_COLS = ("sender", "channel", "days", "most", "last", "flags")

ACROSS_DAYS = Question(
    "across-days", "Across days",
    f"The last {DAYS_SHOWN} published days up to this one: each sender's observed share of each queue per "
    "instance, and the messages stuck behind each channel, one character per day (its height between the "
    "lowest and highest value of the row; blank: no value that day); then every day flagged for departing from "
    f"the previous {DEFAULT_WINDOW} published days (|z| >= 3, at least 7 of them) with its cause.",
    "A lasting change with a known cause (a configuration change, an application that changed how it opens a "
    "queue) starts a new baseline; a one-day event (an incident, an evidence gap) does not move it "
    "(docs/trends.md). clwl trend --lake LAKE --until DATE --json has every flag with its details.")


def across_days_answer(ans: Answer, lake, run_date: str) -> None:
    try:
        found = trend(lake, DAYS_SHOWN, run_date)
    except TrendError as e:
        ans.lines.append(f"Not available: {e}")
        return
    flags = found.flags
    ans.lines.append(f"{plural(len(found.dates), 'published day')} from {found.dates[0]} to {found.dates[-1]}; "
                     + (f"{plural(len(flags), 'flag')}:" if flags else "no day departs from its window."))
    ans.lines += [flag_text(f) for f in flags]
    flagged: dict = {}
    for f in flags:
        flagged.setdefault((f.metric, f.subject), []).append(f.date[5:])
    shares, stuck = [], []
    for s in found.series:
        values = [s.values.get(d) for d in found.dates]
        present = [v for v in values if v is not None]
        if not present:
            continue
        marks = ", ".join(flagged.get((s.metric, s.subject), []))
        if s.metric == "share_observed" and s.subject.facet == "observed_destination":
            shares.append({"sender": s.subject.sender, "queue": s.subject.queue, "qmgr": s.subject.qmgr,
                           "days": sparkline(values), "first": value_text(s.metric, present[0]),
                           "last": value_text(s.metric, present[-1]), "flags": marks})
        elif s.metric == "stuck" and (max(present) > 0 or marks):
            stuck.append({"sender": s.subject.sender, "channel": s.subject.channel, "days": sparkline(values),
                          "most": f"{max(present):g}", "last": f"{present[-1]:g}", "flags": marks})
    picture = small_multiples(found, flagged)
    if picture is not None:
        ans.charts.append(picture)
    ans.tables.append(("Observed shares", table_view("trend-shares", pd.DataFrame(shares, columns=[*SHARE_COLS]),
                                                     SHARE_COLS, "No observed shares in these days.")))
    ans.tables.append(("Stuck messages", table_view("trend-stuck", pd.DataFrame(stuck, columns=[*STUCK_COLS]),
                                                    STUCK_COLS, "No message stuck in these days.")))


def across_days_section(day: Day, rep: Report) -> None:
    """The last days' shares and stuck counts, and the flags with their causes."""
    rep.answers.append(answer(ACROSS_DAYS, day, lambda ans, lake: across_days_answer(
        ans, lake, day.run_date.isoformat())))


MOST_PANELS = 12  # a picture people can read at a glance; the tables below have every row


def small_multiples(found, flagged: dict) -> Chart | None:
    """One small panel per sender and queue (each instance's observed share, a line a day) and per sender and
    channel that had stuck messages, over the days shown, with the flagged days marked: the picture of the rows
    below it. None when no series has a value."""
    from matplotlib.figure import Figure

    panels: dict[tuple, list] = {}
    for s in found.series:
        if s.metric == "share_observed" and s.subject.facet == "observed_destination":
            key = ("share", s.subject.sender, s.subject.queue)
        elif s.metric == "stuck" and any((s.values.get(d) or 0) > 0 for d in found.dates):
            key = ("stuck", s.subject.sender, s.subject.channel)
        else:
            continue
        panels.setdefault(key, []).append(s)
    if not panels:
        return None
    keys = sorted(panels, key=lambda k: (k[0] != "share", k[1:]))[:MOST_PANELS]
    cols = min(3, len(keys))
    rows = (len(keys) + cols - 1) // cols
    fig = Figure(figsize=(4.2 * cols, 2.3 * rows))
    x = list(range(len(found.dates)))
    ticks = [i for i in x if i % max(1, len(x) // 7) == 0]
    for n, key in enumerate(keys):
        ax = fig.add_subplot(rows, cols, n + 1)
        for s in panels[key]:
            ys = [s.values.get(d) for d in found.dates]
            ys = [None if v is None else (100 * v if key[0] == "share" else v) for v in ys]
            label = s.subject.qmgr if key[0] == "share" else None
            ax.plot(x, [float("nan") if v is None else v for v in ys], marker="o", markersize=2.5, linewidth=1.2,
                    label=label)
            for day in flagged.get((s.metric, s.subject), []):
                i = next((i for i, d in enumerate(found.dates) if d[5:] == day), None)
                if i is not None and ys[i] is not None:
                    ax.plot([i], [ys[i]], marker="o", markersize=8, markerfacecolor="none", color="crimson")
        what = "share %" if key[0] == "share" else "stuck"
        ax.set_title(f"{key[2]} from {key[1]}: {what}", fontsize=9)
        ax.set_xticks(ticks, [found.dates[i][5:] for i in ticks], fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3)
        if key[0] == "share":
            ax.set_ylim(-2, 102)
            ax.legend(fontsize=6, loc="best", title="instance", title_fontsize=6)
    fig.tight_layout()
    more = len(panels) - len(keys)
    alt = (f"Small multiples over {len(found.dates)} published days: observed share of each queue per instance and "
           "stuck messages per channel; a red ring marks a flagged day"
           + (f" ({more} more in the tables below)" if more else ""))
    return Chart("Across days", png(fig), "across_days.png", alt)
