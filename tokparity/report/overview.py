"""What every report says about a run as a whole, as data: the counts of its header, the rows of
its model × backend table, the mismatches it lists first, the tags worth a rate, a fuzz run's
findings by cause.

build.py turns these into the report's nodes, which report.html (html.py), summary.md
(markdown.py) and the terminal (plain.py) only lay out, so they cannot disagree with each other
nor with summary.json: the header counts are sums over summary.json's ``runs``, never the length
of the list of mismatches a run happened to keep whole (a fuzz run counts every mismatch but
keeps only its shrunk findings):

    >>> from tokparity.run.results import Results, RunSummary
    >>> results = Results("0.1.0", runs=[
    ...     RunSummary("llama-spm", "llama.cpp", "mine", cases=6770, mismatches=1920, unexplained=1918),
    ...     RunSummary("llama-spm", "llama.cpp", "hf-gguf", cases=6770, mismatches=15, unexplained=0)])
    >>> t = totals(results)                 # no mismatch kept whole: t.listed is 0
    >>> t.mismatches, t.unexplained, t.known, t.listed
    (1935, 1918, 17, 0)
    >>> count_line(t)
    '1,935 mismatches in 13,540 judgements (a case once per backend and op): 1,918 to review, 17 known divergences; 0 of them listed in mismatches.csv (a fuzz run lists each finding once, shrunk)'
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from tokparity.checks import BROKEN
from tokparity.records import Mismatch
from tokparity.report.pieces import piece_style
from tokparity.report.writeup import TIE, plural
from tokparity.run.results import FoundCause, Results, RunSummary, SeamCovered
from tokparity.textview import visible

TABLE_COUNTS = 3  # classes and causes a row of the run table names; the rest are counted
TAG_MIN_CASES = 20  # a tag's rate is shown when it counts this many case runs: fewer tell little
TAG_ROWS = 40  # rows of the tag table at the most, highest rate first


# -- the header -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Totals:
    """The run's counts, summed over summary.json's ``runs`` (model × backend)."""

    runs: int
    cases: int  # case runs: a case judged on one backend
    mismatches: int
    unexplained: int
    known: int  # mismatches a known divergence explains
    ties: int  # mismatches that are ties of equal score (reported apart)
    listed: int  # mismatches kept whole (mismatches.csv, the report's list)
    interrupted: bool
    files_broken: int = 0  # compare --check: properties of the models' files that are broken
    nothing_compared: str = ""  # why the run compared nothing it was asked to (Results.nothing_compared)
    not_opened: int = 0  # models whose files or backends could not be opened (run.results.NOT_OPENED)

    @property
    def compared(self) -> bool:
        """Some case was judged, of what was asked. A run that judged none proves nothing: it is never ✅."""
        return (self.cases > 0 or self.unexplained > 0) and not self.nothing_compared

    @property
    def verdict(self) -> str:
        """``no mismatch to review``, ``5 mismatches to review`` or ``nothing compared``, with its mark.
        A mismatch to review is one no reviewed known divergence matches (the ``unexplained`` count).
        A stopped run's verdict says so at its end (``⏸`` where it found none to review)."""
        said = self._verdict
        return said if not self.interrupted or said.startswith("⏸") else f"{said} · interrupted"

    @property
    def _verdict(self) -> str:
        if not self.compared:
            return f"⚠️ nothing compared{self.nothing_compared or ': no backend judged a case'}"
        n = self.files_broken
        broken = f"{n:,} broken {'property' if n == 1 else 'properties'} of the model's files" if n else ""
        if self.unexplained == 0 and self.interrupted and not broken:  # (the cases not judged may hold one)
            return "⏸ interrupted: no mismatch to review in the cases judged so far"
        if self.unexplained == 0 and self.not_opened and not broken:  # (a model not compared may hold one)
            return f"⚠️ {plural(self.not_opened, 'model')} not compared: no mismatch to review in the others"
        if self.unexplained == 0:
            return f"❌ {broken}" if broken else "✅ no mismatch to review"
        return f"❌ {plural(self.unexplained, 'mismatch')} to review" + (f", {broken}" if broken else "")

    @property
    def green(self) -> bool:
        """What the title marks ✅: some case judged, none unexplained, no file's property broken."""
        return self.compared and self.unexplained == 0 and not self.files_broken and not self.interrupted \
            and not self.not_opened


