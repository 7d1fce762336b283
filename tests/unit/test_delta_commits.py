"""The commit files this project writes itself (spark/delta_commits.py) are put-if-absent: a version another
writer committed first is never replaced, and no temporary file is left behind either way."""

from __future__ import annotations

import json

from spark.delta_commits import write_commit


def test_a_commit_never_replaces_one_already_there(tmp_path):
    table = tmp_path / "t"
    first = [{"commitInfo": {"operation": "CREATE TABLE"}}, {"protocol": {"minReaderVersion": 1}}]
    assert write_commit(table, 0, first)
    assert not write_commit(table, 0, [{"commitInfo": {"operation": "WRITE"}}])  # another writer was first
    log = table / "_delta_log"
    assert [json.loads(line) for line in (log / "00000000000000000000.json").read_text().splitlines()] == first
    assert write_commit(table, 0, {"txnId": "x", "numFiles": 0}, suffix="crc")  # a checksum: one JSON object
    assert json.loads((log / "00000000000000000000.crc").read_text()) == {"txnId": "x", "numFiles": 0}
    assert sorted(p.name for p in log.iterdir()) == ["00000000000000000000.crc", "00000000000000000000.json"]
