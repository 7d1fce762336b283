"""The samples' lake on a real S3-compatible object store (issue 31): `clwl run --lake s3://...` once, in a process
of its own as a user runs it (Spark through the S3A connector, the driver's reads through deltalake and Arrow,
the pointer and the lease through conditional puts), then:

- every silver and gold table holds the rows of the local samples lake (the session's `samples_lake`), the
  columns that differ between two runs by design (run ids, times, versions) left out (tests/lake_compare.py);
- `clwl query`, `clwl published` and `clwl explain` answer from the store without a JVM;
- `clwl lint`, `clwl drift`, `clwl blast` and `clwl advise --lake --date` answer from the store exactly what they
  answer from the local lake (text and --json; the lake's own name, and how long a replay took, aside);
- the report the run put under `<lake>/reports/<date>/` on the store is the local lake's, section for section
  (its advice sections too: configuration findings, changes since the previous day, weights, blast radius),
  the run's own id, clock times, table versions and the lake's name aside;
- a second writer is refused in one line while the lease is held (exit 2, before Spark starts);
- a publish killed after a gold commit leaves readers on the published run, and the next publish settles it
  and publishes cleanly: on the store, as tests/spark/test_publish_atomic.py shows locally.

The server is the session's SeaweedFS (tests/objectstore.py). One pipeline run on the store for the module.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys

import pytest

from clwl.cli import main
from clwl.lake.door import GOLD_TABLES, SILVER_TABLES, Lake, unsettled
from clwl.lake.lock import MIN_LEASE_SECONDS
from spark.config import REPO_ROOT
from tests.lake_compare import comparable_rows

pytestmark = [pytest.mark.objectstore, pytest.mark.spark, pytest.mark.slow, pytest.mark.extended]

DAY = "2026-11-20"
#: The killed writer's lease (CLWL_LEASE_SECONDS): the next writer waits it out, so the shortest one accepted.
TEST_LEASE = int(MIN_LEASE_SECONDS)
CLWL = [sys.executable, "-m", "clwl"]

PUBLISH_SCRIPT = """
import sys
from spark.config import PipelineConfig
from spark.stages import publish_stage
from spark.run import PipelineRun
from spark.session import get_spark

config = PipelineConfig(lake=sys.argv[1], landing=sys.argv[2])
outcome = publish_stage(get_spark(config.master, app_name="clwl-kill-test", lake=config.lake),
                        PipelineRun(config, sys.argv[4]), sys.argv[3])
