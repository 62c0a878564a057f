"""A deliberately buggy engine that wraps a real tokenizer library (SentencePiece or Hugging Face).

Written for tokparity's test suite from bug descriptions only (see README.md beside it).

    python wrapped_lib.py --spm MODEL.model [--add-bos] [FLAGS]
    python wrapped_lib.py --hf tokenizer.json [FLAGS]
    FLAGS: --c-string --strip-leading --whitespace-raw --segment-specials (any combination)

It speaks tokparity's ``cmd:`` protocol: one JSON request per line on stdin, one JSON reply per
line on stdout, in order, flushed after each. ``decode`` (and any other op) is answered with an
``error``: this engine only encodes.

With no flag it gives exactly the library's ids:

* ``--spm``: ``SentencePieceProcessor.encode(text, out_type=int)``. ``parse_special`` changes
  nothing (SentencePiece never matches control-token text such as ``<s>`` in the input).
  ``add_special`` adds nothing, as SentencePiece's ``encode`` adds BOS/EOS only when told and a
  ``.model`` has no field telling it (tokparity's ``sentencepiece`` backend does the same); with
  ``--add-bos`` (an option, not a bug) it adds the model's ``bos_id()`` in front, as
  ``encode(..., add_bos=True)`` does, for comparing against a GGUF whose oracle adds BOS.
* ``--hf``: ``Tokenizer.from_file(path).encode(text, add_special_tokens=add_special)``, with
  ``encode_special_tokens = not parse_special``: special added-token text (``<|eot_id|>``) is
  that token only when the request asks ``parse_special``; ``add_special`` adds what the file's
  post-processor adds. (``tokenizers`` matches special added tokens by default; its
  ``encode_special_tokens`` switch, the ``split_special_tokens`` of ``transformers``, turns that
  off. Ignoring ``parse_special`` would already be a bug of its own, ``--always-parse-special``
  of ``byte_bpe.py``.)

The flags (each one a bug of a wrapper around a correct library)
----------------------------------------------------------------
They act in this order when combined: ``--c-string`` (the text crossing into the engine's C
core), then in the core ``--strip-leading``, ``--whitespace-raw``, ``--segment-specials``, then
the library. ``add_special``'s tokens (BOS …) are added once around whatever the core produced.

``--c-string``
    The engine hands the text to its core as a NUL-terminated C string (``char *`` plus
    ``strlen``, or ``c_char_p`` through ctypes), so everything from the first U+0000 on is lost:
    ``'a\\x00b'`` is tokenized as ``'a'``, ``'\\x00abc'`` as ``''``. Nobody thinks of NUL as a
    character of text until a user sends one.
``--strip-leading``
    The engine "cleans" its input with ``text.lstrip()`` before tokenizing, so ``'  hello'`` is
    tokenized as ``'hello'``: leading spaces, tabs and newlines look like noise from a form or a
    file, but they are tokens (SentencePiece's ``▁``, Llama 3's ``Ġ`` …). What is stripped is
    Python's whitespace (``str.isspace``), which includes U+001C..U+001F, U+0085, U+00A0,
    U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000, not U+200B or U+FEFF.
``--whitespace-raw``
    A fast path for input that is only whitespace or empty (``not text.strip()``, Python's
    whitespace as above): instead of tokenizing it, the engine returns it "raw, as one piece":
    it looks the whole text up as a single vocabulary piece and gives that piece's id, or the
    unknown token's id when the vocabulary has no such piece. What it looks up is the text as
    typed with each space U+0020 written as the vocabulary's space marker, because that is what
    the writer saw in the vocabulary listing: ``▁`` (U+2581) for SentencePiece (and for a
    ``tokenizer.json`` with a Metaspace pre-tokenizer or a normalizer replacing the space, that
    replacement), ``Ġ`` for a byte-level ``tokenizer.json``. Every other character is looked up
    as typed: the writer did not think of ``\\n`` (SentencePiece's byte piece ``<0x0A>``,
    byte-level ``Ċ``) or of the dummy prefix. So ``' '`` is looked up as ``'▁'``, ``'  '`` as
    ``'▁▁'``, ``'\\n'`` as ``'\\n'`` (no such piece: ``<unk>``), ``''`` as ``''`` (``<unk>``).
    The lookup is the library's own: ``piece_to_id`` (which gives ``unk_id()`` for an unknown
    piece) or ``token_to_id`` (``None`` for an unknown piece, then the model's ``unk_token``).
    A vocabulary without an unknown token (Llama 3's ``tokenizer.json``) gives no id at all for
    a failed lookup: the reply is ``[]`` (plus ``add_special``'s tokens).
``--segment-specials``
    With special-token parsing off (always, for SentencePiece; ``parse_special`` false, for
    Hugging Face), the engine still cuts the text at every occurrence of a special token's text
    (leftmost, longest first) and tokenizes each piece separately, the special token's own text
    included, as ordinary text, then concatenates the ids. The writer reused the splitter of the
    ``parse_special`` path and only dropped the "emit the special id" step, so no special id
    comes out, but the text on either side of ``<s>`` / ``<|eot_id|>`` is tokenized apart from
    it: with SentencePiece each piece gets its own dummy prefix ``▁`` (``'a<s>b'`` is
    ``'▁a' '▁<s>' '▁b'``), with Llama 3's split a pre-token that would have run across the
    boundary (``' <|'``) is cut in two. The special tokens are, for SentencePiece, the pieces it
    marks control or unknown (``<unk>``, ``<s>``, ``</s>``); for Hugging Face, the added tokens
    marked ``special`` (``get_added_tokens_decoder``; their ``lstrip``/``rstrip``/
    ``single_word``/``normalized`` options are not looked at: the cut is on the raw text). Each
    piece is encoded with ``add_special_tokens=False`` and, for Hugging Face, with
    ``encode_special_tokens = True``, so the library's added-token matcher does not turn the
    special text back into its id (non-special added tokens are still matched whole, as the
    library always does). With ``parse_special`` true the Hugging Face engine is the library,
    unchanged.

``add_special`` on the flag paths: SentencePiece's BOS (with ``--add-bos``) in front; for
Hugging Face the ids its post-processor puts before and after a text, found once at start by
encoding ``"a"`` with and without ``add_special_tokens`` (nothing for Llama 3's file, whose
post-processor is ByteLevel).
"""

