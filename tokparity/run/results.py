"""What a run produces, as plain data: the renderers in ``tokparity.report`` only read this.

``RunSummary`` one model × backend against its oracle (the rows of summary.json's ``runs``)
``ResultsSoFar`` what a run has gathered as it goes; ``final`` makes its ``Results``
``Results``   everything of one run, made once, with ``to_json`` giving summary.json's keys; its
              mismatches are ``tokparity.records.Mismatch`` rows (Judgement, Decision, Diagnosis)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tokparity.checks import ModelCheck
from tokparity.records import FrozenDict, Mismatch, RootCause

# json.dumps(value, ensure_ascii=False) without building an encoder per call or tracking
# containers for cycles (records have none): the same text, a third faster. The journal writes
# a line per case with it, mismatches.csv its id and piece lists.
json_text = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode

# mismatches.csv columns, in the order docs/contracts.md promises (evidence onwards were added later;
# text_json, the exact text, and then the op's columns come last so that the earlier columns keep their places).
TOO_LONG_LISTED = 20  # summary.json names this many of the skipped long cases
CSV_COLUMNS = ("model", "corpus", "case_id", "tags", "oracle", "backend", "class", "stage", "first_diff", "text",
               "oracle_ids", "backend_ids", "oracle_pieces", "backend_pieces", "evidence", "known", "cause",
               "cause_evidence", "text_json", "op", "oracle_output", "backend_output", "shape")


@dataclass(frozen=True)
class RunSummary:
    """What one backend's run on one model and op added up to, made once by the tally when the
    run is counted (``Tally.run_summaries``) or read back from summary.json."""

    model: str
    oracle: str
    backend: str
    cases: int = 0
    mismatches: int = 0
    unexplained: int = 0
    classes: Mapping[str, int] = field(default_factory=FrozenDict)
    skipped: int = 0  # cases the backend cannot answer (golden without that text)
    # cases that ask what the backend declares it cannot do (tokparity.backends.base.Backend.unsupported),
    # and the first of them by id
    not_applicable: int = 0
    not_applicable_cases: tuple[str, ...] = ()
    ties: int = 0  # mismatches that are ties of equal score (model.viterbi-tie): reported, not failing
    causes: Mapping[str, int] = field(default_factory=FrozenDict)  # root cause -> mismatches it reproduces, most first
    root_cause: RootCause | None = None  # the run's verdict (tokparity.diagnose.verdict)
    oracle_why: str = ""  # why that oracle judges this model (tokparity.run.oracle)
    op: str = "encode"  # what the backend was asked (tokparity.run.ops)

    def __post_init__(self) -> None:
        object.__setattr__(self, "classes", FrozenDict(self.classes))
        object.__setattr__(self, "causes", FrozenDict(self.causes))
        object.__setattr__(self, "not_applicable_cases", tuple(self.not_applicable_cases))

    @property
    def label(self) -> str:
        """The run as reports name it: its backend, and the op unless it is encode."""
        return self.backend if self.op == "encode" else f"{self.backend} · {self.op}"


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _ints(value: object) -> list[int]:
    return [int(v) for v in value] if isinstance(value, list) and all(isinstance(v, int) for v in value) else []


def _texts(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


@dataclass(frozen=True)
class FoundCause:
    """One root cause a fuzz run found, shrunk to a text (tokparity.fuzz.findings): summary.json's
    ``options.fuzz.findings``, these keys in this order (``class`` for ``cls``)."""

    id: str
    backend: str
    oracle: str
    cause: str  # "" when no variant of the reference reproduced it
    key: str  # what the run counted it under: a cause, "unexplained:" + class, "known:" + entry id
    label: str  # the key as a reader names it ("no cause reproduced (merge-order)")
    cls: str
    text: str  # the shrunk text
    count: int  # cases of the run it accounts for
    found_after: float  # seconds into the run (to the millisecond)
    shrink_seconds: float
    known: str
    original: str  # the text it was shrunk from
    oracle_ids: Sequence[int] = ()
    backend_ids: Sequence[int] = ()
    oracle_pieces: Sequence[str] = ()
    backend_pieces: Sequence[str] = ()

    def __post_init__(self) -> None:
        for name in ("oracle_ids", "backend_ids", "oracle_pieces", "backend_pieces"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def has_ids(self) -> bool:
        return bool(self.oracle_ids or self.backend_ids)

    def to_json(self) -> dict:
        return {("class" if f.name == "cls" else f.name): getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, d: dict) -> FoundCause:
        """A finding as a summary.json holds it (read back by ``explain``: any field may be off)."""
        return cls(_text(d.get("id", "")), _text(d.get("backend", "")), _text(d.get("oracle", "")),
                   _text(d.get("cause", "")), _text(d.get("key", "")), _text(d.get("label", "")),
                   _text(d.get("class", "")), _text(d.get("text", "")), _int(d.get("count")),
                   _float(d.get("found_after")), _float(d.get("shrink_seconds")), _text(d.get("known", "")),
                   _text(d.get("original", "")), _ints(d.get("oracle_ids")), _ints(d.get("backend_ids")),
                   _texts(d.get("oracle_pieces")), _texts(d.get("backend_pieces")))


@dataclass(frozen=True)
class SeamCovered:
    """A Unicode or regex-engine seam a fuzz run's texts crossed (tokparity.fuzz.seams): how many
    of its texts ran, of how many; its code points, of how many."""

    seam: str  # e.g. \s:ecmascript
    about: str  # what differs there
    cases: int
    of: int = 0
    code_points: int = 0
    of_code_points: int = 0
    complete: bool = False

    def to_json(self) -> dict:
        return {"seam": self.seam, "about": self.about, "cases": self.cases, "of": self.of,
                "code_points": self.code_points, "of_code_points": self.of_code_points, "complete": self.complete}

    @classmethod
    def from_json(cls, d: dict) -> SeamCovered:
        return cls(_text(d.get("seam", "?")), _text(d.get("about") or d.get("description") or ""), _int(d.get("cases")),
                   _int(d.get("of")), _int(d.get("code_points")), _int(d.get("of_code_points")),
                   bool(d.get("complete", False)))


@dataclass(frozen=True)
class FuzzSummary:
    """What a fuzz run adds to its results: summary.json's ``options.fuzz``."""

    seed: int
    seconds: float  # the budget
    cases: int
    by_source: Mapping[str, int]  # cases per generator (and "hypothesis")
    mismatching: Mapping[str, int]  # "backend / class" -> cases
    findings: Sequence[FoundCause]
    seams: Sequence[SeamCovered]

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_source", FrozenDict(self.by_source))
        object.__setattr__(self, "mismatching", FrozenDict(self.mismatching))
        object.__setattr__(self, "findings", tuple(self.findings))
        object.__setattr__(self, "seams", tuple(self.seams))

    def to_json(self) -> dict:
        return {"seed": self.seed, "seconds": self.seconds, "cases": self.cases, "by_source": self.by_source,
                "mismatching": self.mismatching, "findings": [f.to_json() for f in self.findings],
                "seams": [s.to_json() for s in self.seams]}

    @classmethod
    def from_json(cls, d: dict) -> FuzzSummary:
        """``options.fuzz`` of a summary.json read back (any field may be off: each is checked)."""
        def counts(value: object) -> dict[str, int]:
            return {str(k): v for k, v in value.items() if isinstance(v, int)} if isinstance(value, dict) else {}
        findings, seams = d.get("findings"), d.get("seams")
        return cls(_int(d.get("seed")), _float(d.get("seconds")), _int(d.get("cases")), counts(d.get("by_source")),
                   counts(d.get("mismatching")),
                   [FoundCause.from_json(f) for f in findings if isinstance(f, dict)] if isinstance(findings, list) else [],
                   [SeamCovered.from_json(x) for x in seams if isinstance(x, dict)] if isinstance(seams, list) else [])


