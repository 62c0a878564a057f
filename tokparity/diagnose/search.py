"""Name the root cause of a mismatch by reproducing the backend's ids with the reference.

For one model, a ``Diagnoser`` holds the reference tokenizer and the catalogue of variants
(variants.py). For a case where a backend disagrees with the oracle it looks for the smallest
set of variants with which the reference gives the backend's ids *exactly*:

1. the reference itself must give the oracle's ids on the text, or nothing can be said;
2. the sets that explained this backend's earlier cases, most frequent first (a run's
   mismatches mostly share one cause, so this is usually the first and only try);
3. every single variant, in pipeline order;
4. a segmentation of exactly equal score (unigram): ``model.viterbi-tie``, a tie, not a bug;
5. pairs of variants from different stages, the most promising singles first;
6. when nothing reproduces the ids, the stage that is *proven* to differ, as ``stage.other``:
   the texts the two sides tokenized differ (``normalizer.other``, ``whitespace.other``), a
   backend token crosses a boundary of the reference's split, or the backend's ids are the
   model's own on a finer split (``pretokenizer.other``), or only the segmentation differs
   (``model.other``);
7. else an honest empty cause.

    >>> Diagnoser(RefTokenizer(gemma3)).diagnose(text, oracle_ids, greedy_engine_ids, "greedy").name
    'space.escape+model.greedy-longest-match'
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.diagnose import stages
from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants import (
    STAGES,
    Variant,
    base_candidate,
    catalogue,
    special_ids_variant,
    stage_of,
    user_defined_variant,
)
from tokparity.vocab.model import TokenType

PAIR_PARTNERS = 6  # the most promising single variants whose pairs are tried
FULL_SEARCHES = 300  # per backend: cases searched in full (pairs included); later ones try what worked
PER_TOKEN = ("specials.ids:", "user-defined.atomic:")  # variants made for the tokens of one case
CANDIDATES_KEPT = 96  # variant pipelines kept built (each is a shallow copy with its own caches)


@dataclass(frozen=True)
class Cause:
    """What reproduces one mismatch: catalogue names ``+``-joined in pipeline order ("" for none)."""

    name: str
    detail: str
    keys: tuple[str, ...] = ()  # the variants that reproduce it ("" causes and stage-level ones: none)
    alternatives: tuple[tuple[str, ...], ...] = ()  # other sets of the same size that reproduce it too

    @property
    def reproduced(self) -> bool:
        return bool(self.keys)


NO_CAUSE = Cause("", "")


def join(names: Sequence[str]) -> str:
    ordered = sorted(dict.fromkeys(names), key=lambda n: STAGES.index(stage_of(n)))
    return "+".join(ordered)


class Diagnoser:
    """One model's reference and its variants; ``diagnose`` names the cause of a mismatch."""

    def __init__(self, tokenizer, add_special: bool = False, parse_special: bool = False):
        self.tokenizer = tokenizer
        self.vocab = tokenizer.vocab
        self.add_special, self.parse_special = add_special, parse_special
        self.base = base_candidate(tokenizer)
        self.variants: dict[str, Variant] = {}
        self._built: OrderedDict[tuple[str, ...], Candidate | None] = OrderedDict()
        for v in catalogue():
            if self._build((v.key,), v) is not None:
                self.variants[v.key] = v
        self.memo: dict[str, Counter[tuple[str, ...]]] = {}  # per backend: the sets that worked
        self.full_searches: Counter[str] = Counter()
        self._answers: dict[tuple[tuple[str, ...], str], list[int] | None] = {}
        self._alternatives: dict[tuple[str, ...], set[tuple[str, ...]]] = {}  # per set: others that reproduced with it
        self.seconds = 0.0

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
        if v is None and key.startswith("specials.ids:"):
            role, target = key.split(":", 1)[1].split("=")
            v = self.variants[key] = special_ids_variant(role, int(target))
        elif v is None and key.startswith("user-defined.atomic:"):
            spec = key.split(":", 1)[1]
            v = self.variants[key] = user_defined_variant(int(spec[1:]), whole=spec[0] == "+")
        return v

    def encode(self, keys: tuple[str, ...], text: str) -> list[int] | None:
        """The reference's ids with the variants ``keys`` applied (None: they do not apply)."""
        c = self._build(tuple(sorted(keys, key=self.order)))
        if c is None:
            return None
        try:
            return c.encode(text, self.add_special, self.parse_special)
        except Exception:  # a variant that cannot run on this text reproduces nothing
            return None

    def encode_remembered(self, keys: tuple[str, ...], text: str) -> list[int] | None:
        """``encode``, remembered until ``forget()``: the run's verdict asks the same questions
        several times (ranking the candidates, counting the winner, relabelling)."""
        key = (keys, text)
        if key not in self._answers:
            if len(self._answers) > 200_000:
                self._answers.clear()
            self._answers[key] = self.encode(keys, text)
        return self._answers[key]

    def forget(self) -> None:
        self._answers.clear()

    def order(self, key: str) -> tuple[int, str]:
        v = self._variant(key)
        return (v.stage if v is not None else len(STAGES), key)

    # -- the search ------------------------------------------------------------------------------

    def diagnose(self, text: str, oracle_ids: Sequence[int], backend_ids: Sequence[int], backend: str = "",
                 reference_ids: Sequence[int] | None = None, symptom: str = "") -> Cause:
        """The cause of ``backend_ids`` where the oracle gave ``oracle_ids``; ``reference_ids``: the
        reference's own answer on the text when the caller has it (saves encoding it again);
        ``symptom``: the case's bug class, which breaks ties between sets that reproduce it."""
        started = time.perf_counter()
        try:
            base = list(reference_ids) if reference_ids is not None else self.encode((), text)
            return self._diagnose(text, list(oracle_ids), list(backend_ids), backend, base, symptom)
        finally:
            self.seconds += time.perf_counter() - started

    def _diagnose(self, text: str, oracle: list[int], target: list[int], backend: str, base: list[int] | None,
                  symptom: str) -> Cause:
        size = self.vocab.size
        if any(not 0 <= i < size for i in target):
            return Cause("", "the backend's ids are not all in the vocabulary: nothing can reproduce them")
        if base != oracle:
            return Cause("", "the reference does not give the oracle's ids on this text, so no cause can be "
                             "reproduced (compare ref with the oracle first)")
        # A tie first: a segmentation of equal score is the model's own answer too, whatever
        # deviation might happen to flip it (float sums shift with the text around them).
        tie = stages.viterbi_tie(self.tokenizer.pipeline, self.vocab, oracle, target)
        if tie is not None:
            return tie
        memo = self.memo.setdefault(backend, Counter())
        for keys, _ in memo.most_common(8):
            if self._fits(keys, symptom) and self.encode(keys, text) == target:
                keys = self._smallest(keys, text, target)
                # The sets that reproduced the case where this one was found, tried here too: the
                # run's verdict weighs every reading, not only the one named first.
                alternatives = [keys] + [alt for alt in self._alternatives.get(keys, ())
                                         if self.encode(alt, text) == target]
                return self._found(keys, text, memo, alternatives)
        per_case = self._case_variants(text, target, oracle)
        singles: dict[tuple[str, ...], list[int] | None] = {}
        hits = []
        for key in dict.fromkeys(list(self.variants) + per_case):
            if key.startswith(PER_TOKEN) and key not in per_case:
                continue  # another case's token
            out = singles[(key,)] = self.encode((key,), text)
            if out == target:
                hits.append((key,))
        if hits:
            chosen = min(hits, key=lambda k: (not self._fits(k, symptom), -memo[k]))
            return self._found(chosen, text, memo, alternatives=hits)
        if self.full_searches[backend] < FULL_SEARCHES:
            self.full_searches[backend] += 1
            pairs = self._pairs(text, base, target, singles, memo)
            if pairs:
                best = min(pairs, key=lambda k: (not self._fits(k, symptom), -memo[k]))
                return self._found(best, text, memo, alternatives=pairs)
            triple = self._triples(text, target, singles, memo)
            if triple is not None:
                return self._found(triple, text, memo)
        return stages.stage_level(self.tokenizer.pipeline, self.vocab, text, oracle, target) or NO_CAUSE

    def _case_variants(self, text: str, target: list[int], oracle: list[int]) -> list[str]:
        """The variants about one token: ``specials.ids`` for the control tokens the backend emits
        and the oracle does not; ``user-defined.atomic`` for the pieces whose text is in the input
        and which one side matched whole more often than the other."""
        vocab = self.vocab
        extra = [i for i in dict.fromkeys(target) if i not in oracle and vocab.type_of(i) == TokenType.CONTROL]
        out = [f"specials.ids:{role}={i}" for i in extra[:3] for role in ("unk", "bos", "eos")]
        for i in dict.fromkeys(oracle + target):
            if vocab.type_of(i) in (TokenType.USER_DEFINED, TokenType.CONTROL) and vocab.tokens[i] \
                    and vocab.tokens[i].replace("\u2581", " ") in text and oracle.count(i) != target.count(i):
                out.append(f"user-defined.atomic:{'+' if target.count(i) > oracle.count(i) else '-'}{i}")
        return out[:8]

    def _smallest(self, keys: tuple[str, ...], text: str, target: list[int]) -> tuple[str, ...]:
        if len(keys) > 1:
            for key in keys:
                if self.encode((key,), text) == target:
                    return (key,)
        return keys

    def _pairs(self, text: str, base: list[int], target: list[int],
               singles: dict[tuple[str, ...], list[int] | None], memo: Counter) -> list[tuple[str, ...]]:
        """The pairs that reproduce the ids: every one among the most promising singles (two
        readings of one text are weighed by the run's verdict), or the first one found with the
        two most promising and any other variant."""
        changed = [k[0] for k, out in singles.items() if out is not None and out != base]
        changed.sort(key=lambda k: (-_closeness(singles[(k,)], target), self.order(k)))
        first = [k[0] for k, _ in memo.most_common(3) if len(k) == 1] + changed[:PAIR_PARTNERS]
        partners = list(dict.fromkeys(first))
        everyone = [k[0] for k, out in singles.items() if out is not None]
        tried: set[tuple[str, ...]] = set()
        hits: list[tuple[str, ...]] = []
        for widely in (False, True):
            for a in partners[:2] if widely else partners:
                for b in everyone if widely else partners:
                    if a == b or stage_of(self._variant(a).cause) == stage_of(self._variant(b).cause):  # type: ignore[union-attr]
                        continue
                    keys = tuple(sorted((a, b), key=self.order))
                    if keys in tried:
                        continue
                    tried.add(keys)
                    if self.encode(keys, text) == target:
                        hits.append(keys)
                        if widely:
                            return hits
            if hits:
                return hits
        return hits

    def _triples(self, text: str, target: list[int], singles: dict[tuple[str, ...], list[int] | None],
                 memo: Counter) -> tuple[str, ...] | None:
        """A pair that explained earlier cases, with one more variant of another stage: an engine
        with two bugs often shows a third on a few texts."""
        for keys, _ in memo.most_common(2):
            if len(keys) != 2:
                continue
            stages_used = {stage_of(self._variant(k).cause) for k in keys}  # type: ignore[union-attr]
            for (key,), out in singles.items():
                if out is None or stage_of(self._variant(key).cause) in stages_used:  # type: ignore[union-attr]
                    continue
                triple = tuple(sorted(keys + (key,), key=self.order))
                if self.encode(triple, text) == target:
                    return triple
        return None

    def _fits(self, keys: tuple[str, ...], symptom: str) -> bool:
        """Whether the rule-based class is a symptom of these variants' causes: among sets that
        reproduce a case, one that also accounts for what the case looks like is preferred
        (``<|begin_of_text|>`` alone as one id is special-parsing; "no split regex" giving the
        same id is a coincidence)."""
        if not symptom:
            return True
        from tokparity.diagnose.info import consistent_class
        return consistent_class(symptom, join([self._variant(k).cause for k in keys])) == symptom  # type: ignore[union-attr]

    def _found(self, keys: tuple[str, ...], text: str, memo: Counter,
               alternatives: Sequence[tuple[str, ...]] = ()) -> Cause:
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


def _closeness(out: list[int] | None, target: list[int]) -> int:
    """How much of ``target`` ``out`` already has right: the common head and tail."""
    if out is None:
        return -1
    head = 0
    for x, y in zip(out, target):
        if x != y:
            break
        head += 1
    tail = 0
    for x, y in zip(reversed(out[head:]), reversed(target[head:])):
        if x != y:
            break
        tail += 1
    return head + tail - abs(len(out) - len(target))
