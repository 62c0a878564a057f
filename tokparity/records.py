"""The records a case passes through, each made once by one step (tokparity.run.pipeline calls
them in turn) and never changed after:

    judge     (tokparity.run.judge.ModelRun.judge)  ──► CaseRecord: a Verdict per compared backend,
                                                      a Judgement per mismatch
    diagnose  (tokparity.diagnose.model)           ──► a Diagnosis per Judgement, a RootCause per backend
    decide    (tokparity.run.decide)               ──► a Decision per Judgement
    count     (tokparity.run.tally.Tally)          ──► RunSummary rows (tokparity.run.results)
    render    (tokparity.report)                   ──► a Mismatch per row: (Judgement, Diagnosis, Decision)

``Diagnosed`` holds what the diagnosis named of one model; the pipeline's ``settle`` reads it.

Plain data only: no step's logic lives here, so every layer above ``diff`` may read them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

TIE = "model.viterbi-tie"  # two optima of the same model: reported apart, not a failure
BREAKS_LISTED = 5  # agreements a run-level verdict would change, listed by name (RootCause.breaks)


class FrozenDict(dict):
    """A record's mapping: a dict that refuses every change once made. It is still a dict, so
    ``json`` writes it as one and ``==`` compares it with one."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a record's mapping cannot be changed; make a new record")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore

    def __reduce__(self) -> tuple:  # (copied to workers and Ray actors: no item is set after the object is made)
        return FrozenDict, (dict(self),)


