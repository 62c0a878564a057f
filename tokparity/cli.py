"""The ``tokparity`` command line.

Each subcommand lives in ``tokparity/commands/<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``; this module only wires them and turns errors into exit statuses:
0 all agree, 1 an unexplained mismatch, 2 bad usage or bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tokparity import __version__
from tokparity.commands.arguments import OneLineParser
from tokparity.errors import TokparityError

# Subcommand modules under tokparity/commands/, in the order --help lists them.
COMMANDS = ("zoo", "inspect", "encode", "compare", "fuzz", "explain", "regress", "convert")


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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return 2
        return int(args.run(args) or 0)
    except TokparityError as e:
        print(f"tokparity: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tokparity: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `tokparity ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
