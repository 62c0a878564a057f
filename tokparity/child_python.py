"""How tokparity starts Python in a child process: with ``-P``, the current folder never on its path.

``python -m MODULE`` and ``python -c CODE`` put the current folder first on ``sys.path``. A model
repository holding a ``json.py``, ``jinja2.py`` or ``tokenizers.py`` would then run inside every
child started there, the template sandbox included. ``-P`` (Python 3.11) leaves that folder off.
A child finds tokparity itself through its environment (``backends.isolated.child_env``).
"""

from __future__ import annotations

import os
import signal
import sys


def python_argv(*args: str, python: str | None = None) -> list[str]:
    """The command line of a child Python (``python``: another interpreter, this one's by default).

    >>> python_argv("-m", "venv", "env", python="/usr/bin/python3")
    ['/usr/bin/python3', '-P', '-m', 'venv', 'env']
    """
    return [python or sys.executable, "-P", *args]


def die_with_parent(parent: int) -> None:
    """In a child: ask Linux for SIGTERM when ``parent`` dies, however it dies, SIGKILL included
    (``PR_SET_PDEATHSIG``). A child whose parent died before it asked exits at once."""
    if _parent_death_signal(signal.SIGTERM) and os.getppid() != parent:
        raise SystemExit(0)


def killed_with_parent() -> None:
    """As a ``preexec_fn``: the program started (not Python: pip, a build) gets SIGKILL when the
    process that started it dies, however it dies."""
    _parent_death_signal(signal.SIGKILL)


def _parent_death_signal(signum: int) -> bool:
    """``PR_SET_PDEATHSIG``; False where the system has no such call (not Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signum), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: a lost parent shows as a closed pipe
        return False
    return True
