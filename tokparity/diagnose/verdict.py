"""The run-level root cause of one (model, backend): a claim a maintainer can check.

Each mismatch has its own cause, the smallest set of variants that reproduces it. The run's
verdict is one set of variants that reproduces the most of the backend's mismatches *and*
keeps the agreeing cases agreeing: the reference with that set applied gives the backend's ids
on the mismatches and still gives the oracle's on every case where the backend agreed.
"reproduces 1,340 of 1,340 mismatches and all 4,973 agreements" is the proof that the named
deviation is the engine's behaviour, not a coincidence of a few texts.

The candidates are the per-case sets that explained the most cases, and their union (two bugs
that each show on some cases are one engine with both). Agreements are re-read from the corpora
(the journal keeps only their verdicts), and the reference with no variant stands for the oracle
on them, which holds wherever ``ref`` agrees with the oracle (every zoo model).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from itertools import combinations

from tokparity.diagnose.search import Diagnoser, join
from tokparity.diagnose.variants import (
    CONTRACTION_FORMS,
    EDIT,
    FAILURES,
    LAST_RESORT,
    SPLIT_EDIT,
    all_joined,
    cause_of,
    char_table,
    combinable,
    parse_edit,
)
from tokparity.records import BREAKS_LISTED, TIE, Diagnosis, Judgement, RootCause
from tokparity.reference import wpm

# One mismatch as the run-level pass reads it: what was judged, and the cause it carries so far.
Diagnosed = tuple[Judgement, Diagnosis]

CANDIDATES = 4  # the per-case sets that explained the most cases
TIES_WEIGHED = 16  # of the sets tied at the candidates' cut, this many are weighed (by breadth), smallest first
ADDED_AT_MOST = 5  # variants added one by one to the best of them (an engine may have as many bugs)
POOL = 12  # the variants that may be added: those in the most per-case sets
OTHER_STARTS = 4  # the pool's variants a verdict not proven from the best start is grown from too
RANKED_ON = 400  # mismatches and agreements (each, evenly spread) on which candidates are ranked
PRUNED_ON = 200  # the mismatches and agreements (each) holding a character, on which its reading is weighed
UNEXPLAINED_LOOKED_AT = 24  # mismatches a best set leaves unexplained, whose texts pick variants that need another


def candidates(mismatches: Sequence[Diagnosed], breadth: Callable[[tuple[str, ...]], int] = lambda keys: 0
               ) -> list[tuple[str, ...]]:
    """The most frequent per-case sets (of sets as frequent, the narrowest by ``breadth``), their
    union (an engine with two bugs shows one on some texts, the other on others, both on a few),
    and the union less each of its members."""
    counts = Counter(d.variants for _, d in mismatches if d.variants)
    # A set that reproduced a case as well as the one chosen for it counts too: on "Hello" a
    # dummy prefix toggled and one added "unless the text starts with a space" are the same.
    counts.update(keys for _, d in mismatches for keys in d.alternatives)
    ranked = counts.most_common()
    top = [keys for keys, _ in ranked[:CANDIDATES]]
    if len(ranked) > CANDIDATES:
        # Sets as frequent as the last one taken: the narrowest of them, not the first found (another
        # model's whole split regex gives a scanner's tab or U+00A0 rule on every text it shows on,
        # as often as that rule does, and is found first).
        # A breadth costs a footprint of every probe: an engine whose every case has a set of its own
        # (all tied at one case) has them weighed only up to TIES_WEIGHED, the smallest sets first
        # (a narrow rule found as another case's alternative is one variant).
        last = ranked[CANDIDATES - 1][1]
        top = [keys for keys, n in ranked if n > last]
        tied = sorted((keys for keys, n in ranked if n == last), key=len)[:TIES_WEIGHED]
        top += sorted(tied, key=breadth)[:CANDIDATES - len(top)]
    top += _token_families(counts)
    # Every learnt edit of the text that two cases showed, as one: an engine that reads a tab as a
    # space on one text and squeezes spaces on another does both everywhere.
    edits: Counter[str] = Counter()
    for keys, n in counts.items():
        edits.update({k: n for k in keys if k.startswith(EDIT)})
    if len(edits) > 1:
        top.append(_combined(k for k, n in edits.items() if n > 1) or _combined(edits))
    # Every character table learnt from a case, as one: a port's hand-written list reads each of
    # its characters one way on every text.
    tables = [k for keys, n in counts.items() for k in keys for _ in range(n) if char_table.is_table(k)]
    if len(set(tables)) > 1:
        top.append((char_table.joined_key(tables),))
    union = _combined(k for keys in top for k in keys)
    out = list(top)
    if len(top) > 1 and len(union) <= 5:
        out.append(union)
        out += [tuple(k for k in union if k != drop) for drop in union if len(union) > 2]
    return list(dict.fromkeys(out))


def _combined(keys: Iterable[str]) -> tuple[str, ...]:
    """The keys in order, less any an earlier one cannot be combined with (two split regexes at
    once mean nothing: ``variants.combinable``). Learnt edits of the text are one edit: the first's
    place holds them all, where they read no character two ways; so do character tables."""
    keys = list(dict.fromkeys(keys))
    edits = [k for k in keys if k.startswith(EDIT)]
    if len(edits) > 1:
        joined = all_joined(map(parse_edit, edits))
        # (edits that read a character two ways: the first kept, as a set of one edit)
        keys = [joined.key() if joined is not None and k == edits[0] else k for k in keys if k not in edits[1:]]
    tables = [k for k in keys if char_table.is_table(k)]
    if len(tables) > 1:
        table = char_table.joined_key(tables)
        keys = [table if k == tables[0] else k for k in keys if k not in tables[1:]]
    out: list[str] = []
    for k in keys:
        if all(combinable(k, other) for other in out):
            out.append(k)
    return tuple(out)


def _token_families(counts: Counter) -> list[tuple[str, ...]]:
    """Variants made for one token stand for a rule about all of them: the sets with every
    ``user-defined.atomic:-N`` as the catalogue's ``user-defined.atomic`` (no piece matched whole),
    with every ``:+N`` of the run together (these pieces all matched whole), and with every
    contraction form of the run left out or matched (``pretokenizer.contractions:-'rE``, ``:+'eR``)."""
    out = []
    for keys in list(counts)[:CANDIDATES * 4]:
        if any(k.startswith("user-defined.atomic:-") for k in keys):
            rest = tuple(k for k in keys if not k.startswith("user-defined.atomic:-"))
            out.append(tuple(dict.fromkeys(rest + ("user-defined.atomic",))))
    plus = tuple(dict.fromkeys(k for keys in counts for k in keys if k.startswith("user-defined.atomic:+")))[:16]
    if len(plus) > 1:
        out.append(plus)
    # The contraction forms each case left out or matched are one hand-written list: all of them,
    # alone and with what the most frequent sets name beside (another engine's \s, a lookup), so
    # that a set of three bugs is weighed whole where a broader reading took many of its cases.
    # A list can also be spelt another way besides ('[sS]: no 'ſ), which a few cases show.
    forms = tuple(dict.fromkeys(k for keys in counts for k in keys if k.startswith(CONTRACTION_FORMS)))[:16]
    if forms:
        others = tuple(k for keys, _ in counts.most_common(CANDIDATES) for k in keys if not k.startswith(CONTRACTION_FORMS))
        spellings = dict.fromkeys(k for keys in counts for k in keys
                                  if cause_of(k) == SPLIT_EDIT and not k.startswith(CONTRACTION_FORMS))
        out += [forms, _combined(forms + others)] + [_combined(forms + (k,) + others) for k in list(spellings)[:3]]
    return list(dict.fromkeys(out))


def _pool(mismatches: Sequence[Diagnosed]) -> list[str]:
    counts: Counter[str] = Counter()
    for _, d in mismatches:
        counts.update(d.variants)
        for keys in d.alternatives:
            counts.update(keys)
    least = max(2, len(mismatches) // 200)  # a variant that explained a handful of cases among thousands is noise
    return [k for k, n in counts.most_common(POOL) if n >= least]


def _needing_another(diagnoser: Diagnoser, best: tuple[str, ...], pool: list[str], mismatches: Sequence[Diagnosed],
                     explains) -> list[str]:
    """The variants that may change nothing alone (``Variant.needs_another``) and do apply to
    mismatches ``best`` leaves unexplained: no case's own set holds one where a coincidence
    reproduced that case alone, so each is tried as one more part of the verdict all the same."""
    left = [(j, d) for j, d in _spread(list(mismatches), RANKED_ON) if not explains(best, [(j, d)])]
    return [key for key, v in diagnoser.variants.items()
            if v.needs_another and key not in pool and key not in best
            and any(diagnoser.affects(key, j.text) for j, _ in left[:UNEXPLAINED_LOOKED_AT])]


def _spread(items: list, n: int) -> list:
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(k * step)] for k in range(n)]


def root_cause(diagnoser: Diagnoser, mismatches: Sequence[Diagnosed], agreeing: Iterable[str],
               base_of: dict[str, list[int] | None], label: Callable[[str], str] = str) -> RootCause | None:
    """The best set of variants and what it explains and keeps, or None when no mismatch was
    reproduced. The best set is the one under which the reference
    predicts the backend on the most cases, mismatches and agreements alike (ranked on an even
    sample of each when there are many, then counted on all). ``base_of`` caches the reference's
    own ids per text (shared by the backends of one model); ``label`` names an agreeing text the
    set would change, as the verdict lists it (``RootCause.breaks``)."""
    def reference(text: str) -> list[int] | None:
        if text not in base_of:
            base_of[text] = diagnoser.encode_remembered((), text)
        return base_of[text]

    # Where the reference itself gives the backend's ids, the oracle is the one that departs (a
    # drift whose new release fixed the old): every set that leaves the text alone would
    # "reproduce" such a mismatch, so the verdict is weighed on the others and counts these apart.
    own: list[Diagnosed] = []
    departs = 0
    for m in mismatches:
        if reference(m[0].text) == list(m[0].backend_ids):
            departs += 1
        else:
            own.append(m)
    mismatches = own
    sets = candidates(mismatches, diagnoser.breadth)
    if not sets:
        return None
    texts = list(agreeing)

    def explains(keys: tuple[str, ...], among: Sequence[Diagnosed]) -> int:
        return sum(diagnoser.predicts(keys, j) for j, _ in among)

    def keeps(keys: tuple[str, ...], among: Sequence[str]) -> int:
        return sum(diagnoser.encode_remembered(keys, text) == reference(text) for text in among)

    some_m, some_t = _spread(list(mismatches), RANKED_ON), _spread(texts, RANKED_ON)
    rate_m, rate_t = len(mismatches) / max(1, len(some_m)), len(texts) / max(1, len(some_t))

    def score(keys: tuple[str, ...]) -> float:
        return explains(keys, some_m) * rate_m + keeps(keys, some_t) * rate_t

    # Equal predictions: the smaller set, then the narrower one (Occam: lower-casing off rather than
    # the whole normalizer off, when no text of the run has an accent to tell them apart).
    def rank(keys: tuple[str, ...]) -> tuple:  # (then the simpler of a variant and one that refines it)
        # (a table learnt from the cases loses a tie to the catalogue's named causes: it can be
        # written to fit any case, a named cause cannot)
        return (score(keys), diagnoser.plain(keys) == keys, -sum(map(char_table.is_table, keys)), -len(keys),
                -diagnoser.breadth(keys))

    # (a table joined from every case's holds their accidents too: each pruned before it is weighed)
    sets = list(dict.fromkeys(_table_pruned(diagnoser, keys, mismatches, texts, explains, keeps) for keys in sets))
    start = max(sets, key=rank)
    # Then one variant more at a time, from those that explained some case, while the set predicts
    # more cases (an engine with two bugs: the one that shows most, then the other).
    pool = _pool(mismatches)
    # (a failure reproduced is one more part to try however rare: an engine crashes on few texts)
    pool += list(dict.fromkeys(k for j, d in mismatches if j.cls == "crash"
                               for keys in (d.variants, *d.alternatives) for k in keys if k not in pool))
    pool += _needing_another(diagnoser, start, pool, mismatches, explains)

    def grown(best: tuple[str, ...]) -> tuple[str, ...]:
        for _ in range(ADDED_AT_MOST):
            bigger = [tuple(sorted(best + (k,), key=diagnoser.order)) for k in pool
                      if k in diagnoser.variants and all(combinable(k, other) for other in best)]
            if not bigger:
                break
            scores = {keys: score(keys) for keys in bigger}
            top = max(scores.values())
            if top <= score(best):
                break
            tied = [keys for keys, s in scores.items() if s == top]
            if len(tied) > 1:
                # Sets that predict as many of the sampled cases: counted on all of them, then the
                # narrower (the sample may hold none of the texts that tell Unicode 17's tables from
                # JavaScript's reading, which gives their ids too, and breadth alone would take the
                # narrower where the broader explains more beyond the sample).
                tied.sort(key=lambda keys: (-explains(keys, mismatches) - keeps(keys, texts), diagnoser.plain(keys) != keys,
                                            diagnoser.breadth(keys)))
            best = tied[0]
        return best

    best = grown(start)
    if not proven(explains(best, mismatches), len(mismatches), keeps(best, texts), len(texts)):
        # Not proven from the best start: grown from each of the others the pool holds, best first.
        # A broad variant that gives two of an engine's narrow deviations by coincidence (another
        # model's whole split regex, for a scanner's tab and U+00A0 rules) starts ahead of each,
        # and none of the others can join it.
        for other in sorted(((k,) for k in pool if k in diagnoser.variants and (k,) != start), key=rank,
                            reverse=True)[:OTHER_STARTS]:
            best = max(best, grown(other), key=rank)
    best = _table_pruned(diagnoser, best, mismatches, texts, explains, keeps)
    names = [diagnoser.variants[k].cause for k in best if k in diagnoser.variants]
    explained, kept = explains(best, mismatches), keeps(best, texts)
    # (a failure claimed needs texts the engine answered: one that fails on every text would
    # otherwise "fail where the reference fails" on a corpus whose every text holds such a piece)
    answered = kept > 0 or not any(diagnoser.variants[k].fails for k in best if k in diagnoser.variants)
    is_proven = proven(explained, len(mismatches), kept, len(texts)) and answered
    if not is_proven and all(k.startswith(LAST_RESORT) for k in best):
        return None  # (last resorts give some cases by coincidence: unproven, they say nothing of the run)
    breaks = tuple(dict.fromkeys(label(text) for text in texts
                                 if diagnoser.encode_remembered(best, text) != reference(text)))
    return RootCause(join(names), best, explained, len(mismatches), kept, len(texts), is_proven, departs,
                     breaks[:BREAKS_LISTED])


def _table_pruned(diagnoser: Diagnoser, keys: tuple[str, ...], mismatches: Sequence[Diagnosed], texts: Sequence[str],
                  explains: Callable, keeps: Callable) -> tuple[str, ...]:
    """``keys`` with each reading of its character table dropped where the cases that hold that
    character agree better without it: a reading one case showed may be that case's accident.
    Where ``library.bert`` is a part, BERT's own readings go too: the evidence says them apart."""
    tables = [k for k in keys if char_table.is_table(k)]
    if not tables:
        return keys
    p = diagnoser.base.pipeline
    entries = list(char_table.parse(tables[0]))
    if char_table.BERT in keys:
        entries = [e for e in entries if wpm.bert_reading(e[0], p.lowercase, p.strip_accents) != e[1]]

    def with_(table: list[tuple[str, str]]) -> tuple[str, ...]:
        return tuple(k for k in keys if k != tables[0]) + ((char_table.key_of(tuple(table)),) if table else ())

    for entry in list(entries):
        ms = _spread([m for m in mismatches if entry[0] in m[0].text], PRUNED_ON)
        ts = _spread([t for t in texts if entry[0] in t], PRUNED_ON)
        fewer = [e for e in entries if e != entry]
        if explains(with_(fewer), ms) + keeps(with_(fewer), ts) >= explains(with_(entries), ms) + keeps(with_(entries), ts):
            entries = fewer
    return tuple(sorted(with_(entries), key=diagnoser.order)) if entries or len(keys) > 1 else keys


