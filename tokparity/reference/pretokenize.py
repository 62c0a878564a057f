"""Pre-tokenizers: how a BPE model cuts text into words before merging.

llama.cpp names each model's pre-tokenizer in the GGUF key ``tokenizer.ggml.pre`` and maps the
name to a list of regexes in ``llama-vocab.cpp`` (``llm_tokenizer_bpe``'s constructor). The
regexes are applied one after the other: the first cuts the text, the second cuts each piece
the first produced (matches *and* the gaps between them become pieces), and so on.

How llama.cpp runs a regex matters as much as the regex itself (``unicode.cpp``):

* A handful of regexes (GPT-2's, Llama 3's, Qwen2's, Qwen3.5's, "newlines") are recognised
  by their exact text and run by hand-written code. Those loops behave like the regex with
  llama.cpp's own character tables, which is how they run here (``custom_regex``).
* A regex with ``\\p{..}`` runs on a *collapsed* copy of the text in which every non-ASCII
  code point became one byte naming its category (0xD1 number, 0xD2 letter, 0xD3
  punctuation, 0xD4 mark, 0xD5 symbol, 0xD0 anything else, 0x0B whitespace); the regex's
  ``\\p{L}`` becomes ``[\\xD2A-Za-z]`` and so on (``collapsed``). Consequences: ``\\p{Lu}``
  means every letter, and non-ASCII literals cannot be used beside categories.
* Any other regex runs on the code points with non-ASCII whitespace replaced by U+000B, so
  ``\\s`` matches it while a literal U+3000 in the regex never does (``wide``).

Both run here through Python's ``re`` with ``re.ASCII`` (so ``\\s`` is ``[ \\t\\n\\v\\f\\r]``,
like C's ``isspace``) on the same transformed text, and the offsets map back to the original.

    >>> Pretokenizer.for_gguf("llama-bpe").split("Hello world's 1234")
    ['Hello', ' world', "'s", ' ', '123', '4']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, lru_cache

from tokparity.errors import TokparityError
from tokparity.reference import unicode as uc
from tokparity.vocab.token_bytes import byte_to_unicode

# --- the regexes, as llama-vocab.cpp spells them (ECMAScript syntax) ----------------------------

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
LLAMA3 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN35 = (CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
NEWLINES = r"[^\n]+|[\n]+"

# Non-ASCII literals are written as escapes: an editor that normalizes to NFC would silently
# change them (U+1F7D is NFC-equal to U+03CE), and llama.cpp compares code points.
DEEPSEEK_LLM_LETTERS = (
    "A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377"
    "\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556"
    "\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a"
    "\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4"
    "\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc"
    "\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f"
    "\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b"
    "\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2"
    "\U000118a0-\U000118df\U0001e900-\U0001e943"
)
CJK_HANGUL = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

# llama-vocab.cpp's switch over LLAMA_VOCAB_PRE_TYPE_*, for the types tokparity runs.
# "$" is ECMAScript's end of input; the regexes keep llama.cpp's spelling and
# ``_to_python`` translates.
REGEXES: dict[str, list[str]] = {
    "llama3": [LLAMA3],
    "deepseek-llm": [
        "[\r\n]",
        r"\s?[" + DEEPSEEK_LLM_LETTERS + "]+",
        "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
        r"\s+$",
        CJK_HANGUL,
        r"\p{N}+",
    ],
    "deepseek-coder": ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", CJK_HANGUL, r"\p{N}"],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
    "starcoder": [r"\p{N}", GPT2],
    "gpt2": [GPT2],
    "qwen2": [QWEN2],
    "qwen35": [QWEN35],
    "poro": [PORO],
    "viking": [PORO, r"\p{N}"],
    "gemma4": [NEWLINES],
    "whitespace": [r"\S+"],
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "deepseek3": [r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
                  r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
                  r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "minicpm5": [r"\p{N}{1,3}", CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*"
                                               r"|\s*[\r\n]+|\s+(?!\S)|\s+"],
}


@dataclass(frozen=True)
class PreType:
    """What one ``tokenizer.ggml.pre`` name sets in llama.cpp's ``llama_vocab::load``."""

    regexes: str  # key of REGEXES
    ignore_merges: bool = False  # look the whole word up before merging (Llama 3)
    clean_spaces: bool = True  # decode's clean_up_tokenization_spaces
    add_bos: bool | None = None  # forced on by the name (the GGUF key can still override)
    escape_whitespaces: bool = False  # ' ' -> '▁' before splitting (Gemma 4's SPM-style BPE)
    byte_encode: bool = True  # GPT-2 byte-to-unicode on each word


