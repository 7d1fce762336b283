"""The lexer of amqsact output: lines to trace messages (the header block: ``QueueManager: 'QM1'``, the
``Correl_id`` dump, ...), ``MQI Operation: n`` blocks with their ``Label: value`` fields and hex dumps, and summary
table lines; stray lines become problems. What a block means is read by the subclasses
(:mod:`clwl.parse.activity_trace_operations`, :mod:`clwl.parse.activity_trace_puts`).
"""

from __future__ import annotations

import re
from typing import Iterable

from clwl.parse.activity_trace_records import ActivityTraceResult, TraceChunk, TraceNote, TraceState
from clwl.parse.activity_trace_values import number_reason, printed_number
from clwl.parse.common import ParseProblem, clip

__all__ = ["OperationBlock", "TraceLexer"]

_UNDERLINE_MIN = 20  # amqsact prints 77 '='; fewer than this is not its separator

# "00000010:  4142 4344 ...  'ABCD'": offset, then the hex groups (each preceded by a blank); the printable
# column after them starts with a quote, which no group matches.
_DUMP = re.compile(r"\s*+([0-9A-Fa-f]{8}):((?:\s++[0-9A-Fa-f]{2}(?:[0-9A-Fa-f]{2})?)++)")
# "  001 2020-05-18 10:51:17  MQXF_PUT        MQCC_OK       0000  2 (Sample.Queue)"
_SUMMARY = re.compile(
    r"\s*+(-?\d++)\s++(\S++)\s++(\S++)\s++(\S++)\s++(\S++)\s++(-?\d++)\s++(?:(-?\d++)(?:\s++\((.*)\))?|-)\s*+")
_HEX_OR_BLANK = frozenset("0123456789ABCDEFabcdef \t\n\r\x0b\x0c")  # what bytes.fromhex reads
# Header values turned into numbers (a bad one is unknown, its line a problem; the messages' operations stay):
# label -> signed.
_HEADER_NUMBERS = {"SeqNumber": True, "ApplicationPid": True, "Trace Detail Level": False}


class TraceMessage:
    """One trace message as the reader keeps it while its operations are read (the JSON reader builds the same)."""

    __slots__ = ("line", "ordinal", "header", "form", "ops_seen", "dumps", "values")

    def __init__(self, line: int, ordinal: int):
        self.line = line
        self.ordinal = ordinal
        self.header: dict[str, str] = {}
        self.form = ""
        self.ops_seen = 0
        self.dumps: dict[str, bytes] = {}
        self.values: dict | None = None  # header_values(), once the operations start


class OperationBlock:
    """One ``MQI Operation: n`` block as printed: its fields, byte strings and raw lines, and the first thing
    wrong with it (``bad``), if anything."""

    __slots__ = ("line", "index", "fields", "dumps", "raw", "bad")

    def __init__(self, line: int, index: int, first: str):
        self.line = line
        self.index = index
        self.fields: dict[str, str] = {}
        self.dumps: dict[str, bytes] = {}
        self.raw = [first]
        self.bad: str | None = None