def verdict_parts(diagnoser: Diagnoser, mismatches: Sequence[Diagnosed], verdict: RootCause) -> dict[int, Diagnosis]:
    """Each mismatch whose own cause is not part of the run's root cause (a tie among them), with
    the parts of that root cause (smallest first) that give its ids too: what tokparity.run.decide
    needs to carry one engine's one cause on every row it reproduces. A mismatch whose search
    reproduced nothing (a stage-level cause, or none: a long text's composed sets are searched
    less widely) is one too, where the reference gives the oracle's ids on its text, as the search
    requires before it claims anything. Returns the completed diagnoses, by position in
    ``mismatches``."""
    keys = verdict.variants
    parts = [part for size in range(1, len(keys) + 1) for part in combinations(keys, size)]
    changed = {}
    for i, (j, d) in enumerate(mismatches):
        if d.cause != TIE and d.variants and set(d.variants) <= set(keys):
            continue  # (its own cause is a part already)
        if d.cause != TIE and not d.variants and diagnoser.encode_remembered((), j.text) != list(j.oracle_ids):
            continue  # (the reference is not the oracle on this text: nothing of the backend's can be shown)
        found = tuple(part for part in parts if diagnoser.predicts(part, j))
        if found:
            changed[i] = replace(d, verdict_parts=found)
    return changed


