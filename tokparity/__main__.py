"""``python -m tokparity`` is the ``tokparity`` command."""

from tokparity.cli import main

raise SystemExit(main())
