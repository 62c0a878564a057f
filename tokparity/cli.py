"""The ``tokparity`` command line.

Each subcommand lives in ``tokparity/commands/<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``; this module only wires them and turns errors into exit statuses:
0 all agree, 1 a mismatch to review, 2 bad usage or bad input (one line on stderr).

SIGTERM (what ``timeout``, ``docker stop``, CI cancellation and systemd send) is taken as Ctrl-C
is: the cases judged so far are reported and journaled, engines are stopped, and the exit status
is 143 (128 + SIGTERM), as a shell reports a process that SIGTERM ended.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from contextlib import AbstractContextManager, nullcontext
from types import FrameType
from typing import Any

from tokparity import __version__
from tokparity.backends.orphans import ALWAYS_STOPPING, STOP_SIGNALS, adopting_orphans
from tokparity.commands.arguments import OneLineParser
from tokparity.errors import TokparityError
from tokparity.stops import forget_stops, interrupt, stop_taken_lately, take_stop, unraisable_hook
from tokparity.textview import clipped, single_line

# Subcommand modules under tokparity/commands/, in the order --help lists them.
COMMANDS = ("zoo", "inspect", "check", "encode", "compare", "drift", "fuzz", "explain", "regress", "convert")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="tokparity",
        description="Prove that tokenizer implementations agree; when they do not, show where, how and why.",
    )
    parser.add_argument("--version", action="version", version=f"tokparity {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"tokparity.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"tokparity.commands.{name}":
                continue  # a subcommand still being written is simply not offered
            raise
        module.add_parser(sub)
    return parser


TERMINATED = 128 + signal.SIGTERM  # the exit status after a SIGTERM
# The signals besides Ctrl-C that end a run as Ctrl-C does: the reports written, every child stopped.
# Python's own defaults end it at once (SIGHUP) or dump core (SIGQUIT), leaving its children running.
STOPPING = tuple(signum for signum in STOP_SIGNALS if signum != signal.SIGINT)


class _Terminate:
    """The handler of the ``STOPPING`` signals: it does what Ctrl-C does, through whatever SIGINT
    handler is in place (a run's journal defers Ctrl-C until the case being written is whole:
    tokparity/run/journal/interrupt.py). A signal soon after a stop was taken is ignored there too."""

    def __init__(self) -> None:
        self.received: int | None = None  # the signal, once one came

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if stop_taken_lately():
            return
        self.received = signum
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job of a script): stop all the same
            take_stop()


def command() -> int:
    """The ``tokparity`` command (and ``python -m tokparity``): ``main`` on its own command line,
    adopting what its engines leave behind and stopping it before it ends (tokparity.backends.orphans).
    A program that calls ``main`` keeps its children its own."""
    return main(adopt=True)


def main(argv: list[str] | None = None, adopt: bool = False) -> int:
    streams = sys.stdout, sys.stderr
    # (a stream closed before the start, `>&-`, is None in Python: what would go there is dropped.
    # A standard error that cannot be written never stops a run: it holds progress and notes only)
    sys.stdout = ReaderGone(sys.stdout or open(os.devnull, "w"))  # type: ignore[assignment]
    sys.stderr = ReaderGone(sys.stderr or open(os.devnull, "w"), every_error=True)  # type: ignore[assignment]
    try:
        return _stopping(argv, adopt)
    finally:
        sys.stdout, sys.stderr = streams


def _stopping(argv: list[str] | None, adopt: bool) -> int:
    terminate = _Terminate()
    installed = threading.current_thread() is threading.main_thread()  # (signals are the main thread's)
    # (the seven first always; each other one only where nothing handles it yet: a profiler's SIGPROF stays its own)
    forget_stops()
    previous: dict[int, Any] = {}
    unraisable = sys.unraisablehook
    stopped: list[str] = []
    try:  # (a stop may come while the handlers are put in place: handled as any other)
        for signum in STOPPING if installed else ():
            if signum in ALWAYS_STOPPING or signal.getsignal(signum) == signal.SIG_DFL:
                previous[signum] = signal.signal(signum, terminate)
        if installed and signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # (Python's, once per stop)
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, interrupt)
        sys.unraisablehook = unraisable_hook(unraisable)
        adopting: AbstractContextManager[list[str]] = adopting_orphans() if adopt else nullcontext([])
        with adopting as stopped:
            code = _main(argv)
    except (KeyboardInterrupt, Exception) as e:
        # (a stop while the command starts, before its own handling: one line, no traceback. A stop
        # inside a library's import becomes that library's error, numpy's "its source directory":
        # soon after a stop, any error is the stop's)
        if not isinstance(e, KeyboardInterrupt) and not stop_taken_lately():
            raise
        print("tokparity: interrupted", file=sys.stderr)
        code = 130
    finally:
        # (the command ends now: a later signal of the same stop, within its 30 s, must not change
        # its exit status, so it is ignored; a program that called main gets its handlers back)
        ending = adopt and stop_taken_lately()
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_IGN if ending else handler)
        sys.unraisablehook = unraisable
    if stopped:
        shown = "; ".join(clipped(single_line(c), 120) for c in stopped[:3]) + ("; …" if len(stopped) > 3 else "")
        print(f"tokparity: note: stopped {len(stopped)} process(es) an engine left running, out of its process "
              f"group and without its mark: {shown}", file=sys.stderr)
    if terminate.received is not None:
        return 128 + terminate.received
    return code


class ReaderGone:
    """A standard stream whose reader may go away (``tokparity ... | head``). Once it has, what is
    written is dropped, and the run goes on: it writes its reports and exits with its verdict. A
    run that stopped there would exit 0 with no reports, and a CI step would pass a failing engine."""

    def __init__(self, stream: Any, every_error: bool = False):
        self.stream, self.gone = stream, False
        # what makes it gone: a reader that went away, or (every_error) any failure to write, a full disk too
        self.failures = OSError if every_error else BrokenPipeError

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self.stream.write(text)
            except self.failures:
                self._went()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except self.failures:
                self._went()

    def _went(self) -> None:
        self.gone = True
        try:  # (what the stream still buffers must not fail again at exit)
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _main(argv: list[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):  # (PYTHONIOENCODING=ascii: ✅ and engine texts spelled out, not a crash)
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        from tokparity.backends.process import max_crashes

        max_crashes()  # (a setting that is no number: said before any run, not as each engine's crash)
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return 2
        _refuse_empty_paths(args)
        return int(args.run(args) or 0)
    except TokparityError as e:  # (one line: a file name's newline or escape sequence is spelled out)
        print(f"tokparity: error: {single_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tokparity: interrupted", file=sys.stderr)
        return 130
    except MemoryError:  # (a file of gigabytes that no loader bounds: one line, not a traceback)
        print("tokparity: error: out of memory: a file read whole is too large for this machine (a model file, a "
              "corpus line); check the files the command names", file=sys.stderr)
        return 2
    except BrokenPipeError:  # (a pipe other than standard output and error: as a process SIGPIPE ends)
        return 128 + signal.SIGPIPE
    except OSError as e:
        if e.filename is not None:  # (a file: the commands say which and why themselves; this is a bug)
            raise
        # standard output cannot be written (a full disk, /dev/full): the reports are written already
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (no second failure at exit)
        print(f"tokparity: error: cannot write to standard output ({e.strerror or e}); the report folder holds "
              "the results", file=sys.stderr)
        return 2


# The options that name a file or folder. An empty one is an unset variable in CI: --resume '' would
# start a new run of everything, -o '' would write elsewhere, --junit '' would lose the results.
PATH_OPTIONS = {"out": "-o", "resume": "--resume", "junit": "--junit", "goldens": "--goldens", "known": "--known",
                "corpora": "-c"}  # (-c '' of an unset variable read every Parquet file under the current folder)


def _refuse_empty_paths(args: argparse.Namespace) -> None:
    for dest, option in PATH_OPTIONS.items():
        value = getattr(args, dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            raise TokparityError(f"{option} '': names nothing; give the path or name, or leave {option} out")


if __name__ == "__main__":
    sys.exit(command())
