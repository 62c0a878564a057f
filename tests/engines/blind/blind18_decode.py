"""blind18 decode engine: a hand-written SentencePiece detokenizer (``decode`` op only).

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md):

    cmd:{python} tests/engines/blind/blind18_decode.py {spm_model} [--bug unk-as-text]

Written on 2026-12-03 by a helper blind, from a one-paragraph description of SentencePiece's
DecodeIds and of the bug (and SentencePiece's public source for the details), without reading any
of tokparity's diagnosis code. The `sentencepiece` library is used only to read the .model: every
id's piece and whether it is unknown, control or byte (and, from the model's own protobuf, the
normalizer's add_dummy_prefix / remove_extra_whitespaces and the trainer's unk_surface). The
decoding itself is done here, as SentencePiece's ``Decode`` does:

- a control piece (``<s>``, ``</s>``) writes nothing;
- a run of byte pieces ``<0xHH>`` is collected and read as UTF-8, one character at a time; a byte
  that does not start a valid character (truncated, overlong, surrogate, > U+10FFFF) is written as
  U+FFFD and only that byte is consumed;
- every other piece is its text with ``▁`` (U+2581) as a space;
- the leading ``▁`` of the first piece that writes anything (the dummy prefix) is dropped, where
  the model adds a dummy prefix or removes extra whitespace; with remove_extra_whitespaces every
  piece's leading ``▁`` is dropped while nothing has been written yet;
- an unknown id is written as the model's unk surface, `` ⁇ `` (U+2047 between two spaces) unless
  the model sets another.

Flags:

`--bug unk-as-text`: an unknown id is written as its own piece text (``<unk>``) instead of the unk
surface, as llama.cpp's and Hugging Face tokenizers' decoders do.

Anything but ``decode`` with every setting off (``skip_special`` true, ``clean_up_spaces``,
``spaces_between_specials``, ``remove_special``) is answered ``"status": "skipped"``. An id out of
the vocabulary is an error (``"status": "error"``), as SentencePiece refuses it.
"""

from __future__ import annotations

import argparse
import json
import sys

import sentencepiece as spm

SPACE = "\u2581"
REPLACEMENT = "\ufffd"


class Model:
    def __init__(self, path: str):
        sp = spm.SentencePieceProcessor(model_file=path)
        n = sp.get_piece_size()
        self.pieces = [sp.id_to_piece(i) for i in range(n)]
        self.unknown = [sp.is_unknown(i) for i in range(n)]
        self.control = [sp.is_control(i) for i in range(n)]
        self.byte = [sp.is_byte(i) for i in range(n)]
        self.by_piece = {}
        for i, p in enumerate(self.pieces):
            self.by_piece.setdefault(p, i)
        # Normalizer and trainer settings, from the model's own protobuf (defaults as SentencePiece's).
        self.add_dummy_prefix = True
        self.remove_extra_whitespaces = True
        self.unk_surface = " \u2047 "
        try:
            from sentencepiece import sentencepiece_model_pb2 as pb

            proto = pb.ModelProto()
            proto.ParseFromString(sp.serialized_model_proto())
            self.add_dummy_prefix = proto.normalizer_spec.add_dummy_prefix
            self.remove_extra_whitespaces = proto.normalizer_spec.remove_extra_whitespaces
            if proto.trainer_spec.HasField("unk_surface"):
                self.unk_surface = proto.trainer_spec.unk_surface
        except Exception:  # no protobuf: SentencePiece's defaults
            pass


def decode_utf8_bytes(data: bytes) -> str:
    """Bytes read one character at a time; an invalid start byte is U+FFFD and consumes itself only."""
    out = []
    i, n = 0, len(data)
    while i < n:
        b0 = data[i]
        length, lo = 0, 0
        if b0 < 0x80:
            out.append(chr(b0))
            i += 1
            continue
        if b0 & 0xE0 == 0xC0:
            length, lo, cp = 2, 0x80, b0 & 0x1F
        elif b0 & 0xF0 == 0xE0:
            length, lo, cp = 3, 0x800, b0 & 0x0F
        elif b0 & 0xF8 == 0xF0:
            length, lo, cp = 4, 0x10000, b0 & 0x07
        ok = length and i + length <= n
        if ok:
            for k in range(1, length):
                c = data[i + k]
                if c & 0xC0 != 0x80:
                    ok = False
                    break
                cp = (cp << 6) | (c & 0x3F)
        if ok and cp >= lo and (cp < 0xD800 or 0xE000 <= cp <= 0x10FFFF):
            out.append(chr(cp))
            i += length
        else:
            out.append(REPLACEMENT)
            i += 1
    return "".join(out)


def decode(model: Model, ids: list[int], unk_as_text: bool) -> str:
    text: list[str] = []  # surfaces written so far
    written = False  # whether text is non-empty
    bytes_run = bytearray()
    is_bos_ws = True
    bos_ws_seen = False
    strip_prefix = model.add_dummy_prefix or model.remove_extra_whitespaces

    def flush():
        nonlocal written
        if bytes_run:
            s = decode_utf8_bytes(bytes(bytes_run))
            bytes_run.clear()
            if s:
                text.append(s)
                written = True

    for i in ids:
        piece = model.pieces[i]
        pid = model.by_piece[piece]  # SentencePiece goes back from the piece to its id
        if model.byte[pid]:
            bytes_run.append(int(piece[3:5], 16))
            continue
        flush()
        if bos_ws_seen or written:
            is_bos_ws = False
        has_bos_ws = False
        if model.control[pid]:
            surface = ""
        elif model.unknown[pid]:
            surface = piece if unk_as_text else model.unk_surface
        else:
            p = piece
            if is_bos_ws and strip_prefix:
                if p.startswith(SPACE):
                    p = p[1:]
                    has_bos_ws = True
                if model.remove_extra_whitespaces:
                    has_bos_ws = False
            surface = p.replace(SPACE, " ")
        bos_ws_seen = has_bos_ws
        if surface:
            text.append(surface)
            written = True
    flush()
    return "".join(text)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--bug", choices=["unk-as-text"], action="append", default=[])
    args = parser.parse_args()
    model = Model(args.model)
    unk_as_text = "unk-as-text" in args.bug
    n = len(model.pieces)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply = {"id": req.get("id")}
        settings = ("skip_special", "clean_up_spaces", "spaces_between_specials", "remove_special")
        if req.get("op") != "decode":
            reply.update(error=f"op {req.get('op')!r} is not done here", status="skipped")
        elif any(req.get(k) for k in settings):
            reply.update(error="only plain decode (no settings) is done here", status="skipped")
        else:
            ids = req.get("ids") or []
            bad = [i for i in ids if not isinstance(i, int) or not 0 <= i < n]
            if bad:
                reply.update(error=f"Invalid id: {bad[0]}", status="error")
            else:
                reply["text"] = decode(model, ids, unk_as_text)
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
