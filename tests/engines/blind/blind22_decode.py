"""Blind engines, round 22: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It also answers ``encode``,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind22_decode.py {tokenizer_json} [--bug NAME ...] [--every N]

It was written blind on 2026-12-04, from descriptions of how real detokenizers and streamers
behave. Its author read no diagnosis code and ran no tokparity. Only docs/contracts.md,
docs/guides/streaming.md and the README of this folder were read, and blind5_decode.py for the
way it speaks the protocol.

The twin
--------

``encode`` is ``Tokenizer.encode``. ``add_special`` is passed as ``add_special_tokens``.
``parse_special`` off sets the library's ``encode_special_tokens`` switch.

``decode`` is ``Tokenizer.decode(ids, skip_special_tokens=skip_special)``. Then it cleans up
spaces as transformers does, where asked. Where not asked, it follows the
``clean_up_tokenization_spaces`` of the ``tokenizer_config.json`` beside the file.
``spaces_between_specials`` and ``remove_special`` get an error with no status: not tried.

``stream`` decodes the ids up to each step and sends what the text grew by. It holds back while
the text ends in U+FFFD, but not at the last id. It leaves out the prompt's text. A character the
prompt began is sent whole once complete. Only ``step`` 1 is answered.

``pieces`` gives each id's bytes. A byte-level token's glyphs are mapped back to bytes. A
``<0xHH>`` token is that byte. A ``Replace`` step of the decoder applies (``▁`` as a space).
An added token is its content. An id with no token is null.

The bugs
--------

``strip-text`` (decode): the decoded text goes through Python's ``str.strip()`` with no
argument. Leading and trailing whitespace of the whole text is lost. This includes line breaks,
tabs, U+00A0, U+3000 and U+0085. Whitespace inside the text is kept. A server does this to tidy
a reply. Shows on any model, wherever a decoded text starts or ends with whitespace.

``crlf-to-lf`` (decode): every ``"\\r\\n"`` of the decoded text becomes ``"\\n"``. A lone
``"\\r"`` and a lone ``"\\n"`` are kept. This is what a text-mode pipe or file on Windows does
on the way. Shows on any model, wherever the ids spell a CR followed by an LF.

``added-dropped`` (decode): every id at or above the base vocabulary's size is left out before
decoding. The base vocabulary is the model's own table, without the added tokens. A port that
reads only the model's ``vocab`` table skips ids it does not find there. So added tokens vanish,
special or not, whatever ``skip_special`` says. Shows on Llama 3 (all its specials), Qwen 3
(its specials, and ``<think>`` and ``<tool_call>`` even with ``skip_special``) and DeepSeek V3.
Gemma 3 loses only its id 262144. Llama 2 has no such id.

``flush-every-n`` (stream): at every Nth id after the prompt (``--every N``, default 4), a
streamer whose text ends in an unfinished character sends it anyway, as U+FFFD. It does not hold
those bytes any longer. It starts a new decode window at the next id. So the bytes that complete
the character also decode apart, as U+FFFD. A server that flushes its buffer on a timer does this.
Ids that never stop inside a character at such a step stream right. Shows on any model where a
character is spelled by two or more ids (byte-level vocabularies, byte-fallback ones).

``word-boundary`` (stream): the streamer sends text only up to its last whitespace character
(``str.isspace``). The word after it waits for the next whitespace. At the end of the ids the
held word is never sent: the streamer's final flush is missing. So each stream loses what
follows the last whitespace of its text. A stream whose text ends in whitespace is right.
Shows on any model.

``specials-null`` (pieces): every added token marked special gets null, as if it had no bytes.
A table built for constrained decoding often leaves special tokens out this way. Added tokens
not marked special keep their text, and every other id is right. Shows on every model with
special tokens (all of the zoo's ``tokenizer.json`` models).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("strip-text", "crlf-to-lf", "added-dropped", "flush-every-n", "word-boundary", "specials-null")
BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
           (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-to-glyph alphabet, reversed: each glyph to its byte."""
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


GLYPH_TO_BYTE = byte_decoder()


def flat_decoders(spec: dict | None) -> list[dict]:
    if not spec:
        return []
    if spec.get("type") == "Sequence":
        return [d for s in spec.get("decoders", []) for d in flat_decoders(s)]
    return [spec]