def proven(explains: int, mismatches: int, keeps: int, agreements: int) -> bool:
    """A claim a maintainer can trust: the set reproduces nearly every mismatch (90 %) and leaves
    nearly every agreement as it is (99 %)."""
    return explains >= 0.9 * mismatches and keeps >= 0.99 * agreements


def weights(rows: int, agreements: int) -> list[float]:
    """What each of a verdict's rows and then each agreement is worth to a rule learnt from them:
    a row one, an agreement as many rows as ``proven`` allows for it (10 % of the rows may be
    missed, 1 % of the agreements broken). A rule that one row gives by accident breaks
    agreements, and loses."""
    return [1.0] * rows + [max(1.0, 10 * rows / max(1, agreements))] * agreements


def _cases(n: int) -> str:
    return f"{n:,} case" + ("" if n == 1 else "s")


def kept(verdict: RootCause) -> str:
    """``keeps all 703 agreements``; with no agreement at all, that nothing checked the claim there."""
    if not verdict.agreements:
        return "is checked on no agreement, since no case agrees"
    if verdict.keeps == verdict.agreements:
        return f"keeps all {verdict.agreements:,} agreements" if verdict.agreements != 1 else "keeps the one agreement"
    return f"keeps {verdict.keeps:,} of {verdict.agreements:,} agreements"


