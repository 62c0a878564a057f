"""The root-cause catalogue as code: each cause a named deviation of the reference.

A cause (``docs/catalogue/causes.md``) says what a backend does differently from
the oracle, as ``stage.deviation``. Here each one is a ``Variant``: a function that takes the
reference (a ``Candidate``) and returns a copy in which that one thing is done the other way,
or ``None`` where the deviation means nothing for this model (no charsmap to skip, no merges to
reorder). A diagnosis then asks which variants make the reference give the backend's ids.

Each deviation is written against the pipelines of ``tokparity.reference`` (llama.cpp's,
SentencePiece's and tokenizers'), through the switches and stages they expose; "the other way"
is a toggle where the model's setting is a flag (a dummy prefix added where the file says none,
or omitted where it says one), so one variant covers both directions.

A vocabulary small enough to follow by hand, as llama.cpp reads a SentencePiece-BPE GGUF, and
three variants of the reference on it (``catalogue()`` holds them all):

    >>> from tokparity.reference import RefTokenizer
    >>> from tokparity.vocab.model import Flags, TokenType as T, Vocab
    >>> vocab = Vocab("spm", ["<unk>", "<s>", "▁", "a", "b", "ab", "▁a"], scores=[0, 0, -1, -2, -2, -0.5, -3],
    ...               token_types=[T.UNKNOWN, T.CONTROL] + [T.NORMAL] * 5, flags=Flags(add_space_prefix=True),
    ...               source_format="gguf")
    >>> reference = base_candidate(RefTokenizer(vocab))
    >>> variants = {v.key: v for v in catalogue()}
    >>> reference.encode("ab", add_special=False, parse_special=False)        # '▁', 'ab'
    [2, 5]
    >>> greedy = variants["model.greedy-longest-match"].apply(reference)
    >>> greedy.encode("ab", add_special=False, parse_special=False)           # '▁a', 'b'
    [6, 4]
    >>> no_prefix = variants["space.dummy-prefix"].apply(reference)
    >>> no_prefix.encode("ab", add_special=False, parse_special=False)        # 'ab'
    [5]
    >>> variants["normalizer.nfkc"].apply(reference) is None                  # no charsmap to replace
    True
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import regex
import unicodedata2

from tokparity.components import AddedToken
from tokparity.components import normalizers as hf_components
from tokparity.diagnose import contractions, nfd_first, plain_object, regex_engines, special_releases
from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.contractions import Contractions, beyond_lower_case
from tokparity.reference.backtracking import Backtracking
from tokparity.reference.bpe import RightmostFirst
from tokparity.reference.greedy import LongestMatch
from tokparity.reference.hf import HfBpe, HfPipeline, KeyedRanks
from tokparity.reference.llama import LlamaBpe, LlamaCppPipeline, LlamaSpm, LlamaUgm, LlamaWpm
from tokparity.reference.pretokenize import REGEXES, Pretokenizer
from tokparity.reference.rwkv import RwkvPipeline
from tokparity.reference.sentencepiece import SentencePieceBpe, SentencePiecePipeline
from tokparity.reference.spm import byte_piece
from tokparity.reference.ugm import UgmModel
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte

# The order in which causes of one case are joined ("space.escape+model.greedy-longest-match").
STAGES = ("library", "input", "normalizer", "whitespace", "space", "pretokenizer", "model", "bytes", "unk", "specials", "user-defined",
          "bos", "eos", "unicode", "vocab")


def stage_of(cause: str) -> str:
    head = cause.split(".", 1)[0]
    return head if head in STAGES else "vocab"


# Stages whose variants each replace the same part of the pipeline (one normalizer, one whitespace
# rule, one split, one segmentation, one fallback, one way to add BOS): two of them at once are
# not one engine's bugs but a second reading (NFD toggled on the few texts where accents are not
# stripped either). The other stages' variants are independent switches: spaces not escaped *and*
# no dummy prefix; special-token text parsed *and* not stripped.
EXCLUSIVE_STAGES = frozenset({"library", "normalizer", "whitespace", "pretokenizer", "model", "bytes", "unk", "bos"})
# Causes that make an engine fail on some texts rather than give other ids: one goes with any deviation
# of the ids, its own stage's included (a JavaScript engine's lookups can fail whatever its merge does).
FAILURES = frozenset({"model.prototype-lookup"})


# Keys of the variants made for one case, from its tokens or its text: two of one cause are two
# tokens (or two contraction forms) of the case, each its own.
CONTRACTION_FORMS = ("pretokenizer.contractions:-", "pretokenizer.contractions:+")  # a form left out, one added
PER_CASE = ("specials.ids:", "user-defined.atomic:", *CONTRACTION_FORMS)
# A split variant that edits one part of the model's regexes (its contractions) goes with one that
# reads the same regexes otherwise (another engine's \s, digits kept whole), not with another split.
SPLIT_EDIT = "pretokenizer.contractions"
SPLIT_READINGS = frozenset({"pretokenizer.regex-engine", "pretokenizer.digits"})
# The rules of a split written by hand as a scanner: each member edits another part of the regexes, so
# an engine may have any number of them, with any edit or reading of the rest.
SCANNER = "pretokenizer.scanner"


def cause_of(key: str) -> str:
    """The catalogue name a variant's key stands for ("pretokenizer.regex-engine:ecmascript" ->
    "pretokenizer.regex-engine")."""
    return key.split(":", 1)[0]


def combinable(a: str, b: str) -> bool:
    """Whether the variants ``a`` and ``b`` (keys) may be two deviations of one engine: not two
    readings of one cause (unless each is about another token), not two of an exclusive stage."""
    if a == b:
        return False
    cause_a, cause_b = cause_of(a), cause_of(b)
    if cause_a == cause_b:
        if cause_a == SPLIT_EDIT:  # forms of a hand-written list, and at most one way it was spelt
            return a.startswith(PER_CASE) or b.startswith(PER_CASE)
        if cause_a == SCANNER:
            return True
        return a.startswith(PER_CASE) and b.startswith(PER_CASE)  # two tokens of a case, each its own
    if cause_a in FAILURES or cause_b in FAILURES:
        return True
    if SPLIT_EDIT in (cause_a, cause_b) and {cause_a, cause_b} - {SPLIT_EDIT} <= SPLIT_READINGS:
        return True
    if SCANNER in (cause_a, cause_b) and {cause_a, cause_b} - {SCANNER} <= SPLIT_READINGS | {SPLIT_EDIT}:
        return True
    stage = stage_of(cause_a)
    if stage != stage_of(cause_b):
        return True
    return stage not in EXCLUSIVE_STAGES


@dataclass(frozen=True)
class Variant:
    key: str  # unique: the cause, and for a family the member ("pretokenizer.regex-engine:ecmascript")
    cause: str  # the catalogue name it reproduces
    detail: str  # what exactly the variant does, for the evidence
    apply: Callable[[Candidate], Candidate | None]
    # Whether the variant (built: the candidate) can change anything of a text; None: it may
    # change any. A variant of the input text that cannot (no NUL to cut at) is not encoded.
    affects: Callable[[Candidate, str], bool] | None = None
    # A deviation that may change nothing alone where another shows it (another release's special
    # tokens, with parsing off, show only where the text is cut at special-token text): the
    # run's verdict tries it as one more part even where no case's own set held it.
    needs_another: bool = False

    @property
    def stage(self) -> int:
        return STAGES.index(stage_of(self.cause))

    @property
    def fails(self) -> bool:
        """Whether the variant makes the engine fail (no ids) rather than give other ids."""
        return self.cause in FAILURES


def _with(c: Candidate, pipeline) -> Candidate:
    return c.replace(pipeline=pipeline)


def _is_ugm_or_sp(p) -> bool:
    return isinstance(p, (LlamaUgm, SentencePiecePipeline))


def _renormalized(c: Candidate, **changes) -> Candidate | None:
    """The pipeline with its SentencePiece-style normalizer rebuilt with ``changes``."""
    p = c.pipeline
    if not _is_ugm_or_sp(p):
        return None
    return _with(c, fork(p, normalizer=p.normalizer.replaced(**changes)))


# --- the input, before the tokenizer sees it --------------------------------------------------------


def _text_map(text_map: Callable[[str], str], c: Candidate) -> Candidate | None:
    return c.replace(text_maps=c.text_maps + (text_map,))


def cut_at_nul(text: str) -> str:
    """A C string's reading: what comes before the first NUL."""
    return text.split("\0", 1)[0]


