"""The causes of the decoding ops' mismatches (decode, stream, pieces), named by reproduction: the
reference's decoding changed in one named way gives the backend's answer exactly.

Each ``DecodeVariant`` is a known way to turn ids into text wrongly, from the real bugs the
catalogue cites; ``run(reference, ids, prompt, asked)`` gives what a decoder with that bug answers
(``asked``: the DecodeSettings the run decodes with; a stream's: ``skip_special`` only):

    decode  the text
    stream  the text its deltas add up to (a streamer that buffers words sends other deltas
            than one that sends every id at once; what they add up to is what a user reads)
    pieces  each id's bytes

A variant may answer several texts (the same bug as different engines write it). A variant whose
answer is the backend's (and not the right one) reproduces the mismatch; where several do, the one
that reproduces most of the engine's mismatches of that op names the cause (``prefer``: one
engine, one cause), the others are its alternatives. None is named when none reproduces it.
The catalogue (docs/catalogue/causes.md) describes each name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import combinations
from os.path import commonprefix

from tokparity.diagnose import learnt, learnt_edits, learnt_ids, wrong_bytes, wrong_edits, wrong_streamer
from tokparity.diagnose import wrong_decoders as wrong
from tokparity.diagnose.info import cause_info
from tokparity.diagnose.variants.text_edit import is_edit
from tokparity.diagnose.verdict import proven
from tokparity.records import BREAKS_LISTED, Diagnosis, Judgement, RootCause
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings


@dataclass(frozen=True)
class DecodeVariant:
    """How one decoding cause is built; causes.toml declares it (its op, fix, words)."""

    name: str
    # the answers a decoder with this bug gives: (reference, ids, prompt, the settings asked)
    run: Callable[[RefTokenizer, list[int], int, DecodeSettings], list]
    # The same way of decoding without the bug: a variant that answers what its twin does on these
    # ids shows no bug here (Latin-1 and UTF-8 read ASCII alike), so it reproduces nothing.
    twin: Callable[[RefTokenizer, list[int], int, DecodeSettings], list] | None = None
    # Answers of this bug that a simpler cause gives too: a row's own search leaves them to that
    # cause, and the run's verdict claims them once it names this one (one engine, one cause).
    shared: Callable[[RefTokenizer, list[int], int, DecodeSettings], list] | None = None
    # The ids a bug that leaves ids out decodes (None: it leaves none out). The rest of the decoder
    # may have a bug of its own: each other decode variant is tried on those ids.
    keeps: Callable[[RefTokenizer, list[int]], list[int]] | None = None

    @property
    def op(self) -> str:
        return str(cause_info(self.name.partition(":")[0])["stage"])

    @property
    def does(self) -> str:
        """What the variant does, as the evidence says it (a learnt one: what was learnt)."""
        return learnt.does(self.name) if learnt.is_learnt(self.name) else str(cause_info(self.name)["evidence"])


VARIANTS = (
    DecodeVariant("stream.bytes-as-latin1", wrong.latin1, twin=wrong.joined),
    DecodeVariant("stream.split-character-sent", wrong.eager, twin=wrong.joined),
    DecodeVariant("stream.prompt-dropped", wrong.prompt_dropped),
    DecodeVariant("stream.begun-character-dropped", wrong.begun_character_dropped),
    DecodeVariant("stream.restart-after-newline", wrong.restart_after_newline),
    DecodeVariant("stream.prompt-resent", wrong.prompt_resent),
    DecodeVariant("stream.last-prompt-token-resent", wrong.last_prompt_token_resent, twin=wrong.right_stream),
    DecodeVariant("stream.offset-into-cleaned-text", wrong_streamer.offset_into_cleaned_text),
    DecodeVariant("stream.offset-into-lossy-text", wrong.offset_into_lossy_text),
    DecodeVariant("stream.text-resent", wrong.text_resent),
    DecodeVariant("stream.cluster-resent", wrong.cluster_resent),
    DecodeVariant("stream.byte-zero-unmapped", wrong.byte_zero_unmapped),
    DecodeVariant("stream.metaspace-on-byte-level", wrong.metaspace_on_byte_level),
    DecodeVariant("stream.held-to-end", wrong.held_to_the_end),
    DecodeVariant("stream.lagged", wrong.lagged),
    DecodeVariant("stream.deltas-lstripped", wrong.deltas_lstripped),
    DecodeVariant("stream.first-space-trimmed", wrong_edits.first_space_trimmed, twin=wrong.right_stream),
    DecodeVariant("stream.blank-deltas-dropped", wrong_edits.blank_deltas_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.repeated-delta-dropped", wrong_edits.repeated_delta_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.stalls-after-change", wrong_edits.stalls_after_change, twin=wrong.right_stream),
    DecodeVariant("stream.tail-never-sent", wrong.tail_never_sent, twin=wrong.right_stream),
    DecodeVariant("stream.last-step-dropped", wrong.last_step_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.last-id-per-step", wrong.last_id_per_step, twin=wrong.right_stream),
    DecodeVariant("stream.characters-held-back", wrong.characters_held_back, twin=wrong.right_stream),
    DecodeVariant("stream.tag-start-held", wrong.tag_start_held, twin=wrong.right_stream),
    DecodeVariant("decode.specials-skipped", wrong.specials_skipped),
    DecodeVariant("decode.specials-written", wrong.specials_written),
    DecodeVariant("decode.added-skipped", wrong.added_skipped),
    DecodeVariant("decode.specials-spaced", wrong.specials_spaced),
    DecodeVariant("decode.remove-special", wrong.remove_special),
    DecodeVariant("decode.cleanup", wrong.cleanup),
    DecodeVariant("decode.unfinished-end-dropped", wrong.unfinished_end_dropped),
    DecodeVariant("decode.lstrip", wrong.lstrip, twin=wrong.joined_all),
    DecodeVariant("decode.first-byte-dropped", wrong_edits.first_byte_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.text-lstripped", wrong_edits.text_lstripped, twin=wrong.decoded_right),
    DecodeVariant("decode.prefix-kept", wrong.prefix_kept),
    DecodeVariant("decode.space-dropped-after-bos", wrong_edits.space_dropped_after_bos),
    DecodeVariant("decode.runs-decoded-alone", wrong_edits.runs_decoded_alone),
    DecodeVariant("decode.first-token-marks-dropped", wrong_edits.first_token_marks_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.ids-alone", wrong.each_alone, shared=wrong.each_alone_ignoring),
    DecodeVariant("decode.cut", wrong_edits.cut),
    DecodeVariant("decode.cut-at-eos", wrong_edits.cut_at_eos),
    DecodeVariant("decode.rest-dropped-after-invalid-byte", wrong.rest_dropped_after_invalid),
    DecodeVariant("decode.long-token-dropped", wrong.long_token_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.byte-shaped-tokens", wrong.byte_shaped_tokens, twin=wrong.decoded_right),
    DecodeVariant("decode.bytes-as-latin1", wrong.decode_latin1, twin=wrong.decoded_right),
    DecodeVariant("decode.byte-tokens-raw", wrong_bytes.byte_tokens_raw, twin=wrong.decoded_right),
    DecodeVariant("decode.token-text-when-invalid", wrong_bytes.token_text_when_invalid),
    DecodeVariant("decode.glyphs-not-mapped", wrong_bytes.glyphs_not_mapped, twin=wrong.decoded_right),
    DecodeVariant("decode.byte-level-decoder", wrong_bytes.byte_level_decoder, twin=wrong.decoded_right),
    DecodeVariant("decode.invalid-bytes-dropped", wrong_bytes.invalid_bytes_dropped),
    DecodeVariant("decode.fails-on-invalid-bytes", wrong_bytes.fails_on_invalid_bytes),
    DecodeVariant("decode.fails-past-buffer", wrong_bytes.fails_past_buffer),
    DecodeVariant("decode.lead-byte-takes-its-length", wrong_bytes.lead_takes_its_length),
    DecodeVariant("decode.token-after-bytes-dropped", wrong_bytes.token_after_bytes_dropped, twin=wrong.decoded_right,
                  keeps=wrong_bytes.kept_after_bytes),
    DecodeVariant("decode.unknown-as-its-text", wrong_bytes.unknown_as_its_text),
    DecodeVariant("pieces.raw-tokens", wrong.raw_tokens),
    DecodeVariant("pieces.byte-ff-dropped", wrong.byte_ff_dropped),
    DecodeVariant("pieces.decoded-alone", wrong.decoded_alone),
    DecodeVariant("pieces.added-raw", wrong.added_raw),
    DecodeVariant("pieces.long-token-cut", wrong.long_token_cut, twin=wrong.right_pieces),
    DecodeVariant("pieces.text-not-bytes", wrong.text_not_bytes),
    DecodeVariant("pieces.specials-left-out", wrong.specials_left_out),
    DecodeVariant("pieces.space-before-space", wrong.space_before_space),
    DecodeVariant("pieces.first-mark-only", wrong_bytes.first_mark_only_pieces),
    DecodeVariant("pieces.unknown-as-decoded", wrong_bytes.unknown_as_decoded),
    DecodeVariant("pieces.byte-tokens-raw", wrong_bytes.byte_tokens_raw_pieces),
    DecodeVariant("pieces.byte-tokens-as-characters", wrong_bytes.byte_tokens_as_characters),
    DecodeVariant("pieces.specials-through-byte-map", wrong_bytes.specials_through_byte_map),
    DecodeVariant("pieces.glyph-not-mapped", wrong_bytes.glyph_not_mapped_pieces),
    DecodeVariant("pieces.table-by-text", wrong_bytes.table_by_text, twin=wrong.right_pieces),
    DecodeVariant("pieces.marks-only-when-leading", wrong_bytes.marks_only_when_leading, twin=wrong.right_pieces),
)
BY_NAME = {v.name: v for v in VARIANTS}
ORDER = {v.name: k for k, v in enumerate(VARIANTS)}  # (a learnt edit after them all)


@cache
def variant_of(name: str) -> DecodeVariant:
    """The variant ``name``: a catalogue one, or one learnt from a case (``decode.edit:…``, ``decode.id-as:…``)."""
    if name in BY_NAME:
        return BY_NAME[name]
    return DecodeVariant(name, learnt_ids.run_of(name) if learnt_ids.is_swap(name) else learnt_edits.run_of(name))


def diagnose_decoding(ref: RefTokenizer, j: Judgement, asked: DecodeSettings = AS_FILES_SAY) -> Diagnosis:
    """The causes of a decoding op's mismatch: every variant whose answer is the backend's (and
    not what the reference's own decoding answers, spelt alike: a variant that coincides with the
    right answer on these ids proves nothing), the first as the cause, the others as alternatives
    (``prefer`` chooses among them once the run's other mismatches are in)."""
    ids, prompt = list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)
    got = _answer_of(j)
    right = {_as_judged(j.op, a) for a in wrong.right_answers(ref, j.op, ids, prompt, asked)}
    deltas = list(j.backend_output)
    if j.op == "stream" and len(deltas) > 1 and not any(deltas[:-1]) and _as_judged(j.op, deltas[-1]) in right:
        # (the right text, all of it in the last delta; a stream that lags as many ids shows the same)
        return _named(["stream.held-to-end"], j.op)
    found = []
    for variant in VARIANTS:
        if variant.op != j.op:
            continue
        # (compared exactly, less its twin's answers: one U+FFFD per byte is the bug of some)
        if got in _forms(variant, ref, ids, prompt, asked) and _as_judged(j.op, got) not in right:
            found.append(variant.name)
    if j.op == "stream":  # a streamer whose decode has the bug: the text after its prompt's. Tried after
        # the stream's own ways, not only where none reproduces: a stream of each id decoded alone also
        # looks like deltas stripped on a text of spaces, and the run's verdict chooses among them.
        found += [v.name for v in VARIANTS if v.op == "decode" and got in _forms(v, ref, ids, prompt, asked, "stream")
                  and got not in right]
    if not found and j.op == "pieces":  # (a table with two bugs: each id shows one, or neither)
        pair = _pieces_pair(ref, ids, got, asked)
        if pair:
            return _paired(pair, j.op)
    # (ids left out, and the rest decoded with another bug)
    if not found and j.op == "decode" and _as_judged(j.op, got) not in right:
        pair = _decode_pair(ref, ids, got, asked)
        if pair:
            return _paired(pair, j.op)
    if not found and _as_judged(j.op, got) not in right:  # (an edit of the right answer, learnt from
        key = learnt_edits.learnt(ref, j.op, ids, prompt, asked, got)  # this case: after every named way)
        if key is None:  # (else one id decoded as another, or left out)
            key = learnt_ids.learnt(ref, j.op, ids, prompt, asked, got)
        if key is not None:
            found.append(key)
    if not found:
        return Diagnosis("", f"no variant of the reference's {j.op} gives the backend's answer", stage=j.op)
    return _named(found, j.op)


