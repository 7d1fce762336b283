"""The parse entry point of activity traces printed in JSON by amqsevt (``clwl.formats`` names it; the parser is
``clwl.parse.activity_trace_json``). Its rows are the amqsact trace's, built the same way as
:func:`spark.ingest.parse_tasks._parse_activity_trace` builds them (``format`` the trace's, so that
silver.message_events takes them as activity trace events): every operation to bronze.activity_operations, every
traced put to bronze.put_records, whatever could not be used to the quarantine.

(The row building below is :func:`~spark.ingest.parse_tasks._parse_activity_trace`'s with the parser as a
parameter, and imports two of its private helpers: tests/unit/test_import_purity.py flags them until
``_parse_activity_trace`` takes the parser as a parameter and this module becomes one call of it.)
"""

from __future__ import annotations

from spark.ingest import parse_tasks
from spark.ingest.parse_tasks import QUARANTINE_TABLE, TRACE_FORMAT, _row_problem, _row_raw
from spark.tables import TABLES


def parse_json_trace(out, tz: str | None = None, state=None) -> None:
    """An amqsevt JSON file of activity trace messages; ``state``: the handles the previous trace file of the
    same queue manager and run date left open, updated in place."""
    from clwl.parse.activity_trace_json import parse_amqsevt_json_lines
    from clwl.parse.common import InputError

    s = out.spec
    t_ops, t_puts = TABLES["bronze.activity_operations"], TABLES["bronze.put_records"]
    put_fields = t_puts.columns[t_puts.columns.index("format") + 1:]
    head = (out.run_id, out.run_date, s.observing_qmgr, s.source_file)
    op_row = t_ops.row_from(ingest_run_id=out.run_id, run_date=out.run_date, observing_qmgr=s.observing_qmgr,
                            source_file=s.source_file, position=None, format=TRACE_FORMAT, operation_index=None,
                            fields=None)
    position, index = t_ops.columns.index("position"), t_ops.columns.index("operation_index")
    fields_at = t_ops.columns.index("fields")
    taken = {"rows": 0}

    def rows_of(key: str, build, records) -> list[tuple]:
        kept = []
        for r in records:
            row = build(r)
            reason = _row_problem(key, row)
            if reason is None:
                kept.append(row)
            else:  # a value Arrow would refuse costs its record only
                out.problem(int(r.line) if key == t_ops.key else int(r.put.line), reason, _row_raw(key, row))
        taken["rows"] += len(kept)
        return kept

    def op(r) -> tuple:
        row = list(op_row(r))
        row[position], row[index], row[fields_at] = int(r.line), int(r.index), dict(r.fields)
        return tuple(row)

    def put(p) -> tuple:
        r = p.put
        return head + (int(r.line), TRACE_FORMAT) + tuple(getattr(r, f) for f in put_fields)

    def take(operations, puts, problems, spill: bool) -> None:
        for key, some in ((t_ops.key, rows_of(t_ops.key, op, operations)), (t_puts.key, rows_of(t_puts.key, put, puts))):
            if spill:
                out.write_out(key, some)
            else:
                for row in some:
                    out.add(key, row)
        for p in problems:
            out.problem(p.line, p.reason, p.raw)

    try:
        with open(s.path, encoding="utf-8", errors="replace", newline="") as fh:
            result = parse_amqsevt_json_lines(
                fh, s.source_file, tz=tz or "UTC", state=state,
                on_chunk=(lambda c: take(c.operations, c.puts, c.problems, True)) if out.spill else None,
                chunk_ops=parse_tasks.TRACE_CHUNK_OPS if out.spill else 0)
    except OSError as exc:
        raise InputError(s.source_file, f"cannot read: {exc.strerror or exc}") from None
    take(result.operations, result.puts, result.problems, False)
    out.notes = [f"line {n.line}: {n.text}" if n.line else n.text for n in result.notes]
    quarantined = len(out.rows.get(QUARANTINE_TABLE, ()))
    out.read, out.accepted, out.quarantined = taken["rows"] + quarantined, taken["rows"], quarantined
