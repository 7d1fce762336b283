"""Distributions: the findings on unexpected destination-intervals, a chart per queue of the replayed against
the observed messages per destination, the unexpected intervals and the overview per queue and source."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from clwl.analyses.incidents import counts_text
from clwl.analyses.remedies import distribution_remedy
from clwl.report.model import MAX_FINDINGS, MAX_QUEUE_CHARTS, Chart, Day, Report, clock, png, safe_file, table_view

SOURCE_LABELS = {"accounting": "observed (receiver accounting, all senders)",
                 "observed_destination": "observed (destinations in the put records)"}


#: The legend of the replayed bars: what they count, against the whole day's count of the tables beside them.
REPLAYED_LABEL = {
    "accounting": "replayed (\"expected\"): the replay's messages delivered within the receiver's accounting intervals",
    "observed_destination": "replayed (\"expected\"): the replay's count of the puts with an observed destination",
    None: "replayed (the replay's count: \"expected\")"}
def replayed_label(sources: list[str]) -> str:
    """The replayed bars' legend for a figure of these panels (sources, left to right)."""
    if len(sources) == 1:
        return REPLAYED_LABEL.get(sources[0], REPLAYED_LABEL[None])
    short = {"accounting": "delivered within the accounting intervals",
             "observed_destination": "puts with an observed destination"}
    return ("replayed (\"expected\"), the replay's messages: "
            + "; ".join(f"panel {i}, {short.get(src, src)}" for i, src in enumerate(sources, 1)))


DAY_NOTE = "of N: the replay's messages to that destination over the whole day (the share table's replayed)"

DIST_COLS = ("sending_qmgr", "queue", "interval_start", "interval_end", "qmgr", "expected", "observed", "deviation",
             "p_value", "verdict", "explanation", "source", "applications", "remedy")

BOUND = "open"  # the bind of a put on a bind-on-open handle (silver.message_events.bind)


