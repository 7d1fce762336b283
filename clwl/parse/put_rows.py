"""One row of a put-record file, its values as text in PUT_COLUMNS order, to a :class:`PutRecord` or the
reason it is refused (the first thing wrong with it): what :mod:`clwl.parse.puts` does with every CSV row and JSON
object.

Reading of values: booleans are ``true``/``false`` in any letter case; put_time is ISO-8601 and is converted to UTC
(``Z``, an offset, or no zone, which is read as UTC because the schema says UTC); hex is returned upper case; an
empty optional value is ``None``. MQ names (sending_qmgr, queue, target_qmgr, observed_qmgr, observed_xmitq: at
most 48 characters; observed_channel: at most 20) may hold only ``A-Z a-z 0-9 . / _ %``. open_handle and group_id
are kept as given. application (optional, the last of the columns) is printable text of at most
:data:`~clwl.parse.put_record.APPLICATION_MAX` characters. A msg_id seen again in an already accepted row of the
same file is refused (``duplicate msg_id``).

A row may stop before ``application`` (a CSV file whose header is the other columns in their order is read
without mapping its rows): the missing value is empty.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from clwl.parse.common import INT64_MAX, clip
from clwl.parse.put_record import APPLICATION_MAX, BINDS, PUT_COLUMNS, PutRecord, make_put_record

__all__ = ["BOOL_WORDS", "BadRow", "HEX_BYTES", "HEX_DIGITS", "MQ_NAME_CHARS", "NAME_MAX", "RowValidator"]

# The rules below are public so that another reader of put CSV files (spark.ingest.put_csv, Spark's CSV reader)
# builds its checks from them instead of from a copy.

_BIND_SET = frozenset(BINDS)

#: The characters of an MQ name, as a regular expression character class's body.
MQ_NAME_CHARS = "A-Za-z0-9._/%"
#: Hex digits, as a character class's body.
HEX_DIGITS = "0-9A-Fa-f"
#: The boolean words, read in any letter case.
BOOL_WORDS = {"true": True, "false": False}
#: Longest value of each MQ name column.
NAME_MAX = {"sending_qmgr": 48, "queue": 48, "target_qmgr": 48, "observed_qmgr": 48,
            "observed_xmitq": 48, "observed_channel": 20}
#: Size in bytes of each hex column (two hex digits a byte).
HEX_BYTES = {"accounting_token": 32, "msg_id": 24}

_MQ_NAME = re.compile(f"[{MQ_NAME_CHARS}]+")
_HEX = re.compile(f"[{HEX_DIGITS}]*")
# the common spellings looked up as they are; any other letter case through lower()
_BOOLS = {spelled: value for word, value in BOOL_WORDS.items() for spelled in (word, word.title(), word.upper())}
_UTC = timezone.utc
_NAME_MAX = NAME_MAX


#: Where ``application`` is in a row (PUT_COLUMNS order): a row as short as this has none.
APPLICATION_AT = [c.name for c in PUT_COLUMNS].index("application")


class BadRow(Exception):
    """A row that cannot be a PutRecord: its message is the problem's reason (raised by RowValidator.row)."""


def _name_problem(column: str, value: str) -> str:
    limit = _NAME_MAX[column]
    if len(value) > limit:
        return f"{column} {value!r} is longer than {limit} characters"
    for ch in value:
        if not _MQ_NAME.fullmatch(ch):
            return f"invalid character {ch!r} in {column} {value!r}"
    return f"invalid {column} {value!r}"  # not reached


