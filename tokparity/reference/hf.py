"""The reference pipeline for ``tokenizer.json``: Hugging Face ``tokenizers``' BPE models.

tokenizers cuts the work into stages, each configured in the file, and so does this module:

1. **added tokens** are cut out of the raw text first (leftmost, longest), with their
   ``lstrip`` / ``rstrip`` eating neighbouring whitespace. Special added tokens are only cut
   out with ``parse_special`` (tokenizers' ``encode_special_tokens=False``); the others always.
2. **normalizer**: ``Replace``, ``Prepend``, ``NFC``/``NFKC``/``NFD``/``NFKD``, ``Lowercase``,
   ``Strip``, ``Precompiled`` (charsmap.py), in ``Sequence``.
3. **pre-tokenizer**: ``Split`` (a regex or string, with its ``behavior``), ``ByteLevel``
   (GPT-2's byte map, optionally its regex and a prefix space), ``Metaspace``, in ``Sequence``.
4. **model**: BPE by merge rank (bpe.py) over characters; a character outside the vocabulary
   becomes ``<0xNN>`` pieces with ``byte_fallback``, else ``unk`` (runs fused with
   ``fuse_unk``); ``ignore_merges`` takes a whole word that is a token as it is.
5. **post-processor**: the ``single`` template's special tokens around the ids (add_special).

Python's ``regex`` module stands in for tokenizers' Oniguruma: same syntax for these patterns
(``\\p{L}``, ``(?i:...)``); their Unicode versions may differ on recently assigned characters.
The file's regexes are its author's, so they run under a time limit per text (``time_limit``):
one that backtracks for ever (``(a|a)+$`` on ``"aaa…a!"``) raises ``RegexTimeout`` for that text.
"""

from __future__ import annotations

import contextlib
import time
import unicodedata
from collections.abc import Callable
from contextvars import ContextVar

import regex

from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference import bpe as bpe_mod
from tokparity.reference.charsmap import CharsMap
from tokparity.reference.greedy import LongestMatch
from tokparity.reference.pretokenize import GPT2, byte_to_unicode, bytes_to_gpt2, unicode_to_byte
from tokparity.reference.spm import byte_piece
from tokparity.textview import clipped
from tokparity.vocab.hf_json import MAX_GROWTH
from tokparity.vocab.model import Vocab

SPACE_MARK = "\u2581"
GPT2_HF = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _components(config, key: str) -> list[dict]:
    if not isinstance(config, dict):
        return []
    if config.get("type") == "Sequence":
        return [c for item in config.get(key) or [] for c in _components(item, key)]
    return [config]


# --- the file's regexes, under a time limit ---------------------------------------------------------
#
# Every regex call made for one text shares one deadline: a few seconds, more for a long text
# (the GPT-2 regex cuts a million characters in about 0.3 s), so an honest regex never meets it.

REGEX_SECONDS = 5.0  # per text, plus:
REGEX_SECONDS_PER_CHAR = 1e-5
_deadline: ContextVar[float | None] = ContextVar("tokparity_hf_regex_deadline", default=None)


class RegexTimeout(TimeoutError):
    """A tokenizer.json regex ran past the text's time limit (catastrophic backtracking)."""


@contextlib.contextmanager
def time_limit(text: str, factor: float = 1.0):
    """The deadline for every regex call made on ``text`` (an enclosing one is kept); ``factor``:
    that many texts' worth (a diagnosis encodes one text under dozens of variants)."""
    if _deadline.get() is not None:
        yield
        return
    token = _deadline.set(time.monotonic() + factor * (REGEX_SECONDS + len(text) * REGEX_SECONDS_PER_CHAR))
    try:
        yield
    finally:
        _deadline.reset(token)


def seconds_left() -> float:
    deadline = _deadline.get()
    if deadline is None:  # a call outside any text's limit (a test, a diagnosis): one text's worth
        return REGEX_SECONDS
    return max(deadline - time.monotonic(), 0.001)