print("PUBLISHED" if outcome.published else "BLOCKED", flush=True)
"""


def _env(store, **more) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "CLWL_LAKE"}
    return {**env, **store.env(), **more}


def _clwl(store, *args, **more) -> subprocess.CompletedProcess:
    return subprocess.run([*CLWL, *args], env=_env(store, **more), capture_output=True, text=True, timeout=1500,
                          cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def store_lake(object_store):
    """The samples published into a fresh prefix of the store by `clwl run` (both dates, one process)."""
    uri = object_store.lake_uri("samples")
    done = _clwl(object_store, "run", "--landing", str(REPO_ROOT / "samples" / "landing"), "--lake", uri)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return uri


def test_every_silver_and_gold_table_equals_the_local_lakes(samples_lake, store_lake, object_store, monkeypatch):
    object_store.use(monkeypatch)
    local, remote = Lake(samples_lake.lake), Lake(store_lake)
    keys = [f"silver.{t}" for t in SILVER_TABLES] + [f"gold.{t}" for t in GOLD_TABLES]
    compared = 0
    for key in keys:
        assert local.exists(key) == remote.exists(key), key
        if local.exists(key):
            assert comparable_rows(remote, key) == comparable_rows(local, key), key
            compared += 1
    assert compared >= len(GOLD_TABLES) + 5
    assert set(remote.published().dates) == set(local.published().dates) == {"2026-11-19", DAY}
    assert unsettled(remote.layer("gold")) == []
    # the staged files were committed to gold server-side, not rewritten by Spark
    info = remote.open("gold.routing_replay").history(1)[0]
    assert "the files of s3://" in info.get("engineInfo", ""), info


def test_query_published_and_explain_read_the_store_without_a_jvm(samples_lake, store_lake, object_store):
    # rows read from the store's Parquet files (a count alone is answered from the table statistics)
    sql = (f"SELECT qmgr, count(*) AS n, max(msg_id) AS last FROM routing_replay WHERE run_date = DATE '{DAY}' "
           f"GROUP BY qmgr ORDER BY qmgr")
    local = _clwl(object_store, "query", "--lake", str(samples_lake.lake), "--format", "json", sql)
    remote = _clwl(object_store, "query", "--lake", store_lake, "--format", "json", sql)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout and len(remote.stdout.splitlines()) >= 2
    published = _clwl(object_store, "published", "--json", "--lake", store_lake)
    assert published.returncode == 0, published.stderr
    assert set(json.loads(published.stdout)["tables"]) == set(GOLD_TABLES)
    msg = json.loads(_clwl(object_store, "query", "--lake", store_lake, "--format", "json",
                           f"SELECT msg_id FROM routing_replay WHERE run_date = DATE '{DAY}' ORDER BY msg_id "
                           f"LIMIT 1").stdout)["msg_id"]
    here = _clwl(object_store, "explain", msg, "--date", DAY, "--lake", str(samples_lake.lake), "--json")
    there = _clwl(object_store, "explain", msg, "--date", DAY, "--json", CLWL_LAKE=store_lake)
    assert there.returncode == 0, there.stderr
    timings = ("seconds",)  # how long each step took here: the one thing that differs by design
    assert ({k: v for k, v in json.loads(there.stdout).items() if k not in timings}
            == {k: v for k, v in json.loads(here.stdout).items() if k not in timings})


#: The lake-reading commands that need no JVM, each with its arguments besides --lake (advise: QM1's captures of
#: the day, its replay of the day with the proposed weights).
LAKE_COMMANDS = {
    "lint": ["lint", "--date", DAY],
    "drift": ["drift", "--date", DAY],
    "blast": ["blast", "--date", DAY],
    "advise": ["advise", "--mqsc", str(REPO_ROOT / "samples" / "landing" / DAY / "QM1"), "--queue", "APP.ORDERS",
               "--target", "QM1=20,QM2=50,QM3=30", "--date", DAY],
}
#: How long the in-process replays took (blast's closing line; --json's "seconds"): the one thing that differs by
#: design between two answers of a command.
REPLAY_SECONDS = re.compile(r"in-process,? in \d+(\.\d+)? s;")


def _answer(argv: list[str], lake, capsys) -> tuple[int, str, str]:
    """``clwl <argv> --lake <lake>`` in this process (no JVM in these commands), the lake's name in what it printed
    replaced, and how long its replays took dropped."""
    capsys.readouterr()
    code = main([*argv, "--lake", str(lake)])
    out, err = (text.replace(str(lake), "<lake>") for text in capsys.readouterr())
    if "--json" in argv and code == 0:
        answer = json.loads(out)
        answer.pop("seconds", None)
        out = json.dumps(answer, sort_keys=True)
    return code, REPLAY_SECONDS.sub("in-process, in <t> s;", out), err


def _diff(here: str, there: str, names=("local", "store")) -> str:
    return "".join(list(difflib.unified_diff(here.splitlines(True), there.splitlines(True), *names, n=1))[:60])


def test_lint_drift_blast_and_advise_answer_from_the_store_as_from_the_local_lake(samples_lake, store_lake,
                                                                                  object_store, monkeypatch, capsys):
    object_store.use(monkeypatch)
    monkeypatch.delenv("CLWL_LAKE", raising=False)
    for name, argv in LAKE_COMMANDS.items():
        for shape in ([], ["--json"]):
            here = _answer([*argv, *shape], samples_lake.lake, capsys)
            there = _answer([*argv, *shape], store_lake, capsys)
            assert here[0] == 0 and here[1].strip(), (name, shape, here)
            assert there == here, (name, shape, there[2], _diff(here[1], there[1]))
    # advise's replay of the day ran on the store: QM1's messages to APP.ORDERS, before and after the weights
    assert json.loads(_answer([*LAKE_COMMANDS["advise"], "--json"], store_lake, capsys)[1])["replay"]["messages"] > 0


#: What differs by design between the reports of two runs of the same day: the run's id, the wall-clock times of
#: the run (stamps dated outside the samples' days; the data's own times are on them), the Delta versions it
#: read and wrote, the charts' pixels (the same figures; their bytes are not compared), and the lake's name.
SAMPLE_DAYS = ("2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21")
REPORT_VOLATILE = (
    (re.compile(r"run-\d{8}T\d{6}-[0-9a-f]+"), "<run>"),
    (re.compile(r"\b(\d{4}-\d{2}-\d{2})[ T]\d{2}:\d{2}:\d{2}(\.\d+)?Z?"),
     lambda m: m.group(0) if m.group(1) in SAMPLE_DAYS else "<clock>"),
    (re.compile(r"\b((?:bronze|silver|gold|staging)\.\w+=)\d+"), r"\1<v>"),
    (re.compile(r"\(version \d+\)"), "(version <v>)"),
    (re.compile(r'src="data:image/png;base64,[A-Za-z0-9+/=]+"'), 'src="<chart>"'),
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SUITES = len(list((REPO_ROOT / "expectations").glob("*.json")))  # one validation result a suite in the Data Docs
# A validation result's row in GX's Data Docs index (tests/spark/test_quality_docs.py reads it the same way).
_SUITE_VERDICT = re.compile(r"'_expectation_suite_name_sort': '([^']+)', '_table_row_link_path': 'validations/[^']+', "
                            r"'_validation_success_text': '(\w+)'")


def _report(lake: Lake, day: str) -> dict[str, str | bytes]:
    """The files of ``day``'s report in the lake (local or on the store, read alike through clwl.lake.storage), text
    normalised (REPORT_VOLATILE), charts as their first bytes."""
    from clwl.lake.storage import list_prefix, read_object

    folder = lake.layer("reports") / day
    files: dict[str, str | bytes] = {}
    for name, _ in list_prefix(folder):
        if not name or name.endswith("/"):  # a folder marker, should a client have left one
            continue
        if name.startswith("quality/") and name != "quality/index.html":  # pages named by run id and time
            continue
        data = read_object(folder / name).data
        if name.endswith(".png"):
            files[name] = data[:len(PNG_MAGIC)]
            continue
        text = data.decode("utf-8").replace(str(lake.root), "<lake>")
        for pattern, replacement in REPORT_VOLATILE:
            text = pattern.sub(replacement, text)
        files[name] = text
    return files


def test_the_report_on_the_store_is_the_local_lakes(samples_lake, store_lake, object_store, monkeypatch):
    """Every section of each day's report, the advice sections (configuration findings, what changed since the
    previous day, weights for an even split, blast radius) read by the run from the store's tables."""
    object_store.use(monkeypatch)
    for day in ("2026-11-19", DAY):
        here, there = _report(Lake(samples_lake.lake), day), _report(Lake(store_lake), day)
        assert {"summary.md", "report.html"} <= set(here), (day, sorted(here))
        assert sorted(there) == sorted(here), day
        # The Data Docs: GX's pages carry run ids and times; the suites and their verdicts are the local lake's.
        here_docs, there_docs = (_SUITE_VERDICT.findall(files.pop("quality/index.html")) for files in (here, there))
        assert sorted(there_docs) == sorted(here_docs) and len(here_docs) == SUITES, (day, here_docs, there_docs)
        for name in sorted(here):
            if name.endswith(".png"):
                assert here[name] == there[name] == PNG_MAGIC, (day, name)
            else:
                assert there[name] == here[name], (day, name, _diff(here[name], there[name]))
    summary = here["summary.md"]
    for section in ("## Configuration findings", "## What changed since the previous day",
                    "## Weights for an even split", "## Blast radius"):
        assert section in summary, section
    # The run id where expected, and the validation folder named relative to the lake (no machine's path in it)
    assert "| validation_result | validation/<run>/" + DAY + " |" in summary