def totals(results: Results, not_opened: int = 0) -> Totals:
    """The run's counts; ``not_opened``: its models that could not be opened (build.not_opened)."""
    runs = results.runs
    mismatches = sum(r.mismatches for r in runs)
    unexplained = sum(r.unexplained for r in runs)
    ties = sum(r.ties for r in runs)
    # (regress counts a changed digest-only corpus as unexplained with no mismatch to list: never below 0)
    known = sum(max(0, r.mismatches - r.unexplained - r.ties) for r in runs)
    broken = sum(p.status == BROKEN for c in results.checks for p in c.properties)
    return Totals(len(runs), sum(r.cases for r in runs), mismatches, unexplained, known, ties,
                  len(results.mismatches), results.interrupted, broken, results.nothing_compared, not_opened)


def count_line(t: Totals) -> str:
    """The header's sentence: ``14 mismatches in 2,485 judgements (a case once per backend and op):
    5 to review, 9 known divergences``. The table's cases column sums to that count."""
    parts = [f"{t.unexplained:,} to review"]
    if t.known:
        parts.append(plural(t.known, "known divergence"))
    if t.ties:
        parts.append(plural(t.ties, "tie") + " of equal score")
    line = (f"{plural(t.mismatches, 'mismatch')} in {plural(t.cases, 'judgement')} (a case once per backend and op): "
            f"{', '.join(parts)}")
    if t.listed < t.mismatches:
        line += f"; {t.listed:,} of them listed in mismatches.csv (a fuzz run lists each finding once, shrunk)"
    if t.interrupted:
        line += "; interrupted: the counts are those of the cases done"
    return line


# What each built-in backend's version is the version of, where its name does not say.
_VERSION_OF = {"hf": "tokenizers", "hf-gguf": "transformers", "llama.cpp": "llama-cpp-python", "ref": "tokparity",
               "golden": "llama.cpp's file", "llama-server": "llama-cpp-python", "llama.cpp-jinja": "llama-cpp-python"}


def backend_versions(results: Results) -> str:
    """``llama.cpp (llama-cpp-python 0.3.36), mine``: a cmd: engine says no version. A library
    loaded only as the witness of engines, judged and judging nowhere, is said to be one. Golden
    ids that no run read (a chat run) are left out; any other backend may have given the ids a
    decoding op judged, so it stays."""
    judging = {name for r in results.runs for name in (r.backend, *re.split(r"[/+]", r.oracle))}
    listed = ", ".join(version_said(name, info.get("version", "")) for name, info in results.backends.items()
                       if name != "golden" or name in judging or not results.runs)

    def engines(info: Mapping) -> str:  # (each engine once, over the models)
        return ", ".join(dict.fromkeys(engine for of_model in info["witness_of"].values() for engine in of_model))
    return listed + "".join(f"; {name} only asked beside {engines(info)}, not judged"
                            for name, info in results.backends.items()
                            if info.get("witness_of") and name not in judging)


def version_said(name: str, version: str) -> str:
    """A backend and its version, with what the version is of where the name does not say.

    >>> version_said("hf-gguf", "5.24.0"), version_said("sentencepiece", "0.2.1"), version_said("mine", "")
    ('hf-gguf (transformers 5.24.0)', 'sentencepiece 0.2.1', 'mine')
    >>> version_said("hf", "5.24.0 (tokenizers 0.22.1)")  # (a version that says what it is of already)
    'hf 5.24.0 (tokenizers 0.22.1)'
    """
    library = _VERSION_OF.get(name) if "(" not in version else None
    return name if not version else f"{name} ({library} {version})" if library else f"{name} {version}"


# -- the model × backend table --------------------------------------------------------------------

RUN_COLUMNS = ("model", "oracle", "backend", "cases", "mismatches", "to review", "classes", "causes")
NUMERIC = frozenset({"cases", "mismatches", "to review"})


def counts_text(counts: Mapping[str, int], most: int | None = None) -> str:
    """``merge-order 195, whitespace-runs 118``: most first, then by name; ``–`` for none. With
    ``most``, the rest are one count (a table a terminal can show: summary.json has them all)."""
    ranked = sorted(counts.items(), key=lambda x: (-x[1], x[0]))
    shown = ranked if most is None or len(ranked) <= most else ranked[:most]
    rest = len(ranked) - len(shown)
    return ", ".join(f"{c} {n:,}" for c, n in shown) + (f", … {rest} more" if rest else "") or "–"


def skipped_text(r: RunSummary) -> str:
    """Why a run's cases were not judged: no golden ids for the text, or no answer from the backend."""
    return f"{r.skipped:,} {'without golden ids' if r.backend == 'golden' else 'not answered'}"