def _paired(pair: tuple[str, str], op: str) -> Diagnosis:
    """Two variants that give the backend's answer together."""
    return Diagnosis("+".join(pair), f"reproduced: the reference's {op} changed so that it {BY_NAME[pair[0]].does}, "
                                     f"and {BY_NAME[pair[1]].does}, gives the backend's answer exactly", pair, stage=op)


def _decode_pair(ref: RefTokenizer, ids: list[int], got: object, asked: DecodeSettings) -> tuple[str, str] | None:
    """A variant that leaves ids out, and another that decodes the ids it keeps as the backend does."""
    for dropping, keeps in ((v, v.keeps) for v in VARIANTS if v.keeps is not None):
        kept = keeps(ref, ids)
        if kept == ids:
            continue
        for other in (v for v in VARIANTS if v.op == "decode" and v.keeps is None):
            if got in _forms(other, ref, kept, 0, asked):
                return dropping.name, other.name
    return None


def _pieces_pair(ref: RefTokenizer, ids: list[int], got: object, asked: DecodeSettings) -> tuple[str, str] | None:
    """Two pieces variants that give the backend's bytes together: each id as one of them gives it,
    where the other leaves it right (no id changed two ways)."""
    right = ref.piece_bytes(ids)
    answers = {v.name: [f for f in _forms(v, ref, ids, 0, asked) if f is not None] for v in VARIANTS if v.op == "pieces"}
    for a, b in combinations(answers, 2):
        for one in answers[a]:
            for other in answers[b]:
                merged = _merged(right, one, other)
                if merged == got and merged != one and merged != other:
                    return a, b
    return None


