"""blind19 decode engine: a hand-written SentencePiece detokenizer (``decode`` op only).

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md):

    cmd:{python} tests/engines/blind/blind19_decode.py {spm_model} [--bug NAME ...]

Written on 2026-12-03 by a helper blind, from a short description of two bugs, with
blind18_decode.py as the model of its shape and of SentencePiece's decoding (and icefall's public
``byte_utils.py`` to check the byte table), without reading any of tokparity's diagnosis code. The
`sentencepiece` library is used only to read the .model: every id's piece and whether it is unknown,
control, byte or user-defined, and, from the model's own protobuf, the normalizer's
add_dummy_prefix / remove_extra_whitespaces and the trainer's unk_surface. The decoding itself is
done here, as SentencePiece's ``DecodeIds`` does (without ``--bug`` it agrees with it on every case):

- a control piece (``<s>``, ``</s>``) writes nothing;
- a run of byte pieces ``<0xHH>`` is collected and read as UTF-8, one character at a time; a byte
  that does not start a valid character (truncated, overlong, surrogate, > U+10FFFF) is written as
  U+FFFD and only that byte is consumed;
- every other piece (normal or user-defined) is its text with ``▁`` (U+2581) as a space;
- the leading ``▁`` of the first piece that writes anything (the dummy prefix) is dropped, where
  the model adds a dummy prefix or removes extra whitespace; with remove_extra_whitespaces every
  piece's leading ``▁`` is dropped while nothing has been written yet;
- an unknown id is written as the model's unk surface, `` ⁇ `` (U+2047 between two spaces) unless
  the model sets another.

Bugs (``--bug NAME``; several may be given, as ``--bug a --bug b`` or as one comma-separated
``--bug a,b``; together, byte-bpe-map works on the text leading-mark-only made):

`--bug leading-mark-only`: only a ``▁`` at the very start of a piece becomes a space; any other
``▁`` in it (the 2nd and 3rd of ``▁▁▁``, the one in ``a▁b``) stays the character ``▁``. The dummy
prefix is still dropped where SentencePiece drops it (that is the piece's first ``▁``; the ones
after it still stay ``▁``).

`--bug byte-bpe-map`: the decoder takes the vocabulary for a byte-level BPE of fairseq's/icefall's
kind (``byte_utils.py``): each byte is one printable character (0x00-0x1F as U+0100-U+011F,
0x20-0x7E as themselves, 0x7F-0xFF as the 129 characters U+0120-U+01A6 without U+0132, U+0133,
U+013F, U+0140, U+0149, U+017F; and U+2047 ``⁇`` read as a space byte). The text decoded as above
is mapped back character by character to bytes and read as UTF-8. Where a character is not in the
table or the bytes are not valid UTF-8, it recovers "the most characters" as icefall's
``smart_byte_decode``: a dynamic programme splitting the text into chunks of 1 to 4 characters,
a chunk counting 1 when it maps to bytes that are valid UTF-8, 0 (dropped) otherwise. So ASCII
passes unchanged, while ``ü``, ``é``, ``€``, CJK, emoji and a stray ``▁`` are dropped.

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
BUGS = ("leading-mark-only", "byte-bpe-map")


class Model:
    def __init__(self, path: str):
        sp = spm.SentencePieceProcessor(model_file=path)
        n = sp.get_piece_size()
        self.pieces = [sp.id_to_piece(i) for i in range(n)]
        self.unknown = [sp.is_unknown(i) for i in range(n)]
        self.control = [sp.is_control(i) for i in range(n)]
        self.byte = [sp.is_byte(i) for i in range(n)]
        # User-defined pieces decode as normal ones: their text, ▁ as a space.
        self.user_defined = [_is_user(sp, i) for i in range(n)]
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


def _is_user(sp, i: int) -> bool:
    """Whether id ``i`` is a user-defined piece (older sentencepiece releases lack the call)."""
    check = getattr(sp, "is_user_defined", None) or getattr(sp, "IsUserDefined", None)
    return bool(check(i)) if check else False


# --- SentencePiece's decoding -------------------------------------------------------------------


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


def piece_text(piece: str, drop_lead: bool, leading_mark_only: bool) -> str:
    """A normal piece's text: its ``▁`` as spaces (the first one dropped where ``drop_lead``).

    With the leading-mark-only bug, only the piece's first character may be a space; any later
    ``▁`` stays as it is."""
    if drop_lead:
        head, rest = "", piece[1:]
    elif piece.startswith(SPACE):
        head, rest = " ", piece[1:]
    else:
        head, rest = "", piece
    if leading_mark_only:
        return head + rest
    return head + rest.replace(SPACE, " ")


def decode(model: Model, ids: list[int], leading_mark_only: bool = False) -> str:
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
            surface = model.unk_surface
        else:
            drop_lead = False
            if is_bos_ws and strip_prefix and piece.startswith(SPACE):
                drop_lead = True
                has_bos_ws = not model.remove_extra_whitespaces
            surface = piece_text(piece, drop_lead, leading_mark_only)
        bos_ws_seen = has_bos_ws
        if surface:
            text.append(surface)
            written = True
    flush()
    return "".join(text)


# --- the byte-bpe-map bug: fairseq's / icefall's byte-level characters ---------------------------


def _byte_chars() -> list[int]:
    """The code point standing for each byte value 0..255."""
    skipped = {0x132, 0x133, 0x13F, 0x140, 0x149, 0x17F}
    high = [c for c in range(0x120, 0x1A7) if c not in skipped]
    table = list(range(0x100, 0x120)) + list(range(0x20, 0x7F)) + high
    assert len(high) == 129 and len(table) == 256
    return table


CHAR_TO_BYTE = {chr(c): b for b, c in enumerate(_byte_chars())}
CHAR_TO_BYTE["\u2047"] = 0x20  # ⁇ read as a space byte


def byte_chars_decode(chars: str) -> str | None:
    """The text ``chars`` stand for as byte characters; None if one is not in the table or the
    bytes are not valid UTF-8."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in chars).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return None