_NO_CLEAN = {"clean_spaces": False}
PRE_TYPES: dict[str, PreType] = {
    "default": PreType("default"),
    **{n: PreType("llama3", ignore_merges=True, add_bos=True)
       for n in ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                 "jina-v5-nano")},
    "deepseek-llm": PreType("deepseek-llm", **_NO_CLEAN),
    "deepseek-coder": PreType("deepseek-coder", **_NO_CLEAN),
    "deepseek-v3": PreType("deepseek3", **_NO_CLEAN),
    "falcon": PreType("falcon"),
    "mpt": PreType("gpt2"),
    "starcoder": PreType("starcoder"),
    **{n: PreType("gpt2") for n in ("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
                                    "a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe",
                                    "olmo", "jais", "exaone4")},
    "trillion": PreType("gpt2", **_NO_CLEAN),
    "granite-docling": PreType("gpt2", **_NO_CLEAN),
    "gemma4": PreType("gemma4", escape_whitespaces=True, byte_encode=False),
    "granite-embed-multi-311m": PreType("gemma4", escape_whitespaces=True, byte_encode=False),
    "sarvam-moe": PreType("gemma4", escape_whitespaces=True, byte_encode=False, clean_spaces=False),
    "whitespace": PreType("whitespace", byte_encode=False),
    "refact": PreType("starcoder"),
    "command-r": PreType("starcoder", **_NO_CLEAN),
    "smollm": PreType("starcoder", **_NO_CLEAN),
    "codeshell": PreType("starcoder"),
    "exaone": PreType("starcoder"),
    "minerva-7b": PreType("starcoder"),
    "mellum2": PreType("starcoder"),
    **{n: PreType("qwen2", **_NO_CLEAN) for n in ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan",
                                                   "solar-open", "grok-2")},
    "megrez": PreType("qwen2"),
    "stablelm2": PreType("qwen2"),
    "qwen35": PreType("qwen35", **_NO_CLEAN),
    "dbrx": PreType("llama3"),
    "smaug-bpe": PreType("llama3"),
    "chatglm-bpe": PreType("llama3"),
    "glm4": PreType("llama3", ignore_merges=True),
    "glm5": PreType("llama3", ignore_merges=True),
    "poro-chat": PreType("poro", **_NO_CLEAN),
    "bloom": PreType("poro"),
    "gpt3-finnish": PreType("poro"),
    "viking": PreType("viking", **_NO_CLEAN),
    "minicpm5": PreType("minicpm5", ignore_merges=True),
}


def pre_type_for(name: str | None) -> PreType:
    """The PreType of a GGUF's ``tokenizer.ggml.pre`` (missing means "default", as in llama.cpp)."""
    if name is None or name == "":
        return PRE_TYPES["default"]
    try:
        return PRE_TYPES[name]
    except KeyError:
        raise TokparityError(f"pre-tokenizer {name!r} (tokenizer.ggml.pre) is not implemented by the ref backend; "
                             f"known: {', '.join(sorted(PRE_TYPES))}") from None


# --- running one regex the way llama.cpp does -----------------------------------------------------

CATEGORY_BYTES = {uc.NUMBER: "\xd1", uc.LETTER: "\xd2", uc.PUNCTUATION: "\xd3", uc.ACCENT_MARK: "\xd4",
                  uc.SYMBOL: "\xd5"}
