"""Distributions: the findings on unexpected destination-intervals, a chart per queue of the replayed against
the observed messages per destination, the unexpected intervals and the overview per queue and source."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from clwl.incidents import counts_text
from clwl.remedies import distribution_remedy
from clwl.report.model import MAX_FINDINGS, MAX_QUEUE_CHARTS, Chart, Day, Report, clock, png, safe_file, table_view

SOURCE_LABELS = {"accounting": "observed (receiver accounting, all senders)",
                 "observed_destination": "observed (destinations in the put records)"}


DIST_COLS = ("sending_qmgr", "queue", "interval_start", "interval_end", "qmgr", "expected", "observed", "deviation",
             "p_value", "verdict", "explanation", "source", "applications", "remedy")

BOUND = "open"  # the bind of a put on a bind-on-open handle (silver.message_events.bind)


def who_and_remedy(dist: pd.DataFrame, skew: pd.DataFrame | None) -> pd.DataFrame:
    """The unexpected rows with the interval's applications (counts) and the remedy (clwl.remedies), from the
    interval's puts per application and bind (Day.skew)."""
    out = dist.copy()
    apps, remedies = [], []
    for _, r in out.iterrows():
        part = pd.DataFrame()
        if skew is not None and not skew.empty:
            start = pd.Timestamp(r["interval_start"])
            start = start.tz_convert("UTC") if start.tzinfo else start.tz_localize("UTC")
            part = skew[(skew["sending_qmgr"] == r["sending_qmgr"]) & (skew["queue"] == r["queue"])
                        & (pd.to_datetime(skew["interval_start"], utc=True) == start)]
        by_app = (part.groupby("application", dropna=False)["messages"].sum().sort_values(ascending=False)
                  if not part.empty else pd.Series(dtype=int))
        counts = [(a if isinstance(a, str) else "unknown application", int(n)) for a, n in by_app.items()]
        bound = part[part["bind"] == BOUND] if not part.empty else part
        bound_apps = bound.groupby("application", dropna=False)["messages"].sum() if not bound.empty else None
        apps.append(counts_text(counts))
        remedies.append("" if r["verdict"] != "unexpected" else distribution_remedy(
            str(r["explanation"]), queue=str(r["queue"]), bound=int(bound["messages"].sum()) if not bound.empty else 0,
            applications=counts_text([(a if isinstance(a, str) else "unknown application", int(n))
                                      for a, n in bound_apps.items()]) if bound_apps is not None else ""))
    out["applications"], out["remedy"] = apps, remedies
    return out


def distribution_findings(dist: pd.DataFrame) -> list[str]:
    if dist.empty:
        return ["No distribution rows for this run date: no message had an observed destination or receiver "
                "accounting to compare with."]
    verdicts = dist["verdict"].value_counts()
    bad = dist[dist["verdict"] == "unexpected"]
    tested = int(verdicts.get("expected", 0) + verdicts.get("unexpected", 0))
    few = int(verdicts.get("insufficient data", 0))
    if bad.empty:
        return [f"No distribution is unexpected: all {tested} tested destination-intervals are as the "
                f"configuration predicts; {few} had too few messages to test."]
    out = [f"{len(bad)} of {tested} tested destination-intervals are unexpected ({few} more had too few messages "
           "to test); \"expected\" is the replay's count, the explanation says what the configuration and events "
           "account for."]
    for _, r in bad.sort_values(["queue", "interval_start", "qmgr"]).head(MAX_FINDINGS).iterrows():
        who = "all senders (receiver accounting)" if r["sending_qmgr"] == "*" else f"from {r['sending_qmgr']}"
        p = "" if pd.isna(r["p_value"]) else f", p = {r['p_value']:.3g}"
        put_by = f" Put by {r['applications']}." if r.get("applications") else ""
        what = f" {r['remedy']}" if r.get("remedy") else ""
        out.append(f"{r['queue']} {who}, {clock(r['interval_start'])}\u2013{clock(r['interval_end'])}: "
                   f"{r['qmgr']} received {int(r['observed'])} against {int(r['expected'])} replayed{p}: "
                   f"{r['explanation']}.{put_by}{what}")
    if len(bad) > MAX_FINDINGS:
        out.append(f"... and {len(bad) - MAX_FINDINGS} more: see \"Unexpected intervals\" below.")
    return out