def _merged(right: list, one: list, other: list) -> list | None:
    """Each id's piece as the one of two wrong tables that changes it; None where both change one id
    two ways (no engine of these two bugs answers so)."""
    merged = []
    for r, x, y in zip(right, one, other):
        if x != r and y != r and x != y:
            return None
        merged.append(x if x != r else y)
    return merged


def prefer(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """One engine, one cause: among the variants that reproduce a mismatch, the one that reproduces
    the most of the engine's mismatches of that op (``diagnoses``: one engine's, one op's). A
    stream's own variants come before a decode's: the stream's name is the more exact one (a byte
    read as missing by a streamer, not any glyph left unmapped). The run's verdict may still be a
    decode's, where it reproduces more."""
    counts: dict[str, int] = {}
    for d in diagnoses:
        for name in (d.variants + tuple(n for alt in d.alternatives for n in alt)):
            counts[name] = counts.get(name, 0) + 1
    out = []
    for d in diagnoses:
        names = list(d.variants) + [n for alt in d.alternatives for n in alt]
        if len(names) < 2 or len(d.variants) > 1:  # (one cause, or two bugs at once: as found)
            out.append(d)
            continue
        order = {n: k for k, n in enumerate(names)}
        out.append(_named(sorted(names, key=lambda n: (variant_of(n).op != d.stage, -counts[n], order[n])), d.stage))
    return out


def as_verdict(ref: RefTokenizer, j: Judgement, d: Diagnosis, cause: str, asked: DecodeSettings) -> Diagnosis:
    """One engine, one cause: a row that the run's verdict ``cause`` (a variant's name) also
    reproduces named by it, its own first cause an alternative. A named way reproduces the row where
    the row's search found it, or where it gives an answer it shares with a simpler cause; an edit
    learnt from other rows is run on this one."""
    names = list(d.variants) + [n for alt in d.alternatives for n in alt]
    if len(d.variants) > 1 or d.variants[:1] == (cause,):
        return d
    ids, prompt = list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)
    if learnt.is_learnt(cause) and cause not in names:
        if _answer_of(j) in _forms(variant_of(cause), ref, ids, prompt, asked, j.op):
            names.append(cause)
    shared = None if learnt.is_learnt(cause) else variant_of(cause).shared
    if shared is not None and cause not in names and d.variants:
        if _answer_of(j) in _forms(replace(variant_of(cause), run=shared), ref, ids, prompt, asked, j.op):
            names.append(cause)
    if cause not in names:
        return d
    return _named([cause] + [n for n in names if n != cause], d.stage)


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
    if op in ("pieces", "decode"):  # (read again for a pair of causes, where one is not proven)
        agreeing = list(agreeing)
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
        if _as_judged(op, _answer_of(j)) in {_as_judged(op, a) for a in wrong.right_answers(ref, op, ids, prompt, asked)}:
            departs += 1
        else:
            own.append((j, d))
    # An engine writes one form of its bug (one count of characters held back). The cause is the
    # variant whose one form gives the most mismatches, among those the rows name: a variant with many
    # forms reproduces each row in some form, and only one of them is the engine's.
    candidates = sorted({n for _, d in own if len(d.variants) == 1 for n in d.variants + tuple(
        a for alt in d.alternatives for a in alt) if n not in HELD} or {name}, key=lambda n: (-counts[n], order(n)))
    scored: list[tuple[int, str, list[tuple[Judgement, Diagnosis]], Counter[int]]] = []
    for candidate in candidates:
        # (a row of two bugs at once is not one variant's: the verdict names one)
        # (an edit learnt from some rows is tried on every row: a row a named way also reproduces
        # may be the edit's too, a newline dropped from each delta read as a blank delta dropped)
        of_it = [(j, d) for j, d in own if len(d.variants) <= 1 and learnt.is_learnt(candidate) or len(d.variants) == 1 and
                 candidate in d.variants + tuple(n for alt in d.alternatives for n in alt)]
        hits_of: Counter[int] = Counter()  # form -> the mismatches it gives exactly
        for j, _ in of_it:
            got = _answer_of(j)
            hits_of.update(k for k, a in enumerate(_forms(variant_of(candidate), ref, list(j.oracle_ids),
                                                           int(j.tags.get("prompt", 0) or 0), asked, op)) if a == got)
        scored.append((max(hits_of.values(), default=0), candidate, of_it, hits_of))
    most = max(top for top, *_ in scored)
    best = [(name, named, hits) for top, name, named, hits in scored if top == most]
    # (candidates that give as many mismatches: the one that keeps the most agreements; the first in order
    # else. The agreements are read once where one candidate is left, as most runs have.)
    cases_of = list(agreeing) if len(best) > 1 else agreeing
    checked_all = [(_checked(variant_of(name), hits, ref, op, cases_of, asked), name, named, hits)
                   for name, named, hits in best]
    (cases, kept, broken, tied), name, named, hits = max(checked_all, key=lambda c: max(c[0][1][k] for k in c[0][3]))
    # (forms that give as many mismatches: the one that keeps the most agreements, e.g. the buffer size)
    form = max(tied, key=lambda k: (kept[k], -(k or 0)))
    explained = hits[form] if form is not None else len(named)
    # (a verdict on no mismatch of the engine's own proves nothing: every one was the decoder's departure)
    # (a failure on every case leaves no agreement to check it on: any failure would read so)
    checked = cases > 0 or not any(_answer_of(j) == wrong.FAILED for j, _ in named)
    verdict = RootCause(name.partition(":")[0], (name,), explained, len(own), kept[form], cases,
                        bool(own) and checked and proven(explained, len(own), kept[form], cases), departs,
                        tuple(broken.get(form, ())))
    # (a pair where one is not proven, or where one leaves rows a pair explains: two bugs of one table)
    if op in ("pieces", "decode") and own and checked and (not verdict.proven or verdict.explains < len(own)):
        pair = _pieces_pair_verdict(ref, asked, own, scored, list(agreeing), departs) if op == "pieces" else \
            _decode_pair_verdict(ref, asked, own, list(agreeing), departs)
        if pair is not None and pair.proven and (not verdict.proven or (pair.explains, pair.keeps) > (
                verdict.explains, verdict.keeps) and pair.keeps >= verdict.keeps):
            return pair
    return _with_failures(ref, asked, verdict, mismatches, list(agreeing)) if op == "decode" and verdict.proven else verdict


