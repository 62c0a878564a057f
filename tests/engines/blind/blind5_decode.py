"""Blind engines, fifth round: decode, stream and pieces on the real ``tokenizers`` library, each
with one bug taken from a real public bug report (``--bug NAME``). No flag: the bug-free twin.

    cmd:{python} tests/engines/blind/blind5_decode.py {tokenizer_json} [--bug NAME]

Written on 2026-11-29 from docs/contracts.md, docs/guides/streaming.md and the public threads
below; its author read no diagnosis code and ran tokparity only with ``--no-diagnose``, looking at
the number of mismatching cases. The ids, texts and bytes all come from ``tokenizers``
(``Tokenizer.from_file``); only the code that the bug report describes is written here.

The twin: ``decode`` is ``Tokenizer.decode(ids, skip_special_tokens)``, cleaned up as transformers'
``clean_up_tokenization`` where asked, or, unasked, where the ``tokenizer_config.json`` beside the
file says ``clean_up_tokenization_spaces`` (Llama 3); ``stream`` decodes the
ids up to each step with the same call and sends what grew, holding back while the text ends in
U+FFFD (flushed at the last id), and leaves out the prompt's text but for a character the prompt
began (its U+FFFD dropped from what counts as sent); ``pieces`` is each id's bytes: the byte-level
alphabet mapped back to bytes, ``<0xHH>`` as the byte, ``▁`` as a space (the decoder's own
``Replace`` steps), added tokens as their content.

Bugs (one at a time)
--------------------

Decode:

- ``gpt2-offset`` (paiml/aprender, pull request #2121, "GPT-2 byte-level BPE decode mangled all
  non-ASCII output"): the inverse of GPT-2's byte-to-unicode map was written as a linear
  ``code - 0x100`` offset that accepts only results 0..=32, 127..=160 and 173, beside a fast arm
  for printable ASCII; the Latin-1 self-mapped glyphs (U+00A1..U+00FF but U+00AD) and the staircase
  glyphs U+0121..U+0143 (bytes 0x7F..0xA0 and 0xAD) get no byte (129 of the 256), and
  ``decode()`` then writes the glyph's own UTF-8. So every byte >= 0x7F comes out as its glyph:
  ``中`` (E4 B8 AD, glyphs ``ä¸Ń``) decodes as ``ä¸Ń``; spaces (``Ġ``, U+0120), newlines and ASCII
  are right. Byte-level vocabularies only (llama-bpe, qwen3).
- ``byte-fallback-verbatim`` (cactus-compute/cactus, pull request #810, fixing #684, "Decode
  byte-fallback pieces in metaspace BPE tokenizers"): the Metaspace decode path replaced ``▁`` by a
  space but appended ``<0xHH>`` pieces verbatim, so ``잠 깰`` came out as
  ``잠 <0xEA><0xB9><0xB0>``. Here every byte-fallback token is written as its six-character name;
  everything else goes through the file's decoder as before (gemma-3, lenml-llama2).
- ``glyph-fallback`` (soniqo/speech-swift, pull request #41, "decode byte-level BPE tokens as a
  single UTF-8 buffer"): each token was decoded on its own; a token whose bytes are not valid UTF-8
  by themselves (part of a character) fell back to its raw byte-level string, so ``來`` came out as
  ``æĿ¥``. Tokens whose bytes are whole characters are right; the texts are joined. Byte-level only.
- ``strict-utf8`` (timtoole02/Camelid, pull request #288, "tolerate truncated multi-byte chars in
  decode (no 503 on emoji)"): the bytes were turned into text with a strict
  ``String::from_utf8``, so ids whose bytes are not valid UTF-8 (a generation cut inside an emoji)
  failed with ``token_decode_failed`` (a 503). Here: such a decode answers an error with
  ``"status": "error"`` (a crash of the case); valid bytes decode as the library does.

Stream:

- ``single-byte-pending`` (ggml-org/llama.cpp, pull request #4118, "fix deepseek bug in stream
  mode"; the server code it changed): ``multibyte_pending`` was set only when a token's piece was
  exactly one byte and a UTF-8 lead byte (1, 2 or 3 bytes still to come); while it is above 0 each
  token subtracts its piece's length; the text from ``sent_count`` is sent only when it is 0 (the
  JSON writer turning invalid bytes into U+FFFD). "Previous assumption was that only single-byte
  tokens can have unfinished UTF-8 sequences": a multi-byte token that ends inside a character
  (byte-level ``\\xe6\\xa0``) is sent at once as U+FFFD and its bytes are gone; a pending count
  that goes below 0 stops all sending until a single-byte token resets it; what is unsent when the
  stream ends is lost (the last event of a stream carries no content).
- ``valid-trim`` (ollama/ollama, pull request #7303, "runner.go: Merge partial unicode characters
  before sending", fixing #7290): each token's piece is queued; while ``incompleteUnicode`` (the
  last 1-4 bytes are a lead byte without all its continuation bytes) holds, nothing is sent;
  otherwise the queue is joined and sent after ``for !utf8.ValidString(joined) { joined =
  joined[:len(joined)-1] }``. An invalid byte inside a flush cuts it and everything after it in
  that flush; an unfinished character at the end of the generation is dropped (the reviewer's
  question in the thread: "how this doesn't throw away the partial utf character").
- ``alnum-gate`` (huggingface/candle, ``candle-examples/src/token_output_stream.rs``, the
  TokenOutputStream ported from text-generation-inference; first with ``is_ascii()``, later with
  ``is_alphanumeric()`` and ``decode_rest``): the window ``tokens[prev_index..]`` is decoded; its
  text past ``prev_text`` (a byte offset, ``split_at``) is sent only when the text grew and its
  last character is alphanumeric (Unicode Alphabetic or Numeric); otherwise nothing, and the
  window grows. At the end ``decode_rest`` sends what is left. So text ending in punctuation,
  spaces, symbols or emoji waits for the next letter or digit, and a stream whose tokens never end
  in one arrives whole at the end. A ``split_at`` inside a character panics (a crash). The stream
  starts after the prompt (tokens = prompt, ``prev_index = current_index = len(prompt)``).
  Specials follow ``skip_special`` (candle always skips them; not copied here).
- ``ignore-cumulative`` (abetlen/llama-cpp-python, pull request #118, "Fix UnicodeDecodeError
  permanently": "we use errors="ignore" to remove invalid characters"; the same workaround in
  triton-inference-server/tensorrtllm_backend #493 and QwenLM/Qwen #92): the generated ids are
  decoded cumulatively to bytes and to text with ``errors="ignore"``; each delta is the new text
  past the old. An unfinished character waits (it is ignored until whole), but bytes that are not
  UTF-8 vanish instead of becoming U+FFFD, and so does a character the prompt began.

Pieces:

- ``specials-byte-map`` (genlm/genlm-backend, pull request #27, "Improve vocab decoding": "vocabulary
  decoding was failing because some tokenizers contained special tokens with characters that were
  not in the byte decoder"): every token's string, added and special tokens included, is mapped
  through the byte-level byte decoder. A character outside the 256-glyph alphabet fails the whole
  table (an error with ``"status": "error"``); alphabet glyphs inside an added token become their
  byte. Llama 3's and Qwen 3's added tokens are printable ASCII (mapped to themselves); DeepSeek V3's
  ``<｜begin▁of▁sentence｜>`` is not.
- ``byte-tokens-literal`` (ollama/ollama, pull request #17047, fixing #17046, "llama: handle byte
  fallback tokens in tokenizer types"): when converting a ``tokenizer.json``, ``<0xNN>`` tokens were
  typed as normal tokens, not BYTE, so a token's piece is its text: ``<0x0A>`` stands for the six
  bytes ``<0x0A>``, not a newline. Every other token is right (gemma-3, lenml-llama2).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

import regex
from tokenizers import Tokenizer

BUGS = ("gpt2-offset", "byte-fallback-verbatim", "glyph-fallback", "strict-utf8",
        "single-byte-pending", "valid-trim", "alnum-gate", "ignore-cumulative",
        "specials-byte-map", "byte-tokens-literal")
BYTE_TOKEN = re.compile(r"^<0x([0-9A-F]{2})>$")
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
           (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))
ALNUM = regex.compile(r"[\p{Alphabetic}\p{Nd}\p{Nl}\p{No}]")


class Failure(Exception):
    """A failure of the case (answered with "status": "error")."""


def bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_ENCODER = bytes_to_unicode()
BYTE_DECODER = {c: b for b, c in BYTE_ENCODER.items()}


def _decoders(spec: dict | None) -> list[dict]:
    if not spec:
        return []
    if spec.get("type") == "Sequence":
        return [d for s in spec.get("decoders", []) for d in _decoders(s)]
    return [spec]


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        decs = _decoders(spec.get("decoder"))
        self.byte_level = any(d.get("type") == "ByteLevel" for d in decs)
        self.replaces = []
        for d in decs:
            if d.get("type") == "Replace":
                pat = d.get("pattern", {})
                if "String" in pat:
                    self.replaces.append((pat["String"], d.get("content", "")))
        self.added = {}
        self.special = set()
        for a in spec.get("added_tokens", []):
            self.added[a["id"]] = a["content"]
            if a.get("special"):
                self.special.add(a["id"])
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        self.config_cleanup = False  # tokenizer_config.json beside the file: clean_up_tokenization_spaces
        config = os.path.join(os.path.dirname(os.path.abspath(path)), "tokenizer_config.json")
        if os.path.exists(config):
            with open(config, encoding="utf-8") as f:
                self.config_cleanup = bool(json.load(f).get("clean_up_tokenization_spaces", False))
        self._piece_cache: dict[int, bytes | None] = {}

    # --- the twin's pieces -------------------------------------------------------------------
    def piece(self, i: int) -> bytes | None:
        if i in self._piece_cache:
            return self._piece_cache[i]
        token = self.tok.id_to_token(i)
        out: bytes | None
        if token is None:
            out = None
        elif i in self.added:
            content = self.added[i]
            if not self.byte_level:
                for a, b in self.replaces:
                    content = content.replace(a, b)
            out = content.encode("utf-8")
        elif self.byte_level:
            out = bytes(BYTE_DECODER[c] for c in token) if all(c in BYTE_DECODER for c in token) else token.encode("utf-8")
        else:
            m = BYTE_TOKEN.match(token)
            if m:
                out = bytes([int(m.group(1), 16)])
            else:
                for a, b in self.replaces:
                    token = token.replace(a, b)
                out = token.encode("utf-8")
        self._piece_cache[i] = out
        return out

    def pieces(self) -> list[str | None]:
        if self.bug == "specials-byte-map":
            if not self.byte_level:
                raise Failure("specials-byte-map needs a byte-level vocabulary")
            out = []
            for i in range(self.size):
                token = self.added.get(i) or self.tok.id_to_token(i)
                if token is None:
                    out.append(None)
                    continue
                try:
                    out.append(bytes(BYTE_DECODER[c] for c in token).hex())
                except KeyError as e:  # genlm-backend before #27: the whole vocabulary fails
                    raise Failure(f"KeyError: {e.args[0]!r} (token {i} {token!r}) not in the byte decoder") from None
            return out
        out = []
        for i in range(self.size):
            if self.bug == "byte-tokens-literal" and i not in self.added:
                token = self.tok.id_to_token(i)
                if token is not None and BYTE_TOKEN.match(token):
                    out.append(token.encode("utf-8").hex())
                    continue
            b = self.piece(i)
            out.append(None if b is None else b.hex())
        return out

    # --- decode ------------------------------------------------------------------------------
    def _kept(self, ids: list[int], skip: bool) -> list[int]:
        return [i for i in ids if not (skip and i in self.special)]

    def decode(self, ids: list[int], skip: bool, cleanup: bool | None) -> str:
        bug = self.bug
        if bug == "gpt2-offset" and self.byte_level:
            text = self._decode_offset(self._kept(ids, skip))
        elif bug == "glyph-fallback" and self.byte_level:
            text = self._decode_glyph_fallback(self._kept(ids, skip))
        elif bug == "byte-fallback-verbatim" and not self.byte_level:
            text = self._decode_verbatim(ids, skip)
        else:
            if bug == "strict-utf8":
                raw = b"".join(self.piece(i) or b"" for i in self._kept(ids, skip))
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise Failure(f"token_decode_failed: {e}") from None
            text = self.tok.decode(ids, skip_special_tokens=skip)
        if cleanup is None:
            cleanup = self.config_cleanup
        if cleanup:
            for a, b in CLEANUP:
                text = text.replace(a, b)
        return text

    def _decode_offset(self, ids: list[int]) -> str:
        def char_to_byte(c: str) -> bytes:
            o = ord(c)
            if 0x21 <= o <= 0x7E:  # the fast ASCII arm
                return bytes([o])
            k = o - 0x100
            if 0 <= k <= 32 or 127 <= k <= 160 or k == 173:
                return bytes([k])
            return c.encode("utf-8")  # None: the code point re-encoded as UTF-8

        out = bytearray()
        for i in ids:
            if i in self.added:
                out += self.added[i].encode("utf-8")
            else:
                out += b"".join(char_to_byte(c) for c in self.tok.id_to_token(i))
        return out.decode("utf-8", "replace")

    def _decode_glyph_fallback(self, ids: list[int]) -> str:
        parts = []
        for i in ids:
            if i in self.added:
                parts.append(self.added[i])
                continue
            token = self.tok.id_to_token(i)
            try:
                parts.append(bytes(BYTE_DECODER[c] for c in token).decode("utf-8"))
            except (UnicodeDecodeError, KeyError):
                parts.append(token)  # the raw byte-level string
        return "".join(parts)

    def _decode_verbatim(self, ids: list[int], skip: bool) -> str:
        # The byte tokens are hidden from the ByteFallback step behind private-use marks and
        # written back as their names, so every other step of the file's decoder still applies.
        tokens = []
        for i in self._kept(ids, skip):
            t = self.tok.id_to_token(i)
            m = BYTE_TOKEN.match(t) if i not in self.added else None
            tokens.append(f"\ue000{m.group(1)}\ue001" if m else t)
        text = self.tok.decoder.decode(tokens)
        return re.sub("\ue000([0-9A-F]{2})\ue001", r"<0x\1>", text)

    # --- stream ------------------------------------------------------------------------------
    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        bug = self.bug
        if bug == "single-byte-pending":
            return self._stream_single_byte_pending(ids, prompt, skip)
        if bug == "valid-trim":
            return self._stream_valid_trim(ids, prompt, skip)
        if bug == "alnum-gate":
            return self._stream_alnum_gate(ids, prompt, skip)
        if bug == "ignore-cumulative":
            return self._stream_ignore(ids, prompt, skip)
        return self._stream_twin(ids, prompt, skip)

    def _begun(self, ids: list[int], skip: bool) -> bool:
        """Whether the bytes of ids end inside a character (an unfinished UTF-8 sequence)."""
        raw = b"".join(self.piece(i) or b"" for i in self._kept(ids, skip))
        try:
            raw.decode("utf-8")
            return False
        except UnicodeDecodeError as e:
            return e.reason == "unexpected end of data"

    def _stream_twin(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        sent = self.tok.decode(ids[:prompt], skip_special_tokens=skip) if prompt else ""
        if sent.endswith("\ufffd") and self._begun(ids[:prompt], skip):
            sent = sent[:-1]
        deltas = []
        n = len(ids)
        for k in range(prompt, n):
            full = self.tok.decode(ids[:k + 1], skip_special_tokens=skip)
            last = k == n - 1
            if (full.endswith("\ufffd") and not last) or not full.startswith(sent):
                deltas.append("")
                continue
            deltas.append(full[len(sent):])
            sent = full
        return deltas

    def _stream_single_byte_pending(self, ids, prompt, skip):
        generated = b""
        sent_count = 0
        pending = 0
        deltas = []
        for i in ids[prompt:]:
            piece = b"" if (skip and i in self.special) else (self.piece(i) or b"")
            generated += piece
            if pending > 0:
                pending -= len(piece)
            elif len(piece) == 1:
                c = piece[0]
                if c & 0xE0 == 0xC0:
                    pending = 1
                elif c & 0xF0 == 0xE0:
                    pending = 2
                elif c & 0xF8 == 0xF0:
                    pending = 3
                else:
                    pending = 0
            if pending == 0:
                deltas.append(generated[sent_count:].decode("utf-8", "replace"))
                sent_count = len(generated)
            else:
                deltas.append("")
        return deltas  # what is still unsent at the end is lost

    @staticmethod
    def _incomplete_unicode(token: bytes) -> bool:
        incomplete = False
        i = 1
        while i < 5 and i <= len(token):
            c = token[len(token) - i]
            if c & 0xC0 == 0x80:
                i += 1
                continue
            if c & 0xE0 == 0xC0:
                incomplete = i < 2
            elif c & 0xF0 == 0xE0:
                incomplete = i < 3
            elif c & 0xF8 == 0xF0:
                incomplete = i < 4
            break
        return incomplete

    def _stream_valid_trim(self, ids, prompt, skip):
        pending: list[bytes] = []
        deltas = []
        gen = ids[prompt:]
        for k, i in enumerate(gen):
            pending.append(b"" if (skip and i in self.special) else (self.piece(i) or b""))
            joined = b"".join(pending)
            if self._incomplete_unicode(joined) and k < len(gen) - 1:
                deltas.append("")
                continue
            while True:  # for !utf8.ValidString(joined) { joined = joined[:len(joined)-1] }
                try:
                    text = joined.decode("utf-8")
                    break
                except UnicodeDecodeError:
                    joined = joined[:-1]
            pending = []
            deltas.append(text)
        return deltas

    def _stream_alnum_gate(self, ids, prompt, skip):
        tokens = list(ids[:prompt])
        prev_index = current_index = len(tokens)

        def dec(t):
            return self.tok.decode(t, skip_special_tokens=skip)

        def split_at(text: str, at: int) -> str:
            raw = text.encode("utf-8")
            rest = raw[at:]
            try:
                return rest.decode("utf-8")
            except UnicodeDecodeError:
                raise Failure(f"byte index {at} is not a char boundary") from None

        deltas = []
        for i in ids[prompt:]:
            prev_text = dec(tokens[prev_index:current_index]) if tokens else ""
            tokens.append(i)
            text = dec(tokens[prev_index:])
            if len(text.encode()) > len(prev_text.encode()) and ALNUM.match(text[-1]):
                deltas.append(split_at(text, len(prev_text.encode())))
                prev_index = current_index
                current_index = len(tokens)
            else:
                deltas.append("")
        # decode_rest
        prev_text = dec(tokens[prev_index:current_index])
        text = dec(tokens[prev_index:])
        if deltas and len(text.encode()) > len(prev_text.encode()):
            deltas[-1] += split_at(text, len(prev_text.encode()))
        return deltas

    def _stream_ignore(self, ids, prompt, skip):
        deltas = []
        sent = ""
        raw = b""
        for i in ids[prompt:]:
            raw += b"" if (skip and i in self.special) else (self.piece(i) or b"")
            text = raw.decode("utf-8", "ignore")
            deltas.append(text[len(sent):])
            sent = text
        return deltas


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        reply: dict = {"id": req.get("id")}
        op = req.get("op")
        try:
            if op == "encode":
                enc = eng.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special")))
                reply["ids"] = enc.ids
                if not req.get("parse_special"):
                    reply["unsupported"] = ["parse_special=false"]
            elif op == "decode":
                if req.get("spaces_between_specials") or req.get("remove_special"):
                    reply["error"] = "not supported"
                else:
                    reply["text"] = eng.decode(req["ids"], bool(req.get("skip_special")), req.get("clean_up_spaces"))
            elif op == "stream":
                if req.get("step", 1) != 1:
                    reply["error"] = "step not supported"
                else:
                    reply["deltas"] = eng.stream(req["ids"], int(req.get("prompt", 0)), bool(req.get("skip_special")))
            elif op == "pieces":
                reply["pieces"] = eng.pieces()
            else:
                reply["error"] = f"unsupported op {op!r}"
        except Failure as e:
            reply = {"id": req.get("id"), "error": str(e), "status": "error"}
        except Exception as e:  # noqa: BLE001 - one bad request is its error
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
