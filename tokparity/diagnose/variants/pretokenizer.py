"""The pre-tokenizer stage: another split regex list, the same regexes read by another regex
engine or another Unicode version's tables, contractions edited, a hand-written scanner's rules."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import partial

import regex
import unicodedata2

from tokparity.diagnose import contractions, regex_engines
from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.contractions import Contractions, beyond_lower_case
from tokparity.diagnose.variants.rules import SCANNER, split_name
from tokparity.diagnose.variants.variant import Variant, is_ugm_or_sp, per_vocab, with_pipeline
from tokparity.reference.hf import HfBpe, HfPipeline
from tokparity.reference.llama import LlamaBpe
from tokparity.reference.pretokenize import REGEXES, Pretokenizer
from tokparity.vocab.model import TokenType

# The cause names of the table's regex lists ("behaves like gpt-2"); "none" splits nothing.
PRETOKENIZER_NAMES = {key: split_name(key) for key in REGEXES}


class _Split:
    """A list of split regexes standing in for a tokenizer.json pre-tokenizer (byte-level or not)."""

    def __init__(self, splitter, byte_level: bool):
        self.splitter, self.byte_level = splitter, byte_level

    def __call__(self, text: str, at_start: bool = True) -> list[str]:
        from tokparity.reference.pretokenize import bytes_to_gpt2
        words = [w for w in self.splitter.split(text) if w]
        return [bytes_to_gpt2(w) for w in words] if self.byte_level else words


def splits(p) -> bool:
    """Whether a split regex of ``_with_splitter``'s can stand in for the pipeline's split."""
    return isinstance(p, LlamaBpe) or isinstance(p, HfBpe) and p.pretokenizer.byte_level


def _with_splitter(c: Candidate, splitter, **changes) -> Candidate | None:
    """``splitter`` in place of the model's split (``changes``: what else the copy of a llama.cpp
    pipeline changes)."""
    p = c.pipeline
    if not splits(p):
        return None
    if isinstance(p, LlamaBpe):
        return with_pipeline(c, fork(p, pretokenizer=splitter, **changes))
    return with_pipeline(c, fork(p, pretokenizer=_Split(splitter, byte_level=True), **changes))


def _pretokenizer_as(key: str, c: Candidate) -> Candidate | None:
    p = c.pipeline
    if list(map(spelled_out, split_sources(p))) == _SPELLED_REGEXES[key]:
        # The model's own split. For a tokenizer.json it would differ only in reading llama.cpp's
        # Unicode tables, which is unicode.tables, not another pre-tokenizer.
        return None
    if key == "whitespace" and is_ugm_or_sp(p) and p.normalizer.add_space_prefix:
        return c.replace(text_maps=c.text_maps + (split_on_white_space,))
    return _with_splitter(c, Pretokenizer(REGEXES[key], key)) if splits(p) else None  # (compiled only where it can be used)


_PLAIN = {"r": "\r", "n": "\n", "t": "\t", '"': '"'}


def spelled_out(source: str) -> str:
    """A regex with the escapes that mean one plain character (``\\r``, ``\\n``, ``\\t``, ``\\"``)
    written as that character, as a tokenizer.json and llama.cpp's list write the same regex."""
    out, i = [], 0
    while i < len(source):
        if source[i] == "\\" and i + 1 < len(source):
            out.append(_PLAIN.get(source[i + 1], source[i:i + 2]))
            i += 2
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


_SPELLED_REGEXES = {key: list(map(spelled_out, sources)) for key, sources in REGEXES.items()}


# Unicode's White_Space, which tokenizers' WhitespaceSplit (Rust's char::is_whitespace) splits on.
WHITE_SPACE = re.compile("[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def split_on_white_space(text: str) -> str:
    """tokenizers' ``WhitespaceSplit`` before ``Metaspace``, as transformers' converters write it for
    unigram models: words between Unicode whitespace, each to be prefixed with '▁'."""
    return " ".join(w for w in WHITE_SPACE.split(text) if w)


def _pretokenizer_none(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaBpe):
        # With no split a whole text can be one word, and "<|eot_id|>" is then looked up whole;
        # an engine without a split (tokenizers with no pre-tokenizer) finds no special token in
        # its model's vocabulary, so neither does this variant.
        words = per_vocab(c.vocab, ("words but control",), lambda: {
            t: i for t, i in p.token_to_id.items() if c.vocab.type_of(i) != TokenType.CONTROL}, sources=(p.token_to_id,))
        return _with_splitter(c, Pretokenizer([], "none"), whole_words=words)
    return _with_splitter(c, Pretokenizer([], "none"))


# (a case shows the C locale's reading by a letter or digit past ASCII that leaves its word: one
# whose only such characters are spaces or punctuation is left to the rules that name them)
_NON_ASCII_WORD = regex.compile(r"[^\x00-\x7f](?<=[\p{L}\p{N}])")


def _has_non_ascii_word(c: Candidate, text: str) -> bool:
    return _NON_ASCII_WORD.search(text) is not None


def _regex_engine(engine: str, c: Candidate) -> Candidate | None:
    # Only \s read otherwise: the other classes keep the tables the model's split reads
    # (llama.cpp's own for a GGUF; Oniguruma's Unicode 16.0 for a tokenizer.json: ``_reading``),
    # except for JavaScript and PCRE2, whose engines bring their own (JavaScript a current Unicode,
    # as the regex module's; PCRE2 16.0). Neither is a model's own reading, so ``javascript`` is a
    # variant of its own (ECMAScript's \s and newer tables) on a GGUF and on a tokenizer.json alike;
    # it is ECMAScript's \s alone (regex_engines.TWIN) only after a variant put the regex module's
    # tables in place. PCRE2's \s has no such twin.
    tables = regex_engines.TABLES.get(engine)
    if tables is not None and tables == _reading(c.pipeline)[1] and engine in regex_engines.TWIN:
        return None
    return resplit(c, engine=engine, tables=tables)


def split_sources(p) -> list[str]:
    """The split regexes the pipeline runs, in the ECMAScript-like syntax the engines share: the
    model's, or those another variant of a composed set put in their place."""
    splitter = splitter_of(p)
    if splitter is not None:
        return list(splitter.sources) if hasattr(splitter, "sources") else [r.source for r in splitter.regexes]
    if isinstance(p, HfBpe):
        return regex_engines.hf_split_sources(p.spec.pre_tokenizer)
    return []


def splitter_of(p):
    """The regex splitter of a llama.cpp BPE pipeline, or the one a variant put in a tokenizer.json's."""
    if isinstance(p, LlamaBpe):
        return p.pretokenizer
    if isinstance(p, HfBpe) and isinstance(p.pretokenizer, _Split):
        return p.pretokenizer.splitter
    return None


def _reading(p) -> tuple[str, str]:
    """How the pipeline's split reads its regexes: (regex engine, tables, ``+alphabetic`` included).
    A GGUF's reads llama.cpp's generated tables; a tokenizer.json's runs on Oniguruma's Unicode 16.0
    (``hf_regex``: ``hf_unicode.onig_view``), the regex module's less what a later Unicode assigned,
    so that a variant that edits the split keeps them (read as the regex module's, the scanner rules
    that apply to DeepSeek-V3's split gave the ids of an engine with Unicode 17's tables on U+20C1)."""
    splitter = splitter_of(p)
    if isinstance(splitter, regex_engines.EngineSplitter):
        return splitter.engine, splitter.tables
    return "unicode", "llama.cpp" if isinstance(p, LlamaBpe) else "16.0"


def resplit(c: Candidate, *, sources: list[str] | None = None, engine: str | None = None,
             tables: str | None = None, letters: str | None = None, caseless: bool = False) -> Candidate | None:
    """The pipeline's split with one aspect changed (its regexes, the regex engine reading them,
    the Unicode tables, what a letter is: ``letters="alphabetic"``, the whole regex case-insensitive)
    and the others as the pipeline reads them now: a variant composed after another (variants
    apply in stage order: a split regex or engine first, then Unicode's tables and letters) keeps
    what that one changed."""
    current = split_sources(c.pipeline)
    if not current:
        return None
    now_engine, now_tables = _reading(c.pipeline)
    now_base, _, now_letters = now_tables.partition("+")
    base, letters = tables or now_base, letters or now_letters
    caseless = caseless or getattr(splitter_of(c.pipeline), "caseless", False)
    return _with_splitter(c, regex_engines.EngineSplitter(sources or current, engine or now_engine,
                                                          f"{base}+{letters}" if letters else base, caseless))


def _unicode_tables(c: Candidate) -> Candidate | None:
    """The model's regexes with another Unicode version's tables: Python's ``regex`` module for
    llama.cpp's (its own generated tables), llama.cpp's for tokenizers' (Oniguruma's): llama.cpp's
    own regex code where nothing else of the split was changed, its tables otherwise."""
    p = c.pipeline
    if isinstance(p, LlamaBpe):
        return resplit(c, tables="regex")
    if isinstance(p, HfBpe):
        sources = split_sources(p)
        if not sources:
            return None
        if splitter_of(p) is not None:
            return resplit(c, tables="llama.cpp")
        try:
            return _with_splitter(c, Pretokenizer(sources, "llama.cpp tables"))
        except Exception:  # a regex llama.cpp cannot run: no such variant for this model
            return None
    return None


def _newest_unicode_tables(c: Candidate) -> Candidate | None:
    """A tokenizer.json's split regexes read with the regex module's own tables, a Unicode newer than
    the Oniguruma 16.0 that tokenizers reads them with (an engine whose tables are the newest; those
    of Unicode 17, ICU4X 2.1's and Node's with ICU 78, are ``unicode.tables:17.0``). A GGUF's
    ``unicode.tables`` is this reading already."""
    return resplit(c, tables="regex") if isinstance(c.pipeline, HfBpe) else None


def _older_unicode_tables(tables: str, c: Candidate) -> Candidate | None:
    """The model's regexes with the classes of a Unicode older than the regex module's
    (``regex_engines.UNICODEDATA``: Python's ``unicodedata``, Unicode 3.2; ``regex_engines.ASSIGNED``:
    Unicode 17.0), as an engine whose character tables are that old reads them: a script added
    since is no letter to it, a digit no number. None where the split reads them already (Unicode
    16.0: a tokenizer.json's own)."""
    if _reading(c.pipeline)[1].partition("+")[0] == tables:
        return None
    return resplit(c, tables=tables)


# Llama 3's (and DeepSeek-V3's) digit groups: at most three digits a piece.
_DIGIT_GROUP = re.compile(r"\\p\{N\}\{1,3\}")


def _digits_whole(c: Candidate) -> Candidate | None:
    """A run of digits one piece (``\\p{N}+``) where the model's split groups digits by up to three."""
    sources = split_sources(c.pipeline)
    if not any(_DIGIT_GROUP.search(s) for s in sources):
        return None
    return resplit(c, sources=[_DIGIT_GROUP.sub(lambda _: "\\p{N}+", s) for s in sources])


# Each rule of a split written by hand in place of the model's regex, as the edit of that regex it
# amounts to: (the part it replaces, the part in its place, what it does). The first three are tokie
# 0.1.4's scanner, which picks its rule by a piece's first character (crates/pretokie/src/core/iter.rs),
# the last two bpe-qwen 0.1.5's passes over pieces (src/pretokenization_indices.rs).
# Spelt with \s outside classes only, so that another engine's \s (a composed reading) reads them too.
SCANNER_RULES = {
    "newline-run": (r"\s*[\r\n]+", r"(?:(?![\r\n])\s\s*)?[\r\n]+",
                    "a run of spaces that starts with a line break ends after the line breaks ('\\n \\n' is "
                    "'\\n', ' \\n'): a line break starts a rule of its own, and \\s*[\\r\\n]+ holds only for a run "
                    "that starts with another space"),
    "tab-prefix": (r" ?[^\s\p{L}\p{N}]+", r"[ \t]?[^\s\p{L}\p{N}]+",
                   "a tab prefixes punctuation as a space does ('\\t\"fmt' is '\\t\"', 'fmt'): one rule for a "
                   "space or a tab"),
    "space-prefix": (r"[^\r\n\p{L}\p{N}]?\p{L}+", r"(?:(?!(?=\s)[^\x00-\x7f])[^\r\n\p{L}\p{N}])?\p{L}+",
                     "a space outside ASCII (U+00A0, U+3000 …) never starts a word ('a\\u00a0b' is 'a', "
                     "'\\u00a0', 'b'): such a character goes to the rule for spaces, not to the letters' one "
                     "character before a word"),
    "number-prefix": (r"|\p{N}", r"|(?:(?=(?P<scanner_gift>(?![\r\n])\s))(?<=[\p{Alphabetic}\p{N}](?P=scanner_gift)*)"
                                r"(?P=scanner_gift)(?=(?![0-9])\p{N}))?\p{N}",
                      "a number that is no ASCII digit takes the space before it when a letter or a number comes "
                      "before that space and the spaces like it ('a ½' is 'a', ' ½'; 'a 1' and 'a \\t½' are as the "
                      "regex splits them): a space before a word and one before a number beyond ASCII are given alike"),
    "mixed-run": (r"\s+(?!\S)", r"(?:(?=(?P<scanner_space>\s)(?P=scanner_space)*(?!\s))\s+(?!\S)"
                                r"|(?=(?:(?![\r\n])\s)+(?!\s))\s+(?=\s)|\s+(?!\S))",
                  "a run of spaces (no line break) that mixes characters leaves its last one alone, as the regex "
                  "does before a word, even at the end of the text (' \\t' is ' ', '\\t'; '\\t\\t' stays whole): the run is "
                  "cut before its last character whatever follows"),
}


def _scanner_rule(rule: str, c: Candidate) -> Candidate | None:
    """The model's regexes with one of a hand-written scanner's rules in place of the part it
    stands for (``SCANNER_RULES``); None where no regex has that part."""
    part, in_place, _ = SCANNER_RULES[rule]
    # (a tokenizer.json may write \r and \n as the characters themselves: DeepSeek-V3's does)
    sources = [spelled_out(s) for s in split_sources(c.pipeline)]
    part, in_place = spelled_out(part), spelled_out(in_place)
    if not any(part in s for s in sources):
        return None
    return resplit(c, sources=[s.replace(part, in_place) for s in sources])


def _edit_contractions(change: Callable[[Contractions], Contractions | None], c: Candidate) -> Candidate | None:
    """The model's regexes with their contraction groups changed (``change``: a group's new
    reading, or None where it does not apply to that group)."""
    sources = split_sources(c.pipeline)
    edited = [contractions.edit(source, change) for source in sources]
    if all(e is None for e in edited):
        return None
    return resplit(c, sources=[e if e is not None else s for s, e in zip(sources, edited)])


def _whole_regex_caseless(c: Candidate) -> Candidate | None:
    """The case-insensitive contraction group made case-insensitive by a flag on the whole regex."""
    if not any(map(contractions.case_insensitive, split_sources(c.pipeline))):
        return None  # (no case-insensitive group: nothing a port had to rewrite)
    return resplit(c, caseless=True)


def contraction_variant(edit: str) -> Variant:
    """``pretokenizer.contractions`` for one form of a case's text: ``-'rE`` left out of the
    group (a list spelt case by case that lacks it), ``+'eR`` matched as one (a misspelt form
    in such a list)."""
    form = edit[1:]
    change = partial(Contractions.without if edit[0] == "-" else Contractions.adding, form=form)
    what = "left out of" if edit[0] == "-" else "added to"
    return Variant(f"pretokenizer.contractions:{edit}", "pretokenizer.contractions",
                   f"the contraction {form} {what} the split's contractions", partial(_edit_contractions, change),
                   lambda c, text: form in text)


def _alphabetic_letters(c: Candidate) -> Candidate | None:
    """The model's regexes with every Alphabetic code point a letter (``\\p{L}``), in the tables the
    split reads otherwise (llama.cpp's for a GGUF, Oniguruma's Unicode 16.0 for a tokenizer.json)."""
    return resplit(c, letters="alphabetic")


def _newest_nfkc(c: Candidate) -> Candidate | None:
    """NFKC by the newest Unicode tables (``unicodedata2``) before a tokenizer.json's own NFKC,
    which tokenizers runs with Unicode 9.0's: an engine whose runtime normalizes (JavaScript's
    ``String.normalize``, ICU) maps the compatibility characters added since (U+1CCF0 -> '0')."""
    p = c.pipeline
    if not (isinstance(p, HfPipeline) and any(k.kind == "NFKC" for k in p.normalizer.configs)):
        return None
    return c.replace(text_maps=c.text_maps + (_NEWEST_NFKC,))


_NEWEST_NFKC = partial(unicodedata2.normalize, "NFKC")



def variants() -> list[Variant]:
    """The split's variants (another regex list, another regex engine, contractions edited, a
    scanner's rules), in catalogue order."""
    out = [
        Variant("pretokenizer.none", "pretokenizer.none", "no split regex at all", _pretokenizer_none),
        Variant("pretokenizer.digits", "pretokenizer.digits",
                "a run of digits kept whole (\\p{N}+) where the split takes at most three (\\p{N}{1,3})", _digits_whole),
    ]
    for key, name in PRETOKENIZER_NAMES.items():
        out.append(Variant(f"pretokenizer.{name}", f"pretokenizer.{name}", f"the split regexes of '{name}'",
                           partial(_pretokenizer_as, key)))
    out.append(Variant("pretokenizer.contractions:lower-case", "pretokenizer.contractions",
                       "the split's contractions in lower case only ('s, 're …; not 'S, 'Re …), the model's "
                       "case-insensitive group read case-sensitively", partial(_edit_contractions, Contractions.lower_case),
                       lambda c, text: beyond_lower_case(text)))
    out.append(Variant("pretokenizer.contractions:ascii-case", "pretokenizer.contractions",
                       "the split's contractions spelt with each letter's two ASCII cases ('[sS], '[rR][eE] …, as "
                       "transformers.js rewrites (?i:…)): 'ſ (long s, whose case fold is s) is no contraction",
                       partial(_edit_contractions, Contractions.ascii_case), lambda c, text: "'\u017f" in text))
    out.append(Variant("pretokenizer.contractions:flag-i", "pretokenizer.contractions",
                       "the whole split regex case-insensitive (JavaScript's i flag in place of the (?i:…) group): "
                       "a character matches by its case fold (U+0345 is a letter), \\p{Lu} and \\p{Ll} take every case",
                       _whole_regex_caseless))
    for engine, what in regex_engines.ENGINES.items():
        out.append(Variant(f"pretokenizer.regex-engine:{engine}", "pretokenizer.regex-engine", what,
                           partial(_regex_engine, engine), _has_non_ascii_word if engine == "c-bytes" else None))
    for rule, (_, _, what) in SCANNER_RULES.items():
        out.append(Variant(f"{SCANNER}:{rule}", SCANNER, what, partial(_scanner_rule, rule)))
    return out


def unicode_variants() -> list[Variant]:
    """The split regexes read with other Unicode tables, in catalogue order."""
    return [
        Variant("unicode.tables", "unicode.tables", "the split regexes read with another Unicode version's tables",
                _unicode_tables),
        Variant("unicode.tables:newest", "unicode.tables",
                f"the split regexes read with the newest Unicode tables (the regex module {regex.__version__}'s), not "
                "tokenizers' Oniguruma's Unicode 16.0", _newest_unicode_tables),
        Variant("unicode.tables:17.0", "unicode.tables",
                "the split regexes read with Unicode 17.0's tables (ICU4X 2.1's, Rust's in tokie 0.1.4, those quicktok-v1 "
                "took from the regex module 2026.5.9)",
                partial(_older_unicode_tables, "17.0")),
        Variant("unicode.tables:16.0", "unicode.tables",
                "the split regexes read with Unicode 16.0's tables, as tokenizers' Oniguruma 6.9.10 reads them",
                partial(_older_unicode_tables, "16.0")),
        Variant("unicode.tables:python", "unicode.tables",
                f"the split regexes read with Python's unicodedata tables (Unicode {unicodedata.unidata_version})",
                partial(_older_unicode_tables, "python")),
        Variant("unicode.tables:3.2", "unicode.tables", "the split regexes read with Unicode 3.2's tables",
                partial(_older_unicode_tables, "3.2")),
        Variant("unicode.tables:nfkc", "unicode.tables",
                f"NFKC by Unicode {unicodedata2.unidata_version}'s tables (as a runtime's String.normalize), not "
                "tokenizers' Unicode 9.0", _newest_nfkc),
        Variant("unicode.alphabetic", "unicode.alphabetic",
                "letters read as Unicode's Alphabetic property (Rust's is_alphabetic): letter numbers such as Ⅻ, vowel "
                "signs and circled letters are \\p{L} too", _alphabetic_letters),
    ]