def frozen(value: Any) -> Any:
    """``value`` made deeply immutable: each dict a FrozenDict, each list a tuple. ``json`` writes
    the same text for it."""
    if isinstance(value, dict):
        return FrozenDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


@dataclass(frozen=True)
class Results:
    """Everything one run produced, made once when the run ends (``ResultsSoFar.final``) or read
    back from its folder. Deeply immutable: the renderers only read it."""

    tokparity: str
    backends: Mapping[str, Mapping] = field(default_factory=FrozenDict)  # name -> {"version": ...}
    runs: Sequence[RunSummary] = ()  # (each of these is kept as a tuple or a FrozenDict: see __post_init__)
    mismatches: Sequence[Mismatch] = ()
    # per model, backend and tag value: {"llama-bpe": {"mine": {"script=Cyrl": {"cases": n, "mismatches": m}}}},
    # for the report's rate table
    tag_rates: Mapping[str, Mapping[str, Mapping[str, Mapping[str, int]]]] = field(default_factory=FrozenDict)
    options: Mapping[str, Any] = field(default_factory=FrozenDict)
    known: Mapping[str, Any] = field(default_factory=FrozenDict)  # {"used": {id: hits}, "stale": [{id, source, reason}]}
    seconds: float = 0.0
    interrupted: bool = False  # stopped by Ctrl-C: the counts are those of the cases done
    # per model: {"load": seconds to load the vocabulary and start the backends, "close": to stop
    #             them, "backends": {name: seconds inside that backend's encode}}
    timing: Mapping[str, Mapping] = field(default_factory=FrozenDict)
    timing_jobs: int = 1
    fuzz: FuzzSummary | None = None  # a fuzz run's seed, cases, findings and seams
    checks: Sequence[ModelCheck] = ()  # compare --check: what each model's files hold
    # Why the run compared nothing it was asked to, as words after "nothing compared" (": mine judged
    # no case …"). Its reports' title says so. Empty when it compared something.
    nothing_compared: str = ""

    def __post_init__(self) -> None:
        for name in ("backends", "tag_rates", "options", "known", "timing"):
            object.__setattr__(self, name, frozen(getattr(self, name)))
        for name in ("runs", "mismatches", "checks"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def to_json(self) -> dict:
        return {
            "tokparity": self.tokparity,
            "backends": self.backends,
            "runs": [asdict(r) for r in self.runs],
            "options": self.options if self.fuzz is None else {**self.options, "fuzz": self.fuzz.to_json()},
            "tag_rates": self.tag_rates,
            "known": self.known,
            "seconds": round(self.seconds, 3),
            "timing": {"jobs": self.timing_jobs, "models": {
                model: {"load": round(t["load"], 3), "close": round(t.get("close", 0.0), 3),
                        "diagnose": round(t.get("diagnose", 0.0), 3),
                        "backends": {n: round(v, 3) for n, v in t["backends"].items()}}
                for model, t in self.timing.items()}},
            "complete": not self.interrupted,
        } | ({"checks": [c.to_json() for c in self.checks]} if self.checks else {}) \
            | ({"nothing_compared": self.nothing_compared} if self.nothing_compared else {})

    @property
    def unexplained(self) -> int:
        return sum(r.unexplained for r in self.runs)

    @property
    def files_broken(self) -> bool:
        """Whether a model's files break a property that ``--check`` checked."""
        return any(c.broken for c in self.checks)


# summary.json's options key that lists the models whose files or backends could not be opened, each
# with what went wrong. A run of several models goes on with the others and exits 2 at its end.
NOT_OPENED = "not_opened"


def join_backends(into: dict[str, dict], more: Mapping[str, Mapping]) -> None:
    """The backends another model's run listed, joined to ``into``: a name's first entry stays, and
    the models on which it was only an engine's witness (``witness_of``) are joined."""
    for name, info in more.items():
        if name not in into:
            into[name] = dict(info)
        elif info.get("witness_of"):
            had = into[name]
            into[name] = {**had, "witness_of": {**had.get("witness_of", {}), **info["witness_of"]}}


@dataclass
class ResultsSoFar:
    """What a run has gathered so far: the steps add to it as the cases go (the judge its backends
    and notes, the tally its counts and rows). ``final`` makes the run's one ``Results``."""

    backends: dict[str, dict] = field(default_factory=dict)
    runs: list[RunSummary] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    tag_rates: dict[str, dict[str, dict[str, dict[str, int]]]] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    timing: dict[str, dict] = field(default_factory=dict)
    timing_jobs: int = 1
    interrupted: bool = False

    def model_timing(self, model: str) -> dict:
        """``model``'s entry of ``timing``, made on first use: the judge and the tally add to the same one."""
        return self.timing.setdefault(model, {"load": 0.0, "backends": {}})

    def final(self, tokparity: str, seconds: float = 0.0, known: Mapping[str, Any] | None = None,
              fuzz: FuzzSummary | None = None, checks: Sequence[ModelCheck] = ()) -> Results:
        """The run's results, made once at its end."""
        return Results(tokparity, self.backends, self.runs, self.mismatches, self.tag_rates, self.options,
                       known or {}, seconds, self.interrupted, self.timing, self.timing_jobs, fuzz, checks)

    def absorb(self, part: ResultsSoFar) -> None:
        """The results of models counted elsewhere (a worker, a Ray task), after this run's own:
        what one process counting them after its own would have built. Options: a list is
        extended, a dict joined (the first value of a key stays), the too-long note summed."""
        join_backends(self.backends, part.backends)
        for key, value in part.options.items():
            if key == "too_long" and key in self.options:
                note = self.options[key]
                note["cases"] += value["cases"]
                note["first"] = (note["first"] + value["first"])[:TOO_LONG_LISTED]
            elif isinstance(value, list):
                self.options.setdefault(key, []).extend(value)
            elif isinstance(value, dict):
                joined = self.options.setdefault(key, {})
                for k, v in value.items():
                    joined.setdefault(k, v)
            else:
                self.options.setdefault(key, value)
        self.runs.extend(part.runs)
        self.mismatches.extend(part.mismatches)
        for model, backends in part.tag_rates.items():
            for backend, rates in backends.items():
                ours = self.tag_rates.setdefault(model, {}).setdefault(backend, {})
                for key, rate in rates.items():
                    into = ours.setdefault(key, {"cases": 0, "mismatches": 0})
                    into["cases"] += rate["cases"]
                    into["mismatches"] += rate["mismatches"]
        self.timing.update(part.timing)
        self.interrupted = self.interrupted or part.interrupted
