"""MQ REST API (mqweb) runCommandJSON responses -> :class:`ParsedCapture` (standard library only).

Accepted shapes (docs/formats.md, "REST captures"), in one file:

* one response envelope ``{"commandResponse": [{"completionCode": 0, "reasonCode": 0, "parameters": {...}}],
  "overallCompletionCode": 0, "overallReasonCode": 0}``;
* a JSON array of envelopes;
* JSON Lines: one envelope per line (a line that is not valid JSON is a problem for that line, not for the file);
* any of these wrapped as ``{"qmgr": "QM1", "response": <envelope or array>}``: ``qmgr`` gives
  ``banner_qmgr`` (the first one in the file wins);
* an mqweb error body ``{"error": [{"messageId": "MQWB...", "message": ..., "reasonCode": ...}]}``: one problem per
  error;
* the answer of a resource GET (REST v1/v2 ``GET .../admin/qmgr/{qmgr}/queue?attributes=*``, ``.../channel``,
  ``GET .../admin/qmgr/{qmgr}``): ``{"queue": [...]}``, ``{"channel": [...]}``, ``{"qmgr": [...]}``, one record per
  object (:meth:`_Reader.resource`: attribute paths mapped to MQSC keywords, ``type`` to TYPE/CHLTYPE). What such
  a capture cannot hold: cluster queue instances as a partial repository sees them (DISPLAY QCLUSTER has no
  resource GET: a ``type: cluster`` object without its hosting queue manager is a problem), cluster queue
  managers (DISPLAY CLUSQMGR), and the queue manager's cluster attributes (the ``qmgr`` resource is status only:
  its object is kind OTHER).

Each ``commandResponse`` item with ``completionCode`` 0 gives one record per object: its ``parameters`` with keys
upper-cased; a nested ``objects`` array is flattened as pymqrest does (each object merged over a copy of its
parent's other parameters, the object's keys winning; an empty array gives no record). Values become text:
strings stripped, integers in decimal, ``true``/``false`` -> ``YES``/``NO``, ``null`` -> ``None`` (like a bare
keyword), lists joined with ``,`` (``"names": ["A", "B"]`` -> ``"A,B"``), other objects as compact JSON. The kind is
decided by :func:`clwl.parse.record_kinds.classify` (no message id in REST) and checked by
:func:`clwl.parse.record_kinds.record_reason` (its key attributes, and no control character in a name); a record
with a ``queue`` key and no ``type`` is a problem (``missing key attribute: queue record without TYPE``), as an
AMQ8409I record without TYPE is on the runmqsc path.

An item with ``completionCode`` != 0 is a problem (``command failed: completionCode 2, reasonCode 2085 ...``),
except "nothing found": ``overallReasonCode`` 3008 and an item without parameters whose ``reasonCode`` is 2085
(MQRC_UNKNOWN_OBJECT_NAME) or 3065 (MQRCCF_CHL_STATUS_NOT_FOUND, the REST form of "AMQ8420I: Channel Status not
found."), which yields nothing. An item with completionCode 0 and no ``parameters`` yields nothing (a DEFINE/ALTER
answer), unless it carries the ``text`` lines of a plain ``runCommand`` answer: those are read as runmqsc output,
or as z/OS output (:mod:`clwl.parse.zos`) when they hold CSQxnnns messages (records keep their AMQ / CSQ message
id; line is the JSON Lines line or 0).

:class:`InputError` when the file is missing or unreadable, is not JSON (the message gives the JSON error's line
and column), or holds no runCommandJSON response at all.

Problem reason prefixes: ``command failed:``, ``REST error:``, ``invalid JSON:`` (one JSON Lines line), ``not a
command response:``, ``missing key attribute:``, ``duplicate attribute:``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from clwl.parse.common import (
    JSON_DECODER,
    MAX_JSON_DEPTH,
    InputError,
    MqscRecord,
    ParsedCapture,
    ParseProblem,
    escape_surrogates,
    has_surrogate,
    json_array_elements,
    too_deep_reason,
)
from clwl.parse.mqsc import parse_mqsc_text, read_text_file
from clwl.parse.record_kinds import bad_name_reason, classify, missing_key_reason, record_reason

__all__ = ["parse_rest_file", "parse_rest_text"]

_NOT_FOUND_REASONS = frozenset({2085, 3065})
_NOTHING_FOUND_OVERALL = 3008
_ENVELOPE_KEYS = ("commandResponse", "overallCompletionCode", "overallReasonCode")


def parse_rest_file(path: str | os.PathLike[str]) -> ParsedCapture:
    """Parse one MQ REST response file; :class:`InputError` if missing, unreadable, not JSON or not a response."""
    source, text = read_text_file(path)
    return parse_rest_text(text, source)


def parse_rest_text(text: str, source: str) -> ParsedCapture:
    """Parse MQ REST runCommandJSON response(s) held in ``text``; ``source`` names it."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise InputError(source, "empty file")
    units: list[tuple[int, Any, str | None]]  # (line, parsed JSON or the error, raw line for JSON Lines)
    too_deep = too_deep_reason(text)  # checked before decoding: the decoder recurses once per level
    if too_deep is None:
        try:
            document = JSON_DECODER.decode(text)
        except json.JSONDecodeError as error:
            lines = _json_lines(text)
            if lines is None:
                raise InputError(
                    source, f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
                ) from None
            units = lines
        else:
            if isinstance(document, list):
                units = [(0, item, None) for item in document]
            else:
                units = [(0, document, None)]
    else:
        # One response (or line, or array element) nested too deep costs only itself.
        lines = _json_lines(text)
        if lines is not None:
            units = lines
        elif text.lstrip()[:1] == "[":
            units = _array_elements(text)
        else:
            raise InputError(source, too_deep)
    reader = _Reader(source)
    for line, value, raw in units:
        reader.unit(value, line, raw)
    if not reader.recognised:
        if too_deep is not None:
            raise InputError(source, too_deep)
        raise InputError(source, "not an MQ REST runCommandJSON response (no commandResponse) nor a resource GET "
                                 "answer (no queue, channel or qmgr list)")
    _refuse_surrogates(reader.capture)
    return reader.capture