def who_and_remedy(dist: pd.DataFrame, skew: pd.DataFrame | None) -> pd.DataFrame:
    """The unexpected rows with the interval's applications (counts) and the remedy (clwl.analyses.remedies), from the
    interval's puts per application and bind (Day.skew)."""
    out = dist.copy()
    apps, remedies = [], []
    # The skew's rows per interval, found once: a day has thousands of distribution rows, few of them skewed.
    where: dict = {}
    if skew is not None and not skew.empty:
        starts = pd.to_datetime(skew["interval_start"], utc=True)
        for i, key in enumerate(zip(skew["sending_qmgr"], skew["queue"], starts)):
            where.setdefault(key, []).append(i)
    for sender, queue, interval_start, verdict, explanation in zip(
            out["sending_qmgr"], out["queue"], out["interval_start"], out["verdict"],
            out["explanation"] if "explanation" in out.columns else [""] * len(out)):
        rows = None
        if where:
            start = pd.Timestamp(interval_start)
            start = start.tz_convert("UTC") if start.tzinfo else start.tz_localize("UTC")
            rows = where.get((sender, queue, start))
        part = skew.iloc[rows] if rows else None  # None: no put of this interval counted (most rows)
        by_app = (part.groupby("application", dropna=False)["messages"].sum().sort_values(ascending=False)
                  if part is not None else pd.Series(dtype=int))
        counts = [(a if isinstance(a, str) else "unknown application", int(n)) for a, n in by_app.items()]
        bound = part[part["bind"] == BOUND] if part is not None else None
        bound_apps = (bound.groupby("application", dropna=False)["messages"].sum()
                      if bound is not None and not bound.empty else None)
        apps.append(counts_text(counts))
        remedies.append("" if verdict != "unexpected" else distribution_remedy(
            str(explanation), queue=str(queue), bound=int(bound["messages"].sum()) if bound_apps is not None else 0,
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


def day_replayed(cube: pd.DataFrame | None, queue: str, senders: list[str] | None = None) -> pd.Series:
    """Per destination, the replay's messages of ``queue`` over the whole day (routing_replay's final_qmgr, from
    the count cube), of ``senders`` only when given (None: every sender)."""
    if cube is None or cube.empty:
        return pd.Series(dtype="int64")
    part = cube[(cube["queue"] == queue) & (cube["final_qmgr"] != "(error)")]
    if senders is not None:
        part = part[part["sending_qmgr"].isin(senders)]
    return part.groupby("final_qmgr")["messages"].sum().astype("int64")


def chart_counts(dist: pd.DataFrame, queue: str, source: str | None, cube: pd.DataFrame | None = None) -> pd.DataFrame:
    """What one panel of a queue's chart counts, per destination: expected (the replay's count within the rows'
    intervals: the accounting intervals, or the hours of the puts with an observed destination), observed,
    unexpected (any interval flagged), and day (the replay's messages to that destination over the whole day,
    of the same senders), so a chart and the tables beside it can be reconciled."""
    q = dist[dist["queue"] == queue]
    part = q if source is None else q[q["source"] == source]
    if (part["sending_qmgr"] == "*").any():  # receiver accounting for all senders: do not add senders
        part = part[part["sending_qmgr"] == "*"]
    agg = part.groupby("qmgr").agg(expected=("expected", "sum"), observed=("observed", "sum"),
                                   unexpected=("verdict", lambda v: bool((v == "unexpected").any()))).sort_index()
    senders = None if (part["sending_qmgr"] == "*").any() else sorted(set(part["sending_qmgr"]))
    agg["day"] = day_replayed(cube, queue, senders).reindex(agg.index).fillna(0).astype("int64")
    return agg


def distribution_charts(dist: pd.DataFrame, day: dt.date, cube: pd.DataFrame | None = None) -> list[Chart]:
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
        bars = q["qmgr"].nunique()
        # As large as its bars need: one or two destinations make a small chart, not half a screen.
        fig = Figure(figsize=(max(3.6 if bars <= 2 else 6.0, 1.6 + 1.2 * bars) * (1 if len(sources) < 2 else 1.6),
                              3.0 if bars <= 2 else 4.2), layout="constrained")
        axes = fig.subplots(1, max(1, len(sources)), squeeze=False)[0]
        handles: dict[str, Any] = {}
        for ax, source in zip(axes, sources or [None]):
            agg = chart_counts(dist, queue, source, cube)
            x = range(len(agg))
            w = 0.4
            handles["replayed"] = ax.bar([i - w / 2 for i in x], agg["expected"], w,
                                         label="replayed (the replay's count: \"expected\")", color="#1565c0")
            for i, (n, whole) in enumerate(zip(agg["expected"], agg["day"])):
                if cube is not None and whole != n:  # the table beside counts the whole day: say what differs
                    ax.annotate(f"of {whole}", (i - w / 2, n), ha="center", va="bottom", fontsize=7)
                    handles.setdefault(DAY_NOTE, Patch(facecolor="white", edgecolor="white"))
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
        fig.legend(list(handles.values()), [k if k != "replayed" else replayed_label(sources)
                                            for k in handles], loc="outside lower center",
                   ncols=min(3, len(handles)), fontsize=8)
        fig.suptitle(f"{queue}: replayed against observed messages per destination, {day.isoformat()}")
        charts.append(Chart(f"{queue}", png(fig), f"distribution_{safe_file(queue)}.png",
                             f"Bar chart of replayed (expected) against observed messages per destination for "
                             f"{queue}"))
    return charts


def distribution_note(dist: pd.DataFrame, cube: pd.DataFrame | None) -> str:
    """Where a chart's replayed bar counts fewer messages than the replay sent there over the day (the shares
    table's count), one sentence naming both and why they differ."""
    if dist.empty or cube is None or cube.empty:
        return ""
    parts = []
    for queue in sorted(set(dist["queue"])):
        for source in sorted(set(dist.loc[dist["queue"] == queue, "source"].dropna())):
            agg = chart_counts(dist, queue, source, cube)
            diff = agg[agg["expected"] != agg["day"]]
            if not diff.empty:
                why = ("delivered within its accounting intervals" if source == "accounting"
                       else "with an observed destination")
                parts.append(f"{queue} ({source}): " + ", ".join(
                    f"{q} {int(r['expected'])} of {int(r['day'])}" for q, r in diff.iterrows()) + f" ({why})")
    if not parts:
        return ""
    return ("The charts' replayed bars count only the messages their comparison covers, the shares table every "
            "message of the day: " + "; ".join(parts) + ".")


DIST_OVERVIEW_COLS = ("queue", "source", "qmgr", "expected", "observed", "intervals", "unexpected")


def distribution_section(day: Day, rep: Report) -> None:
    """The findings on distributions, a chart per queue, the unexpected intervals, the overview."""
    dist = day.distribution
    if not dist.empty and "verdict" in dist.columns:
        dist = who_and_remedy(dist, day.skew)
    rep.findings_distribution = distribution_findings(dist)
    rep.charts = distribution_charts(dist, day.run_date, day.routing_cube)
    rep.dist_note = distribution_note(dist, day.routing_cube)
    flagged = dist[dist["verdict"] == "unexpected"] if not dist.empty else dist
    rep.unexpected = table_view("unexpected", flagged, DIST_COLS, "No interval was flagged as unexpected.",
                                wrap=("explanation", "applications", "remedy"))
    rep.dist_overview = table_view("dist-overview", dist_overview(dist), DIST_OVERVIEW_COLS,
                                   "No distribution rows for this run date.")
