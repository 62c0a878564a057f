"""``fuzz --ops decode|stream``: id sequences made at random from the model's vocabulary, judged by
the decoding judge (tokparity.run.ops) as ``compare --ops`` judges them, each distinct cause per
backend shrunk to its shortest sequence.

A sequence mixes what decoders get wrong: word tokens, the byte tokens of a character (whole, or
cut short), lone continuation bytes, special tokens, whitespace pieces and random ids, with the
prompt ending anywhere (inside a character too). A mismatch is keyed as a compare run decides it
(its cause, else ``unexplained:CLASS``, or the known divergence); the first of each key is shrunk
by taking ids out, one at a time, while the backend still differs under the same key.

No journal: a decoding fuzz run is not resumed (it is cheap to run again with the same seed).
"""

from __future__ import annotations

import random
import time
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

SHRINK_SECONDS = 5.0  # per finding
MAX_IDS = 24


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
                parts.append(self.rng.randrange(self.size))
        if len(parts) < 2:
            parts = (parts + self.words[:2] + [0, 0])[:2]
        self.n += 1
        return IdCase(f"fuzz-ids-{self.n}", tuple(parts), self.rng.randrange(1, len(parts)), "fuzz: generated",
                      {"ids": "fuzz"})


def run_id_fuzz(spec: str, backend_names: list[str] | None, options: CompareOptions, seconds: float,
                seed: int, cases: int | None = None) -> tuple[Results, list[IdFinding], int]:
    """Fuzz one decoding op (``options.ops``, one of decode and stream) of one model for ``seconds``,
    and at most ``cases`` id sequences when given."""
    from tokparity import __version__

    started = time.perf_counter()
    if not options.oracle:  # (golden ids cannot decode)
        chain = oracle_chain(resolve_model(spec), options)
        options = replace(options, oracle=next(n for n in chain if n != "golden"))
    results = ResultsSoFar(options={"add_special": options.add_special, "parse_special": options.parse_special})
    pipeline = ModelPipeline.open(spec, backend_names, options, results)
    run = pipeline.run
    op = options.decoding_ops[0]
    findings: dict[tuple[str, str], IdFinding] = {}
    n = 0
    try:
        if run.decoding is None or not run.by_op.get(op):
            raise TokparityError(f"nothing to fuzz on {run.model.name}: no backend decodes beside the decoder; "
                                 "name one with -b")
        source = IdSource(run.vocab, seed)
        until = started + seconds
        while time.perf_counter() < until and (cases is None or n < cases):
            case = source.next()
            for record in run.id_records(n, case):
                pipeline.count([record])
                for judgement in record.judgements:
                    m = pipeline.decided(judgement)
                    key = finding_key(m)
                    found = findings.get((m.backend, key))
                    if found is not None:
                        found.count += 1
                        continue
                    shrink_started = time.perf_counter()
                    shrunk, last = _shrink(pipeline, case, m, key)
                    findings[(m.backend, key)] = IdFinding(m.backend, key, shrunk, last, case, 1,
                                                           shrink_started - started,
                                                           time.perf_counter() - shrink_started)
            n += 1
    except KeyboardInterrupt:
        results.interrupted = True
    finally:
        pipeline.diagnose(None, everything=False)
        pipeline.close()
    results.runs.extend(pipeline.settle())
    listed = list(findings.values())
    fuzz = FuzzSummary(seed, seconds, n, {"gen:ids": n}, {}, [_found(f, i) for i, f in enumerate(listed, 1)], [])
    return results.final(__version__, time.perf_counter() - started, fuzz=fuzz), listed, n


def finding_key(m: Mismatch) -> str:
    """What a compare run would count the mismatch under: its known divergence, its cause, or its class."""
    return KNOWN + m.known if m.known else m.cause or UNEXPLAINED + m.cls


def _shrink(pipeline: ModelPipeline, case: IdCase, first: Mismatch, key: str) -> tuple[IdCase, Mismatch]:
    """``case`` with ids taken out while ``first``'s backend still differs under ``key``."""
    run = pipeline.run
    assert run.decoding is not None
    best, best_m = case, first
    until = time.perf_counter() + SHRINK_SECONDS
    k = 0
    while k < len(best.ids) and time.perf_counter() < until:
        ids = best.ids[:k] + best.ids[k + 1:]
        prompt = best.prompt - (k < best.prompt)
        if len(ids) < 2 or not 1 <= prompt < len(ids):
            k += 1
            continue
        candidate = IdCase(best.id, ids, prompt, best.about, dict(best.tags))
        record = run.decoding.record(first.op, -1, candidate, list(ids), prompt, run.decoding.decoder, ())
        same = next((d for d in (pipeline.decided(j) for j in record.judgements if j.backend == first.backend)
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