def _set(record: object, name: str, value: object) -> None:
    object.__setattr__(record, name, value)  # (a frozen record made deep in its own __post_init__)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A compared backend's verdict on one case: it ``agree``s with the oracle, it is ``skipped``
    (it has no answer for this text, like golden ids of other texts), or it is a ``mismatch`` of
    class ``cls``, explained by the known divergence ``known`` ("" when none does).

    ``not-applicable``: the case asks what the backend declares it cannot do (an engine with no
    switch for parse_special, on a text that holds special-token text): counted and listed apart.

    A journal writes ``"agree"``, ``"skipped"``, ``"not-applicable"`` or ``[cls, known]``."""

    kind: str  # agree | skipped | not-applicable | mismatch
    cls: str = ""
    known: str = ""

    @classmethod
    def differs(cls, symptom: str, known: str = "") -> Verdict:
        return cls("mismatch", symptom, known)

    @property
    def mismatch(self) -> bool:
        return self.kind == "mismatch"

    def to_json(self) -> str | list[str]:
        return [self.cls, self.known] if self.mismatch else self.kind

    @classmethod
    def from_json(cls, x: str | list[str]) -> Verdict:
        """The verdict a journal holds (checked already)."""
        if isinstance(x, str):
            return {"agree": AGREE, "skipped": SKIPPED, "not-applicable": NOT_APPLICABLE}[x]
        return cls.differs(x[0], x[1])


AGREE, SKIPPED, NOT_APPLICABLE = Verdict("agree"), Verdict("skipped"), Verdict("not-applicable")


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the judge saw of one backend's answer that differs from the oracle's on one case: both
    answers, the first stage and token where they part, and the symptom class the rules of
    ``tokparity.diff.classify`` gave it."""

    model: str
    corpus: str
    case_id: str
    tags: Mapping[str, Any]  # (each of these is kept as a FrozenDict or a tuple: see __post_init__)
    oracle: str
    backend: str
    cls: str  # the symptom class the rules gave (the decision may name another, to fit the cause)
    evidence: str
    stage: str  # the first stage that disagrees: normalize | pre_tokenize | model | decode | unknown
    first_diff: int  # index of the first differing token (in the oracle's ids)
    text: str
    oracle_ids: Sequence[int]
    backend_ids: Sequence[int]
    oracle_pieces: Sequence[str]
    backend_pieces: Sequence[str]
    partition: Sequence[Sequence[str]] = ()  # which backends agree with which
    # What was asked (tokparity.run.ops): "encode" (the text's ids, compared above), "decode",
    # "stream" or "pieces" (the ids above, both sides the oracle's, turned back into text). The
    # outputs are what each side answered for such an op: [text] (decode), the deltas (stream:
    # the oracle's side holds the one text they must add up to), each id's bytes in hex (pieces).
    op: str = "encode"
    oracle_output: Sequence[str] = ()
    backend_output: Sequence[str] = ()
    shape: str = ""  # what the backend did, read off the two answers (tokparity.diff.shape): "" for none

    def __post_init__(self) -> None:
        # (the judge hands lists and dicts: the record keeps its own copies, which nothing can change)
        _set(self, "tags", FrozenDict(self.tags))
        for name in ("oracle_ids", "backend_ids", "oracle_pieces", "backend_pieces", "oracle_output", "backend_output"):
            _set(self, name, tuple(getattr(self, name)))
        _set(self, "partition", tuple(tuple(group) for group in self.partition))


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What reproducing one Judgement showed (tokparity.diagnose.model): the smallest set of
    variants of the reference that gives the backend's ids, or under which it fails where the
    backend crashed (``cause``: their catalogue names, "+"-joined; "" when none does), or the part
    of the run's root cause that gives them too (one engine, one cause; ``evidence`` then says so)."""

    cause: str
    evidence: str
    variants: tuple[str, ...] = ()
    alternatives: tuple[tuple[str, ...], ...] = ()  # other sets that reproduce them too (see diagnose.cause)
    decides_class: bool = False  # a proof (or a tie): the class must be a symptom of the cause
    stage: str = "unknown"  # where the search's cause puts the divergence (for a judgement without stages)
    # The parts of the run's root cause (its variants, smallest sets first) that give these ids too,
    # where the case's own cause is not one already: tokparity.run.decide chooses among them.
    verdict_parts: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class RootCause:
    """One (model, backend, op)'s run-level verdict: the set of variants that reproduces the most of
    its mismatches and keeps its agreements (tokparity.diagnose.verdict for encode,
    tokparity.diagnose.decoding for decode, stream and pieces). summary.json's ``root_cause``:
    these keys, in this order."""

    cause: str
    variants: tuple[str, ...]
    explains: int
    mismatches: int
    keeps: int
    agreements: int
    proven: bool
    # Mismatches left out of ``mismatches``: on them the reference gives the backend's own ids, so
    # the oracle is the one that departs (a drift whose new release fixed the old) and no set of
    # variants can be said to reproduce them.
    oracle_departs: int = 0
    # The first agreements the verdict would change (BREAKS_LISTED at most), as a reader finds them:
    # a case's corpus/id, or the text itself where the case is not at hand.
    breaks: tuple[str, ...] = ()
    # The verdict's own words for each variant whose value it read off the backend's answers (a text
    # added to contents, a rule of the tools' JSON), in the order of ``variants``; "" where the
    # catalogue's words serve. Empty where no variant has such a value.
    said: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, d: dict) -> RootCause:
        """summary.json's ``root_cause`` (one of tokparity 0.1 has no ``proven``: the rule decides)."""
        explains, mismatches, keeps, agreements = d["explains"], d["mismatches"], d["keeps"], d["agreements"]
        proven = d["proven"] if "proven" in d else explains >= 0.9 * mismatches and keeps >= 0.99 * agreements
        breaks, said = d.get("breaks"), d.get("said")
        return cls(d["cause"], tuple(d["variants"]), explains, mismatches, keeps, agreements, bool(proven),
                   int(d.get("oracle_departs", 0)),
                   tuple(str(b) for b in breaks) if isinstance(breaks, list) else (),
                   tuple(str(w) for w in said) if isinstance(said, list) else ())


@dataclass(frozen=True)
class Diagnosed:
    """What the diagnosis of one model named: a Diagnosis per Judgement (None: none was made: a
    crash no failing variant reproduces, a timeout, no reference), in the order of the judgements,
    and each backend's verdict on each op."""

    diagnoses: tuple[Diagnosis | None, ...] = ()
    root_causes: Mapping[tuple[str, str], RootCause] = field(default_factory=FrozenDict)  # by (backend, op)
    keys: tuple[tuple[str, str], ...] = ()  # (backend, case_id) of each judgement: whose they are
    seconds: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "root_causes", FrozenDict(self.root_causes))
        _set(self, "diagnoses", tuple(self.diagnoses))
        _set(self, "keys", tuple(self.keys))


@dataclass(frozen=True, slots=True)
class Decision:
    """What the run says of one Judgement once it is diagnosed (tokparity.run.decide): its class, the
    stage it is put in, its cause and how that was shown, the known divergence that explains it."""

    cls: str
    stage: str
    known: str = ""
    cause: str = ""
    cause_evidence: str = ""
    variants: tuple[str, ...] = ()
    alternatives: tuple[tuple[str, ...], ...] = ()

    @property
    def tie(self) -> bool:
        """Two optima of the same model: reported apart, not a failure."""
        return self.cause == TIE and not self.known

    @property
    def unexplained(self) -> bool:
        return not self.known and not self.tie

    @classmethod
    def as_judged(cls, judgement: Judgement, known: str = "") -> Decision:
        """What the judge alone says of a mismatch: its symptom, and the known divergence it
        matches. A journal line holds it, and the report of a run stopped before any diagnosis."""
        return cls(judgement.cls, judgement.stage, known)


