"""SentencePiece with one field of the ``.model`` changed, as a ``cmd:`` engine (for the mutation suite).

A converter or a port that loses or flips one ``ModelProto`` field gives an engine with exactly
one bug, and SentencePiece itself then does everything else right. The flags say which field:

    --set add_dummy_prefix=false           normalizer_spec fields (add_dummy_prefix,
    --set remove_extra_whitespaces=false   remove_extra_whitespaces, escape_whitespaces)
    --set escape_whitespaces=false
    --set byte_fallback=false              trainer_spec.byte_fallback
    --identity                             the normalizer's charsmap dropped (name "identity")
    --unicode NFKC|NFC|NFD                 Python's unicodedata applied to the text first (with
                                           --identity: NFKC in place of the model's charsmap)

With no flag the model is unchanged (the bug-free twin).

    python sentencepiece_engine.py MODEL.model --set add_dummy_prefix=false
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

NORMALIZER_FIELDS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces")
TRAINER_FIELDS = ("byte_fallback",)


def planted(model: bytes, settings: list[str], identity: bool) -> bytes:
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model)
    for setting in settings:
        name, _, value = setting.partition("=")
        if value not in ("true", "false"):
            raise SystemExit(f"--set {setting}: the value must be true or false")
        spec = proto.normalizer_spec if name in NORMALIZER_FIELDS else proto.trainer_spec if name in TRAINER_FIELDS \
            else None
        if spec is None:
            raise SystemExit(f"--set {name}: not a field this engine changes ({NORMALIZER_FIELDS + TRAINER_FIELDS})")
        setattr(spec, name, value == "true")
    if identity:
        proto.normalizer_spec.name = "identity"
        proto.normalizer_spec.precompiled_charsmap = b""
    return proto.SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("spm_model")
    parser.add_argument("--set", action="append", default=[], dest="settings")
    parser.add_argument("--identity", action="store_true")
    parser.add_argument("--unicode", choices=("NFC", "NFD", "NFKC"))
    args = parser.parse_args()
    with open(args.spm_model, "rb") as f:
        sp = spm.SentencePieceProcessor(model_proto=planted(f.read(), args.settings, args.identity))
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "encode":
            text = unicodedata.normalize(args.unicode, req["text"]) if args.unicode else req["text"]
            reply = {"id": req["id"], "ids": sp.encode(text)}
        else:
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
