"""``tokparity fuzz MODEL [-b BACKEND]… [--oracle BACKEND] [--seconds N] [--seed N] [-o DIR]``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tokparity.textview import shown_path, single_line

if TYPE_CHECKING:
    from tokparity.run.results import Results


def add_parser(sub) -> None:
    from tokparity.commands.arguments import BACKEND_NAMES, non_negative_seconds, positive_int, positive_seconds
    from tokparity.fuzz.generators import GENERATORS

    p = sub.add_parser(
        "fuzz", help="generated and Hypothesis texts against every backend; each failure shrunk to a minimal text",
        description="Run seeded generators (every vocabulary piece, random piece concatenations, special tokens "
                    "× whitespace, ASCII pairs, every code point, multilingual words, …) and then Hypothesis "
                    "against every backend until the time is up (the Unicode and regex-engine seams first). Each "
                    "distinct root cause (backend × cause, as the diagnosis reproduces it; two bugs are two findings) "
                    "is shrunk to a minimal text and written to DIR/fuzz-findings.jsonl, a corpus ready to commit as "
                    "regression cases; report.html, mismatches.csv, summary.md and summary.json show the findings. "
                    "Exit status 0: no failure found; 1: at least one; 2: bad input.")
    p.add_argument("model", metavar="MODEL", nargs="?", help="zoo name, file, folder or hf:ORG/NAME")
    p.add_argument("-b", "--backend", action="append", dest="backends", metavar="BACKEND",
                   help=BACKEND_NAMES + " (repeatable; default: every backend the model's files allow); NAME=BACKEND "
                                        "labels it NAME in every report, e.g. 'mine=cmd:python3 eng.py {gguf}'")
    p.add_argument("--oracle", metavar="BACKEND", help="the backend others are judged against, or the NAME of a -b "
                                                       "(default: the model's original library; llama.cpp for a "
                                                       "GGUF)")
    p.add_argument("--seconds", type=positive_seconds, metavar="N",
                   help="time budget, shrinking included (default: 60, or a week with --cases; at most a week)")
    p.add_argument("--cases", type=positive_int, metavar="N",
                   help="stop after N cases (texts, conversations or id sequences): a budget in work, so the same "
                        "seed runs the same cases on a fast or a loaded machine. Shrinking each finding stays timed, "
                        "and --seconds, if given, can end the run first")
    p.add_argument("--seed", type=int, metavar="N", help="seed of the generators and Hypothesis (default: 0); "
                                                         "same seed, same texts")
    p.add_argument("-g", "--generator", action="append", dest="generators", metavar="NAME",
                   help=f"only these generators (repeatable): {', '.join(GENERATORS)}")
    p.add_argument("--no-hypothesis", action="store_true", help="generators only, for the whole budget")
    p.add_argument("--ops", default="encode", metavar="OP",
                   help="what to fuzz: encode (texts, the default), decode or stream (id sequences made from the "
                        "vocabulary), or chat (generated conversations through the model's chat template), judged "
                        "as compare --ops judges them; no journal, no Hypothesis")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure (once shrunk)")
    p.add_argument("--shrink-seconds", type=non_negative_seconds, metavar="N",
                   help="time to shrink each failure (default: a quarter of the budget, 2 to 20 s)")
    p.add_argument("--known", action="append", metavar="FILE", default=[],
                   help="a known-divergences TOML file (repeatable), added to the list tokparity ships: an engine's "
                        "intended behaviour is counted as known, not shrunk, and does not fail the run")
    p.add_argument("--no-builtin-known", action="store_true",
                   help="do not use tokparity's own list of known upstream divergences")
    p.add_argument("--add-special", action="store_true", help="encode with add_special (BOS/EOS as the model says)")
    p.add_argument("--parse-special", action="store_true", help="parse special-token text in the input")
    p.add_argument("-o", "--out", metavar="DIR", help="report folder (default: reports/fuzz-<timestamp>/); every "
                                                      "case is written to DIR/cases.jsonl as it is run")
    p.add_argument("--resume", metavar="DIR", help="continue the interrupted fuzz run whose report folder is DIR, "
                                                   "with its arguments and the rest of its time budget")
    p.add_argument("--trust-journal", action="store_true",
                   help="with --resume: run the cmd:/py: backends the journal names even though your tokparity did "
                        "not write it (a folder someone handed you); read them first")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML there (one testcase per model × backend; CI systems show it); with "
                        "$GITHUB_STEP_SUMMARY set, summary.md is appended to that file too")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


# The arguments a journal stores, so that `--resume DIR` needs no others, and what each must be
# (tokparity.run.journal.ARG_KINDS: a header is checked before a resume takes anything from it).
ARG_CHECKS = {"model": "str?", "backends": "strs?", "oracle": "str?", "seconds": "seconds?", "cases": "count?", "seed": "int?",
              "generators": "strs?", "no_hypothesis": "bool", "exitfirst": "bool", "shrink_seconds": "seconds0?",
              "add_special": "bool", "parse_special": "bool", "known": "strs", "no_builtin_known": "bool"}
RESUMED = tuple(ARG_CHECKS)
PATHS = ("model", "known")  # made absolute: a resume may start in another folder


def _run_chats(args: argparse.Namespace, out: Path) -> int:
    """``fuzz --ops chat``: generated conversations, not texts (tokparity.fuzz.chats); the findings,
    shrunk, are a corpus of conversations (``DIR/fuzz-findings.jsonl``, ``-c`` with ``--ops chat``)."""
    import json

    from tokparity.commands.compare import (
        refuse_inputs_in_outputs,
        refuse_nothing_judged,
        refuse_silent_templates,
        write_reports_or_say,
    )
    from tokparity.commands.engine_files import engine_files
    from tokparity.errors import TokparityError
    from tokparity.fuzz.chats import run_chat_fuzz
    from tokparity.fuzz.findings import FINDINGS_FILE
    from tokparity.report import clear_reports
    from tokparity.report.ci import write_ci_outputs
    from tokparity.run.known import load_known
    from tokparity.run.options import CompareOptions, Services, progress_to_stderr
    from tokparity.whole_files import write_text_whole

    if args.resume:
        raise TokparityError("fuzz --ops chat keeps no journal: run it again (the same --seed gives the same "
                             "conversations) instead of --resume")
    ignored = [flag for flag, given in (("-g", args.generators), ("--no-hypothesis", args.no_hypothesis),
                                        ("--add-special", args.add_special), ("--parse-special", args.parse_special))
               if given]
    if ignored:
        raise TokparityError(f"fuzz --ops chat: {ignored[0]} is about texts; conversations are generated as they are "
                             "and their prompts tokenized as apply_chat_template does; leave it out")
    refuse_inputs_in_outputs(out, {"MODEL": [args.model], "--known": args.known or [],
                                   "-b": engine_files(args.backends, getattr(args, "engine_folder", None))}, args.junit)
    clear_reports(out)
    options = CompareOptions(oracle=args.oracle, explicit_backends=bool(args.backends), ops=("chat",),
                             services=Services(progress=None if args.quiet else progress_to_stderr,
                                               known=load_known(args.known or [], builtin=not args.no_builtin_known)))
    results, findings, cases, given_up = run_chat_fuzz(args.model, args.backends, options, args.seconds, args.seed,
                                                       shrink_seconds=args.shrink_seconds, exitfirst=args.exitfirst,
                                                       cases=args.cases)
    paths = write_reports_or_say(results, out, "fuzz", args.backends)
    refuse_silent_templates(results, out)  # (first: it says why nothing was judged)
    refuse_nothing_judged(results, out, args.backends)
    records = [{"id": f"chat-{k}", **json.loads(finding.case.text),
                "tags": {"backend": finding.backend, "key": finding.key, "cause": finding.mismatch.cause}}
               for k, finding in enumerate(findings, 1)]
    try:  # (whole, through the file it made: a link put at its name meanwhile is not written through)
        write_text_whole(out / FINDINGS_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    except OSError as e:
        raise TokparityError(f"{shown_path(out / FINDINGS_FILE)}: cannot write it ({e.strerror or e}); the "
                             "reports beside it hold the findings") from None
    write_ci_outputs(results, paths, args.junit, "fuzz")
    if results.interrupted:  # (a Ctrl-C: 130, as compare; the conversations done are in the reports)
        print(f"tokparity: interrupted after {cases} conversation{'s' * (cases != 1)}; the reports cover them: "
              f"{shown_path(paths['report.html'])}", file=sys.stderr)
        return 130
    if given_up:
        raise TokparityError(f"nothing more was compared after {cases} conversation{'s' * (cases != 1)}. The chat "
                             f"template of {single_line(args.model)} is given up on: {single_line(given_up)}. Fix the "
                             f"template; the reports are in {out}")
    print(f"fuzz {args.model} --ops chat: {cases} conversations in {results.seconds:.1f} s (seed {args.seed})")
    if not findings:
        print("no failure found")
    for finding in findings:
        m = finding.mismatch
        shrunk, original = json.loads(finding.case.text), json.loads(finding.original.text)
        print(f"\n{finding.key} on {finding.backend}: {finding.count} conversations ({m.cls}; shrunk from "
              f"{len(original['messages'])} to {len(shrunk['messages'])} messages)")
        print(f"  conversation {finding.case.text}")
        if list(m.oracle_output) == list(m.backend_output):  # (the same text: the ids differ, so show those)
            print(f"  {m.oracle:<8} ids {list(m.oracle_ids)[:12]} {list(m.oracle_pieces)[:12]}")
            print(f"  {finding.backend:<8} ids {list(m.backend_ids)[:12]} {list(m.backend_pieces)[:12]}")
        else:
            print(f"  {m.oracle:<8} {list(m.oracle_output)!r}")
            print(f"  {finding.backend:<8} {list(m.backend_output)!r}")
        print(f"  {m.cause_evidence or m.evidence}")
    print(f"conversations to keep: {out / FINDINGS_FILE}")
    print(f"reports: {shown_path(paths['report.html'])}")  # (a folder name's escape sequence spelled out)
    return 1 if results.unexplained else 0


def _run_ids(args: argparse.Namespace, ops: tuple[str, ...], out: Path) -> int:
    """``fuzz --ops decode|stream``: id sequences, not texts (tokparity.fuzz.ids)."""
    from tokparity.commands.compare import (
        refuse_inputs_in_outputs,
        refuse_nothing_judged,
        write_reports_or_say,
    )
    from tokparity.commands.engine_files import engine_files
    from tokparity.errors import TokparityError
    from tokparity.fuzz.ids import run_id_fuzz
    from tokparity.report import clear_reports
    from tokparity.report.build import verdict_sentence
    from tokparity.report.ci import write_ci_outputs
    from tokparity.run.known import load_known
    from tokparity.run.options import CompareOptions, Services, progress_to_stderr

    if len(ops) != 1 or ops[0] not in ("decode", "stream"):
        raise TokparityError(f"fuzz --ops {args.ops}: one op at a time, encode, decode or stream (pieces are every id "
                             "of the vocabulary already: compare --ops pieces)")
    if args.resume:
        raise TokparityError("fuzz --ops decode/stream keeps no journal: run it again (the same --seed gives the same "
                             "sequences) instead of --resume")
    refuse_inputs_in_outputs(out, {"MODEL": [args.model], "--known": args.known or [],
                                   "-b": engine_files(args.backends, getattr(args, "engine_folder", None))}, args.junit)
    clear_reports(out)
    options = CompareOptions(add_special=args.add_special, parse_special=args.parse_special, oracle=args.oracle,
                             explicit_backends=bool(args.backends), ops=ops,
                             services=Services(progress=None if args.quiet else progress_to_stderr,
                                               known=load_known(args.known or [], builtin=not args.no_builtin_known)))
    results, findings, cases = run_id_fuzz(args.model, args.backends, options, args.seconds, args.seed, args.cases)
    paths = write_reports_or_say(results, out, "fuzz", args.backends)
    refuse_nothing_judged(results, out, args.backends)
    write_ci_outputs(results, paths, args.junit, "fuzz")
    print(f"fuzz {args.model} --ops {ops[0]}: {cases} id sequences in {results.seconds:.1f} s{_outside(results)} "
          f"(seed {args.seed})")
    for summary in results.runs:
        if summary.root_cause is not None:
            print(verdict_sentence(summary))
    if not findings:
        print("no failure found")
    for f in sorted(findings, key=lambda f: -f.count):  # (the most sequences first, as the report lists them)
        m = f.mismatch
        print(f"\n{f.key} on {f.backend}: {f.count} sequences ({m.cls}; shrunk from {len(f.original.ids)} to "
              f"{len(f.case.ids)} ids)")
        print(f"  ids      {list(f.case.ids)} (prompt {f.case.prompt}) {list(m.oracle_pieces)}")
        print(f"  {m.oracle:<8} {list(m.oracle_output)!r}")
        print(f"  {f.backend:<8} {list(m.backend_output)!r}")
        print(f"  {m.cause_evidence or m.evidence}")
    print(f"reports: {shown_path(paths['report.html'])}")  # (a folder name's escape sequence spelled out)
    return 1 if results.unexplained else 0


def _outside(results: Results) -> str:
    """What of a run's time ``--seconds`` does not cover: loading the model and backends, and
    stopping them (", of which 3.6 s loading"), or ""."""
    outside = sum(t.get("load", 0.0) + t.get("close", 0.0) for t in results.timing.values())
    return f", of which {outside:.1f} s loading and stopping the backends" if outside >= 0.1 else ""


def run(args: argparse.Namespace) -> int:
    opened: list = []  # the journal, once reopened or made: closed (its lock let go) however the run ends
    try:
        return _run(args, opened)
    finally:
        for journal in opened:
            journal.close()


def _run(args: argparse.Namespace, opened: list) -> int:
    from tokparity.backends.registry import labelled_with_oracle
    from tokparity.commands.arguments import WEEK, checked, non_negative_seconds, positive_int, positive_seconds
    from tokparity.commands.compare import (
        refuse_inputs_in_outputs,
        refuse_nothing_judged,
        write_reports_or_say,
    )
    from tokparity.commands.engine_files import engine_files
    from tokparity.errors import TokparityError
    from tokparity.fuzz.findings import FINDINGS_FILE, key_label
    from tokparity.fuzz.loop import FuzzOptions, run_fuzz
    from tokparity.report import clear_reports
    from tokparity.report.ci import write_ci_outputs
    from tokparity.run.journal import Journal
    from tokparity.run.journal.resume import stored_args, take_args
    from tokparity.run.known import load_known
    from tokparity.run.options import CompareOptions, Services, progress_to_stderr

    journal = None
    if args.resume:
        journal = Journal.reopen(args.resume, "fuzz", arg_checks=ARG_CHECKS,
                                 trust=args.trust_journal)
        opened.append(journal)
        take_args(args, journal.header, args.resume, "fuzz", PATHS, RESUMED)
    elif args.trust_journal:
        raise TokparityError("--trust-journal goes with --resume DIR (it trusts the journal in DIR)")
    if not args.model:
        raise TokparityError("fuzz needs a MODEL (a zoo name, file or folder), or --resume DIR")
    labelled_with_oracle(args.backends or [], args.oracle)  # two backends under one name: refused before any run
    if args.cases is not None:  # (again: a resumed run's arguments come from its journal)
        args.cases = checked("--cases", positive_int, args.cases)
    if args.seconds is None:
        args.seconds = 60.0 if args.cases is None else WEEK
    args.seconds = checked("--seconds", positive_seconds, args.seconds)
    args.seed = args.seed or 0
    if args.shrink_seconds is not None:  # (again: a resumed run's arguments come from its journal)
        args.shrink_seconds = checked("--shrink-seconds", non_negative_seconds, args.shrink_seconds)
    if args.generators:
        from tokparity.errors import UnknownGenerator
        from tokparity.fuzz.generators import GENERATORS
        for name in args.generators:
            if name not in GENERATORS:
                raise UnknownGenerator(name, GENERATORS)
    out = Path(args.out) if args.out else Path("reports") / time.strftime("fuzz-%Y%m%d-%H%M%S")
    from tokparity.run.ops import parse_ops
    ops = parse_ops(getattr(args, "ops", None) or "encode")
    if ops == ("chat",):
        return _run_chats(args, out)
    if ops != ("encode",):
        return _run_ids(args, ops, out)
    options = CompareOptions(add_special=args.add_special, parse_special=args.parse_special, oracle=args.oracle,
                             explicit_backends=bool(args.backends), engine_folder=getattr(args, "engine_folder", None),
                             services=Services(progress=None if args.quiet else progress_to_stderr,
                                               known=load_known(args.known or [], builtin=not args.no_builtin_known)))
    refuse_inputs_in_outputs(out, {"MODEL": [args.model], "--known": args.known or [],
                                   "-b": engine_files(args.backends, getattr(args, "engine_folder", None))}, args.junit)
    if journal is None:
        journal = Journal.create(out, "fuzz", stored_args(args, RESUMED, PATHS),
                                 models=[stored_args(args, ("model",), PATHS)["model"]])
        opened.append(journal)
        clear_reports(out)  # an earlier run's: they would speak for this one
    fuzz_options = FuzzOptions(seconds=args.seconds, cases=args.cases, seed=args.seed, generators=args.generators,
                               hypothesis=not args.no_hypothesis, exitfirst=args.exitfirst,
                               shrink_seconds=args.shrink_seconds, findings_path=out / FINDINGS_FILE, journal=journal)
    try:
        results, result = run_fuzz(args.model, args.backends, options, fuzz_options)
        paths = write_reports_or_say(results, out, "fuzz", args.backends)  # (the journal's lock held: one writer per folder)
    finally:
        journal.close()
    refuse_nothing_judged(results, out, args.backends)
    write_ci_outputs(results, paths, args.junit, "fuzz")
    sources = ", ".join(f"{name} {n}" for name, n in sorted(result.by_source.items()))
    print(f"fuzz {args.model}: {result.cases} cases in {results.seconds:.1f} s{_outside(results)} (seed {args.seed}; "
          f"{sources})")
    from tokparity.fuzz.seams import coverage_line
    from tokparity.report.build import verdict_sentence
    seams = {s.seam: s.cases for s in results.fuzz.seams} if results.fuzz else {}
    print(coverage_line(seams))
    for summary in results.runs:
        if summary.root_cause is not None:
            print(verdict_sentence(summary))
    if not result.findings:
        print("no failure found")
    for f in result.findings:
        m = f.mismatch
        what = "known" if f.known else "tie" if not f.failing else m.cls
        size, before = len(f.text), len(f.original.text)
        shrunk = f"shrunk from {before} to {size} characters" if size < before else \
            f"{size} characters; shrinking found no shorter one"
        print(f"\n{key_label(f.key)} on {f.backend}: {f.count} cases ({what}; first found after {f.found_after:.1f} s "
              f"in {f.original.corpus}, {shrunk})")
        print(f"  text     {f.text!r}")
        print(f"  {f.oracle:<8} {list(m.oracle_ids)} {list(m.oracle_pieces)}")
        print(f"  {'backend':<8} {list(m.backend_ids)} {list(m.backend_pieces)}")
        print(f"  {m.cause_evidence or m.evidence}")
    print(f"\nfindings: {out / FINDINGS_FILE} (replay: tokparity compare {args.model} -c {out / FINDINGS_FILE})")
    print(f"reports: {shown_path(paths['report.html'])}")  # (a folder name's escape sequence spelled out)
    if result.interrupted:
        print("tokparity: interrupted; the reports cover the cases done; continue with: tokparity fuzz --resume "
              f"{shown_path(out)}{journal.resume_flags}", file=sys.stderr)
        return 130
    return 1 if result.failed else 0
