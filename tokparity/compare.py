"""``compare``: every case on every backend, each against the model's oracle, diagnosed.

For one model the run is:

    cases ──► oracle.encode ──► for each backend: encode ──► equal? ──► no: align, stage, classify
                                                           ──► crash / timeout: recorded, run goes on

The oracle is the library the model was trained with unless the user names one (tokparity.oracle):
SentencePiece for a ``.model``, Hugging Face tokenizers for a ``tokenizer.json``, then the golden
ids of llama.cpp's ``.inp/.out`` where they hold the text (they were made with the original HF
tokenizers), then llama.cpp. Results are plain records (``tokparity.results``); rendering is the reports' job.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from tokparity.backends.base import Answer, Backend, CaseFailure
from tokparity.backends.registry import backends_for
from tokparity.backends.runner import ask, ask_many
from tokparity.corpus import Case, load_corpus
from tokparity.diagnose import Cause, Diagnoser
from tokparity.diagnose.info import consistent_class, stage_of_cause
from tokparity.diff.align import align
from tokparity.diff.classify import Stages, classify
from tokparity.diff.decode import classify_decode, classify_decode_failure
from tokparity.errors import TokparityError
from tokparity.journal import AGREE, SKIPPED, BadJournal, CaseRecord, Journal, Verdict
from tokparity.known import KnownList
from tokparity.oracle import choose_oracle
from tokparity.results import Mismatch, Results, RunSummary
from tokparity.textview import single_line
from tokparity.vocab import Vocab, load_vocab
from tokparity.zoo import ModelFiles, resolve_model

# The built-in default: a handful of zoo models, one per algorithm family, on every corpus.
DEFAULT_MODELS = ("llama-spm", "llama-bpe", "botchan-unigram", "nomic-bert-moe", "bert-bge")
DEFAULT_CORPORA = ("all",)
DEFAULT_MAX_CHARS = 1_000_000  # a case longer than this is skipped, with a note (--max-chars)
TOO_LONG_LISTED = 20  # summary.json names this many of the skipped long cases
Decoded = dict[str, str | CaseFailure | None]  # --decode, per case: each backend's text, None (no decode) or its failure


@dataclass
class CompareOptions:
    add_special: bool = False
    parse_special: bool = False
    oracle: str | None = None
    explicit_backends: bool = False  # the user named them: an unavailable one is an error
    progress: Callable[[str], None] | None = None
    known: KnownList | None = None  # reviewed upstream divergences: reported as known, not failures
    max_chars: int | None = DEFAULT_MAX_CHARS  # longer texts are not run (a clear note each); None: no cap
    journal: Journal | None = None  # cases.jsonl: every case written as it is judged; replayed on resume
    # Backends made by the caller, by name, used instead of making them (regress: the stored goldens
    # as the oracle; the pytest plugin: a user's Python callable as the engine).
    ready: dict[str, Backend] = field(default_factory=dict)
    decode: bool = False  # also decode the ids a backend agrees on, and compare with the oracle's text
    jobs: int = 1  # worker processes (tokparity.parallel); 1: everything in this process
    timeout: float | None = None  # seconds per case for backends in another process (None: their default)
    diagnose: bool = True  # name each mismatch's root cause by reproducing it (tokparity.diagnose)
    ray: str | None = None  # --ray: "" or "local" starts Ray here, else a cluster's address (tokparity.cluster)

    def say(self, message: str) -> None:
        """A progress line (to stderr, unless the run is quiet)."""
        if self.progress:
            self.progress(message)


# What a worker process needs of the options (the rest stays with the parent: known list, journal,
# progress, backends made by the caller).
WORKER_OPTIONS = ("add_special", "parse_special", "oracle", "explicit_backends", "max_chars", "decode", "timeout",
                  "diagnose")


def oracle_chain(model: ModelFiles, options: CompareOptions) -> list[str]:
    """The backends that judge ``model``'s cases, in order (tokparity.oracle: the training library
    of its original files, then golden ids, then llama.cpp; ``--oracle`` overrides)."""
    return list(choose_oracle(model, options.oracle, options.add_special).chain)


def _stage(oracle: Backend, backend: Backend, text: str) -> tuple[str, Stages | None, Stages | None]:
    """The first pipeline stage at which the two sides disagree, where both expose it."""
    a, b = Stages(), Stages()
    try:
        if oracle.supports("normalize") and backend.supports("normalize"):
            a.normalized, b.normalized = oracle.normalize(text), backend.normalize(text)
            if a.normalized != b.normalized:
                return "normalize", a, b
        if oracle.supports("pre_tokenize"):
            a.pre_tokens = oracle.pre_tokenize(text)
        if a.pre_tokens is not None and backend.supports("pre_tokenize"):
            b.pre_tokens = backend.pre_tokenize(text)
            if a.pre_tokens != b.pre_tokens:
                return "pre_tokenize", a, b
            return "model", a, b
    except Exception:  # a stage the backend offers but fails on: no verdict on stages
        return "unknown", None, None
    return ("model" if a.normalized is not None else "unknown"), a, b


def _pieces(vocab: Vocab | None, ids: list[int]) -> list[str]:
    assert vocab is not None  # judged where the backends are, never on a ledger
    return [vocab.tokens[i] if 0 <= i < vocab.size else f"<id {i}?>" for i in ids]


def _partition(answers: dict[str, Answer]) -> list[list[str]]:
    groups: dict[object, list[str]] = {}
    for name, ans in answers.items():
        if ans.status == "skipped":
            continue
        key = tuple(ans.ids) if ans.status == "ok" else ans.status
        groups.setdefault(key, []).append(name)
    return sorted(groups.values(), key=lambda g: -len(g))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Loading a model makes millions of objects at once (vocabularies, merge tables, the
    libraries' own); Python's cyclic collector, triggered by every 700 new ones, scans the
    growing heap again and again while they are made, and then at every full collection of
    the run (about 1 s of the default run's 10). So: no collection while loading, and what was
    loaded is moved out of the collector's sight (``gc.freeze``) while the model runs;
    ``ModelRun.close`` hands it back (``gc.unfreeze``). Reference counting frees it all as
    soon as a model is closed either way."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.freeze()


class ModelRun:
    """One model: its vocabulary, its backends, and the loop over cases."""

    def __init__(self, spec: str, backend_names: list[str] | None, options: CompareOptions, results: Results):
        started = time.perf_counter()
        with collector_paused():
            self._load(spec, backend_names, options, results)
        self.timing["load"] = time.perf_counter() - started

    def _load(self, spec: str, backend_names: list[str] | None, options: CompareOptions, results: Results) -> None:
        from tokparity.backends.registry import labelled_with_oracle, make_backend, split_label

        self.model = resolve_model(spec)
        self.options = options
        self.results = results
        self.vocab: Vocab | None = load_vocab(self.model.primary[1])
        self.chain = oracle_chain(self.model, options)
        names = list(backend_names) if backend_names else backends_for(self.model)
        args = labelled_with_oracle(names, options.oracle)  # label -> -b argument (mine -> mine=cmd:…)
        wanted = list(dict.fromkeys(self.chain + list(args)))
        self.backends: dict[str, Backend] = {}
        timeouts = {"timeout": options.timeout} if options.timeout else {}  # cmd: and child-process backends
        for name in wanted:
            if name in options.ready:
                self.backends[name] = options.ready[name]
                continue
            try:
                self.backends[name] = make_backend(args.get(name, name), self.model, **timeouts)
            except TokparityError as e:
                if options.explicit_backends or name in self.chain:
                    raise
                results.options.setdefault("unavailable", []).append(f"{self.model.name}/{name}: {e}")
                options.say(f"skipping {name} on {self.model.name}: {e}")
        for name, b in self.backends.items():
            named = split_label(args.get(name, name))[1]  # what a name stands for: kept beside its version
            results.backends.setdefault(name, {"version": b.version} | ({"spec": named} if named != name else {}))
        self._start_ledger(list(self.backends))

    @classmethod
    def ledger(cls, model: ModelFiles, chain: list[str], backend_names: list[str], options: CompareOptions,
               results: Results) -> ModelRun:
        """A run that only counts: the cases are judged elsewhere (``compare --jobs``, in worker
        processes, each with its own backends) and their records ``apply``-ed here."""
        run = cls.__new__(cls)
        run.model, run.options, run.results, run.chain = model, options, results, chain
        run.vocab, run.backends = None, {}
        run._start_ledger(backend_names)
        return run

    def _start_ledger(self, backend_names: list[str]) -> None:
        chain = self.chain
        self.compared = [n for n in backend_names if n not in chain or (n == chain[-1] and len(chain) > 1)]
        self.summaries = {n: RunSummary(self.model.name, "/".join(chain), n) for n in self.compared}
        self._stage_ref: Backend | None = None
        self._reference: Any = None  # the RefTokenizer the diagnosis varies
        self._diagnosers: dict[tuple[bool, bool], Diagnoser | None] = {}
        self._diagnosed = 0  # results.mismatches before this index have been diagnosed (set below)
        self._symptoms: dict[int, str] = {}  # id(mismatch) -> its class before a cause changed it
        self.not_agreeing: dict[str, set[int]] = {n: set() for n in self.compared}  # case positions, per backend
        # This model's mismatches are results.mismatches from here on (models run one after another):
        # by position, not by name, since two models of a run may share a name (two tokenizer.json).
        self._first = self._diagnosed = len(self.results.mismatches)
        self.oracles_used: set[str] = set()
        # seconds: "load" (vocabulary and backends), and each backend's own encode time
        self.timing: dict = self.results.timing.setdefault(self.model.name, {"load": 0.0, "backends": {}})
        if self.options.known:
            for n in self.compared:
                self.options.known.note_run(self.model.name, n, decoding=self.options.decode)

    def finish(self, count_causes: bool = True) -> list[RunSummary]:
        """The summaries, each naming the oracles that really judged its cases (golden ids only
        where they had the text), with their causes counted (``count_causes``: from the mismatches
        listed; fuzz lists only its findings and counts causes over every case itself)."""
        if count_causes:
            self._count_causes()
        used = "/".join(n for n in self.chain if n in self.oracles_used) or "/".join(self.chain)
        why = choose_oracle(self.model, self.options.oracle, self.options.add_special).why
        for s in self.summaries.values():
            s.oracle, s.oracle_why = used, why
        return list(self.summaries.values())

    def close(self) -> None:
        started = time.perf_counter()
        stage_ref, self._stage_ref = self._stage_ref, None
        if stage_ref is not None and stage_ref not in self.backends.values():
            stage_ref.close()
        del stage_ref
        # Each backend is let go of here, where it is timed: freeing a model's millions of
        # objects is part of closing it, not of whatever line drops the last reference later.
        while self.backends:
            self.backends.popitem()[1].close()
        gc.unfreeze()  # what collector_paused() froze: collected as usual from here on
        self.timing["close"] = self.timing.get("close", 0.0) + time.perf_counter() - started

    def stage_reference(self, oracle_name: str, text: str, oracle_ids: list[int],
                        ref_answer: Answer | None = None) -> Backend:
        """Whose stages stand for the oracle's. llama.cpp and golden ids expose no normalizer or
        pre-tokenizer; tokparity's reference does, and where it gives the oracle's ids on this
        very text its stages are a faithful account of how the oracle got there."""
        oracle = self.backends[oracle_name]
        if oracle.supports("pre_tokenize"):
            return oracle
        if self._stage_ref is None:
            try:
                from tokparity.backends.registry import make_backend
                self._stage_ref = self.backends.get("ref") or make_backend("ref", self.model)
            except TokparityError:
                self._stage_ref = oracle
        ref = self._stage_ref
        if ref is oracle:
            return oracle
        if ref_answer is not None and ref is self.backends.get("ref"):  # its answer on this case is in hand
            return ref if ref_answer.status == "ok" and ref_answer.ids == oracle_ids else oracle
        try:
            same = ref.encode(text, self.options.add_special, self.options.parse_special) == oracle_ids
        except Exception:
            same = False
        return ref if same else oracle

    def run_case(self, case: Case, n: int = 0) -> CaseRecord:
        """Run one case on every backend, judge it against the oracle and count it."""
        record = self.judge(case, n)
        self.apply(record)
        return record

    def ask(self, texts: list[str]) -> list[dict[str, Answer]]:
        """Every backend's answer on each text, one ``encode_many`` per backend."""
        add_special, parse_special = self.options.add_special, self.options.parse_special
        per_backend = {name: ask_many(b, texts, add_special, parse_special) for name, b in self.backends.items()}
        return [{name: answers[i] for name, answers in per_backend.items()} for i in range(len(texts))]

    def judge_many(self, batch: list[tuple[int, Case]]) -> list[CaseRecord]:
        """The records of ``batch`` ((position, case) pairs), in its order; every backend is asked
        ``JudgedCases.BATCH`` texts at a time (``encode_many``)."""
        records: list[CaseRecord] = []
        for start in range(0, len(batch), JudgedCases.BATCH):
            chunk = batch[start:start + JudgedCases.BATCH]
            answers = self.ask([case.text for _, case in chunk])
            records += [self.judge(case, n, answer) for (n, case), answer in zip(chunk, answers)]
        return records

    def ask_one(self, name: str, text: str) -> Answer:
        """Backend ``name``'s answer on ``text``."""
        return ask(self.backends[name], text, self.options.add_special, self.options.parse_special)

    def judge(self, case: Case, n: int = 0, answers: dict[str, Answer] | None = None) -> CaseRecord:
        """Every backend's answer on ``case`` (asked now unless given) and each compared backend's
        verdict, as a record (``n``: the case's position in the model's stream, for the journal)."""
        if answers is None:
            answers = {name: self.ask_one(name, case.text) for name in self.backends}
        oracle_name = next((n for n in self.chain if answers[n].status != "skipped"), self.chain[-1])
        oracle = answers[oracle_name]
        decoded: Decoded = {}  # --decode: each backend's text for the oracle's ids
        partition: list[list[str]] = []  # who agrees with whom: worked out for a case with a mismatch
        record = CaseRecord(self.model.name, n, case.id, case.corpus, oracle_name, tally_keys(case),
                            seconds={name: ans.seconds for name, ans in answers.items()})
        for name in self.compared:
            if name == oracle_name:
                continue
            ans = answers[name]
            if ans.status == "skipped":
                record.verdicts[name] = SKIPPED
            elif ans.status == "ok" and oracle.status == "ok" and ans.ids == oracle.ids:
                record.verdicts[name] = AGREE
                mismatch = self._decode_mismatch(case, name, ans.ids, decoded) if self.options.decode else None
                if mismatch is not None:
                    mismatch.partition = partition = partition or _partition(answers)
                    record.verdicts[name] = Verdict.differs(mismatch.cls)
                    record.mismatches.append(mismatch)
            else:
                mismatch = self.mismatch(case, oracle_name, oracle, name, ans, answers.get("ref"))
                mismatch.partition = partition = partition or _partition(answers)
                record.verdicts[name] = Verdict.differs(mismatch.cls)
                record.mismatches.append(mismatch)
        return record

    def too_long(self, case: Case, n: int = 0) -> CaseRecord:
        """The record of a case not run: its text is longer than ``--max-chars`` (or its line
        was not even read: ``too_long`` then counts the line's bytes, ``unread``)."""
        return CaseRecord(self.model.name, n, case.id, case.corpus, too_long=case.unread_bytes or len(case.text),
                          unread=bool(case.unread_bytes))

    def apply(self, record: CaseRecord) -> None:
        """Count one judged case into the summaries, the tag rates and the mismatches. The same
        code counts a case judged now and one replayed from the journal of an interrupted run."""
        if record.too_long:
            self._note_too_long(record)
            return
        self.oracles_used.add(record.oracle)
        spent = self.timing["backends"]
        for name, seconds in record.seconds.items():
            spent[name] = spent.get(name, 0.0) + seconds
        by_backend = {m.backend: m for m in record.mismatches}
        judged = mismatched = 0
        for name, verdict in record.verdicts.items():
            summary = self.summaries.get(name)
            if summary is None:
                raise BadJournal(f"{self.model.name}: the journal has verdicts of {name}, which this run does not "
                                 f"compare ({', '.join(self.summaries) or 'none'}); resume with the same backends "
                                 "installed, or start a new run")
            if verdict == SKIPPED:
                summary.skipped += 1
                self.not_agreeing[name].add(record.n)
                continue
            summary.cases += 1
            judged += 1
            if verdict == AGREE:
                continue
            self.not_agreeing[name].add(record.n)
            cls, known = verdict.cls, verdict.known
            mismatch = by_backend.get(name)
            if mismatch is not None:  # (fuzz journals keep the class, not the whole mismatch)
                if self.options.known:
                    mismatch.known = known = self.options.known.match(mismatch)
                record.verdicts[name] = Verdict.differs(cls, known)
                self.results.mismatches.append(mismatch)
            summary.mismatches += 1
            summary.unexplained += 0 if known else 1
            summary.classes[cls] = summary.classes.get(cls, 0) + 1
            mismatched += 1
        if judged:  # the tag rates count (case, backend) pairs
            for key in record.tally:
                rate = self.results.tag_rates.setdefault(key, {"cases": 0, "mismatches": 0})
                rate["cases"] += judged
                rate["mismatches"] += mismatched

    def _reviewed_cause(self, mismatch: Mismatch) -> None:
        """A known divergence whose cause no variant reproduces (a crash, text dropped by a
        converter) carries the cause its entry was reviewed with."""
        assert self.options.known is not None
        entry = self.options.known.entry(mismatch.known)
        if entry is not None and entry.cause:
            mismatch.cause = entry.cause
            mismatch.cause_evidence = (f"reviewed, not reproduced: the known divergence {entry.id!r} says so "
                                       f"({entry.upstream})")

    def _note_too_long(self, record: CaseRecord) -> None:
        note = self.results.options.setdefault("too_long", {"max_chars": self.options.max_chars, "cases": 0,
                                                             "first": []})
        note["cases"] += 1
        if len(note["first"]) < TOO_LONG_LISTED:
            note["first"].append({"model": record.model, "corpus": record.corpus, "case_id": record.case_id,
                                  "line_bytes" if record.unread else "chars": record.too_long})

    def _decode(self, name: str, ids: list[int], decoded: Decoded) -> str | CaseFailure | None:
        """``name``'s text for ``ids`` (None: it has no decode; a CaseFailure: it failed), once per case."""
        if name not in decoded:
            try:
                decoded[name] = self.backends[name].decode(ids)
            except NotImplementedError:
                decoded[name] = None  # a backend without decode (a cmd: engine may answer "unsupported")
            except CaseFailure as e:  # a timeout or a crash of the decoder: a finding, of that class
                decoded[name] = e
            except Exception as e:  # a decoder that fails on ids its side produced is a finding
                decoded[name] = CaseFailure(f"{type(e).__name__}: {e}")
        return decoded[name]

    def _decode_mismatch(self, case: Case, name: str, ids: list[int],
                         decoded: Decoded) -> Mismatch | None:
        """With --decode: the ids both sides agree on, decoded by each; a Mismatch if the texts
        differ. Golden ids cannot decode by themselves, so the next oracle in the chain decodes."""
        decoder = next((n for n in self.chain if n != "golden" and n in self.backends), None)
        if decoder is None or decoder == name:
            return None
        want, got = self._decode(decoder, ids, decoded), self._decode(name, ids, decoded)
        if want is None or got is None or want == got:
            return None
        vocab = self.vocab
        assert vocab is not None  # decoded where the backends are, never on a ledger
        unk_id = vocab.special_ids.get("unk")
        unk = vocab.tokens[unk_id] if unk_id is not None and 0 <= unk_id < vocab.size else None
        verdict = classify_decode_failure(decoder, want, name, got) or \
            classify_decode(case.text, cast(str, want), cast(str, got), unk)
        pieces = _pieces(self.vocab, ids)
        return Mismatch(
            model=self.model.name, corpus=case.corpus, case_id=case.id, tags=dict(case.tags), oracle=decoder,
            backend=name, cls=verdict.cls, evidence=verdict.evidence, stage="decode", first_diff=0, text=case.text,
            oracle_ids=ids, backend_ids=ids, oracle_pieces=pieces, backend_pieces=pieces)

    def mismatch(self, case: Case, oracle_name: str, oracle: Answer, name: str, ans: Answer,
                 ref_answer: Answer | None = None) -> Mismatch:
        """The mismatch of backend ``name``'s answer ``ans`` against the oracle's on ``case``: its
        symptom class, the first stage and token where they part."""
        if oracle.status != "ok":  # the oracle itself failed: the case says so, whoever else answered
            cls, evidence, stage, first = oracle.status if oracle.status in ("crash", "timeout") else "crash", \
                f"the oracle {oracle_name} failed: {oracle.detail}", "unknown", 0
        elif ans.status != "ok":
            cls = ans.status if ans.status in ("crash", "timeout") else "crash"
            evidence, stage, first = f"{name}: {ans.detail or ans.status}", "unknown", 0
        else:
            reference = self.stage_reference(oracle_name, case.text, oracle.ids, ref_answer)
            stage, a_st, b_st = _stage(reference, self.backends[name], case.text)
            assert self.vocab is not None  # judged where the backends are, never on a ledger
            c = classify(case.text, oracle.ids, ans.ids, self.vocab, a_stages=a_st, b_stages=b_st)
            cls, evidence = c.cls, c.evidence
            divergence = c.divergence or align(oracle.ids, ans.ids)
            first = divergence.first[0] if divergence.first is not None else 0
        if ans.notes:
            evidence += f" (notes: {'; '.join(ans.notes)[:300]})"
        return Mismatch(
            model=self.model.name, corpus=case.corpus, case_id=case.id, tags=dict(case.tags), oracle=oracle_name,
            backend=name, cls=cls, evidence=evidence, stage=stage, first_diff=first, text=case.text,
            oracle_ids=oracle.ids, backend_ids=ans.ids, oracle_pieces=_pieces(self.vocab, oracle.ids),
            backend_pieces=_pieces(self.vocab, ans.ids),
        )

    # -- diagnosis by reproduction (tokparity.diagnose) -------------------------------------------

    # Causes are named after the cases are judged, over the model's mismatches in case order: the
    # search remembers what explained a backend's earlier cases, so the order must be the run's
    # own, whoever judged the cases (worker processes with --jobs, a run before a --resume).

    def diagnoser(self) -> Diagnoser | None:
        """The model's reference and its variants for the current add_special / parse_special, made
        on first use (None: the model has no reference tokenizer, so no cause can be reproduced)."""
        key = (self.options.add_special, self.options.parse_special)
        if key not in self._diagnosers:
            self._diagnosers[key] = None
            try:
                if self._reference is None:
                    tokenizer = getattr(self.backends.get("ref"), "tokenizer", None)
                    if tokenizer is None:
                        from tokparity.reference import RefTokenizer
                        vocab = self.vocab if self.vocab is not None else load_vocab(self.model.primary[1])
                        tokenizer = RefTokenizer(vocab)
                    self._reference = tokenizer
                self._diagnosers[key] = Diagnoser(self._reference, *key)
            except TokparityError as e:
                self.options.say(f"{self.model.name}: no root causes: {e}")
        return self._diagnosers[key]

    def diagnose_one(self, m: Mismatch, counted: bool = True) -> None:
        """Name ``m``'s root cause (and keep its class a symptom of it; ``counted``: ``m`` is one of
        the run's mismatches, counted in its summary's classes)."""
        if m.stage == "decode":  # decoding is not reproduced by variants: its class says it
            m.cause = m.cause or ("decode.cleanup" if m.cls == "decode-cleanup" else "")
            return
        if m.cls in ("crash", "timeout") or not self.options.diagnose:
            return
        if m.cls == "vocab-mismatch":
            cause = Cause("vocab.mismatch", m.evidence)
        else:
            diagnoser = self.diagnoser()
            if diagnoser is None:
                return
            started = time.perf_counter()
            try:
                cause = diagnoser.diagnose(m.text, m.oracle_ids, m.backend_ids, m.backend, symptom=m.cls)
            except Exception as e:  # a diagnosis never stops a run; the case keeps its class
                cause = Cause("", f"the diagnosis failed: {type(e).__name__}: {e}")
            finally:
                self.timing["diagnose"] = self.timing.get("diagnose", 0.0) + time.perf_counter() - started
        m.cause, m.cause_evidence, m.variants = cause.name, cause.detail, list(cause.keys)
        m.alternatives = [list(keys) for keys in cause.alternatives]
        if cause.reproduced or cause.name == "model.viterbi-tie":  # a proof decides; a stage-level cause locates
            if counted:
                self._set_class(m, consistent_class(m.cls, cause.name))
            else:
                m.cls = consistent_class(m.cls, cause.name)
        if m.stage == "unknown":  # a backend without stages: the cause says where it diverged
            m.stage = stage_of_cause(cause.name)

    def own_mismatches(self) -> list[Mismatch]:
        """This model's mismatches (the run's since this model started: models run one after another)."""
        return self.results.mismatches[self._first:]

    def _symptom(self, m: Mismatch) -> str:
        """The class the rules gave ``m``, before its cause set it."""
        return self._symptoms.get(id(m), m.cls)

    def _set_class(self, m: Mismatch, cls: str) -> None:
        if cls == m.cls:
            return
        self._symptoms.setdefault(id(m), m.cls)
        classes = self.summaries[m.backend].classes
        classes[m.cls] -= 1
        if not classes[m.cls]:
            del classes[m.cls]
        classes[cls] = classes.get(cls, 0) + 1
        m.cls = cls

    def diagnose_all(self, corpora: list[str] | None) -> None:
        """The root cause of every mismatch of this model not diagnosed yet, in case order, then
        each backend's run-level verdict (tokparity.diagnose.verdict: the agreeing cases are read
        again from ``corpora``; None: no agreements to check)."""
        if not self.options.diagnose:
            return
        from tokparity.diagnose.verdict import TIE, reclaim_ties, relabel, root_cause

        todo = self.results.mismatches[max(self._diagnosed, self._first):]
        self._diagnosed = len(self.results.mismatches)
        for m in todo:
            if m.backend in self.summaries:
                self.diagnose_one(m)
        diagnoser = self.diagnoser()
        if diagnoser is None:
            return
        started = time.perf_counter()
        base_of: dict[str, list[int] | None] = {}
        for name, summary in self.summaries.items():
            # (a tie is not the backend's deviation: two optima of the same model)
            mine = [m for m in self.own_mismatches() if m.backend == name and m.stage != "decode"]
            mismatches = [m for m in mine if m.cause != TIE]
            if not any(m.variants for m in mismatches):
                continue
            texts = self._texts(corpora, self.not_agreeing.get(name, set())) if corpora is not None else iter(())
            summary.root_cause = root_cause(diagnoser, mismatches, texts, base_of)
            if summary.root_cause is not None:
                changed = relabel(diagnoser, mismatches, summary.root_cause, self._symptom)
                changed += reclaim_ties(diagnoser, [m for m in mine if m.cause == TIE], summary.root_cause)
                for m in changed:
                    self._set_class(m, consistent_class(self._symptom(m), m.cause))
        diagnoser.forget()
        self.timing["diagnose"] = self.timing.get("diagnose", 0.0) + time.perf_counter() - started

    def take_causes(self, causes: dict) -> bool:
        """The causes a worker process named for this model (``parallel._causes_of``), when it
        judged every case in order; False (nothing taken) when its mismatches are not these."""
        mine = self.own_mismatches()
        named = causes["mismatches"]
        if len(mine) != len(named) or any((m.backend, m.case_id) != tuple(c[:2]) for m, c in zip(mine, named)):
            return False
        for m, (_, _, cls, stage, cause, evidence, variants, alternatives) in zip(mine, named):
            if m.backend in self.summaries:
                self._set_class(m, cls)
            m.stage, m.cause, m.cause_evidence = stage, cause, evidence
            m.variants, m.alternatives = list(variants), [list(keys) for keys in alternatives]
        for name, verdict in causes["root_causes"].items():
            if name in self.summaries:
                self.summaries[name].root_cause = verdict
        self._diagnosed = len(self.results.mismatches)
        self.timing["diagnose"] = self.timing.get("diagnose", 0.0) + causes["seconds"]
        return True

    def _count_causes(self) -> None:
        """The summaries' causes, ties and known divergences once causes are named: a class that
        changed is matched against the known list again; a known case without a reproduced cause
        carries its entry's reviewed one; a tie is reported apart, not as a failure."""
        known = self.options.known
        for m in self.own_mismatches():
            summary = self.summaries.get(m.backend)
            if summary is None:
                continue
            before = bool(m.known)
            if known is not None:
                if m.known and (entry := known.entry(m.known)) is not None:
                    entry.hits -= 1
                m.known = known.match(m)
                if m.known and not m.cause:
                    self._reviewed_cause(m)
            tie = m.cause == "model.viterbi-tie" and not m.known
            summary.unexplained += (0 if before else -1) + (0 if m.known or tie else 1)
            summary.ties += 1 if tie else 0
            if m.cause:
                summary.causes[m.cause] = summary.causes.get(m.cause, 0) + 1
        for summary in self.summaries.values():
            summary.causes = dict(sorted(summary.causes.items(), key=lambda kv: -kv[1]))

    def _texts(self, corpora: list[str], skip: set[int]) -> Iterator[str]:
        max_chars = self.options.max_chars
        for n, case in numbered_cases(corpora, max_chars):
            if n not in skip and not is_too_long(case, max_chars):
                yield case.text