from __future__ import annotations

import argparse
import json
import sys

SPM_SPACE = "\u2581"        # ▁, SentencePiece's space marker
BYTE_LEVEL_SPACE = "\u0120"  # Ġ, byte-level BPE's spelling of the byte 0x20


def leftmost_longest_cut(text: str, specials: list[str]) -> list[str]:
    """Cut the text before and after every occurrence of a special token's text, the leftmost
    first and the longest there; returns the pieces in order (specials included, no empty ones)."""
    if not specials:
        return [text] if text else []
    by_first: dict[str, list[str]] = {}
    for s in sorted(set(specials), key=len, reverse=True):
        if s:
            by_first.setdefault(s[0], []).append(s)
    pieces: list[str] = []
    start = pos = 0
    while pos < len(text):
        for s in by_first.get(text[pos], ()):
            if text.startswith(s, pos):
                if start < pos:
                    pieces.append(text[start:pos])
                pieces.append(s)
                pos += len(s)
                start = pos
                break
        else:
            pos += 1
    if start < len(text):
        pieces.append(text[start:])
    return pieces


class Engine:
    """What the flags do is here; the library calls are in the two subclasses."""

    def __init__(self, c_string: bool, strip_leading: bool, whitespace_raw: bool, segment_specials: bool):
        self.c_string = c_string
        self.strip_leading = strip_leading
        self.whitespace_raw = whitespace_raw
        self.segment_specials = segment_specials

    # Implemented by each library's wrapper.
    def library_encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        raise NotImplementedError     # the library, as it is

    def plain_encode(self, text: str) -> list[int]:
        raise NotImplementedError     # no BOS/EOS, special-token text as ordinary text

    def lookup_raw(self, text: str) -> list[int]:
        raise NotImplementedError     # the whole text as one vocabulary piece

    def special_texts(self) -> list[str]:
        raise NotImplementedError

    def parses_specials(self, parse_special: bool) -> bool:
        raise NotImplementedError

    def around(self, add_special: bool) -> tuple[list[int], list[int]]:
        raise NotImplementedError     # the ids add_special puts before and after the text

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        if self.c_string:
            text = text.split("\x00", 1)[0]          # strlen() stops at the first NUL
        if self.strip_leading:
            text = text.lstrip()                     # "clean the input"
        if self.whitespace_raw and not text.strip():
            before, after = self.around(add_special)
            return before + self.lookup_raw(text) + after
        if self.segment_specials and not self.parses_specials(parse_special):
            before, after = self.around(add_special)
            ids = list(before)
            for piece in leftmost_longest_cut(text, self.special_texts()):
                ids.extend(self.plain_encode(piece))
            return ids + after
        return self.library_encode(text, add_special, parse_special)


class SpmEngine(Engine):
    def __init__(self, path: str, add_bos: bool, **flags):
        super().__init__(**flags)
        import sentencepiece
        self.sp = sentencepiece.SentencePieceProcessor()
        self.sp.Load(model_file=path)
        self.add_bos = add_bos and self.sp.bos_id() >= 0
        self.specials = [self.sp.id_to_piece(i) for i in range(self.sp.get_piece_size())
                         if self.sp.is_control(i) or self.sp.is_unknown(i)]

    def library_encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return self.sp.encode(text, out_type=int, add_bos=add_special and self.add_bos)

    def plain_encode(self, text: str) -> list[int]:
        return self.sp.encode(text, out_type=int)

    def lookup_raw(self, text: str) -> list[int]:
        return [self.sp.piece_to_id(text.replace(" ", SPM_SPACE))]   # unk_id() when not a piece

    def special_texts(self) -> list[str]:
        return self.specials

    def parses_specials(self, parse_special: bool) -> bool:
        return False   # SentencePiece never does

    def around(self, add_special: bool) -> tuple[list[int], list[int]]:
        return ([self.sp.bos_id()] if add_special and self.add_bos else []), []


