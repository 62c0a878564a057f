"""blind21: a deliberately buggy SentencePiece engine that "parses" control tokens itself.

Written 2026-12-04 for tokparity's test suite, blind: from a bug description only, without
reading tokparity's diagnosis, diff or fuzz code (only the ``cmd:`` protocol section of
docs/contracts.md and the stdin/stdout loop of wrapped_lib.py were looked at).

    python blind21_spm_specials.py MODEL.model [--bug cut-first | --bug cut-first-one-prefix]

It speaks tokparity's ``cmd:`` protocol: one JSON request per line on stdin, one JSON reply per
line on stdout, in order, flushed after each. Only ``encode`` is answered; every other op gets an
``error`` with no ``status`` (not supported).

No flag: exactly ``SentencePieceProcessor(model_file=MODEL).encode(text)``. ``parse_special``
changes nothing (SentencePiece never matches control-token text such as ``<s>`` in its input)
and ``add_special`` adds nothing (a ``.model`` has no field asking for BOS/EOS, and
SentencePiece's ``encode`` adds them only when told; wrapped_lib.py's ``--spm`` does the same).

The bugs
--------
``--bug cut-first``
    When the request asks ``parse_special``, the engine treats the model's control pieces
    (``sp.is_control(i)``: ``<s>``, ``</s>``) as special tokens, the way a port of Hugging Face
    tokenizers' added-token splitting does: it finds their texts in the RAW input (leftmost,
    longest first), emits their ids, and encodes each stretch of text between them with
    ``sp.encode(part)`` on its own, concatenating the ids. So every part gets its own dummy
    prefix ``▁`` and its own leading/trailing whitespace trimming by SentencePiece's normalizer
    (``'a <s> b'`` gives ``▁a`` ``<s>`` ``▁b``, where SentencePiece spells the ``<s>`` out as
    text). Empty parts give nothing. Without ``parse_special`` it is the library, as with no flag.
``--bug cut-first-one-prefix``
    As ``cut-first``, but only one stretch of text may get the dummy prefix ``▁``.
    That is the stretch that begins at the very start of the input (offset 0).
    Every other stretch is encoded with no dummy prefix.
    So a text that starts with a special has no stretch at offset 0, and no stretch gets ``▁``.
    ``'<s>Hello'`` gives the id of ``<s>``, then ``Hello`` with no prefix.
    ``'a<s>b'`` gives ``▁a``, then ``<s>``, then ``b`` with no prefix.
    This is what tokenizers' Metaspace does with ``prepend_scheme="first"``.
    It prepends ``▁`` only to the split whose offset in the original text is 0.
    Stretches with no prefix go to a second processor loaded from the same model.
    Its ModelProto has ``normalizer_spec.add_dummy_prefix = False``.
    The proto is edited with ``sentencepiece_model_pb2`` and loaded with ``model_proto=``.
    The normalizer's whitespace trimming stays on.
    So each stretch still loses its leading and trailing spaces.
    So ``'a </s> b'`` gives ``▁a``, ``</s>``, ``b``.
    Empty stretches (two specials side by side, or a special at the end) give nothing.
    Rewritten on 2026-12-04 from a corrected description: "the earlier one gave the prefix to the
    first stretch of text even after a leading special; tokenizers' prepend_scheme first does not".
"""

from __future__ import annotations

import argparse
import json
import sys


def cut_at_specials(text: str, specials: dict[str, int]) -> list[tuple[str, int | None]]:
    """The text as (part, None) and (special text, id) in order: leftmost match first, the
    longest special there; empty parts are left out."""
    ordered = sorted(specials, key=len, reverse=True)
    out: list[tuple[str, int | None]] = []
    start = pos = 0
    while pos < len(text):
        for s in ordered:
            if s and text.startswith(s, pos):
                if start < pos:
                    out.append((text[start:pos], None))
                out.append((s, specials[s]))
                pos += len(s)
                start = pos
                break
        else:
            pos += 1
    if start < len(text):
        out.append((text[start:], None))
    return out


class Engine:
    def __init__(self, model: str, bug: str | None):
        import sentencepiece
        self.sp = sentencepiece.SentencePieceProcessor(model_file=model)
        self.bug = bug
        self.specials = {self.sp.id_to_piece(i): i for i in range(self.sp.get_piece_size())
                         if self.sp.is_control(i)}
        self.sp_no_prefix = None
        if bug == "cut-first-one-prefix":
            from sentencepiece import sentencepiece_model_pb2 as pb
            proto = pb.ModelProto()
            with open(model, "rb") as f:
                proto.ParseFromString(f.read())
            proto.normalizer_spec.add_dummy_prefix = False
            self.sp_no_prefix = sentencepiece.SentencePieceProcessor(
                model_proto=proto.SerializeToString())

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        if self.bug is None or not parse_special:
            return self.sp.encode(text, out_type=int)
        ids: list[int] = []
        for n, (part, special_id) in enumerate(cut_at_specials(text, self.specials)):
            if special_id is not None:
                ids.append(special_id)
                continue
            # Empty parts are left out, so a text part comes first exactly when it starts at
            # offset 0 of the input; with cut-first-one-prefix only that one gets the prefix.
            if n == 0 or self.sp_no_prefix is None:
                ids.extend(self.sp.encode(part, out_type=int))
            else:
                ids.extend(self.sp_no_prefix.encode(part, out_type=int))
        return ids


def serve(engine: Engine) -> None:
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        reply: dict[str, object]
        try:
            req = json.loads(line)
        except ValueError as e:
            reply = {"id": None, "error": f"not JSON: {e}"}
        else:
            rid = req.get("id") if isinstance(req, dict) else None
            try:
                op = req.get("op")
                if op == "encode":
                    reply = {"id": rid, "ids": engine.encode(req["text"], bool(req.get("add_special")),
                                                             bool(req.get("parse_special")))}
                else:
                    reply = {"id": rid, "error": f"op {op!r} not supported (this engine only encodes)"}
            except Exception as e:  # one bad request must not end the engine
                reply = {"id": rid, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="a SentencePiece .model")
    ap.add_argument("--bug", choices=["cut-first", "cut-first-one-prefix"])
    args = ap.parse_args(argv)
    serve(Engine(args.model, args.bug))


if __name__ == "__main__":
    main()
