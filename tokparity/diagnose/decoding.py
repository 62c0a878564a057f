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

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from itertools import combinations
from os.path import commonprefix

from tokparity.diagnose import (
    learnt,
    learnt_bytes,
    learnt_cut,
    learnt_edits,
    learnt_ids,
    learnt_replaced,
    wrong_bytes,
    wrong_edits,
    wrong_lines,
    wrong_streamer,
)
from tokparity.diagnose import wrong_decoders as wrong
from tokparity.diagnose.info import cause_info
from tokparity.records import Diagnosis, Judgement
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
    # The text this bug makes of the text the rest of the decoder gives (None: it is no map of the
    # text). The rest of the decoder may have a bug of its own: each other decode variant's text is mapped.
    after: Callable[[str], str] | None = None
    # The switches this bug sets otherwise (None: it sets none). The rest of the decoder may have a
    # bug of its own: a verdict tries its variant with these switches.
    asks: Callable[[DecodeSettings], DecodeSettings] | None = None
    # Whether ``run`` after a prompt answers what a stream sends after it, as a byte buffer holds a
    # character the prompt began (False: the text of all the ids, less the prompt's text).
    streams: bool = False

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
    DecodeVariant("stream.lead-byte-only-held", wrong_streamer.lead_byte_held, twin=wrong.joined),
    DecodeVariant("stream.flushed-every-n", wrong_streamer.flushed_every, twin=wrong.joined),
    DecodeVariant("stream.flushed-at-n-bytes", wrong_streamer.flushed_at_bytes, twin=wrong.joined),
    DecodeVariant("stream.prompt-dropped", wrong.prompt_dropped),
    DecodeVariant("stream.begun-character-dropped", wrong.begun_character_dropped),
    DecodeVariant("stream.restart-after-newline", wrong.restart_after_newline),
    DecodeVariant("stream.prompt-resent", wrong.prompt_resent),
    DecodeVariant("stream.last-prompt-token-resent", wrong.last_prompt_token_resent, twin=wrong.right_stream),
    DecodeVariant("stream.offset-into-cleaned-text", wrong_streamer.offset_into_cleaned_text),
    DecodeVariant("stream.offset-into-lossy-text", wrong.offset_into_lossy_text),
    DecodeVariant("stream.text-resent", wrong.text_resent),
    DecodeVariant("stream.cluster-resent", wrong.cluster_resent),
    DecodeVariant("stream.byte-zero-unmapped", wrong_bytes.byte_zero_unmapped),
    DecodeVariant("stream.metaspace-on-byte-level", wrong_bytes.metaspace_on_byte_level),
    DecodeVariant("stream.held-to-end", wrong.held_to_the_end),
    DecodeVariant("stream.lagged", wrong.lagged),
    DecodeVariant("stream.deltas-lstripped", wrong_edits.deltas_lstripped),
    DecodeVariant("stream.first-space-trimmed", wrong_edits.first_space_trimmed, twin=wrong.right_stream),
    DecodeVariant("stream.blank-deltas-dropped", wrong_edits.blank_deltas_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.unicode-line-break-deltas-lost", wrong_edits.unicode_line_break_deltas_lost,
                  twin=wrong.right_stream),
    # (after blank-deltas-dropped: a vocabulary with no token that ends in a space, as Gemma 3's,
    # gives both the same text, and the simpler cause names it)
    DecodeVariant("stream.deltas-rstripped", wrong_edits.deltas_rstripped),
    DecodeVariant("stream.stripped-each-step", wrong_edits.stripped_each_step, twin=wrong.right_stream),
    DecodeVariant("stream.whole-text-each-step", wrong_edits.whole_text_each_step, twin=wrong.right_stream),
    DecodeVariant("stream.first-line-only", wrong_edits.first_line_only, twin=wrong.right_stream),
    DecodeVariant("stream.last-line-only", wrong_edits.last_line_only, twin=wrong.right_stream),
    # (before delta-after-special-dropped: a prompt that ends in a BOS gives both one text on a row)
    DecodeVariant("stream.first-delta-dropped", wrong_edits.first_delta_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.first-delta-stripped", wrong_edits.first_delta_stripped, twin=wrong.right_stream),
    DecodeVariant("stream.delta-after-special-dropped", wrong_edits.delta_after_special_dropped),
    DecodeVariant("stream.repeated-delta-dropped", wrong_edits.repeated_delta_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.previous-delta-removed", wrong_edits.previous_delta_removed, twin=wrong.right_stream),
    DecodeVariant("stream.partial-stop-dropped", wrong_edits.partial_stop_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.last-delta-resent", wrong_edits.last_delta_resent, twin=wrong.right_stream),
    DecodeVariant("stream.stalls-after-change", wrong_edits.stalls_after_change, twin=wrong.right_stream),
    DecodeVariant("stream.tail-never-sent", wrong.tail_never_sent, twin=wrong.right_stream),
    DecodeVariant("stream.last-step-dropped", wrong.last_step_dropped, twin=wrong.right_stream),
    DecodeVariant("stream.last-id-per-step", wrong.last_id_per_step, twin=wrong.right_stream),
    DecodeVariant("stream.characters-held-back", wrong.characters_held_back, twin=wrong.right_stream),
    DecodeVariant("stream.tag-start-held", wrong.tag_start_held, twin=wrong.right_stream),
    DecodeVariant("stream.held-while-replaced", wrong_streamer.held_while_replaced, twin=wrong.right_stream),
    DecodeVariant("stream.buffer-cleared-on-text", wrong_streamer.cleared_on_text, twin=wrong.right_stream),
    DecodeVariant("decode.specials-skipped", wrong.specials_skipped, asks=lambda a: replace(a, skip_special=True)),
    DecodeVariant("decode.specials-written", wrong.specials_written, asks=lambda a: replace(a, skip_special=False)),
    DecodeVariant("decode.added-skipped", wrong.added_skipped),
    DecodeVariant("decode.specials-spaced", wrong.specials_spaced),
    DecodeVariant("decode.remove-special", wrong.remove_special),
    DecodeVariant("decode.cleanup", wrong.cleanup),
    DecodeVariant("decode.unfinished-end-dropped", wrong.unfinished_end_dropped),
    DecodeVariant("decode.lstrip", wrong.lstrip, twin=wrong.joined_all),
    DecodeVariant("decode.first-byte-dropped", wrong_edits.first_byte_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.text-lstripped", wrong_edits.text_lstripped, twin=wrong.decoded_right),
    DecodeVariant("decode.text-stripped", wrong_edits.text_stripped, twin=wrong.decoded_right),
    DecodeVariant("decode.token-chars-stripped", wrong_edits.token_chars_stripped, twin=wrong.decoded_right),
    DecodeVariant("decode.text-normalized", wrong_edits.text_normalized, twin=wrong.decoded_right),
    DecodeVariant("decode.newlines-normalized", wrong_lines.text_newlines_normalized, twin=wrong.decoded_right),
    DecodeVariant("decode.pad-dropped", wrong_edits.pad_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.added-dropped", wrong_edits.added_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.tag-blocks-removed", wrong_edits.tag_blocks_removed, twin=wrong.decoded_right),
    DecodeVariant("decode.control-characters-removed", wrong_edits.control_characters_removed,
                  twin=wrong.decoded_right),
    DecodeVariant("decode.unprintable-bytes-dropped", wrong_bytes.unprintable_bytes_dropped, twin=wrong.decoded_right,
                  shared=wrong_bytes.unprintable_bytes_dropped_all),
    DecodeVariant("decode.tags-removed", wrong_edits.tags_removed, twin=wrong.decoded_right),
    DecodeVariant("decode.emoji-removed", wrong_edits.emoji_removed, twin=wrong.decoded_right),
    DecodeVariant("decode.leading-bom-dropped", wrong_edits.leading_bom_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.html-unescaped", wrong_edits.html_unescaped, twin=wrong.decoded_right),
    DecodeVariant("decode.html-escaped", wrong_edits.html_escaped, twin=wrong.decoded_right),
    DecodeVariant("decode.through-code-page", wrong_edits.through_code_page, twin=wrong.decoded_right),
    DecodeVariant("decode.astral-as-replacements", wrong_edits.astral_as_replacements, twin=wrong.decoded_right),
    # (before the variants that join the pieces' bytes: those spell an unknown token as its text too)
    DecodeVariant("decode.unknown-as-its-text", wrong_bytes.unknown_as_its_text),
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
    DecodeVariant("decode.lead-byte-takes-its-length", wrong_bytes.lead_takes_its_length, streams=True),
    DecodeVariant("decode.four-bytes-read-as-three", wrong_bytes.four_bytes_read_as_three, twin=wrong.decoded_right,
                  streams=True),
    DecodeVariant("decode.token-after-bytes-dropped", wrong_bytes.token_after_bytes_dropped, twin=wrong.decoded_right,
                  keeps=wrong_bytes.kept_after_bytes),
    DecodeVariant("decode.first-id-dropped", wrong_edits.first_id_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.last-id-dropped", wrong_edits.last_id_dropped, twin=wrong.decoded_right),
    DecodeVariant("decode.first-mark-only", wrong_bytes.first_mark_only, twin=wrong.decoded_right),
    DecodeVariant("decode.byte-bpe-table", wrong_bytes.byte_bpe_table, twin=wrong.decoded_right,
                  after=wrong_bytes.through_printable_bytes),
    DecodeVariant("decode.reasoning-until-end-tag", wrong_streamer.reasoning_until_end,
                  shared=wrong_streamer.reasoning_unended, streams=True),
    DecodeVariant("pieces.raw-tokens", wrong.raw_tokens),
    DecodeVariant("pieces.byte-ff-dropped", wrong.byte_ff_dropped),
    DecodeVariant("pieces.decoded-alone", wrong.decoded_alone),
    DecodeVariant("pieces.added-raw", wrong.added_raw),
    DecodeVariant("pieces.newlines-normalized", wrong_lines.pieces_newlines_normalized),
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
    DecodeVariant("pieces.invalid-alone-dropped", wrong_bytes.invalid_alone_dropped),
    DecodeVariant("pieces.byte-tokens-empty", wrong_bytes.byte_tokens_empty),
    DecodeVariant("pieces.metaspace-replaced-once", wrong_bytes.metaspace_replaced_once),
    DecodeVariant("pieces.cleaned-up", wrong_bytes.pieces_cleaned_up),
    DecodeVariant("pieces.invalid-bytes-dropped", wrong_bytes.invalid_bytes_dropped_each),
    DecodeVariant("pieces.table-by-text", wrong_bytes.table_by_text, twin=wrong.right_pieces),
    DecodeVariant("pieces.marks-only-when-leading", wrong_bytes.marks_only_when_leading, twin=wrong.right_pieces),
)
BY_NAME = {v.name: v for v in VARIANTS}
ORDER = {v.name: k for k, v in enumerate(VARIANTS)}  # (a learnt edit after them all)


@cache
def variant_of(name: str) -> DecodeVariant:
    """The variant ``name``: a catalogue one, or one learnt from a case (``decode.edit:…``,
    ``decode.id-as:…``, ``decode.cut-at-length:…``, ``pieces.bytes-as-text:…``,
    ``pieces.replaced-where:…``)."""
    if name in BY_NAME:
        return BY_NAME[name]
    if learnt_cut.is_cut(name):
        return DecodeVariant(name, learnt_cut.run_of(name))
    if learnt_bytes.is_notation(name):
        return DecodeVariant(name, learnt_bytes.run_of(name))
    if learnt_replaced.is_replacing(name):
        return DecodeVariant(name, learnt_replaced.run_of(name))
    return DecodeVariant(name, learnt_ids.run_of(name) if learnt_ids.is_swap(name) else learnt_edits.run_of(name))


def diagnose_decoding(ref: RefTokenizer, j: Judgement, asked: DecodeSettings = AS_FILES_SAY) -> Diagnosis:
    """The causes of a decoding op's mismatch: every variant whose answer is the backend's (and
    not what the reference's own decoding answers, spelt alike: a variant that coincides with the
    right answer on these ids proves nothing), the first as the cause, the others as alternatives
    (``prefer`` chooses among them once the run's other mismatches are in)."""
    ids, prompt = list(j.oracle_ids), int(j.tags.get("prompt", 0) or 0)
    got = answer_of(j)
    right = {as_judged(j.op, a) for a in wrong.right_answers(ref, j.op, ids, prompt, asked)}
    deltas = list(j.backend_output)
    if j.op == "stream" and len(deltas) > 1 and not any(deltas[:-1]) and as_judged(j.op, deltas[-1]) in right:
        # (the right text, all of it in the last delta; a stream that lags as many ids shows the same)
        return diagnosis_of(["stream.held-to-end"], j.op)
    found = []
    for variant in VARIANTS:
        if variant.op != j.op:
            continue
        # (compared exactly, less its twin's answers: one U+FFFD per byte is the bug of some)
        if got in forms_of(variant, ref, ids, prompt, asked) and as_judged(j.op, got) not in right:
            found.append(variant.name)
    if j.op == "stream":  # a streamer whose decode has the bug: the text after its prompt's. Tried after
        # the stream's own ways, not only where none reproduces: a stream of each id decoded alone also
        # looks like deltas stripped on a text of spaces, and the run's verdict chooses among them.
        found += [v.name for v in VARIANTS if v.op == "decode" and got in forms_of(v, ref, ids, prompt, asked, "stream")
                  and got not in right]
    if not found and j.op == "pieces":  # (a table with two bugs: each id shows one, or neither)
        pair = _pieces_pair(ref, ids, got, asked)
        if pair:
            return paired(pair, j.op)
    # (ids left out, and the rest decoded with another bug)
    if not found and j.op == "decode" and as_judged(j.op, got) not in right:
        pair = _decode_pair(ref, ids, got, asked)
        if pair:
            return paired(pair, j.op)
    if not found and as_judged(j.op, got) not in right:  # (an edit of the right answer, learnt from
        key = learnt_edits.learnt(ref, j.op, ids, prompt, asked, got)  # this case: after every named way)
        # (else the text cut at a length, in each unit that gives it, or bytes written as text; else
        # one id decoded as another)
        if key is not None:
            found.append(key)
        elif j.op == "pieces":
            found += learnt_bytes.learnt(ref, ids, got) or learnt_replaced.learnt(ref, ids, got)
        else:
            found += learnt_cut.learnt(ref, j.op, ids, prompt, asked, got)
        if not found:
            key = learnt_ids.learnt(ref, j.op, ids, prompt, asked, got)
            found += [key] if key is not None else []
    if not found:
        return Diagnosis("", f"no variant of the reference's {j.op} gives the backend's answer", stage=j.op)
    return diagnosis_of(found, j.op)


def paired(pair: tuple[str, str], op: str) -> Diagnosis:
    """Two variants that give the backend's answer together."""
    return Diagnosis("+".join(pair), f"reproduced: the reference's {op} changed so that it {BY_NAME[pair[0]].does}, "
                                     f"and {BY_NAME[pair[1]].does}, gives the backend's answer exactly", pair, stage=op)


def _decode_pair(ref: RefTokenizer, ids: list[int], got: object, asked: DecodeSettings) -> tuple[str, str] | None:
    """A variant that leaves ids out, and another that decodes the ids it keeps as the backend does;
    or a variant whose text another maps to the backend's."""
    others = [v for v in VARIANTS if v.op == "decode" and v.keeps is None and v.after is None]
    for dropping, keeps in ((v, v.keeps) for v in VARIANTS if v.keeps is not None):
        kept = keeps(ref, ids)
        if kept == ids:
            continue
        for other in others:
            if got in forms_of(other, ref, kept, 0, asked):
                return dropping.name, other.name
    for mapping, after in ((v, v.after) for v in VARIANTS if v.after is not None):
        if not mapping.run(ref, ids, 0, asked):  # (a map only where its bug can be: a vocabulary it reads so)
            continue
        for other in others:
            if any(isinstance(f, str) and after(f) == got for f in forms_of(other, ref, ids, 0, asked)):
                return other.name, mapping.name
    return None


def _pieces_pair(ref: RefTokenizer, ids: list[int], got: object, asked: DecodeSettings) -> tuple[str, str] | None:
    """Two pieces variants that give the backend's bytes together: each id as one of them gives it,
    where the other leaves it right (no id changed two ways)."""
    right = ref.piece_bytes(ids)
    answers = {v.name: [f for f in forms_of(v, ref, ids, 0, asked) if f is not None] for v in VARIANTS if v.op == "pieces"}
    for a, b in combinations(answers, 2):
        for one in answers[a]:
            for other in answers[b]:
                merged = merged_pieces(right, one, other)
                if merged == got and merged != one and merged != other:
                    return a, b
    return None


def merged_pieces(right: list, one: list, other: list) -> list | None:
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
        out.append(diagnosis_of(sorted(names, key=lambda n: (variant_of(n).op != d.stage, -counts[n], order[n])), d.stage))
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
        if answer_of(j) in forms_of(variant_of(cause), ref, ids, prompt, asked, j.op):
            names.append(cause)
    shared = None if learnt.is_learnt(cause) else variant_of(cause).shared
    if shared is not None and cause not in names and d.variants:
        if answer_of(j) in forms_of(replace(variant_of(cause), run=shared), ref, ids, prompt, asked, j.op):
            names.append(cause)
    if cause not in names:
        return d
    return diagnosis_of([cause] + [n for n in names if n != cause], d.stage)


def forms_of(variant: DecodeVariant, ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings,
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
            heads = variant.run(ref, ids[:prompt], 0, asked) if prompt and not variant.streams else []
            # (a failure stays one, whatever the prompt alone gives: a streamer that fails sends nothing)
            answers = answers if variant.streams else [
                a if a is None or a == wrong.FAILED else
                _after(a, heads[k] if len(heads) == len(answers) and heads[k] not in (None, wrong.FAILED) else right)
                for k, a in enumerate(answers)]
            # (a byte buffer's stream: its twin is the right stream, which sends a character the prompt began;
            # else the twin streams as the variant does, each answer after what the twin gives the prompt)
            if variant.streams:
                twins = wrong.right_answers(ref, "stream", ids, prompt, asked)
            else:
                twin_heads = variant.twin(ref, ids[:prompt], 0, asked) if prompt and variant.twin is not None else []
                twins = [_after(t, twin_heads[k] if len(twin_heads) == len(twins)
                                and twin_heads[k] not in (None, wrong.FAILED) else right) for k, t in enumerate(twins)]
    except Exception:  # (a variant that cannot run on these ids shows no bug there)
        return []
    return [None if a in twins else a for a in answers]


def _after(text: str, head: str) -> str:
    """``text`` less what it shares with ``head`` at its start: what a stream sends after the prompt."""
    return text[len(commonprefix([text, head])):]


def diagnosis_of(names: list[str], op: str) -> Diagnosis:
    first = variant_of(names[0])
    # (a short case fits many variants: three are named, the rest counted, as a reader needs no more)
    more = f" and {len(names) - 4} more" if len(names) > 4 else ""
    others = f"; so do {', '.join(names[1:4])}{more}" if names[1:] else ""
    return Diagnosis(first.name.partition(":")[0], f"reproduced: the reference's {op} changed so that it {first.does} gives the "
                                 f"backend's answer exactly{others}", (first.name,), tuple((n,) for n in names[1:]),
                     stage=op)


def spelt(answer: object) -> object:
    """An answer with each run of U+FFFD as one: libraries spell bytes that are not UTF-8 either way."""
    if isinstance(answer, str):
        return wrong.one_fffd_a_run(answer)
    return tuple(answer) if isinstance(answer, list) else answer


def as_judged(op: str, answer: object) -> object:
    """An answer as the judge compares it with the right one. A stream's U+FFFD are what it sent: a
    character's bytes sent one by one as U+FFFD are the stream's bug, however the whole text spells
    them. Decode and pieces answers are spelt (``spelt``)."""
    return answer if op == "stream" else spelt(answer)


def backend_failed(j: Judgement) -> bool:
    """Whether the backend failed on the case (a crash of its own, not the decoder's)."""
    return j.cls == "crash" and j.evidence.startswith(f"{j.op} failed on {j.backend}'s side")


def answer_of(j: Judgement) -> object:
    """The backend's answer as the variants give it: the text, the deltas joined, the bytes; a
    failure of the backend (not of the decoder) as a variant that fails gives it."""
    if backend_failed(j):
        return wrong.FAILED
    if j.op == "pieces":
        return [bytes.fromhex(h) for h in j.backend_output]
    return "".join(j.backend_output)
