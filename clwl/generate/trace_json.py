"""Activity trace messages printed as IBM's sample amqsevt prints them in JSON (``amqsevt -o json_compact``): one
object a line, ``eventSource`` / ``eventType`` / ``eventReason`` / ``eventCreation`` / ``eventData``, the header's
parameters and the operations (the list ``activityTrace``) in ``eventData`` (docs/activity-trace.md, "amqsevt JSON").

The generator builds each trace message as amqsact's labelled fields (clwl.generate.render); this module maps those
labels to amqsevt's keys and values. The keys are written out here, each the name amqsevt makes of the PCF constant
amqsact prints under that label (MQCACF_APPL_NAME -> ``applName``): the generator keeps its own table, apart from the
parser's, so that reading what it writes checks the parser. Labels with no key here (Application Type, Platform,
Msg_type, ...) are not printed, as the parser reads none of them. How amqsevt prints a value (amqsevta.c):
completion and reason codes as ``{"name", "value"}``; open and close options as ``{"options", "optionsString"}``;
put, get and connect options as ``"0x%08X"``; the operation, channel type and object type by name (``Get``,
``Clussdr``, ``Queue``); other named integers (API environment, resolved type) as numbers; byte strings as
upper-case hex.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Iterable

# amqsact label -> (amqsevt key, how the value is printed)
_STR, _INT, _BYTES, _COMP, _REASON, _OBJECT_OPTIONS, _HEX_OPTIONS, _BY_NAME, _NUMBER = (
    "str", "int", "bytes", "comp", "reason", "object_options", "hex_options", "by_name", "number")
KEYS: dict[str, tuple[str, str]] = {
    "QueueManager": ("queueMgrName", _STR), "Host Name": ("hostName", _STR),
    "IntervalStartDate": ("startDate", _STR), "IntervalStartTime": ("startTime", _STR),
    "IntervalEndDate": ("endDate", _STR), "IntervalEndTime": ("endTime", _STR),
    "CommandLevel": ("commandLevel", _INT), "SeqNumber": ("sequenceNumber", _INT),
    "ApplicationName": ("applName", _STR), "ApplicationPid": ("processId", _INT),
    "UserId": ("userIdentifier", _STR), "API Environment": ("apiEnvironment", _NUMBER),
    "Channel Name": ("channelName", _STR), "ConnName": ("connectionName", _STR),
    "Channel Type": ("channelType", _BY_NAME), "Trace Detail Level": ("traceDetail", _INT),
    "Correl_id": ("correlId", _BYTES),
    "Operation Id": ("operationId", _BY_NAME), "ApplicationTid": ("threadId", _INT),
    "OperationDate": ("operationDate", _STR), "OperationTime": ("operationTime", _STR),
    "High Res Time": ("highresTime", _INT), "QMgr Operation Duration": ("qmgrOpDuration", _INT),
    "Completion Code": ("compCode", _COMP), "Reason Code": ("reasonCode", _REASON),
    "Hobj": ("hobj", _INT), "Object_type": ("objectType", _BY_NAME), "Object_name": ("objectName", _STR),
    "Object_Q_mgr_name": ("objectQueueMgrName", _STR), "Resolved_Q_Name": ("resolvedQueueName", _STR),
    "Resolved_Q_mgr": ("resolvedQueueMgr", _STR), "Resolved_local_Q_name": ("resolvedLocalQueueName", _STR),
    "Resolved_local_Q_mgr": ("resolvedLocalQueueMgr", _STR), "Resolved_type": ("resolvedType", _NUMBER),
    "Open_options": ("openOptions", _OBJECT_OPTIONS), "Close Options": ("closeOptions", _OBJECT_OPTIONS),
    "Put Options": ("putOptions", _HEX_OPTIONS), "Get Options": ("getOptions", _HEX_OPTIONS),
    "Connect Options": ("connectOptions", _HEX_OPTIONS),
    "Msg length": ("msgLength", _INT), "Buffer Length": ("bufferLength", _INT),
    "Persistence": ("persistence", _INT), "Priority": ("priority", _INT), "Expiry": ("expiry", _INT),
    "Report Options": ("report", _INT), "Known_dest_count": ("knownDestCount", _INT),
    "Unknown_dest_count": ("unknownDestCount", _INT), "Invalid_dest_count": ("invalidDestCount", _INT),
    "Format_name": ("formatName", _STR), "Put_date": ("putDate", _STR), "Put_time": ("putTime", _STR),
    "Reply_to_Q": ("replyToQueue", _STR), "Reply_to_Q_Mgr": ("replyToQueueMgr", _STR),
    "Msg_id": ("msgId", _BYTES), "MQMD Structure": ("mqmdStruct", _BYTES), "MQPMO Structure": ("mqpmoStruct", _BYTES),
    "Transmit Header Msg_id": ("xqhMsgId", _BYTES), "Transmit Header Correl_id": ("xqhCorrelId", _BYTES),
    "Transmit Header RemoteQName": ("xqhRemoteQueueName", _STR),
    "Transmit Header RemoteQMgr": ("xqhRemoteQueueMgr", _STR),
    "Transmit Header Put_date": ("xqhPutDate", _STR), "Transmit Header Put_time": ("xqhPutTime", _STR),
}
CONNECTION_ID_KEY = "connectionId"  # the header's Correl_id is the trace message's ConnectionId parameter
TRACE_KEY = "activityTrace"  # MQGACF_ACTIVITY_TRACE: the list of operations
_CC = {"MQCC_OK": 0, "MQCC_WARNING": 1, "MQCC_FAILED": 2}
_NUMBERS = {"MQOT_Q": 1, "MQOT_Q_MGR": 5, "MQXE_OTHER": 0, "MQXE_MCA": 1, "MQXE_MCA_SVRCONN": 2}


def constant_name(name: str) -> str:
    """amqsevt's name of a constant's value: MQXF_GET -> ``Get``, MQCHT_CLUSSDR -> ``Clussdr``, MQOT_Q -> ``Queue``
    (a single Q spelled QUEUE, the prefix dropped, each word capitalised)."""
    if "_Q_" in name:
        name = name.replace("_Q_", "_QUEUE_", 1)
    elif name.endswith("_Q"):
        name = name[:-2] + "_QUEUE"
    return " ".join(w[:1] + w[1:].lower() for w in name.split("_")[1:])


def _value(kind: str, v: object) -> object:
    if kind == _BYTES:
        return v.hex().upper()  # type: ignore[union-attr]
    if kind == _COMP:
        return {"name": constant_name(str(v)), "value": _CC[str(v)]}
    if kind == _REASON:
        return {"name": "None" if v == 0 else "Reason", "value": int(v)}  # type: ignore[arg-type]
    if kind == _OBJECT_OPTIONS:
        return {"options": int(v), "optionsString": ["None"] if v == 0 else ["Output"]}  # type: ignore[arg-type]
    if kind == _HEX_OPTIONS:
        return f"0x{int(v) & 0xFFFFFFFF:08X}"  # type: ignore[arg-type]
    if kind == _BY_NAME:
        return constant_name(str(v))
    if kind == _NUMBER:
        return _NUMBERS.get(str(v), v)
    if kind == _STR:
        return str(v).rstrip()
    return v


def _group(fields: Iterable[tuple[str, object]]) -> dict:
    out = {}
    for label, v in fields:
        known = KEYS.get(label.rstrip())
        if known is not None:
            out[known[0]] = _value(known[1], v)
    return out


def trace_object(header: list[tuple[str, object]], operations: list[list[tuple[str, object]]],
                 created: datetime) -> str:
    """One trace message as one line of ``amqsevt -o json_compact``."""
    data = _group((label, v) for label, v in header if label != "Correl_id")
    correl = next((v for label, v in header if label == "Correl_id"), None)
    if isinstance(correl, bytes):
        data[CONNECTION_ID_KEY] = correl.hex().upper()
    data[TRACE_KEY] = [_group(op) for op in operations]
    epoch = int((created - datetime(1970, 1, 1)).total_seconds())
    return json.dumps({
        "eventSource": {"objectName": "SYSTEM.ADMIN.TRACE.ACTIVITY.QUEUE", "objectType": "Queue"},
        "eventType": {"name": "Activity Trace", "value": 209},
        "eventReason": {"name": "None", "value": 0},
        "eventCreation": {"timeStamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"), "epoch": epoch},
        "eventData": data,
    }, separators=(",", ":")) + "\n"
