r"""A byte-level BPE engine with a planted bug, for fuzzing against llama-bpe (``cmd:`` protocol).

It runs Hugging Face ``tokenizers`` on a copy of the model's tokenizer.json that a buggy converter
could have written:

* ``--bug digits``: the split regex takes digit runs whole (``\p{N}+``) instead of in groups of at
  most three (``\p{N}{1,3}``), so ``"1234"`` is one pre-token merged into ``["12", "34"]`` where
  Llama 3 gives ``["123", "4"]`` (the Falcon digits bug, llama.cpp #3502).
* ``--bug contractions``: the contractions lose their case-insensitive flag (GPT-2's ``'s|'t|…``
  instead of Llama 3's ``(?i:'s|'t|…)``), so ``"'Sa"`` splits differently.
* ``--bug no-pretokenizer``: the split regex is lost and only the byte-level mapping is left, so
  merges run across word and number boundaries (the missing pre-tokenizer of llama.cpp #7476).
* ``--bug none``: the tokenizer.json as it is (a correct engine, for checking that fuzz finds nothing).

    python bpe_engine.py TOKENIZER_JSON --bug digits
"""

from __future__ import annotations

import argparse
import json
import sys

from tokenizers import Tokenizer


def _edit_regex(config: dict, old: str, new: str) -> None:
    split = config["pre_tokenizer"]["pretokenizers"][0]
    regex = split["pattern"]["Regex"]
    if old not in regex:
        raise SystemExit(f"the split regex has no {old!r}: {regex!r}")
    split["pattern"]["Regex"] = regex.replace(old, new)


def planted(config: dict, bug: str) -> dict:
    if bug == "digits":
        _edit_regex(config, "\\p{N}{1,3}", "\\p{N}+")
    elif bug == "contractions":
        _edit_regex(config, "(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'s|'t|'re|'ve|'m|'ll|'d")
    elif bug == "no-pretokenizer":
        config["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                   "use_regex": False}
    elif bug != "none":
        raise SystemExit(f"unknown bug {bug!r}")
    return config


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_json")
    parser.add_argument("--bug", default="digits", choices=("digits", "contractions", "no-pretokenizer", "none"))
    args = parser.parse_args()
    with open(args.tokenizer_json, encoding="utf-8") as f:
        config = planted(json.load(f), args.bug)
    tok = Tokenizer.from_str(json.dumps(config))
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "encode":
            # tokenizers always matches added tokens in the text unless told to encode them as text.
            tok.encode_special_tokens = not req.get("parse_special", False)
            reply = {"id": req["id"], "ids": tok.encode(req["text"], add_special_tokens=False).ids}
        else:
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
