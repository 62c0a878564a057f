"""The run-level verdict of one engine on one decoding op (decode, stream, pieces), checked as
encode's is: the variant that reproduces the most of its mismatches, its form, and the agreements
it keeps. Where one variant is not proven, a pair may be: a decode that leaves ids out with another
bug, a decode whose text another bug maps, or a table of every id's bytes with two bugs. A bug
that sets a switch otherwise (special tokens skipped) joins any other. A stream that came whole at
its end is read as held or as lagged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import combinations

from tokparity.diagnose import learnt, learnt_cut, learnt_edits
from tokparity.diagnose import wrong_decoders as wrong
from tokparity.diagnose.decoding import (
    BY_NAME,
    ORDER,
    DecodeVariant,
    answer_of,
    as_judged,
    diagnosis_of,
    forms_of,
    merged_pieces,
    paired,
    spelt,
    variant_of,
)
from tokparity.diagnose.variants.text_edit import is_edit, parse
from tokparity.diagnose.verdict import proven
from tokparity.records import BREAKS_LISTED, Diagnosis, Judgement, RootCause
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings


def decoding_verdict(ref: RefTokenizer, op: str, asked: DecodeSettings,
                     mismatches: Sequence[tuple[Judgement, Diagnosis]],
                     agreeing: Iterable[tuple[list[int], int, str]], step: int = 1) -> RootCause | None:
    """One engine's run-level verdict on one decoding op, checked as encode's is: the variant that
    reproduces the most of its ``mismatches`` (each with its diagnosis), what it reproduces, and how
    many of the ``agreeing`` cases ((ids, prompt, corpus/id) each) it keeps, and the first it would
    change. None when no mismatch was reproduced.

    A variant may answer several forms of its bug (one leading space or all of them). An engine
    writes one. The form that gives the most mismatches is the engine's; of forms that give as
    many, the one that keeps the most agreements. It is what the verdict counts. An agreement is
    kept where that form gives the right answer too, or where the bug cannot show there."""
    mismatches = _one_edit(mismatches)
    agreeing = list(agreeing)  # (read again for a pair of causes, or a switch set otherwise)
    counts = Counter(d.variants[0] for _, d in mismatches if d.variants)
    if not counts:
        return None
    order = lambda n: ORDER.get(n, len(ORDER))  # noqa: E731
    name = min(counts, key=lambda n: (-counts[n], order(n)))
    if name in HELD:
        return _held_or_lagged(ref, asked, mismatches, agreeing, step)
    own: list[tuple[Judgement, Diagnosis]] = []
    departs = 0  # where the reference gives the backend's answer: the decoder is the one that departs
    for j, d in mismatches:
        ids, prompt = list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)
        if as_judged(op, answer_of(j)) in {as_judged(op, a) for a in wrong.right_answers(ref, op, ids, prompt, asked)}:
            departs += 1
        else:
            own.append((j, d))
    # An engine writes one form of its bug (one count of characters held back). The cause is the
    # variant whose one form gives the most mismatches, among those the rows name: a variant with many
    # forms reproduces each row in some form, and only one of them is the engine's.
    candidates = sorted({n for _, d in own if len(d.variants) == 1 for n in d.variants + tuple(
        a for alt in d.alternatives for a in alt) if n not in HELD} or {name}, key=lambda n: (-counts[n], order(n), n))
    # (a learnt edit written only before some classes of character, weighed after it: the agreements
    # tell an escaper of every "$" from one of "$" before a digit)
    candidates += [k for c in candidates if is_edit(c) and (k := learnt_edits.narrowed(c, ref, op, asked, [
        (list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0), answer_of(j)) for j, d in own
        if d.variants == (c,)][:NARROWED_FROM])) is not None]
    # (a learnt edit grown with the characters of rows other ways give: "~~" dropped reads as a cut;
    # only where the rows name the edit most, so a named cause keeps its rows)
    if op != "pieces" and is_edit(name) and (edits := [c for c in candidates if is_edit(c)]):
        texts = lambda ids, prompt: str(wrong.right_answers(ref, op, ids, prompt, asked)[0])  # noqa: E731
        more = learnt_edits.grown(edits[0], [(texts(list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)), got)
                                             for j, _ in own if isinstance(got := answer_of(j), str)],
                                  [texts(ids, prompt) for ids, prompt, _ in agreeing])
        candidates += [more] if more is not None and more not in candidates else []
    # (a cut after the last of some characters, or before the first, learnt from every row: a row
    # another way gives may be one too)
    causes = {n.partition(":")[0] for _, d in own for keys in (d.variants, *d.alternatives) for n in keys}
    if op == "decode" and not causes.isdisjoint((learnt_cut.AFTER, learnt_cut.BEFORE)):
        right = lambda ids: wrong.right_answers(ref, op, ids, 0, asked)[0]  # noqa: E731
        rows = [(right(list(j.oracle_ids)), got) for j, _ in own if isinstance(got := answer_of(j), str)]
        agreed = [right(ids) for ids, _, _ in agreeing]
        cuts = [learnt_cut.learnt_after(rows, agreed) if learnt_cut.AFTER in causes else None,
                learnt_cut.learnt_before(rows, agreed) if learnt_cut.BEFORE in causes else None]
        candidates += [c for c in cuts if c is not None and c not in candidates]
    scored: list[tuple[int, str, list[tuple[Judgement, Diagnosis]], Counter[int]]] = []
    for candidate in candidates:
        # (a row of two bugs at once is not one variant's: the verdict names one)
        # (an edit learnt from some rows is tried on every row: a row a named way also reproduces
        # may be the edit's too, a newline dropped from each delta read as a blank delta dropped)
        # (and a variant's answers that a simpler cause gives too: its rows name that cause, and the
        # variant claims them where it is the verdict, each form in its place)
        variant = _whole(candidate)
        sharing = variant is not variant_of(candidate)
        of_it = [(j, d) for j, d in own if len(d.variants) <= 1 and (learnt.is_learnt(candidate) or sharing)
                 or len(d.variants) == 1 and candidate in d.variants + tuple(n for alt in d.alternatives for n in alt)]
        hits_of: Counter[int] = Counter()  # form -> the mismatches it gives exactly
        for j, _ in of_it:
            got = answer_of(j)
            hits_of.update(k for k, a in enumerate(forms_of(variant, ref, list(j.oracle_ids),
                                                           int(j.tags.get("prompt", 0) or 0), asked, op)) if a == got)
        scored.append((max(hits_of.values(), default=0), candidate, of_it, hits_of))
    most = max(top for top, *_ in scored)
    best = [(name, named, hits) for top, name, named, hits in scored if top == most]
    # (candidates that give as many mismatches: the one that keeps the most agreements; the first in order else)
    # (a variant's answers a simpler cause gives too are its own on the agreements: none is masked there)
    checked_all = [(_checked(_whole(name), hits, ref, op, agreeing, asked), name, named, hits)
                   for name, named, hits in best]
    (cases, kept, broken, tied), name, named, hits = max(checked_all, key=lambda c: max(c[0][1][k] for k in c[0][3]))
    # (forms that give as many mismatches: the one that keeps the most agreements, e.g. the buffer size)
    form = max(tied, key=lambda k: (kept[k], -(k or 0)))
    explained = hits[form] if form is not None else len(named)
    # (a verdict on no mismatch of the engine's own proves nothing: every one was the decoder's departure)
    # (a failure on every case leaves no agreement to check it on: any failure would read so)
    checked = cases > 0 or not any(answer_of(j) == wrong.FAILED for j, _ in named)
    verdict = RootCause(name.partition(":")[0], (name,), explained, len(own), kept[form], cases,
                        bool(own) and checked and proven(explained, len(own), kept[form], cases), departs,
                        tuple(broken.get(form, ())))
    # (a pair where one is not proven, or where one leaves rows a pair explains: two bugs of one table)
    if op in ("pieces", "decode") and own and checked and (not verdict.proven or verdict.explains < len(own)):
        pair = _pieces_pair_verdict(ref, asked, own, scored, agreeing, departs) if op == "pieces" else \
            _decode_pair_verdict(ref, asked, own, agreeing, departs)
        if pair is not None and pair.proven and (not verdict.proven or (pair.explains, pair.keeps) > (
                verdict.explains, verdict.keeps) and pair.keeps >= verdict.keeps):
            return pair
    if form is not None and verdict.explains < len(own):
        verdict = _with_switch(ref, op, asked, verdict, form, own, agreeing)
    return _with_failures(ref, asked, verdict, mismatches, agreeing) if op == "decode" else verdict


def _whole(name: str) -> DecodeVariant:
    """The variant ``name`` with every answer of its bug: each form it leaves to a simpler cause
    (None) is its ``shared`` one in that place."""
    variant = variant_of(name)
    run, shared = variant.run, variant.shared
    if shared is None or learnt.is_learnt(name):
        return variant

    def whole(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        own, more = run(ref, ids, prompt, asked), shared(ref, ids, prompt, asked)
        return [a if a is not None or k >= len(more) else more[k] for k, a in enumerate(own)] + more[len(own):]

    return replace(variant, run=whole)


def _with_switch(ref: RefTokenizer, op: str, asked: DecodeSettings, verdict: RootCause, form: int,
                 own: list[tuple[Judgement, Diagnosis]], agreeing: list[tuple[list[int], int, str]]) -> RootCause:
    """The verdict with a switch set otherwise (special tokens skipped), where rows it leaves name
    that switch: a streamer built on a decode that skips special tokens by default has two bugs.
    The verdict's variant runs with the switch; where its bug does not show, the text is the
    decoder's with the switch. It replaces the verdict where it reproduces more and keeps as many."""
    named = Counter(d.variants[0] for _, d in own if len(d.variants) == 1 and d.variants[0] not in verdict.variants
                    and d.variants[0] in BY_NAME and BY_NAME[d.variants[0]].asks is not None)
    if len(verdict.variants) != 1 or not named:
        return verdict
    switch = named.most_common(1)[0][0]
    switched = BY_NAME[switch].asks(asked)  # type: ignore[misc]
    base = variant_of(verdict.variants[0])

    def gives(ids: list[int], prompt: int) -> set:
        forms = forms_of(base, ref, ids, prompt, switched, op)
        bug = forms[form] if form < len(forms) else None
        texts = [bug] if bug is not None else wrong.right_answers(ref, op, ids, prompt, switched)
        return {as_judged(op, t) for t in texts}

    explained = sum(as_judged(op, answer_of(j)) in gives(list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0))
                    for j, _ in own)
    kept, broken = 0, list[str]()
    for ids, prompt, label in agreeing:
        if gives(ids, prompt) & {as_judged(op, t) for t in wrong.right_answers(ref, op, ids, prompt, asked)}:
            kept += 1
        elif len(broken) < BREAKS_LISTED:
            broken.append(label)
    if explained <= verdict.explains or kept < verdict.keeps:
        return verdict
    return RootCause(f"{verdict.cause}+{switch}", (*verdict.variants, switch), explained, len(own), kept,
                     len(agreeing), proven(explained, len(own), kept, len(agreeing)), verdict.oracle_departs,
                     tuple(broken))


