"""The root-cause write-up of one (model, backend), as data: what ``build.py`` turns into nodes.

The Gemma 3 write-up that started tokparity reads: one sentence naming the cause; the symptom
and what it implies; the token ids of one short prompt side by side; the cause, shown by
reproducing the engine's ids; and the fix. ``build.writeups(results)`` gives a ``Writeup`` for
every (model, backend) with mismatches, from a run's plain records (``tokparity.records``). Here
a run's summary row and the one mismatch it kept, a greedy engine on llama-spm:

    >>> from tokparity.run.results import RunSummary
    >>> verdict = RootCause("model.greedy-longest-match", ("model.greedy-longest-match",), explains=3, mismatches=3,
    ...                     keeps=47, agreements=47, proven=True)
    >>> run = RunSummary("llama-spm", "llama.cpp", "greedy", cases=50, mismatches=3, unexplained=3,
    ...                  classes={"merge-order": 3}, causes={"model.greedy-longest-match": 3}, root_cause=verdict)
    >>> case = Mismatch.of("llama-spm", "multilingual", "en-0004", {}, "llama.cpp", "greedy", "merge-order", "", "model",
    ...                    3, "It's raining.", [739, 29915, 29879, 1153, 2827, 29889], [739, 29915, 29879, 17251, 292, 29889],
    ...                    ["▁It", "'", "s", "▁ra", "ining", "."], ["▁It", "'", "s", "▁rain", "ing", "."],
    ...                    cause="model.greedy-longest-match")
    >>> w = writeup(run, [case], verdict=verdict)
    >>> w.proof
    'reproduces 3 of 3 mismatches and keeps all 47 agreements'
    >>> [s.kind for s in comparison(w.case, w.style)]    # '▁ra' 'ining' against '▁rain' 'ing'
    ['same', 'diff', 'same']

Ties of equal score (``model.viterbi-tie``) are kept apart: two optima of the same model, not a
bug. The run-level verdict comes in as a ``RootCause`` (build.py reads it off the run summary).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Protocol

from tokparity.diagnose.info import cause_info, is_stage_level, parts
from tokparity.diff.align import align
from tokparity.diff.explain import class_info
from tokparity.records import TIE, Mismatch, RootCause
from tokparity.report.nodes import Fix, Span, Token
from tokparity.report.pieces import PLAIN, piece_style, readable
from tokparity.run.results import RunSummary

PROMPT_CORPORA = ("multilingual", "edge")  # where prompt-like texts are looked for, prose first
PROMPT_CHARS = (10, 80)
PROMPT_LETTERS = 0.8  # share of letters and spaces in a prompt-like text
NOT_DIAGNOSED = "the run was made with --no-diagnose"
FAILED = ("crash", "timeout")  # nothing to compare: a case of these is shown only when nothing else is
# Characters of special-token spellings (<s>, </s>, <|endoftext|>, [CLS], {{bos}}): a text with one
# is about special-token parsing, not the prompt a reader should see first.
_SPECIAL_MARKS = re.compile(r"[<>\[\]|{}]")


def case_by_case(cause: str, n: int, of: str) -> str:
    """What the per-case causes say where no run-level verdict checked them: a cause that
    reproduced the ids "reproduces" them; a stage-level one (``normalizer.other``) only names a stage."""
    if is_stage_level(cause):
        return f"names the stage that differs on {n:,} of {of}; no switch of the catalogue reproduces their ids"
    return f"reproduces {n:,} of {of} case by case (no run-level verdict: the agreements were not checked)"


@dataclass
class Writeup:
    summary: RunSummary
    mismatches: list[Mismatch]
    sentence: str
    style: str  # how the model's pieces are spelled (pieces.piece_style)
    verdict: RootCause | None = None
    cls: str = ""  # the main class of the mismatches the root cause reproduces
    case: Mismatch | None = None  # the most telling one
    fixes: list[Fix] = field(default_factory=list)
    ties: list[Mismatch] = field(default_factory=list)
    known: list[tuple[str, int]] = field(default_factory=list)  # known-divergence id, cases
    diagnosed: bool = True  # False: the run was made with --no-diagnose, so no cause was looked for

    @property
    def model(self) -> str:
        return self.summary.model

    @property
    def backend(self) -> str:
        return self.summary.label

    @property
    def oracle(self) -> str:
        return self.summary.oracle

    @cached_property  # (read many times; what it reads is set when the write-up is made)
    def cause(self) -> str:
        """The run's root cause; without a verdict (fuzz makes none), the commonest per-case cause
        (as the run counted them) among those of its unexplained mismatches at hand (a known
        divergence is reviewed: not what the run is about), else among all it counted."""
        if self.verdict:
            return self.verdict.cause
        counted = self.summary.causes
        unexplained = {m.cause for m in self.mismatches if m.cause and not m.known} & set(counted)
        # (where the run has unexplained mismatches, a cause seen only on known divergences is not its cause)
        known = {m.cause for m in self.mismatches if m.known} if self.summary.unexplained else set()
        pool = unexplained or set(counted) - known
        return min((c for c in pool if c != TIE), key=lambda c: (-counted[c], c), default="")

    @property
    def symptom(self) -> str:
        return class_info(self.cls)["symptom"]

    @property
    def implication(self) -> str:
        return class_info(self.cls)["implication"]

    @property
    def only_ties(self) -> bool:
        return bool(self.ties) and len(self.ties) == self.summary.mismatches

    @property
    def proof(self) -> str:
        if self.verdict:
            return proof(self.verdict)
        if self.cause:
            return case_by_case(self.cause, self.summary.causes.get(self.cause, 0),
                                plural(self.summary.mismatches, 'mismatch'))
        return ""

    @property
    def share(self) -> str:
        """``195 of 313 mismatches``: the main class's part of the run."""
        return f"{self.class_count:,} of {plural(self.summary.mismatches, 'mismatch')}"

    @property
    def narrower(self) -> int:
        """Agreements the named deviation would break: the engine deviates on fewer texts than
        the catalogue variant does (a partial match, worth saying)."""
        v = self.verdict
        return v.agreements - v.keeps if v else 0

    @property
    def class_count(self) -> int:
        return self.summary.classes.get(self.cls, 0)

    @property
    def case_causes(self) -> list[tuple[str, int]]:
        """Each mismatch's own (smallest) cause, counted, ties apart, most frequent first; empty
        when that says no more than the root cause does."""
        counts = sorted(((c, n) for c, n in self.summary.causes.items() if c != TIE), key=lambda cn: (-cn[1], cn[0]))
        return [] if [c for c, _ in counts] in ([], [self.cause]) else counts

    @property
    def not_reproduced(self) -> int:
        return max(0, self.summary.mismatches - sum(self.summary.causes.values()))

    @property
    def unanswered(self) -> int:
        """How many of the mismatches not reproduced are crashes or timeouts the verdict left out
        (the engine gave no answer there); 0 where that is not known."""
        classes, verdict = self.summary.classes, self.verdict
        left = self.summary.mismatches - self.summary.ties - verdict.mismatches if verdict is not None else 0
        return left if 0 < left <= min(self.not_reproduced, classes.get("crash", 0) + classes.get("timeout", 0)) else 0

    @property
    def how(self) -> str:
        """What the verdict's deviations do, each as the catalogue says it: which way a toggle went
        ("NFC applied to the text, where the model's files have no NFC step"). A value the verdict
        read off the backend's answers is said in the verdict's own words."""
        keys = self.verdict.variants if self.verdict is not None else ()
        said = self.verdict.said if self.verdict is not None else ()
        return "; ".join(dict.fromkeys(filter(None, (own or variant_detail(key)
                                                     for key, own in zip(keys, said or ("",) * len(keys))))))