class TraceLexer:
    """amqsact's lines, in order, to trace messages (their header fields and byte strings) and operation blocks
    (their fields and hex dumps, the raw lines kept for a problem), and to problems for the lines that fit neither.

    A complete block goes to :meth:`finish_verbose`, a summary table line to :meth:`summary_line`: what they are
    read into is the subclasses' (:class:`clwl.parse.activity_trace_operations.OperationReader`). Holds the
    result and hands it out in chunks (:meth:`tick`, :meth:`flush`).
    """

    def __init__(self, source: str, state: TraceState | None, on_chunk, chunk_ops: int):
        self.source = source
        self.result = ActivityTraceResult(source, state=state or TraceState())
        self.on_chunk = on_chunk if chunk_ops > 0 else None
        self.chunk_ops = chunk_ops
        self.msg: TraceMessage | None = None
        self.op: OperationBlock | None = None
        self.dump_label: str | None = None
        self.dump_target: dict[str, bytes] | None = None
        self.dump_bytes = bytearray()
        self.dump_line = 0
        self.dump_bad = False  # a header dump with a line that is not hex: its value is unknown
        self.in_table = False
        self.records_processed: int | None = None
        self.since_flush = 0

    # --- helpers -----------------------------------------------------------------------------------------

    def problem(self, line: int, reason: str, raw: str) -> None:
        self.result.problems.append(ParseProblem(self.source, line, reason, raw))

    def note(self, line: int, text: str) -> None:
        self.result.notes.append(TraceNote(self.source, line, text))

    def flush(self) -> None:
        if self.on_chunk is None:
            return
        r = self.result
        if r.operations or r.puts or r.problems:
            self.on_chunk(TraceChunk(r.operations[:], r.puts[:], r.problems[:]))
            r.operations.clear()
            r.puts.clear()
            r.problems.clear()
        self.since_flush = 0

    def tick(self) -> None:
        """One more record: a chunk goes out when ``chunk_ops`` have gathered."""
        self.since_flush += 1
        if self.on_chunk is not None and self.since_flush >= self.chunk_ops:
            self.flush()

    def end_dump(self) -> None:
        if self.dump_label is not None and self.dump_target is not None and not self.dump_bad:
            self.dump_target[self.dump_label] = bytes(self.dump_bytes)
            if self.op is not None:
                self.op.fields[self.dump_label] = self.dump_bytes.hex().upper()
            elif self.msg is not None:
                self.msg.header[self.dump_label] = self.dump_bytes.hex().upper()
        self.dump_label = None
        self.dump_target = None
        self.dump_bad = False

    def end_op(self) -> None:
        self.end_dump()
        op, self.op = self.op, None
        if op is not None and self.msg is not None:
            self.finish_verbose(op)

    def end_message(self) -> None:
        self.end_op()
        self.msg = None
        self.in_table = False

    # --- lines ---------------------------------------------------------------------------------------------

    def feed(self, lines: Iterable[str]) -> None:
        dump_match = _DUMP.match
        for lineno, raw in enumerate(lines, 1):
            line = raw.rstrip("\r\n")
            op = self.op
            if op is not None and self.dump_label is None and line[:2] == "  " and line[2:3] != " ":
                # the common line, "  Label: value" inside an operation block: taken here without the checks below
                label, sep, value = line.partition(":")
                if sep and len(label) != 10 and value[:1] == " ":
                    value = value.strip()
                    if value:
                        if value[0] == "'" and value[-1] == "'" and len(value) >= 2:
                            value = value[1:-1].rstrip()
                        op.fields[label.strip()] = value
                        op.raw.append(line)
                        continue
            stripped = line.strip()
            if not stripped:
                continue
            if self.dump_label is not None:
                m = dump_match(line)
                if m is not None:
                    offset = int(m.group(1), 16)
                    if offset != len(self.dump_bytes) and self.op is not None:
                        self.op.bad = self.op.bad or (
                            f"hex dump of {self.dump_label} jumps to offset {m.group(1)} after "
                            f"{len(self.dump_bytes)} bytes (line {lineno})")
                    try:
                        self.dump_bytes += bytes.fromhex(m.group(2))
                    except ValueError:  # the pattern's blanks are Unicode's (a no-break space), fromhex's ASCII
                        self.bad_dump_line(lineno, line, m.group(2))
                    if self.op is not None:
                        self.op.raw.append(line)
                    continue
                self.end_dump()
            if stripped.startswith("MonitoringType:"):
                self.end_message()
                value = stripped.partition(":")[2].strip()
                self.result.trace_messages += 1
                self.msg = TraceMessage(lineno, self.result.trace_messages)
                if value != "MQI Activity Trace":
                    self.problem(lineno, f"not an activity trace record (MonitoringType: {clip(value)})", line)
                    self.msg = None
                continue
            if stripped[0] == "=" and len(stripped) >= _UNDERLINE_MIN and stripped.count("=") == len(stripped):
                self.end_op()  # closes the message's last operation; the message itself ends at the next one
                continue
            if stripped.endswith("Records Processed."):  # amqsact's last line
                self.end_message()
                head = stripped.split()[0]
                self.records_processed = printed_number(head, signed=False)
                if self.records_processed is None:
                    self.note(lineno, f"{clip(stripped)!r}: the count is not a number, not compared with the file")
                continue
            if self.msg is None:
                self.outside(lineno, line, stripped)
                continue
            if self.in_table or stripped.startswith("Tid "):
                if stripped.split()[:3] == ["Tid", "Date", "Time"]:
                    self.end_op()
                    self.in_table = True
                    self.msg.form = "summary"
                    continue
                m = _SUMMARY.fullmatch(line)
                if m is not None:
                    self.summary_line(lineno, line, m)
                elif self.in_table:
                    self.problem(lineno, "summary line not in amqsact's Tid/Date/Time/Operation/CompCode/MQRC/HObj "
                                 "columns (cut?)", line)
                continue
            if stripped[8:9] == ":" and dump_match(line) is not None:
                self.stray(lineno, line, "hex dump line without a byte-string label before it")
                continue
            label_part, sep, value = line.partition(":")
            if not sep:
                self.stray(lineno, line, "not a 'Label: value' line")
                continue
            label = label_part.strip()
            indent = len(label_part) - len(label_part.lstrip())
            value = value.strip()
            if label == "MQI Operation" and indent == 0:
                self.end_op()
                self.msg.form = "verbose"
                index = printed_number(value, signed=False)
                if index is None:
                    index = self.msg.ops_seen
                self.msg.ops_seen += 1
                self.op = OperationBlock(lineno, index, line)
                continue
            if self.op is not None and indent == 0:
                self.end_op()  # a header-level line after the operations: the block is over
            if value == "":  # a byte string: its hex dump follows
                self.dump_label = label
                self.dump_bytes = bytearray()
                self.dump_line = lineno
                if self.op is not None:
                    self.dump_target = self.op.dumps
                    self.op.raw.append(line)
                else:
                    self.dump_target = self.msg.dumps
                continue
            if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
                value = value[1:-1].rstrip()
            if self.op is not None:
                self.op.fields[label] = value
                self.op.raw.append(line)
                continue
            signed = _HEADER_NUMBERS.get(label)
            if signed is not None and printed_number(value, signed) is None:
                # the value is unknown, not the message: its operations are still read
                self.msg.header.pop(label, None)
                self.problem(lineno, f"{number_reason(label, value, signed)}: taken as not printed", line)
                continue
            self.msg.header[label] = value
        self.end_message()

    def bad_dump_line(self, lineno: int, line: str, groups: str) -> None:
        odd = next((c for c in groups if c not in _HEX_OR_BLANK), "?")
        reason = (f"hex dump line of {self.dump_label} holds U+{ord(odd):04X}, neither a hex digit nor an ASCII "
                  f"blank (line {lineno})")
        if self.op is not None:
            self.op.bad = self.op.bad or reason
            return
        # a header dump (the message's Correl_id): its value is unknown, the message's operations are read
        self.dump_bad = True
        self.problem(lineno, f"{reason}: {self.dump_label} taken as not printed", line)

    def outside(self, lineno: int, line: str, stripped: str) -> None:
        if stripped.split()[:3] == ["Tid", "Date", "Time"]:
            # a summary table without its header block (output cut or pasted): its lines are still operations
            self.result.trace_messages += 1
            self.msg = TraceMessage(lineno, self.result.trace_messages)
            self.msg.form = "summary"
            self.in_table = True
            self.note(lineno, "summary table without a header block: queue manager and connection unknown")
            return
        if stripped.startswith("Subscribing to the activity trace topic") or stripped.startswith("'$SYS/"):
            return
        self.stray(lineno, line, "line outside any trace message")

    def stray(self, lineno: int, line: str, why: str) -> None:
        if self.op is not None:
            self.op.bad = self.op.bad or f"{why}: {clip(line.strip())!r} (line {lineno})"
            self.op.raw.append(line)
            return
        self.problem(lineno, why, line)

    # --- what the blocks are read into: the subclasses' ------------------------------------------------------

    def finish_verbose(self, op: OperationBlock) -> None:
        """A complete operation block of the current trace message."""
        raise NotImplementedError

    def summary_line(self, lineno: int, line: str, m: re.Match) -> None:
        """A line of the current trace message's summary table (``m``: its columns)."""
        raise NotImplementedError

    def close(self) -> ActivityTraceResult:
        """The end of the input: the result (what was not handed out in chunks) and the file's notes."""
        r = self.result
        if self.records_processed is not None and self.records_processed != r.trace_messages:
            self.note(0, f"amqsact reported {self.records_processed} records, the file holds {r.trace_messages} "
                         "(cut or concatenated output)")
        self.flush()
        return r
