"""Name the root cause of a mismatch by reproducing the backend's ids with the reference.

For one model, a ``Diagnoser`` holds the reference tokenizer and the catalogue of variants
(the ``variants`` package). For a case where a backend disagrees with the oracle it looks for the smallest
set of variants with which the reference gives the backend's ids *exactly*:

1. the reference itself must give the oracle's ids on the text, or nothing can be said;
2. after the backend's first LOOK_AROUND cases, the sets that explained its earlier cases,
   most frequent first (a run's mismatches mostly share one cause, so this is usually the first
   and only try);
3. every single variant, in pipeline order; a costly one (``Variant.costly``) and the last
   resorts (``LAST_RESORT``) only where nothing before them reproduces the case, and a merge
   missing only as an alternative for the run's verdict. Where several reproduce the case, the one that
   reproduced the most of this backend's cases so far, then the narrowest (PROBES). A variant
   seen changing a place the backend left alone on another case is *refuted* for this backend
   and not named again, even where it happens to reproduce;
4. a tie, not a bug (``model.viterbi-tie``): a segmentation of exactly equal score (unigram),
   or the one BPE's merges give with equal-priority candidates taken rightmost first (diff/ties.py);
5. sets of several variants that may be one engine's (``variants.combinable``), none of which
   reproduces alone: the sets that explained this backend before first, then a beam search that
   grows sets one variant at a time from those whose ids come closest to the backend's, up to
   MOST_VARIANTS (an engine with three bugs is named with three);
6. when nothing reproduces the ids, the stage that is *proven* to differ, as ``stage.other``:
   the texts the two sides tokenized differ (``normalizer.other``, ``whitespace.other``), a
   backend token crosses a boundary of the reference's split, or the backend's ids are the
   model's own on a finer split (``pretokenizer.other``), or only the segmentation differs
   (``model.other``);
7. else an honest empty cause.

A vocabulary small enough to follow by hand, as llama.cpp reads a SentencePiece-BPE GGUF: the
reference merges ``'a' + 'b'`` (the better score) and gives ``'▁', 'ab'``; an engine that takes
the longest piece at each position gives ``'▁a', 'b'``, and the diagnosis says so:

    >>> from tokparity.reference import RefTokenizer
    >>> from tokparity.vocab.model import Flags, TokenType as T, Vocab
    >>> vocab = Vocab("spm", ["<unk>", "<s>", "▁", "a", "b", "ab", "▁a"], scores=[0, 0, -1, -2, -2, -0.5, -3],
    ...               token_types=[T.UNKNOWN, T.CONTROL] + [T.NORMAL] * 5, flags=Flags(add_space_prefix=True),
    ...               source_format="gguf")
    >>> cause = Diagnoser(RefTokenizer(vocab)).diagnose("ab", [2, 5], [6, 4], "greedy")
    >>> cause.name
    'model.greedy-longest-match'
    >>> cause.detail
    "the reference reproduces the backend's ids exactly with: the longest vocabulary piece at each position"

On the Gemma 3 engine of the case study (docs/gemma3.md) the diagnosis names two deviations at
once, ``space.escape+model.greedy-longest-match``: neither alone reproduces the engine's ids; the
same engine on Llama 2, whose file asks for the dummy prefix it leaves out, three
(``space.dummy-prefix+space.escape+model.greedy-longest-match``).
"""

from __future__ import annotations

import itertools
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.diagnose import stages
from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.cause import NO_CAUSE, Cause
from tokparity.diagnose.id_spans import changed, distance, spans, touches
from tokparity.diagnose.variants import (
    MERGE_MISSING,
    PER_CASE,
    STAGES,
    Variant,
    base_candidate,
    case_keys,
    case_variant,
    catalogue,
    char_table,
    combinable,
    learnt_keys,
    release_variant,
    resort_of,
    rightmost_ties,
    stage_of,
)
from tokparity.diagnose.variants.slices import SETTLED, is_slicing
from tokparity.diff import ties
from tokparity.errors import EngineFailure
from tokparity.records import Judgement
from tokparity.reference.hf import time_limit