class TimedRegex:
    """One of the file's regexes; ``where`` names it in messages ("pre_tokenizer Split")."""

    def __init__(self, source: str, is_regex: bool, where: str, path: str):
        self.where = where
        self.source = source
        try:
            self.rx = regex.compile(source if is_regex else regex.escape(source))
        except (regex.error, OverflowError, RecursionError, ValueError) as e:
            raise BadModelFile(path, f"{where} regex {clipped(source, 60)} does not compile ({e}); fix or remove it") \
                from None

    def _timed_out(self, text: str) -> RegexTimeout:
        return RegexTimeout(f"{self.where} regex {clipped(self.source, 60)} ran out of time on a {len(text)}-character "
                            "text (catastrophic backtracking?)")

    def finditer(self, text: str) -> list:
        try:
            return list(self.rx.finditer(text, timeout=seconds_left()))
        except TimeoutError:
            raise self._timed_out(text) from None

    def sub(self, content: str, text: str) -> str:
        try:
            return self.rx.sub(lambda m: content, text, timeout=seconds_left())
        except TimeoutError:
            raise self._timed_out(text) from None


# --- normalizers ------------------------------------------------------------------------------------


def _pattern_text(p) -> tuple[str, bool]:
    """A tokenizers pattern: ``{"String": " "}`` or ``{"Regex": "..."}`` -> (text, is_regex).
    (The loader, ``vocab.hf_json.check_pipeline``, has already refused any other shape.)"""
    if "Regex" in p:
        return p["Regex"], True
    return p.get("String", ""), False


class Normalizer:
    def __init__(self, config, path: str = "tokenizer.json"):
        self.steps: list[Callable[..., str]] = []  # each takes the text (defaults hold its settings)
        self.configs: list[dict] = []  # the component each step came from (a diagnosis drops some)
        for c in _components(config, "normalizers"):
            kind = c.get("type")
            self.configs.append(c)
            if kind == "Replace":
                rx = TimedRegex(*_pattern_text(c["pattern"]), "normalizer Replace", path)
                content = c.get("content", "")
                self.steps.append(lambda s, rx=rx, content=content: rx.sub(content, s))
            elif kind == "Prepend":
                prefix = c.get("prepend", "")
                self.steps.append(lambda s, prefix=prefix: prefix + s if s else s)
            elif kind in ("NFC", "NFKC", "NFD", "NFKD"):
                self.steps.append(lambda s, form=kind: unicodedata.normalize(form, s))
            elif kind == "Lowercase":
                self.steps.append(str.lower)
            elif kind == "Strip":
                left, right = c.get("strip_left", True), c.get("strip_right", True)
                self.steps.append(lambda s, a=left, b=right: (s.lstrip() if a else s).rstrip() if b else
                                  (s.lstrip() if a else s))
            elif kind == "Precompiled":
                import base64
                cm = CharsMap(base64.b64decode(c["precompiled_charsmap"]), "tokenizer.json Precompiled")
                self.steps.append(lambda s, cm=cm: _apply_charsmap(cm, s))
            else:
                raise TokparityError(f"tokenizer.json normalizer {kind!r} is not implemented by the ref backend")

    def __call__(self, text: str) -> str:
        # The loader refuses Replace chains that can grow a text over MAX_GROWTH-fold; this stops
        # any other chain (Precompiled charsmaps that expand, applied again and again) per text.
        limit = max(len(text) * MAX_GROWTH, 4096)
        for step, config in zip(self.steps, self.configs):
            text = step(text)
            if len(text) > limit:
                raise ValueError(f"normalizer {config.get('type')} step made the text {len(text)} characters long, "
                                 f"over {MAX_GROWTH} times the input; stopped")
        return text

    def without(self, drop) -> Normalizer:
        """A copy without the steps whose component ``drop(config)`` is true."""
        copy = Normalizer(None)
        for step, config in zip(self.steps, self.configs):
            if not drop(config):
                copy.steps.append(step)
                copy.configs.append(config)
        return copy

    def with_step(self, step, config: dict) -> Normalizer:
        """A copy with one more step at the end."""
        copy = self.without(lambda c: False)
        copy.steps.append(step)
        copy.configs.append(config)
        return copy

    def has(self, kind: str) -> bool:
        return any(c.get("type") == kind for c in self.configs)


