"""A ``cmd:`` engine on Hugging Face ``tokenizers`` that encodes and decodes with the decode
settings of the protocol (``skip_special``, ``clean_up_spaces``, ``spaces_between_specials``),
with at most one bug on request. Written from the protocol and bug descriptions only.

    python3 decode_settings_blind.py TOKENIZER_JSON [--bug NAME]

Ops (one JSON request per line on stdin, one reply per line on stdout, in order):
``encode`` (``add_special`` -> ``add_special_tokens``, ``encode_special_tokens = not
parse_special``) and ``decode``:

- ``skip_special``: true leaves the special tokens (the added tokens marked ``"special": true`` in
  the tokenizer.json) out of the text, false writes them as their text.
- ``clean_up_spaces``: true applies transformers' ``clean_up_tokenization`` to the decoded text
  (`` .``->``.``, `` ?``->``?``, `` !``->``!``, `` ,``->``,``, `` ' ``->``'``, `` n't``->``n't``,
  `` 'm``->``'m``, `` 's``->``'s``, `` 've``->``'ve``, `` 're``->``'re``, in this order, each
  replaced everywhere); false or absent: no clean-up (what tokenizers' decode gives).
- ``spaces_between_specials``: true decodes as vLLM's ``spaces_between_special_tokens=True``: a
  special token being skipped is dropped and parts nothing; every added token (special or not)
  is decoded alone as its own part, each maximal run of other ids is decoded together as one
  part, and the parts are joined with one space. Clean-up (if asked) comes after the join.

``stream`` and ``pieces`` are answered ``{"error": "unsupported op"}`` with no ``status`` (not
tried). Any other request gets an error reply; a bad request never ends the engine.

The bugs (each alone; with no ``--bug`` every op is meant to be right):

``writes-specials``       decode: special tokens written as their text even when skip_special
                          is true (in the spaced decode too: they stay as parts).
``never-cleans``          decode: never cleans up, even when clean_up_spaces is true.
``always-cleans``         decode: always cleans up, even when clean_up_spaces is false or absent.
``no-spacing``            decode: spaces_between_specials ignored (parts never spaced apart).
``spaces-specials-only``  decode with spaces_between_specials: only the special added tokens are
                          parts of their own; non-special added tokens stay inside the runs.
"""

from __future__ import annotations

import argparse
import json
import sys

from tokenizers import Tokenizer

BUGS = ("writes-specials", "never-cleans", "always-cleans", "no-spacing", "spaces-specials-only")

# transformers' PreTrainedTokenizerBase.clean_up_tokenization, in its order.
CLEAN_UP = (
    (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
    (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
)


class BadRequest(Exception):
    """A request this engine cannot read (a missing or ill-typed field)."""


def clean_up(text: str) -> str:
    for old, new in CLEAN_UP:
        text = text.replace(old, new)
    return text


def flag(req: dict, key: str, default: bool | None = None) -> bool | None:
    """A boolean field of the request: ``default`` when absent, an error when not a boolean."""
    if key not in req or (req[key] is None and default is not None):
        return default
    value = req[key]
    if not isinstance(value, bool):
        raise BadRequest(f"{key} must be true or false, not {value!r}")
    return value


def id_list(req: dict) -> list[int]:
    ids = req.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise BadRequest(f"ids must be a list of integers, not {ids!r}")
    return ids


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            added = json.load(f).get("added_tokens") or []
        # Every entry of "added_tokens" is an added token; those marked special are the specials.
        self.added = {int(t["id"]) for t in added}
        self.specials = {int(t["id"]) for t in added if t.get("special")}

    # --- the ops ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def decode(self, ids: list[int], skip_special: bool, clean: bool | None, spaced: bool) -> str:
        if self.bug == "writes-specials":
            skip_special = False
        if self.bug == "no-spacing":
            spaced = False
        if self.bug == "never-cleans":
            clean = False
        elif self.bug == "always-cleans":
            clean = True
        if any(i < 0 for i in ids):
            raise BadRequest(f"negative id in {ids!r}")
        text = self.spaced(ids, skip_special) if spaced else self.tok.decode(ids, skip_special_tokens=skip_special)
        return clean_up(text) if clean else text

    def spaced(self, ids: list[int], skip_special: bool) -> str:
        """vLLM's detokenization with ``spaces_between_special_tokens=True``: the added tokens
        each alone, the runs of other ids between them together, joined with one space."""
        apart = self.specials if self.bug == "spaces-specials-only" else self.added
        parts: list[str] = []
        run: list[int] = []
        for i in ids:
            if skip_special and i in self.specials:
                continue                        # left out, and the run goes on across it
            if i in apart:
                if run:
                    parts.append(self.tok.decode(run, skip_special_tokens=skip_special))
                    run = []
                parts.append(self.tok.decode([i], skip_special_tokens=False))
            else:
                run.append(i)
        if run:
            parts.append(self.tok.decode(run, skip_special_tokens=skip_special))
        return " ".join(parts)

    def handle(self, req: dict) -> dict:
        op = req.get("op")
        if op == "encode":
            text = req.get("text")
            if not isinstance(text, str):
                raise BadRequest(f"text must be a string, not {text!r}")
            return {"ids": self.encode(text, flag(req, "add_special", False), flag(req, "parse_special", False))}
        if op == "decode":
            ids = id_list(req)
            return {"text": self.decode(ids, flag(req, "skip_special", False), flag(req, "clean_up_spaces"),
                                        flag(req, "spaces_between_specials", False))}
        if op in ("stream", "pieces"):
            return {"error": "unsupported op"}
        return {"error": f"unknown op {op!r}"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_json")
    parser.add_argument("--bug", choices=BUGS)
    args = parser.parse_args()
    engine = Engine(args.tokenizer_json, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise BadRequest(f"a request must be a JSON object, not {line.strip()[:80]!r}")
            reply = {"id": req.get("id"), **engine.handle(req)}
        except Exception as exc:               # one bad request must not end the engine
            reply = {"id": req.get("id") if isinstance(req, dict) else None, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
