"""A lake named as an object-store URI (issue 31): the commands take it, and never as a folder name (`clwl run
--lake s3://bucket/lake` used to exit 0 after writing a local folder called `s3:`); without credentials in the
environment it is one line with exit 2 before anything is sent, and a typo of a URI is named as one. No Spark
starts."""

from __future__ import annotations

import pytest

from clwl.cli import main

# A well-formed message id: explain refuses a malformed one before it looks at the lake.
ID = "414D5120514D3120202020202020202000000000000000AB"

NO_CREDENTIALS = "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"


@pytest.mark.parametrize("argv, env, says", [
    (["run", "--lake", "s3://bucket/lake"], {}, NO_CREDENTIALS),
    (["ingest", "--lake", "s3://bucket/lake"], {}, NO_CREDENTIALS),
    (["run"], {"CLWL_LAKE": "s3://bucket/lake"}, NO_CREDENTIALS),
    (["query", "select 1", "--lake", "s3://bucket/lake"], {}, NO_CREDENTIALS),
    (["explain", ID], {"CLWL_LAKE": "s3://bucket/lake"}, NO_CREDENTIALS),
    (["published"], {"AWS_ACCESS_KEY_ID": "k"}, "AWS_SECRET_ACCESS_KEY is not set"),
    (["run", "--lake", "gs://bucket/lake"], {}, "the scheme gs:// is not supported for a lake"),
    (["query", "select 1"], {"CLWL_LAKE": "s3:/bucket"}, "s3:/bucket: not a lake location; did you mean s3://bucket?"),
    (["explain", ID, "--lake", "s3//bucket"], {}, "not a lake location"),
])
def test_an_object_store_lake_is_one_line_and_exit_2(argv, env, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLWL_LAKE", raising=False)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "CLWL_S3_INSTANCE_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    if argv[0] == "published":
        monkeypatch.setenv("CLWL_LAKE", "s3://bucket/lake")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    if "--landing" not in argv and argv[0] in ("run", "ingest"):
        argv = [*argv, "--landing", str(tmp_path)]
    try:
        code = main(argv)
    except SystemExit as e:  # a bad --lake is refused while the arguments are read
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and says in err, err
    assert len(err.splitlines()) == 1 and err.startswith(f"clwl {argv[0]}: "), err  # no usage block before it
    assert list(tmp_path.iterdir()) == []  # no folder named s3: (or anything else) was made


@pytest.mark.parametrize("command", [["query", "SELECT 1"], ["published"], ["explain", ID],
                                     ["lint", "--date", "2026-11-20"], ["drift", "--date", "2026-11-20"],
                                     ["blast", "--date", "2026-11-20"], ["run"], ["ingest"]])
@pytest.mark.parametrize("lake, says", [
    ("s3://clwl:s3cr3t-pw@clwl-bucket/lake", "s3://***@clwl-bucket/lake: a lake location carries no credentials"),
    ("s3:/clwl:s3cr3t-pw@clwl-bucket", "s3:/***@clwl-bucket: a lake location carries no credentials"),
    ("s3//clwl-bucket/lake", "s3//clwl-bucket/lake: not a lake location; did you mean s3://clwl-bucket/lake?"),
    ("", "an empty lake location"),  # not the working folder
], ids=["credentials", "credentials in a typo", "typo", "empty"])
def test_a_bad_lake_is_one_line_without_its_credentials(command, lake, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--lake", lake])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith(f"clwl {command[0]}: {says}"), err
    assert len(err.splitlines()) == 1 and "s3cr3t" not in err and "clwl:" not in err.split(": ", 1)[1], err
    assert list(tmp_path.iterdir()) == []


def test_credentials_in_clwl_lake_are_not_echoed(monkeypatch, capsys):
    monkeypatch.setenv("CLWL_LAKE", "s3://clwl:s3cr3t-pw@clwl-bucket/lake")
    assert main(["published"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "s3cr3t" not in err and "***@clwl-bucket" in err, err