class Engine:
    def __init__(self, path: str, bugs: set[str], every: int):
        self.bugs = bugs
        self.every = max(1, every)
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        decs = flat_decoders(spec.get("decoder"))
        self.byte_level = any(d.get("type") == "ByteLevel" for d in decs)
        self.replaces = [(d["pattern"]["String"], d.get("content", "")) for d in decs
                         if d.get("type") == "Replace" and "String" in d.get("pattern", {})]
        self.added: dict[int, str] = {}
        self.special: set[int] = set()
        for a in spec.get("added_tokens", []):
            self.added[a["id"]] = a["content"]
            if a.get("special"):
                self.special.add(a["id"])
        self.base_size = self.tok.get_vocab_size(with_added_tokens=False)
        self.size = max([self.tok.get_vocab_size(with_added_tokens=True)] + [i + 1 for i in self.added])
        self.config_cleanup = False
        config = os.path.join(os.path.dirname(os.path.abspath(path)), "tokenizer_config.json")
        if os.path.exists(config):
            with open(config, encoding="utf-8") as f:
                self.config_cleanup = bool(json.load(f).get("clean_up_tokenization_spaces", False))
        # An id whose text alone is a plain letter: decoding it in front of a window keeps the
        # window's first space (a Strip step of the decoder takes only the text's first space).
        self.anchor = self.tok.encode("a", add_special_tokens=False).ids[-1:]
        self.anchor_text = self.tok.decode(self.anchor)

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, cleanup: bool | None) -> str:
        if "added-dropped" in self.bugs:
            ids = [i for i in ids if i < self.base_size]
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if cleanup is None:
            cleanup = self.config_cleanup
        if cleanup:
            for a, b in CLEANUP:
                text = text.replace(a, b)
        if "crlf-to-lf" in self.bugs:
            text = text.replace("\r\n", "\n")
        if "strip-text" in self.bugs:
            text = text.strip()
        return text

    # --- stream ------------------------------------------------------------------------------
    def _dec(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _window(self, ids: list[int], skip: bool) -> str:
        """The text ids add after a plain letter: a window decoded apart from what went before."""
        if not ids:
            return ""
        text = self._dec(self.anchor + ids, skip)
        return text[len(self.anchor_text):] if text.startswith(self.anchor_text) else self._dec(ids, skip)

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        prompt_text = self._dec(ids[:prompt], skip) if prompt else ""
        if prompt_text.endswith("\ufffd") and self._begun(ids[:prompt], skip):
            prompt_text = prompt_text[:-1]
        if "word-boundary" in self.bugs:
            return self._stream_words(ids, prompt, skip, prompt_text)
        sent = prompt_text      # the text the streamer has sent, the prompt's included
        base = ""               # flush-every-n: the text sent before the current window
        start = 0               # flush-every-n: where the current window starts (0: no flush yet)
        deltas = []
        n = len(ids)
        for k in range(prompt, n):
            if start:
                full = base + self._window(ids[start:k + 1], skip)
            else:
                full = self._dec(ids[:k + 1], skip)
            last = k == n - 1
            held = full.endswith("\ufffd") and not last
            if not full.startswith(sent):
                deltas.append("")
                continue
            if held and "flush-every-n" in self.bugs and (k + 1 - prompt) % self.every == 0:
                deltas.append(full[len(sent):])
                sent = base = full
                start = k + 1
                continue
            if held:
                deltas.append("")
                continue
            deltas.append(full[len(sent):])
            sent = full
        return deltas

    def _stream_words(self, ids: list[int], prompt: int, skip: bool, prompt_text: str) -> list[str]:
        sent = 0
        deltas = []
        for k in range(prompt, len(ids)):
            full = self._dec(ids[:k + 1], skip)
            after = full[len(prompt_text):] if full.startswith(prompt_text) else ""
            cut = max((j + 1 for j, c in enumerate(after) if c.isspace()), default=0)
            if cut > sent:
                deltas.append(after[sent:cut])
                sent = cut
            else:
                deltas.append("")
        return deltas

    def _begun(self, ids: list[int], skip: bool) -> bool:
        """Whether the bytes of ids end inside a character."""
        raw = b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return e.reason == "unexpected end of data"
        return False

    # --- pieces ------------------------------------------------------------------------------
    def piece(self, i: int) -> bytes | None:
        if i in self.added:
            content = self.added[i]
            if not self.byte_level:
                for a, b in self.replaces:
                    content = content.replace(a, b)
            return content.encode("utf-8")
        token = self.tok.id_to_token(i)
        if token is None:
            return None
        if self.byte_level:
            if all(c in GLYPH_TO_BYTE for c in token):
                return bytes(GLYPH_TO_BYTE[c] for c in token)
            return token.encode("utf-8")
        m = BYTE_TOKEN.match(token)
        if m:
            return bytes([int(m.group(1), 16)])
        for a, b in self.replaces:
            token = token.replace(a, b)
        return token.encode("utf-8")

    def pieces(self) -> list[str | None]:
        out: list[str | None] = []
        for i in range(self.size):
            if "specials-null" in self.bugs and i in self.special:
                out.append(None)
                continue
            b = self.piece(i)
            out.append(None if b is None else b.hex())
        return out


def answer(eng: Engine, req: dict) -> dict:
    op = req.get("op")
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    if op == "decode":
        if req.get("spaces_between_specials") or req.get("remove_special"):
            return {"error": "setting not supported"}
        return {"text": eng.decode(req["ids"], bool(req.get("skip_special")), req.get("clean_up_spaces"))}
    if op == "stream":
        if req.get("step", 1) != 1:
            return {"error": "step not supported"}
        return {"deltas": eng.stream(req["ids"], int(req.get("prompt", 0)), bool(req.get("skip_special")))}
    if op == "pieces":
        return {"pieces": eng.pieces()}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    ap.add_argument("--every", type=int, default=4, help="flush-every-n: flush at every Nth id")
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, set(args.bug), args.every)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = answer(eng, req)
        except Exception as e:  # noqa: BLE001 - one bad request is its own error
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