def gives_too(library: str, op: str) -> str:
    """What a library of an engine's own file is said to do when it gave the engine's very output."""
    what = "these ids" if op == "encode" else "this prompt" if op == "chat" else "this answer"
    return f"{library} give{'' if ' and ' in library else 's'} {what} too, on the same file"


# The flat fields of a mismatch, in the order of the journal's objects and of Mismatch.row().
ROW_FIELDS = ("model", "corpus", "case_id", "tags", "oracle", "backend", "cls", "evidence", "stage", "first_diff",
              "text", "oracle_ids", "backend_ids", "oracle_pieces", "backend_pieces", "known", "partition", "cause",
              "cause_evidence", "variants", "alternatives", "op", "oracle_output", "backend_output", "shape")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One mismatch as the reports show it: its Judgement and its Decision (and its Diagnosis,
    where one was made). Its flat fields read the decision where one decided them (class, stage,
    cause, known) and the judgement otherwise."""

    judgement: Judgement
    decision: Decision
    diagnosis: Diagnosis | None = None

    # the judgement's fields
    model = property(lambda self: self.judgement.model)
    corpus = property(lambda self: self.judgement.corpus)
    case_id = property(lambda self: self.judgement.case_id)
    tags = property(lambda self: self.judgement.tags)
    oracle = property(lambda self: self.judgement.oracle)
    backend = property(lambda self: self.judgement.backend)
    evidence = property(lambda self: self.judgement.evidence)
    first_diff = property(lambda self: self.judgement.first_diff)
    text = property(lambda self: self.judgement.text)
    oracle_ids = property(lambda self: self.judgement.oracle_ids)
    backend_ids = property(lambda self: self.judgement.backend_ids)
    oracle_pieces = property(lambda self: self.judgement.oracle_pieces)
    backend_pieces = property(lambda self: self.judgement.backend_pieces)
    partition = property(lambda self: self.judgement.partition)
    op = property(lambda self: self.judgement.op)
    oracle_output = property(lambda self: self.judgement.oracle_output)
    backend_output = property(lambda self: self.judgement.backend_output)
    shape = property(lambda self: self.judgement.shape)
    # the decision's
    cls = property(lambda self: self.decision.cls)
    stage = property(lambda self: self.decision.stage)
    known = property(lambda self: self.decision.known)
    cause = property(lambda self: self.decision.cause)
    cause_evidence = property(lambda self: self.decision.cause_evidence)
    variants = property(lambda self: self.decision.variants)
    alternatives = property(lambda self: self.decision.alternatives)

    @property
    def given_too_by(self) -> tuple[str, ...]:
        """The libraries of the engine's own files that gave its very output (the judge's tag
        ``witness``). Where one did, that library's reviewed differences are the engine's too."""
        return tuple(filter(None, str(self.tags.get("witness", "")).split(",")))

    @property
    def given_too(self) -> str:
        """'hf gives these ids too, on the same file', where the known divergence of the row is that
        library's (its evidence opens so); '' where it is none or the engine's own entry."""
        said = (gives_too(library, self.op) for library in self.given_too_by)
        return next((s for s in said if self.known and self.cause_evidence.startswith(s)), "")

    def row(self) -> dict:
        """The flat fields, in ROW_FIELDS' order, with ``class`` for ``cls`` (a CSV row, a journal's object)."""
        d = self.fields()
        d["class"] = d.pop("cls")
        return d

    def fields(self) -> dict:
        """The flat fields, in ROW_FIELDS' order (lists and dicts where the records hold tuples and
        frozen mappings)."""
        return _fields(self.judgement, self.decision)

    @staticmethod
    def of(model: str, corpus: str, case_id: str, tags: Mapping[str, Any], oracle: str, backend: str, cls: str = "",
           evidence: str = "", stage: str = "unknown", first_diff: int = 0, text: str = "",
           oracle_ids: list[int] | None = None, backend_ids: list[int] | None = None,
           oracle_pieces: list[str] | None = None, backend_pieces: list[str] | None = None, known: str = "",
           partition: list[list[str]] | None = None, cause: str = "", cause_evidence: str = "",
           variants: list[str] | tuple[str, ...] = (), alternatives: list | tuple = (), op: str = "encode",
           oracle_output: list[str] | None = None, backend_output: list[str] | None = None,
           shape: str = "") -> Mismatch:
        """A mismatch from its flat fields (as a journal, a findings file or mismatches.csv holds
        them): what was judged, and what was decided of it then."""
        judgement = Judgement(model, corpus, case_id, tags, oracle, backend, cls, evidence, stage, first_diff, text,
                              oracle_ids or [], backend_ids or [], oracle_pieces or [], backend_pieces or [],
                              partition or [], op, oracle_output or [], backend_output or [], shape)
        decision = Decision(cls, stage, known, cause, cause_evidence, tuple(variants),
                            tuple(tuple(keys) for keys in alternatives))
        return Mismatch(judgement, decision)

    @staticmethod
    def from_fields(d: dict) -> Mismatch:
        """``of`` from a dict of ROW_FIELDS (as ``fields`` gives them)."""
        return Mismatch.of(**d)


def _fields(j: Judgement, c: Decision) -> dict:
    return {"model": j.model, "corpus": j.corpus, "case_id": j.case_id, "tags": dict(j.tags), "oracle": j.oracle,
            "backend": j.backend, "cls": c.cls, "evidence": j.evidence, "stage": c.stage, "first_diff": j.first_diff,
            "text": j.text, "oracle_ids": list(j.oracle_ids), "backend_ids": list(j.backend_ids),
            "oracle_pieces": list(j.oracle_pieces), "backend_pieces": list(j.backend_pieces), "known": c.known,
            "partition": [list(group) for group in j.partition], "cause": c.cause, "cause_evidence": c.cause_evidence,
            "variants": list(c.variants), "alternatives": [list(keys) for keys in c.alternatives], "op": j.op,
            "oracle_output": list(j.oracle_output), "backend_output": list(j.backend_output), "shape": j.shape}


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """One case of one model, judged: what the tally needs to count it, and no more.

    ``verdicts`` maps each compared backend to its ``Verdict`` (a mismatch's names the known
    divergence it matched as judged); ``judgements`` holds a Judgement per backend that differs
    (fuzz keeps only the verdicts of most cases). ``decisions``: fuzz decides each judgement as it
    judges it, and keeps its decision here; a compare decides once the model is diagnosed
    (tokparity.run.pipeline), and this stays empty. ``too_long`` is the
    text's length when the case was not run for ``--max-chars``. ``op``: what the backends were
    asked (tokparity.run.ops); a case run for several ops has a record for each."""

    model: str
    n: int  # the case's position in the model's stream of cases (corpora in order)
    case_id: str
    corpus: str
    oracle: str = ""
    tally: tuple[str, ...] = ()  # the tag keys of the report's rate table
    verdicts: Mapping[str, Verdict] = field(default_factory=FrozenDict)  # (kept as FrozenDicts: __post_init__)
    judgements: tuple[Judgement, ...] = ()
    decisions: tuple[Decision, ...] = ()
    too_long: int = 0
    unread: bool = False  # too_long counts the bytes of a corpus line not read (too long for any text under the cap)
    causes: Mapping[str, str] = field(default_factory=FrozenDict)  # fuzz: the cause each mismatch was counted under
    seconds: Mapping[str, float] = field(default_factory=FrozenDict)  # each backend's own time (not journaled)
    line: int = 0  # where a journal holds it (read back for a resume; not journaled)
    op: str = "encode"

    def __post_init__(self) -> None:
        for name in ("verdicts", "causes", "seconds"):
            value = getattr(self, name)
            if type(value) is not FrozenDict:
                _set(self, name, FrozenDict(value))
        for name in ("tally", "judgements", "decisions"):
            value = getattr(self, name)
            if type(value) is not tuple:
                _set(self, name, tuple(value))
        assert not self.decisions or len(self.decisions) == len(self.judgements), "a decision per judgement"

    def journaled(self) -> tuple[Mismatch, ...]:
        """Each judgement as a journal line holds it: with its decision where fuzz made one, and
        otherwise with what the judge alone says of it (``Decision.as_judged``)."""
        if self.decisions:
            return tuple(Mismatch(j, d) for j, d in zip(self.judgements, self.decisions))
        return tuple(Mismatch(j, Decision.as_judged(j, self.verdicts[j.backend].known)) for j in self.judgements)