# What each category keeps of ASCII in a collapsed regex (unicode.cpp's k_ucat_map).
CATEGORY_ASCII = {uc.NUMBER: "0-9", uc.LETTER: "A-Za-z", uc.PUNCTUATION: r"!-#%-*,-/:-;?-@\[-\]_\{\}",
                  uc.ACCENT_MARK: "", uc.SYMBOL: r"\$\+<->\^`\|~"}
UNICODE_CATEGORIES = {r"\p{N}": uc.NUMBER, r"\p{L}": uc.LETTER, r"\p{P}": uc.PUNCTUATION, r"\p{M}": uc.ACCENT_MARK,
                      r"\p{S}": uc.SYMBOL, r"\p{Lu}": uc.LETTER, r"\p{Ll}": uc.LETTER, r"\p{Lt}": uc.LETTER,
                      r"\p{Lm}": uc.LETTER, r"\p{Lo}": uc.LETTER}
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _to_python(regex: str) -> str:
    """ECMAScript -> Python ``re``. The one difference these regexes meet: a final ``$`` is the
    end of input in ECMAScript, while Python's ``$`` also matches before a final newline."""
    if regex.endswith("$") and not regex.endswith("\\$"):
        return regex[:-1] + "\\Z"
    return regex


def _collapse_regex(regex: str) -> str:
    """unicode.cpp's rewrite of ``\\p{X}`` to ``[<category byte><ASCII members>]``."""
    out, inside, i = [], False, 0
    while i < len(regex):
        c = regex[i]
        if c == "[" and (i == 0 or regex[i - 1] != "\\"):
            out.append("[")
            inside = True
        elif inside and c == "]" and regex[i - 1] != "\\":
            out.append("]")
            inside = False
        elif regex.startswith("\\p{", i) and regex.find("}", i + 3) != -1:
            end = regex.find("}", i + 3)
            category = UNICODE_CATEGORIES.get(regex[i:end + 1])
            if category is None:
                raise TokparityError(f"pre-tokenizer regex uses {regex[i:end + 1]}, which llama.cpp does not know")
            body = re.escape(CATEGORY_BYTES[category]) + CATEGORY_ASCII[category]
            out.append(body if inside else f"[{body}]")
            i = end + 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@cache
def _collapse_char(ch: str) -> str:
    flags = uc.flags(ord(ch))
    if flags & uc.WHITESPACE:
        return "\x0b"
    return CATEGORY_BYTES.get(flags & uc.CATEGORIES, "\xd0")


def collapse_text(text: str) -> str:
    """Every non-ASCII code point -> one character naming its category (unicode.cpp)."""
    return _NON_ASCII.sub(lambda m: _collapse_char(m.group()), text)


@cache
def _widen_char(ch: str) -> str:
    return "\x0b" if uc.flags(ord(ch)) & uc.WHITESPACE else ch


def widen_text(text: str) -> str:
    """Non-ASCII whitespace -> U+000B, what std::wregex is given."""
    return _NON_ASCII.sub(lambda m: _widen_char(m.group()), text)


