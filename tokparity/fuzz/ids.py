"""``fuzz --ops decode|stream``: id sequences made at random from the model's vocabulary, judged by
the decoding judge (tokparity.run.ops) as ``compare --ops`` judges them, each distinct cause per
backend shrunk to its shortest sequence.

A sequence mixes what decoders get wrong: word tokens, the byte tokens of a character (whole, or
cut short), lone continuation bytes, special tokens, whitespace pieces and random ids, with the
prompt ending anywhere (inside a character too). Once the sequences are judged, each backend gets
its verdict, checked on the sequences it agreed on, as a compare run's is. A mismatch is keyed as
the run then decides it: its known divergence, its cause, else ``unexplained:CLASS``. The first of
each key is shrunk by taking ids out, one at a time, while the backend still differs under that key.

No journal: a decoding fuzz run is not resumed (it is cheap to run again with the same seed).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tokparity.corpus.ids import IdCase
from tokparity.errors import TokparityError
from tokparity.fuzz.findings import KNOWN, UNEXPLAINED
from tokparity.records import Mismatch
from tokparity.run.options import CompareOptions
from tokparity.run.oracle import oracle_chain
from tokparity.run.pipeline import ModelPipeline
from tokparity.run.results import FoundCause, FuzzSummary, Results, ResultsSoFar
from tokparity.vocab import Vocab
from tokparity.vocab.model import TokenType
from tokparity.zoo import resolve_model

SHRINK_SECONDS = 5.0  # per finding, at most
MAX_IDS = 24
SETTLE_SHARE = 0.25  # of the budget: the verdicts and the shrinking, after the sequences
PROGRESS_EVERY = 5.0  # seconds between progress lines


@dataclass
class IdFinding:
    backend: str
    key: str
    case: IdCase  # shrunk
    mismatch: Mismatch  # of the shrunk case
    original: IdCase
    count: int
    found_after: float
    shrink_seconds: float


class IdSource:
    """Random id sequences of one vocabulary (the same ones for the same seed)."""

    def __init__(self, vocab: Vocab, seed: int):
        from tokparity.vocab.token_bytes import token_bytes

        self.rng = random.Random(f"ids:{seed}:{vocab.size}")
        self.size = vocab.size
        self.vocab = vocab
        types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        self.bytes: dict[int, int] = {}
        self.words: list[int] = []
        self.spaces: list[int] = []
        for i, t in enumerate(types):
            if t in (TokenType.CONTROL, TokenType.UNUSED, TokenType.UNDEFINED):
                continue
            try:
                data = token_bytes(vocab, i)
            except Exception:  # (a token the vocabulary cannot spell as bytes)
                continue
            if len(data) == 1 and (t == TokenType.BYTE or data[0] not in self.bytes):
                self.bytes[data[0]] = i
            elif data and not data.strip():
                self.spaces.append(i)
            elif t == TokenType.NORMAL and data.isascii() and len(self.words) < 2000:
                self.words.append(i)
        self.specials = sorted({i for i in vocab.special_ids.values() if 0 <= i < vocab.size})
        self.n = 0

    def _char_ids(self) -> list[int]:
        ch = chr(self.rng.choice((0xE9, 0x79C1, 0x1F917, 0x10348, 0x0E01, self.rng.randrange(0x80, 0x2FFFF))))
        if 0xD800 <= ord(ch) < 0xE000:
            ch = "é"
        ids = [self.bytes.get(b) for b in ch.encode("utf-8")]
        if any(i is None for i in ids):
            return []
        cut = self.rng.random() < 0.3  # a character cut short
        return [i for i in ids if i is not None][:-1] if cut else [i for i in ids if i is not None]

    def _any_id(self) -> int:
        """An id at random, never a gap of the vocabulary (``[PAD200002]``): the decoder has no
        text for it either, so what an engine answers there is no finding (a few draws, then id 0)."""
        for _ in range(20):
            i = self.rng.randrange(self.size)
            if self.vocab.type_of(i) not in (TokenType.UNUSED, TokenType.UNDEFINED):
                return i
        return 0

    def next(self) -> IdCase:
        parts: list[int] = []
        while len(parts) < self.rng.randrange(2, MAX_IDS):
            pick = self.rng.random()
            if pick < 0.35 and self.words:
                parts.append(self.rng.choice(self.words))
            elif pick < 0.6:
                parts += self._char_ids()
            elif pick < 0.7 and 0x80 in self.bytes:  # a lone continuation byte
                parts.append(self.bytes.get(self.rng.randrange(0x80, 0xC0), self.bytes[0x80]))
            elif pick < 0.8 and self.specials:
                parts.append(self.rng.choice(self.specials))
            elif pick < 0.9 and self.spaces:
                parts.append(self.rng.choice(self.spaces))
            else:
                parts.append(self._any_id())
        if len(parts) < 2:
            parts = (parts + self.words[:2] + [0, 0])[:2]
        self.n += 1
        return IdCase(f"fuzz-ids-{self.n}", tuple(parts), self.rng.randrange(1, len(parts)), "fuzz: generated",
                      {"ids": "fuzz"})


def run_id_fuzz(spec: str, backend_names: list[str] | None, options: CompareOptions, seconds: float,
                seed: int, cases: int | None = None) -> tuple[Results, list[IdFinding], int]:
    """Fuzz one decoding op (``options.ops``, one of decode and stream) of one model for ``seconds``,
    and at most ``cases`` id sequences when given.

    The sequences take most of the time. The rest goes to each backend's verdict, checked on the
    sequences it agreed on, and to shrinking one finding per name the verdict gives. So one bug
    gets one name, as in a compare run, and the run ends near its budget."""
    from tokparity import __version__

    started = time.perf_counter()
    if not options.oracle:  # (golden ids cannot decode)
        chain = oracle_chain(resolve_model(spec), options)
        options = replace(options, oracle=next(n for n in chain if n != "golden"))
    results = ResultsSoFar(options={"add_special": options.add_special, "parse_special": options.parse_special})
    pipeline = ModelPipeline.open(spec, backend_names, options, results)
    run = pipeline.run
    op = options.decoding_ops[0]
    differed: dict[str, tuple[IdCase, float]] = {}  # case id -> the case and when it was judged
    listed: list[IdFinding] = []
    n = 0
    try:
        if run.decoding is None or not run.by_op.get(op):
            raise TokparityError(f"nothing to fuzz on {run.model.name}: no backend decodes beside the decoder; "
                                 "name one with -b")
        source = IdSource(run.vocab, seed)
        began = said = time.perf_counter()  # (the budget leaves loading out, as a fuzz of texts does)
        until = began + (1 - SETTLE_SHARE) * seconds
        try:
            while time.perf_counter() < until and (cases is None or n < cases):
                case = source.next()
                for record in run.id_records(n, case):
                    if record.judgements and case.id not in differed:  # (first: a mismatch counted has its case)
                        differed[case.id] = (case, time.perf_counter() - began)
                    pipeline.count([record])
                    pipeline.agreed_ids(record, case.ids, case.prompt)
                pipeline.diagnose_new()
                n += 1
                if time.perf_counter() - said >= PROGRESS_EVERY:
                    said = time.perf_counter()
                    options.say(f"fuzz {run.model.name} --ops {op}: {said - began:.0f}/{seconds:.0f} s, "
                                f"{n} id sequences, {len(differed)} differing")
        except KeyboardInterrupt:
            results.interrupted = True
        try:  # (a Ctrl-C while the verdicts are made: the rows keep their own causes, the reports are written)
            pipeline.diagnose(None, everything=False)
        except KeyboardInterrupt:
            results.interrupted = True
        results.runs.extend(pipeline.settle())
        try:
            listed = _findings(pipeline, results.mismatches, differed, began + seconds, not results.interrupted)
        except KeyboardInterrupt:
            results.interrupted = True
            listed = _findings(pipeline, results.mismatches, differed, began + seconds, False)
    finally:
        pipeline.close()
    fuzz = FuzzSummary(seed, seconds, n, {"gen:ids": n}, {}, [_found(f, i) for i, f in enumerate(listed, 1)], [])
    return results.final(__version__, time.perf_counter() - started, fuzz=fuzz), listed, n


def finding_key(m: Mismatch) -> str:
    """What a compare run would count the mismatch under: its known divergence, its cause, or its class."""
    return KNOWN + m.known if m.known else m.cause or UNEXPLAINED + m.cls


def _findings(pipeline: ModelPipeline, decided: Sequence[Mismatch], differed: Mapping[str, tuple[IdCase, float]],
              deadline: float, shrink: bool) -> list[IdFinding]:
    """One finding per backend and name, as the run's verdicts decided every mismatch: its first
    case, shrunk under that name within what is left of the budget (``shrink``: at all)."""
    groups: dict[tuple[str, str], list[Mismatch]] = {}
    for m in decided:
        groups.setdefault((m.backend, finding_key(m)), []).append(m)
    found = []
    for left, ((backend, key), ms) in zip(range(len(groups), 0, -1), groups.items()):
        first = ms[0]
        case, after = differed[first.case_id]
        t0 = time.perf_counter()
        budget = min(SHRINK_SECONDS, (deadline - t0) / left) if shrink else 0.0
        shrunk, last = _shrink(pipeline, case, first, key, t0 + budget)
        found.append(IdFinding(backend, key, shrunk, last, case, len(ms), after, time.perf_counter() - t0))
    return found


def _shrink(pipeline: ModelPipeline, case: IdCase, first: Mismatch, key: str, until: float
            ) -> tuple[IdCase, Mismatch]:
    """``case`` with ids taken out while ``first``'s backend still differs under ``key``, as the run's
    verdict reads it, until ``until``."""
    run = pipeline.run
    assert run.decoding is not None
    best, best_m = case, first
    k = 0
    while k < len(best.ids) and time.perf_counter() < until:
        ids = best.ids[:k] + best.ids[k + 1:]
        prompt = best.prompt - (k < best.prompt)
        if len(ids) < 2 or not 1 <= prompt < len(ids):
            k += 1
            continue
        candidate = IdCase(best.id, ids, prompt, best.about, dict(best.tags))
        record = run.decoding.record(first.op, -1, candidate, list(ids), prompt, run.decoding.decoder, ())
        same = next((d for d in (pipeline.decided_as_run(j) for j in record.judgements if j.backend == first.backend)
                     if finding_key(d) == key), None)
        if same is None:
            k += 1
            continue
        best, best_m = candidate, same
    return best, best_m


def _found(f: IdFinding, number: int) -> FoundCause:
    """The finding as summary.json lists it: its ids and pieces, and what each side answered (as text)."""
    from tokparity.fuzz.findings import key_label

    m = f.mismatch
    answered = f"{m.oracle} {list(m.oracle_output)!r} vs {f.backend} {list(m.backend_output)!r}"
    return FoundCause(f"ids-{number}", f.backend, m.oracle, m.cause, f.key, key_label(f.key), m.cls,
                      f"ids {list(f.case.ids)} after a prompt of {f.case.prompt}: {answered}", f.count,
                      round(f.found_after, 3), round(f.shrink_seconds, 3), m.known,
                      f"ids {list(f.original.ids)} after a prompt of {f.original.prompt}", list(f.case.ids),
                      list(f.case.ids), list(m.oracle_pieces), list(m.backend_pieces))