# Short texts of many kinds (prose, code, digits, contractions, whitespace, composed and decomposed
# accents, full-width forms, scripts, emoji, special-token text) on which a variant's *breadth* is
# measured: on how many of them it changes what any stage makes of the text (the normalized text,
# the pre-tokens or the ids). When several variants reproduce a case exactly, the case alone cannot
# tell them apart ("My grandmother turned 90" comes out of Llama 3's merges the same with no split
# regex at all as with GPT-2's, because merges seldom cross a word), and the narrowest one is the
# smallest deviation that explains it. The ids alone would not measure that: no split at all
# changes the ids of few of these texts (merges seldom cross words) but the pre-tokens of nearly
# every one, GPT-2's regex the pre-tokens of a third.
PROBES = (
    "Hello world", "The capital of France is Paris.", " leading space", "trailing space ", "double  space",
    "tabs\tand\nnewlines\n\n", "   ", "It's John's book, isn't it?", "IT'S LOUD", "1234567 and 3.14159",
    "2026-11-22 12:34", "café naïve résumé", "cafe\u0301 decomposed", "ﬁ ½ Ａ full-width ｶﾀｶﾅ", "Straße ĳ ǅ",
    "Kantō Hokkaidō Filipović", "ПРИВЕТ мир", "日本語のテキストです。", "中文文本，标点。", "한국어 텍스트",
    "مرحبا بالعالم", "नमस्ते दुनिया", "Việt Nam", "emoji 🦙🧑\u200d💻 👍🏽", "def f(x):\n    return x**2  # ok",
    "if (a && b) { c++; }", "<s>Hello</s>", "<|endoftext|> <unk> <mask>", "a\u00a0b\u2003c\u3000d",
    "x\u0085y\ufeffz", "zero\u200bwidth\u200djoiner", "ALL CAPS TEXT", "MiXeD CaSe", "www.example.com/path?q=1",
    "$100 + 20% = ?", "...!!!???", "\u2581 literal mark", "Ⅻ chapter", "control\x01\x1fchars", "naïve façade coöperate",
    "a \u00a0 b\u3000\u3000c", "x\u0085\u0085 y \ufeff\ufeff z", "\u000b\u000c vertical", "Garay \U00010d40\U00010d41",
    " \u0085a \ufeffb",  # where JavaScript's \s splits otherwise: after a space, before a letter
    " \u180ea",  # where PCRE2's does (U+180E, in its \h list), so that it is no narrower than Unicode's tables
    " \u088fa", " \u208fa",  # a letter of Unicode 17, one of 18: tables older than the newest change fewer
)

BEAM = 4  # the sets of variants kept at each size while composing (the closest to the backend's ids)
MOST_VARIANTS = 5  # the largest set composed for one case
COMPOSED_CHARACTERS = 100_000  # text encoded while composing one case's sets (a 100-character text: 1,000 sets)
# A backend's first cases try every single variant even when one that worked before reproduces
# them: several often do ("Hello world" comes out the same with no split regex as with GPT-2's),
# and only the count over cases tells which is the backend's (credit). Later cases try what
# worked first.
LOOK_AROUND = 32
FULL_SEARCHES = 300  # per backend: cases searched in full (pairs included); later ones try what worked
DIAGNOSIS_TEXTS = 4  # a diagnosis' regex time, in texts' worth of the reference's limit (reference/hf.py)
CANDIDATES_KEPT = 96  # variant pipelines kept built (each is a shallow copy with its own caches)
# A fuzz run has no verdict checked on agreements, so each case's hits are: a variant that changes
# this many texts the backend agreed on is not the backend's (another model's whole split regex
# gives a Unicode seam and a contraction by coincidence, and would win on credit).
REFUTED_BY_AGREEMENTS = 2


def join(names: Sequence[str]) -> str:
    ordered = sorted(dict.fromkeys(names), key=lambda n: STAGES.index(stage_of(n)))
    return "+".join(ordered)


@dataclass(frozen=True)
class Kept:
    """What a Diagnoser builds from its reference alone, before any case: its variants, each built
    once on the base. The reference keeps it (``RefTokenizer.catalogues``, per add_special and
    parse_special), so the next Diagnoser on the same reference starts from it: a process that
    compares one model again (regress, a test suite) gets the reference back from
    ``reference_of``. What a run learns of its backends is never kept."""

    base: Candidate
    variants: dict[str, Variant]
    built: tuple[tuple[tuple[str, ...], Candidate | None], ...]


