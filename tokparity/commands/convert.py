"""``tokparity convert SRC --to gguf|spm|hf -o OUT``: one tokenizer file into another format.

Prints each field the target could not carry over on stderr (``warning: <field>: <why>``) and
the output path on stdout; see tokparity/convert/ for the directions and their rules.
"""

from __future__ import annotations

import argparse
import sys
from fnmatch import fnmatch
from pathlib import Path

from tokparity.convert import TARGETS, convert, supported


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="convert a tokenizer file: tokenizer.json/.model -> GGUF, GGUF -> .model, "
                                       ".model -> tokenizer.json",
                       description="Convert a tokenizer file. Supported: " + "; ".join(supported()) + ". "
                                   "Every field the target cannot hold is reported as a warning.")
    p.add_argument("src", metavar="SRC", help="a tokenizer.json, a SentencePiece .model or a .gguf")
    p.add_argument("--to", required=True, choices=TARGETS, help="target format")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    p.set_defaults(run=run)


# The name of each format's file in a model folder: the one file of it convert may replace there.
OWN_NAMES = {"gguf": "*.gguf", "hf": "tokenizer.json", "spm": "*.model"}


def run(args: argparse.Namespace) -> int:
    from tokparity.commands.compare import refuse_unsafe_output
    from tokparity.errors import TokparityError
    from tokparity.textview import shown_path, single_line
    from tokparity.zoo.model_file import READ_BESIDE, checked_model_file, files_read_with

    src = Path(args.src)
    if src.exists() and not src.is_file():  # (a FIFO would be read for ever)
        raise TokparityError(f"{shown_path(args.src)}: not a regular file; convert reads a tokenizer file")
    # What convert reads: the file, and the files beside it that its loader reads too. A model
    # folder may come from anywhere: each must be a file of that folder, no link out of it.
    beside = [str(src.with_name(name)) for name in READ_BESIDE if src.suffix == ".json" and
              (src.with_name(name).is_file() or src.with_name(name).is_symlink())]
    if src.exists():
        for path in [args.src, *beside]:
            checked_model_file(Path(path), src.parent)
    # Nor may -o name a file read beside it by another command (check reads config.json), nor
    # another file of the model's folder that a run reads, but the one this format is written as.
    own = OWN_NAMES[args.to]
    folder = [str(f) for f in files_read_with(src.parent) if not fnmatch(f.name, own)] if src.exists() else []
    refuse_unsafe_output("-o", args.output, (args.src, *beside, *map(str, files_read_with(src)), *folder))
    result = convert(args.src, args.to, args.output)
    for w in result.warnings:
        print(f"warning: {single_line(w)}", file=sys.stderr)
    print(shown_path(result.out_path))  # (a file name's escape sequence or newline spelled out)
    return 0
