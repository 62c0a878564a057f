"""``python -m tokparity`` is the ``tokparity`` command."""

from tokparity.cli import command

raise SystemExit(command())
