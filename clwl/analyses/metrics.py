"""``clwl metrics``: a published day as Prometheus gauges, for node_exporter's textfile collector or a Pushgateway.

What the lake knows about the latest published day (or another one), summed up as a few gauges an administrator
alerts on beside IBM's ``ibmmq_*`` ones (docs/metrics.md lists every metric):

- the lake: when the last publish finished, which run date the gauges describe, whether the quality gate blocked
  a publish (gold/_published.json, the gate's verdicts under validation/);
- the day (gold, at the versions the pointer names): shares observed and configured per sender, cluster queue and
  instance, and their deviation (gold.distribution); stuck and not re-allocatable messages with the oldest wait
  per sender and channel (gold.stuck_messages); incidents by side (the channel trouble, grouped by
  clwl.analyses.incidents as the report groups it); configuration findings by rule (clwl.analyses.lint) and
  changes (clwl.analyses.drift); evidence gaps (clwl.landing.evidence's rules); trace agreement and the run's
  duration (gold.run_summary).

Gauges of one day only (the history stays in Delta). The run date is a gauge, never a label; every label value is
an object of the estate, and a day's configuration series are all written every day (NaN where it has no value: a
share of a queue nobody put to), so that thirty days of runs add no series.

Pure Python, no Spark, no pandas: clwl/analyses/published_day.py reads the day; here, the catalogue, the gauges, their
text (:func:`exposition`: no Prometheus client) and its delivery (:func:`write_atomically`, :func:`push`).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterable, Mapping, Optional

from clwl.analyses.published_day import Estate, day_evidence, day_incidents, estate_of, gold_rows, published_state
from clwl.days import RunDate, as_utc, day_bounds
from clwl.lake.storage import Location

NAN = float("nan")

# -------------------------------------------------------------------------------------------- the catalogue
#: Every metric: name -> (its label names, its help). docs/metrics.md lists each (tests/unit/test_metrics.py).
SHARE_LABELS = ("source", "mq_cluster", "queue", "qmgr", "sending_qmgr")
CATALOGUE: dict[str, tuple[tuple[str, ...], str]] = {
    # the lake
    "clwl_last_success_timestamp_seconds": (
        (), "When the last publish of the lake finished (gold/_published.json updated_at), Unix time; 0 when "
            "nothing was ever published."),
    "clwl_data_date_timestamp_seconds": (
        (), "The run date these gauges describe, as its first instant (00:00 UTC), Unix time; 0 when no day is "
            "published."),
    "clwl_publish_blocked": (
        (), "1 when the quality gate blocked the publish of a run date and no later publish of that date followed "
            "(the published tables keep their last good version), else 0."),
    # the run of the day
    "clwl_run_duration_seconds": (
        (), "How long the day's run took from the start of its stages to its staged summary (gold.run_summary "
            "finished_at - started_at: replay and detection)."),
    "clwl_stage_duration_seconds": (
        ("stage",), "Seconds each stage of the clwl run that wrote this file took (all its run dates together); "
                    "only in the file clwl run writes: the lake does not keep them."),
    "clwl_messages_replayed": ((), "Messages replayed on the day (gold.run_summary messages_replayed)."),
    "clwl_records_read": ((), "Records read from the day's files (gold.run_summary rows_read)."),
    "clwl_records_quarantined": ((), "Of those, records quarantined (gold.run_summary rows_quarantined)."),
    "clwl_distribution_unexpected_rows": (
        (), "Rows of gold.distribution with verdict unexpected on the day (gold.run_summary)."),
    # trace agreement
    "clwl_trace_observed_messages": (
        (), "Messages of the day with an observed destination: traced puts and put records with observed_qmgr "
            "(gold.run_summary traced)."),
    "clwl_trace_agreed_messages": ((), "Of those, the ones whose observed destination is the replay's (agreed)."),
    "clwl_trace_disagreed_messages": ((), "Of those, the others (disagreed)."),
    "clwl_trace_agreement_ratio": ((), "agreed / traced; NaN when nothing was traced."),
    "clwl_timing_observed_messages": (
        (), "Messages whose departure the channel agents' trace saw (gold.run_summary timing_observed)."),
    "clwl_timing_agreed_messages": ((), "Of those, the ones whose traced departure agrees with the replay's wait."),
    "clwl_timing_disagreed_messages": ((), "Of those, the others."),
    # shares
    "clwl_share_observed_ratio": (
        SHARE_LABELS, "The part of the sender's messages to the queue observed at the instance on qmgr over the "
                      "day (gold.distribution observed; source accounting: every sender together, sending_qmgr "
                      "\"*\"); NaN when nothing was observed."),
    "clwl_share_configured_ratio": (
        SHARE_LABELS, "The part the configuration in force gives that instance, as the replay routed the day's "
                      "messages (gold.distribution expected: weights, ranks, priorities, suspension, channel "
                      "states); NaN when nothing was replayed there."),
    "clwl_share_deviation_ratio": (
        SHARE_LABELS, "Observed share minus configured share (-1 to 1); NaN when either is."),
    "clwl_share_observed_messages": (SHARE_LABELS, "The messages observed at the instance (the observed share's count)."),
    "clwl_share_expected_messages": (
        SHARE_LABELS, "The messages the replay sent there (the configured share's count, rounded)."),
    # stuck messages
    "clwl_stuck_messages": (
        ("qmgr", "channel"), "Messages that waited on qmgr's transmission queue behind the cluster-sender channel "
                             "while it moved nothing, and stayed there (gold.stuck_messages)."),
    "clwl_stuck_not_reallocatable_messages": (
        ("qmgr", "channel"), "Of those, messages MQ can never re-allocate (bound on open or on group, or to a named "
                             "queue manager: why = not-reallocatable)."),
    "clwl_stuck_held_at_day_end_messages": (
        ("qmgr", "channel"), "Of those, messages still on the transmission queue at the end of the day (no release)."),
    "clwl_stuck_oldest_age_seconds": (
        ("qmgr", "channel"), "The longest wait of those messages (age_seconds); 0 when none."),
    # incidents, findings, changes, evidence
    "clwl_incidents": (
        ("side", "qmgr"), "Incidents of the day by the side to look at (receiver, sender or channel) and the queue "
                          "manager at their centre, grouped as the report groups the channel trouble."),
    "clwl_config_findings": (
        ("rule", "severity"), "Configuration findings of the day by clwl lint rule and severity; NaN when the lake "
                              "holds no configuration of the day."),
    "clwl_config_changes": (
        ("qmgr",), "Configuration changes the day's captures of qmgr showed against the day before (clwl drift); "
                   "NaN when they could not be compared."),
    "clwl_evidence_gaps": (
        ("qmgr", "kind"), "What the day's evidence lacked at qmgr, by kind: no_chstatus (a sender without channel "
                          "status captures), chstatus_interval (captures too far apart), no_accounting (a receiver "
                          "without queue accounting), igq_no_member (IGQ without a known group member), "
                          "missed_failure (channels on which a browse found messages the captures had moving)."),
    "clwl_chstatus_unseen_seconds": (
        ("qmgr",), "Seconds of the day in which qmgr's channel states were not seen (the channel status gaps)."),
    # queue depth rebuilt from the trace (issue 44; docs/depth.md)
    "clwl_queue_depth_max": (
        ("qmgr", "queue"), "The greatest depth of the queue over the day, rebuilt from the activity trace at every "
                           "change (gold.queue_depth): what a CURDEPTH sample can miss."),
    "clwl_queue_oldest_age_max_seconds": (
        ("qmgr", "queue"), "The greatest age of the queue's oldest message over the day (gold.queue_depth "
                           "oldest_age_seconds); 0 when no message's arrival time is known."),
    # across days
    "clwl_trend_flags": (
        ("metric", "cause"), "Series of the day that departed from their trailing window (clwl trend: |z| >= 3 "
                             "against the previous 14 published days), by metric and by the cause the lake knows "
                             "(drift, incident, application, evidence_gap, unexplained); NaN when the lake has no "
                             "trend facts for the day."),
}

#: The kinds of clwl_evidence_gaps, all written for every queue manager of the estate.
EVIDENCE_KINDS = ("no_chstatus", "chstatus_interval", "no_accounting", "igq_no_member", "missed_failure")
#: The sides of clwl_incidents (clwl.analyses.incidents).
SIDES = ("receiver", "sender", "channel")
#: The stages of clwl_stage_duration_seconds (spark/pipeline.py: ingest, then per date replay, detect, validate and
#: publish, report).
STAGES = ("ingest", "replay", "detect", "validate", "publish", "report")
#: The distribution sources a share is computed from (channel_statistics counts channels, not queue instances).
SHARE_SOURCES = ("observed_destination", "accounting")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEFAULT_JOB = "clwl"


class MetricsError(Exception):
    """The metrics cannot be computed (a date that is not published, a lake with nothing in it): one line."""


class MetricsExportError(Exception):
    """The metrics file cannot be written, or the Pushgateway refused them: one line."""


@dataclass
class Family:
    """One metric: its name, help and type, and its samples (labels, value)."""

    name: str
    help: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)
    type: str = "gauge"

    def add(self, value: Optional[float], **labels: str) -> None:
        self.samples.append((labels, NAN if value is None else float(value)))


def family(name: str) -> Family:
    return Family(name, CATALOGUE[name][1])


# ------------------------------------------------------------------------------------------------ the text
def _escape_label(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return str(int(v)) if v == int(v) and abs(v) < 2**53 else repr(v)


def exposition(families: Iterable[Family]) -> str:
    """The Prometheus text exposition format (version 0.0.4) of ``families``: HELP and TYPE, then the samples
    sorted by their labels (the same day gives the same text)."""
    out: list[str] = []
    for f in families:
        out.append(f"# HELP {f.name} {_escape_help(f.help)}")
        out.append(f"# TYPE {f.name} {f.type}")
        for labels, v in sorted(f.samples, key=lambda s: sorted(s[0].items())):
            text = ",".join(f'{k}="{_escape_label(labels[k])}"' for k in sorted(labels))
            out.append(f"{f.name}{{{text}}} {_value(v)}" if text else f"{f.name} {_value(v)}")
    return "\n".join(out) + "\n"


def as_json(families: Iterable[Family], run_date: Optional[str] = None) -> dict:
    """``clwl metrics --json``: ``{"run_date", "metrics": [{"name", "help", "type", "samples": [{"labels",
    "value"}]}]}``; a NaN value is null."""
    return {"run_date": run_date, "metrics": [
        {"name": f.name, "help": f.help, "type": f.type,
         "samples": [{"labels": dict(sorted(labels.items())), "value": None if math.isnan(v) else v}
                     for labels, v in sorted(f.samples, key=lambda s: sorted(s[0].items()))]}
        for f in families]}


# ------------------------------------------------------------------------------------------------- export
def write_atomically(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` in one step for a reader that may look at any moment (node_exporter's textfile
    collector): a temporary file in the same folder (a name the collector skips: it reads ``*.prom`` only), made
    readable by others as a plain file would be, synced, then renamed over ``path`` (``os.replace``)."""
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise MetricsExportError(f"{target}: the folder {folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise MetricsExportError(f"{target}: cannot write in {folder} ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the collector often runs as another user
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise MetricsExportError(f"{target}: not written ({e.strerror or e})") from None
    return target


def push_url(base: str, job: str = DEFAULT_JOB) -> str:
    """The Pushgateway URL of the group ``job``: ``<base>/metrics/job/<job>``; a URL that names a group already
    (``.../metrics/job/...``) is taken as it is."""
    parts = urllib.parse.urlsplit(base.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise MetricsExportError(f"--pushgateway {base!r}: not an http:// or https:// URL")
    if "/metrics/job/" in parts.path:
        return base.strip()
    return f"{base.strip().rstrip('/')}/metrics/job/{urllib.parse.quote(job, safe='')}"


def push(base: str, text: str, job: str = DEFAULT_JOB, timeout: float = 30.0) -> str:
    """PUT ``text`` to the Pushgateway at ``base`` as the group ``job``: it replaces every metric that group held
    (a series the day no longer has is gone, as in the textfile). Returns the URL; MetricsExportError, one line,
    when the gateway cannot be reached or refuses them."""
    url = push_url(base, job)
    req = urllib.request.Request(url, data=text.encode("utf-8"), method="PUT",
                                 headers={"Content-Type": CONTENT_TYPE})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            resp.read()
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", "replace").strip().splitlines()
        raise MetricsExportError(f"the Pushgateway at {url} refused the metrics: HTTP {e.code}"
                                 + (f": {body[0][:200]}" if body else "")) from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise MetricsExportError(f"the Pushgateway at {url} cannot be reached ({reason})") from None
    return url


# --------------------------------------------------------------------------------------------- the lake
@dataclass(frozen=True)
class Verdict:
    """One quality-gate verdict (validation/<run_id>/[<date>/]_publish.json)."""

    run_date: str
    published: bool
    at: str


def gate_verdicts(lake: Location | str) -> list[Verdict]:
    """Every verdict the quality gate recorded in the lake, oldest first (by its time)."""
    from clwl.lake.door import Lake, LakeFileError
    from clwl.lake.storage import list_folders, read_object

    lk = Lake.of(lake)
    folder = lk.layer("validation")
    found: list[Verdict] = []

    def read(path) -> None:
        try:
            data = json.loads(read_object(path).data.decode("utf-8"))
        except (FileNotFoundError, LakeFileError, ValueError, UnicodeDecodeError):
            return
        if isinstance(data, dict) and data.get("run_date") and "published" in data:
            found.append(Verdict(str(data["run_date"]), bool(data["published"]), str(data.get("at") or "")))

    for run in list_folders(folder):
        read(folder / run / "_publish.json")
        for sub in list_folders(folder / run):
            read(folder / run / sub / "_publish.json")
    return sorted(found, key=lambda v: v.at)


def blocked_dates(verdicts: Iterable[Verdict]) -> list[str]:
    """The run dates whose latest verdict blocked their publish."""
    latest: dict[str, bool] = {}
    for v in sorted(verdicts, key=lambda v: v.at):
        latest[v.run_date] = v.published
    return sorted(d for d, ok in latest.items() if not ok)


def _epoch(text: Optional[str]) -> float:
    if not text:
        return 0.0
    try:
        return as_utc(datetime.fromisoformat(str(text))).timestamp()
    except ValueError:
        return 0.0


def _day_epoch(day: str) -> float:
    return day_bounds(day)[0].timestamp()


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else NAN


def share_families(dist: list[dict], estate: Estate) -> list[Family]:
    """Observed and configured shares per (source, sender, queue, instance) over the day (gold.distribution), for
    every instance the configuration shows (and any the day's rows add)."""
    sums: dict[tuple[str, str, str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for r in dist:
        if r["source"] not in SHARE_SOURCES:
            continue
        k = (r["source"], r["sending_qmgr"], r["queue"], r["qmgr"])
        sums[k][0] += r["observed"] or 0
        sums[k][1] += r["expected"] or 0
    keys = set(sums)
    for (sender, queue, host) in estate.shares:
        keys.add(("observed_destination", sender, queue, host))
        keys.add(("accounting", "*", queue, host))
    totals: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (source, sender, queue, _), (o, x) in sums.items():
        totals[(source, sender, queue)][0] += o
        totals[(source, sender, queue)][1] += x
    fams = {n: family(n) for n in ("clwl_share_observed_ratio", "clwl_share_configured_ratio",
                                   "clwl_share_deviation_ratio", "clwl_share_observed_messages",
                                   "clwl_share_expected_messages")}
    for key in sorted(keys):
        source, sender, queue, host = key
        o, x = sums.get(key, (0.0, 0.0))
        to, tx = totals.get((source, sender, queue), (0.0, 0.0))
        cluster = estate.shares.get((sender, queue, host)) if sender != "*" else None
        if cluster is None:
            cluster = estate.cluster_of(queue, host)
        labels = {"source": source, "mq_cluster": cluster, "queue": queue, "qmgr": host, "sending_qmgr": sender}
        obs, conf = _ratio(o, to), _ratio(x, tx)
        fams["clwl_share_observed_ratio"].add(obs, **labels)
        fams["clwl_share_configured_ratio"].add(conf, **labels)
        fams["clwl_share_deviation_ratio"].add(obs - conf, **labels)
        fams["clwl_share_observed_messages"].add(o, **labels)
        fams["clwl_share_expected_messages"].add(x, **labels)
    return list(fams.values())


def stuck_families(stuck: list[dict], estate: Estate) -> list[Family]:
    keys = set(estate.channels) | {(r["sending_qmgr"] or "", r["channel"] or "") for r in stuck}
    count: dict[tuple[str, str], int] = defaultdict(int)
    fixed: dict[tuple[str, str], int] = defaultdict(int)
    held: dict[tuple[str, str], int] = defaultdict(int)
    oldest: dict[tuple[str, str], float] = defaultdict(float)
    for r in stuck:
        k = (r["sending_qmgr"] or "", r["channel"] or "")
        count[k] += 1
        fixed[k] += r.get("why") == "not-reallocatable"
        held[k] += r.get("released_at") is None
        oldest[k] = max(oldest[k], float(r.get("age_seconds") or 0))
    fams = [family(n) for n in ("clwl_stuck_messages", "clwl_stuck_not_reallocatable_messages",
                                "clwl_stuck_held_at_day_end_messages", "clwl_stuck_oldest_age_seconds")]
    for k in sorted(keys):
        labels = {"qmgr": k[0], "channel": k[1]}
        for f, source in zip(fams, (count, fixed, held, oldest)):
            f.add(source.get(k, 0), **labels)
    return fams


def _findings(lake: Location | str, day: str) -> Optional[dict[tuple[str, str], int]]:
    from clwl.analyses.lint_lake import LintInputError, lint_lake

    try:
        found = lint_lake(lake, day)
    except LintInputError:
        return None
    out: dict[tuple[str, str], int] = defaultdict(int)
    for f in found:
        out[(f.rule, f.severity)] += 1
    return out


def _changes(lake: Location | str, day: str) -> Optional[dict[str, int]]:
    from clwl.analyses.drift import DriftError, drift

    try:
        found = drift(lake, day)
    except DriftError:
        return None
    out: dict[str, int] = defaultdict(int)
    for c in found.changes:
        out[c.qmgr] += 1
    for q in found.qmgrs:
        out.setdefault(q, 0)
    return out


def _lake_families(pub, day: Optional[str], blocked: bool) -> list[Family]:
    last = family("clwl_last_success_timestamp_seconds")
    last.add(_epoch(pub.raw.get("updated_at")) if pub.exists and pub.dates else 0.0)
    data = family("clwl_data_date_timestamp_seconds")
    data.add(_day_epoch(day) if day else 0.0)
    gate = family("clwl_publish_blocked")
    gate.add(1.0 if blocked else 0.0)
    return [last, data, gate]


def _summary_families(summary: Optional[dict]) -> list[Family]:
    s = summary or {}

    def one(name: str, value: Optional[float]) -> Family:
        f = family(name)
        f.add(value)
        return f

    started, finished = as_utc(s.get("started_at")), as_utc(s.get("finished_at"))
    traced, agreed = s.get("traced"), s.get("agreed")
    return [
        one("clwl_run_duration_seconds", (finished - started).total_seconds() if started and finished else None),
        one("clwl_messages_replayed", s.get("messages_replayed")),
        one("clwl_records_read", s.get("rows_read")),
        one("clwl_records_quarantined", s.get("rows_quarantined")),
        one("clwl_distribution_unexpected_rows", s.get("distribution_unexpected")),
        one("clwl_trace_observed_messages", traced),
        one("clwl_trace_agreed_messages", agreed),
        one("clwl_trace_disagreed_messages", s.get("disagreed")),
        one("clwl_trace_agreement_ratio", _ratio(agreed, traced) if traced is not None and agreed is not None
            else None),
        one("clwl_timing_observed_messages", s.get("timing_observed")),
        one("clwl_timing_agreed_messages", s.get("timing_agreed")),
        one("clwl_timing_disagreed_messages", s.get("timing_disagreed")),
    ]


@dataclass
class Metrics:
    """What :func:`lake_metrics` found: the run date shown (None: nothing published), the dates blocked, the
    metric families."""

    run_date: Optional[str]
    blocked: list[str]
    families: list[Family]

    @property
    def text(self) -> str:
        return exposition(self.families)


def lake_metrics(lake: Location | str, run_date: Optional[str] = None, *, blocked: Optional[bool] = None,
                 stages: Optional[Mapping[str, float]] = None) -> Metrics:
    """The metrics of the lake and of ``run_date`` (default: the latest published). ``blocked``: a publish was just
    blocked (clwl run), besides the gate's verdicts in the lake; ``stages``: the run's seconds per stage. MetricsError,
    one line, for a date not published, or a lake with neither a published day nor a verdict."""
    from clwl.lake.door import Lake
    from clwl.lake.silver import load_timelines

    lk = Lake.of(lake)
    pub, dates = published_state(lk)
    verdicts = gate_verdicts(lake)
    gate_blocked = blocked_dates(verdicts)
    if run_date is not None:
        run_date = str(RunDate(run_date))
        if run_date not in dates:
            shown = ", ".join(dates[-5:]) + (" and earlier" if len(dates) > 5 else "") if dates else "none"
            raise MetricsError(f"{lake}: {run_date} is not published (published run dates: {shown})")
        day = run_date
    elif dates:
        day = dates[-1]
    elif verdicts or blocked:
        day = None
    else:
        raise MetricsError(f"{lake}: nothing published and no quality gate verdict: run clwl run first")
    families = _lake_families(pub, day, bool(gate_blocked) or bool(blocked))
    if stages is not None:
        f = family("clwl_stage_duration_seconds")
        for stage in STAGES:
            f.add(float(stages.get(stage, 0.0)), stage=stage)
        families.append(f)
    if day is None:
        return Metrics(None, gate_blocked, families)

    d = RunDate(day).day
    summary = next(iter(gold_rows(lk, pub, "run_summary", d)), None)
    dist = gold_rows(lk, pub, "distribution", d, ["source", "sending_qmgr", "queue", "qmgr", "expected", "observed"])
    stuck = gold_rows(lk, pub, "stuck_messages", d)
    timelines = load_timelines(lake, day) if lk.exists("silver.config_history") and lk.exists(
        "silver.channel_status") else {}
    estate = estate_of(timelines, day)
    families += _summary_families(summary)
    families += share_families(dist, estate)
    families += stuck_families(stuck, estate)

    found = day_incidents(lk, pub, d, estate, stuck)
    inc = family("clwl_incidents")
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for i in found:
        counts[(i.side, i.subject)] += 1
    for qmgr in sorted(estate.qmgrs | {s for _, s in counts}):
        for side in SIDES:
            inc.add(counts.get((side, qmgr), 0), side=side, qmgr=qmgr)
    families.append(inc)

    from clwl.analyses.lint import RULE_NAMES, SEVERITIES

    findings = _findings(lake, day)
    fin = family("clwl_config_findings")
    for rule in sorted(set(RULE_NAMES) | {r for r, _ in (findings or {})}):
        for severity in SEVERITIES:
            fin.add(None if findings is None else findings.get((rule, severity), 0), rule=rule, severity=severity)
    families.append(fin)

    changes = _changes(lake, day)
    chg = family("clwl_config_changes")
    for qmgr in sorted(estate.observers | set(changes or {})):
        chg.add(None if changes is None else changes.get(qmgr, 0), qmgr=qmgr)
    families.append(chg)

    ev = day_evidence(lk, pub, d, estate, stuck)
    gaps, unseen = family("clwl_evidence_gaps"), family("clwl_chstatus_unseen_seconds")
    for qmgr in sorted(estate.qmgrs | {q for q, _ in ev.gaps} | set(ev.unseen)):
        for kind in EVIDENCE_KINDS:
            gaps.add(ev.gaps.get((qmgr, kind), 0), qmgr=qmgr, kind=kind)
        unseen.add(ev.unseen.get(qmgr, 0.0), qmgr=qmgr)
    families += [gaps, unseen]
    families.append(trend_family(lake, day))
    families += depth_families(gold_rows(lk, pub, "queue_depth", d, ["qmgr", "queue", "seq", "at", "depth",
                                                                     "oldest_arrived_at"]), d)
    return Metrics(day, gate_blocked, families)


def depth_families(rows: list[dict], day) -> list[Family]:
    """The depth gauges of gold.queue_depth's lines (a day without the trace: no series, not zeros)."""
    from clwl.analyses.depth_day import depth_maxima

    peak, age = family("clwl_queue_depth_max"), family("clwl_queue_oldest_age_max_seconds")
    for qmgr, queue, most, oldest in depth_maxima(rows, day):
        peak.add(most, qmgr=qmgr, queue=queue)
        age.add(oldest, qmgr=qmgr, queue=queue)
    return [peak, age]


def trend_family(lake: Location | str, day: str) -> Family:
    """clwl_trend_flags of ``day``: every metric and cause of clwl trend, always (so no day adds a series), with
    the count of the day's flags; NaN throughout when the lake has no trend facts (a lake made before them)."""
    from clwl.analyses.trend import CAUSE_KINDS, FLAGGED_METRICS, TrendError, trend

    try:
        flags = trend(lake, days=1, until=day).flags
        counts: Optional[dict[tuple[str, str], int]] = defaultdict(int)
        for f in flags:
            counts[(f.metric, f.cause.kind)] += 1
    except TrendError:
        counts = None
    fam = family("clwl_trend_flags")
    for metric in FLAGGED_METRICS:
        for cause in CAUSE_KINDS:
            fam.add(None if counts is None else counts.get((metric, cause), 0), metric=metric, cause=cause)
    return fam


def export(lake: Location | str, path: Optional[Path | str] = None, pushgateway: Optional[str] = None, *,
           blocked: Optional[bool] = None, stages: Optional[Mapping[str, float]] = None,
           job: str = DEFAULT_JOB) -> Metrics:
    """The latest published day's metrics (:func:`lake_metrics`), written atomically to ``path`` and pushed to the
    Pushgateway at ``pushgateway`` (each when given): what ``clwl run --metrics-file/--pushgateway`` and the nightly
    DAG do after a run."""
    found = lake_metrics(lake, blocked=blocked, stages=stages)
    text = found.text
    if path is not None:
        write_atomically(path, text)
    if pushgateway:
        push(pushgateway, text, job)
    return found
