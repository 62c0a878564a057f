"""The ``tokparity`` command's entry point (and ``python -m tokparity``'s). Ctrl-C while Python
loads the command is one line and exit 130, not a traceback of the import it cut."""

from __future__ import annotations

import sys


def command() -> int:
    try:
        from tokparity.cli import command as run
    except KeyboardInterrupt:
        print("tokparity: interrupted", file=sys.stderr)
        return 130
    return run()