# (the narrower first; whether an engine fails is a bug apart from the text it gives elsewhere)
FAILING = ("decode.fails-on-invalid-bytes", "decode.fails-past-buffer")


def _with_failures(ref: RefTokenizer, asked: DecodeSettings, verdict: RootCause,
                   mismatches: Sequence[tuple[Judgement, Diagnosis]], agreeing: list[tuple[list[int], int, str]]
                   ) -> RootCause:
    """The verdict with a failing variant that fails on every failure and on no other case, if one does."""
    failed = [j for j, _ in mismatches if _answer_of(j) == wrong.FAILED]
    if not failed or len(failed) == len(mismatches) or set(verdict.variants) & set(FAILING):
        return verdict
    others = [(list(j.oracle_ids), 0, f"{j.corpus}/{j.case_id}") for j, _ in mismatches
              if _answer_of(j) != wrong.FAILED]
    for name in FAILING:
        hits = Counter(k for j in failed for k, a in enumerate(_forms(BY_NAME[name], ref, list(j.oracle_ids), 0, asked))
                       if a == wrong.FAILED)
        if max(hits.values(), default=0) < len(failed):
            continue
        cases, kept, _, tied = _checked(BY_NAME[name], hits, ref, "decode", [*agreeing, *others], asked)
        if any(kept[k] == cases for k in tied):
            return replace(verdict, cause=f"{verdict.cause}+{name}", variants=(*verdict.variants, name),
                           explains=verdict.explains + len(failed))
    return verdict


