"""The report's "Queue depth" section (issue 44 item 3): the queues whose depth, rebuilt from the activity trace at
every change (gold.queue_depth, clwl/analyses/depth.py), peaked above what the captured CURDEPTH samples saw, as one
small panel each (the rebuilt line as steps, the samples as dots), and a table of every queue with a line: its
peak, what the samples saw, its oldest message's greatest age and who put it. Gaps: ``clwl depth --queue Q``.
"""

from __future__ import annotations

from datetime import date

import pandas as pd

from clwl.report.advice import Answer, Question, answer, plural
from clwl.report.model import Chart, Day, Report, png, table_view

MOST_PANELS = 6
DEPTH_COLS = ("qmgr", "queue", "changes", "peak", "peak_at", "sampled_max", "oldest_age", "oldest_put_by")

QUEUE_DEPTH = Question(
    "queue-depth", "Queue depth from the trace",
    "Every queue instance's and transmission queue's depth at each change, rebuilt from the day's activity trace "
    "(puts, gets, channel agents; committed units only), beside the CURDEPTH the captures sampled: the queues whose "
    "peak the samples did not see first.",
    "A queue whose trace is missing (its consumers', its putters', its queue manager's) has no line here: clwl depth "
    "--lake LAKE --queue Q --date DATE names the gap, and has each queue's time at or above its QDEPTHHI limit "
    "(docs/depth.md).")


def queue_depth_section(day: Day, rep: Report) -> None:
    rep.answers.append(answer(QUEUE_DEPTH, day, lambda ans, lake: queue_depth_answer(
        ans, lake, day.run_date.isoformat())))


def queue_depth_answer(ans: Answer, lake, run_date: str) -> None:
    from clwl.analyses.depth import greatest_age
    from clwl.analyses.depth_day import captured, published_lines
    from clwl.days import day_bounds

    lines = published_lines(lake, run_date)
    if lines is None:
        ans.lines.append("Not available: gold.queue_depth is not published for this day.")
        return
    if not lines:
        ans.lines.append("No queue has a depth line for this day: no trace of its puts and gets, or only evidence "
                         "gaps (clwl depth names them).")
        return
    caps, _ = captured(lake, run_date)
    samples: dict[tuple[str, str], list] = {}
    for c in caps:
        samples.setdefault((c.qmgr, c.queue), []).append((c.at, c.curdepth))
    end = day_bounds(run_date)[1]
    rows = []
    for key, line in lines.items():
        seen = max((n for _, n in samples.get(key, ())), default=None)
        age = greatest_age(line, end)
        rows.append({"qmgr": key[0], "queue": key[1], "changes": len(line), "peak": max(c.depth for c in line),
                     "peak_at": max(line, key=lambda c: c.depth).at.strftime("%H:%M:%S.%f")[:-3],
                     "sampled_max": "" if seen is None else seen,
                     "oldest_age": "" if age is None else f"{age[0]:.1f} s",
                     "oldest_put_by": "" if age is None else (age[2].oldest_put_by or "")})
    missed = sorted((r for r in rows if r["sampled_max"] == "" or r["peak"] > r["sampled_max"]),
                    key=lambda r: (-r["peak"], r["qmgr"], r["queue"]))
    ans.lines.append(f"{plural(len(rows), 'queue')} with a depth line; "
                     + (f"{plural(len(missed), 'queue')} peaked above every captured sample (the busiest below)."
                        if missed else "every peak was seen by a capture."))
    if missed:
        ans.charts.append(_picture(missed[:MOST_PANELS], lines, samples, date.fromisoformat(run_date)))
    frame = pd.DataFrame(sorted(rows, key=lambda r: (-r["peak"], r["qmgr"], r["queue"])), columns=[*DEPTH_COLS])
    ans.tables.append(("Queues", table_view("queue-depth", frame, DEPTH_COLS, "No queue.")))


def _picture(peaked: list[dict], lines: dict, samples: dict, day: date) -> Chart:
    from matplotlib.figure import Figure

    cols = min(3, len(peaked))
    n_rows = (len(peaked) + cols - 1) // cols
    fig = Figure(figsize=(4.2 * cols, 2.3 * n_rows))
    for n, r in enumerate(peaked):
        key = (r["qmgr"], r["queue"])
        line = lines[key]
        ax = fig.add_subplot(n_rows, cols, n + 1)
        hours = [c.at.hour + c.at.minute / 60 + c.at.second / 3600 + c.at.microsecond / 3.6e9 for c in line]
        start = line[0].depth - line[0].delta
        ax.step([0.0] + hours + [24.0], [start] + [c.depth for c in line] + [line[-1].depth], where="post",
                linewidth=1.0, label="rebuilt")
        pts = [(t.hour + t.minute / 60, d) for t, d in samples.get(key, ()) if t.date() == day]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color="crimson", markersize=4, label="CURDEPTH")
        ax.set_title(f"{r['queue']} on {r['qmgr']}", fontsize=9)
        ax.set_xlim(0, 24)
        ax.set_xticks(range(0, 25, 6))
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return Chart("Queue depth", png(fig), "queue_depth.png",
                 "The depth of the queues that peaked above every captured sample, rebuilt at every change (steps), "
                 "with the captured CURDEPTH samples (red dots), over the day in hours (UTC)")