@cache
def _details() -> dict[str, str]:
    from tokparity.diagnose.variants import catalogue

    return {v.key: v.detail for v in catalogue()}


def variant_detail(key: str) -> str:
    """What the variant ``key`` does: its own words (a learnt edit of the text: the edit), or its
    cause's where it has none (decoding)."""
    from tokparity.diagnose.learnt import is_learnt, said_of

    if is_learnt(key):
        return said_of(key)
    return _details().get(key) or str(cause_info(key.partition(":")[0]).get("does", ""))


def no_cause(m: Mismatch, diagnosed: bool) -> str:
    """What a row with no cause says of it: not reproduced, with the search's words, or not
    looked for in a run made with --no-diagnose."""
    if not diagnosed:
        return f"not diagnosed ({NOT_DIAGNOSED})"
    return f"not reproduced{': ' + m.cause_evidence if m.cause_evidence else ''}"


def cause_line(w: Writeup) -> str:
    """A run's root cause in one line of plain text: ``model.x reproduces 3 of 3 mismatches …``."""
    if w.only_ties:
        return f"{plural(len(w.ties), 'tie')} of equal score ({TIE}), not failures"
    s = w.summary
    if w.known and s.mismatches and not s.unexplained and not s.ties:
        return (f"{plural(s.mismatches, 'mismatch')}; each is a reviewed known divergence "
                f"({', '.join(k for k, _ in w.known)})"
                f"{given_too(w.mismatches, ': ') if len(w.mismatches) == s.mismatches else ''}")
    if not w.cause and not w.diagnosed:
        return f"not diagnosed ({NOT_DIAGNOSED}; {plural(w.summary.mismatches, 'mismatch')})"
    if not w.cause:
        return f"no cause reproduced ({plural(w.summary.mismatches, 'mismatch')})"
    ties = f"; {plural(len(w.ties), 'tie')} apart" if w.ties else ""
    whole = len(w.mismatches) == w.summary.mismatches  # (a fuzz run or a journal lists some rows only)
    return f"{w.cause}{learnt(w)} {w.proof}{ties}{known_parts(w.cause, w.mismatches if whole else ())}"