@cache
def custom_regex(name: str) -> re.Pattern:
    """The hand-written splitters of unicode.cpp, as regexes over llama.cpp's classes.

    ``unicode_regex_split_custom_gpt2`` / ``_llama3`` / ``_qwen2`` / ``_qwen35`` walk the code
    points testing llama.cpp's flags; each branch of those loops is one alternative below, in
    the same order. ``(?i:'s)`` is decided with llama.cpp's ``unicode_tolower``."""
    L, N, M = uc.char_class(uc.LETTER), uc.char_class(uc.NUMBER), uc.char_class(uc.ACCENT_MARK)
    S = uc.char_class(uc.WHITESPACE)
    if name == "gpt2":
        rx = rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+"
    elif name in ("llama3", "qwen2", "qwen35"):
        low = {c: re.escape(uc.lower_preimage(c)) for c in "stmdrevl"}
        contractions = (f"'[{low['s']}{low['t']}{low['m']}{low['d']}]|'[{low['r']}][{low['e']}]"
                        f"|'[{low['v']}][{low['e']}]|'[{low['l']}][{low['l']}]")
        number = {"llama3": f"[{N}]{{1,3}}", "qwen2": f"[{N}]", "qwen35": f"[{N}]"}[name]
        word = f"[{L}{M}]" if name == "qwen35" else f"[{L}]"
        other = f"[^{S}{L}{M}{N}]" if name == "qwen35" else f"[^{S}{L}{N}]"
        rx = (rf"{contractions}|[^\r\n{L}{N}]?{word}+|{number}| ?{other}+[\r\n]*|[{S}]*[\r\n]+"
              rf"|[{S}]+(?![^{S}])|[{S}]+")
    elif name == "newlines":
        rx = r"[^\n]+|\n+"
    else:
        raise KeyError(name)
    return re.compile(rx)


CUSTOM = {GPT2: "gpt2", LLAMA3: "llama3", QWEN2: "qwen2", QWEN35: "qwen35", NEWLINES: "newlines",
          r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+": "llama3"}


@dataclass
class SplitRegex:
    """One regex of the list, with the way llama.cpp runs it."""

    source: str
    mode: str = field(init=False)  # custom | collapsed | wide
    pattern: re.Pattern = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.source in CUSTOM:
            self.mode, self.pattern = "custom", custom_regex(CUSTOM[self.source])
        elif r"\p{" in self.source:
            if any(ord(c) > 0x7F for c in self.source):
                raise TokparityError("pre-tokenizer regex mixes unicode categories and non-ASCII characters "
                                     "(llama.cpp refuses it too)")
            self.mode = "collapsed"
            self.pattern = re.compile(_to_python(_collapse_regex(self.source)), re.ASCII)
        else:
            self.mode, self.pattern = "wide", re.compile(_to_python(self.source), re.ASCII)

    def cut(self, text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Cut each (start, end) piece of ``text`` into matches and the gaps between them."""
        if self.mode == "custom":
            subject = text
        elif self.mode == "collapsed":
            subject = collapse_text(text)
        else:
            subject = widen_text(text)
        out = []
        for start, end in pieces:
            piece = subject[start:end]  # the regex sees this piece only, as llama.cpp's iterator does
            pos = 0
            for m in self.pattern.finditer(piece):
                if m.start() > pos:
                    out.append((start + pos, start + m.start()))
                if m.end() > m.start():
                    out.append((start + m.start(), start + m.end()))
                pos = m.end()
            if pos < end - start:
                out.append((start + pos, end))
        return out


class Pretokenizer:
    """A list of split regexes applied in turn, as ``unicode_regex_split`` does."""

    def __init__(self, regexes: list[str], name: str = ""):
        self.name = name
        self.regexes = [SplitRegex(r) for r in regexes]

    @classmethod
    def for_gguf(cls, pre: str | None) -> Pretokenizer:
        pt = pre_type_for(pre)
        return cls(REGEXES[pt.regexes], pre or "default")

    def spans(self, text: str) -> list[tuple[int, int]]:
        pieces = [(0, len(text))] if text else []
        for regex in self.regexes:
            pieces = regex.cut(text, pieces)
        return pieces

    def split(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]


# --- GPT-2's byte-to-unicode map ------------------------------------------------------------------


@lru_cache(maxsize=1)
def _byte_translation() -> dict[int, str]:
    return {b: c for b, c in enumerate(byte_to_unicode())}


def bytes_to_gpt2(word: str) -> str:
    """``"héllo"`` -> ``"hÃ©llo"``: the word's UTF-8 bytes, each spelled as one character."""
    return word.encode("utf-8").decode("latin-1").translate(_byte_translation())