def _apply_charsmap(cm: CharsMap, text: str) -> str:
    """tokenizers' ``Precompiled`` normalizer: longest charsmap match, else one character."""
    from tokparity.reference.normalize import _UTF8_LEN
    data = text.encode("utf-8")
    out = bytearray()
    pos = 0
    while pos < len(data):
        match = cm.longest_match(data, pos)
        if match:
            out += match[1]
            pos += match[0]
        else:
            n = _UTF8_LEN[data[pos]]
            out += data[pos:pos + n]
            pos += n
    return out.decode("utf-8", "replace")


# --- pre-tokenizers ---------------------------------------------------------------------------------


def _split(pieces: list[str], rx: TimedRegex | regex.Pattern, behavior: str, invert: bool) -> list[str]:
    out = []
    for piece in pieces:
        spans, pos = [], 0  # (start, end, is_match)
        for m in rx.finditer(piece):
            if m.start() == m.end():
                continue
            if m.start() > pos:
                spans.append((pos, m.start(), False))
            spans.append((m.start(), m.end(), True))
            pos = m.end()
        if pos < len(piece):
            spans.append((pos, len(piece), False))
        if invert:
            spans = [(a, b, not is_match) for a, b, is_match in spans]
        if behavior == "Isolated":
            out += [piece[a:b] for a, b, _ in spans]
        elif behavior == "Removed":
            out += [piece[a:b] for a, b, is_match in spans if not is_match]
        elif behavior == "MergedWithPrevious":
            merged: list[str] = []
            for a, b, is_match in spans:
                if is_match and merged:
                    merged[-1] += piece[a:b]
                else:
                    merged.append(piece[a:b])
            out += merged
        elif behavior == "MergedWithNext":
            merged = []
            carry = ""
            for a, b, is_match in spans:
                if is_match:
                    carry += piece[a:b]
                else:
                    merged.append(carry + piece[a:b])
                    carry = ""
            if carry:
                merged.append(carry)
            out += merged
        else:  # Contiguous
            raise TokparityError(f"tokenizer.json Split behavior {behavior!r} is not implemented by the ref backend")
    return out


class PreTokenizer:
    def __init__(self, config, path: str = "tokenizer.json"):
        self.steps: list[Callable[..., list[str]]] = []  # each takes the pieces so far
        self.byte_level = False
        for c in _components(config, "pretokenizers"):
            kind = c.get("type")
            if kind == "Split":
                rx = TimedRegex(*_pattern_text(c["pattern"]), "pre_tokenizer Split", path)
                self.steps.append(lambda ps, rx=rx, b=c.get("behavior", "Isolated"), i=c.get("invert", False):
                                  _split(ps, rx, b, i))
            elif kind == "ByteLevel":
                self.byte_level = True
                prefix = c.get("add_prefix_space", False)
                use_regex = c.get("use_regex", True)
                rx = regex.compile(GPT2_HF)

                def byte_level(ps, prefix=prefix, use_regex=use_regex, rx=rx):
                    out = []
                    for p in ps:
                        if prefix and p and not p.startswith(" "):
                            p = " " + p
                        out += _split([p], rx, "Isolated", False) if use_regex else [p]
                    return [bytes_to_gpt2(p) for p in out]
                self.steps.append(byte_level)
            elif kind == "Metaspace":
                rep = c.get("replacement", SPACE_MARK)
                scheme = c.get("prepend_scheme", "always" if c.get("add_prefix_space", True) else "never")
                split = c.get("split", True)

                def metaspace(ps, rep=rep, scheme=scheme, split=split):
                    out = []
                    for p in ps:
                        p = p.replace(" ", rep)
                        if scheme == "always" and not p.startswith(rep):
                            p = rep + p
                        out += _split([p], regex.compile(regex.escape(rep)), "MergedWithNext", False) if split else [p]
                    return out
                self.steps.append(metaspace)
            else:
                raise TokparityError(f"tokenizer.json pre-tokenizer {kind!r} is not implemented by the ref backend")

    def __call__(self, text: str) -> list[str]:
        pieces = [text] if text else []
        for step in self.steps:
            pieces = [p for p in step(pieces) if p]
        return pieces