def _decode_pair_verdict(ref: RefTokenizer, asked: DecodeSettings, own: list[tuple[Judgement, Diagnosis]],
                         agreeing: list[tuple[list[int], int, str]], departs: int) -> RootCause | None:
    """A decode that leaves ids out and decodes the rest with another bug: the pair the most rows
    name. It gives a row where the ids it keeps, decoded with the other bug, give the backend's
    text; the other bug may not show there. An agreement is kept where the pair gives the right text."""
    pairs = Counter(d.variants for _, d in own if len(d.variants) == 2 and BY_NAME[d.variants[0]].keeps is not None)
    if not pairs:
        return None
    (a, b), _ = pairs.most_common(1)[0]
    keeps, other = BY_NAME[a].keeps, BY_NAME[b]
    assert keeps is not None

    def answer(ids: list[int]) -> object:
        kept = keeps(ref, ids)
        forms = [f for f in _forms(other, ref, kept, 0, asked) if f is not None]
        return _spelt(forms[0] if forms else wrong.decoded(ref, kept, asked))

    explained = sum(answer(list(j.oracle_ids)) == _spelt(_answer_of(j)) for j, _ in own)
    kept, broken = 0, list[str]()
    for ids, prompt, label in agreeing:
        if answer(ids) in {_spelt(t) for t in wrong.right_answers(ref, "decode", ids, prompt, asked)}:
            kept += 1
        elif len(broken) < BREAKS_LISTED:
            broken.append(label)
    return RootCause(f"{a}+{b}", (a, b), explained, len(own), kept, len(agreeing),
                     proven(explained, len(own), kept, len(agreeing)), departs, tuple(broken))


