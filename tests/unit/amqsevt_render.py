"""amqsact output rendered as amqsevt prints the same trace messages in JSON (``-o json`` / ``-o json_compact``),
for the tests of clwl.parse.activity_trace_json and the fixtures under tests/fixtures/amqsevt_json.

The printing rules are amqsevta.c's (MQ 9.1.0 source, ``formatEvent``), written here apart from the parser:

* the envelope ``eventSource`` / ``eventType`` / ``eventReason`` / ``eventCreation`` / ``eventData``, and the
  operations as the list ``eventData.activityTrace``;
* MQIACF_COMP_CODE and MQIACF_REASON_CODE as ``{"name": <formatConstant>, "value": n}``;
* MQIACF_OPEN_OPTIONS and MQIACF_CLOSE_OPTIONS as ``{"options": n, "optionsString": [...]}``; put, get, connect
  and callback options as the string ``"0x%08X"``;
* MQIACF_OPERATION_ID, MQIACH_CHANNEL_TYPE and MQIACF_OBJECT_TYPE by name through formatConstant (``Put``,
  ``Clusrcvr``, ``Queue``); other integers (API environment, resolved type) as numbers; a negative integer as a
  string (isNumeric takes digits only);
* strings as strings; byte strings as upper-case hex strings (quoted here: see the parser's tests for the bare
  number amqsevt prints when the hex is all digits).

The fields rendered are those of :data:`clwl.parse.activity_trace_json.FIELDS` (amqsact's labels of the PCF
parameters); the header's other lines (Application Type, Platform, ...) are left out.
"""

from __future__ import annotations

import json

from clwl.parse.activity_trace_json import FIELDS, amqsevt_key
from clwl.parse.activity_trace_lexer import TraceLexer

_CONSTANT = {f[1]: f[0] for f in FIELDS}
_HEX_OPTIONS = {"MQIACF_PUT_OPTIONS", "MQIACF_GET_OPTIONS", "MQIACF_CONNECT_OPTIONS", "MQIACF_MQCB_OPTIONS"}
_OBJECT_OPTIONS = {"MQIACF_OPEN_OPTIONS", "MQIACF_CLOSE_OPTIONS"}
_BY_NAME = {"MQIACF_OPERATION_ID", "MQIACH_CHANNEL_TYPE", "MQIACF_OBJECT_TYPE"}
_CC = {"MQCC_OK": 0, "MQCC_WARNING": 1, "MQCC_FAILED": 2}
_NUMBERS = {"MQOT_Q": 1, "MQOT_Q_MGR": 5, "MQOT_TOPIC": 8, "MQXE_OTHER": 0, "MQXE_MCA": 1, "MQXE_MCA_SVRCONN": 2}


def format_constant(name: str) -> str:
    """amqsevt's lookup() spelling of Q and formatConstant(), for values: MQXF_PUT -> Put, MQOT_Q -> Queue."""
    if "_Q_" in name:
        name = name.replace("_Q_", "_QUEUE_", 1)
    elif name.endswith("_Q"):
        name = name[:-2] + "_QUEUE"
    words = name.split("_")[1:]
    return " ".join(w[:1] + w[1:].lower() for w in words)


def _value(constant: str, text: str, dump: bytes | None):
    if constant.startswith("MQBACF_"):
        return dump.hex().upper()
    if constant == "MQIACF_COMP_CODE":
        return {"name": format_constant(text), "value": _CC[text]}
    if constant == "MQIACF_REASON_CODE":
        return {"name": "None" if text == "0" else "Reason", "value": int(text)}
    if constant in _OBJECT_OPTIONS:
        return {"options": int(text), "optionsString": ["None"] if text == "0" else ["out"]}
    if constant in _HEX_OPTIONS:
        return f"0x{int(text) & 0xFFFFFFFF:08X}"
    if constant in _BY_NAME:
        return format_constant(text) if text.startswith("MQ") else f"Unknown [{text}]"
    if constant.startswith(("MQIA", "MQIACF", "MQIACH")):
        number = _NUMBERS.get(text, text)
        return int(number) if str(number).isdigit() else str(number)
    return text


def _group(fields: dict, dumps: dict) -> dict:
    out = {}
    for label, text in fields.items():
        constant = _CONSTANT.get(label)
        if constant is not None:
            out[amqsevt_key(constant)] = _value(constant, text, dumps.get(label))
    return out


class _Collect(TraceLexer):
    """The real amqsact lexer, keeping each message's header and operation blocks as printed."""

    def __init__(self):
        super().__init__("render", None, None, 0)
        self.messages: list[tuple[dict, dict, list]] = []

    def finish_verbose(self, op) -> None:
        if not self.messages or self.messages[-1][0] is not self.msg.header:
            self.messages.append((self.msg.header, self.msg.dumps, []))
        self.messages[-1][2].append((op.fields, op.dumps))

    def summary_line(self, lineno, line, m) -> None:
        raise AssertionError("only verbose amqsact output is rendered")


def amqsevt_objects(amqsact_text: str) -> list[dict]:
    """The JSON objects amqsevt prints for the trace messages of verbose amqsact output."""
    lexer = _Collect()
    lexer.feed(amqsact_text.splitlines())
    objects = []
    for header, header_dumps, operations in lexer.messages:
        data = _group({k: v for k, v in header.items() if k != "Correl_id"}, header_dumps)
        if "Correl_id" in header_dumps:  # the trace's ConnectionId parameter: the connection's id, as the CorrelId
            data[amqsevt_key("MQBACF_CONNECTION_ID")] = header_dumps["Correl_id"].hex().upper()
        data[amqsevt_key("MQGACF_ACTIVITY_TRACE")] = [_group(f, d) for f, d in operations]
        objects.append({
            "eventSource": {"objectName": "SYSTEM.ADMIN.TRACE.ACTIVITY.QUEUE", "objectType": "Queue"},
            "eventType": {"name": "Activity Trace", "value": 209},
            "eventReason": {"name": "None", "value": 0},
            "eventCreation": {"timeStamp": "2026-11-20T10:15:31Z", "epoch": 1795169731},
            "eventData": data,
        })
    return objects


def render(amqsact_text: str, compact: bool = False) -> str:
    """``amqsevt -o json`` (objects pretty-printed one after another) or ``-o json_compact`` (one a line)."""
    objects = amqsevt_objects(amqsact_text)
    if compact:
        return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objects)
    return "".join(json.dumps(o, indent=2, separators=(",", " : ")) + "\n" for o in objects)