NARROWED_FROM = 100  # the rows of a learnt edit that say where it writes (each decoded again)
# (the narrower first; whether an engine fails is a bug apart from the text it gives elsewhere)
FAILING = ("decode.fails-on-invalid-bytes", "decode.fails-past-buffer")


def _with_failures(ref: RefTokenizer, asked: DecodeSettings, verdict: RootCause,
                   mismatches: Sequence[tuple[Judgement, Diagnosis]], agreeing: list[tuple[list[int], int, str]]
                   ) -> RootCause:
    """The verdict with a failing variant that fails on every failure and on no other case, if one does.
    The failures then count as explained: a decoder that cleans up no spaces and raises on a cut
    character has both bugs, and neither alone is proven. The verdict is proven only where its own
    variant is proven on the cases that did not fail."""
    failed = [j for j, _ in mismatches if answer_of(j) == wrong.FAILED]
    if not failed or len(failed) == len(mismatches) or set(verdict.variants) & set(FAILING):
        return verdict
    others = [(list(j.oracle_ids), 0, f"{j.corpus}/{j.case_id}") for j, _ in mismatches
              if answer_of(j) != wrong.FAILED]
    for name in FAILING:
        hits = Counter(k for j in failed for k, a in enumerate(forms_of(BY_NAME[name], ref, list(j.oracle_ids), 0, asked))
                       if a == wrong.FAILED)
        if max(hits.values(), default=0) < len(failed):
            continue
        cases, kept, _, tied = _checked(BY_NAME[name], hits, ref, "decode", [*agreeing, *others], asked)
        if any(kept[k] == cases for k in tied):
            alone = verdict.explains > 0 and proven(verdict.explains, verdict.mismatches - len(failed), verdict.keeps,
                                                    verdict.agreements)
            return replace(verdict, cause=f"{verdict.cause}+{name}", variants=(*verdict.variants, name),
                           explains=verdict.explains + len(failed), proven=verdict.proven or alone)
    return verdict