# --- the pipeline -----------------------------------------------------------------------------------


class HfBpe:
    algorithm = "bpe"

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        extra = vocab.extra
        model = extra.get("model") or {}
        self.model_config = model
        self.added = [a for a in extra.get("added_tokens") or [] if isinstance(a, dict)]
        # The loader spells user-defined added tokens as llama.cpp does ("▁" -> " "); tokenizers
        # uses the text from added_tokens, so the reference does too.
        self.tokens = list(vocab.tokens)
        for a in self.added:
            if 0 <= a["id"] < len(self.tokens):
                self.tokens[a["id"]] = a["content"]
        self.token_to_id: dict[str, int] = {}
        for i, t in enumerate(self.tokens):
            self.token_to_id.setdefault(t, i)
        self.types = vocab.token_types
        source = vocab.source or "tokenizer.json"
        self.normalizer = Normalizer(extra.get("normalizer"), source)
        self.pretokenizer = PreTokenizer(extra.get("pre_tokenizer"), source)
        merges = vocab.merges
        self.ranks = dict(zip(reversed(merges), range(len(merges) - 1, -1, -1)))  # first rank kept
        self.byte_fallback = bool(model.get("byte_fallback"))
        self.fuse_unk = bool(model.get("fuse_unk"))
        self.ignore_merges = bool(model.get("ignore_merges"))
        unk = model.get("unk_token")
        self.unk_id = self.token_to_id.get(unk) if isinstance(unk, str) else None
        self.added_ids = {a["id"] for a in self.added}
        self.special_ids = {a["id"] for a in self.added if a.get("special")}
        self.prefix, self.suffix = _template(extra.get("post_processor"))
        self.decoders = _components(extra.get("decoder"), "decoders")
        self.cache: dict[str, list[int]] = {}
        # Switch (tokparity.diagnose sets it to reproduce an engine): longest match, no merges.
        self.greedy: LongestMatch | None = None

    # -- stages ----------------------------------------------------------------------------------

    def partition(self, text: str, parse_special: bool) -> list[str | int]:
        """Cut added tokens out, leftmost first, longest on ties, with lstrip/rstrip."""
        # Only the tokens that occur at all (Gemma 3 has thousands of added tokens; one search each
        # per cut would dominate the encoding).
        candidates = [a for a in self.added if (parse_special or not a.get("special")) and a["content"] in text]
        out: list[str | int] = []
        pos = 0
        while True:
            best = None
            for a in candidates:
                at = text.find(a["content"], pos)
                if at >= 0 and (best is None or at < best[0] or (at == best[0] and len(a["content"]) > len(best[1]["content"]))):
                    best = (at, a)
            if best is None:
                break
            at, a = best
            start, end = at, at + len(a["content"])
            if a.get("lstrip"):
                while start > pos and text[start - 1].isspace():
                    start -= 1
            if a.get("rstrip"):
                while end < len(text) and text[end].isspace():
                    end += 1
            if start > pos:
                out.append(text[pos:start])
            out.append(a["id"])
            pos = end
        if pos < len(text):
            out.append(text[pos:])
        return out

    def normalize(self, text: str) -> str:
        with time_limit(text):
            return self.normalizer(text)

    def pre_tokenize(self, text: str) -> list[str]:
        with time_limit(text):
            return self.pretokenizer(self.normalizer(text))

    def encode_word(self, word: str) -> list[int]:
        whole = self.token_to_id.get(word)
        if self.ignore_merges and whole is not None:
            return [whole]
        if self.greedy is not None:
            return self._encode_greedy(word)
        symbols: list[str] = []
        for ch in word:
            if ch in self.token_to_id:
                symbols.append(ch)
            elif self.byte_fallback and all(byte_piece(b) in self.token_to_id for b in ch.encode()):
                symbols += [byte_piece(b) for b in ch.encode()]
            elif self.unk_id is not None:
                if self.fuse_unk and symbols and symbols[-1] is None:
                    continue
                symbols.append(None)  # type: ignore[arg-type]
        # Merges never involve the unknown token, so each known run merges on its own.
        out: list[int] = []
        run: list[str] = []
        for s in symbols:
            if s is None:
                out += [self.token_to_id[t] for t in bpe_mod.merge_word_heap(run, self.ranks)]
                run = []
                out.append(self.unk_id)
            else:
                run.append(s)
        out += [self.token_to_id[t] for t in bpe_mod.merge_word_heap(run, self.ranks)]
        return out

    def _encode_greedy(self, word: str) -> list[int]:
        assert self.greedy is not None
        out: list[int] = []
        for piece in self.greedy.split(word):
            token_id = self.token_to_id.get(piece)
            if token_id is not None:
                out.append(token_id)
            elif self.byte_fallback and all(byte_piece(b) in self.token_to_id for b in piece.encode()):
                out += [self.token_to_id[byte_piece(b)] for b in piece.encode()]
            elif self.unk_id is not None and not (self.fuse_unk and out and out[-1] == self.unk_id):
                out.append(self.unk_id)
        return out

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        with time_limit(text):  # one deadline for all the text's regex calls
            return self._encode(text, add_special, parse_special)

    def _encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        out = list(self.prefix) if add_special else []
        for frag in self.partition(text, parse_special):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for word in self.pre_tokenize(frag):
                ids = self.cache.get(word)
                if ids is None:
                    ids = self.cache[word] = self.encode_word(word)
                out += ids
        if add_special:
            out += self.suffix
        return out

    def decode(self, ids: list[int], errors: str = "replace") -> str:
        from tokparity.reference.decode import bytes_to_text
        tokens = [self.tokens[i] for i in ids if i not in self.special_ids]
        kinds = [d.get("type") for d in self.decoders]
        if "ByteLevel" in kinds:
            table = unicode_to_byte()
            return bytes_to_text(bytes(table.get(c, 0x3F) for t in tokens for c in t), errors)
        data = bytearray()
        for t in tokens:
            if "ByteFallback" in kinds and len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
                data.append(int(t[3:5], 16))
            else:
                data += t.replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")
        text = bytes_to_text(bytes(data), errors)
        for d in self.decoders:
            if d.get("type") == "Strip" and d.get("start") and text.startswith(d.get("content", " ")):
                text = text[d.get("start"):] if text[:d["start"]] == d["content"] * d["start"] else text
        return text


def _template(post) -> tuple[list[int], list[int]]:
    """The special ids a post-processor puts before and after a single sequence."""
    for p in _components(post, "processors"):
        if p.get("type") == "TemplateProcessing":
            specials = p.get("special_tokens") or {}
            before: list[int] = []
            after: list[int] = []
            seen = False
            for item in p.get("single") or []:
                if "Sequence" in item:
                    seen = True
                elif "SpecialToken" in item:
                    ids = (specials.get(item["SpecialToken"]["id"]) or {}).get("ids") or []
                    (after if seen else before).extend(ids)
            return before, after
        if p.get("type") in ("BertProcessing", "RobertaProcessing"):
            return [p["cls"][1]], [p["sep"][1]]
    return [], []


def pipeline_for(vocab: Vocab):
    if vocab.extra.get("model_type") == "BPE":
        return HfBpe(vocab)
    raise TokparityError(f"{vocab.source}: the ref backend does not implement tokenizer.json "
                         f"{vocab.extra.get('model_type')!r} models yet (it has: BPE)")


__all__ = ["HfBpe", "pipeline_for", "byte_to_unicode", "GPT2"]