class Diagnoser:
    """One model's reference and its variants; ``diagnose`` names the cause of a mismatch."""

    def __init__(self, tokenizer, add_special: bool = False, parse_special: bool = False,
                 releases: dict | None = None):
        """``releases``: other releases of the oracle's library, by name (``sentencepiece@0.2.0``:
        a Backend on it), tried before anything else (``library.release``)."""
        self.tokenizer = tokenizer
        self.vocab = tokenizer.vocab
        self.add_special, self.parse_special = add_special, parse_special
        self.variants: dict[str, Variant]
        self._built: OrderedDict[tuple[str, ...], Candidate | None]
        self.releases: list[str]
        kept_by = getattr(tokenizer, "catalogues", None)  # (a RefTokenizer's; None: a stand-in of a test)
        kept = kept_by.get((add_special, parse_special)) if kept_by is not None and not releases else None
        if kept is not None:
            self.base, self.variants, self._built = kept.base, dict(kept.variants), OrderedDict(kept.built)
            self.releases = []
        else:
            self.base = base_candidate(tokenizer)
            self.variants, self._built = {}, OrderedDict()
            released = [release_variant(name, backend) for name, backend in (releases or {}).items()]
            for v in released + catalogue():
                if self._build((v.key,), v) is not None:
                    self.variants[v.key] = v
            self.releases = [v.key for v in released]
            if kept_by is not None and not releases:  # (another release's variants run a backend of this run's)
                kept_by[(add_special, parse_special)] = Kept(self.base, dict(self.variants),
                                                             tuple(self._built.items()))
        self.memo: dict[str, Counter[tuple[str, ...]]] = {}  # per backend: the sets that worked
        self.refuted: dict[str, set[str]] = {}  # per backend: variants seen changing what it left alone
        self.credit: dict[str, Counter[tuple[str, ...]]] = {}  # per backend: cases each single reproduced
        self.looked: Counter[str] = Counter()  # per backend: cases diagnosed
        # (per Diagnoser, never kept: a breadth measured after a case's regex deadline passed counts
        # every probe as changed)
        self._breadth: dict[tuple[str, ...], int] = {}
        self._probe_base: list[tuple | None] | None = None
        self.full_searches: Counter[str] = Counter()
        self._answers: dict[tuple[tuple[str, ...], str], list[int] | None] = {}
        self._failures: dict[tuple[tuple[str, ...], str], tuple[str, str] | None] = {}  # (failing, likewise)
        self._alternatives: dict[tuple[str, ...], set[tuple[str, ...]]] = {}  # per set: others that reproduced with it
        self._rightmost: Candidate | None | bool = False  # BPE with ties broken rightmost first (False: not built)

    # -- candidates ------------------------------------------------------------------------------

    def _build(self, keys: tuple[str, ...], extra: Variant | None = None) -> Candidate | None:
        if keys in self._built:
            self._built.move_to_end(keys)
            return self._built[keys]
        c: Candidate | None = self.base
        for key in keys:
            v = extra if extra is not None and extra.key == key else self._variant(key)
            try:
                c = v.apply(c) if c is not None and v is not None else None
            except NameError:  # (a bug of the variant's code, never a pipeline it cannot be built on)
                raise
            except Exception:  # a deviation that cannot be built on top of another: no such candidate
                c = None
            if c is None:
                break
        if c is not None:
            c.keys = keys
        self._built[keys] = c
        if len(self._built) > CANDIDATES_KEPT:
            self._built.popitem(last=False)
        return c

    def _variant(self, key: str) -> Variant | None:
        v = self.variants.get(key)
        if v is None:
            v = case_variant(key)
            if v is not None:
                self.variants[key] = v
        return v

    def encode(self, keys: tuple[str, ...], text: str) -> list[int] | None:
        """The reference's ids with the variants ``keys`` applied (None: they do not apply)."""
        return self._ask(keys, "encode", text)

    def _ask(self, keys: tuple[str, ...], method: str, text: str):
        """``method`` of the candidate with the variants ``keys`` on ``text``; None where the
        variants do not apply, or cannot run on this text (it then reproduces nothing)."""
        c = self._build(self.in_order(keys))
        if c is None:
            return None
        try:
            return getattr(c, method)(text, self.add_special, self.parse_special)
        except NameError:  # (a bug of a variant's code: never "reproduces nothing")
            raise
        except Exception:
            return None

    def _tried_late(self, key: str) -> tuple[int, bool]:
        """The order of a case's single variants: the named causes, a costly one last among them,
        then each last resort in ``LAST_RESORT``'s order."""
        return resort_of(key), key in self.variants and self.variants[key].costly

    def affects(self, key: str, text: str) -> bool:
        """Whether the variant ``key`` can change anything of ``text`` (if not, it is not encoded
        alone on it; another variant may still give it something to change)."""
        v = self._variant(key)
        if v is None or v.affects is None:
            return True
        c = self._build((key,))
        return c is not None and v.affects(c, text)

    def encode_remembered(self, keys: tuple[str, ...], text: str) -> list[int] | None:
        """``encode``, remembered until ``forget()``: the verdict asks the same questions often."""
        key = (keys, text)
        if key not in self._answers:
            if len(self._answers) > 200_000:
                self._answers.clear()
            self._answers[key] = self._cut_from_the_rest(keys, text)
        return self._answers[key]

    def _cut_from_the_rest(self, keys: tuple[str, ...], text: str) -> list[int] | None:
        """``encode``. A limit of ids is a candidate's last step (``Candidate.encode``): with one,
        the ids are the other variants' (remembered), cut. The verdict tries each limit beside them."""
        limits = [k for k in keys if k.startswith("ids.truncated:")]
        c = self._build(self.in_order(keys)) if len(limits) == 1 else None
        if c is None or c.id_limit is None:
            return self.encode(keys, text)
        ids = self.encode_remembered(tuple(k for k in keys if k != limits[0]), text)
        return None if ids is None else ids[:c.id_limit.of(text)]

    def failing(self, keys: tuple[str, ...], text: str, said: str | None = None) -> str | None:
        """Why the reference with the variants ``keys`` fails on ``text`` as an engine with those
        deviations fails (``errors.EngineFailure``); None where it gives ids, or cannot run, or where
        the engine's message ``said`` (if given) lacks what that failure names. Kept until ``forget()``."""
        key = (keys, text)
        if key not in self._failures:
            self._failures[key] = self._failing(keys, text)
        return None if (found := self._failures[key]) is None or said is not None and found[1] not in said else found[0]

    def _failing(self, keys: tuple[str, ...], text: str) -> tuple[str, str] | None:
        c = self._build(self.in_order(keys))
        if c is None:
            return None
        try:
            c.encode(text, self.add_special, self.parse_special)
        except EngineFailure as e:
            return str(e), e.mark
        except NameError:
            raise
        except Exception:
            return None
        return None

    def predicts(self, keys: tuple[str, ...], j: Judgement) -> bool:
        """Whether the reference with the variants ``keys`` does what the backend of the judgement
        ``j`` did: its ids, or, where it crashed, a failure of the engine those variants stand for."""
        if j.cls == "crash":
            return self.failing(keys, j.text, j.evidence) is not None
        return self.encode_remembered(keys, j.text) == list(j.backend_ids)

    def failure(self, text: str, oracle_ids: Sequence[int], said: str = "") -> Cause:
        """The cause of a backend's failure on ``text`` (the oracle gave ``oracle_ids``, the engine said
        ``said``): the variant whose engine fails there alike; none for a failure no variant makes."""
        keys = [key for key, v in self.variants.items() if v.fails and self.affects(key, text)]
        if not keys:  # (most crashes: nothing in the text that a failing variant could fail on)
            return NO_CAUSE
        with time_limit(text, DIAGNOSIS_TEXTS):
            if self.encode((), text) != list(oracle_ids):
                return Cause("", "the reference does not give the oracle's ids on this text, so no cause of the "
                                 "failure can be reproduced")
            found = {key: why for key in keys if (why := self.failing((key,), text, said)) is not None}
        if not found:
            return NO_CAUSE
        # (the first in the catalogue's order, the narrowest claim; the run's verdict weighs the others)
        key, why = next(iter(found.items()))
        return Cause(self.variants[key].cause, f"{self.variants[key].detail}: {why}; the reference that does so "
                                               "fails on this text too", (key,), tuple((k,) for k in found if k != key))

    def forget(self) -> None:
        self._answers.clear()
        self._failures.clear()

    def breadth(self, keys: tuple[str, ...]) -> int:
        """On how many of the PROBES the variants ``keys`` change what a stage makes of the text."""
        if keys not in self._breadth:
            if self._probe_base is None:
                self._probe_base = [self._footprint((), t) for t in PROBES]
            self._breadth[keys] = sum(self._footprint(keys, t) != base for t, base in zip(PROBES, self._probe_base))
        return self._breadth[keys]

    def _footprint(self, keys: tuple[str, ...], text: str) -> tuple | None:
        return self._ask(keys, "footprint", text)  # (None, where it cannot run: that probe changes)

    def order(self, key: str) -> tuple[int, str]:
        v = self._variant(key)
        return (v.stage if v is not None else len(STAGES), key)

    def in_order(self, keys: tuple[str, ...]) -> tuple[str, ...]:
        """``keys`` in pipeline order, as a candidate is built."""
        return tuple(keys) if len(keys) < 2 else tuple(sorted(keys, key=self.order))

    # -- the search ------------------------------------------------------------------------------

    def diagnose(self, text: str, oracle_ids: Sequence[int], backend_ids: Sequence[int], backend: str = "",
                 symptom: str = "", oracle: str = "", agreeing: Sequence[str] = ()) -> Cause:
        """The cause of ``backend_ids`` where the oracle gave ``oracle_ids``; ``symptom``: the case's
        bug class, which breaks ties between sets that reproduce it; ``oracle``: the oracle's name
        (only releases of its library are tried: ``library.release``); ``agreeing``: texts the
        backend agreed on, where no verdict checks the agreements (fuzz)."""
        # One deadline for every regex of the whole search: a file's regex that backtracks for
        # ever on this text costs the diagnosis DIAGNOSIS_TEXTS texts' time, not that per variant.
        with time_limit(text, DIAGNOSIS_TEXTS):
            base = self.encode((), text)
            return self._diagnose(text, list(oracle_ids), list(backend_ids), backend, base, symptom, oracle,
                                  agreeing)

    def _diagnose(self, text: str, oracle: list[int], target: list[int], backend: str, base: list[int] | None,
                  symptom: str, oracle_name: str = "", agreeing: Sequence[str] = ()) -> Cause:
        size = self.vocab.size
        if any(not 0 <= i < size for i in target):
            return Cause("", "the backend's ids are not all in the vocabulary: nothing can reproduce them")
        if base != oracle and base == target:  # (a drift whose new release fixed the old one: said which side)
            return Cause("", "the backend gives the reference's own ids on this text: it is the oracle that departs "
                             "from tokparity's reference here, so no cause of the backend's can be reproduced")
        if base != oracle:
            return Cause("", "the reference does not give the oracle's ids on this text, so no cause can be "
                             "reproduced (compare ref with the oracle first)")
        # Another release of the oracle's library first: where it gives the backend's ids, the
        # engine embeds that release (a tie it breaks otherwise included), whatever else might.
        library = oracle_name.partition("@")[0]
        others = {key for key in self.releases if key.split(":", 1)[1].partition("@")[0] != library}
        released = [(key,) for key in self.releases if key not in others and self.encode((key,), text) == target]
        if released:
            return self._found(released[0], text, self.memo.setdefault(backend, Counter()), alternatives=released)
        # A tie first: a segmentation of equal score is the model's own answer too, whatever
        # deviation might happen to flip it (float sums shift with the text around them). A bug
        # that gives a tie's ids by coincidence gets them back from the run's verdict.
        tie = ties.viterbi_tie(self.tokenizer.pipeline, self.vocab, oracle, target) \
            or ties.merge_tie(self.vocab, oracle, target, self._ties_rightmost(text))
        if tie is not None:
            return Cause("model.viterbi-tie", tie)
        memo = self.memo.setdefault(backend, Counter())
        refuted, credit = self.refuted.setdefault(backend, set()), self.credit.setdefault(backend, Counter())
        self.looked[backend] += 1
        if self.looked[backend] > LOOK_AROUND:  # the first cases are searched in full (see LOOK_AROUND)
            for keys, _ in memo.most_common(8):
                if len(keys) == 1 and keys[0] in refuted or not self._fits(keys, symptom) or others & set(keys):
                    continue
                if self.encode(keys, text) == target:
                    keys = self._smallest(keys, text, target)
                    # The sets that reproduced the case where this one was found, tried here too:
                    # the run's verdict weighs every reading, not only the one named first.
                    alternatives = [keys] + [alt for alt in self._alternatives.get(keys, ())
                                             if self.encode(alt, text) == target]
                    table = None if any(map(char_table.is_table, keys)) else char_table.learnt_beside(self.base, text, target, memo, self.encode)
                    return self._found(keys, text, memo, alternatives + ([table] if table else []))
        per_case = case_keys(self.tokenizer.pipeline, self.vocab, text, target, oracle)
        singles: dict[tuple[str, ...], list[int] | None] = {}
        hits: list[tuple[str, ...]] = []
        # (the last resorts last, and only where no named cause gives the ids alone; a costly
        # variant before them, only where no other named cause does: see Variant.costly)
        for key in sorted(dict.fromkeys(list(self.variants) + per_case), key=self._tried_late):
            if key.startswith(PER_CASE) and key not in per_case or key in self.releases:
                continue  # another case's token; a release (tried above, for the oracle's library only)
            if key in self.variants and self.variants[key].fails:
                continue  # (it gives no other ids, only failures: failure() tries it on a crash)
            if resort_of(key) and any(resort_of(k[0]) < resort_of(key) for k in hits):
                continue
            if hits and key in self.variants and self.variants[key].costly:
                continue
            out = singles[(key,)] = self.encode((key,), text) if self.affects(key, text) else None
            if out == target and key not in refuted:
                hits.append((key,))
        self._refute(refuted, oracle, target, singles)
        table = char_table.learnt_beside(self.base, text, target, memo, self.encode)
        if table is not None and not hits:
            return self._found(table, text, memo)
        if table is not None:  # (a reading the run's verdict weighs beside the named ones)
            hits.append(table)
        if len(hits) > 1 and agreeing:
            against = [k for k in hits if self._refuted_by(k, agreeing)]
            if len(against) < len(hits):  # (where every hit changes them, none is told apart: all stay)
                refuted.update(k[0] for k in against if len(k) == 1)  # (a learnt table's set is no one variant)
                hits = [k for k in hits if k not in against]
        # (a merge lost, or a law of slices, fits a case alone by chance: the case is searched on, the variant kept
        # as an alternative for the run's verdict; a law is named once it reproduced SETTLED cases of the backend)
        unsettled = [k for k in hits if k[0].startswith(MERGE_MISSING) or is_slicing(k[0]) and credit[k] < SETTLED]
        aside = hits if hits and unsettled == hits else []
        credit.update(k for k in aside if is_slicing(k[0]))
        hits = [] if aside else hits
        if hits:
            # The variant that accounts for what the case looks like (its class); then the one that
            # reproduced the most of this backend's cases so far (counting every case it reproduced,
            # named or not); among equals the narrowest (see PROBES); then the first in pipeline order.
            credit.update(hits)
            chosen = min(hits, key=lambda k: (not self._fits(k, symptom), any(map(char_table.is_table, k)), -credit[k],
                                              self.breadth(k) if len(hits) > 1 else 0))
            return self._found(chosen, text, memo, alternatives=hits)
        # An edit of the text no named cause gives, or a text put around it, learnt from this case.
        # It is tried only where no named cause reproduced the ids alone, so a catalogue's single
        # name comes first; it comes before two named causes composed, which a learnt key, exact and
        # narrow, is likelier than.
        for key in learnt_keys(self.vocab, text, oracle, target):
            out = singles[(key,)] = self.encode((key,), text)
            if out == target:
                return self._found((key,), text, memo, alternatives=aside)
        if self.full_searches[backend] < FULL_SEARCHES:
            self.full_searches[backend] += 1
            composed = self._compose(text, base, target, singles, memo)
            if composed:
                # Among sets of one size, the narrowest by its members' breadths: a set's own breadth
                # says little where one member (a BOS) changes every probe.
                best = min(composed, key=lambda k: (not self._fits(k, symptom), -memo[k], len(k),
                                                    sum(self.breadth((key,)) for key in k) if len(composed) > 1 else 0))
                return self._found(best, text, memo, alternatives=composed + aside)
        found = stages.stage_level(self.tokenizer.pipeline, self.vocab, text, oracle, target) or NO_CAUSE
        return Cause(found.name, found.detail, alternatives=tuple(aside))

    def _refuted_by(self, keys: tuple[str, ...], texts: Sequence[str]) -> bool:
        """Whether the set gives other ids than the reference on REFUTED_BY_AGREEMENTS of ``texts``
        (a text the reference cannot run is no evidence)."""
        changed = (t for t in texts if (base := self.encode((), t)) is not None and self.encode(keys, t) != base)
        return sum(1 for _ in itertools.islice(changed, REFUTED_BY_AGREEMENTS)) >= REFUTED_BY_AGREEMENTS

    def _ties_rightmost(self, text: str) -> list[int] | None:
        """The reference's ids with equal-priority merges taken rightmost first (BPE only)."""
        if self._rightmost is False:
            self._rightmost = rightmost_ties(self.base)
        c = self._rightmost
        if not isinstance(c, Candidate):
            return None
        try:
            return c.encode(text, self.add_special, self.parse_special)
        except NameError:
            raise
        except Exception:
            return None

    def _refute(self, refuted: set[str], oracle: list[int], target: list[int],
                singles: dict[tuple[str, ...], list[int] | None]) -> None:
        """Variants that change this case's ids somewhere away from every place where the backend's
        differ from the oracle's: the backend left that place alone, so it does not have that
        deviation, and the variant is not named for its later cases even where it happens to give
        their ids (GPT-2's split reproduces "hello\tworld" of an engine that only stopped taking a
        tab into the next word, but not that engine's "1234" two cases earlier). Single variants
        only: within a pair, the other deviation may undo the change."""
        spans_o = spans(self.vocab, oracle)
        spans_t = spans(self.vocab, target)
        if spans_o is None or spans_t is None or spans_o[-1:] and spans_t[-1:] and spans_o[-1][1] != spans_t[-1][1]:
            return  # different texts: no common positions to compare at
        backend_changed = changed(spans_o, spans_t)
        for (key,), out in singles.items():
            if out is None or out == target or out == oracle or key in refuted:
                continue
            spans_x = spans(self.vocab, out)
            if spans_x is None or (spans_x[-1:] and spans_o[-1:] and spans_x[-1][1] != spans_o[-1][1]):
                continue
            if any(not touches(r, backend_changed) for r in changed(spans_o, spans_x)):
                refuted.add(key)

    def _smallest(self, keys: tuple[str, ...], text: str, target: list[int]) -> tuple[str, ...]:
        if len(keys) > 1:
            for key in keys:
                if self.encode((key,), text) == target:
                    return (key,)
        return keys

    def _compose(self, text: str, base: list[int], target: list[int],
                 singles: dict[tuple[str, ...], list[int] | None], memo: Counter) -> list[tuple[str, ...]]:
        """The smallest sets of variants found that reproduce the ids together, none alone (an
        engine with several bugs). First the sets that explained this backend's earlier cases
        (where two readings reproduce a case, the one the backend has shown is the one to name),
        then a beam search: sets grown one variant at a time, keeping at each size the ``BEAM``
        whose ids come closest to the backend's (``_distance``), up to ``MOST_VARIANTS``, while the
        closest set of each size comes closer than the closest one size smaller. A
        variant that alone changes nothing may still be needed (greedy matching changes no word
        of "Could you buy" while spaces are '▁', every one once they are not), so every variant
        is a candidate for growing a set, not only those that changed the case."""
        alone = {k[0] for k, out in singles.items() if out == target}  # (refuted ones: a set holding one is it in disguise)
        for keys, _ in memo.most_common():
            if len(keys) > 1 and not alone & set(keys) and self.encode(keys, text) == target:
                return [keys]
        # (a variant of the text that cannot change it alone may once another has: a NUL cut leaves
        # a blank text, a blank text is looked up whole)
        # (a variant that refines another is that one on a text it leaves alone: not a second lead)
        everyone = [k[0] for k, out in singles.items()
                    if k[0] not in alone and (out is not None or self._build(k) is not None
                                              and not self.affects(k[0], text) and self.plain(k) == k)]
        frontier: list[tuple[str, ...]] = [()]
        closest = distance(base, target)
        budget = COMPOSED_CHARACTERS // max(1, len(text))  # sets encoded: a long text is searched less widely
        for size in range(1, MOST_VARIANTS + 1):
            grown: dict[tuple[str, ...], list[int] | None] = {}
            hits: list[tuple[str, ...]] = []
            for keys in frontier + [k for k, _ in memo.most_common(3) if len(k) == size - 1 and not alone & set(k)]:
                for key in everyone:
                    if key in keys or not all(combinable(key, k) for k in keys):
                        continue
                    bigger = tuple(sorted(keys + (key,), key=self.order))
                    if bigger not in grown:
                        if size > 1:
                            if budget <= 0:
                                break
                            budget -= 1
                        grown[bigger] = out = singles[bigger] if size == 1 else self.encode(bigger, text)
                        if out == target and size > 1:
                            hits.append(bigger)
            if hits:  # (every set of this size is weighed: two readings of one text, the narrower named)
                return list(dict.fromkeys(self._needed(keys, text, target) for keys in hits))
            far = {keys: distance(out, target) for keys, out in grown.items() if out is not None}
            ranked = sorted(far, key=lambda k: (far[k], self.order(k[-1])))
            # Grown no closer than the sets one smaller: another variant would be a guess, not a lead.
            if not ranked or far[ranked[0]] >= closest:
                break
            closest = far[ranked[0]]
            frontier = ranked[:BEAM]
        return []

    def _needed(self, keys: tuple[str, ...], text: str, target: list[int]) -> tuple[str, ...]:
        """``keys`` less every member the others reproduce the ids without (a beam may grow a set
        past a smaller one it never kept)."""
        for key in keys:
            rest = tuple(k for k in keys if k != key)
            if len(rest) > 1 and self.encode(rest, text) == target:
                return self._needed(rest, text, target)
        return keys

    def plain(self, keys: tuple[str, ...]) -> tuple[str, ...]:
        """``keys`` with each variant that refines a simpler one (``Variant.refines``) put back to it."""
        plain = [getattr(self._variant(k), "refines", None) or k for k in keys]
        return keys if plain == list(keys) else tuple(sorted(dict.fromkeys(plain), key=self.order))

    def _simplest(self, keys: tuple[str, ...], text: str) -> tuple[str, ...]:
        """``plain(keys)`` where it gives the ids ``keys`` gives on ``text``, else ``keys``."""
        plain = self.plain(keys)
        return plain if plain != keys and self.encode(plain, text) == self.encode(keys, text) else keys

    def _fits(self, keys: tuple[str, ...], symptom: str) -> bool:
        """Whether the rule-based class is a symptom of these variants' causes: among sets that
        reproduce a case, one that also accounts for what the case looks like is preferred
        (``<|begin_of_text|>`` alone as one id is special-parsing; "no split regex" giving the
        same id is a coincidence)."""
        from tokparity.diagnose.info import fits
        return fits(symptom, join([self._variant(k).cause for k in keys]))  # type: ignore[union-attr]

    def _found(self, keys: tuple[str, ...], text: str, memo: Counter,
               alternatives: Sequence[tuple[str, ...]] = ()) -> Cause:
        # Of two readings where one refines the other's variant (``Variant.refines``), the simpler,
        # wherever it gives the same ids (a set remembered from earlier cases included).
        alternatives = list(dict.fromkeys(self._simplest(alt, text) for alt in alternatives))
        keys = self._simplest(keys, text)
        memo[keys] += 1
        self._alternatives.setdefault(keys, set()).update(alt for alt in alternatives if alt != keys)
        variants = [self._variant(k) for k in keys]
        name = join([v.cause for v in variants if v is not None])
        detail = "; ".join(v.detail for v in variants if v is not None)
        others = sorted({join([self._variant(k).cause for k in alt]) for alt in alternatives  # type: ignore[union-attr]
                         if alt != keys} - {name})
        evidence = f"the reference reproduces the backend's ids exactly with: {detail}"
        if others:
            evidence += f" (also reproduced by {', '.join(others[:4])})"
        return Cause(name, evidence, keys, tuple(alt for alt in alternatives if alt != keys))