def _decode_pair_verdict(ref: RefTokenizer, asked: DecodeSettings, own: list[tuple[Judgement, Diagnosis]],
                         agreeing: list[tuple[list[int], int, str]], departs: int) -> RootCause | None:
    """Two bugs of one decoder: the pair the most rows name. One leaves ids out and the other decodes
    the ids it keeps; or one decodes and the other maps its text. The second bug may not show on a
    row. The pair gives a row where its answer is the backend's text. It keeps an agreement where
    it gives the right text."""
    pairs = Counter(d.variants for _, d in own if len(d.variants) == 2 and is_decode_pair(d.variants))
    if not pairs:
        return None
    (a, b), _ = pairs.most_common(1)[0]
    form = _form_of_pair(ref, asked, own, (a, b))
    explained = sum(_pair_answer(ref, asked, (a, b), form, list(j.oracle_ids)) == spelt(answer_of(j)) for j, _ in own)
    kept, broken = 0, list[str]()
    for ids, prompt, label in agreeing:
        if _pair_answer(ref, asked, (a, b), form, ids) in {spelt(t) for t in wrong.right_answers(ref, "decode", ids,
                                                                                              prompt, asked)}:
            kept += 1
        elif len(broken) < BREAKS_LISTED:
            broken.append(label)
    return RootCause(f"{a}+{b}", (a, b), explained, len(own), kept, len(agreeing),
                     proven(explained, len(own), kept, len(agreeing)), departs, tuple(broken))


