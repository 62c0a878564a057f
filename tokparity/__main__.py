"""``python -m tokparity`` is the ``tokparity`` command."""

from tokparity.start import command

raise SystemExit(command())
