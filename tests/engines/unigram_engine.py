"""A unigram (SentencePiece) engine with a planted bug, for fuzzing against a unigram model
(``cmd:`` protocol).

It runs SentencePiece on a copy of the model's ``.model`` whose normalizer a buggy converter
could have written:

* ``--bug keep-whitespace``: ``remove_extra_whitespaces`` is lost, so runs of spaces and leading
  or trailing spaces are kept instead of collapsed (the T5 slow/fast bug, tokenizers #1250).
* ``--bug no-nfkc``: the precompiled NFKC charsmap is lost (``identity`` normalizer), so ``ﬁ``,
  ``½`` or full-width ``Ａ`` are tokenized as they are.
* ``--bug crash-astral``: the model as it is, but the engine dies (SIGABRT) on any character
  beyond the Basic Multilingual Plane, as a UTF-16 engine that mishandles surrogate pairs might.
* ``--bug none``: the model as it is (a correct engine, for checking that fuzz finds nothing).

    python unigram_engine.py SPM_MODEL --bug keep-whitespace
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2


def planted(model: bytes, bug: str) -> bytes:
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model)
    if bug == "keep-whitespace":
        proto.normalizer_spec.remove_extra_whitespaces = False
    elif bug == "no-nfkc":
        proto.normalizer_spec.name = "identity"
        proto.normalizer_spec.precompiled_charsmap = b""
    elif bug not in ("none", "crash-astral"):
        raise SystemExit(f"unknown bug {bug!r}")
    return proto.SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("spm_model")
    parser.add_argument("--bug", default="keep-whitespace",
                        choices=("keep-whitespace", "no-nfkc", "crash-astral", "none"))
    args = parser.parse_args()
    with open(args.spm_model, "rb") as f:
        sp = spm.SentencePieceProcessor(model_proto=planted(f.read(), args.bug))
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "encode":
            if args.bug == "crash-astral" and any(ord(c) > 0xFFFF for c in req["text"]):
                os.abort()
            ids = sp.encode(req["text"])
            if req.get("add_special") and sp.bos_id() >= 0:
                ids = [sp.bos_id()] + ids
            reply = {"id": req["id"], "ids": ids}
        else:
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
