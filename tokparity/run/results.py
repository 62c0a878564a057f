"""What a run produces, as plain data: the renderers in ``tokparity.report`` only read this.

``RunSummary`` one model × backend against its oracle (the rows of summary.json's ``runs``)
``Results``   everything of one run, with ``to_json`` giving summary.json's keys; its mismatches
              are ``tokparity.records.Mismatch`` rows (Judgement, Decision, Diagnosis)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from tokparity.records import Mismatch, RootCause

# json.dumps(value, ensure_ascii=False) without building an encoder per call or tracking
# containers for cycles (records have none): the same text, a third faster. The journal writes
# a line per case with it, mismatches.csv its id and piece lists.
json_text = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode

# mismatches.csv columns, in the order docs/contracts.md promises (evidence onwards were added later;
# text_json, the exact text, comes last so that the earlier columns keep their places).
TOO_LONG_LISTED = 20  # summary.json names this many of the skipped long cases
CSV_COLUMNS = ("model", "corpus", "case_id", "tags", "oracle", "backend", "class", "stage", "first_diff", "text",
               "oracle_ids", "backend_ids", "oracle_pieces", "backend_pieces", "evidence", "known", "cause",
               "cause_evidence", "text_json")


@dataclass
class RunSummary:
    model: str
    oracle: str
    backend: str
    cases: int = 0
    mismatches: int = 0
    unexplained: int = 0
    classes: dict[str, int] = field(default_factory=dict)
    skipped: int = 0  # cases the backend cannot answer (golden without that text)
    ties: int = 0  # mismatches that are ties of equal score (model.viterbi-tie): reported, not failing
    causes: dict[str, int] = field(default_factory=dict)  # root cause -> mismatches it reproduces
    root_cause: RootCause | None = None  # the run's verdict (tokparity.diagnose.verdict)
    oracle_why: str = ""  # why that oracle judges this model (tokparity.run.oracle)


@dataclass
class Results:
    tokparity: str
    backends: dict[str, dict] = field(default_factory=dict)  # name -> {"version": ...}
    runs: list[RunSummary] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    # per tag value: {"script=Cyrl": {"cases": n, "mismatches": m}}, for the report's rate table
    tag_rates: dict[str, dict[str, int]] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    known: dict = field(default_factory=dict)  # {"used": {id: hits}, "stale": [{id, source, reason}]}
    seconds: float = 0.0
    interrupted: bool = False  # stopped by Ctrl-C: the counts are those of the cases done
    # per model: {"load": seconds to load the vocabulary and start the backends, "close": to stop
    #             them, "backends": {name: seconds inside that backend's encode}}
    timing: dict[str, dict] = field(default_factory=dict)
    timing_jobs: int = 1

    def to_json(self) -> dict:
        return {
            "tokparity": self.tokparity,
            "backends": self.backends,
            "runs": [asdict(r) for r in self.runs],
            "options": self.options,
            "tag_rates": self.tag_rates,
            "known": self.known,
            "seconds": round(self.seconds, 3),
            "timing": {"jobs": self.timing_jobs, "models": {
                model: {"load": round(t["load"], 3), "close": round(t.get("close", 0.0), 3),
                        "diagnose": round(t.get("diagnose", 0.0), 3),
                        "backends": {n: round(v, 3) for n, v in t["backends"].items()}}
                for model, t in self.timing.items()}},
            "complete": not self.interrupted,
        }

    @property
    def unexplained(self) -> int:
        return sum(r.unexplained for r in self.runs)

    def absorb(self, part: Results) -> None:
        """The results of models counted elsewhere (a worker, a Ray task), after this run's own:
        what one process counting them after its own would have built. Options: a list is
        extended, a dict joined (the first value of a key stays), the too-long note summed."""
        for name, info in part.backends.items():
            self.backends.setdefault(name, info)
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
        for key, rate in part.tag_rates.items():
            into = self.tag_rates.setdefault(key, {"cases": 0, "mismatches": 0})
            into["cases"] += rate["cases"]
            into["mismatches"] += rate["mismatches"]
        self.timing.update(part.timing)
        self.interrupted = self.interrupted or part.interrupted