def is_decode_pair(names: tuple[str, ...]) -> bool:
    """Whether ``names`` are two decode bugs that make one answer together: ids left out, then the
    rest decoded with the other bug; or a decode whose text the other maps."""
    return len(names) == 2 and all(n in BY_NAME for n in names) and (
        BY_NAME[names[0]].keeps is not None or BY_NAME[names[1]].after is not None)


def _pair_answer(ref: RefTokenizer, asked: DecodeSettings, pair: tuple[str, str], form: int, ids: list[int]) -> object:
    """What a decoder with both bugs of ``pair`` answers on ``ids``, its decoding bug in its ``form``."""
    a, b = pair
    keeps, after = BY_NAME[a].keeps, BY_NAME[b].after
    other = BY_NAME[b] if keeps is not None else BY_NAME[a]
    kept = keeps(ref, ids) if keeps is not None else ids
    forms = forms_of(other, ref, kept, 0, asked)
    if after is None:  # (the first form that shows the bug)
        forms = [f for f in forms if f is not None]
        text = forms[0] if forms else wrong.decoded(ref, kept, asked)
    else:
        text = forms[form] if form < len(forms) and forms[form] is not None else wrong.decoded(ref, kept, asked)
    return spelt(after(text) if after is not None and isinstance(text, str) else text)


