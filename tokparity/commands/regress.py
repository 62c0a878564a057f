"""``tokparity regress [MODEL…] [--update] [-b BACKEND]… [-c CORPUS]… [--goldens DIR] [--ray [ADDRESS]] [-o DIR]``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tokparity.textview import shown_path

SHOW_CHANGES = 40  # CHANGED lines printed; the reports hold every one


def add_parser(sub) -> None:
    p = sub.add_parser(
        "regress", help="judge every backend against the stored goldens (ids the oracle gave before)",
        description="Judge every chosen backend against the goldens: the ids each model's oracle gave for every "
                    "corpus case, add_special off and on, when `regress --update` last ran. A change gets the same "
                    "diff, class, known-divergence list and reports as `compare`. Without MODEL: every model with "
                    "goldens in the folder. Exit status 0: nothing changed (or only known divergences); 1: an "
                    "unexplained change; 2: bad input, e.g. a corpus edited since the goldens were made.")
    p.add_argument("models", nargs="*", metavar="MODEL", help="zoo name, file, folder or hf:ORG/NAME")
    p.add_argument("--update", action="store_true",
                   help="regenerate the goldens of MODEL… (default: every model in the folder, or a built-in set) "
                        "from the oracle; goldens are never edited by hand")
    p.add_argument("-c", "--corpus", action="append", dest="corpora", metavar="CORPUS",
                   help="multilingual, emoji, edge, seams, llama.cpp-tests, all, ids, chats, or a .jsonl/.txt path (repeatable; "
                        "default: every corpus the goldens hold, of texts or, with --ops chat, of conversations; "
                        "with --update: all and chats, whose prompts are stored where the model has a chat template)")
    p.add_argument("-b", "--backend", action="append", dest="backends", metavar="BACKEND",
                   help="backends to judge (repeatable; default: the oracles that made the goldens, and ref); "
                        "NAME=BACKEND labels it NAME in every report, e.g. 'mine=cmd:python3 eng.py {gguf}'")
    p.add_argument("--ops", metavar="OPS", default="encode",
                   help="what each backend is asked, comma-joined, as compare's --ops: encode, decode, stream, pieces "
                        "or all (default: encode); the decoding ops are judged against the decoder's texts the "
                        "goldens hold (and every id's bytes, proven by their stored digest); chat alone: each "
                        "backend's prompt for the conversations (-c chats) against the prompts the goldens hold, "
                        "and the model's template as tokparity renders it today (named 'template')")
    p.add_argument("--goldens", metavar="DIR",
                   help="the goldens folder (default: $TOKPARITY_GOLDENS, else tests/goldens of the source checkout)")
    p.add_argument("--digest-only", action="store_true",
                   help="with --update: store one digest line per corpus instead of per-case ids (for huge "
                        "corpora; a change is then detected but cannot be traced to its case)")
    p.add_argument("--known", action="append", metavar="FILE", default=[],
                   help="a known-divergences TOML file (repeatable), added to the list tokparity ships")
    p.add_argument("--no-builtin-known", action="store_true",
                   help="do not use tokparity's own list of known upstream divergences")
    p.add_argument("-o", "--out", metavar="DIR", help="report folder (default: reports/<timestamp>/)")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML there (one testcase per model × backend; CI systems show it); with "
                        "$GITHUB_STEP_SUMMARY set, summary.md is appended to that file too")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="judge each model in a Ray task: alone, on a Ray started here (all CPUs); 'auto' or "
                        "HOST:PORT, on that cluster (pip install 'tokparity[ray]'). The reports are the same")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tokparity.errors import TokparityError
    from tokparity.regress import (
        DEFAULT_CORPORA,
        DEFAULT_MODELS,
        RegressOptions,
        corpora_in,
        models_in,
        run_regress,
        update_goldens,
    )
    from tokparity.regress.goldens import default_goldens_dir, one_writer
    from tokparity.run.options import progress_to_stderr

    progress = None if args.quiet else progress_to_stderr
    goldens_dir = Path(args.goldens) if args.goldens else default_goldens_dir()
    if any(p.exists() and not p.is_dir() for p in (goldens_dir, *goldens_dir.parents)):  # (a file where a folder goes)
        raise TokparityError(f"--goldens {shown_path(goldens_dir)}: not a folder (a file stands in its path); name "
                             "the goldens folder")
    if args.update:
        if args.backends or args.known or args.out or args.junit or args.ray is not None or args.ops != "encode":
            raise TokparityError("regress --update: -b, --ops, --known, -o, --junit and --ray judge a run; --update only "
                                 "remakes the goldens, decoded texts included (run `tokparity regress` afterwards)")
        models = args.models or (models_in(goldens_dir) if goldens_dir.is_dir() else []) or list(DEFAULT_MODELS)
        from tokparity.regress.goldens import SUFFIX
        for corpus in args.corpora or []:  # (a goldens file of the folder, read as a corpus, would be written over)
            path = Path(os.path.expanduser(corpus))
            if path.is_file() and path.name.endswith(SUFFIX) and path.resolve().parent == goldens_dir.resolve():
                raise TokparityError(f"-c {corpus}: is a goldens file of --goldens {goldens_dir}, which --update "
                                     "writes; copy the corpus elsewhere first")
        with one_writer(goldens_dir):
            for spec in models:
                path = update_goldens(spec, args.corpora or list(DEFAULT_CORPORA), goldens_dir,
                                      digest_only=args.digest_only, progress=progress)
                print(f"goldens: {path} ({path.stat().st_size:,} bytes)")
        return 0
    if args.digest_only:
        raise TokparityError("--digest-only only applies with --update")
    from tokparity.backends.registry import labelled
    labelled(args.backends or [])  # two backends under one name: refused before any run

    from tokparity.commands.compare import (
        refuse_inputs_in_outputs,
        refuse_named_unjudged,
        refuse_nothing_judged,
        refuse_silent_templates,
        with_nothing_compared,
    )
    from tokparity.commands.engine_files import engine_files
    from tokparity.report import clear_reports, write_reports
    from tokparity.report.ci import write_ci_outputs
    from tokparity.report.plain import summary_lines, terminal_columns
    from tokparity.run.known import load_known
    from tokparity.run.ops import parse_ops
    from tokparity.textview import clipped, single_line
    ops = parse_ops(args.ops)
    if ops == ("chat",) and args.ray is not None:
        raise TokparityError("regress --ops chat --ray: the prompts are judged in this process only (a model's "
                             "conversations take seconds); run it without --ray")
    out = Path(args.out) if args.out else Path("reports") / time.strftime("%Y%m%d-%H%M%S")
    # (without MODEL or -c, the goldens name them: their files are inputs all the same)
    refuse_inputs_in_outputs(out, {"MODEL": args.models or models_in(goldens_dir),
                                   "-c": args.corpora or corpora_in(goldens_dir), "--known": args.known,
                                   "--goldens": [str(goldens_dir)] + [str(p) for p in sorted(goldens_dir.glob("*"))],
                                   "-b": engine_files(args.backends, getattr(args, "engine_folder", None))}, args.junit)
    clear_reports(out)  # an earlier run's: they would speak for this one
    options = RegressOptions(goldens_dir=goldens_dir, corpora=args.corpora, backends=args.backends,
                             known=load_known(args.known, builtin=not args.no_builtin_known), progress=progress,
                             ray=args.ray, ops=ops)
    results = run_regress(args.models, options)
    paths = write_reports(with_nothing_compared(results, args.backends), out)
    # (the reports are written: they say what was skipped)
    refuse_silent_templates(results, out)  # (first the refusals that say why nothing was judged)
    refuse_named_unjudged(results, args.backends or [], out)
    refuse_nothing_judged(results, out)
    write_ci_outputs(results, paths, args.junit, "regress")
    print("\n".join(summary_lines(results, terminal_columns())))
    for note in options.notes:
        print(note)
    # Name every unexplained change, one line each, so a CI log says which case moved.
    unexplained = [m for m in results.mismatches if not m.known]
    for m in unexplained[:SHOW_CHANGES]:
        if m.op == "encode":
            print(f"CHANGED {m.model} {m.corpus}/{m.case_id} {m.backend}: {m.cls} at token {m.first_diff}: "
                  f"goldens {list(m.oracle_ids[:12])} vs {list(m.backend_ids[:12])}")
        elif m.op == "chat":  # (two prompts share their start: the evidence shows where they part)
            print(f"CHANGED {m.model} {m.corpus}/{m.case_id} {m.backend} chat: {m.cls}: {single_line(m.evidence)[:240]}")
        else:
            print(f"CHANGED {m.model} {m.corpus}/{m.case_id} {m.backend} {m.op}: {m.cls}: goldens "
                  f"{clipped(list(m.oracle_output))} vs {clipped(list(m.backend_output))}")
    if len(unexplained) > SHOW_CHANGES:
        print(f"… and {len(unexplained) - SHOW_CHANGES} more changes (every one in mismatches.csv)")
    print(f"reports: {shown_path(paths['report.html'])}")  # (a folder name's escape sequence spelled out)
    if results.interrupted:
        print("tokparity: interrupted; the reports cover the models judged whole; regress keeps no journal: run it "
              "again for the rest", file=sys.stderr)
        return 130
    return 1 if results.unexplained else 0