def byte_bpe_map(text: str) -> str:
    whole = byte_chars_decode(text)
    if whole:
        return whole
    # Recover the most characters: best[i] is the most chunks kept in text[:i], back[i] where the
    # last chunk starts (a chunk text[back[i]:i] is kept only where best[i] = best[back[i]] + 1).
    n = len(text)
    best = [0] * (n + 1)
    back = [0] * (n + 1)
    for i in range(1, n + 1):
        best[i], back[i] = best[i - 1], i - 1
        for j in range(1, min(4, i) + 1):
            if best[i - j] + 1 > best[i] and byte_chars_decode(text[i - j : i]):
                best[i], back[i] = best[i - j] + 1, i - j
    kept = []
    i = n
    while i > 0:
        if best[i] == best[back[i]] + 1:
            kept.append(byte_chars_decode(text[back[i] : i]))
        i = back[i]
    return "".join(reversed(kept))


# --- the line protocol --------------------------------------------------------------------------


def parse_bugs(values: list[str]) -> set[str]:
    bugs = set()
    for value in values:
        for name in value.split(","):
            name = name.strip()
            if not name:
                continue
            if name not in BUGS:
                raise SystemExit(f"unknown --bug {name!r} (known: {', '.join(BUGS)})")
            bugs.add(name)
    return bugs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--bug", action="append", default=[], help=f"one of {', '.join(BUGS)}, or several comma-separated")
    args = parser.parse_args()
    bugs = parse_bugs(args.bug)
    model = Model(args.model)
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
                text = decode(model, ids, leading_mark_only="leading-mark-only" in bugs)
                if "byte-bpe-map" in bugs:
                    text = byte_bpe_map(text)
                reply["text"] = text
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