def run_rows(results: Results) -> list[tuple[str, ...]]:
    """One row of cells (``RUN_COLUMNS``) per model × backend, as plain text."""
    rows: list[tuple[str, ...]] = []
    for r in results.runs:
        ties = f" ({plural(r.ties, 'tie')})" if r.ties else ""
        # (the cases a backend did not answer are said: a reader should not have to subtract)
        unanswered = f" ({skipped_text(r)})" if r.skipped and r.backend != "golden" else ""
        rows.append((r.model, r.oracle, r.label, f"{r.cases:,}{unanswered}", f"{r.mismatches:,}", f"{r.unexplained:,}{ties}",
                     counts_text(r.classes, TABLE_COUNTS), counts_text(r.causes, TABLE_COUNTS)))
    return rows


def oracle_lines(results: Results, why: bool = True) -> list[str]:
    """``llama-bpe is judged by hf: its tokenizer.json is …``: once per model, why its oracle judges.
    Without ``why`` (the terminal), the reason is left to summary.md: a newcomer read it as noise.
    A reason an option gave (``--add-special``) is said there too: the user chose it, maybe unknowingly."""
    seen: dict[str, str] = {}
    for r in results.runs:
        if r.model not in seen and r.oracle_why:
            seen[r.model] = (f"{r.model} is judged by {r.oracle}: {r.oracle_why}" if why or r.oracle_why.startswith("--")
                             else f"{r.model} is judged by {r.oracle}; summary.md says why")
    for r in results.runs:  # the chain's last judge is judged by those before it, on fewer texts
        *before, last = r.oracle.split("/")
        if r.op == "encode" and before and r.backend == last and r.model in seen:
            golden = before == ["golden"]
            who = "the golden ids" if golden else "/".join(before)
            seen[r.model] += (f". {last} itself is judged by {who}, on the {plural(r.cases, 'text')} "
                              f"{'they hold' if golden else 'they answered'}")
    return list(seen.values())


def not_applicable_lines(results: Results) -> list[str]:
    """The cases each backend was not judged on because they ask what it declares it cannot do."""
    out = []
    for r in results.runs:
        if r.not_applicable:
            listed = ", ".join(r.not_applicable_cases[:5]) + ("…" if r.not_applicable > 5 else "")
            out.append(f"{r.model} / {r.label}: {plural(r.not_applicable, 'case')} not applicable, not judged: they "
                       f"ask what the engine declares it cannot do (leave special-token text as text, or add no "
                       f"special tokens) ({listed}; summary.json lists the first {len(r.not_applicable_cases)})")
    return out


# -- the first mismatches listed ------------------------------------------------------------------


def conversation_line(text: str, each: int = 24) -> str:
    """A chat case's conversation in one line, each message's role and the start of its content:
    ``system 'Be brief.' · user 'What is 2 + 2?' · 1 tool · add_generation_prompt``. A newcomer
    read the JSON of the case, cut short, as noise.

    >>> conversation_line('{"messages": [{"role": "user", "content": "Hello, who are you today?"}], '
    ...                   '"options": {"add_generation_prompt": true}}')
    "user 'Hello, who are you today…' · add_generation_prompt"
    """
    try:
        case = json.loads(text)
        messages, tools, options = case["messages"], case.get("tools") or [], case.get("options") or {}
    except (ValueError, TypeError, KeyError):
        return text[:80]
    said = []
    for m in messages if isinstance(messages, list) else []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            shown = repr(content[:each] + ("…" if len(content) > each else ""))
        else:
            shown = "null" if content is None else f"{len(content)} parts" if isinstance(content, list) else "?"
        calls = m.get("tool_calls") if isinstance(m, dict) else None
        said.append(f"{m.get('role', '?') if isinstance(m, dict) else '?'} {shown}"
                    + (f" + {plural(len(calls), 'tool call')}" if isinstance(calls, list) and calls else ""))
    if tools:
        said.append(f"{len(tools)} tool{'s' if len(tools) > 1 else ''}")
    said += [k for k, v in options.items() if v is True] if isinstance(options, dict) else []
    return " · ".join(said) or text[:80]


@dataclass
class Examples:
    heading: str
    cases: list[Mismatch] = field(default_factory=list)


def examples(results: Results, n: int = 5) -> Examples | None:
    """The unexplained mismatches first: they are what a reader must act on. Each engine and op
    takes its turn, so a stream bug is not hidden behind five decode rows. When there are none,
    one example per known divergence, so the list shows what each reviewed entry looks like."""
    if not results.mismatches:
        return None
    unexplained = [m for m in results.mismatches if not m.known and m.cause != TIE]
    if unexplained:
        return Examples("First mismatches to review", in_turn(unexplained, n))
    first_of: dict[str, Mismatch] = {}
    for m in results.mismatches:
        if m.known:
            first_of.setdefault(m.known, m)
    return Examples("Known divergences, one example each", list(first_of.values())[:n])


