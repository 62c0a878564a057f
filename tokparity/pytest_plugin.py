"""tokparity in a user's own test suite (loaded by pytest through the ``pytest11`` entry point).

    from tokparity.pytest_plugin import assert_tokenizer_parity

    def test_my_engine_agrees_with_llama_cpp():
        assert_tokenizer_parity(my_engine.encode, model="llama-spm", corpus="edge")

``engine`` is a Python callable ``(text, add_special, parse_special) -> list[int]``, run in this
process, or any backend spec (``"cmd:./my-engine {gguf}"``, ``"py:mypkg.engine:encode"``, ``"ref"``).
Every case of the corpus (or the ``texts`` given) goes through compare's machinery: the model's
oracle, the diff, the bug class, the tally and the root cause named by reproducing it. A
disagreement fails the test with the diff as its message: the cause that explains the engine's
mismatches, then per case its class, stage, cause, and ids beside pieces from the first differing
token on.

Hypothesis: the ``tokparity_strategies`` fixture gives ``tokparity.fuzz.strategies`` bound to a model's
vocabulary, to draw texts inside ``@given(data=st.data())`` tests:

    @given(data=st.data())
    def test_engine_on_generated_texts(data, tokparity_strategies):
        text = data.draw(tokparity_strategies("llama-spm").any_text())
        assert_tokenizer_parity(my_engine.encode, model="llama-spm", texts=[text])

A run (model, oracle, engine) is kept open for the session, so such a test pays for loading the
vocabulary and the oracle once, not once per example.
"""

from __future__ import annotations

import atexit
import inspect
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from tokparity.backends.base import Backend
from tokparity.corpus import Case, load_corpus
from tokparity.errors import CaseFailure, TokparityError
from tokparity.records import Mismatch
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.run.results import ResultsSoFar
from tokparity.textview import visible

if TYPE_CHECKING:  # compare is imported when a check runs, not when pytest loads the plugin
    from tokparity.run.pipeline import ModelRun

Engine = Callable[[str, bool, bool], list[int]] | str
SHOWN = 3  # mismatches spelled out in a failure message; the count says how many more
WINDOW = 6  # tokens shown from the first difference on


class CallableEngine(Backend):
    """A user's Python callable as a backend, in this process."""

    def __init__(self, fn: Callable, vocab):
        self.fn, self.vocab = fn, vocab
        self.name = f"py:{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"

    @property
    def version(self) -> str:
        return str(getattr(inspect.getmodule(self.fn), "__version__", ""))

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        ids = self.fn(text, add_special, parse_special)
        try:
            return [int(i) for i in ids]
        except (TypeError, ValueError):
            raise CaseFailure(f"{self.name} returned {type(ids).__name__}, not a list of ints") from None

    def pieces(self, ids: list[int]) -> list[str]:
        tokens = self.vocab.tokens
        return [tokens[i] if 0 <= i < len(tokens) else f"<id {i}?>" for i in ids]

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        raise NotImplementedError(f"{self.name} has no decode")


@dataclass
class _OpenRun:
    run: ModelRun
    engine: str
    reference: Any = None  # the RefTokenizer the diagnosis varies, made on the first failure


_RUNS: dict[tuple, _OpenRun] = {}


def _open_run(engine: Engine, model: str, oracle: str | None, add_special: bool, parse_special: bool) -> _OpenRun:
    key = (engine if isinstance(engine, str) else id(engine), model, oracle, add_special, parse_special)
    hit = _RUNS.get(key)
    if hit is not None:
        return hit
    from tokparity.run.options import CompareOptions
    from tokparity.run.pipeline import ModelRun
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    options = CompareOptions(add_special=add_special, parse_special=parse_special, oracle=oracle,
                             explicit_backends=True)
    if isinstance(engine, str):
        name = engine
    elif callable(engine):
        backend = CallableEngine(engine, load_vocab(resolve_model(model).primary[1]))
        name = backend.name
        options.services.ready[name] = backend
    else:
        raise TokparityError(f"assert_tokenizer_parity: engine must be a callable (text, add_special, parse_special) "
                             f"-> list[int] or a backend spec such as 'cmd:…' or 'py:module:fn', not "
                             f"{type(engine).__name__}")
    run = ModelRun(model, [name], options, ResultsSoFar())
    if name not in run.compared:
        run.close()
        raise TokparityError(f"assert_tokenizer_parity: engine {name!r} is the oracle itself; pass another oracle=")
    _RUNS[key] = _OpenRun(run, name)
    return _RUNS[key]


@atexit.register
def close_runs() -> None:
    while _RUNS:
        _RUNS.popitem()[1].run.close()


def _cases(corpus: str | None, texts: Iterable[str] | None) -> Iterable[Case]:
    if texts is not None:
        return (Case(f"text-{i}", t, "texts") for i, t in enumerate(texts))
    return load_corpus(corpus or "edge")


