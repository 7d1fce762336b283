"""Values as amqsact prints them, read for the activity trace parser: integers (decimal, bounded), names,
OperationDate/OperationTime in the queue manager's zone, High Res Time; a value that cannot be read raises
:class:`Rejected`, which the reader turns into a problem for its operation block or put.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
from typing import Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clwl.parse.common import clip

__all__ = ["Rejected", "high_res_time", "int_field", "local_time", "mqmd_fields", "name_or_none", "number_reason",
           "printed_number", "struct_codec", "time_zone"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# amqsact prints integers in decimal (%d, %u, %llu): 20 digits hold any of them. A longer run of digits is
# not a number it printed, and bounding it keeps int() away from its 4,300-digit limit.
_MAX_DIGITS = 20


class Rejected(Exception):
    """An operation block, or a put, that cannot be used: the message is the reason of its ParseProblem."""


def time_zone(tz: tzinfo | str | None) -> tzinfo:
    """The zone OperationDate/OperationTime are read in: a tzinfo, an IANA name or None (UTC); ValueError when
    the name is not a zone."""
    if tz is None:
        return timezone.utc
    if isinstance(tz, str):
        try:
            return timezone.utc if tz.upper() == "UTC" else ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {tz!r}") from None
    return tz


def printed_number(text: str | None, signed: bool = True) -> int | None:
    """``text`` as amqsact prints an integer: 1 to 20 ASCII digits, after an optional minus where the field is signed;
    None for anything else. (``str.isdigit`` takes '²' and other scripts' digits, which ``int()`` then refuses
    or reads; ``int()`` also takes blanks, '+' and '_', and raises beyond 4,300 digits.)"""
    if text is None:
        return None
    digits = text[1:] if signed and text[:1] == "-" else text
    if 0 < len(digits) <= _MAX_DIGITS and digits.isascii() and digits.isdigit():
        return int(text)
    return None


def number_reason(label: str, text: str, signed: bool = True) -> str:
    """Why ``text``, the value of ``label``, is not a number :func:`printed_number` reads: a problem's reason."""
    sign = ", optionally after a minus" if signed else ""
    return f"{label} {clip(text)!r} is not an integer (at most {_MAX_DIGITS} ASCII digits{sign})"


def int_field(fields: Mapping[str, str], label: str) -> int | None:
    """The integer field ``label`` of an operation block; None when not printed, Rejected when not a number."""
    text = fields.get(label)
    if text is None:
        return None
    value = printed_number(text)
    if value is None:
        raise Rejected(number_reason(label, text))
    return value


def name_or_none(value: str | None) -> str | None:
    """A printed name without its padding; None when not printed or blank."""
    return value.strip() or None if value is not None else None


def local_time(date: str | None, time: str | None, zone: tzinfo) -> datetime | None:
    """OperationDate + OperationTime, read in ``zone``, in UTC; None when either is not printed, Rejected when
    they are not a date and time (or not one in UTC)."""
    if not date or not time:
        return None
    bad = f"bad OperationDate/OperationTime {clip(date)!r} {clip(time)!r}"
    if not (date.isascii() and time.isascii()):  # strptime would read other scripts' digits
        raise Rejected(bad)
    try:
        naive = datetime.strptime(f"{date} {time.replace('.', ':')}", "%Y-%m-%d %H:%M:%S")
        # year 1 east of UTC (9999 west of it) is beyond what a datetime holds once in UTC
        return naive.replace(tzinfo=zone).astimezone(timezone.utc)
    except ValueError:
        raise Rejected(bad) from None
    except OverflowError:
        raise Rejected(f"OperationDate/OperationTime {clip(date)!r} {clip(time)!r} is out of range in UTC") from None


def high_res_time(micros: int | None) -> datetime | None:
    """High Res Time (microseconds since 1970-01-01 UTC) as a UTC datetime; None when not printed."""
    if micros is None:
        return None
    try:
        return _EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        raise Rejected(f"High Res Time {micros} is out of range") from None


# ----------------------------------------------------------------------------------------------------------
# structure dumps (HIGH)


def struct_codec(strucid: bytes, name: str) -> str | None:
    """How the character fields of a structure dump are encoded, told by its StrucId: ASCII on the
    distributed platforms, EBCDIC on IBM i; None when the dump is not that structure."""
    if strucid == name.encode("ascii"):
        return "ascii"
    if strucid == name.encode("cp500"):
        return "cp500"
    return None


def _long(raw: bytes, big: bool) -> int:
    return int.from_bytes(raw, "big" if big else "little", signed=True)


def _big_endian(version: bytes) -> bool:
    """Byte order of a dump, from its Version field (1..4): the traced queue manager's native order."""
    return version[:1] == b"\x00"


def mqmd_fields(dump: bytes) -> dict:
    """The fields of an MQMD dump the put event needs (offsets from cmqc.h); {} when it is not an MQMD."""
    if len(dump) < 240 or struct_codec(dump[:4], "MD  ") is None:
        return {}
    big = _big_endian(dump[4:8])
    out = {"persistence": _long(dump[44:48], big), "msg_id": dump[48:72].hex().upper(),
           "accounting_token": dump[208:240].hex().upper()}
    if _long(dump[4:8], big) >= 2 and len(dump) >= 360:
        out["group_id"] = dump[324:348].hex().upper()
        out["msg_flags"] = _long(dump[356:360], big)
    return out
