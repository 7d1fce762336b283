"""Put CSV files read by Spark's CSV reader give the Python parser's rows (issue 30 item 4).

The corpus: the samples' put CSV files, the put CSV fixtures, the hand-made files of
tests/unit/test_put_csv_fastpath.py (``CASES``) and mutants of the put CSV seeds made by the fuzz run's own
``mutate`` (tests/unit/test_parser_fuzz.py: byte flips, truncation, duplicated and deleted lines, re-encodings,
huge and odd numbers, blanks, binary), seeded. The ingest's parse step (``parse_files``) runs on the whole corpus
twice in one Spark session: with the put CSV reader (clean files read by Spark, the others by the Python parser)
and without it (every file by the Python parser, as before). For every file, its summary, its bronze.put_records
rows (line numbers included) and its silver.quarantine rows are the same.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import pytest

from clwl.lake.door import Lake
from spark.config import PipelineConfig
from spark.ingest import LandingFile
from spark.ingest.context import IngestRun
from spark.ingest.parse_step import TASK_BYTES, parse_files
from spark.ingest.put_csv import read_put_csvs
from tests.unit.test_put_csv_fastpath import CASES

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "landing"
FIXTURES = ROOT / "tests" / "fixtures" / "puts"
RUN_DATE = "2026-11-20"
MUTANTS = 150


def _landing_file(landing: Path, run_date: str, qmgr: str, name: str, data: bytes) -> LandingFile:
    from tests.unit.test_parser_fuzz import landing_file

    return landing_file(landing, name, data, qmgr=qmgr, run_date=run_date)


def _mutants() -> list[bytes]:
    """Seeded mutants of the fuzz run's put CSV seeds, one to three mutations each."""
    from tests.unit.test_parser_fuzz import OPS, SEEDS, mutate

    rnd = random.Random(30)
    seeds = [data for _, _, data in SEEDS["puts csv"]]
    out = []
    for _ in range(MUTANTS):
        data = rnd.choice(seeds)
        for _ in range(rnd.randint(1, 3)):
            data = mutate(data, rnd.choice(OPS), rnd.randrange(1 << 20), rnd.randrange(1 << 20))
        out.append(data)
    return out


def _case_name(name: str) -> str:
    return "puts_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") + ".csv"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[LandingFile]:
    landing = tmp_path_factory.mktemp("put-csv-landing")
    files = [_landing_file(landing, p.parent.parent.name, p.parent.name, p.name, p.read_bytes())
             for p in sorted(SAMPLES.glob("*/*/puts*.csv"))]
    files += [_landing_file(landing, RUN_DATE, "QM8", f"puts_fixture_{p.stem}.csv", p.read_bytes())
              for p in sorted(FIXTURES.glob("*.csv"))]
    files += [_landing_file(landing, RUN_DATE, "QM7", _case_name(name), data) for name, data, _, _ in CASES]
    files += [_landing_file(landing, RUN_DATE, "QM9", f"puts_mutant_{n:03d}.csv", data)
              for n, data in enumerate(_mutants())]
    return files


def _by_file(frame) -> dict[str, list[tuple]]:
    rows: dict[str, list[tuple]] = defaultdict(list)
    if frame is not None:
        for r in frame.collect():
            rows[r["source_file"]].append(tuple(r))
    return {k: sorted(v, key=repr) for k, v in rows.items()}


def test_the_fast_path_reads_the_clean_hand_made_files_and_sends_the_others_to_the_parser(spark, corpus, tmp_path):
    """The decision of tests/unit/test_put_csv_fastpath.py's CASES, made by the driver and Spark together."""
    cases = [f for f in corpus if f.observing_qmgr == "QM7"]
    read = read_put_csvs(spark, cases, "run-decide", tmp_path)
    expected = {_case_name(name): reader for name, _, reader, _ in CASES}
    got = {f.source_file.rsplit("/", 1)[-1]: "spark" if f.source_file in read.done else "python" for f in cases}
    assert got == expected, {k: (v, read.fallback.get(f"{RUN_DATE}/QM7/{k}")) for k, v in got.items()
                             if v != expected[k]}
    assert set(read.fallback) == {f.source_file for f in cases} - read.done


def test_the_spark_reader_and_the_python_parser_give_the_same_rows(spark, corpus, tmp_path):
    """Every file's summary, bronze.put_records rows and silver.quarantine rows, with the put CSV reader and
    without it, are the same; the samples' clean put files and some mutants were read by Spark."""
    dates = sorted({f.run_date for f in corpus})
    said: list[str] = []
    runs = {}
    for by_spark in (True, False):
        scratch = tmp_path / f"scratch-{by_spark}"
        scratch.mkdir()
        config = PipelineConfig(lake=tmp_path / "lake", put_csv_reader=by_spark)
        ingest = IngestRun(spark, config, Lake(config.lake), "run-compare", datetime.now(timezone.utc), said.append)
        results, frames = parse_files(ingest, corpus, dates, scratch, TASK_BYTES)
        runs[by_spark] = ({r["source_file"]: r for r in results}, _by_file(frames.get("bronze.put_records")),
                          _by_file(frames.get("silver.quarantine")))
    (fast_sums, fast_rows, fast_problems), (sums, rows, problems) = runs[True], runs[False]
    assert fast_sums == sums
    assert fast_rows.keys() == rows.keys() and fast_problems.keys() == problems.keys()
    for name in rows:
        assert fast_rows[name] == rows[name], name
    for name in problems:
        assert fast_problems[name] == problems[name], name
    line = next(s for s in said if s.startswith("put CSV reader:"))
    by_spark = int(re.search(r"(\d+) files read by Spark", line).group(1))
    clean = sum(1 for r in sums.values() if r["status"] == "ingested" and not r["records_quarantined"])
    assert 10 <= by_spark <= clean, line
    assert sum(len(v) for v in rows.values()) > 1000 and problems