PAIRED_AT_MOST = 4  # the candidates, most mismatches first, that a pieces verdict pairs


def _pieces_pair_verdict(ref: RefTokenizer, asked: DecodeSettings, own: list[tuple[Judgement, Diagnosis]],
                         scored: list[tuple[int, str, list[tuple[Judgement, Diagnosis]], Counter[int]]],
                         agreeing: list[tuple[list[int], int, str]], departs: int) -> RootCause | None:
    """A table with two bugs (guidance's: ordinary tokens as text, added tokens left out): two
    variants, each in its form that gives the most mismatches, that reproduce the rows together.
    A row is theirs where either gives it, or each id as the one that changes it. An agreement is
    kept where both keep it. The pair that explains the most, then keeps the most; None where
    fewer than two candidates gave a row."""
    ranked = sorted((s for s in scored if s[0]), key=lambda s: -s[0])[:PAIRED_AT_MOST]
    top = [(name, max(hits, key=hits.__getitem__)) for _, name, _, hits in ranked]  # (each in its best form)
    best: RootCause | None = None
    for (a, fa), (b, fb) in combinations(top, 2):
        va, vb = variant_of(a), variant_of(b)
        explained, alone = 0, Counter[str]()
        for j, _ in own:
            ids, got = list(j.oracle_ids), _answer_of(j)
            one, other = _forms(va, ref, ids, 0, asked), _forms(vb, ref, ids, 0, asked)
            x = one[fa] if fa < len(one) else None
            y = other[fb] if fb < len(other) else None
            alone.update(name for name, answer in ((a, x), (b, y)) if answer == got)
            right = ref.piece_bytes(ids)
            explained += got in (x, y) or (x is not None and y is not None and _merged(right, x, y) == got)
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
        return _named([name], d.stage)
    return Diagnosis(name, f"this stream of {steps} ids came whole at its end; the engine's other streams that "
                           "finished a word before their end agreed: it sends late, not only at the end",
                     (name,), stage=d.stage)