def as_pair(ref: RefTokenizer, j: Judgement, d: Diagnosis, pair: tuple[str, str], asked: DecodeSettings) -> Diagnosis:
    """One engine, one cause: a row that the run's proven pair gives exactly, named by the pair, its
    own causes its alternatives. Any other row as it was."""
    if d.variants == pair or not is_decode_pair(pair):
        return d
    ids, got = list(j.oracle_ids), spelt(answer_of(j))
    forms = len(forms_of(BY_NAME[pair[0]], ref, ids, 0, asked)) if BY_NAME[pair[1]].after is not None else 1
    if not any(_pair_answer(ref, asked, pair, form, ids) == got for form in range(max(forms, 1))):
        return d
    own = (d.variants,) if d.variants else ()
    return replace(paired(pair, "decode"), alternatives=own + d.alternatives)


def _form_of_pair(ref: RefTokenizer, asked: DecodeSettings, own: list[tuple[Judgement, Diagnosis]],
                  pair: tuple[str, str]) -> int:
    """The form of the pair's decoding bug that gives the most of the rows the pair names (an engine
    writes one): the first of a bug that leaves ids out, whose rows need no form."""
    a, b = pair
    after = BY_NAME[b].after
    if after is None:
        return 0
    hits: Counter[int] = Counter()
    for j, d in own:
        if d.variants == pair:
            got = answer_of(j)
            hits.update(k for k, f in enumerate(forms_of(BY_NAME[a], ref, list(j.oracle_ids), 0, asked))
                        if isinstance(f, str) and after(f) == got)
    return max(hits, key=lambda k: (hits[k], -k), default=0)


PAIRED_AT_MOST = 4  # the candidates, most mismatches first, that a pieces verdict pairs


def _pieces_pair_verdict(ref: RefTokenizer, asked: DecodeSettings, own: list[tuple[Judgement, Diagnosis]],
                         scored: list[tuple[int, str, list[tuple[Judgement, Diagnosis]], Counter[int]]],
                         agreeing: list[tuple[list[int], int, str]], departs: int) -> RootCause | None:
    """A table with two bugs (guidance's: ordinary tokens as text, added tokens left out): two
    variants, each in its form that gives the most mismatches, that reproduce the rows together.
    A row is theirs where either gives it, or each id as the one that changes it. Where one is a
    learnt edit, a row is theirs too where the edit made on the other's pieces gives it (minbpe's
    table: bytes as text, then control characters escaped). An agreement is kept where both keep
    it. The pair that explains the most, then keeps the most; None where fewer than two
    candidates gave a row."""
    ranked = sorted((s for s in scored if s[0]), key=lambda s: -s[0])[:PAIRED_AT_MOST]
    top = [(name, max(hits, key=hits.__getitem__)) for _, name, _, hits in ranked]  # (each in its best form)
    best: RootCause | None = None
    for (a, fa), (b, fb) in combinations(top, 2):
        a, b = (_grown_after(ref, asked, own, agreeing, a, b, fb), _grown_after(ref, asked, own, agreeing, b, a, fa))
        va, vb = variant_of(a), variant_of(b)
        explained, alone = 0, Counter[str]()
        for j, _ in own:
            ids, got = list(j.oracle_ids), answer_of(j)
            one, other = forms_of(va, ref, ids, 0, asked), forms_of(vb, ref, ids, 0, asked)
            x = one[fa] if fa < len(one) else None
            y = other[fb] if fb < len(other) else None
            alone.update(name for name, answer in ((a, x), (b, y)) if answer == got)
            explained += got in (x, y) or _together(ref.piece_bytes(ids), (a, b), x, y, got)
        if not alone[a] or not alone[b]:  # (each bug shows on rows of its own, or it is no part of the table)
            continue
        kept, broken = 0, list[str]()
        for ids, prompt, label in agreeing:
            if _keeping(va, [fa], ref, "pieces", ids, prompt, asked) and _keeping(vb, [fb], ref, "pieces", ids,
                                                                                    prompt, asked):
                kept += 1
            elif len(broken) < BREAKS_LISTED:
                broken.append(label)
        made = RootCause(f"{a.partition(':')[0]}+{b.partition(':')[0]}", (a, b), explained, len(own), kept,
                         len(agreeing), proven(explained, len(own), kept, len(agreeing)), departs, tuple(broken))
        if best is None or (made.proven, made.explains, made.keeps) > (best.proven, best.explains, best.keeps):
            best = made
    return best