def in_turn(mismatches: list[Mismatch], n: int) -> list[Mismatch]:
    """The first ``n`` of ``mismatches``, each model, engine and op taking one in turn."""
    groups: dict[tuple[str, str, str], list[Mismatch]] = {}
    for m in mismatches:
        groups.setdefault((m.model, m.backend, m.op), []).append(m)
    picked: list[Mismatch] = []
    for k in range(n):
        picked += [group[k] for group in groups.values() if k < len(group)]
    return picked[:n]


def run_classes(results: Results) -> str:
    """Every class of the run, counted over summary.json's runs (not only the mismatches kept whole)."""
    counts: Counter[str] = Counter()
    for r in results.runs:
        counts.update(r.classes)
    return counts_text(dict(counts))


# -- the mismatch rate per tag --------------------------------------------------------------------


@dataclass
class TagRow:
    model: str
    backend: str
    tag: str
    cases: int
    mismatches: int

    @property
    def rate(self) -> float:
        return self.mismatches / self.cases


@dataclass
class TagRates:
    rows: list[TagRow]  # highest rate first
    folded: int = 0  # (model, backend, tag) rows left out: too few cases, or past the table's last row
    folded_cases: int = 0
    min_cases: int = TAG_MIN_CASES

    @property
    def folded_line(self) -> str:
        if not self.folded:
            return ""
        return (f"… and {plural(self.folded, 'more row')}, each with fewer than {self.min_cases} case runs or a lower "
                f"rate ({plural(self.folded_cases, 'case run')} in all)")


def tag_rates(results: Results, min_cases: int = TAG_MIN_CASES, top: int = TAG_ROWS) -> TagRates:
    """Each model's and backend's tags with at least ``min_cases`` cases, highest mismatch rate first, at
    most ``top``; the rest (a generator's one-case ``codepoint=U+0001`` tags, …) folded into one count."""
    every = [TagRow(model, backend, k, v.get("cases", 0), v.get("mismatches", 0))
             for model, backends in results.tag_rates.items() for backend, rates in backends.items()
             for k, v in rates.items() if v.get("cases", 0)]
    enough = sorted((t for t in every if t.cases >= min_cases),
                    key=lambda t: (-t.rate, -t.cases, t.model, t.backend, t.tag))[:top]
    shown = {(t.model, t.backend, t.tag) for t in enough}
    rest = [t for t in every if (t.model, t.backend, t.tag) not in shown]
    return TagRates(enough, len(rest), sum(t.cases for t in rest), min_cases)


# -- a fuzz run's findings, one per root cause ----------------------------------------------------


def cause_shown(f: FoundCause) -> str:
    """The finding's cause as the fuzz run names it ("no cause reproduced (merge-order)")."""
    if f.label:
        return f.label
    return (f.cause or "no cause reproduced") + (f" (known: {f.known})" if f.known else "")


def finding_title(f: FoundCause) -> str:
    """``model.greedy-longest-match · greedy against llama.cpp (merge-order)``."""
    return f"{cause_shown(f)} · {f.backend} against {f.oracle} ({f.cls})"


def seam_shown(s: SeamCovered) -> str:
    """``\\s:re2 (247)``, or ``nfkc:compatibility (375 of 900)`` when not every case was run."""
    of = f" of {s.of:,}" if s.of and s.of != s.cases else ""
    return f"{s.seam} ({s.cases:,}{of})"


@dataclass
class FuzzSection:
    findings: list[FoundCause]
    seams: list[SeamCovered]
    cases: int
    seconds: float
    by_source: Mapping[str, int]

    @property
    def style(self) -> str:
        """How the model's vocabulary spells pieces (pieces.piece_style), from the findings' own."""
        return piece_style([p for f in self.findings for p in f.oracle_pieces])

    @property
    def run_line(self) -> str:
        sources = ", ".join(f"{name} {n:,}" for name, n in sorted(self.by_source.items()))
        return (f"{plural(self.cases, 'case')} in {self.seconds:.1f} s" + (f" ({sources})" if sources else "")
                + f"; {plural(len(self.findings), 'root cause')} found")


FINDING_COLUMNS = ("cause", "backend", "class", "cases", "first found after", "shrunk text")
FINDING_NUMERIC = frozenset({"cases", "first found after"})
SHRUNK_SHOWN = 80  # characters of a shrunk text in the table (the write-up below it shows all)


def finding_row(f: FoundCause) -> tuple[str, ...]:
    """The finding's cells (``FINDING_COLUMNS``) as plain text, the text's whitespace made visible."""
    text = visible(f.text[:SHRUNK_SHOWN]) + ("…" if len(f.text) > SHRUNK_SHOWN else "")
    return (cause_shown(f), f.backend, f.cls, f"{f.count:,}", f"{f.found_after:.1f} s", text)