def learnt(w: Writeup) -> str:
    """`` (the text read with U+0009 as ' ')``: what an edit learnt from the cases is, which its
    name alone does not say; "" for a verdict of named causes only."""
    from tokparity.diagnose.learnt import is_learnt, said_of

    keys = w.verdict.variants if w.verdict is not None else ()
    said = [said_of(k) for k in keys if is_learnt(k)]
    return f" ({'; '.join(said)})" if said else ""


def known_parts(cause: str, mismatches: Sequence[Mismatch]) -> str:
    """``; unicode.tables only on the 7 known divergences``: the parts of ``cause`` with nothing to
    fix, said apart, so that a reader sees which part is the engine's own bug."""
    said = []
    for name in parts(cause):
        cases = [m for m in mismatches if name in parts(m.cause)]
        if len(parts(cause)) > 1 and cases and all(m.known for m in cases):
            said.append(f"{name} only on the {plural(len(cases), 'known divergence')}")
    return "".join(f"; {s}" for s in said)


def plural(n: int, word: str) -> str:
    """``1 tie``, ``2 ties``, ``1 mismatch``, ``6,000 mismatches``."""
    return f"{n:,} {word if n == 1 else word + ('es' if word.endswith(('s', 'sh', 'ch', 'x')) else 's')}"


def proof(verdict: RootCause) -> str:
    """``reproduces 313 of 313 mismatches and keeps all 6,000 agreements``, and ``: not proven`` where
    it is not (a reader of one line must not take it for a proof)."""
    from tokparity.diagnose.verdict import kept

    departs = (f" (on {verdict.oracle_departs:,} more, tokparity's reference agrees with the backend: the oracle "
               "differs there)") if verdict.oracle_departs else ""
    unproven = "" if verdict.proven else ": not proven"
    return f"reproduces {verdict.explains:,} of {verdict.mismatches:,} mismatches{departs} and {kept(verdict)}{unproven}"


def fixes_of(cause: str, mismatches: Sequence[Mismatch] = (), counted: Mapping[str, int] | None = None) -> list[Fix]:
    """The fix of each part of ``cause``, with the reference module that specifies it. A part whose
    every case among ``mismatches`` is a reviewed known divergence has nothing to fix: it says so.
    ``counted``: the run's cases per cause, where ``mismatches`` lists only some of them (fuzz)."""
    fixes = []
    for name in parts(cause):
        info = cause_info(name)
        cases = [m for m in mismatches if name in parts(m.cause)]
        known = sorted({m.known for m in cases})
        n = sum(k for c, k in counted.items() if name in parts(c)) if counted else len(cases)
        fixes.append(Fix(name, info["fix"], info["spec"]) if not cases or not all(known) else
                     Fix(name, f"No fix needed. Its {plural(n, 'case')} {'is' if n == 1 else 'are'} the "
                               "reviewed known divergence"
                               f"{'s' if len(known) > 1 else ''} {', '.join(known)}."
                               f"{given_too(cases, ' ', NOT_YOURS)}",
                         info["spec"]))
    return fixes