def _together(right: list[bytes], pair: tuple[str, str], x: list | None, y: list | None, got: object) -> bool:
    """Whether two pieces variants' answers ``x`` and ``y`` give ``got`` together: each id as the one
    that changes it, or a learnt edit made on the other's pieces."""
    if x is None or y is None:
        return False
    return merged_pieces(right, x, y) == got or any(
        is_edit(e) and learnt_edits.edited(parse(e), "pieces", o) == got for e, o in ((pair[1], x), (pair[0], y)))


def as_pieces_pair(ref: RefTokenizer, j: Judgement, d: Diagnosis, pair: tuple[str, str],
                   asked: DecodeSettings) -> Diagnosis:
    """One engine, one cause: a pieces row no cause gave, where the run's proven pair gives it
    together, named by the pair. Any other row as it was."""
    if d.variants or len(pair) != 2:
        return d
    ids, got = list(j.oracle_ids), answer_of(j)
    one, other = (forms_of(variant_of(n), ref, ids, 0, asked) for n in pair)
    if not any(_together(ref.piece_bytes(ids), pair, x, y, got) for x in one for y in other):
        return d
    does = " and ".join(variant_of(n).does for n in pair)
    return Diagnosis("+".join(n.partition(":")[0] for n in pair), f"reproduced: the reference's pieces made as a "
                     f"table that {does} gives the backend's answer exactly", pair, d.alternatives, stage="pieces")


def _grown_after(ref: RefTokenizer, asked: DecodeSettings, own: list[tuple[Judgement, Diagnosis]],
                 agreeing: list[tuple[list[int], int, str]], edit: str, other: str, form: int) -> str:
    """A learnt ``edit`` grown with the characters it writes otherwise on the ``other`` variant's
    pieces (``learnt_edits.grown``); any other name as it is. The pieces are read as one text."""
    if not is_edit(edit):
        return edit
    text = lambda pieces: b"".join(pieces).decode("utf-8", "replace")  # noqa: E731
    rows = []
    for j, _ in own:
        answers = forms_of(variant_of(other), ref, list(j.oracle_ids), 0, asked)
        if form < len(answers) and answers[form] is not None and isinstance(got := answer_of(j), list):
            rows.append((text(answers[form]), text(got)))
    return learnt_edits.grown(edit, rows, [text(ref.piece_bytes(ids)) for ids, _, _ in agreeing]) or edit


HELD = ("stream.held-to-end", "stream.lagged")  # the two readings of a stream that came whole at its end


