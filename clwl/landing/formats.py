"""The landing formats' one home, pure Python: for every kind of file the landing folder takes, its name patterns
and content check, its parse entry point, the tables it feeds, whether it gives put records, the work unit it is
parsed in, the code it is read with and the gaps of ``clwl check`` it informs (docs/landing.md, "Adding a format").

Everything that does something per format reads it from here: the ingest's discovery (clwl/landing/discovery.py),
its parse tasks and their planning (parse_tasks.py, parse_step.py), the writes (write_step.py), message events
(message_events.py), the run log (run_log.py), ``clwl check`` (clwl/analyses/check.py) and the capture selection of
``clwl route`` (clwl/engine/view.py). None of them names a format: a new format is a parser module plus one entry of
:data:`FORMATS`.

Words used here: a format's ``name`` is what discovery gives a file (``LandingFile.parser``, the ``parser`` of
``clwl check --json``); its *logged formats* are what the run log and the rows' ``format`` column say of one of
its files (``mqsc``, ``rest``, ``zos`` for a capture; ``csv``, ``jsonl``, ``json`` for put records; ...).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Optional

from clwl.days import run_day
from clwl.parse.activity_trace import ACTIVITY_TRACE_NAME_PATTERNS, looks_like_amqsact
from clwl.parse.activity_trace_json import AMQSEVT_JSON_NAME_PATTERNS, looks_like_amqsevt_trace

#: The name of a file no format takes (its name matches no pattern and its content claims no format).
UNKNOWN = "unknown"

#: Work units (:attr:`Format.unit`): a file is parsed alone, or with the other files of its format, run date and
#: observing queue manager, in name order, each handed the parser state the previous one left (``TraceState``).
FILE, QMGR_DAY = "file", "qmgr_day"

#: Gaps of ``clwl check`` (:attr:`Format.informs`): what a format's files tell it.
CONFIGURATION = "configuration"  # a sender's configuration capture at or before its first put; receivers hosted
CHANNEL_STATUS = "channel_status"  # channel status captures close enough together
ACCOUNTING = "accounting"  # queue accounting of the receivers
PUTS = "puts"  # put records of a run date


@dataclass(frozen=True)
class Hint:
    """Content that names what an unknown file probably is, only to make its reason helpful: ``pattern`` found
    in its first 4 KiB -> "content looks like ``what``; name it ``expected``"."""

    pattern: re.Pattern
    what: str
    expected: str


@dataclass(frozen=True)
class Format:
    """One landing format. See the module documentation, and docs/landing.md for the step by step."""

    #: ``LandingFile.parser`` of its files.
    name: str
    #: File names it takes: regular expressions, anchored with ``\\A`` and ``\\Z``, matched against the name as it is
    #: (``re.I`` for case). With :attr:`timed`, group 1 is the capture type and group 2 the ``HHMMSS`` stamp.
    patterns: tuple[re.Pattern, ...] = ()
    #: File names it takes, as shell globs matched against the lower-cased name (checked before ``patterns``).
    globs: tuple[str, ...] = ()
    #: How its files are named, in the reason of a file no format takes: ``*.amqsmon``; and where it is
    #: listed there (lowest first; a new format: leave it, it is listed last).
    expected: str = ""
    listed: int = 99
    #: Its names carry ``<type>_HHMMSS``: the file's capture type and capture time (the run date's UTC time).
    timed: bool = False
    #: Content check on the first 4 KiB (decoded as UTF-8): true takes the file whatever its name, when the name
    #: chose no format or one of :attr:`claims_from`.
    sniff: Optional[Callable[[str], bool]] = None
    claims_from: tuple[str, ...] = ()
    #: Hints for an unknown file (:class:`Hint`), in the order they are tried (formats in :data:`FORMATS` order).
    hints: tuple[Hint, ...] = ()
    #: The parse entry point, ``"module:function"``, imported when a file of the format is parsed: a function of the
    #: parse task's per-file output (``spark.ingest.parse_tasks._Out``: ``out.spec``, ``out.add``, ``out.problem``,
    #: ``out.read``/``accepted``/``quarantined``, ...). With :attr:`unit` ``QMGR_DAY`` it also takes the zone the
    #: file's local times are read in and the state the previous file left.
    parse: str = ""
    #: The modules that read its files (each with every clwl module it imports is in the ingest's code version:
    #: a change to one reads the files again).
    modules: tuple[str, ...] = ()
    #: Logged format by the name's extension (lower case); ``default``: for every other extension, or None when
    #: the name does not decide (the parse entry point sets it from the content).
    extensions: tuple[tuple[str, str], ...] = ()
    default: Optional[str] = None
    #: Every logged format its files can have.
    logged: tuple[str, ...] = ()
    #: Tables its files' rows feed (silver.quarantine is fed by every file): their rows of a changed or removed
    #: file are replaced.
    feeds: tuple[str, ...] = ()
    #: Its files give put records (bronze.put_records): their senders' and days' message events are rebuilt.
    gives_puts: bool = False
    #: Its parser refuses a msg_id repeated within a file: a sender's day in one such file only has none.
    self_checked: bool = False
    #: :data:`FILE` or :data:`QMGR_DAY`.
    unit: str = FILE
    #: Its rows depend on the zone local times are read in (``CLWL_TRACE_TZ``): part of a file's code version.
    local_times: bool = False
    #: The gaps of ``clwl check`` its files inform.
    informs: tuple[str, ...] = ()

    def takes_name(self, name: str) -> Optional[re.Match]:
        """The match of a file name by :attr:`patterns` (or True-ish for :attr:`globs`), else None."""
        lower = name.lower()
        if any(fnmatch.fnmatch(lower, g) for g in self.globs):
            return _WHOLE.match(name)
        for pattern in self.patterns:
            m = pattern.match(name)
            if m:
                return m
        return None

    def logged_format(self, source_file: str) -> str:
        """The logged format of one of its files, from the name (the format's own name when the name does not
        decide, until the parse entry point sets it from the content)."""
        base = source_file.rsplit("/", 1)[-1]
        ext = source_file.rsplit(".", 1)[-1].lower() if "." in base else ""
        got = dict(self.extensions).get(ext, self.default)
        return self.name if got is None else got


_WHOLE = re.compile(r"(?s)\A.*\Z")

# Anchored with \A and \Z: "$" also matches before a final newline ("puts.csv\n" would be read as CSV).
#: A configuration or channel status capture's name (also how ``clwl route`` picks captures in a landing folder).
CAPTURE_NAME = re.compile(r"\A(config|chstatus)_([^.]*)\.(mqsc|txt|json|jsonl)\Z", re.I)
#: A name that starts like a capture's (``clwl route``: a folder holding such files is a queue manager folder).
CAPTURE_PREFIX = re.compile(r"\A(config|chstatus)_", re.I)


#: The logged capture format whose text echoes the commands it answers (runmqsc): they tell which kinds it asked
#: for in full (spark.ingest.parse_tasks.covered_kinds).
ECHOED_COMMANDS = "mqsc"


def browse_tool(head: str) -> str:
    """The logged format of a transmission queue browse named ``.txt``, from its first 4 KiB."""
    return "amqsbcg" if "MQGET of message number" in head else "dmpmqmsg"


_TASKS = "spark.ingest.parse_tasks"

#: The formats, in the order names are matched and content hints are tried. Name patterns of different formats
#: never take the same name (tests/unit/test_formats.py); a content check (:attr:`Format.sniff`) overrides a name.
FORMATS: tuple[Format, ...] = (
    Format(
        name="activity_trace", listed=4, globs=ACTIVITY_TRACE_NAME_PATTERNS, expected="*.amqsact|*.amqsact.txt",
        sniff=looks_like_amqsact, claims_from=(UNKNOWN, "amqsmon"),
        hints=(Hint(re.compile(r"^MonitoringType\s*:\s*MQI Activity Trace", re.M),
                    "amqsact output (application activity trace)", "*.amqsact"),),
        parse=f"{_TASKS}:_parse_activity_trace", modules=("clwl.parse.activity_trace",),
        default="amqsact", logged=("amqsact",),
        # A trace's put events are put rows like a CSV's: bronze.put_records, and silver.message_events from it.
        feeds=("bronze.activity_operations", "bronze.put_records", "silver.message_events"),
        gives_puts=True, unit=QMGR_DAY, local_times=True, informs=(PUTS,)),
    Format(
        # the same trace printed in JSON by amqsevt (-o json, -o json_compact): the same rows as amqsact's
        name="activity_trace_json", globs=AMQSEVT_JSON_NAME_PATTERNS, expected="*.amqsevt.json|*.amqsevt.jsonl",
        sniff=looks_like_amqsevt_trace, claims_from=(UNKNOWN,),
        hints=(Hint(re.compile(r'"name"\s*:\s*"Activity Trace"'), "amqsevt JSON output (application activity trace)",
                    "*.amqsevt.json"),),
        parse=f"{_TASKS}:_parse_amqsevt_json", modules=("clwl.parse.activity_trace_json",),
        default="amqsevt", logged=("amqsevt",),
        feeds=("bronze.activity_operations", "bronze.put_records", "silver.message_events"),
        gives_puts=True, unit=QMGR_DAY, local_times=True, informs=(PUTS,)),
    Format(
        name="amqsmon", listed=3, patterns=(re.compile(r"\A(.*)\.(amqsmon)\Z", re.I),), expected="*.amqsmon",
        hints=(Hint(re.compile(r"^MonitoringType\s*:", re.M), "amqsmon output", "*.amqsmon"),),
        parse=f"{_TASKS}:_parse_amqsmon", modules=("clwl.parse.amqsmon",),
        default="amqsmon", logged=("amqsmon",),
        feeds=("bronze.queue_accounting", "silver.queue_accounting", "bronze.channel_statistics",
               "silver.channel_statistics"),
        informs=(ACCOUNTING,)),
    Format(
        name="xmitq", listed=2, patterns=(re.compile(r"\A(xmitq)_([^.]*)\.(amqsbcg|dmpmqmsg|txt)\Z", re.I),),
        expected="xmitq_HHMMSS.amqsbcg|dmpmqmsg", timed=True,
        hints=(Hint(re.compile(r"MQGET of message number|^A VER |^\* (Dumper|QLOAD) Version", re.M),
                    "a transmission queue browse", "xmitq_HHMMSS.amqsbcg|dmpmqmsg"),),
        parse=f"{_TASKS}:_parse_xmitq", modules=("clwl.parse.xmitq",),
        extensions=(("amqsbcg", "amqsbcg"), ("dmpmqmsg", "dmpmqmsg")), logged=("amqsbcg", "dmpmqmsg"),
        feeds=("bronze.xmitq_messages", "silver.xmitq_contents")),
    Format(
        name="capture", listed=0, patterns=(CAPTURE_NAME,),
        expected="config_HHMMSS.mqsc|json, chstatus_HHMMSS.mqsc|json", timed=True,
        hints=(Hint(re.compile(r"^\s*AMQ\d{4}[IEWS]?:|Starting MQSC for queue manager", re.M), "runmqsc output",
                    "config_HHMMSS.mqsc or chstatus_HHMMSS.mqsc"),
               Hint(re.compile(r'"commandResponse"'), "an MQ REST response",
                    "config_HHMMSS.json or chstatus_HHMMSS.json")),
        parse=f"{_TASKS}:_parse_capture", modules=("clwl.engine.view",),
        extensions=(("json", "rest"), ("jsonl", "rest")), default="mqsc", logged=("mqsc", "rest", "zos"),
        feeds=("bronze.capture_files", "bronze.mqsc_objects"), informs=(CONFIGURATION, CHANNEL_STATUS)),
    Format(
        name="puts", listed=1, patterns=(re.compile(r"\A(puts)[^/]*\.(csv|jsonl|json)\Z", re.I),),
        expected="puts*.csv|jsonl|json",
        hints=(Hint(re.compile(r"^\ufeff?put_time\s*,", re.M), "put records (CSV)", "puts*.csv"),),
        parse=f"{_TASKS}:_parse_puts", modules=("clwl.parse.puts",),
        extensions=(("csv", "csv"), ("jsonl", "jsonl"), ("json", "json")), logged=("csv", "jsonl", "json"),
        feeds=("bronze.put_records", "silver.message_events"), gives_puts=True, self_checked=True,
        informs=(PUTS,)),
)

_BY_NAME = {f.name: f for f in FORMATS}
_BY_LOGGED = {logged: f for f in FORMATS for logged in f.logged}

#: The names every format expects, for the reason of a file no format takes.
EXPECTED_NAMES = ", ".join(f.expected for f in sorted(FORMATS, key=lambda f: f.listed))
#: ``format`` of an activity trace file's rows (bronze.activity_operations, bronze.put_records).
TRACE_FORMAT = _BY_NAME["activity_trace"].default
#: Logged formats whose parser refuses a msg_id repeated within the file (clwl.parse.puts).
SELF_CHECKED_FORMATS = frozenset(logged for f in FORMATS if f.self_checked for logged in f.logged)
#: The names of the formats whose files give put records.
PUT_FORMATS = tuple(f.name for f in FORMATS if f.gives_puts)
#: ``format`` logged for a put CSV file (the one put format Spark's own CSV reader may read: spark/ingest/put_csv.py).
PUT_CSV_FORMAT = _BY_NAME["puts"].logged[0]


def get(name: str) -> Optional[Format]:
    """The format of this name; None for :data:`UNKNOWN` (or any other name)."""
    return _BY_NAME.get(name)


def of_logged(logged: Optional[str]) -> Optional[Format]:
    """The format whose files are logged with this format (``amqsact`` -> the activity trace), or None."""
    return _BY_LOGGED.get(logged) if logged else None


def feeds(name: str) -> tuple[str, ...]:
    """Tables a file of this format feeds (none for an unknown file; silver.quarantine not counted)."""
    f = _BY_NAME.get(name)
    return f.feeds if f else ()


def gives_puts(name: str) -> bool:
    f = _BY_NAME.get(name)
    return bool(f and f.gives_puts)


def unit(name: str) -> str:
    f = _BY_NAME.get(name)
    return f.unit if f else FILE


def informs(name: str, gap: str) -> bool:
    f = _BY_NAME.get(name)
    return bool(f and gap in f.informs)


def local_times(name: str) -> bool:
    f = _BY_NAME.get(name)
    return bool(f and f.local_times)


def logged_format(name: str, source_file: str) -> str:
    """The logged format of a file from its name, before it is parsed (:data:`UNKNOWN` for an unknown file)."""
    f = _BY_NAME.get(name)
    return f.logged_format(source_file) if f else UNKNOWN


def modules() -> tuple[str, ...]:
    """Every module a format names (its readers and its parse entry point's), sorted."""
    return tuple(sorted({m for f in FORMATS for m in (*f.modules, f.parse.partition(":")[0])}))


def classify_name(name: str, run_date: str) -> tuple[str, Optional[str], Optional[datetime], Optional[str]]:
    """``(format, capture_type, capture_time, reject_reason)`` of a landing file name.

    format: a name of :data:`FORMATS`, or :data:`UNKNOWN`. capture_type and capture_time: for a :attr:`Format.timed`
    format, the word before ``_`` (``config``, ``chstatus``, ``xmitq``) and the run date + ``HHMMSS`` of the name,
    UTC. reject_reason is set when a timed name's ``HHMMSS`` is not a time of day.
    """
    for f in FORMATS:
        m = f.takes_name(name)
        if not m:
            continue
        if not f.timed:
            return f.name, None, None, None
        what, stamp = m.group(1).lower(), m.group(2)
        if not (len(stamp) == 6 and stamp.isdigit() and stamp.isascii()):
            return f.name, what, None, (
                f"bad capture time in file name {name!r}: {stamp!r} is not HHMMSS (6 digits)")
        hh, mm, ss = int(stamp[:2]), int(stamp[2:4]), int(stamp[4:])
        if hh > 23 or mm > 59 or ss > 59:
            return f.name, what, None, f"bad capture time in file name {name!r}: {stamp!r} is not a time of day"
        day = run_day(run_date)
        return f.name, what, datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=timezone.utc), None
    return UNKNOWN, None, None, None


def classify_content(name: str, head: bytes) -> str:
    """The format of a file once its first bytes are known: a format's content check takes it whatever its name
    (amqsact output under an unknown name or ``*.amqsmon``: amqsmon's records start with ``MonitoringType:`` too,
    and telling the user to rename it ``*.amqsmon`` would be wrong); any other file keeps the format its name
    chose."""
    text = None
    for f in FORMATS:
        if f.sniff is not None and name in f.claims_from:
            text = head.decode("utf-8", "replace") if text is None else text
            if f.sniff(text):
                return f.name
    return name


def unknown_format_reason(name: str, head: str) -> str:
    """The reason of a file no format takes: what its content looks like and how to name it, when a hint says."""
    for f in FORMATS:
        for hint in f.hints:
            if hint.pattern.search(head):
                return (f"no known format: file name {name!r} matches no landing pattern (content looks like "
                        f"{hint.what}; name it {hint.expected})")
    return f"no known format: file name {name!r} matches none of {EXPECTED_NAMES}"
