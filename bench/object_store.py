"""What a lake on an object store costs per run, against a lake on the local disk (issue 31, item 5).

    .venv/bin/python bench/object_store.py [--messages 1000000] [--repeat 2] [--landing DIR] [--keep DIR]

1. `clwl generate` writes one day of --messages messages (bench/pipeline.py's estate; not timed), unless
   --landing names one already generated.
2. A SeaweedFS S3 server starts on 127.0.0.1 (tests/objectstore.py's, the one the tests use), with a bucket.
3. `clwl run` on that landing, each time in a fresh process into a new lake, alternately into a local folder and
   into ``s3://<bucket>/...`` (Spark through S3A, the driver's reads through deltalake, publish by server-side
   copy and conditional puts): --repeat times each, so both see the same load in turn.
4. Printed: each run's wall time (process start to exit) and its stages as `clwl run` reports them; the median of
   each kind and the store's ratio to the local disk, stage by stage; what each lake holds (objects or files,
   MiB).

The server is on the same machine, so the figures are the price of the protocol (requests, copies, no
rename, no hard links), not of a network: a real store adds its round trips to every request.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CLWL = [sys.executable, "-m", "clwl"]
RUN_LINE = re.compile(r"^run (\S+): ([\d.]+) s(?: \((.*)\))?$", re.M)


def stages(stdout: str) -> dict[str, float]:
    """`clwl run`'s own figures: ``run <id>: <total> s (ingest 1.0 s, replay 2.0 s, ...)``."""
    found = RUN_LINE.search(stdout)
    if not found:
        return {}
    out = {"total": float(found.group(2))}
    for part in (found.group(3) or "").split(", "):
        if part:
            name, value, _ = part.rsplit(" ", 2)
            out[name] = float(value)
    return out


def run(landing: Path, lake: str, env: dict[str, str]) -> tuple[float, dict[str, float]]:
    started = time.perf_counter()
    done = subprocess.run([*CLWL, "run", "--landing", str(landing), "--lake", lake], env=env, cwd=ROOT,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 or ": published" not in done.stdout:
        raise SystemExit(f"clwl run into {lake} failed (exit {done.returncode}):\n{done.stdout[-2000:]}"
                         f"{done.stderr[-2000:]}")
    return wall, stages(done.stdout)


def local_size(lake: Path) -> tuple[int, int]:
    files = [f for f in lake.rglob("*") if f.is_file()]
    return len(files), sum(f.stat().st_size for f in files)


def store_size(uri: str) -> tuple[int, int]:
    from clwl.lake.storage import lake_root, list_prefix

    listed = list_prefix(lake_root(uri))
    return len(listed), sum(size for _, size in listed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--senders", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2, help="runs of each kind, alternated")
    ap.add_argument("--landing", help="an estate already generated (e.g. bench/pipeline.py --keep's landing)")
    ap.add_argument("--keep", help="work here (landing, local lakes, the server's data) and keep it")
    a = ap.parse_args()

    from bench.pipeline import generate_estate
    from tests.objectstore import serve

    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="clwl-bench-store-"))
    root.mkdir(parents=True, exist_ok=True)
    landing = Path(a.landing) if a.landing else root / "landing"
    if not a.landing:
        generate_estate(a, landing, "csv")
    with serve(root / f"store-{os.getpid()}") as store:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "CLWL_LAKE"},
               **store.env()}
        os.environ.update(store.env())  # for this process's listing of the store's lakes
        runs: dict[str, list[tuple[float, dict[str, float]]]] = {"local": [], "store": []}
        sizes: dict[str, tuple[int, int]] = {}
        for n in range(a.repeat):
            for kind in ("local", "store"):
                lake = str(root / f"lake-{n}") if kind == "local" else store.lake_uri(f"bench-{n}")
                wall, figures = run(landing, lake, env)
                runs[kind].append((wall, figures))
                sizes[kind] = local_size(Path(lake)) if kind == "local" else store_size(lake)
                shown = ", ".join(f"{k} {v:.1f}" for k, v in figures.items() if k != "total")
                print(f"{kind:5} run {n + 1}: {wall:7.1f} s wall ({shown})", flush=True)

    print(f"\n{a.messages:,} messages, median of {a.repeat} runs each, fresh process and lake each run")
    names = ["wall", *[k for k in runs["local"][0][1] if k != "total"]]
    print(f"{'':10} {'local':>9} {'store':>9} {'ratio':>6}")
    for name in names:
        pick = (lambda r: r[0]) if name == "wall" else (lambda r, n=name: r[1].get(n, 0.0))
        local = statistics.median(pick(r) for r in runs["local"])
        remote = statistics.median(pick(r) for r in runs["store"])
        ratio = f"{remote / local:5.2f}x" if local > 0 else "     -"
        print(f"{name:10} {local:8.1f}s {remote:8.1f}s {ratio}")
    for kind, (count, size) in sizes.items():
        print(f"{kind} lake: {count:,} {'files' if kind == 'local' else 'objects'}, {size / 2**20:,.1f} MiB")


if __name__ == "__main__":
    main()