def _held_or_lagged(ref: RefTokenizer, asked: DecodeSettings, mismatches: Sequence[tuple[Judgement, Diagnosis]],
                    agreeing: Iterable[tuple[list[int], int, str]], step: int) -> RootCause:
    """A stream that sent its text only at its last step holds everything, or it lags and the
    stream was short. An engine that holds everything differs on every stream where a word ends
    before the last step. Where more than 1 % of such streams agreed, the engine sends its deltas
    late instead: a lag agrees wherever it is not the whole stream."""
    from tokparity.diff.decode import held_would_differ

    def decode(ids: list[int]) -> str:
        return wrong.decoded(ref, ids, asked)

    named = sum(1 for _, d in mismatches if d.variants and d.variants[0] in HELD)
    cases = held = 0
    differing: list[str] = []  # the first agreements a stream held whole would change
    for ids, prompt, label in agreeing:
        cases += 1
        if held_would_differ(decode, ids, prompt, step):
            held += 1
            if len(differing) < BREAKS_LISTED:
                differing.append(label)
    if held > 0.01 * cases:  # (a lag keeps them all)
        return RootCause("stream.lagged", ("stream.lagged",), named, len(mismatches), cases, cases,
                         proven(named, len(mismatches), cases, cases), 0)
    name, keeps = "stream.held-to-end", cases - held
    return RootCause(name, (name,), named, len(mismatches), keeps, cases, proven(named, len(mismatches), keeps, cases), 0,
                     tuple(differing))


def as_held(d: Diagnosis, name: str, steps: int) -> Diagnosis:
    """A stream that came whole at its end, ``steps`` ids long, named as the engine's verdict reads it."""
    if name == "stream.held-to-end":
        return diagnosis_of([name], d.stage)
    return Diagnosis(name, f"this stream of {steps} ids came whole at its end; the engine's other streams that "
                           "finished a word before their end agreed: it sends late, not only at the end",
                     (name,), stage=d.stage)


def _checked(variant: DecodeVariant, hits: Counter[int], ref: RefTokenizer, op: str,
             agreeing: Iterable[tuple[list[int], int, str]], asked: DecodeSettings
             ) -> tuple[int, Counter[int | None], dict[int | None, list[str]], list[int | None]]:
    """The variant's forms that give the most mismatches (``hits``), checked on the agreements:
    their count, the agreements each form keeps, the first each would change, and the forms."""
    top = max(hits.values(), default=0)
    tied: list[int | None] = [k for k, n in hits.items() if n == top] or [None]
    kept: Counter[int | None] = Counter()
    broken: dict[int | None, list[str]] = {}  # form -> the first agreements it would change
    cases = 0
    for ids, prompt, label in agreeing:
        cases += 1
        keeping = _keeping(variant, tied, ref, op, ids, prompt, asked)
        kept.update(keeping)
        for k in tied:
            if k not in keeping and len(broken.setdefault(k, [])) < BREAKS_LISTED:
                broken[k].append(label)
    return cases, kept, broken, tied


def _keeping(variant: DecodeVariant, forms: list[int | None], ref: RefTokenizer, op: str, ids: list[int],
             prompt: int, asked: DecodeSettings) -> list[int | None]:
    """The ``forms`` of the variant's bug with which an engine still answers right on ``ids``."""
    answers = forms_of(variant, ref, ids, prompt, asked, op) if any(f is not None for f in forms) else []
    right: set | None = None
    out = []
    for form in forms:
        # (None: a bug read off the deltas alone, a stream held to the end: its text is right)
        answer = answers[form] if form is not None and form < len(answers) else None
        if answer is not None and right is None:
            texts = wrong.right_answers(ref, op, ids, prompt, asked)
            if op == "stream":  # (as the judge allows: a character left unfinished at the end may stay unsent)
                texts += [a.rstrip("\ufffd") for a in texts]
            right = {as_judged(op, a) for a in texts}
        if answer is None or as_judged(op, answer) in (right or set()):
            out.append(form)
    return out


def _one_edit(mismatches: Sequence[tuple[Judgement, Diagnosis]]) -> Sequence[tuple[Judgement, Diagnosis]]:
    """The rows with the edits learnt from each case read as one edit (``learnt_edits.joined``): an
    engine that drops a newline in one text drops it in every text."""
    one = learnt_edits.joined(d.variants[0] for _, d in mismatches if d.variants)
    if one is None:
        return mismatches
    return [(j, replace(d, variants=(one,)) if d.variants and is_edit(d.variants[0]) else d) for j, d in mismatches]

