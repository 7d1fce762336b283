"""A lake named as an object-store URI (issue 31): the command line refuses it in one line with exit 2 until the
Spark pipeline writes there, and never takes it as a folder name (`clwl run --lake s3://bucket/lake` used to
exit 0 after writing a local folder called `s3:`). A typo of a URI is named as one. No Spark starts."""

from __future__ import annotations

import pytest

from clwl.cli import main


@pytest.mark.parametrize("argv, env, says", [
    (["run", "--lake", "s3://bucket/lake"], {}, "a lake on object storage is not supported by this command yet"),
    (["ingest", "--lake", "s3://bucket/lake"], {}, "a lake on object storage is not supported by this command yet"),
    (["run"], {"CLWL_LAKE": "s3://bucket/lake"}, "CLWL_LAKE=s3://bucket/lake: a lake on object storage"),
    (["query", "select 1"], {"CLWL_LAKE": "s3:/bucket"}, "s3:/bucket: not a lake location; did you mean s3://bucket?"),
    (["explain", "00", "--lake", "s3//bucket"], {}, "not a lake location"),
])
def test_an_object_store_lake_is_one_line_and_exit_2(argv, env, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLWL_LAKE", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    if "--landing" not in argv and argv[0] in ("run", "ingest"):
        argv = [*argv, "--landing", str(tmp_path)]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse refuses a bad --lake itself (usage, then the one error line)
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and says in err, err
    # one line of its own (argparse's usage lines before it aside)
    assert len([line for line in err.splitlines() if not line.startswith(("usage:", " "))]) == 1, err
    assert list(tmp_path.iterdir()) == []  # no folder named s3: (or anything else) was made