_LINE_BREAK = re.compile("[\n\r]")


def first_line(text: str) -> str:
    """A line reader's: what comes before the first line break."""
    return _LINE_BREAK.split(text, 1)[0]


def _whitespace_piece(c: Candidate) -> Candidate | None:
    return c.replace(whitespace_piece=True)



_UNICODE_STEPS = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Precompiled", "StripAccents", "BertNormalizer"}


def _normalizer_none(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if _is_ugm_or_sp(p):
        return _renormalized(c, charsmap=None) if p.normalizer.charsmap is not None else None
    if isinstance(p, HfBpe) and any(k.kind in _UNICODE_STEPS for k in p.normalizer.configs):
        return _with(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind in _UNICODE_STEPS)))
    if isinstance(p, LlamaWpm) and (p.lowercase or p.strip_accents):
        return _with(c, fork(p, lowercase=False, strip_accents=False))
    return None


# What ports that "simplify" the charsmap write instead (transformers.js's Precompiled normalizer):
# C0 controls dropped, Unicode spaces, ZWJ/ZWNJ and U+2581 turned into spaces, then NFKC.
_SIMPLIFIED_DROP = re.compile("[\u0001-\u0008\u000b\u000e-\u001f\u007f\u008f\u009f]")
_SIMPLIFIED_SPACE = re.compile("[\t\n\u000c\r\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u2581\u3000"
                               "\ufeff\ufffd]")


def simplified_charsmap(text: str) -> str:
    return unicodedata.normalize("NFKC", _SIMPLIFIED_SPACE.sub(" ", _SIMPLIFIED_DROP.sub("", text)))


class _Nfkc:
    """NFKC from Python's ``unicodedata`` in place of the model's charsmap (``simplified``: with the
    control and space rules ports add around it)."""

    def __init__(self, inner, simplified: bool = False):
        self.inner, self.simplified = inner, simplified

    def normalize(self, text: str) -> str:
        return self.inner.normalize(simplified_charsmap(text) if self.simplified else
                                    unicodedata.normalize("NFKC", text))

    # A second variant of the same case (whitespace.collapse, space.escape, …) rebuilds the
    # normalizer with one setting changed and reads its settings: both go to the SentencePiece
    # normalizer inside, which keeps NFKC in front (without them the pair raised AttributeError
    # and the case lost its cause).
    def replaced(self, **changes) -> _Nfkc:
        return _Nfkc(self.inner.replaced(**changes), self.simplified)

    def __getattr__(self, name: str):
        if name == "inner" or name.startswith("__"):  # (a copy being made has no inner yet)
            raise AttributeError(name)
        return getattr(self.inner, name)


def _normalizer_nfkc(c: Candidate, simplified: bool = False) -> Candidate | None:
    p = c.pipeline
    if _is_ugm_or_sp(p) and p.normalizer.charsmap is not None:
        return _with(c, fork(p, normalizer=_Nfkc(p.normalizer.replaced(charsmap=None), simplified)))
    if simplified:
        return None
    if isinstance(p, HfBpe) and p.normalizer.has("Precompiled"):
        q = fork(p, normalizer=p.normalizer.without(lambda k: k.kind == "Precompiled"))
        return c.replace(pipeline=q, text_maps=c.text_maps + (partial(unicodedata.normalize, "NFKC"),))
    return None


def _unicode_form(form: str, c: Candidate) -> Candidate | None:
    """Apply the form where the model does not, or skip it where the model's normalizer has it."""
    p = c.pipeline
    if isinstance(p, HfBpe) and p.normalizer.has(form):
        return _with(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind == form)))
    return c.replace(text_maps=c.text_maps + (partial(unicodedata.normalize, form),))  # type: ignore[arg-type]


_CANONICAL_FORMS = ("NFC", "NFD")


def _nfd_first(normalize: Callable[[str], str], c: Candidate) -> Candidate | None:
    """The model's NFC or NFD step (a tokenizer.json's) run by llama.cpp's one-code-point NFD
    instead (``nfd_first.py``: ``normalize``, alone or recomposed as pytorch-tokenizers does)."""
    p = c.pipeline
    if not isinstance(p, HfPipeline) or not any(k.kind in _CANONICAL_FORMS for k in p.normalizer.configs):
        return None
    return _with(c, fork(p, normalizer=p.normalizer.replacing(lambda k: k.kind in _CANONICAL_FORMS, normalize)))


def _lowercase(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaWpm):
        return _with(c, fork(p, lowercase=not p.lowercase))
    if isinstance(p, HfBpe) and p.normalizer.has("Lowercase"):
        return _with(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind == "Lowercase")))
    return c.replace(text_maps=c.text_maps + (str.lower,))