def _forms(variant: DecodeVariant, ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings,
           op: str = "") -> list:
    """The variant's answers on ``ids``, each form in its place; None where it is its twin's answer
    (the bug does not show there); none where the variant cannot run (it reproduces nothing).
    ``op`` "stream" for a decode variant: the text a streamer that decodes so answers, the text of
    all the ids after the text of the prompt's (a streamer built on a decode with that bug)."""
    try:
        answers = variant.run(ref, ids, prompt, asked)
        twins = variant.twin(ref, ids, prompt, asked) if variant.twin is not None else []
        if op == "stream" and variant.op == "decode":
            right = wrong.decoded(ref, ids[:prompt], asked) if prompt else ""
            heads = variant.run(ref, ids[:prompt], 0, asked) if prompt else []  # (none: the bug is not in the prompt)
            # (a failure stays one, whatever the prompt alone gives: a streamer that fails sends nothing)
            answers = [a if a is None or a == wrong.FAILED else
                       _after(a, heads[k] if len(heads) == len(answers) and heads[k] not in (None, wrong.FAILED)
                              else right) for k, a in enumerate(answers)]
            twins = [_after(t, right) for t in twins]
    except Exception:  # (a variant that cannot run on these ids shows no bug there)
        return []
    return [None if a in twins else a for a in answers]


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


