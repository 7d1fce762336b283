"""What the data could not show: the one home of the gap rules that ``clwl check`` (clwl/analyses/check.py), the ingest's
plan (spark/ingest/run_log.py) and the report (clwl/report/evidence.py) all apply, so the three never disagree
on what a thin day is.

- Channel status (:func:`chstatus_gap`): a queue manager's channel states are known at its channel status
  captures and assumed to hold until the next one. Two consecutive captures further apart than the interval
  leave a stretch in which a channel could have failed and recovered unseen; for a sender, so does the stretch
  from its first put to the day's first capture and from the last capture to its last put. A sender with no
  capture at all that day has its whole day unseen (``no_chstatus``): a quiet day with no captures is never a
  healthy one.
- Intra-group queuing (:func:`igq_gaps`): a queue manager with IGQ(ENABLED) in a queue-sharing group whose other
  members no capture of the day shows (no other queue manager's DISPLAY QMGR with that QSGNAME, no DISPLAY GROUP
  member line): its messages to members are replayed over the cluster path for want of evidence.
- Queue accounting (:func:`accounting_gaps`): a receiver (the host of a cluster queue instance in the
  configuration in force) with no QueueAccounting records that day: what it received cannot be compared with
  the replay.

Pure: datetimes in, :class:`Gap` records out; nothing is read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterable, Mapping, Sequence

#: Default longest stretch between two channel status captures of a queue manager, in minutes.
CHSTATUS_INTERVAL_MINUTES = 60
CHSTATUS_INTERVAL = timedelta(minutes=CHSTATUS_INTERVAL_MINUTES)


@dataclass
class Gap:
    """Something missing that weakens the replay (a warning, never a failure).

    kind: no_configuration | chstatus_interval | no_chstatus | no_accounting | no_puts | igq_no_member |
    no_full_repository."""

    kind: str
    run_date: str
    qmgr: str | None
    detail: str


@dataclass(frozen=True)
class Unseen:
    """A stretch of a queue manager's day without a channel status capture: from ``start`` to ``end``, named
    ``start_label`` and ``end_label`` (a capture's HH:MM:SS, or "first put ..."/"last put ...")."""

    qmgr: str
    start: datetime
    end: datetime
    start_label: str
    end_label: str

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)

    @property
    def text(self) -> str:
        return f"{self.start_label} to {self.end_label} ({self.minutes} min)"


@dataclass(frozen=True)
class ChstatusGap:
    """A queue manager's channel status gap on one day: its unseen stretches (the whole day for no_chstatus)."""

    kind: str  # chstatus_interval | no_chstatus
    qmgr: str
    unseen: tuple[Unseen, ...]
    interval_minutes: int

    def detail(self, run_date: str) -> str:
        if self.kind == "no_chstatus":
            return (f"{self.qmgr} puts on {run_date} but has no channel status capture (chstatus_HHMMSS) that day: "
                    "channel states come from the STATUS of DISPLAY CLUSQMGR or an earlier day's capture")
        return (f"{self.qmgr}: channel status captured less often than every {self.interval_minutes} min: no capture "
                "from " + ", from ".join(u.text for u in self.unseen))

    def gap(self, run_date: str) -> Gap:
        return Gap(self.kind, run_date, self.qmgr, self.detail(run_date))


def _hhmmss(t: datetime) -> str:
    return t.strftime("%H:%M:%S")