def dist_overview(dist: pd.DataFrame) -> pd.DataFrame:
    if dist.empty:
        return dist
    g = dist.groupby(["queue", "source", "qmgr"], dropna=False).agg(
        expected=("expected", "sum"), observed=("observed", "sum"),
        intervals=("interval_start", "nunique"),
        unexpected=("verdict", lambda v: int((v == "unexpected").sum())),
    ).reset_index()
    return g.sort_values(["queue", "source", "qmgr"])


def distribution_charts(dist: pd.DataFrame, day: dt.date) -> list[Chart]:
    """Per queue, the replay's count ("expected") against the observed count per destination. The legend sits
    below the axes (figure legend, constrained layout), so it never covers a bar."""
    from matplotlib.figure import Figure  # the object API: no pyplot, no global state, Agg canvas
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    if dist.empty:
        return []
    charts = []
    totals = dist.groupby("queue")["expected"].sum().sort_values(ascending=False)
    for queue in list(totals.index)[:MAX_QUEUE_CHARTS]:
        q = dist[dist["queue"] == queue]
        sources = sorted(q["source"].dropna().unique())
        fig = Figure(figsize=(max(6.0, 1.6 + 1.2 * q["qmgr"].nunique()) * (1 if len(sources) < 2 else 1.6), 4.2),
                     layout="constrained")
        axes = fig.subplots(1, max(1, len(sources)), squeeze=False)[0]
        handles: dict[str, Any] = {}
        for ax, source in zip(axes, sources or [None]):
            part = q if source is None else q[q["source"] == source]
            if (part["sending_qmgr"] == "*").any():  # receiver accounting for all senders: do not add senders
                part = part[part["sending_qmgr"] == "*"]
            agg = part.groupby("qmgr").agg(expected=("expected", "sum"), observed=("observed", "sum"),
                                           unexpected=("verdict", lambda v: bool((v == "unexpected").any())))
            agg = agg.sort_index()
            x = range(len(agg))
            w = 0.4
            handles["replayed"] = ax.bar([i - w / 2 for i in x], agg["expected"], w,
                                         label="replayed (the replay's count: \"expected\")", color="#1565c0")
            bars = ax.bar([i + w / 2 for i in x], agg["observed"], w, label="observed", color="#90caf9",
                          hatch="//" if source == "accounting" else None)
            handles[SOURCE_LABELS.get(source, "observed")] = bars
            for bar, bad in zip(bars, agg["unexpected"]):
                if bad:
                    bar.set_edgecolor("#c62828")
                    bar.set_linewidth(2)
                    handles["verdict: unexpected"] = Patch(facecolor="white", edgecolor="#c62828", linewidth=2)
            ax.set_xticks(list(x))
            ax.set_xticklabels(list(agg.index))
            ax.set_xlabel("destination queue manager")
            ax.set_ylabel("messages")
            ax.set_title(SOURCE_LABELS.get(source, "") if source else "", fontsize=9)
            ax.set_ylim(0, float(max(agg["expected"].max(), agg["observed"].max(), 1)) * 1.1)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(axis="y", alpha=0.3)
        fig.legend(list(handles.values()), [k if k != "replayed" else "replayed (the replay's count: \"expected\")"
                                            for k in handles], loc="outside lower center",
                   ncols=min(3, len(handles)), fontsize=8)
        fig.suptitle(f"{queue}: replayed against observed messages per destination, {day.isoformat()}")
        charts.append(Chart(f"{queue}", png(fig), f"distribution_{safe_file(queue)}.png",
                             f"Bar chart of replayed (expected) against observed messages per destination for "
                             f"{queue}"))
    return charts


DIST_OVERVIEW_COLS = ("queue", "source", "qmgr", "expected", "observed", "intervals", "unexpected")


def distribution_section(day: Day, rep: Report) -> None:
    """The findings on distributions, a chart per queue, the unexpected intervals, the overview."""
    dist = day.distribution
    if not dist.empty and "verdict" in dist.columns:
        dist = who_and_remedy(dist, day.skew)
    rep.findings_distribution = distribution_findings(dist)
    rep.charts = distribution_charts(dist, day.run_date)
    flagged = dist[dist["verdict"] == "unexpected"] if not dist.empty else dist
    rep.unexpected = table_view("unexpected", flagged, DIST_COLS, "No interval was flagged as unexpected.",
                                wrap=("explanation", "applications", "remedy"))
    rep.dist_overview = table_view("dist-overview", dist_overview(dist), DIST_OVERVIEW_COLS,
                                   "No distribution rows for this run date.")
