"""The report stage alone on a lake a run left (issue 45 lever 3): its seconds per part, its peak RSS.

    .venv/bin/python bench/report.py --lake LAKE [--date D] [--out DIR] [--profile FILE] [--quiet] [--code DIR]

Writes the run date's report (the published run's, as the report stage does: clwl.report.write_report, the lake's
silver.channel_status) into --out (default a temporary folder), then prints the whole time, the gather's and
each section's seconds, and the process's peak RSS. --profile FILE: a cProfile of the whole call. No Spark.
"""

from __future__ import annotations

import argparse
import cProfile
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lake", required=True, type=Path)
    ap.add_argument("--date", help="run date (default: the latest published)")
    ap.add_argument("--out", type=Path, help="reports folder (default: a temporary one)")
    ap.add_argument("--profile", type=Path, help="write a cProfile of the report here")
    ap.add_argument("--quiet", action="store_true", help="only the whole time")
    ap.add_argument("--code", type=Path, default=ROOT,
                    help="the checkout whose clwl to time (default this one; another, to compare)")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(a.code.resolve()))

    import clwl.report.build as build
    import clwl.report.read as read
    from clwl.lake.door import Lake
    from clwl.report import Place

    published = Lake(a.lake).published()
    date = a.date or max(published.dates)
    run_id = published.dates[date]
    out = a.out or Path(tempfile.mkdtemp(prefix="clwl-bench-report-"))

    seconds: dict[str, float] = {}

    def timed(name: str, f):
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t
        return wrapper

    # Each section's builder and each read of the gather, timed where build.py and read.py look them up.
    build.SECTIONS = tuple(build.Section(s.name, timed(s.name, s.build)) for s in build.SECTIONS)
    for name in ("read_gold", "read_table", "read_disagreements", "low_trace_puts", "read_delayed", "read_puts",
                 "read_skew", "read_igq_rows", "read_seen", "destination_counts"):
        setattr(read, name, timed(f"gather: {name}", getattr(read, name)))
    build.gather = timed("gather (whole)", build.gather)
    build.quality_docs = timed("quality docs", build.quality_docs)
    build.render_html = timed("render html", build.render_html)
    build.render_md = timed("render md", build.render_md)

    place = Place(lake=a.lake, reports=out)
    t = time.perf_counter()
    if a.profile:
        prof = cProfile.Profile()
        prof.runcall(build.write_report, place, date, run_id)
        prof.dump_stats(str(a.profile))
    else:
        build.write_report(place, date, run_id)
    whole = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"report {date} of {a.lake}: {whole:.2f} s, peak RSS {rss:.0f} MiB, into {out / date}")
    if not a.quiet:
        for name, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
            print(f"  {s:7.2f}  {name}")


if __name__ == "__main__":
    main()