class RowValidator:
    """Turns rows of text into PutRecords; keeps the per-file state (duplicate msg_ids, caches)."""

    def __init__(self, source: str):
        self.source = source
        self.seen: dict[str, int] = {}  # msg_id -> line
        self.names48: set[str] = set()  # known-good names, so repeated names are checked once
        self.names20: set[str] = set()
        self.tokens: dict[str, bool] = {}  # upper-case token -> all zeros
        self.applications: set[str] = set()  # known-good application names
        #: One row (values stripped, in PUT_COLUMNS order) -> PutRecord; raises BadRow. A closure over this
        #: validator's state (see _fast_row), called once per data row.
        self.row = self._fast_row()

    def name(self, column: str, value: str, required: bool) -> str | None:
        if not value:
            if required:
                raise BadRow(f"missing {column}")
            return None
        known = self.names20 if column == "observed_channel" else self.names48
        if value in known:
            return value
        if len(value) <= _NAME_MAX[column] and _MQ_NAME.fullmatch(value):
            known.add(value)
            return value
        raise BadRow(_name_problem(column, value))

    def _fast_row(self):
        # The common case (names already seen, canonical values) touches only locals; everything else
        # falls through to the checking helpers, which produce the problem texts.
        source = self.source
        seen = self.seen
        names48 = self.names48
        names20 = self.names20
        tokens = self.tokens
        applications = self.applications
        app_at = APPLICATION_AT
        name = self.name
        fromiso = datetime.fromisoformat
        utc = _UTC
        bools = _BOOLS
        binds = _BIND_SET
        hex_ok = _HEX.fullmatch
        make = make_put_record
        token_digits = 2 * HEX_BYTES["accounting_token"]
        msg_id_digits = 2 * HEX_BYTES["msg_id"]

        def row(line: int, v: list[str]) -> PutRecord:
            text = v[0]
            try:
                if len(text) < 11:
                    raise ValueError
                ts = fromiso(text)
            except ValueError:
                raise BadRow(f"bad timestamp in put_time: {text!r}" if text else "missing put_time") from None
            if ts.tzinfo is not utc:
                ts = ts.replace(tzinfo=utc) if ts.tzinfo is None else _to_utc(ts, text)
            sending = v[1]
            if sending not in names48:
                name("sending_qmgr", sending, True)
            queue = v[2]
            if queue not in names48:
                name("queue", queue, True)
            target = v[3]
            if not target:
                target = None
            elif target not in names48:
                name("target_qmgr", target, False)
            bind = v[4]
            if bind not in binds:
                bind = _bind(bind)
            logical = bools.get(v[7])
            if logical is None:
                logical = _bool("logical_order", v[7])
            from_chl = bools.get(v[8])
            if from_chl is None:
                from_chl = _bool("from_cluster_channel", v[8])
            pcf = bools.get(v[9])
            if pcf is None:
                pcf = _bool("pcf", v[9])
            text = v[10]
            if len(text) < 19 and text.isdigit() and text.isascii():  # below 10**18: fits a long
                length = int(text)
            else:
                length = _length(text)
            persistent = bools.get(v[11])
            if persistent is None:
                persistent = _bool("persistent", v[11])
            token = v[12]
            zero = tokens.get(token)  # keyed by the upper-case form: a hit means the text is that form
            if zero is None:
                token = _hex("accounting_token", token, HEX_BYTES["accounting_token"])
                zero = tokens[token] = token.count("0") == token_digits
            msg_id = v[13]
            if len(msg_id) == msg_id_digits and hex_ok(msg_id):
                msg_id = msg_id.upper()
            else:
                msg_id = _hex("msg_id", msg_id, HEX_BYTES["msg_id"])
            first = seen.get(msg_id)
            if first is not None:
                raise BadRow(f"duplicate msg_id (first at line {first})")
            obs_q = v[14] or None
            if obs_q is not None and obs_q not in names48:
                name("observed_qmgr", obs_q, False)
            obs_c = v[15] or None
            if obs_c is not None and obs_c not in names20:
                name("observed_channel", obs_c, False)
            obs_x = v[16] or None
            if obs_x is not None and obs_x not in names48:
                name("observed_xmitq", obs_x, False)
            app = v[app_at] if len(v) > app_at else ""
            if not app:
                app = None
            elif app not in applications:
                applications.add(_application(app))
            seen[msg_id] = line
            return make(source, line, ts, sending, queue, target, bind, v[5] or None, v[6] or None, logical,
                        from_chl, pcf, length, persistent, token, zero, msg_id, obs_q, obs_c, obs_x, app)

        return row


def _application(text: str) -> str:
    """An application name as given, or BadRow: printable (no control or line-break character, which would
    break the report's lines) and at most APPLICATION_MAX characters."""
    if len(text) > APPLICATION_MAX:
        raise BadRow(f"application {clip(text)!r} is longer than {APPLICATION_MAX} characters")
    if not text.isprintable():
        ch = next(c for c in text if not c.isprintable())
        raise BadRow(f"invalid character {ch!r} in application {clip(text)!r}")
    return text


def _bind(text: str) -> str:
    low = text.lower()
    if low in _BIND_SET:
        return low
    if not text:
        raise BadRow("missing bind")
    raise BadRow(f"unknown bind value {text!r} (expected notfixed, open or group)")


def _length(text: str) -> int:
    if not text:
        raise BadRow("missing length")
    if text.isdigit() and text.isascii():
        digits = text.lstrip("0") or "0"
        if len(digits) <= 19 and int(digits) <= INT64_MAX:
            return int(digits)
        raise BadRow(f"length {clip(text)} is out of range (at most {INT64_MAX})")
    if text[0] == "-" and text[1:].isdigit() and text[1:].isascii():
        raise BadRow(f"negative length {clip(text)}")
    raise BadRow(f"non-integer length {clip(text)!r}")


def _to_utc(ts: datetime, text: str) -> datetime:
    try:
        return ts.astimezone(_UTC)
    except OverflowError:  # 0001-01-01T00:00+05:00 is before year 1 in UTC
        raise BadRow(f"put_time {text!r} is out of range in UTC") from None


def _bool(column: str, text: str) -> bool:
    value = _BOOLS.get(text)
    if value is None:
        low = text.lower()
        if low in _BOOLS:
            return _BOOLS[low]
        if not text:
            raise BadRow(f"missing {column}")
        raise BadRow(f"bad boolean in {column}: {text!r} (expected true or false)")
    return value


def _hex(column: str, text: str, size: int) -> str:
    if not text:
        raise BadRow(f"missing {column}")
    if len(text) % 2 or not _HEX.fullmatch(text):
        raise BadRow(f"bad hex in {column}")
    if len(text) != 2 * size:
        raise BadRow(f"{column} is not {size} bytes ({2 * size} hex digits)")
    return text.upper()
