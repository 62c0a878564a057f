"""Argument types shared by the commands: numbers checked where they are read.

``float("nan")``, ``float("inf")``, ``-3`` and ``1e400`` all parse, and each one makes some loop
never end or some call overflow (``fuzz --seconds nan`` ran forever). These types accept only
values a run can use; argparse turns their ``ArgumentTypeError`` into an error that
``OneLineParser`` makes one line, ``tokparity: error: argument --seconds: …``, exit status 2.

A value a journal stores (``--resume DIR`` takes the arguments of the interrupted run) never
passes through argparse: ``checked`` applies the same type to it and raises a ``TokparityError``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from tokparity.backends.registry import known_backends
from tokparity.errors import TokparityError, UsageError

# -b's choices, for the help of every command that takes it (the registry's names, in its order)
BACKEND_NAMES = ", ".join(f"'{name}'" if ":" in name else name for name in known_backends())

WEEK = 7 * 24 * 3600.0  # longer than any run a person waits for: a larger number is a typo
DAY = 86400.0
MOST = 10**15  # a count larger than this is a typo, and would overflow what it sizes

T = TypeVar("T")


def _number(text: object, kind: type[T]) -> T:
    shown = str(text) if len(str(text)) <= 40 else str(text)[:40] + "…"
    refused = argparse.ArgumentTypeError(f"expected {'a whole number' if kind is int else 'a number'}, not {shown!r}")
    if isinstance(text, bool) or (kind is int and isinstance(text, float)):  # (from a journal: no 1.5 -> 1)
        raise refused
    try:
        return kind(text)  # type: ignore[call-arg]
    except (TypeError, ValueError, OverflowError):  # incl. an int of more digits than Python converts
        raise refused from None


def _seconds(text: object, allow_zero: bool) -> float:
    value = _number(text, float)
    least = "0 or more" if allow_zero else "more than 0"
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero) or value > WEEK:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, {least} and at most {WEEK:.0f} "
                                         f"(a week), not {text}")
    return value


def positive_seconds(text: object) -> float:
    """A time limit or budget: finite, above 0, at most a week (``nan``, ``inf``, ``0``, ``-1`` refused)."""
    return _seconds(text, allow_zero=False)


def timeout_seconds(text: object) -> float:
    """A time limit per case: as ``positive_seconds``, at most a day (``poll`` and friends
    overflow on ``inf`` or ``1e7`` s, and a case that takes a day is a hang)."""
    value = _number(text, float)
    if not (math.isfinite(value) and 0 < value <= DAY):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most {DAY:g} (a day), "
                                         f"not {text}")
    return value


def check_seconds(option: str, value: object) -> float:
    """A ``--timeout`` that did not come through argparse (a resumed run's journal)."""
    return checked(option, timeout_seconds, value)


def non_negative_seconds(text: object) -> float:
    """As ``positive_seconds``, 0 allowed (e.g. no time to shrink)."""
    return _seconds(text, allow_zero=True)


def _count(text: object, least: int) -> int:
    value = _number(text, int)
    if not least <= value <= MOST:
        raise argparse.ArgumentTypeError(f"must be a whole number from {least} to {MOST:,}, not {text}")
    return value


def positive_int(text: object) -> int:
    """A count of 1 or more (at most ``MOST``)."""
    return _count(text, 1)


def non_negative_int(text: object) -> int:
    """A count of 0 or more (at most ``MOST``), where 0 has a meaning of its own (``--max-chars 0``: no cap)."""
    return _count(text, 0)


def checked(option: str, kind: Callable[[object], T], value: object) -> T:
    """``value`` (e.g. from a journal's header) through ``kind``; a ``TokparityError`` naming
    ``option`` if it does not pass."""
    try:
        return kind(value)
    except argparse.ArgumentTypeError as e:
        raise TokparityError(f"{option} {e}") from None


class OneLineParser(argparse.ArgumentParser):
    """argparse prints its usage block before the error; tokparity's rule is one line naming the
    argument and what to do, so the error is raised and the CLI prints it as any bad input."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def fraction(text: object) -> float:
    """A probability above 0 and at most 1 (``--fraction``)."""
    value = _number(text, float)
    if not (math.isfinite(value) and 0 < value <= 1):
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most 1, not {text}")
    return value


# The corpus-reading options a journal stores with the run (tokparity.run.journal.ARG_KINDS).
CORPUS_ARG_CHECKS = {"text_column": "str?", "id_column": "str?", "sample": "count?", "fraction": "fraction?",
                     "seed": "int?"}


def add_corpus_options(p: argparse.ArgumentParser) -> None:
    """``--text-column``, ``--id-column``, ``--sample``, ``--fraction``, ``--seed``: how every ``-c`` is read."""
    p.add_argument("--text-column", metavar="NAME", help="Parquet/Arrow corpora: the column of texts (default: text)")
    p.add_argument("--id-column", metavar="NAME",
                   help="Parquet/Arrow corpora: the column of case ids (default: FILE:ROW, the row from 0)")
    p.add_argument("--sample", type=positive_int, metavar="N",
                   help="exactly N cases of each -c (all when it has fewer), chosen by seeded reservoir sampling")
    p.add_argument("--fraction", type=fraction, metavar="F",
                   help="keep each case of each -c with probability F (seeded), for a quick look at a huge corpus")
    p.add_argument("--seed", type=int, metavar="N", help="seed of --sample / --fraction (default: 0); same seed, "
                                                         "same cases")


def corpus_specs(corpora: list[str], args: argparse.Namespace) -> list[str]:
    """The ``-c`` values carrying the reading options (``tokparity.corpus.pipeline.with_options``).
    Checked here too: a resumed run's values come from its journal, not from argparse."""
    from tokparity.corpus.pipeline import ReadOptions, with_options

    sample, share = getattr(args, "sample", None), getattr(args, "fraction", None)
    if sample is not None and share is not None:
        raise TokparityError("--sample and --fraction: choose one")
    options = ReadOptions(
        text_column=getattr(args, "text_column", None) or "text", id_column=getattr(args, "id_column", None),
        sample=None if sample is None else checked("--sample", positive_int, sample),
        fraction=None if share is None else checked("--fraction", fraction, share),
        seed=checked("--seed", int_seed, getattr(args, "seed", None) or 0))
    return [with_options(spec, options) for spec in corpora]


def int_seed(value: object) -> int:
    return _number(value, int)


def model_specs(models: list[str], every: bool, command: str) -> list[str]:
    """The models a command was given: ``MODEL…``, then with ``--all`` every zoo model not named
    already; one line when there are none."""
    from tokparity.zoo import load_manifest

    specs = list(models)
    if every:
        specs += [m for m in load_manifest().models if m not in specs]
    if not specs:
        raise TokparityError(f"{command} needs a MODEL (a zoo name, a file or a folder) or --all")
    return specs
