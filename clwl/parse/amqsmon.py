"""amqsmon output: queue accounting and queue statistics, one row per queue per interval; channel statistics,
one row per channel per interval.

The format is ``amqsmon0.c``'s (docs/formats.md, "amqsmon output"): each record starts with
``MonitoringType: <type>`` and goes on with ``Label: value`` lines; a group prints ``QueueAccounting: <n>``
(or ``QueueStatistics: <n>``, ``ChannelStatistics: <n>``) and then its fields indented. Strings are
single-quoted, byte strings ``x'hex'``, int lists ``[non-persistent, persistent]``.

``parse_amqsmon_text`` returns ``(records, problems, skipped)``:

* one :class:`QueueAccountingRecord` per queue group of a QueueAccounting or QueueStatistics record (a
  record with ``ObjectCount: 3`` gives three rows); a QueueStatistics record whose queue fields are at the
  top level (no group) gives one row;
* one :class:`ChannelStatisticsRecord` per channel group of a ChannelStatistics record (``amqsmon -t
  statistics``), in file order among the queue rows; likewise one for channel fields at the top level;
* ``skipped``: the number of records of the types that carry no per-queue or per-channel counts
  (MQIAccounting, MQIStatistics), recognised and left out on purpose (their fields are not checked);
* a :class:`ParseProblem` per unit that could not be accepted: a queue or channel group (missing QueueName /
  ChannelName, an int list that is not ``[a, b]``, a line that is not ``Label: value`` inside it), or a whole
  record when its own fields are wrong (bad interval date/time, malformed line outside the groups, unknown
  type, no queue or channel at all), plus one for groups that ``ObjectCount`` announces but the file does not
  hold, and one per non-blank line outside any record.

So rows read = ``len(records) + skipped + len(problems)``.

Channel statistics labels are amqsmon's, not the PCF reference's: amqsmon's name table prints RemoteQmgr as
``RemoteQMgr``, ConnectionName as ``ConnName``, NetTimeMin/Avg/Max as ``NetMinTime``/``NetMinAverage``/
``NetMaxTime`` and ExitTimeMin/Avg/Max as ``ExitMinTime``/``ExitMinAverage``/``ExitMaxTime``. Both spellings are
read (:data:`CHANNEL_LABELS`), the amqsmon one first.

A field amqsmon prints by number because the parameter is missing from its name table (``1505: 7``, a PCF
parameter newer than the amqsmon build) is not a problem: it is kept in the row's ``unknown_fields`` as
``("1505", "7")`` and the group's other fields are read as usual.

Assumptions: interval dates and times are returned as naive datetimes exactly as printed (amqsmon prints
the queue manager's local time and no zone); a put or channel counter that is absent is ``None``;
``put_fail_count`` is PutFailCount (Put1FailCount is not added). A QueueStatistics group's QMinDepth and
QMaxDepth (amqsmon prints them as plain integers) are ``q_min_depth`` / ``q_max_depth``; one that is not a whole
number, is negative, or a minimum above the maximum costs its queue row (a problem), like a bad int list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from clwl.parse.common import INT64_MAX, INT64_MIN, InputError, ParseProblem, checked_int, clip, read_input_bytes

__all__ = ["AmqsmonRecord", "ChannelStatisticsRecord", "QueueAccountingRecord", "parse_amqsmon_text",
           "parse_amqsmon_file", "CHANNEL_LABELS", "CHANNEL_TYPE", "QUEUE_TYPES", "SKIPPED_TYPES"]

QUEUE_TYPES = ("QueueAccounting", "QueueStatistics")
CHANNEL_TYPE = "ChannelStatistics"
SKIPPED_TYPES = ("MQIAccounting", "MQIStatistics")
# amqsmon prints a channel group under the same word as the record type (its MQGACF_CHL_STATISTICS_DATA name).
_GROUP_LABELS = frozenset(QUEUE_TYPES + (CHANNEL_TYPE,))

#: Field of ChannelStatisticsRecord -> the labels it is read from: amqsmon's name first, then the PCF
#: reference's (IBM's "Channel statistics message data"), for output of another formatter or amqsmon build.
CHANNEL_LABELS: dict[str, tuple[str, ...]] = {
    "channel_type": ("ChannelType",),
    "remote_qmgr": ("RemoteQMgr", "RemoteQmgr"),
    "connection_name": ("ConnName", "ConnectionName"),
    "msg_count": ("MsgCount",),
    "total_bytes": ("TotalBytes",),
    "net_time_min": ("NetMinTime", "NetTimeMin"),
    "net_time_avg": ("NetMinAverage", "NetTimeAvg"),  # sic: amqsmon's table names the average NetMinAverage
    "net_time_max": ("NetMaxTime", "NetTimeMax"),
    "exit_time_min": ("ExitMinTime", "ExitTimeMin"),
    "exit_time_avg": ("ExitMinAverage", "ExitTimeAvg"),
    "exit_time_max": ("ExitMaxTime", "ExitTimeMax"),
    "full_batch_count": ("FullBatchCount",),
    "incomplete_batch_count": ("IncmplBatchCount",),
    "average_batch_size": ("AverageBatchSize",),
    "put_retry_count": ("PutRetryCount",),
}
_CHANNEL_TEXT = ("channel_type", "remote_qmgr", "connection_name")


@dataclass(frozen=True, slots=True)
class QueueAccountingRecord:
    """Puts to one queue in one accounting/statistics interval."""

    source: str
    line: int  # line of the queue group (or of the record, for a statistics record without groups)
    monitoring_type: str  # 'QueueAccounting' | 'QueueStatistics'
    qmgr: str
    interval_start: datetime  # naive, as printed
    interval_end: datetime
    queue: str
    queue_type: str | None  # Local, Model, Alias, Remote, Cluster, ... as printed
    put_count_nonpersistent: int | None
    put_count_persistent: int | None
    put1_count_nonpersistent: int | None
    put1_count_persistent: int | None
    put_fail_count: int | None
    put_bytes_nonpersistent: int | None
    put_bytes_persistent: int | None
    application_name: str | None  # None for statistics
    connection_id: str | None  # hex, upper case; None for statistics
    #: QueueStatistics' QMinDepth / QMaxDepth: the least and greatest depth of the queue in the interval (None
    #: when not printed: accounting records never print them).
    q_min_depth: int | None = None
    q_max_depth: int | None = None
    #: Fields amqsmon printed by number (a PCF parameter missing from its name table: ``1505: 7``), as
    #: ``(number, value)`` in file order: the record's own, then its queue group's. Kept, never a problem.
    unknown_fields: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ChannelStatisticsRecord:
    """What one channel moved in one statistics interval (a ChlStatisticsData group of a ChannelStatistics
    record). On a sending queue manager the MsgCount of a CLUSSDR channel is every message it sent: the
    replayed puts, and any other traffic (other queues, replies, cluster commands)."""

    source: str
    line: int  # line of the channel group (or of the record, for channel fields without a group)
    qmgr: str  # the queue manager that wrote the record (QueueManager)
    interval_start: datetime  # naive, as printed
    interval_end: datetime
    channel: str  # ChannelName
    channel_type: str | None  # ClusSdr, ClusRcvr, Sender, Receiver, ... as printed
    remote_qmgr: str | None  # the partner queue manager (RemoteQMgr)
    connection_name: str | None  # ConnName
    msg_count: int | None  # messages the channel sent (or received) in the interval
    total_bytes: int | None
    net_time_min: int | None  # microseconds
    net_time_avg: int | None
    net_time_max: int | None
    exit_time_min: int | None  # microseconds
    exit_time_avg: int | None
    exit_time_max: int | None
    full_batch_count: int | None
    incomplete_batch_count: int | None
    average_batch_size: int | None
    put_retry_count: int | None
    #: Fields amqsmon printed by number, as for QueueAccountingRecord.unknown_fields.
    unknown_fields: tuple[tuple[str, str], ...] = ()


#: A row of amqsmon output.
AmqsmonRecord = QueueAccountingRecord | ChannelStatisticsRecord


class _Reject(Exception):
    pass


# Matched against the line without its trailing blanks (the value is what is left): "(.*?)\s*$" retried the
# blanks at each position of the value, quadratic on a run of blanks inside it.
_LINE = re.compile(r"(\s*+)([A-Za-z][A-Za-z0-9_]*+|\d++)\s*+:\s?(.*)")
_INT_LIST = re.compile(r"^\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]$")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_TIME = re.compile(r"^(\d{2})[.:](\d{2})[.:](\d{2})$")
_HEXSTR = re.compile(r"^[xX]'([0-9A-Fa-f]*)'$")


def _text(value: str) -> str:
    if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
        return value[1:-1].rstrip()
    return value


def _int(fields: dict[str, str], label: str) -> int | None:
    value = fields.get(label)
    if value is None:
        return None
    try:
        return checked_int(value, INT64_MIN, INT64_MAX)
    except ValueError as exc:
        if "out of range" in str(exc):
            raise _Reject(f"{label} {exc}") from None
        raise _Reject(f"{label} is not an integer: {clip(value)!r}") from None


def _depth(fields: dict[str, str], label: str) -> int | None:
    """A queue depth (QMinDepth, QMaxDepth): a whole number, never negative."""
    value = _int(fields, label)
    if value is not None and value < 0:
        raise _Reject(f"{label} is negative: {value}")
    return value


def _first(fields: dict[str, str], labels: tuple[str, ...]) -> str | None:
    """The first of ``labels`` the group printed (None: none of them)."""
    for label in labels:
        if label in fields:
            return label
    return None


def _pair(fields: dict[str, str], label: str) -> tuple[int | None, int | None]:
    value = fields.get(label)
    if value is None:
        return None, None
    match = _INT_LIST.match(value)
    if not match:
        raise _Reject(f"{label} is not an int list [a, b]: {clip(value)!r}")
    try:
        return (checked_int(match.group(1), INT64_MIN, INT64_MAX),
                checked_int(match.group(2), INT64_MIN, INT64_MAX))
    except ValueError as exc:
        raise _Reject(f"{label} {exc}") from None


def _interval(fields: dict[str, str], which: str) -> datetime:
    date_label, time_label = f"Interval{which}Date", f"Interval{which}Time"
    date, time = fields.get(date_label), fields.get(time_label)
    if date is None:
        raise _Reject(f"missing {date_label}")
    if time is None:
        raise _Reject(f"missing {time_label}")
    date, time = _text(date), _text(time)
    d = _DATE.match(date)
    if not d:
        raise _Reject(f"bad {date_label} {date!r}")
    t = _TIME.match(time)
    if not t:
        raise _Reject(f"bad {time_label} {time!r}")
    try:
        day = datetime(int(d.group(1)), int(d.group(2)), int(d.group(3)))
    except ValueError:
        raise _Reject(f"bad {date_label} {date!r}") from None
    hh, mm, ss = int(t.group(1)), int(t.group(2)), int(t.group(3))
    if hh > 23 or mm > 59 or ss > 59:
        raise _Reject(f"bad {time_label} {time!r}")
    return day.replace(hour=hh, minute=mm, second=ss)


class _Group:
    __slots__ = ("line", "fields", "lines", "error", "unknown")

    def __init__(self, line: int):
        self.line = line
        self.unknown: list[tuple[str, str]] = []  # fields printed by number
        self.fields: dict[str, str] = {}
        self.lines: list[str] = []
        self.error: str | None = None


class _Record:
    __slots__ = ("line", "mtype", "fields", "lines", "error", "groups", "unknown")

    def __init__(self, line: int, mtype: str):
        self.line = line
        self.unknown: list[tuple[str, str]] = []  # fields printed by number
        self.mtype = mtype
        self.fields: dict[str, str] = {}
        self.lines: list[str] = []
        self.error: str | None = None
        self.groups: list[_Group] = []


def _channel_row(source: str, line: int, qmgr: str, start: datetime, end: datetime, fields: dict[str, str],
                 unknown: list[tuple[str, str]]) -> ChannelStatisticsRecord:
    channel = _text(fields.get("ChannelName", ""))
    if not channel:
        raise _Reject("missing ChannelName in ChannelStatistics group")
    values: dict[str, object] = {}
    for name, labels in CHANNEL_LABELS.items():
        label = _first(fields, labels)
        if name in _CHANNEL_TEXT:
            values[name] = (_text(fields[label]) or None) if label is not None else None
        else:
            values[name] = _int(fields, label) if label is not None else None
    return ChannelStatisticsRecord(source=source, line=line, qmgr=qmgr, interval_start=start, interval_end=end,
                                   channel=channel, unknown_fields=tuple(unknown), **values)  # type: ignore[arg-type]


def parse_amqsmon_text(
    text: str, source: str
) -> tuple[list[AmqsmonRecord], list[ParseProblem], int]:
    """Rows of amqsmon output; see the module documentation for what counts as what."""
    records: list[AmqsmonRecord] = []
    problems: list[ParseProblem] = []
    skipped = 0
    cur: _Record | None = None
    group: _Group | None = None

    def finish(rec: _Record) -> None:
        nonlocal skipped
        raw = "\n".join(rec.lines)
        if rec.mtype in SKIPPED_TYPES:
            skipped += 1
            return
        try:
            if rec.mtype not in _GROUP_LABELS:
                raise _Reject(f"unknown MonitoringType {rec.mtype!r}")
            if rec.error:
                raise _Reject(rec.error)
            head = rec.fields
            qmgr = _text(head.get("QueueManager", ""))
            if not qmgr:
                raise _Reject("missing QueueManager")
            start = _interval(head, "Start")
            end = _interval(head, "End")
            accounting = rec.mtype == "QueueAccounting"
            appl = conn = None
            if accounting:
                appl = _text(head["ApplicationName"]) if "ApplicationName" in head else None
                if "ConnectionId" in head:
                    match = _HEXSTR.match(head["ConnectionId"])
                    conn = match.group(1).upper() if match else _text(head["ConnectionId"])
            count = _int(head, "ObjectCount")
            units = rec.groups
            channels = rec.mtype == CHANNEL_TYPE
            if not units:
                if channels and "ChannelName" not in head:
                    raise _Reject("no channel in record (no ChannelName and no channel groups)")
                if not channels and "QueueName" not in head:
                    raise _Reject("no queue in record (no QueueName and no queue groups)")
        except _Reject as exc:
            problems.append(ParseProblem(source, rec.line, str(exc), raw))
            return
        what = "channel" if channels else "queue"

        def row(line: int, fields: dict[str, str], unknown: list[tuple[str, str]]) -> AmqsmonRecord:
            if channels:
                return _channel_row(source, line, qmgr, start, end, fields, rec.unknown + unknown)
            queue = _text(fields.get("QueueName", ""))
            if not queue:
                raise _Reject(f"missing QueueName in {rec.mtype} group")
            put_np, put_p = _pair(fields, "PutCount")
            put1_np, put1_p = _pair(fields, "Put1Count")
            bytes_np, bytes_p = _pair(fields, "PutBytes")
            qtype = fields.get("QueueType")
            qmin, qmax = _depth(fields, "QMinDepth"), _depth(fields, "QMaxDepth")
            if qmin is not None and qmax is not None and qmin > qmax:
                raise _Reject(f"QMinDepth {qmin} is above QMaxDepth {qmax}")
            return QueueAccountingRecord(
                source=source,
                line=line,
                monitoring_type=rec.mtype,
                qmgr=qmgr,
                interval_start=start,
                interval_end=end,
                queue=queue,
                queue_type=_text(qtype) if qtype is not None else None,
                put_count_nonpersistent=put_np,
                put_count_persistent=put_p,
                put1_count_nonpersistent=put1_np,
                put1_count_persistent=put1_p,
                put_fail_count=_int(fields, "PutFailCount"),
                put_bytes_nonpersistent=bytes_np,
                put_bytes_persistent=bytes_p,
                application_name=appl,
                connection_id=conn,
                q_min_depth=qmin,
                q_max_depth=qmax,
                unknown_fields=tuple(rec.unknown + unknown),
            )

        if not units:
            try:
                records.append(row(rec.line, head, []))
            except _Reject as exc:
                problems.append(ParseProblem(source, rec.line, str(exc), raw))
            return
        for g in units:
            try:
                if g.error:
                    raise _Reject(g.error)
                records.append(row(g.line, g.fields, g.unknown))
            except _Reject as exc:
                problems.append(ParseProblem(source, g.line, str(exc), "\n".join(g.lines)))
        if count is not None and count > len(units):
            problems.append(ParseProblem(
                source, rec.line, f"ObjectCount {count} but only {len(units)} {what} groups", raw))

    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _LINE.fullmatch(line.rstrip())
        if match and match.group(2) == "MonitoringType" and not match.group(1):
            if cur is not None:
                finish(cur)
            cur = _Record(lineno, _text(match.group(3)))
            cur.lines.append(line)
            group = None
            continue
        if cur is None:
            problems.append(ParseProblem(source, lineno, "line outside any record", line))
            continue
        cur.lines.append(line)
        indented = line[0] in " \t"
        if match and not indented and match.group(2) in _GROUP_LABELS and match.group(3).strip().isdigit():
            group = _Group(lineno)
            group.lines.append(line)
            cur.groups.append(group)
            continue
        if group is not None and indented:
            group.lines.append(line)
            if match is None:
                if group.error is None:
                    group.error = f"malformed line (no 'Label: value'): {line.strip()[:60]!r}"
            elif match.group(2).isdigit():
                group.unknown.append((match.group(2), match.group(3)))
            else:
                group.fields[match.group(2)] = match.group(3)
            continue
        group = None if not indented else group
        if match is None:
            if cur.error is None:
                cur.error = f"malformed line (no 'Label: value'): {line.strip()[:60]!r}"
        elif match.group(2).isdigit():
            cur.unknown.append((match.group(2), match.group(3)))
        else:
            cur.fields.setdefault(match.group(2), match.group(3))
    if cur is not None:
        finish(cur)
    return records, problems, skipped


_LOOKS_AMQSMON = re.compile(r"^MonitoringType\s*:", re.M)


def parse_amqsmon_file(path: str | Path) -> tuple[list[AmqsmonRecord], list[ParseProblem], int]:
    """An amqsmon output file; InputError when it is missing, unreadable or not amqsmon output."""
    data = read_input_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    if text.strip() and not _LOOKS_AMQSMON.search(text):
        raise InputError(str(path), "not amqsmon output (no 'MonitoringType:' line)")
    return parse_amqsmon_text(text, str(path))