def sentence(model: str, backend: str, oracle: str, verdict: RootCause | None, mismatches: int,
             ties: int = 0, unanswered: int = 0) -> str:
    """The one-sentence summary a report opens with. A verdict weighs neither ties nor the
    mismatches the engine gave no answer on (``unanswered``: crashes and timeouts); where it leaves
    out more than the ties, the summary says how many."""
    if not mismatches:
        return f"{backend} agrees with {oracle} on every case of {model}."
    if not verdict:
        return (f"{backend} differs from {oracle} on {_cases(mismatches)} of {model}; no variant of the reference "
                "reproduces them, so the cause is not named.")
    more = verdict.oracle_departs
    departs = (f" On {more:,} more case{'' if more == 1 else 's'}, tokparity's own reference gives {backend}'s answer. "
               f"There {oracle} is the one that differs.") if more else ""
    departs += _left_out(mismatches - ties - verdict.mismatches - verdict.oracle_departs, unanswered)
    if not verdict.proven:
        return (f"{backend} differs from {oracle} on {_cases(mismatches)} of {model}; the closest cause, "
                f"{verdict.cause}, reproduces {verdict.explains:,} of {verdict.mismatches:,} mismatches "
                f"and {kept(verdict)}: not proven, the engine deviates elsewhere or on fewer texts.{departs}")
    # (a failure reproduced is the reference failing where the engine did: no ids to give "exactly")
    how = "(the ids exactly, each crash by failing on the same text)" if fails_too(verdict) else "exactly"
    return (f"{backend} differs from {oracle} on {_cases(mismatches)} of {model} because of "
            f"{verdict.cause}: the reference with that deviation reproduces {verdict.explains:,} of "
            f"{verdict.mismatches:,} mismatches {how} and {kept(verdict)}.{departs}")


def _left_out(left: int, unanswered: int) -> str:
    """What the summary says of the mismatches a verdict left out, ties apart.

    >>> _left_out(3, 3)
    ' The other 3 cases are not weighed: a crash or a timeout gives no answer a cause could reproduce.'
    >>> _left_out(1, 0)
    ' The other case is not weighed.'
    """
    if left <= 0:
        return ""
    other = "The other case is" if left == 1 else f"The other {left:,} cases are"
    why = ": a crash or a timeout gives no answer a cause could reproduce" if left <= unanswered else ""
    return f" {other} not weighed{why}."


def fails_too(verdict: RootCause) -> bool:
    """Whether the verdict holds a deviation that makes the engine fail (variants.FAILURES): some of
    the mismatches it reproduces are crashes, reproduced by the reference failing on them too."""
    return any(cause_of(key) in FAILURES for key in verdict.variants)