def chstatus_gap(qmgr: str, captures: Iterable[datetime], interval: timedelta = CHSTATUS_INTERVAL, *,
                 puts: tuple[datetime, datetime] | None = None, sends: bool | None = None,
                 day: tuple[datetime, datetime] | None = None) -> ChstatusGap | None:
    """The channel status gap of ``qmgr`` on one day, or None when its captures are close enough.

    captures: the day's channel status capture times (an accepted capture; an empty answer counts: every channel
    inactive). puts: the sender's first and last put that day (None: not known, as in the ingest's plan);
    sends: whether it puts that day (default: puts is given). day: the day's start and end, the unseen stretch of
    a sender without captures (default: its puts, else no stretch)."""
    times = sorted(captures)
    sends = puts is not None if sends is None else sends
    minutes = int(interval.total_seconds() // 60)
    if not times:
        if not sends:
            return None
        span = day or puts
        whole = (Unseen(qmgr, span[0], span[1], _hhmmss(span[0]), _hhmmss(span[1])),) if span else ()
        return ChstatusGap("no_chstatus", qmgr, whole, minutes)
    stretches = [Unseen(qmgr, a, b, _hhmmss(a), _hhmmss(b)) for a, b in zip(times, times[1:])]
    if puts is not None:
        first, last = puts
        whose = "" if sends else "the day's "  # a receiver: the estate's first and last put
        if first < times[0]:
            stretches.insert(0, Unseen(qmgr, first, times[0], f"{whose}first put {_hhmmss(first)}",
                                       _hhmmss(times[0])))
        if last > times[-1]:
            stretches.append(Unseen(qmgr, times[-1], last, _hhmmss(times[-1]), f"{whose}last put {_hhmmss(last)}"))
    long = tuple(u for u in stretches if u.end - u.start > interval)
    return ChstatusGap("chstatus_interval", qmgr, long, minutes) if long else None


def chstatus_gaps(run_date: str, captures: Mapping[str, Sequence[datetime]],
                  puts: Mapping[str, tuple[datetime, datetime] | None], interval: timedelta = CHSTATUS_INTERVAL, *,
                  day: tuple[datetime, datetime] | None = None) -> list[ChstatusGap]:
    """:func:`chstatus_gap` of every queue manager with a capture or puts that day (``puts``: sender -> its
    first and last put, or None when only known to put), in name order."""
    out = []
    # A queue manager that does not put (a receiver) is watched while the estate's messages flow: from the day's
    # first put to its last. So one capture at 06:00 leaves the rest of the day unseen, as it is.
    spans = [p for p in puts.values() if p is not None]
    flowing = (min(p[0] for p in spans), max(p[1] for p in spans)) if spans else None
    for q in sorted(set(captures) | set(puts)):
        g = chstatus_gap(q, captures.get(q, ()), interval, puts=puts.get(q) if q in puts else flowing,
                         sends=q in puts, day=day)
        if g is not None:
            out.append(g)
    return out


def accounting_gaps(run_date: str, hosts: Mapping[str, set[str]], seen_by: Mapping[str, set[str]],
                    with_accounting: set[str]) -> list[Gap]:
    """The receivers without queue accounting on ``run_date``: ``hosts`` (host -> the cluster queues it hosts,
    from the configuration in force that day), ``seen_by`` (host -> the queue managers whose configuration shows
    it), ``with_accounting`` (the queue managers with QueueAccounting records that day)."""
    return [Gap("no_accounting", run_date, host, (
        f"{host} hosts {', '.join(sorted(hosts[host]))} (seen in the configuration of "
        f"{', '.join(sorted(seen_by.get(host, ())))}) but has no queue accounting (*.amqsmon with QueueAccounting "
        f"records) for {run_date}: what it received cannot be compared with the replay"))
        for host in sorted(hosts) if host not in with_accounting]


def igq_gaps(run_date: str, groups: Mapping[str, tuple[str, bool]], listed: Mapping[str, set[str]]) -> list[Gap]:
    """The queue managers with IGQ(ENABLED) whose queue-sharing group shows no other member on ``run_date``:
    ``groups`` (queue manager -> (QSGNAME, IGQ enabled) of its DISPLAY QMGR that day), ``listed`` (group -> the
    members DISPLAY GROUP lists)."""
    out = []
    for qm, (group, igq) in sorted(groups.items()):
        if not (igq and group):
            continue
        others = {q for q, (g, _) in groups.items() if g == group} | set(listed.get(group, ()))
        if others - {qm}:
            continue
        out.append(Gap("igq_no_member", run_date, qm, igq_gap_text(qm, group, run_date)))
    return out


def igq_gap_text(qmgr: str, group: str, run_date: str = "") -> str:
    """The one sentence of an IGQ(ENABLED) queue manager whose group shows no other member (check, report, route)."""
    on = f" on {run_date}" if run_date else ""
    return (f"{qmgr} has IGQ(ENABLED) in queue-sharing group {group}, but no other member of {group} is captured{on} "
            f"(no other queue manager's DISPLAY QMGR shows QSGNAME({group}), no DISPLAY GROUP): its messages to "
            f"members are replayed over the cluster path; capture DISPLAY GROUP on {qmgr}")


#: The lint rules that compare a partial repository's view with the full repositories' (docs/lint.md).
FULL_REPOSITORY_RULES = ("partial-view-differs", "departed-qmgr-chosen")


def full_repository_gaps(run_date: str, named: set[str], configured: set[str]) -> list[Gap]:
    """The full repositories the captures of ``run_date`` name (``named``) when none of them has a configuration
    capture that day (``configured``: the queue managers that have one), while others do: the rules that compare
    with the full repositories' view have nothing to compare with. One gap a day."""
    if not named or not configured or named & configured:
        return []
    names = ", ".join(sorted(named))
    return [Gap("no_full_repository", run_date, None, (
        f"the captures of {run_date} name the full repositories {names} (QMTYPE(REPOS)), but none of them has a "
        f"configuration capture that day: clwl lint's {' and '.join(FULL_REPOSITORY_RULES)} say nothing; capture "
        f"DISPLAY QMGR, DISPLAY CLUSQMGR(*) ALL and DISPLAY QCLUSTER(*) ALL on {names}"))]