def tally_keys(case: Case) -> list[str]:
    """The keys a case counts under in the report's rate table: its tags and its corpus."""
    return [f"{k}={v}" for k, v in case.tags.items() if isinstance(v, (str, int))] + [f"corpus={case.corpus}"]


class JudgedCases:
    """The records of the corpora's cases, judged in case order, skipping the positions ``skip``
    names; ``total`` counts every case seen. The backends are asked ``BATCH`` texts at a time
    (``encode_many``): a backend in another process (``cmd:``, llama.cpp on a file of yours)
    then has the next requests while it answers, instead of a round trip per case."""

    BATCH = 64

    def __init__(self, run: ModelRun, corpora: list[str], skip: Callable[[int], bool]):
        self.run, self.corpora, self.skip = run, corpora, skip
        self.total = 0

    def __iter__(self) -> Iterator[CaseRecord]:
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[CaseRecord]]:
        """The records a batch at a time, in case order (never empty)."""
        max_chars = self.run.options.max_chars
        batch: list[tuple[int, Case]] = []
        n = -1
        try:
            for n, case in numbered_cases(self.corpora, max_chars):
                if self.skip(n):
                    continue
                if is_too_long(case, max_chars):
                    self.total = n + 1
                    yield self.run.judge_many(batch) + [self.run.too_long(case, n)]
                    batch = []
                    continue
                batch.append((n, case))
                if len(batch) >= self.BATCH:
                    self.total = n + 1
                    yield self.run.judge_many(batch)
                    batch = []
        except TokparityError:  # a corpus line that cannot be read: the cases before it still count
            if batch:
                yield self.run.judge_many(batch)
            raise
        self.total = n + 1
        if batch:
            yield self.run.judge_many(batch)


def numbered_cases(corpora: list[str], max_chars: int | None) -> Iterator[tuple[int, Case]]:
    """(position, case) over every corpus in order: a case's position is its key in the journal."""
    n = -1
    for corpus in corpora:
        for case in load_corpus(corpus, max_chars):
            n += 1
            yield n, case


def is_too_long(case: Case, max_chars: int | None) -> bool:
    return bool(case.unread_bytes or (max_chars and len(case.text) > max_chars))


def too_long_message(record: CaseRecord, options: CompareOptions) -> str:
    if record.unread:
        return (f"{record.model}: skipping {record.corpus}/{record.case_id}: a line of {record.too_long:,} bytes, "
                f"longer than a text of --max-chars {options.max_chars:,} can be; not read (raise --max-chars, or "
                "0 for no cap, to run this case)")
    return (f"{record.model}: skipping {record.corpus}/{record.case_id}: {record.too_long:,} characters, "
            f"more than --max-chars {options.max_chars:,} (raise it to run this case)")


def progress_to_stderr(message: str) -> None:
    print(single_line(message), file=sys.stderr, flush=True)  # (case ids and engine errors: one line each)