def _after(text: str, head: str) -> str:
    """``text`` less what it shares with ``head`` at its start: what a stream sends after the prompt."""
    return text[len(commonprefix([text, head])):]


def _keeping(variant: DecodeVariant, forms: list[int | None], ref: RefTokenizer, op: str, ids: list[int],
             prompt: int, asked: DecodeSettings) -> list[int | None]:
    """The ``forms`` of the variant's bug with which an engine still answers right on ``ids``."""
    answers = _forms(variant, ref, ids, prompt, asked, op) if any(f is not None for f in forms) else []
    right: set | None = None
    out = []
    for form in forms:
        # (None: a bug read off the deltas alone, a stream held to the end: its text is right)
        answer = answers[form] if form is not None and form < len(answers) else None
        if answer is not None and right is None:
            texts = wrong.right_answers(ref, op, ids, prompt, asked)
            if op == "stream":  # (as the judge allows: a character left unfinished at the end may stay unsent)
                texts += [a.rstrip("\ufffd") for a in texts]
            right = {_as_judged(op, a) for a in texts}
        if answer is None or _as_judged(op, answer) in (right or set()):
            out.append(form)
    return out


def _one_edit(mismatches: Sequence[tuple[Judgement, Diagnosis]]) -> Sequence[tuple[Judgement, Diagnosis]]:
    """The rows with the edits learnt from each case read as one edit (``learnt_edits.joined``): an
    engine that drops a newline in one text drops it in every text."""
    one = learnt_edits.joined(d.variants[0] for _, d in mismatches if d.variants)
    if one is None:
        return mismatches
    return [(j, replace(d, variants=(one,)) if d.variants and is_edit(d.variants[0]) else d) for j, d in mismatches]


def _named(names: list[str], op: str) -> Diagnosis:
    first = variant_of(names[0])
    others = f"; so do {', '.join(names[1:])}" if names[1:] else ""
    return Diagnosis(first.name.partition(":")[0], f"reproduced: the reference's {op} changed so that it {first.does} gives the "
                                 f"backend's answer exactly{others}", (first.name,), tuple((n,) for n in names[1:]),
                     stage=op)


def _spelt(answer: object) -> object:
    """An answer with each run of U+FFFD as one: libraries spell bytes that are not UTF-8 either way."""
    if isinstance(answer, str):
        return wrong.one_fffd_a_run(answer)
    return tuple(answer) if isinstance(answer, list) else answer


def _as_judged(op: str, answer: object) -> object:
    """An answer as the judge compares it with the right one. A stream's U+FFFD are what it sent: a
    character's bytes sent one by one as U+FFFD are the stream's bug, however the whole text spells
    them. Decode and pieces answers are spelt (``_spelt``)."""
    return answer if op == "stream" else _spelt(answer)


def backend_failed(j: Judgement) -> bool:
    """Whether the backend failed on the case (a crash of its own, not the decoder's)."""
    return j.cls == "crash" and j.evidence.startswith(f"{j.op} failed on {j.backend}'s side")


def _answer_of(j: Judgement) -> object:
    """The backend's answer as the variants give it: the text, the deltas joined, the bytes; a
    failure of the backend (not of the decoder) as a variant that fails gives it."""
    if backend_failed(j):
        return wrong.FAILED
    if j.op == "pieces":
        return [bytes.fromhex(h) for h in j.backend_output]
    return "".join(j.backend_output)