class HfEngine(Engine):
    def __init__(self, path: str, **flags):
        super().__init__(**flags)
        from tokenizers import Tokenizer
        self.tok = Tokenizer.from_file(path)
        spec = json.loads(self.tok.to_str())
        self.space = self._space_marker(spec)
        unk = (spec.get("model") or {}).get("unk_token")
        self.unk_id = self.tok.token_to_id(unk) if isinstance(unk, str) else None
        self.specials = [t.content for t in self.tok.get_added_tokens_decoder().values() if t.special]
        self._around: dict[bool, tuple[list[int], list[int]]] = {}

    @staticmethod
    def _space_marker(spec: dict) -> str:
        """How the vocabulary spells a space: the first ByteLevel / Metaspace / Replace(" ")
        step met in the normalizer, then the pre-tokenizer."""
        def walk(node):
            if isinstance(node, list):
                for n in node:
                    found = walk(n)
                    if found:
                        return found
            elif isinstance(node, dict):
                kind = node.get("type")
                if kind == "ByteLevel":
                    return BYTE_LEVEL_SPACE
                if kind == "Metaspace":
                    return node.get("replacement") or SPM_SPACE
                if kind == "Replace" and (node.get("pattern") or {}).get("String") == " ":
                    return node.get("content")
                for value in node.values():
                    if isinstance(value, (dict, list)):
                        found = walk(value)
                        if found:
                            return found
            return None
        return walk(spec.get("normalizer")) or walk(spec.get("pre_tokenizer")) or " "

    def _encode(self, text: str, add_special: bool, literal_specials: bool) -> list[int]:
        if self.tok.encode_special_tokens != literal_specials:
            self.tok.encode_special_tokens = literal_specials
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def library_encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return self._encode(text, add_special, literal_specials=not parse_special)

    def plain_encode(self, text: str) -> list[int]:
        return self._encode(text, False, literal_specials=True)

    def lookup_raw(self, text: str) -> list[int]:
        piece_id = self.tok.token_to_id(text.replace(" ", self.space))
        if piece_id is None:
            piece_id = self.unk_id
        return [] if piece_id is None else [piece_id]

    def special_texts(self) -> list[str]:
        return self.specials

    def parses_specials(self, parse_special: bool) -> bool:
        return parse_special

    def around(self, add_special: bool) -> tuple[list[int], list[int]]:
        if add_special not in self._around:
            if not add_special:
                self._around[add_special] = ([], [])
            else:
                bare = self._encode("a", False, literal_specials=True)
                full = self._encode("a", True, literal_specials=True)
                for k in range(len(full) - len(bare) + 1):
                    if full[k:k + len(bare)] == bare:
                        self._around[add_special] = (full[:k], full[k + len(bare):])
                        break
                else:
                    raise ValueError("cannot find the text's ids inside the post-processor's output")
        return self._around[add_special]


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
    lib = ap.add_mutually_exclusive_group(required=True)
    lib.add_argument("--spm", metavar="MODEL", help="a SentencePiece .model (the sentencepiece package)")
    lib.add_argument("--hf", metavar="TOKENIZER_JSON", help="a tokenizer.json (the tokenizers package)")
    ap.add_argument("--add-bos", action="store_true",
                    help="--spm only, not a bug: add_special adds the model's BOS (encode(add_bos=True))")
    ap.add_argument("--c-string", action="store_true", help="bug: the text ends at its first U+0000")
    ap.add_argument("--strip-leading", action="store_true", help="bug: leading whitespace stripped")
    ap.add_argument("--whitespace-raw", action="store_true",
                    help="bug: whitespace-only text looked up as one vocabulary piece")
    ap.add_argument("--segment-specials", action="store_true",
                    help="bug: text cut at special-token text, each piece tokenized apart")
    args = ap.parse_args(argv)
    if args.add_bos and not args.spm:
        ap.error("--add-bos goes with --spm (with --hf the post-processor decides)")
    flags = dict(c_string=args.c_string, strip_leading=args.strip_leading,
                 whitespace_raw=args.whitespace_raw, segment_specials=args.segment_specials)
    engine: Engine = SpmEngine(args.spm, args.add_bos, **flags) if args.spm else HfEngine(args.hf, **flags)
    serve(engine)


if __name__ == "__main__":
    main()