NOT_YOURS = ". The difference is that library's, not your code's."


def given_too(mismatches: Sequence[Mismatch], before: str, after: str = "") -> str:
    """Where one library of the engine's own files gave the output of each of ``mismatches``: the
    sentence that says so, between ``before`` and ``after``. '' otherwise."""
    said = {m.given_too for m in mismatches}
    return f"{before}{said.pop()}{after}" if len(said) == 1 and "" not in said else ""


def piece_styles(mismatches: Sequence[Mismatch]) -> dict[str, str]:
    """Per model, how its vocabulary spells pieces (one vocabulary per model)."""
    pieces: dict[str, list[str]] = {}
    for m in mismatches:
        pieces.setdefault(m.model, []).extend(m.oracle_pieces)
    return {model: piece_style(ps) for model, ps in pieces.items()}


def op_subject(summary: RunSummary) -> str:
    """Who differs, as a sentence names it: a decoding op is the backend's op ("llama.cpp's
    stream"), so that a library judged against its own decode does not read as differing from itself."""
    return f"{summary.backend}'s {summary.op}" if summary.op in ("decode", "stream", "pieces") else summary.backend


def op_object(summary: RunSummary) -> str:
    """What it differs from: a stream is judged by the oracle's whole decode ("llama.cpp's whole
    decode"), a decode and a pieces table by the oracle's own."""
    whole = {"stream": "whole decode", "decode": "decode", "pieces": "pieces"}.get(summary.op)
    return f"{summary.oracle}'s {whole}" if whole else summary.oracle


def writeup(summary: RunSummary, mismatches: list[Mismatch], style: str = PLAIN, verdict: RootCause | None = None,
            verdict_text: str = "", diagnosed: bool = True) -> Writeup:
    """The write-up of ``summary``: ``verdict`` is its run-level root cause, ``verdict_text`` the
    sentence tokparity.diagnose.verdict says of it. ``diagnosed``: False for a run made with
    ``--no-diagnose``, where no variant was tried."""
    ties = [m for m in mismatches if m.cause == TIE]
    if not diagnosed:
        text = (f"{op_subject(summary)} differs from {op_object(summary)} on {plural(summary.mismatches, 'case')} of "
                f"{summary.model}; {NOT_DIAGNOSED}, so no cause was looked for.")
    elif ties and len(ties) == summary.mismatches:
        text = (f"{summary.backend} differs from {summary.oracle} on {summary.mismatches:,} cases of {summary.model}, "
                f"each a tie of equal score ({TIE}): two segmentations the model scores the same, so neither is "
                "wrong; reported apart, not as failures.")
    else:
        text = verdict_text
    w = Writeup(summary, mismatches, text, style, verdict, ties=sorted(ties, key=lambda m: len(m.text)),
                known=Counter(m.known for m in mismatches if m.known).most_common(), diagnosed=diagnosed)
    if not verdict and w.cause:  # per-case causes, no run-level verdict (fuzz): say what is known
        w.sentence = (f"{op_subject(summary)} differs from {op_object(summary)} on {plural(summary.mismatches, 'case')} of "
                      f"{summary.model}; {w.cause} {case_by_case(w.cause, summary.causes.get(w.cause, 0), 'them')}.")
    pool = telling_pool(mismatches, w.cause)
    if pool:
        w.cls = Counter(m.cls for m in pool).most_common(1)[0][0]
        w.case = most_telling([m for m in pool if m.cls == w.cls])  # (the case shows the symptom the write-up names)
    elif summary.classes:  # fuzz journals keep counts, not the mismatches
        w.cls = max(summary.classes, key=lambda c: summary.classes[c])
    # A replayed journal or a fuzz run may list only some mismatches. A part is excused then only
    # where the run counted no mismatch outside the known divergences and the ties.
    whole = len(mismatches) == summary.mismatches
    excused = mismatches if whole or not summary.unexplained else ()
    w.fixes = fixes_of(w.cause or (w.case.cause if w.case is not None else ""), excused,
                       None if whole else summary.causes)
    return w


