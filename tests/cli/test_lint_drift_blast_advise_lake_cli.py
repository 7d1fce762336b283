"""`clwl lint`, `clwl drift`, `clwl blast` and `clwl advise --lake` find their lake as every other command does
(clwl.cli.options LAKE_LOCATION, clwl.cli.task LakeTask.resolve_lake: a folder, or `s3://bucket/prefix`; issue
31). What they say before anything is read, without a store or Spark: a lake on an object store with no credentials in the
environment is one line and exit 2 before anything is sent; a typo of a URI (`s3:/x`, `s3//x`) or a scheme the
lake does not support (`gs://`) is one line and exit 2, and never taken for a local folder (which would make a
folder named `s3:` in the current one). The same answers from `$CLWL_LAKE` for the commands that default to it.
Their answers on a real store lake: tests/spark/test_lake_on_object_store.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from clwl.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "landing"
NO_CREDENTIALS = "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
#: Every variable that could give credentials (docs/object-storage.md, "Variables"): none is set in these tests.
CREDENTIAL_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_WEB_IDENTITY_TOKEN_FILE",
                        "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI", "CLWL_S3_INSTANCE_CREDENTIALS")

#: Each command with what it needs besides its lake (advise: real captures, a queue and a target, so that only
#: the lake can be what is refused).
COMMANDS = {
    "lint": ["lint", "--date", "2026-11-20"],
    "drift": ["drift", "--date", "2026-11-20"],
    "blast": ["blast", "--date", "2026-11-20"],
    "advise": ["advise", "--mqsc", str(SAMPLES / "2026-11-20" / "QM1"), "--queue", "APP.ORDERS",
               "--target", "QM1=20,QM2=50,QM3=30", "--date", "2026-11-20"],
}

#: (how the lake is named, what the one line says)
LAKES = [
    (["--lake", "s3://bucket/lake"], {}, NO_CREDENTIALS),
    (["--lake", "s3://bucket/lake"], {"AWS_ACCESS_KEY_ID": "k"}, "AWS_SECRET_ACCESS_KEY is not set"),
    (["--lake", "s3:/x"], {}, "s3:/x: not a lake location; did you mean s3://x?"),
    (["--lake", "s3//bucket/lake"], {}, "not a lake location; did you mean s3://bucket/lake?"),
    (["--lake", "gs://b/p"], {}, "the scheme gs:// is not supported for a lake"),
    (["--lake", "s3://Bad_Bucket/lake"], {}, "'Bad_Bucket' is not a valid bucket name"),
]
#: $CLWL_LAKE in place of --lake (advise reads a lake only when --lake names one).
DEFAULT_LAKES = [
    ({"CLWL_LAKE": "s3://bucket/lake"}, NO_CREDENTIALS),
    ({"CLWL_LAKE": "s3:/x"}, "s3:/x: not a lake location; did you mean s3://x?"),
]


def _refused(argv: list[str], env: dict[str, str], tmp_path: Path, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLWL_LAKE", raising=False)
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as e:  # argparse refuses a malformed --lake itself: its usage, then the one error line
        code = e.code
    out, err = capsys.readouterr()
    assert out == "", out
    assert list(tmp_path.iterdir()) == []  # no folder named s3: (or anything else) was made
    return code, err


def _own_lines(err: str) -> list[str]:
    """stderr's lines, argparse's usage lines (before its error line) left out."""
    return [line for line in err.splitlines() if not line.startswith(("usage:", " "))]


@pytest.mark.parametrize("lake, env, says", LAKES, ids=[f"{a[1]}{'+' + ','.join(e) if e else ''}" for a, e, _ in LAKES])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_store_lake_without_credentials_or_a_typo_is_one_line_and_exit_2(command, lake, env, says, tmp_path,
                                                                            monkeypatch, capsys):
    code, err = _refused([*COMMANDS[command], *lake], env, tmp_path, monkeypatch, capsys)
    lines = _own_lines(err)
    assert code == 2 and len(lines) == 1 and says in lines[0], err
    assert lines[0].startswith((f"clwl {command}: ", "clwl: error: ", f"clwl {command}: error: ")), err
    assert "Traceback" not in err


@pytest.mark.parametrize("env, says", DEFAULT_LAKES, ids=[e["CLWL_LAKE"] for e, _ in DEFAULT_LAKES])
@pytest.mark.parametrize("command", ["lint", "drift", "blast"])
def test_the_same_from_clwl_lake(command, env, says, tmp_path, monkeypatch, capsys):
    code, err = _refused(COMMANDS[command], env, tmp_path, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"clwl {command}: ") and says in err, err


def test_advise_reads_no_lake_unless_named(tmp_path, monkeypatch, capsys):
    """`$CLWL_LAKE` names no lake for advise (docs/cli-contract.md: it reads one only when --lake is given): with
    a broken one set and neither --lake nor --date, the advice is given and nothing is sent anywhere."""
    monkeypatch.chdir(tmp_path)
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLWL_LAKE", "s3://bucket/lake")
    argv = [a for a in COMMANDS["advise"] if a not in ("--date", "2026-11-20")]
    assert main(argv) == 0
    assert "Proposed CLWLWGHT" in capsys.readouterr().out
