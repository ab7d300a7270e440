"""Command line: ``robustbnn bench | report | reproduce | check | models | datasets``.

``main(argv) -> int`` is the only place that seeds global RNGs or picks a device. One module
per command (:mod:`~robustbnn.cli.bench`, :mod:`~robustbnn.cli.report`,
:mod:`~robustbnn.cli.reproduce`, :mod:`~robustbnn.cli.check`,
:mod:`~robustbnn.cli.listing`); the parser is :mod:`~robustbnn.cli.parser`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator

from robustbnn.cli.parser import build_parser
from robustbnn.errors import UserError
from robustbnn.plugins import load_plugins

__all__ = ["Terminated", "main"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: the run stops, its workers are killed, finished cells
    are kept."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM raises :class:`Terminated` (unless someone else, such
    as an embedding program, already handles SIGTERM, or this is not the main thread)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return
    signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _one_line(err: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(err).split()) or type(err).__name__


def _run(args: argparse.Namespace, argv: list[str]) -> int:
    """Run the parsed command; return its exit code."""
    if args.command == "bench":
        from robustbnn.cli.bench import cmd_bench

        return cmd_bench(args, argv)
    if args.command == "report":
        from robustbnn.cli.report import cmd_report

        return cmd_report(args)
    if args.command == "reproduce":
        from robustbnn.cli.reproduce import cmd_reproduce

        return cmd_reproduce(args, argv)
    if args.command == "check":
        from robustbnn.cli.check import cmd_check

        return cmd_check(args)
    from robustbnn.cli.listing import cmd_datasets, cmd_models

    return cmd_models(args) if args.command == "models" else cmd_datasets(args)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    0: done; 1: a failure while working (a failed cell or contract clause, diverged training,
    missing data, a regression beyond tolerance, an OS error); 2: a bad input value (a flag,
    a setting, a name, a path), refused before any work as argparse refuses its usage
    errors; 130: interrupted (Ctrl-C); 143: terminated (SIGTERM, handled as Ctrl-C: the
    workers are stopped, finished cells kept). Errors are one line, with a traceback only under
    ``--debug``; an interruption prints one line too.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    # Our progress at INFO; other libraries' only from WARNING (matplotlib's "generated new
    # fontManager" on a fresh home is not ours to print).
    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr,
                        force=True)
    logging.getLogger("robustbnn").setLevel(logging.WARNING if args.quiet else logging.INFO)
    try:
        with _sigterm_as_interrupt():
            if hasattr(args, "plugin"):  # report reads result files alone and has no --plugin
                load_plugins(args.plugin)
            return _run(args, argv)
    except UserError as err:
        if args.debug:
            raise
        sys.stderr.write(f"robustbnn: error: {_one_line(err)}\n")
        return err.exit_code
    except OSError as err:  # a full disk, a folder removed or made read-only mid-run
        if args.debug:
            raise
        where = f": {err.filename}" if err.filename else ""
        sys.stderr.write(f"robustbnn: error: {err.strerror or _one_line(err)}{where}; check "
                         "the path, its permissions and the free space (--debug shows the "
                         "traceback)\n")
        return 1
    except KeyboardInterrupt as err:
        how, code = ("terminated (SIGTERM)", 143) if isinstance(err, Terminated) else (
            "interrupted", 130)
        sys.stderr.write(f"robustbnn: {how}; every finished cell is kept, so rerunning "
                         "the same command resumes\n")
        return code