class _Refused:
    """A JSON unit that was not decoded (nested too deep); the reason is the problem's."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason


def _decode_unit(text: str) -> Any:
    """One JSON Lines line or array element: its value, or the error / refusal (never raises)."""
    too_deep = too_deep_reason(text)
    if too_deep is not None:
        return _Refused(too_deep)
    try:
        return JSON_DECODER.decode(text)
    except json.JSONDecodeError as error:
        return error


def _array_elements(text: str) -> list[tuple[int, Any, str | None]]:
    """The elements of a top-level JSON array too deep to decode whole, each decoded (or refused) alone."""
    units: list[tuple[int, Any, str | None]] = []
    line, counted = 1, 0
    for start, end, depth in json_array_elements(text, text.index("[")):
        line += text.count("\n", counted, start)
        counted = start
        raw = text[start:end].strip()
        if depth > MAX_JSON_DEPTH:
            value: Any = _Refused(f"JSON nested deeper than {MAX_JSON_DEPTH} levels ({depth})")
        else:
            value = _decode_unit(raw)
        units.append((line, value, raw))
    return units


def _refuse_surrogates(capture: ParsedCapture) -> None:
    """A record with a lone surrogate (``"\\ud800"`` without its pair) in a name or value becomes a problem: the
    text cannot be stored as UTF-8. Problem texts and the banner name get the surrogates escaped."""
    kept = []
    for record in capture.records:
        bad = next((key for key, value in record.attrs.items()
                    if has_surrogate(key) or (value is not None and has_surrogate(value))), None)
        if bad is None:
            kept.append(record)
            continue
        capture.problems.append(ParseProblem(
            record.source, record.line,
            f"lone surrogate in attribute {escape_surrogates(bad)}: not valid Unicode (a \\uXXXX escape of half a "
            f"character)", _raw(dict(record.attrs))))
    capture.records = kept
    capture.problems = [
        p if not (has_surrogate(p.reason) or has_surrogate(p.raw))
        else dataclasses.replace(p, reason=escape_surrogates(p.reason), raw=escape_surrogates(p.raw))
        for p in capture.problems]
    if capture.banner_qmgr is not None:
        capture.banner_qmgr = escape_surrogates(capture.banner_qmgr)


def _json_lines(text: str) -> list[tuple[int, Any, str | None]] | None:
    """The file read as JSON Lines, or None if it does not look like JSON Lines of responses at all."""
    units: list[tuple[int, Any, str | None]] = []
    envelopes = 0
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped:
            continue
        value = _decode_unit(stripped)
        if isinstance(value, dict) and _looks_like_response(value):
            envelopes += 1
        units.append((number, value, stripped))
    return units if envelopes else None


def _looks_like_response(value: dict[str, Any]) -> bool:
    return (any(key in value for key in _ENVELOPE_KEYS) or "response" in value or "error" in value
            or any(isinstance(value.get(key), list) for key in _RESOURCES))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, list):
        return ",".join("" if item is None else (_text(item) or "") for item in value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


# --------------------------------------------------------------------------------------------------------------
# Resource GETs (REST v1/v2 ``/admin/qmgr/{qmgr}/queue``, ``.../channel``, ``/admin/qmgr``)

_RESOURCES = ("queue", "channel", "qmgr")
# resource -> (its name keyword, its type keyword, REST type value -> MQSC value)
_RESOURCE_KEYS: dict[str, tuple[str, str, dict[str, str]]] = {
    "queue": ("QUEUE", "TYPE", {"local": "QLOCAL", "alias": "QALIAS", "remote": "QREMOTE", "model": "QMODEL",
                                "cluster": "QCLUSTER"}),
    "channel": ("CHANNEL", "CHLTYPE", {
        "sender": "SDR", "server": "SVR", "receiver": "RCVR", "requester": "RQSTR", "clusterSender": "CLUSSDR",
        "clusterReceiver": "CLUSRCVR", "serverConnection": "SVRCONN", "clientConnection": "CLNTCONN",
        "amqp": "AMQP", "mqtt": "MQTT"}),
    "qmgr": ("QMNAME", "", {}),
}
_INHIBITED = {True: "DISABLED", False: "ENABLED"}
#: REST attribute path -> (MQSC keyword, REST value -> MQSC value or None to keep the value as text).
_RESOURCE_KEYWORDS: dict[str, tuple[str, dict | None]] = {
    "general.description": ("DESCR", None),
    "general.inhibitPut": ("PUT", _INHIBITED),
    "general.inhibitGet": ("GET", _INHIBITED),
    "general.isTransmissionQueue": ("USAGE", {True: "XMITQ", False: "NORMAL"}),
    "remote.queueName": ("RNAME", None),
    "remote.qmgrName": ("RQMNAME", None),
    "remote.transmissionQueueName": ("XMITQ", None),
    "alias.targetName": ("TARGET", None),
    "alias.targetType": ("TARGTYPE", {"queue": "QUEUE", "topic": "TOPIC"}),
    "cluster.name": ("CLUSTER", None),
    "cluster.namelist": ("CLUSNL", None),
    "cluster.workloadPriority": ("CLWLPRTY", None),
    "cluster.workloadRank": ("CLWLRANK", None),
    "cluster.workloadWeight": ("CLWLWGHT", None),
    "cluster.networkPriority": ("NETPRTY", None),
    "cluster.workloadQueueUse": ("CLWLUSEQ", {"asQmgr": "QMGR", "local": "LOCAL", "any": "ANY"}),
    "cluster.transmissionQueueForChannelName": ("CLCHNAME", None),
    "cluster.queueManagerName": ("CLUSQMGR", None),
    "cluster.qmgrId": ("QMID", None),
    "cluster.queueType": ("CLUSQT", {"local": "QLOCAL", "alias": "QALIAS", "remote": "QREMOTE",
                                     "qmgrAlias": "QMGR"}),
    "applicationDefaults.clusterBind": ("DEFBIND", {"onOpen": "OPEN", "notFixed": "NOTFIXED", "onGroup": "GROUP"}),
}


def _flatten_resource(value: dict[str, Any], prefix: str, out: list[tuple[str, Any]]) -> None:
    """``(dotted path, value)`` of every leaf of a resource object; a list is a leaf (its items as text)."""
    for key, item in value.items():
        path = f"{prefix}{key}"
        if isinstance(item, dict):
            _flatten_resource(item, path + ".", out)  # an empty group adds nothing
        else:
            out.append((path, item))


def _resource_attribute(resource: str, path: str, value: Any, type_key: str,
                        types: dict[str, str]) -> tuple[str, str | None]:
    """MQSC keyword and value text of one attribute of a resource object."""
    if path == "name":
        return _RESOURCE_KEYS[resource][0], _text(value)
    if path == "type" and type_key:
        text = _text(value)
        return type_key, types.get(text or "", (text or "").upper())
    keyword = _RESOURCE_KEYWORDS.get(path)
    if keyword is None:
        return path.upper(), _text(value)
    name, values = keyword
    if values is not None and isinstance(value, (str, bool)) and value in values:
        return name, values[value]
    return name, _text(value)


def _raw(value: Any) -> str:
    return escape_surrogates(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.capture = ParsedCapture(source=source, fmt="rest")
        self.recognised = False

    def problem(self, line: int, reason: str, raw: str) -> None:
        self.capture.problems.append(ParseProblem(self.source, line, reason, raw))

    def unit(self, value: Any, line: int, raw: str | None) -> None:
        if isinstance(value, json.JSONDecodeError):
            self.problem(line, f"invalid JSON: {value.msg} at column {value.colno}", raw or "")
            return
        if isinstance(value, _Refused):
            self.problem(line, value.reason, raw or "")
            return
        if not isinstance(value, dict):
            self.problem(line, f"not a command response: a JSON {type(value).__name__}", raw or _raw(value))
            return
        if "response" in value and not any(key in value for key in _ENVELOPE_KEYS):
            qmgr = value.get("qmgr")
            if isinstance(qmgr, str) and qmgr.strip() and self.capture.banner_qmgr is None:
                self.capture.banner_qmgr = qmgr.strip()
            inner = value["response"]
            for item in inner if isinstance(inner, list) else [inner]:
                self.unit(item, line, None)
            return
        if any(key in value for key in _ENVELOPE_KEYS):
            self.recognised = True
            self.envelope(value, line)
            return
        if isinstance(value.get("error"), list):
            self.recognised = True
            for error in value["error"]:
                if isinstance(error, dict):
                    message_id = str(error.get("messageId") or "")
                    message = str(error.get("message") or "")
                    detail = message if message.startswith(message_id) else f"{message_id} {message}".strip()
                    codes = f"completionCode {error.get('completionCode')}, reasonCode {error.get('reasonCode')}"
                    reason = f"REST error: {detail} ({codes})" if detail else f"REST error: {codes}"
                    self.problem(line, reason, _raw(error))
                else:
                    self.problem(line, "REST error: unreadable error entry", _raw(error))
            return
        resources = [key for key in _RESOURCES if isinstance(value.get(key), list)]
        if resources:
            self.recognised = True
            for key in resources:
                self.resource(key, value[key], line)
            return
        self.problem(line, "not a command response: no commandResponse", raw or _raw(value))

    def resource(self, resource: str, objects: list[Any], line: int) -> None:
        """The answer of a resource GET (``GET .../admin/qmgr/{qmgr}/queue?attributes=*``): one record per object.

        Attribute groups are flattened to dotted paths (``cluster.workloadRank``); the paths with an MQSC keyword
        of their own get it (:data:`_RESOURCE_KEYWORDS`) with its value spelled as runmqsc spells it, the others
        are kept under their upper-cased path (``EXTENDED.SHAREABLE``). A queue manager object (the ``qmgr``
        resource gives dspmq-like status, none of DISPLAY QMGR's cluster attributes) is kind OTHER; its name is
        the banner queue manager when the answer holds one queue manager only."""
        key_name, type_key, types = _RESOURCE_KEYS[resource]
        qmgr_names = []
        for entry in objects:
            if not isinstance(entry, dict):
                self.problem(line, f"not a command response: an entry of {resource} is not an object", _raw(entry))
                continue
            attrs: dict[str, str | None] = {}
            flat: list[tuple[str, Any]] = []
            _flatten_resource(entry, "", flat)
            duplicate = None
            for path, value in flat:
                name, text = _resource_attribute(resource, path, value, type_key, types)
                if name in attrs and attrs[name] != text:
                    duplicate = (f"duplicate attribute: {name} given twice with different values "
                                 f"({attrs[name]!r}, {text!r})")
                    break
                attrs[name] = text
            if duplicate is not None:
                self.problem(line, duplicate, _raw(entry))
                continue
            if resource == "qmgr":
                if not attrs.get("QMNAME"):
                    self.problem(line, "missing key attribute: qmgr object without name", _raw(entry))
                    continue
                if (bad := bad_name_reason(attrs)) is not None:
                    self.problem(line, bad, _raw(entry))
                    continue
                qmgr_names.append(attrs["QMNAME"])
                self.capture.records.append(MqscRecord("OTHER", attrs, self.source, line))
                continue
            if type_key not in attrs:  # no "type": which kind of queue or channel it is cannot be told
                self.problem(line, missing_key_reason("QUEUE" if resource == "queue" else "CHANNEL", attrs) or "",
                             _raw(entry))
                continue
            kind = classify(attrs, "AMQ8409I" if resource == "queue" else "AMQ8414I")
            reason = record_reason("QUEUE" if kind == "OTHER" and resource == "queue" else kind, attrs)
            if kind == "OTHER" and reason is None:
                reason = f"missing key attribute: {resource} {attrs.get(key_name)!r} of unknown type " \
                         f"{attrs.get(type_key)!r}"
            if reason is not None:
                self.problem(line, reason, _raw(entry))
                continue
            self.capture.records.append(MqscRecord(kind, attrs, self.source, line))
        if len(qmgr_names) == 1 and self.capture.banner_qmgr is None:
            self.capture.banner_qmgr = qmgr_names[0]

    def envelope(self, envelope: dict[str, Any], line: int) -> None:
        items = envelope.get("commandResponse", [])
        overall_cc = envelope.get("overallCompletionCode", 0)
        overall_rc = envelope.get("overallReasonCode", 0)
        if not isinstance(items, list):
            self.problem(line, "not a command response: commandResponse is not a list", _raw(envelope))
            return
        if not items:
            if overall_cc not in (0, None) and overall_rc != _NOTHING_FOUND_OVERALL:
                self.problem(
                    line,
                    f"command failed: overallCompletionCode {overall_cc}, overallReasonCode {overall_rc}",
                    _raw(envelope),
                )
            return
        for item in items:
            if not isinstance(item, dict):
                self.problem(line, "not a command response: commandResponse item is not an object", _raw(item))
                continue
            cc = item.get("completionCode", 0)
            rc = item.get("reasonCode", 0)
            parameters = item.get("parameters")
            if cc != 0:
                if (not parameters and isinstance(rc, int) and rc in _NOT_FOUND_REASONS
                        and overall_rc == _NOTHING_FOUND_OVERALL):
                    continue
                message = item.get("message")
                if isinstance(message, list):
                    message = " ".join(str(part).strip() for part in message)
                reason = f"command failed: completionCode {cc}, reasonCode {rc}"
                if message:
                    reason += f": {message}"
                self.problem(line, reason, _raw(item))
                continue
            if parameters is None:
                text = item.get("text")
                if isinstance(text, list) and text:
                    self.text_lines(text, item, line)
                continue
            if not isinstance(parameters, dict):
                self.problem(line, "not a command response: parameters is not an object", _raw(item))
                continue
            for flat in self.flatten(parameters, item, line):
                self.record(flat, item, line)

    def text_lines(self, text: list[Any], item: dict[str, Any], line: int) -> None:
        """A ``runCommand`` (plain text) answer: its ``text`` lines are runmqsc output."""
        try:
            parsed = parse_mqsc_text("\n".join(str(part) for part in text) + "\n", self.source)
        except InputError:
            self.problem(line, "not a command response: text is not runmqsc output", _raw(item))
            return
        self.capture.records.extend(dataclasses.replace(record, line=line) for record in parsed.records)
        self.capture.problems.extend(dataclasses.replace(problem, line=line) for problem in parsed.problems)

    def flatten(self, parameters: dict[str, Any], item: dict[str, Any], line: int) -> list[dict[str, Any]]:
        objects = parameters.get("objects")
        if not isinstance(objects, list):
            return [parameters]
        shared = {key: value for key, value in parameters.items() if key != "objects"}
        flattened = []
        for nested in objects:
            if isinstance(nested, dict):
                merged = dict(shared)
                merged.update(nested)
                flattened.append(merged)
            else:
                self.problem(line, "not a command response: an entry of objects is not an object", _raw(nested))
        return flattened

    def record(self, parameters: dict[str, Any], item: dict[str, Any], line: int) -> None:
        attrs: dict[str, str | None] = {}
        for key, value in parameters.items():
            name = str(key).strip().upper()
            text = _text(value)
            if name in attrs and attrs[name] != text:
                self.problem(
                    line,
                    f"duplicate attribute: {name} given twice with different values ({attrs[name]!r}, {text!r})",
                    _raw(parameters),
                )
                return
            attrs[name] = text
        if not attrs:
            return
        kind = classify(attrs)
        if kind == "OTHER" and "QUEUE" in attrs and "TYPE" not in attrs and "CLUSQMGR" not in attrs:
            # runmqsc's header tells a queue record without TYPE apart (a problem); REST has no header, but
            # every DISPLAY answer with a QUEUE key (QUEUE, QSTATUS, QCLUSTER) carries type: without it, the
            # record would silently become OTHER.
            kind = "QUEUE"
        reason = record_reason(kind, attrs)
        if reason is not None:
            self.problem(line, reason, _raw(parameters))
            return
        self.capture.records.append(MqscRecord(kind, attrs, self.source, line))
