"""Issue 13, items 13-15: what the landing folder holds besides ``<date>/<QM>/<file>``, and an empty day.

13. A symbolic link leaving the landing folder is never followed: nothing of its target reaches the lake (not
    ``silver.quarantine.raw``, not a Parquet file, not a Delta log statistic); it is one quarantine row (``level =
    'file'``, no raw text) and one run-log row with the reason, and a line of the run's output. A link to a file
    inside the landing folder is followed.
14. Folder links, folders that are not dates, files and links in the landing folder itself, named pipes: each
    is printed by ``clwl run`` (which names its run dates, so the discovery notes must not depend on that) and
    recorded with the reason. Hidden dot-files stay ignored.
15. A day with captures but no put record is published with a warning: in the progress and closing lines, in
    ``gold.run_summary.warnings``, and at the top of report.html and summary.md.

Every landing is built by hand in tmp_path from the sample estate's QM1 captures. The pipeline test runs
``clwl run`` once (module fixture) and the tests read what it printed and wrote.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import threading
from pathlib import Path

import pytest

from clwl.terminal import printable
from spark.config import REPO_ROOT, PipelineConfig
from spark.ingest import discover_landing, parse_landing_file
from spark.tables import TABLES, path

SAMPLE_QM1 = REPO_ROOT / "samples" / "landing" / "2026-11-20" / "QM1"
DAY = "2026-11-20"
SECRET = "CLWL-SECRET-7f3a9c0e"  # the content of a host file; must never be read into the lake
HOST_FILE = f"{SECRET}:x:0:0:root:/root:/bin/bash\nsecond line of the host file {SECRET}\n"
SKIPPED = "skipped, not read: "
LOOKALIKE = "Q\uff2d1"  # QＭ1, a fullwidth M
TITLE = "\x1b]0;title\x07"  # ESC ] 0 ; title BEL: would set the terminal's title


def _captures(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(SAMPLE_QM1 / name, folder / name)


def _estate(root: Path) -> tuple[Path, Path]:
    """A landing folder with one run date (QM1's captures, no put file) and every kind of item to skip, and
    the host files outside it. Returns (landing, outside)."""
    landing, outside = root / "landing", root / "outside"
    (outside / "QM2").mkdir(parents=True)
    (outside / "secret.txt").write_text(HOST_FILE)
    (outside / "QM2" / "puts.csv").write_text(HOST_FILE)
    qm1 = landing / DAY / "QM1"
    _captures(qm1, "config_060000.mqsc", "chstatus_060000.mqsc")
    _captures(landing / ".store", "config_120000.mqsc")  # a hidden folder inside the landing folder
    os.symlink(outside / "secret.txt", qm1 / "puts.csv")  # absolute link out
    os.symlink("../../../outside/secret.txt", qm1 / "config_070000.mqsc")  # relative link out
    os.symlink("../../.store/config_120000.mqsc", qm1 / "config_120000.mqsc")  # inside: followed
    os.symlink("no_such_file", qm1 / "chstatus_130000.mqsc")  # broken
    (qm1 / ".config_060000.mqsc.swp").write_text(HOST_FILE)  # an editor's swap file: ignored, never read
    os.symlink(outside / "QM2", landing / DAY / "QM2")  # a queue manager folder linked from outside
    os.symlink("QM1", landing / DAY / "QM3")  # a queue manager folder linked inside
    _captures(landing / "notadate" / "QM1", "config_060000.mqsc")
    _captures(landing / "2026-13-45" / "QM1", "config_060000.mqsc")
    (landing / "README.txt").write_text("what this folder is\n")
    os.symlink(DAY, landing / "latest")
    os.symlink(outside / "secret.txt", landing / "hosts")
    # Folders whose names are no MQ queue manager names (issue 25 item 6): a lookalike and a terminal escape.
    _captures(landing / DAY / LOOKALIKE, "config_060000.mqsc")
    _captures(landing / DAY / TITLE, "config_060000.mqsc")
    return landing, outside


# -- discovery and one parse, no Spark ------------------------------------------------------------------------


def test_a_link_leaving_the_landing_folder_is_never_opened(tmp_path):
    landing, outside = _estate(tmp_path)
    dates, files, notes = discover_landing(landing, [DAY])
    by_name = {f.source_file: f for f in files}
    secret_sha = hashlib.sha256(HOST_FILE.encode()).hexdigest()
    for name in (f"{DAY}/QM1/puts.csv", f"{DAY}/QM1/config_070000.mqsc"):
        spec = by_name[name]
        assert spec.skipped and spec.path == "" and spec.parser == "unknown"
        assert spec.reject.startswith(SKIPPED + "symbolic link to a file outside the landing folder")
        assert spec.content_sha256 != secret_sha and spec.size_bytes == 0
        summary, rows = parse_landing_file(spec, "run-1")
        assert summary["status"] == "rejected" and summary["reason"] == spec.reject
        [row] = [dict(zip(TABLES["silver.quarantine"].columns, r)) for r in rows["silver.quarantine"]]
        assert row["level"] == "file" and row["raw"] is None and row["reason"] == spec.reject
        assert SECRET not in repr(summary) + repr(rows)
        assert any(n.startswith(f"skipped {name}: symbolic link to a file outside") for n in notes)
    # a link to a file inside the landing folder is read, from the file it resolves to, under its own name
    inside = by_name[f"{DAY}/QM1/config_120000.mqsc"]
    assert not inside.skipped and inside.reject is None and inside.parser == "capture"
    assert inside.path == str((landing / ".store" / "config_120000.mqsc").resolve())
    assert SECRET not in repr(files)


def test_a_named_pipe_is_skipped_not_waited_on(tmp_path):
    _captures(tmp_path / DAY / "QM1", "config_060000.mqsc")
    fifo = tmp_path / DAY / "QM1" / "puts.csv"
    os.mkfifo(fifo)
    found: dict = {}
    worker = threading.Thread(target=lambda: found.update(out=discover_landing(tmp_path)), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # blocked opening the pipe: let it go (a writer that closes at once) and fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(5)
        pytest.fail("discovery waited on a named pipe")
    _, files, notes = found["out"]
    [pipe] = [f for f in files if f.source_file == f"{DAY}/QM1/puts.csv"]
    assert pipe.skipped and pipe.reject == SKIPPED + "not a regular file (a named pipe, socket or device)"
    assert notes == [f"skipped {DAY}/QM1/puts.csv: not a regular file (a named pipe, socket or device)"]


# -- one `clwl run` over the estate ---------------------------------------------------------------------------

#: item -> start of its reason (after "skipped, not read: "); top-level items are recorded under DAY
EXPECTED = {
    f"{DAY}/QM1/puts.csv": "symbolic link to a file outside the landing folder",
    f"{DAY}/QM1/config_070000.mqsc": "symbolic link to a file outside the landing folder",
    f"{DAY}/QM1/chstatus_130000.mqsc": "symbolic link (-> no_such_file) to no regular file",
    f"{DAY}/QM2/": "symbolic link to a folder outside the landing folder",
    f"{DAY}/QM3/": "symbolic link to a folder (-> QM1); folder links are not followed",
    "notadate/": "not a run date folder: the name is not a YYYY-MM-DD date",
    "2026-13-45/": "not a run date folder: 2026-13-45 is not a valid date",
    "README.txt": "a file in the landing folder itself",
    "latest/": "symbolic link to a folder (-> 2026-11-20); folder links are not followed",
    "hosts": "symbolic link to a file outside the landing folder",
    f"{DAY}/{LOOKALIKE}/": "not a queue manager folder: the name is not a valid MQ queue manager name",
    f"{DAY}/{TITLE}/": "not a queue manager folder: the name is not a valid MQ queue manager name",
}


@pytest.fixture(scope="module")
def estate_run(spark, tmp_path_factory):
    """`clwl run` on the hand-made estate (it names the run dates it found when it calls the ingest), then the
    ingest of that date again (everything unchanged): the output of both, the landing and the lake."""
    from clwl.cli import main
    from spark.ingest import ingest

    root = tmp_path_factory.mktemp("hygiene")
    landing, _ = _estate(root)
    lake = root / "lake"
    cfg = PipelineConfig(lake=lake, landing=landing)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["run", "--landing", str(landing), "--lake", str(lake)])
    again: list[str] = []
    ingest(cfg, [DAY], spark=spark, progress=again.append)
    return {"code": code, "out": [out.getvalue(), "\n".join(again)], "landing": landing, "lake": lake, "cfg": cfg}


def _rows(cfg: PipelineConfig, key: str) -> list[dict]:
    import deltalake

    return deltalake.DeltaTable(path(cfg, key)).to_pyarrow_table().to_pylist()


def _gold(lake: Path, table: str) -> list[dict]:
    import deltalake

    return deltalake.DeltaTable(str(lake / "gold" / table)).to_pyarrow_table().to_pylist()


@pytest.mark.spark
def test_nothing_of_a_linked_host_file_reaches_the_lake(estate_run):
    assert estate_run["code"] == 0
    lake = estate_run["lake"]
    for p in lake.rglob("*"):  # Parquet files, Delta logs (with their column statistics), reports, results
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p
    quarantine = _rows(estate_run["cfg"], "silver.quarantine")
    assert not [r for r in quarantine if SECRET in (r["raw"] or "") + r["reason"]]
    for name in (f"{DAY}/QM1/puts.csv", f"{DAY}/QM1/config_070000.mqsc", f"{DAY}/QM2/", "hosts"):
        [row] = [r for r in quarantine if r["source_file"] == name]
        assert row["level"] == "file" and row["raw"] is None and row["position"] == 0
        assert row["reason"].startswith(SKIPPED + EXPECTED[name])
    # the link to a file inside the landing folder was followed and read
    log = {r["source_file"]: r for r in _rows(estate_run["cfg"], "silver.ingest_files")}
    assert log[f"{DAY}/QM1/config_120000.mqsc"]["status"] == "ingested"
    captured = {r["source_file"] for r in _rows(estate_run["cfg"], "bronze.capture_files")}
    assert captured == {f"{DAY}/QM1/config_060000.mqsc", f"{DAY}/QM1/chstatus_060000.mqsc",
                        f"{DAY}/QM1/config_120000.mqsc"}


@pytest.mark.spark
def test_every_skipped_item_is_printed_and_recorded_with_its_reason(estate_run):
    first, second = estate_run["out"]
    cfg = estate_run["cfg"]
    quarantine = {r["source_file"]: r for r in _rows(cfg, "silver.quarantine")}
    log = _rows(cfg, "silver.ingest_files")
    runs = sorted({r["ingest_run_id"] for r in log})
    assert len(runs) == 2
    for out in (first, second):  # `clwl run`'s lines, and the ingest's own progress: no raw control character
        assert not [c for c in out if c != "\n" and (ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0)], out
    for item, reason in EXPECTED.items():
        for out in (first, second):  # printed by every run, unchanged or not; names escaped
            [line] = [line for line in out.splitlines() if line.strip().startswith(f"skipped {printable(item)}: ")]
            assert reason in line
        q = quarantine[item]
        assert (q["level"], q["raw"], q["run_date"].isoformat()) == ("file", None, DAY)
        if reason.startswith("not a queue manager folder"):
            assert q["observing_qmgr"] is None, item  # recorded as no queue manager's
        assert q["reason"].startswith(SKIPPED + reason)
        mine = sorted((r for r in log if r["source_file"] == item), key=lambda r: r["ingest_run_id"])
        assert [r["status"] for r in mine] == ["rejected", "unchanged"], item
        assert all(r["reason"] == q["reason"] and r["run_date"].isoformat() == DAY for r in mine)
        assert all((r["records_read"], r["records_quarantined"]) == (1, 1) for r in mine)
    # the top-level items say where they are recorded
    assert f"skipped notadate/: not a run date folder: the name is not a YYYY-MM-DD date (recorded under run " \
           f"date {DAY})" in first
    # hidden dot-files are ignored, without a word and without a row
    assert ".swp" not in first and not [s for s in quarantine if ".swp" in s or ".store" in s]
    # the folders that are not MQ names: their captures never became any queue manager's configuration
    assert {r["observing_qmgr"] for r in _rows(cfg, "silver.config_history")} == {"QM1"}
    # nothing else was rejected: the captures and the followed link were read
    rejected = {r["source_file"] for r in log if r["status"] == "rejected"}
    assert rejected == set(EXPECTED)


@pytest.mark.spark
def test_a_day_without_put_records_is_published_with_a_warning_everywhere(estate_run):
    first = estate_run["out"][0]
    warning = (f"no put records for {DAY}: configuration captures from 1 queue manager(s) (QM1) but not one put "
               "record")
    lines = first.splitlines()
    # the progress lines (between detect and publish) and the closing lines (after the day's verdict)
    publish_at = lines.index(f"[4/5] {DAY}: validate and publish")
    verdict_at = next(i for i, line in enumerate(lines) if line.startswith(f"  {DAY}: published; 0 messages"))
    assert any(f"WARNING: {warning}" in line for line in lines[:publish_at])
    assert any(f"WARNING: {warning}" in line for line in lines[verdict_at:])
    # gold.run_summary
    [summary] = _gold(estate_run["lake"], "run_summary")
    assert summary["status"] == "published" and summary["messages_replayed"] == 0
    assert summary["warnings"].startswith(warning)
    # the report: at the top, before the run summary
    reports = estate_run["lake"] / "reports" / DAY
    html = (reports / "report.html").read_text()
    box = html.index('role="alert"')
    assert box < html.index(">Run summary</h2>") and warning in html[box:html.index("</div>", box)]
    md = (reports / "summary.md").read_text()
    assert f"> **WARNING:** {warning}" in md and md.index("> **WARNING:**") < md.index("## Run summary")
