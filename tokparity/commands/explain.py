"""``tokparity explain DIR [CASE]``: the root-cause analysis of a finished run, in the terminal.

    $ tokparity explain reports/parity
    $ tokparity explain reports/parity multilingual/vi-0001

Without CASE: one write-up per (model, backend) with mismatches, as report.html and summary.md
give it (the sentence naming the cause, symptom → implication, the most telling case's ids side
by side, the root cause with its reproduction counts, the fix). With CASE (``corpus/id`` or
``id``): that case only, whole. Exit status 0; 2 for a folder that is not a finished run, or a
case it does not hold.
"""

from __future__ import annotations

import argparse
import shutil

from tokparity.errors import TokparityError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "explain", help="the root-cause analysis of a finished run (per model and backend, or one case)",
        description="Print the root-cause write-up of a finished run folder (the -o DIR of compare, regress or "
                    "fuzz): per model and backend with mismatches, the cause, symptom and implication, the most "
                    "telling case's ids side by side, the reproduction counts and the fix. With CASE "
                    "(e.g. multilingual/en-0001 or en-0001): that case only.")
    p.add_argument("folder", metavar="DIR", help="a run folder holding summary.json and cases.jsonl "
                                                 "(or mismatches.csv)")
    p.add_argument("case", nargs="?", metavar="CASE", help="a case id: corpus/id or id")
    p.add_argument("--width", type=int, metavar="COLUMNS",
                   help="wrap at this many columns (default: the terminal's, 100 when not a terminal)")
    p.set_defaults(run=run)


def matching(case: str, mismatches, case_ids) -> tuple[list, bool]:
    """The mismatches of ``case`` (``corpus/id`` or ``id``), and whether the run judged it at all."""
    def hit(corpus: str, case_id: str) -> bool:
        return case in (case_id, f"{corpus}/{case_id}")
    found = [m for m in mismatches if hit(m.corpus, m.case_id)]
    return found, bool(found) or any(hit(corpus, case_id) for _, corpus, case_id in case_ids)


def run(args: argparse.Namespace) -> int:
    from tokparity.commands.compare import refuse_nothing_judged
    from tokparity.report.build import diagnosed
    from tokparity.report.folder import read_folder
    from tokparity.report.plain import case_lines, run_lines
    from tokparity.report.writeup import piece_styles
    from tokparity.textview import shown_path

    if args.width is not None and args.width < 40:
        raise TokparityError(f"--width must be 40 columns or more, not {args.width}")
    columns = args.width or shutil.get_terminal_size((100, 24)).columns
    run_folder = read_folder(args.folder)
    results = run_folder.results
    if args.case is None:
        print("\n".join(run_lines(results, shown_path(run_folder.path), columns)))
        # (as the run's exit did: the reason it wrote, else what its journal's -b and counts say)
        if results.nothing_compared and not results.interrupted:
            raise TokparityError(f"nothing was compared{results.nothing_compared}; the reports are in {shown_path(run_folder.path)}")
        refuse_nothing_judged(results, run_folder.path, list(run_folder.named))
        return 0
    found, judged = matching(args.case, results.mismatches, run_folder.case_ids)
    if not found:
        if judged:
            print(f"{args.case}: every backend agrees with its oracle on this case in {shown_path(run_folder.path)}")
            return 0
        raise TokparityError(f"{shown_path(run_folder.path)}: no mismatching case {args.case!r} (ids look like "
                             "multilingual/en-0001 or en-0001; mismatches.csv lists corpus and case_id)")
    print("\n".join(case_lines(found, piece_styles(results.mismatches), columns, diagnosed(results))))
    return 0
