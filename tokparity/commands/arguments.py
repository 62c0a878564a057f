"""Argument types the subcommands share.

    p.add_argument("--timeout", type=positive_seconds)     # 0.5, 10, 3600: yes; 0, -1, nan, inf, 1e7: no
    check_seconds("--timeout", args.timeout)               # the same, as a one-line TokparityError

``check_seconds`` also takes a value that comes from elsewhere (a resumed run's journal).
"""

from __future__ import annotations

import argparse

from tokparity.errors import TokparityError

MAX_SECONDS = 86400.0  # a day: longer is a typo, and poll() and friends overflow on inf or 1e7 s


def _seconds_problem(value: object) -> str | None:
    """Why ``value`` is no number of seconds a run can wait, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "must be a number of seconds above 0"
    if not value > 0:  # (nan too)
        return "must be a number of seconds above 0"
    if not value <= MAX_SECONDS:
        return f"must be a number of seconds above 0 and at most {MAX_SECONDS:g} (a day)"
    return None


def positive_seconds(text: str) -> float:
    """An argparse ``type``: seconds, finite, above 0, at most ``MAX_SECONDS``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    problem = _seconds_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(f"{problem}, not {text!r}")
    return value


def check_seconds(flag: str, value: object) -> float:
    """``value`` for ``flag`` (e.g. taken from a journal), or a ``TokparityError`` saying why not."""
    problem = _seconds_problem(value)
    if problem:
        raise TokparityError(f"{flag} {problem}, not {value}")
    return float(value)  # type: ignore[arg-type]  # (a number: _seconds_problem said so)