def strip_accents(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")


def _strip_accents(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaWpm):
        return _with(c, fork(p, strip_accents=not p.strip_accents))
    return c.replace(text_maps=c.text_maps + (strip_accents,))


# --- whitespace and spaces --------------------------------------------------------------------------


def collapse_spaces(text: str) -> str:
    """SentencePiece's ``remove_extra_whitespaces`` on the raw text: runs of spaces squeezed,
    leading and trailing ones dropped."""
    return " ".join(w for w in text.split(" ") if w)


class _TokenizersWhitespace:
    """transformers' SentencePiece -> tokenizers converter in place of ``remove_extra_whitespaces``:
    ``Strip`` (right: every Unicode whitespace, newlines included), ``Replace(" {2,}", "▁")``, then
    ``Metaspace`` (spaces -> "▁", a "▁" prepended unless the text starts with one)."""

    def __init__(self, inner):
        self.inner = inner.replaced(remove_extra_whitespaces=False, add_space_prefix=False, escape_whitespaces=False)

    def normalize(self, text: str) -> str:
        s = _SPACE_RUNS.sub("\u2581", self.inner.normalize(text).rstrip()).replace(" ", "\u2581")
        return s if not s or s.startswith("\u2581") else "\u2581" + s

    def replaced(self, **changes) -> _TokenizersWhitespace:
        return _TokenizersWhitespace(self.inner.replaced(**changes))

    def __getattr__(self, name: str):
        if name == "inner" or name.startswith("__"):  # (a copy being made has no inner yet)
            raise AttributeError(name)
        return getattr(self.inner, name)


_SPACE_RUNS = re.compile(" {2,}")


def _whitespace_as_tokenizers(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if not _is_ugm_or_sp(p) or not p.normalizer.add_space_prefix:
        return None
    return _with(c, fork(p, normalizer=_TokenizersWhitespace(p.normalizer)))


def _whitespace_other_flavour(c: Candidate) -> Candidate | None:
    """SentencePiece's and llama.cpp's implementations of the same flags differ on whitespace
    (normalize.py says how): the other one's."""
    p = c.pipeline
    if not _is_ugm_or_sp(p) or not hasattr(p.normalizer, "flavour"):
        return None
    other = "llama.cpp" if p.normalizer.flavour == "sentencepiece" else "sentencepiece"
    return _renormalized(c, flavour=other)


def _whitespace_collapse(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if _is_ugm_or_sp(p):
        return _renormalized(c, remove_extra_whitespaces=not p.normalizer.remove_extra_whitespaces)
    if isinstance(p, (LlamaSpm, HfBpe)):
        return c.replace(text_maps=c.text_maps + (collapse_spaces,))
    return None


def _is_space_escape(k) -> bool:
    return isinstance(k, hf_components.Replace) and not k.is_regex and k.pattern == " " and k.content == "\u2581"


def _space_escape(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm):
        return _with(c, fork(p, escape_spaces=not p.escape_spaces))
    if _is_ugm_or_sp(p):
        return _renormalized(c, escape_whitespaces=not p.normalizer.escape_whitespaces)
    if isinstance(p, HfBpe) and any(_is_space_escape(k) for k in p.normalizer.configs):
        return _with(c, fork(p, normalizer=p.normalizer.without(_is_space_escape)))
    if isinstance(p, LlamaBpe) and not p.pre.byte_encode:  # Gemma 4's SPM-style BPE
        q = fork(p)
        q.flags.escape_whitespaces = not q.flags.escape_whitespaces
        return _with(c, q)
    return None


def _dummy_prefix(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm):
        q = fork(p)
        q.flags.add_space_prefix = not q.flags.add_space_prefix
        return _with(c, q)
    if _is_ugm_or_sp(p):
        out = _renormalized(c, add_space_prefix=not p.normalizer.add_space_prefix)
        if out is not None and isinstance(p, LlamaUgm):
            out.pipeline.flags.add_space_prefix = not p.flags.add_space_prefix
        return out
    if isinstance(p, HfBpe):
        if p.normalizer.has("Prepend"):
            return _with(c, fork(p, normalizer=p.normalizer.without(lambda k: k.kind == "Prepend")))
        if any(_is_space_escape(k) for k in p.normalizer.configs):
            return _with(c, fork(p, normalizer=p.normalizer.with_step(_prepend_mark, hf_components.Prepend("\u2581"))))
    return None


def _prefix_unless_space(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm) and p.flags.add_space_prefix:
        return _with(c, fork(p, prefix_unless_space=True))
    if isinstance(p, HfBpe) and not p.normalizer.has("Prepend") and any(_is_space_escape(k) for k in p.normalizer.configs):
        step = p.normalizer.with_step(_prepend_mark_unless_one, hf_components.Prepend("\u2581"))
        return _with(c, fork(p, normalizer=step))
    return None


def _prepend_mark_unless_one(text: str) -> str:
    return text if not text or text.startswith("\u2581") else "\u2581" + text


def _prepend_mark(text: str) -> str:
    return "\u2581" + text if text else text


def _prefix_every_split(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm) and p.flags.add_space_prefix:
        return _with(c, fork(p, prefix_every_fragment=not p.prefix_every_fragment))
    return None


# --- pre-tokenizer ----------------------------------------------------------------------------------

# The cause names of the table's regex lists ("behaves like gpt-2"); "none" splits nothing.
PRETOKENIZER_NAMES = {key: ("gpt-2" if key == "gpt2" else key) for key in REGEXES}


class _Split:
    """A list of split regexes standing in for a tokenizer.json pre-tokenizer (byte-level or not)."""

    def __init__(self, splitter, byte_level: bool):
        self.splitter, self.byte_level = splitter, byte_level

    def __call__(self, text: str, at_start: bool = True) -> list[str]:
        from tokparity.reference.pretokenize import bytes_to_gpt2
        words = [w for w in self.splitter.split(text) if w]
        return [bytes_to_gpt2(w) for w in words] if self.byte_level else words


def _splits(p) -> bool:
    """Whether a split regex of ``_with_splitter``'s can stand in for the pipeline's split."""
    return isinstance(p, LlamaBpe) or isinstance(p, HfBpe) and p.pretokenizer.byte_level


def _with_splitter(c: Candidate, splitter, **changes) -> Candidate | None:
    """``splitter`` in place of the model's split (``changes``: what else the copy of a llama.cpp
    pipeline changes)."""
    p = c.pipeline
    if not _splits(p):
        return None
    if isinstance(p, LlamaBpe):
        return _with(c, fork(p, pretokenizer=splitter, **changes))
    return _with(c, fork(p, pretokenizer=_Split(splitter, byte_level=True), **changes))


def _pretokenizer_as(key: str, c: Candidate) -> Candidate | None:
    p = c.pipeline
    if list(map(_spelled_out, _split_sources(p))) == _SPELLED_REGEXES[key]:
        # The model's own split. For a tokenizer.json it would differ only in reading llama.cpp's
        # Unicode tables, which is unicode.tables, not another pre-tokenizer.
        return None
    if key == "whitespace" and _is_ugm_or_sp(p) and p.normalizer.add_space_prefix:
        return c.replace(text_maps=c.text_maps + (split_on_white_space,))
    return _with_splitter(c, Pretokenizer(REGEXES[key], key)) if _splits(p) else None  # (compiled only where it can be used)


_PLAIN = {"r": "\r", "n": "\n", "t": "\t", '"': '"'}


def _spelled_out(source: str) -> str:
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


_SPELLED_REGEXES = {key: list(map(_spelled_out, sources)) for key, sources in REGEXES.items()}


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
        return _with_splitter(c, Pretokenizer([], "none"), whole_words={
            t: i for t, i in p.token_to_id.items() if c.vocab.type_of(i) != TokenType.CONTROL})
    return _with_splitter(c, Pretokenizer([], "none"))


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
    return _resplit(c, engine=engine, tables=tables)


def _split_sources(p) -> list[str]:
    """The split regexes the pipeline runs, in the ECMAScript-like syntax the engines share: the
    model's, or those another variant of a composed set put in their place."""
    splitter = _splitter(p)
    if splitter is not None:
        return list(splitter.sources) if hasattr(splitter, "sources") else [r.source for r in splitter.regexes]
    if isinstance(p, HfBpe):
        return regex_engines.hf_split_sources(p.spec.pre_tokenizer)
    return []


def _splitter(p):
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
    splitter = _splitter(p)
    if isinstance(splitter, regex_engines.EngineSplitter):
        return splitter.engine, splitter.tables
    return "unicode", "llama.cpp" if isinstance(p, LlamaBpe) else "16.0"


def _resplit(c: Candidate, *, sources: list[str] | None = None, engine: str | None = None,
             tables: str | None = None, letters: str | None = None, caseless: bool = False) -> Candidate | None:
    """The pipeline's split with one aspect changed (its regexes, the regex engine reading them,
    the Unicode tables, what a letter is: ``letters="alphabetic"``, the whole regex case-insensitive)
    and the others as the pipeline reads them now: a variant composed after another (variants
    apply in stage order: a split regex or engine first, then Unicode's tables and letters) keeps
    what that one changed."""
    current = _split_sources(c.pipeline)
    if not current:
        return None
    now_engine, now_tables = _reading(c.pipeline)
    now_base, _, now_letters = now_tables.partition("+")
    base, letters = tables or now_base, letters or now_letters
    caseless = caseless or getattr(_splitter(c.pipeline), "caseless", False)
    return _with_splitter(c, regex_engines.EngineSplitter(sources or current, engine or now_engine,
                                                          f"{base}+{letters}" if letters else base, caseless))


def _unicode_tables(c: Candidate) -> Candidate | None:
    """The model's regexes with another Unicode version's tables: Python's ``regex`` module for
    llama.cpp's (its own generated tables), llama.cpp's for tokenizers' (Oniguruma's): llama.cpp's
    own regex code where nothing else of the split was changed, its tables otherwise."""
    p = c.pipeline
    if isinstance(p, LlamaBpe):
        return _resplit(c, tables="regex")
    if isinstance(p, HfBpe):
        sources = _split_sources(p)
        if not sources:
            return None
        if _splitter(p) is not None:
            return _resplit(c, tables="llama.cpp")
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
    return _resplit(c, tables="regex") if isinstance(c.pipeline, HfBpe) else None


def _older_unicode_tables(tables: str, c: Candidate) -> Candidate | None:
    """The model's regexes with the classes of a Unicode older than the regex module's
    (``regex_engines.UNICODEDATA``: Python's ``unicodedata``, Unicode 3.2; ``regex_engines.ASSIGNED``:
    Unicode 17.0), as an engine whose character tables are that old reads them: a script added
    since is no letter to it, a digit no number. None where the split reads them already (Unicode
    16.0: a tokenizer.json's own)."""
    if _reading(c.pipeline)[1].partition("+")[0] == tables:
        return None
    return _resplit(c, tables=tables)


# Llama 3's (and DeepSeek-V3's) digit groups: at most three digits a piece.
_DIGIT_GROUP = re.compile(r"\\p\{N\}\{1,3\}")


def _digits_whole(c: Candidate) -> Candidate | None:
    """A run of digits one piece (``\\p{N}+``) where the model's split groups digits by up to three."""
    sources = _split_sources(c.pipeline)
    if not any(_DIGIT_GROUP.search(s) for s in sources):
        return None
    return _resplit(c, sources=[_DIGIT_GROUP.sub(lambda _: "\\p{N}+", s) for s in sources])


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
    sources = [_spelled_out(s) for s in _split_sources(c.pipeline)]
    part, in_place = _spelled_out(part), _spelled_out(in_place)
    if not any(part in s for s in sources):
        return None
    return _resplit(c, sources=[s.replace(part, in_place) for s in sources])


def _edit_contractions(change: Callable[[Contractions], Contractions | None], c: Candidate) -> Candidate | None:
    """The model's regexes with their contraction groups changed (``change``: a group's new
    reading, or None where it does not apply to that group)."""
    sources = _split_sources(c.pipeline)
    edited = [contractions.edit(source, change) for source in sources]
    if all(e is None for e in edited):
        return None
    return _resplit(c, sources=[e if e is not None else s for s, e in zip(sources, edited)])


def _whole_regex_caseless(c: Candidate) -> Candidate | None:
    """The case-insensitive contraction group made case-insensitive by a flag on the whole regex."""
    if not any(map(contractions.case_insensitive, _split_sources(c.pipeline))):
        return None  # (no case-insensitive group: nothing a port had to rewrite)
    return _resplit(c, caseless=True)


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
    return _resplit(c, letters="alphabetic")


def _newest_nfkc(c: Candidate) -> Candidate | None:
    """NFKC by the newest Unicode tables (``unicodedata2``) before a tokenizer.json's own NFKC,
    which tokenizers runs with Unicode 9.0's: an engine whose runtime normalizes (JavaScript's
    ``String.normalize``, ICU) maps the compatibility characters added since (U+1CCF0 -> '0')."""
    p = c.pipeline
    if not (isinstance(p, HfPipeline) and any(k.kind == "NFKC" for k in p.normalizer.configs)):
        return None
    return c.replace(text_maps=c.text_maps + (_NEWEST_NFKC,))


_NEWEST_NFKC = partial(unicodedata2.normalize, "NFKC")


# --- model ------------------------------------------------------------------------------------------

_GREEDY_TYPES = (TokenType.NORMAL, TokenType.USER_DEFINED)


def _greedy(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaWpm):
        return None  # WordPiece is greedy longest match already
    vocab = c.vocab
    if isinstance(p, HfBpe):  # (a byte piece's text, '<0x0A>', is not text to match)
        added = frozenset(p.added_ids)
        matcher = _per_vocab(vocab, ("greedy", added), lambda: LongestMatch(tuple(
            t for i, t in enumerate(p.tokens) if i not in added and vocab.type_of(i) != TokenType.BYTE)))
    else:
        types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        matcher = _per_vocab(vocab, ("greedy",), lambda: LongestMatch(tuple(
            t for t, ty in zip(vocab.tokens, types) if ty in _GREEDY_TYPES)))
    return _with(c, fork(p, greedy=matcher))


def _backtracking(c: Candidate) -> Candidate | None:
    """The `bpe` crate's backtracking encoder over the model's own tokens ranked by id (no added
    token: an engine that ports the crate reads the tokenizer.json's model vocabulary, or a
    tiktoken file), in place of the merges; only where one character of a token is one byte."""
    p = c.pipeline
    if not _splits(p) or isinstance(p, LlamaBpe) and not p.pre.byte_encode:
        return None
    if isinstance(p, HfBpe) and (p.spec.model.continuing_subword_prefix or p.spec.model.end_of_word_suffix):  # type: ignore[union-attr]
        return None  # (its tokens are not byte strings alone)
    added = frozenset(p.added_ids) if isinstance(p, HfBpe) else frozenset()
    encoder = _per_vocab(c.vocab, ("backtracking", added), lambda: _backtracking_encoder(p, c.vocab, added))
    return _with(c, fork(p, greedy=encoder)) if encoder is not None else None


def _backtracking_encoder(p, vocab: Vocab, added: frozenset[int]) -> Backtracking | None:
    """The encoder over the pipeline's own tokens (once per vocabulary: a candidate is built again
    and again), or None where some byte is no token, which the crate's encoder needs (the blind
    port refuses such a vocabulary)."""
    if isinstance(p, HfBpe):
        tokens = [None if i in added else t for i, t in enumerate(p.tokens)]
    else:
        types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        tokens = [t if ty == TokenType.NORMAL else None for t, ty in zip(vocab.tokens, types)]
    return Backtracking(tokens) if set(gpt2_unicode_to_byte()) <= set(tokens) else None


# What a variant builds from a whole vocabulary (a longest-match trie, a pattern of its special
# texts), made once per vocabulary and kind: candidates are built again and again (a composed set
# is a new one, and only the last CANDIDATES_KEPT stay built).
_BUILT_FROM_VOCAB: dict[tuple, tuple[object, object]] = {}


def _per_vocab(vocab, kind: tuple, make: Callable[[], object]):
    key = (id(vocab), kind)
    found = _BUILT_FROM_VOCAB.get(key)
    if found is None or found[0] is not vocab:  # (an id outlives its vocabulary)
        if len(_BUILT_FROM_VOCAB) > 16:
            _BUILT_FROM_VOCAB.clear()
        found = _BUILT_FROM_VOCAB[key] = (vocab, make())
    return found[1]


def _merge_by_score(c: Candidate) -> Candidate | None:
    """Merges allowed by the merge list but ordered by the merged token's score (or, with no
    scores, by its id: "a lower id was learned earlier", a common shortcut)."""
    p = c.pipeline
    if not isinstance(p, (LlamaBpe, HfBpe)) or not p.ranks:
        return None
    ids = p.token_to_id
    scores = c.vocab.scores
    by_score = scores is not None and len(set(scores[:1000])) > 1
    ranks: dict[tuple[str, str], float] = {}
    for pair in p.ranks:
        merged = ids.get(pair[0] + pair[1])
        if merged is not None:
            ranks[pair] = -scores[merged] if by_score and scores is not None else merged
    return _with(c, fork(p, ranks=ranks))


def _merge_by_rank(c: Candidate) -> Candidate | None:
    """SentencePiece-BPE merged in the order of a merge list (as converters write one: by the
    merged piece's id) instead of by the merged piece's score."""
    p = c.pipeline
    if not isinstance(p, (LlamaSpm, SentencePieceBpe)):
        return None
    ids = p.token_to_id
    return _with(c, fork(p, score_of={t: -float(ids[t]) for t in p.score_of if t in ids}))


def rightmost_ties(c: Candidate) -> Candidate | None:
    """The model's own merge priorities, equal-priority candidates merged rightmost first instead
    of leftmost first ("..." as '.'+'..' where every library writes '..'+'.'). Not a catalogue
    variant: a backend reproduced by it broke a tie, it has no bug (search.py, stages.merge_tie)."""
    p = c.pipeline
    if isinstance(p, (LlamaSpm, SentencePieceBpe)):
        return _with(c, fork(p, score_of=RightmostFirst(p.score_of)))
    if isinstance(p, (LlamaBpe, HfBpe)) and p.ranks:
        return _with(c, fork(p, ranks=RightmostFirst(p.ranks)))
    return None


def _ignore_merges(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaBpe):
        q = fork(p)
        q.flags.ignore_merges = not q.flags.ignore_merges
        return _with(c, q)
    if isinstance(p, HfBpe):
        return _with(c, fork(p, ignore_merges=not p.ignore_merges))
    return None


# --- bytes and <unk> --------------------------------------------------------------------------------


def _has_byte_pieces(vocab) -> bool:
    return all(vocab.id_of(byte_piece(b)) is not None for b in range(256))


def _byte_fallback(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaSpm):
        return _with(c, fork(p, byte_fallback=not p.byte_fallback)) if _has_byte_pieces(c.vocab) else None
    if isinstance(p, (LlamaUgm, SentencePiecePipeline, HfBpe)):
        if not p.byte_fallback and not _has_byte_pieces(c.vocab):
            return None
        return _with(c, fork(p, byte_fallback=not p.byte_fallback))
    return None


def _drop_unknown(c: Candidate) -> Candidate | None:
    """Characters outside the vocabulary dropped: neither <unk> nor byte pieces."""
    unk = unk_id_of(c.pipeline)
    if unk is None or unk in c.drop_ids:
        return None
    return c.replace(drop_ids=c.drop_ids | {unk})


LOOKUP_LEVEL = 6  # bytes a key packs (two 24-bit integers) before it nests another level


def packed_key(spelled: str) -> tuple[str, str]:
    """A byte-level token's key where its bytes are packed into integers a level at a time and a
    short last level is padded with zero bytes: trailing NUL bytes ('Ā' spelled) of that level
    are lost (one character of the spelling is one byte)."""
    cut = len(spelled) - len(spelled) % LOOKUP_LEVEL
    return spelled[:cut], spelled[cut:].rstrip("\u0100")


class _PackedRanks:
    """{packed key: id} of a vocabulary, filled in id order (a later id takes a key over), made on
    first use: a diagnosis needs it only for a text with a NUL in it. Every lookup, the whole
    piece's included, goes through the key (``HfBpe.keyed``)."""

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.ranks: dict[tuple[str, str], int] | None = None

    def rank(self, part: str) -> int | None:
        if self.ranks is None:
            self.ranks = {packed_key(t): i for i, t in enumerate(self.vocab.tokens) if t}
        return self.ranks.get(packed_key(part))

    whole = rank


def _lookup_key(make: Callable[[Candidate], KeyedRanks], kind: str, c: Candidate) -> Candidate | None:
    """tiktoken's merge by rank with every lookup through an engine's own rank map, whose keys
    lose bytes (``make``: built once per vocabulary). Byte-level BPE only (one character of a
    token is one byte)."""
    p, vocab = c.pipeline, c.vocab
    if not isinstance(p, HfBpe) or p.keyed is not None or vocab.id_of("\u0100") is None:
        return None
    return _with(c, fork(p, keyed=_per_vocab(vocab, (kind,), lambda: make(c))))


def _plain_object(table: str, c: Candidate) -> Candidate | None:
    """Every pre-token looked up whole in a plain JavaScript object first (``table``: "vocabulary",
    the tokens its keys, or "cache", empty; byte-level BPE: the engines that look a piece up by
    its text)."""
    if not isinstance(c.pipeline, (HfBpe, LlamaBpe)) or c.plain_object:
        return None
    return c.replace(plain_object=table)


BOM = "\u00ef\u00bb\u00bf"  # U+FEFF's UTF-8 bytes, EF BB BF, as a byte-level token spells them


class _DecodedRanks:
    """A rank map of two tables, as ai-tokenizer generates one: a token whose bytes decode to
    text that encodes back to them, keyed by that text; every other token (bytes that are not
    UTF-8, and those that start with a BOM, which a decoder drops) by its bytes. A whole piece is
    looked up as text, so a token that starts with a BOM is never found whole. A byte string of
    the merge that is UTF-8 is decoded first, its leading BOM dropped (TextDecoder's default), and
    looked up as text; only where that text is no token, by its bytes: EF BB BF + 'b' ranks, and
    at the end reads, as 'b'."""

    def __init__(self, ids: dict[str, int]):
        self.ids = ids  # the model's tokens (the rank map holds no special token)

    def whole(self, word: str) -> int | None:
        return None if word.startswith(BOM) else self.ids.get(word)

    def rank(self, part: str) -> int | None:
        if part.startswith(BOM):
            text = part[len(BOM):]
            found = self.ids.get(text) if text and not text.startswith(BOM) else None
            if found is not None and _is_utf8(text):
                return found
        return self.ids.get(part)


def _is_utf8(spelled: str) -> bool:
    """Whether a byte-level spelling's bytes are UTF-8 (as strict as Python's decoder and
    ai-tokenizer's isValidUTF8: no surrogates, no overlong forms)."""
    table = gpt2_unicode_to_byte()
    try:
        bytes(table[ch] for ch in spelled).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return False
    return True


def _unk_runs(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, (LlamaUgm, SentencePiecePipeline)):
        return _with(c, fork(p, merge_unk_runs=not p.merge_unk_runs))
    if isinstance(p, HfBpe) and p.unk_id is not None:
        return _with(c, fork(p, fuse_unk=not p.fuse_unk))
    return None


# --- specials, user-defined pieces, BOS/EOS ---------------------------------------------------------


def _specials_parse(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, RwkvPipeline):  # llama.cpp's RWKV trie matches control-token text whatever parse_special says
        return c.replace(pipeline=p.matching_every_token())
    if isinstance(p, SentencePiecePipeline) and not p.specials:  # SentencePiece never parses them
        from tokparity.reference.specials import Special
        types = c.vocab.token_types or []
        controls = [Special(i, c.vocab.tokens[i], parse_only=True) for i, t in enumerate(types)
                    if t in (TokenType.CONTROL, TokenType.UNKNOWN) and c.vocab.tokens[i]]
        controls.sort(key=lambda s: (-len(s.text), s.id))
        return c.replace(pipeline=fork(p, specials=controls), flip_parse=not c.flip_parse) if controls else None
    return c.replace(flip_parse=not c.flip_parse)


class _ParseAfterNormalizing:
    """tokenizers' added tokens marked ``normalized``: the whole text is normalized first (the dummy
    prefix included) and the special tokens are cut out of the normalized text; llama.cpp cuts
    them out of the raw text and normalizes each fragment."""

    def __init__(self, pipeline, specials):
        self.pipeline, self.specials = pipeline, specials

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        from tokparity.reference.specials import partition
        p = self.pipeline
        if not parse_special:
            return p.encode(text, add_special, parse_special)
        out = list(p.prefix_ids()) if add_special else []
        unk = unk_id_of(p)
        for frag in partition(p.normalize(text), self.specials, parse_special=True):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for token_id, _ in p.segment(frag):
                if not (token_id == unk and out and out[-1] == unk and p.merge_unk_runs):
                    out.append(token_id)
        return out + (list(p.suffix_ids()) if add_special else [])


def _parse_after_normalizing(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if not isinstance(p, LlamaUgm) or c.flip_parse:
        return None
    specials = [s for s in p.specials if s.parse_only]
    return c.replace(pipeline=_ParseAfterNormalizing(p, specials), flip_parse=True) if specials else None


MOST_SPECIAL_TEXTS = 4096  # (Llama 3 has 256; a file with a million control tokens gets no such variant)


def _segmented_at_specials(c: Candidate) -> Candidate | None:
    """The text cut at each special token's text, every part tokenized apart with parsing off
    (at another release's, where the candidate has them: specials.other-release)."""
    if c.other_release is not None:
        return c.replace(segment_at=c.other_release.pattern)
    p = c.pipeline
    vocab = c.vocab
    added = tuple(a.content for a in p.added if a.special and a.content) if isinstance(p, HfPipeline) else ()

    def pattern() -> re.Pattern | None:
        types = vocab.token_types or []
        texts = {vocab.tokens[i] for i, t in enumerate(types) if t in (TokenType.CONTROL, TokenType.UNKNOWN)}
        texts = (texts | set(added)) - {""}
        if not texts or len(texts) > MOST_SPECIAL_TEXTS:
            return None
        return special_releases.alternation(texts)

    segment_at = _per_vocab(vocab, ("specials", added), pattern)
    return c.replace(segment_at=segment_at) if segment_at is not None else None


def other_release_variant(release) -> Variant:
    """``specials.other-release:NAME``: the special tokens of ``release`` (special_releases.py) in
    place of the model's: parsed to that release's ids, and cut at where the text is cut at
    special-token text (with specials.segmented)."""
    def apply(c: Candidate) -> Candidate | None:
        if not _per_vocab(c.vocab, ("other release", release.key), lambda: release.sibling_of(c.vocab)):
            return None
        return c.replace(other_release=release, segment_at=release.pattern if c.segment_at is not None else None)
    def affects(c: Candidate, text: str) -> bool:
        differing = _per_vocab(c.vocab, ("other release differs", release.key), lambda: release.differing(c.vocab))
        return differing is not None and differing.search(text) is not None

    return Variant(f"specials.other-release:{release.key}", "specials.other-release",
                   f"the special tokens of {release.name} in place of the model's ({release.source})", apply, affects,
                   needs_another=True)


def _specials_strip(c: Candidate) -> Candidate | None:
    from dataclasses import replace
    p = c.pipeline
    if isinstance(p, LlamaCppPipeline) and any(s.lstrip or s.rstrip for s in p.specials):
        return _with(c, fork(p, specials=[replace(s, lstrip=False, rstrip=False) for s in p.specials]))
    if isinstance(p, HfBpe) and any(a.lstrip or a.rstrip for a in p.added):
        return _with(c, fork(p, added=[replace(a, lstrip=False, rstrip=False) for a in p.added]))
    return None


def _user_defined(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaCppPipeline):
        specials = [s for s in p.specials if s.parse_only]
        if len(specials) == len(p.specials):
            return None
        q = fork(p, specials=specials)
        if isinstance(p, LlamaUgm):
            q.normalizer = p.normalizer.replaced(user_defined=[])
        return _with(c, q)
    if isinstance(p, SentencePiecePipeline) and p.user_defined:
        q = fork(p, normalizer=p.normalizer.replaced(user_defined=[]))
        if isinstance(p, SentencePieceBpe):
            q.user_sorted = []
        return _with(c, q)
    if isinstance(p, HfBpe) and any(not a.special for a in p.added):
        return _with(c, fork(p, added=[a for a in p.added if a.special]))
    return None


def _out_of_the_model(c: Candidate) -> tuple[frozenset[int], object, bool] | None:
    """A tokenizer.json BPE's user-defined pieces (the added tokens that are not special) taken
    out of its model: their ids, the model with no merge that makes one, and whether any merge
    did. None where the pipeline is not one or has none."""
    p = c.pipeline
    if not isinstance(p, HfBpe):
        return None
    absent = frozenset(a.id for a in p.added if not a.special)
    if not absent:
        return None
    merges = _per_vocab(c.vocab, ("merges without", absent),
                        lambda: {pair: hit for pair, hit in p.model.merges.items() if hit[1] not in absent})
    model = copy.copy(p.model)
    model.merges = merges
    return absent, model, len(merges) < len(p.model.merges)


def _user_defined_absent(c: Candidate) -> Candidate | None:
    """An engine that loaded only the normal pieces: the user-defined ones are not matched whole,
    no merge makes one, a character that is one falls back to its bytes, a longest match never
    takes one (Gemma 3's tab pieces come out as byte pieces, its runs of spaces as single ones)."""
    found = _out_of_the_model(c)
    if found is None:
        return None
    absent, model, merged = found
    # Where no such piece is one character and no merge makes one, this is user-defined.atomic (the
    # pieces not matched whole) under another name: not offered.
    if not merged and not any(len(c.vocab.tokens[i]) == 1 for i in absent):
        return None
    p = c.pipeline
    return _with(c, fork(p, added=[a for a in p.added if a.special], absent=absent, model=model))


def _user_defined_unmergeable(c: Candidate) -> Candidate | None:
    """The user-defined pieces still matched whole in the text, but taken out of the model's
    vocabulary: no merge makes one (Gemma 3's '▁▁' from two '▁'), as an engine that keeps its
    added tokens apart from the BPE model's tokens."""
    found = _out_of_the_model(c)
    if found is None or not found[2]:  # (no merge makes one: nothing to take away)
        return None
    absent, model, _ = found
    return _with(c, fork(c.pipeline, absent=absent, model=model))


def _first_listed(c: Candidate) -> Candidate | None:
    """Added tokens matched as one alternation in id order (the first listed wins where several
    start at a position), not leftmost-longest: '\\n\\n' is two '\\n' where '\\n' has the lower id."""
    p = c.pipeline
    if not isinstance(p, HfPipeline) or p.added_first_listed is not None or not _prefixes_of_added(c):
        return None
    return _with(c, fork(p, added_first_listed={}))


def _prefixes_of_added(c: Candidate) -> re.Pattern | None:
    """The added tokens' texts that start a longer one's (where the order of matching shows), as
    one pattern; None where there are none. Made once per list of added tokens."""
    added = c.pipeline.added
    found = _PREFIXES_OF_ADDED.get(id(added))
    if found is None or found[0] is not added:  # (an id outlives its list)
        texts = sorted({a.content for a in added if a.content})
        shorter = [t for t, after in zip(texts, texts[1:]) if after.startswith(t)]
        if len(_PREFIXES_OF_ADDED) > 16:
            _PREFIXES_OF_ADDED.clear()
        found = _PREFIXES_OF_ADDED[id(added)] = (added, re.compile("|".join(map(re.escape, shorter))) if shorter else None)
    return found[1]


_PREFIXES_OF_ADDED: dict[int, tuple[list, re.Pattern | None]] = {}


class _PiecesAfterNormalizing:
    """SentencePiece's user-defined pieces: the text is normalized first (dummy prefix, '▁'), then
    the pieces are matched whole inside it and the rest is segmented (llama.cpp instead cuts them
    out of the raw text, so no '▁' is written before a piece that starts the text)."""

    def __init__(self, pipeline, pieces):
        self.pipeline, self.pieces = pipeline, pieces

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        from tokparity.reference.specials import partition
        p = self.pipeline
        out = list(p.prefix_ids()) if add_special else []
        for frag in partition(text, p.specials, parse_special):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for part in partition(p.normalize(frag), self.pieces, parse_special=False):
                out += [part] if isinstance(part, int) else p.encode_escaped(part)
        return out + (list(p.suffix_ids()) if add_special else [])


def user_defined_variant(token_id: int, whole: bool) -> Variant:
    """``user-defined.atomic`` for one piece: matched whole where the reference does not
    (``whole``), or not matched where it does; e.g. llama.cpp promotes ``</s>`` to a control token
    that plain text never matches, where SentencePiece and tokenizers keep it user-defined."""

    def apply(c: Candidate) -> Candidate | None:
        from dataclasses import replace

        from tokparity.reference.specials import Special
        p = c.pipeline
        text = c.vocab.tokens[token_id]
        if isinstance(p, LlamaCppPipeline):
            if not whole:
                specials = [s for s in p.specials if s.id != token_id]
                return _with(c, fork(p, specials=specials)) if len(specials) < len(p.specials) else None
            if isinstance(p, LlamaSpm):
                return c.replace(pipeline=_PiecesAfterNormalizing(p, [Special(token_id, text.replace(" ", "\u2581"))]))
            specials = [replace(s, parse_only=False) if s.id == token_id else s for s in p.specials]
            if not any(s.id == token_id for s in specials):
                specials.append(Special(token_id, text))
            return _with(c, fork(p, specials=specials))
        if isinstance(p, HfBpe):
            if not whole:
                added = [a for a in p.added if a.id != token_id]
                return _with(c, fork(p, added=added)) if len(added) < len(p.added) else None
            added = [replace(a, special=False) if a.id == token_id else a for a in p.added]
            if not any(a.id == token_id for a in added):
                added.append(AddedToken(token_id, text, normalized=False))
            return _with(c, fork(p, added=added))
        return None

    sign, what = ("+", "matched whole as a user-defined piece") if whole else ("-", "not matched whole")
    return Variant(f"user-defined.atomic:{sign}{token_id}", "user-defined.atomic", f"token {token_id} {what}", apply)


def _bos(mode: str, c: Candidate) -> Candidate | None:
    return c.replace(bos=mode) if c.bos_id is not None and not c.bos else None


def _eos(c: Candidate) -> Candidate | None:
    return c.replace(eos=True) if c.eos_id is not None and not c.eos else None


def unk_id_of(p) -> int | None:
    if isinstance(p, LlamaUgm):
        return p.model.unk_id
    if isinstance(p, LlamaCppPipeline):
        return p.flags.specials.get("unk")
    return getattr(p, "unk_id", None)


def special_ids_variant(role: str, target: int) -> Variant:
    """``specials.ids``: the ``role`` id (unk, bos, eos) pointing at ``target``, as when a converter
    takes another model family's default ids (T5's unknown id 2 is Llama's ``</s>``)."""

    def apply(c: Candidate) -> Candidate | None:
        if role == "bos":
            return c.replace(bos_id=target) if c.bos_id not in (None, target) else None
        if role == "eos":
            return c.replace(eos_id=target) if c.eos_id not in (None, target) else None
        p = c.pipeline
        if unk_id_of(p) in (None, target):
            return None
        # (a UGM model with another unk id: the same pieces and scores, so the same segmentations,
        # and its word cache shared, which writes an unknown stretch as whichever model reads it)
        if isinstance(p, LlamaUgm):
            model = p.model
            new = UgmModel(model.pieces, target, model.unk_score, model.options, model.prefixes, model.max_len,
                           model.word_cache, model.max_abs_score)
            return _with(c, fork(p, _model=new))
        if isinstance(p, LlamaCppPipeline):
            q = fork(p)
            q.flags.specials["unk"] = target
            return _with(c, q)
        if isinstance(p, SentencePiecePipeline):
            q = fork(p, unk_id=target)
            if hasattr(p, "model"):
                m = p.model
                q.model = UgmModel(m.pieces, target, m.unk_score, m.options, m.prefixes, m.max_len,
                                   m.word_cache, m.max_abs_score)
            return _with(c, q)
        return _with(c, fork(p, unk_id=target))

    return Variant(f"specials.ids:{role}={target}", "specials.ids", f"the {role} id is {target}", apply)


# --- the catalogue ----------------------------------------------------------------------------------


class ReleasePipeline:
    """Another release of the oracle's library (a backend on it, releases.py) in place of the
    reference's pipeline: what an engine that embeds that release gives. It exposes no stage."""

    def __init__(self, backend):
        self.backend = backend

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return list(self.backend.encode(text, add_special=add_special, parse_special=parse_special))

    def normalize(self, text: str) -> str:
        raise NotImplementedError("another release's stages are not read")

    pre_tokenize = normalize


def release_variant(name: str, backend) -> Variant:
    """``library.release:NAME``: the ids of ``backend``, the release NAME (``sentencepiece@0.2.0``)
    of the oracle's library, taken for the reference's (on the reference as it is: no other
    variant of the pipeline under it; those of the input and BOS/EOS may go around it)."""
    def apply(c: Candidate) -> Candidate | None:
        return c.replace(pipeline=ReleasePipeline(backend)) if c.pipeline is not None else None
    return Variant(f"library.release:{name}", "library.release",
                   f"{name}: release {backend.version} of the oracle's library, in place of the reference", apply)


def catalogue() -> list[Variant]:
    """Every variant that does not depend on the case, in pipeline order."""
    # Within a stage the specific variants come first: where the model's whole normalizer is one
    # NFC step (Qwen 3), "no normalizer" and "no NFC" are the same deviation, reproduce the same
    # cases and change the same probes, and the tie goes to the one that says what is missing.
    out = [
        Variant("input.cut:nul", "input.cut", "the text read as a C string: cut at its first NUL",
                partial(_text_map, cut_at_nul), lambda c, text: "\0" in text),
        Variant("input.cut:line", "input.cut", "only the text's first line read (cut at its first line break)",
                partial(_text_map, first_line), lambda c, text: _LINE_BREAK.search(text) is not None),
        Variant("input.strip:leading", "input.strip", "whitespace stripped from the start of the text (str.lstrip)",
                partial(_text_map, str.lstrip), lambda c, text: text[:1].isspace()),
        Variant("input.strip:both", "input.strip", "whitespace stripped from both ends of the text (str.strip)",
                partial(_text_map, str.strip), lambda c, text: text[:1].isspace() or text[-1:].isspace()),
        Variant("input.whitespace-piece", "input.whitespace-piece",
                "a blank text (whitespace only) taken as one piece: its id as typed or with the vocabulary's space mark, "
                "else <unk> or nothing", _whitespace_piece, lambda c, text: not text.strip()),
        Variant("normalizer.nfkc", "normalizer.nfkc", "Python's NFKC in place of the precompiled_charsmap",
                _normalizer_nfkc),
        Variant("normalizer.nfkc:simplified", "normalizer.nfkc",
                "NFKC with C0 controls dropped and Unicode spaces, ZWJ/ZWNJ to spaces in place of the charsmap "
                "(transformers.js's Precompiled)", partial(_normalizer_nfkc, simplified=True)),
        Variant("normalizer.nfc", "normalizer.nfc", "NFC applied (or skipped where the model has it)",
                partial(_unicode_form, "NFC")),
        Variant("normalizer.nfd", "normalizer.nfd", "NFD applied (or skipped where the model has it)",
                partial(_unicode_form, "NFD")),
        # (not ASCII: only then has llama.cpp's table anything to map, or a mark to reorder)
        Variant("normalizer.nfd-first", "normalizer.nfd-first",
                "each code point replaced by the first code point of its canonical decomposition (llama.cpp's "
                "unicode_cpts_normalize_nfd) in place of NFC or NFD: accents dropped, a Hangul syllable its first jamo",
                partial(_nfd_first, nfd_first.first_code_points), lambda c, text: not text.isascii()),
        Variant("normalizer.nfd-first:recomposed", "normalizer.nfd-first",
                "NFC as pytorch-tokenizers 1.5.0 runs it: llama.cpp's one-code-point NFD (a precomposed letter loses "
                "its accent), then the marks the text itself holds composed by a partial table (e + U+0301 is é)",
                partial(_nfd_first, nfd_first.recomposed), lambda c, text: not text.isascii()),
        Variant("normalizer.lowercase", "normalizer.lowercase", "lower-casing toggled", _lowercase),
        Variant("normalizer.strip-accents", "normalizer.strip-accents", "accent stripping toggled", _strip_accents),
        Variant("normalizer.none", "normalizer.none", "no normalizer (charsmap, NFKC, lower-casing skipped)",
                _normalizer_none),
        Variant("whitespace.collapse", "whitespace.collapse", "remove_extra_whitespaces toggled",
                _whitespace_collapse),
        Variant("whitespace.collapse:tokenizers", "whitespace.collapse",
                "remove_extra_whitespaces as transformers' converter writes it for tokenizers (Strip right of "
                "every whitespace, Replace(' {2,}', '▁'), Metaspace)", _whitespace_as_tokenizers),
        Variant("whitespace.collapse:other-library", "whitespace.collapse",
                "the whitespace flags as the other library implements them (llama.cpp's UGM vs SentencePiece)",
                _whitespace_other_flavour),
        Variant("space.escape", "space.escape", "spaces not escaped to '▁' (or escaped where the model does not)",
                _space_escape),
        Variant("space.dummy-prefix", "space.dummy-prefix", "the dummy prefix toggled", _dummy_prefix),
        Variant("space.dummy-prefix:unless-space", "space.dummy-prefix",
                "no dummy prefix before a text that starts with a space (tokenizers' Metaspace)",
                _prefix_unless_space),
        Variant("space.prefix-every-split", "space.prefix-every-split",
                "the dummy prefix only at the start, not after every special token", _prefix_every_split),
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
                           partial(_regex_engine, engine)))
    for rule, (_, _, what) in SCANNER_RULES.items():
        out.append(Variant(f"{SCANNER}:{rule}", SCANNER, what, partial(_scanner_rule, rule)))
    out += [
        Variant("model.greedy-longest-match", "model.greedy-longest-match",
                "the longest vocabulary piece at each position", _greedy),
        Variant("model.backtracking", "model.backtracking",
                "the `bpe` crate's backtracking encoder in place of the merges: the longest token at each position "
                "whose pair with the one before is one rank BPE would leave side by side (tokens ranked by id), else "
                "a shorter one, else the previous token taken back", _backtracking),
        Variant("model.merge-by-score", "model.merge-by-score",
                "merges ordered by the merged token's score (or id), not by rank", _merge_by_score),
        Variant("model.merge-by-rank", "model.merge-by-rank",
                "SentencePiece-BPE merges ordered by the merged piece's id (a merge list), not its score", _merge_by_rank),
        Variant("model.ignore-merges", "model.ignore-merges", "whole-word lookup before merging toggled",
                _ignore_merges),
        Variant("model.lookup-key", "model.lookup-key",
                "every byte string looked up by a key packed into integers that loses trailing NUL bytes (a piece that "
                "ends in NULs reads as the same bytes without them; where two tokens' keys meet, the later id)",
                partial(_lookup_key, lambda c: _PackedRanks(c.vocab), "packed keys"), lambda c, text: "\0" in text),
        Variant("model.lookup-key:bom", "model.lookup-key",
                "every byte string that is UTF-8 looked up first as the text JavaScript's TextDecoder makes of it, a "
                "leading BOM (U+FEFF) dropped: EF BB BF + 'b' reads as 'b'; a whole piece that starts with a BOM is "
                "never found",
                partial(_lookup_key, lambda c: _DecodedRanks(c.pipeline.model.vocab), "decoded keys"),
                lambda c, text: "\ufeff" in text),
        Variant("model.prototype-lookup", "model.prototype-lookup",
                "every piece looked up whole in a plain JavaScript object of the vocabulary first: one that is no "
                "token and names a member of Object.prototype (toString, constructor, …) finds that member, not "
                "nothing, and the engine fails", partial(_plain_object, "vocabulary"),
                lambda c, text: plain_object.may_hold_one(text)),
        Variant("model.prototype-lookup:cache", "model.prototype-lookup",
                "every piece looked up first in a cache kept in a plain JavaScript object: any piece named like a "
                "member of Object.prototype (toString, constructor, …), a token or not, finds that member, and the "
                "engine fails", partial(_plain_object, "cache"), lambda c, text: plain_object.may_hold_one(text)),
        Variant("bytes.fallback", "bytes.fallback", "byte fallback toggled (<0xNN> pieces vs <unk>)", _byte_fallback),
        Variant("bytes.fallback:drop", "bytes.fallback", "characters outside the vocabulary dropped (no <unk>, no bytes)",
                _drop_unknown),
        Variant("unk.merge-runs", "unk.merge-runs", "one <unk> per run vs one per character", _unk_runs),
        Variant("specials.parse", "specials.parse", "parse_special flipped", _specials_parse),
        Variant("specials.parse:after-normalizing", "specials.parse",
                "special-token text parsed, out of the normalized text (tokenizers' normalized added tokens)",
                _parse_after_normalizing),
        Variant("specials.strip", "specials.strip", "no lstrip/rstrip around special tokens", _specials_strip),
        Variant("specials.segmented", "specials.segmented",
                "with parsing off, the text still cut at each special token's text and every part, the special "
                "text too, tokenized apart", _segmented_at_specials,
                lambda c, text: c.segment_at is not None and c.segment_at.search(text) is not None),
        *(other_release_variant(release) for release in special_releases.RELEASES),
        Variant("user-defined.atomic", "user-defined.atomic", "user-defined pieces not matched whole first",
                _user_defined),
        Variant("user-defined.absent", "user-defined.absent",
                "user-defined pieces not in the vocabulary at all: never matched whole nor made by a merge, a character "
                "that is one as its bytes (an engine that loaded only the normal pieces)", _user_defined_absent),
        Variant("user-defined.unmergeable", "user-defined.unmergeable",
                "user-defined pieces matched whole in the text but never made by a merge (taken out of the model's "
                "vocabulary)", _user_defined_unmergeable),
        Variant("user-defined.first-listed", "user-defined.first-listed",
                "added tokens matched in id order, the first listed winning, not leftmost-longest", _first_listed,
                lambda c, text: (pattern := _prefixes_of_added(c)) is not None and pattern.search(text) is not None),
        Variant("bos", "bos", "BOS added where the oracle has none, or dropped", partial(_bos, "toggle")),
        Variant("bos.double", "bos.double", "BOS added twice", partial(_bos, "double")),
        Variant("eos", "eos", "EOS added where the oracle has none, or dropped", _eos),
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
                "the split regexes read with Unicode 16.0's tables (Oniguruma 6.9.10's, regexr 0.6.1's in splintr-rs)",
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
    return out


def base_candidate(tokenizer) -> Candidate:
    """The unchanged reference of a ``RefTokenizer``, with its BOS/EOS ids."""
    p = tokenizer.pipeline
    vocab = tokenizer.vocab
    bos = eos = None
    if isinstance(p, LlamaCppPipeline):
        bos, eos = p.flags.specials.get("bos"), p.flags.specials.get("eos")
        if isinstance(p, LlamaWpm):
            eos = p.flags.specials.get("sep")
    elif isinstance(p, HfPipeline):
        bos = p.prefix[0] if p.prefix else vocab.special_ids.get("bos")
        eos = p.suffix[-1] if p.suffix else vocab.special_ids.get("eos")
    else:
        bos, eos = vocab.special_ids.get("bos"), vocab.special_ids.get("eos")
    return Candidate(p, vocab, bos_id=bos, eos_id=eos)