def _side_by_side(m: Mismatch) -> list[str]:
    start = max(0, m.first_diff - 1)
    rows = [f"    {'#':>4}  {'oracle ' + m.oracle:<34}  engine {m.backend}"]
    for i in range(start, start + WINDOW):
        if i >= len(m.oracle_ids) and i >= len(m.backend_ids):
            break
        a = f"{m.oracle_ids[i]} {visible(m.oracle_pieces[i])!r}" if i < len(m.oracle_ids) else "-"
        b = f"{m.backend_ids[i]} {visible(m.backend_pieces[i])!r}" if i < len(m.backend_ids) else "-"
        mark = "≠" if a != b else " "
        rows.append(f"    {i:>4}  {a:<34}{mark} {b}")
    return rows


def describe(m: Mismatch) -> str:
    """One mismatch as pytest users read diffs: where, which class, why, then ids beside pieces."""
    lines = [f"{m.corpus}/{m.case_id}: class {m.cls} (stage {m.stage}), first difference at token {m.first_diff}",
             f"  text: {visible(m.text)[:200]!r}",
             f"  {m.evidence[:400]}"]
    if m.cause:
        lines.append(f"  cause: {m.cause}: {m.cause_evidence[:300]}")
    return "\n".join(lines + _side_by_side(m))


def assert_tokenizer_parity(engine: Engine, model: str = "llama-spm", corpus: str | None = "edge",
                            oracle: str | None = None, *, texts: Iterable[str] | None = None,
                            add_special: bool = False, parse_special: bool = False) -> int:
    """Fail (AssertionError) unless ``engine`` gives the oracle's ids on every case; the message is
    tokparity's diff. ``texts`` replaces the corpus. Returns how many cases agreed."""
    from tokparity.run.pipeline import ModelPipeline

    opened = _open_run(engine, model, oracle, add_special, parse_special)
    run = opened.run
    # A pipeline of this call's cases alone (the run, its backends loaded, serves every call)
    results = ResultsSoFar()
    pipeline = ModelPipeline(run, results, opened.reference)
    n = sum(1 for _ in pipeline.judged(enumerate(_cases(corpus, texts))))
    tally = pipeline.tally
    if any(j.backend == opened.engine for j in tally.judgements):
        pipeline.diagnose([corpus] if texts is None and corpus else None)
        opened.reference = pipeline.diagnosis.reference  # (Hypothesis shrinks by failing again and again)
        summary = next(s for s in pipeline.settle() if s.backend == opened.engine)
        found = [m for m in results.mismatches if m.backend == opened.engine]
        head = (f"{opened.engine} disagrees with {'/'.join(run.chain)} on {len(found)} of {n} cases of "
                f"{'the given texts' if texts is not None else repr(corpus)} ({run.model.name}):")
        if summary.root_cause:
            verdict = summary.root_cause
            head += (f"\n  root cause: {verdict.cause} (the reference with it gives the engine's ids on "
                     f"{verdict.explains} of {verdict.mismatches} mismatching cases)")
        elif summary.causes:
            head += "\n  causes: " + ", ".join(f"{cause} {k}" for cause, k in summary.causes.items())
        counts = Counter(m.cls for m in found).most_common()
        head += "\n  classes: " + ", ".join(f"{cls} {k}" for cls, k in counts)
        shown = [describe(m) for m in found[:SHOWN]]
        more = [f"… and {len(found) - SHOWN} more"] if len(found) > SHOWN else []
        raise AssertionError("\n".join([head, *shown, *more]))
    judged = tally.counts[(opened.engine, "encode")]
    if judged["cases"] == 0:  # nothing compared is no pass
        where = "the given texts" if texts is not None else repr(corpus)
        raise AssertionError(f"{opened.engine} was compared on no case: no text was given" if n == 0 else
                             f"{opened.engine} was compared on none of the {n} cases of {where} ({run.model.name}): "
                             f"{judged['skipped']} skipped, {judged['not_applicable']} declared not applicable")
    return n


class BoundStrategies:
    """``tokparity.fuzz.strategies`` with the model's vocabulary filled in where a strategy takes one."""

    def __init__(self, vocab):
        from tokparity.fuzz import strategies
        self.vocab, self._s = vocab, strategies

    def vocab_texts(self, **kw):
        return self._s.vocab_texts(self.vocab, **kw)

    def special_mixes(self, **kw):
        return self._s.special_mixes(self.vocab, **kw)

    def any_text(self):
        return self._s.any_text(self.vocab)

    def __getattr__(self, name: str):  # whitespace_texts, script_texts, normalization_texts, SCRIPTS
        return getattr(self._s, name)


@pytest.fixture(scope="session")
def tokparity_strategies():
    """``tokparity_strategies("llama-spm").vocab_texts()``: Hypothesis strategies for a model.
    Session-scoped, so Hypothesis's ``@given`` accepts it."""
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    cache: dict[str, BoundStrategies] = {}

    def bound(model: str = "llama-spm") -> BoundStrategies:
        if model not in cache:
            cache[model] = BoundStrategies(load_vocab(resolve_model(model).primary[1]))
        return cache[model]

    return bound


@pytest.fixture(scope="session")
def tokenizer_parity():
    """The ``assert_tokenizer_parity`` helper, for those who prefer fixtures to imports."""
    return assert_tokenizer_parity