def telling_pool(mismatches: list[Mismatch], cause: str) -> list[Mismatch]:
    """The mismatches the most telling case is chosen from: the unexplained ones (a known
    divergence is a reviewed, often intended behaviour, such as parsing special-token text: not
    what the reader must act on) whose own cause is the run's root cause or a part of it; then
    any unexplained one with a cause, then any unexplained one; only when every mismatch is
    known, the known ones in the same order. Ties and failures to answer come last."""
    judged = [m for m in mismatches if m.cause != TIE and m.cls not in FAILED]
    main = set(parts(cause)) if cause else set()

    def of_main(m: Mismatch) -> bool:
        return bool(m.cause) and (m.cause == cause or set(parts(m.cause)) <= main)

    for group in ([m for m in judged if not m.known], judged):
        for pool in ([m for m in group if of_main(m)], [m for m in group if m.cause], group):
            if pool:
                return pool
    return [m for m in mismatches if m.cause != TIE] or mismatches


def prompt_like(text: str, tags: dict | None = None) -> bool:
    """Short and made of words, as a prompt is: 10-80 characters, mostly letters and single
    spaces, no leading, trailing or doubled whitespace, no control or format characters (a soft
    hyphen, a zero-width joiner), nothing of a special token's spelling (``<|endoftext``)."""
    lo, hi = PROMPT_CHARS
    if not lo <= len(text) <= hi or text != text.strip() or "  " in text or _SPECIAL_MARKS.search(text):
        return False
    if (tags or {}).get("kind") == "special-lookalike":
        return False
    if any(unicodedata.category(ch)[0] == "C" or (ch.isspace() and ch != " ") for ch in text):
        return False
    letters = sum(ch.isalpha() for ch in text)
    return letters >= len(text) / 2 and letters + text.count(" ") >= PROMPT_LETTERS * len(text)


def most_telling(pool: list[Mismatch]) -> Mismatch:
    """The case a reader should see first: the shortest prompt-like text, of the multilingual
    corpus (prose) rather than the edge cases; else the shortest text of at least three
    characters. Corpus and case id break ties, so the choice is the same on every run."""
    def key(m: Mismatch) -> tuple:
        corpus = PROMPT_CORPORA.index(m.corpus) if m.corpus in PROMPT_CORPORA else len(PROMPT_CORPORA)
        return (not prompt_like(m.text, m.tags), corpus, len(m.text) < 3, len(m.text), m.corpus, m.case_id)
    return min(pool, key=key)


# -- the token-id comparison ------------------------------------------------------------------


class Tokens(Protocol):
    """What a comparison is made of: a mismatch, or a fuzz finding."""

    @property
    def oracle_ids(self) -> Sequence[int]: ...

    @property
    def backend_ids(self) -> Sequence[int]: ...

    @property
    def oracle_pieces(self) -> Sequence[str]: ...

    @property
    def backend_pieces(self) -> Sequence[str]: ...


def tokens(ids: Sequence[int], pieces: Sequence[str], style: str) -> tuple[Token, ...]:
    """Each id with its piece, readable (a piece missing from ``pieces`` shown as ``?``)."""
    return tuple(Token(i, readable(p, style), p)
                 for i, p in zip(ids, list(pieces[:len(ids)]) + ["?"] * (len(ids) - len(pieces))))


def comparison(m: Tokens, style: str = PLAIN, context: int = 3) -> tuple[Span, ...]:
    """Both id lists aligned as the classifier aligned them, so the first difference (and every
    later one) sits in the same column on both sides; equal runs longer than ``context`` tokens
    on each side of a difference are cut to a gap."""
    spans: list[Span] = []
    ops = align(m.oracle_ids, m.backend_ids).opcodes
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag != "equal":
            spans.append(Span("diff", tokens(m.oracle_ids[i1:i2], m.oracle_pieces[i1:i2], style),
                              tokens(m.backend_ids[j1:j2], m.backend_pieces[j1:j2], style), start=i1))
            continue
        same = tokens(m.oracle_ids[i1:i2], m.oracle_pieces[i1:i2], style)
        head = 0 if k == 0 else context  # tokens kept after the previous difference
        tail = 0 if k == len(ops) - 1 else context  # and before the next one
        if len(same) <= head + tail + 1:
            spans.append(Span("same", same, same, start=i1))
            continue
        if head:
            spans.append(Span("same", same[:head], same[:head], start=i1))
        spans.append(Span("gap", skipped=len(same) - head - tail, start=i1 + head))
        if tail:
            spans.append(Span("same", same[-tail:], same[-tail:], start=i2 - tail))
    return tuple(spans)