def test_a_second_writer_is_refused_in_one_line_while_the_lease_is_held(store_lake, object_store, monkeypatch):
    from clwl.lake.lock import lake_lock

    object_store.use(monkeypatch)
    with lake_lock(store_lake, purpose="the first writer"):
        second = _clwl(object_store, "run", "--force", "--date", DAY, "--lake", store_lake)
    assert second.returncode == 2, (second.stdout[-2000:], second.stderr)
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "is in use by" in lines[0] and "the first writer" in lines[0], second.stderr


def test_a_publish_killed_after_a_gold_commit_leaves_readers_on_the_published_run(store_lake, object_store,
                                                                                  monkeypatch, tmp_path):
    """Runs last in the module (it publishes the day again). The day's staged tables are still there from the
    module's run: a publish of them (under their own run id, which the quality gate checks) is killed right after
    its second gold commit."""
    from clwl.lake.query import run_query

    object_store.use(monkeypatch)
    lake = Lake(store_lake)
    before = lake.published()
    script = tmp_path / "publish.py"
    script.write_text(PUBLISH_SCRIPT)
    landing = str(REPO_ROOT / "samples" / "landing")
    run_id = before.dates[DAY]
    killed = subprocess.run([sys.executable, str(script), store_lake, landing, DAY, run_id],
                            env=_env(object_store, CLWL_TEST_KILL_AFTER_GOLD_WRITES="2",
                                     CLWL_LEASE_SECONDS=str(TEST_LEASE)), capture_output=True,
                            text=True, timeout=900, start_new_session=True, cwd=REPO_ROOT)
    assert killed.returncode == -9, (killed.stdout[-2000:], killed.stderr[-3000:])
    after = lake.published()
    assert after.raw == before.raw  # the pointer was not replaced: readers see the published run
    left = unsettled(lake.layer("gold"))
    assert left, "the killed publish left no gold commit after the published versions"
    # readers take the pointer's versions, behind the commits the killed publish left
    assert any(lake.version(f"gold.{t}") > before.tables[t] for t in GOLD_TABLES)
    n = run_query(f"SELECT count(*) AS n FROM routing_replay WHERE run_date = DATE '{DAY}'", store_lake)
    assert n.column("n").to_pylist()[0] > 0

    # The killed writer's lease stays until it expires (no kernel releases it on a store): the next writer waits
    # for that, then takes the lease over (clwl/lake/lock.py), settles the killed publish and publishes.
    done = subprocess.run([sys.executable, str(script), store_lake, landing, DAY, run_id],
                          env=_env(object_store, CLWL_LOCK_WAIT=str(TEST_LEASE + 60)), capture_output=True,
                          text=True, timeout=900, cwd=REPO_ROOT)
    assert done.returncode == 0 and "PUBLISHED" in done.stdout, (done.stdout[-2000:], done.stderr[-3000:])
    again = lake.published()
    assert again.dates[DAY] == run_id
    assert all(again.tables[t] > before.tables[t] for t in GOLD_TABLES)  # settled (RESTORE), then published
    assert unsettled(lake.layer("gold")) == []
