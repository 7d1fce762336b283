"""The commands that read a lake without a JVM (``lint``, ``drift``, ``advise``, ``blast``, ``explain``,
``published``, ``query``) as tasks, the shape of dbt-core's ``BaseTask``: one runner, :meth:`LakeTask.main`, does
what they all do alike (docs/cli-contract.md, "Commands that read a lake without a JVM: shared conventions"), and a
command's module is a :class:`LakeTask` with its one compute call and its printing.

The runner, the same steps for every command:

1. :meth:`~LakeTask.check`: the arguments alone, before anything is read (a mistyped message id, options that do
   not go together);
2. :meth:`~LakeTask.resolve`: the lake (:meth:`~LakeTask.resolve_lake`: ``--lake``, else ``$CLWL_LAKE``, else
   ``./lake``; a folder or ``s3://bucket/prefix``, the pipeline extra's readers installed, something there) and the
   run date (:meth:`~LakeTask.resolve_date`);
3. :meth:`~LakeTask.compute`: the work, one call into clwl/analyses or clwl/lake;
4. :meth:`~LakeTask.render`: the answer on stdout, :meth:`~LakeTask.render_json` with ``--json``, else
   :meth:`~LakeTask.render_text`.

A :class:`TaskError` raised in steps 1 to 3 (or an error class the task names in :meth:`~LakeTask.failures`, or a
LakeFileError: a damaged table, a store out of reach, a typo of a URI) is one line on stderr, ``clwl <command>:
<why>``, escaped (clwl.terminal.say), and exit 2; a finished task exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, ClassVar

from clwl.cli.exit_codes import EXIT_INPUT, EXIT_OK
from clwl.cli.extras import LAKE_READERS, missing_extra_reason
from clwl.terminal import say


class TaskError(Exception):
    """Input a lake-reading command cannot use; ``str()`` is the one line the runner prints after ``clwl
    <command>: `` before it exits 2."""


class LakeTask:
    """One run of a lake-reading command on its parsed arguments. A command sets :attr:`command`, writes
    :meth:`compute` and its printing, and registers ``set_defaults(func=Its.main)``; it overrides the other steps
    only where it differs (a lake it may not need, a date it requires, a lake it looks at otherwise)."""

    #: The command's name, as typed after ``clwl`` and as its one-line errors begin.
    command: ClassVar[str] = ""
    #: The modules of the pipeline extra it reads the lake with: checked before anything is imported.
    readers: ClassVar[tuple[str, ...]] = LAKE_READERS
    #: The line when ``--date`` is missing and the command cannot do without it (None: the date is optional).
    date_required: ClassVar[str | None] = None
    #: ``--json``'s indentation (None: one line).
    json_indent: ClassVar[int | None] = None

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.lake: Any = None  # the clwl.lake.door.Lake once resolved, handed to compute (None: no lake read)
        self.date: Any = None  # the run date (a clwl.days.RunDate) once resolved, when the command has one

    @classmethod
    def main(cls, args: argparse.Namespace) -> int:
        """The argparse handler (``set_defaults(func=Task.main)``): the exit code."""
        return cls(args).run()

    def run(self) -> int:
        from clwl.lake.lake_files import LakeFileError

        try:
            self.check()
            self.resolve()
            result = self.compute()
        except (TaskError, LakeFileError, *self.failures()) as e:
            say(f"clwl {self.command}: {e}", sys.stderr)
            return EXIT_INPUT
        self.render(result)
        return EXIT_OK

    # -- the steps ------------------------------------------------------------------------------------------
    def failures(self) -> tuple[type[BaseException], ...]:
        """The compute's own error classes whose ``str()`` is one line for the user (imported here, when one
        was raised: the command line loads no analysis before it runs)."""
        return ()

    def check(self) -> None:
        """The arguments alone, before the lake is looked at: TaskError when they cannot be used."""

    def reads_lake(self) -> bool:
        """Whether this run reads a lake (``lint --mqsc`` reads captures; ``advise`` a lake only when named)."""
        return True

    def resolve(self) -> None:
        """The lake (its door built here, once: compute hands it down), then the run date."""
        if self.reads_lake():
            self.lake = self.resolve_lake()
        self.date = self.resolve_date()

    def resolve_lake(self) -> Any:
        """The lake this run reads (``--lake``; else $CLWL_LAKE, else ./lake), a clwl.lake.door.Lake (at a Path
        or a clwl.lake.storage.LakeLocation). TaskError when :attr:`readers` are not installed or nothing is there;
        StorageError (a LakeFileError) for a typo in $CLWL_LAKE, missing S3 credentials, a folder that cannot be
        looked at."""
        from clwl.lake.storage import store_for

        self.require(self.readers)
        lake = self.given_lake()
        store = store_for(lake.root)
        store.storage_options()  # an object store's credentials and endpoint: one line before anything is sent
        # Locally a name too long, a folder on the way not searchable: one line too.
        if not store.is_folder(lake.root):
            raise TaskError(f"no lake at {lake} (name it with --lake or $CLWL_LAKE)")
        return lake

    def resolve_date(self) -> Any:
        """``--date`` (None when the command has none or it was not given); TaskError(:attr:`date_required`)
        when it must be given."""
        date = getattr(self.args, "date", None)
        if date is None and self.date_required:
            raise TaskError(self.date_required)
        return date

    def compute(self) -> Any:
        """The work: the answer :meth:`render` prints."""
        raise NotImplementedError

    def render(self, result: Any) -> None:
        if getattr(self.args, "json", False):
            self.render_json(result)
        else:
            self.render_text(result)

    def render_json(self, result: Any) -> None:
        """One JSON document on stdout (JSON writes control characters as \\u escapes)."""
        sys.stdout.write(json.dumps(self.json_document(result), indent=self.json_indent) + "\n")

    def json_document(self, result: Any) -> Any:
        raise NotImplementedError

    def render_text(self, result: Any) -> None:
        raise NotImplementedError

    # -- what the steps use ---------------------------------------------------------------------------------
    def require(self, modules: tuple[str, ...]) -> None:
        """TaskError naming the extra to install when one of ``modules`` cannot be imported."""
        reason = missing_extra_reason(modules)
        if reason:
            raise TaskError(reason)

    def given_lake(self) -> Any:
        """The lake at ``--lake``, else at the one reading of $CLWL_LAKE (StorageError for a typo of a URI), else
        at ./lake: its door, built here once for the whole run."""
        from clwl.lake.door import Lake, default_lake_location

        return Lake(self.args.lake if self.args.lake is not None else default_lake_location())
