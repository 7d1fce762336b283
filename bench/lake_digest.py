"""Digest every table of a lake, to show that a restructuring changed no row.

    python bench/lake_digest.py build --out DIR      # clwl run on the samples and on a generated estate (with
                                                     # re-allocation and an activity trace): DIR/digest.json
    python bench/lake_digest.py diff A.json B.json   # which tables differ (exit 1 when any does)

A table's digest is its row count and the SHA-256 of its rows, each row as canonical JSON, sorted. Columns that
differ between two runs of the same code by design are left out (run ids, wall-clock times, Delta versions, the
code fingerprint): run twice on one commit, the digests are equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLWL = [sys.executable, "-m", "clwl"]
GENERATED = ["--seed", "7", "--qmgrs", "7", "--senders", "2", "--days", "1", "--messages-per-day", "3000",
             "--partitions", "1", "--puts-format", "activity-trace", "--trace-disagreements", "3"]


def _canonical(value):
    if isinstance(value, float):
        return None if value != value else round(value, 9)  # NaN as null; float noise below 1e-9 is not a change
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return value


def digest_lake(lake: Path) -> dict[str, dict]:
    from clwl.lake.door import is_delta_table, read_rows
    from clwl.lake.published import read_published
    from clwl.lake.registry import VOLATILE_COLUMNS

    out: dict[str, dict] = {}
    pub = read_published(lake / "gold")
    for layer in ("bronze", "silver", "gold"):
        for table in sorted(p for p in (lake / layer).iterdir() if is_delta_table(p)) if (lake / layer).is_dir() \
                else ():
            version = pub.version(table.name) if layer == "gold" else None
            data = read_rows(table, version=version)  # Arrow's file system: no abort at exit
            # Columns that change from run to run of the same code, by exact name (the registry's one list).
            kept = [c for c in data.column_names if c not in VOLATILE_COLUMNS]
            rows = sorted(json.dumps(_canonical(r), sort_keys=True, default=str)
                          for r in data.select(kept).to_pylist())
            h = hashlib.sha256("\n".join(rows).encode()).hexdigest()
            out[f"{layer}.{table.name}"] = {"rows": len(rows), "sha256": h,
                                            "left_out": sorted(set(data.column_names) - set(kept))}
    return out


def build(out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="clwl-digest-") as tmp:
        gen = Path(tmp) / "generated"
        subprocess.run([*CLWL, "generate", "--out", str(gen), *GENERATED, "--quiet"], check=True, cwd=ROOT)
        for name, landing in (("samples", ROOT / "samples" / "landing"), ("generated", gen)):
            lake = Path(tmp) / f"{name}-lake"
            t0 = time.monotonic()
            p = subprocess.run([*CLWL, "run", "--landing", str(landing), "--lake", str(lake)], cwd=ROOT,
                               capture_output=True, text=True)
            print(f"{name}: clwl run exit {p.returncode} in {time.monotonic() - t0:.0f} s", flush=True)
            if p.returncode not in (0, 4):
                sys.exit(f"{name}: clwl run failed:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
            result[name] = {"exit": p.returncode, "tables": digest_lake(lake)}
    (out / "digest.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out / 'digest.json'}")
    return result


def diff(a: dict, b: dict) -> list[str]:
    lines = []
    for estate in sorted(set(a) | set(b)):
        ta, tb = a.get(estate, {}).get("tables", {}), b.get(estate, {}).get("tables", {})
        if a.get(estate, {}).get("exit") != b.get(estate, {}).get("exit"):
            lines.append(f"{estate}: exit {a.get(estate, {}).get('exit')} -> {b.get(estate, {}).get('exit')}")
        for table in sorted(set(ta) | set(tb)):
            x, y = ta.get(table), tb.get(table)
            if x is None or y is None:
                lines.append(f"{estate} {table}: {'only after' if x is None else 'only before'}")
            elif (x["rows"], x["sha256"]) != (y["rows"], y["sha256"]):
                lines.append(f"{estate} {table}: {x['rows']} rows -> {y['rows']} rows, content differs")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, required=True)
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    args = p.parse_args()
    if args.cmd == "build":
        build(args.out)
        return 0
    lines = diff(json.loads(args.a.read_text()), json.loads(args.b.read_text()))
    a = json.loads(args.a.read_text())
    tables = sum(len(e["tables"]) for e in a.values())
    print("\n".join(lines) if lines else f"identical: {tables} tables in {len(a)} estates")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
