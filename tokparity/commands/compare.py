"""``tokparity compare [MODEL…] [-c CORPUS]… [-b BACKEND]… [--oracle BACKEND] [-o DIR]``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tokparity.commands.arguments import (
    BACKEND_NAMES,
    CORPUS_ARG_CHECKS,
    add_corpus_options,
    check_seconds,
    non_negative_int,
    positive_int,
    timeout_seconds,
)
from tokparity.commands.ci_files import junit_or_empty, not_a_summary
from tokparity.commands.engine_files import engine_files
from tokparity.commands.nothing_compared import (  # noqa: F401 (fuzz, regress and explain import them from here)
    refuse_named_unjudged,
    refuse_nothing_judged,
    refuse_silent_templates,
    with_nothing_compared,
)
from tokparity.textview import shown_path


def add_parser(sub) -> None:
    p = sub.add_parser(
        "compare", help="run every case on every backend against the oracle and write the reports",
        description="Run every case of the corpora on every backend, compare each with the model's oracle, name "
                    "the bug class of each mismatch and write report.html, mismatches.csv, summary.md and "
                    "summary.json. Without arguments: the built-in default (a handful of zoo models × all corpora × "
                    "all available backends; with --ops chat, five zoo models with chat templates × the built-in "
                    "conversations). Exit status 0: no mismatch to review; 1: at least one; 2: bad input.")
    p.add_argument("models", nargs="*", metavar="MODEL", help="zoo name, file, folder or hf:ORG/NAME")
    p.add_argument("--all", action="store_true", help="every zoo model (the heavy tier; fetched as needed)")
    p.add_argument("-c", "--corpus", action="append", dest="corpora", metavar="CORPUS",
                   help="multilingual, emoji, edge, seams, llama.cpp-tests, all (these five), ids (id sequences "
                        "for the decoding ops), chats (conversations, --ops chat), a .jsonl/.txt file (also "
                        ".gz/.zst), a Parquet file or folder, a saved Hugging Face dataset, or a quoted glob "
                        "(repeatable; default: all, or chats with --ops chat)")
    add_corpus_options(p)
    p.add_argument("-b", "--backend", action="append", dest="backends", metavar="BACKEND",
                   help=BACKEND_NAMES + " (repeatable; default: every backend the model's files allow); NAME=BACKEND "
                                        "labels it NAME in every report, e.g. 'mine=cmd:python3 eng.py {gguf}'")
    p.add_argument("--oracle", metavar="BACKEND", help="the backend others are judged against, or the NAME of a -b "
                                                       "(default: the model's original library, golden ids where "
                                                       "they exist)")
    p.add_argument("--try-release", action="append", dest="try_release", metavar="BACKEND@VERSION",
                   help="another release of a library (e.g. sentencepiece@0.2.0), tried as the cause of each "
                        "mismatch on the models its backend runs on: where it gives the backend's ids, the cause is "
                        "library.release (the engine embeds that release); installed once like -b NAME@VERSION "
                        "(repeatable)")
    p.add_argument("--add-special", action="store_true", help="encode with add_special (BOS/EOS as the model says)")
    p.add_argument("--parse-special", action="store_true", help="parse special-token text in the input")
    p.add_argument("--ops", metavar="OPS",
                   help="what each backend is asked, comma-joined: encode (a text's ids), decode (ids back to "
                        "text), stream (ids to text one at a time after a prompt, as a server streams), pieces "
                        "(each id's bytes); all for the four (default: encode). The ids decoded are the oracle's "
                        "encodings of the texts and id sequences made from the vocabulary. Or chat alone: "
                        "conversations (-c chats by default) turned into prompts with the model's chat template, "
                        "text and ids judged against transformers' apply_chat_template")
    p.add_argument("--skip-special", action="store_true",
                   help="with --ops decode or stream: every decoder leaves special tokens out of the text "
                        "(skip_special_tokens=True, llama.cpp's unparse_special off), as most servers do; default: "
                        "written as their text")
    p.add_argument("--clean-up-spaces", choices=("on", "off"),
                   help="with --ops decode: every decoder cleans up tokenization spaces (transformers' "
                        "clean_up_tokenization_spaces: 'x != y .' -> 'x!= y.') or does not; default: as each "
                        "model's files say. tokenizers, SentencePiece and tiktoken never clean up (tried with off "
                        "only), llama.cpp takes it from the vocabulary (not tried); streams never clean up")
    p.add_argument("--spaces-between-specials", action="store_true",
                   help="with --ops decode: special and added tokens are spaced apart from the text around them, "
                        "as vLLM's spaces_between_special_tokens does (only tokparity's reference and your engines "
                        "have it: the libraries are not tried)")
    p.add_argument("--remove-special", action="store_true",
                   help="with --ops decode: every decoder takes off a first BOS and a last EOS the vocabulary adds, "
                        "as llama.cpp's llama_detokenize(remove_special) does (llama.cpp, tokparity's reference on a "
                        "GGUF and your engines have it: the others are not tried)")
    p.add_argument("--stream-step", type=positive_int, metavar="K",
                   help="with --ops stream: feed each stream K ids at a time after its prompt (a server that "
                        "decodes several tokens a step, speculative decoding); one delta a step (default: 1)")
    p.add_argument("--known", action="append", metavar="FILE", default=[],
                   help="a known-divergences TOML file (repeatable), added to the list tokparity ships")
    p.add_argument("--no-builtin-known", action="store_true",
                   help="do not use tokparity's own list of known upstream divergences")
    p.add_argument("-o", "--out", metavar="DIR", help="report folder (default: reports/<timestamp>/); every case is "
                                                      "written to DIR/cases.jsonl as it is judged")
    p.add_argument("--resume", metavar="DIR", help="continue the interrupted run whose report folder is DIR, with its "
                                                   "arguments, without running again the cases it finished")
    p.add_argument("--trust-journal", action="store_true",
                   help="with --resume: run the cmd:/py: backends the journal names even though your tokparity did "
                        "not write it (a folder someone handed you); read them first")
    p.add_argument("--max-chars", type=non_negative_int, metavar="N",
                   help="skip (and name) cases longer than N characters (default: 1,000,000; 0: no cap)")
    p.add_argument("--timeout", type=timeout_seconds, metavar="SECONDS",
                   help="per case, for backends in another process (cmd:, llama.cpp on a file of yours): a case "
                        "that takes longer is recorded as a timeout and the program restarted (default: 10)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="worker processes that judge models (or shards of one model's cases) side by side; "
                        "0: one per CPU (default: 1). The reports are the same as with one")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="judge in Ray actors: alone, on a Ray started here (with --jobs CPUs, default all); 'auto' "
                        "or HOST:PORT, on that cluster (pip install 'tokparity[ray]'). The reports are the same; "
                        "--resume continues on Ray")
    p.add_argument("--check", action="store_true",
                   help="also check what each model's files hold, as tokparity check does; a broken property "
                        "is in the reports and exits 1")
    p.add_argument("--no-diagnose", action="store_true",
                   help="name no root causes (no reproduction by the reference's variants: faster, classes only)")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML there (one testcase per model × backend; CI systems show it); with "
                        "$GITHUB_STEP_SUMMARY set, summary.md is appended to that file too")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


# The arguments a journal stores, so that `--resume DIR` needs no others, and what each must be
# (tokparity.run.journal.ARG_KINDS: a header is checked before a resume takes anything from it).
ARG_CHECKS = {"models": "strs", "corpora": "strs?", "backends": "strs?", "oracle": "str?", "add_special": "bool",
              "parse_special": "bool", "known": "strs", "no_builtin_known": "bool", "max_chars": "count?",
              "all": "bool", "ops": "str?", "skip_special": "bool",
              "clean_up_spaces": "str?", "spaces_between_specials": "bool", "remove_special": "bool",
              "stream_step": "count?", "timeout": "seconds?", "ray": "str?", "try_release": "strs?", "check": "bool",
              **CORPUS_ARG_CHECKS}
# (--ray is stored too, but taken apart: where a run is judged does not change its results, so a
# resume may name another cluster; see resumed_ray)
RESUMED = tuple(k for k in ARG_CHECKS if k != "ray")
PATHS = ("models", "corpora", "known")  # made absolute: a resume may start in another folder


def once_each(models: list[str], quiet: bool) -> list[str]:
    """The models, each once: one given twice (the same name, or the same file) would be judged and
    counted twice."""
    from tokparity.run.journal.resume import stored_args

    seen: dict[object, str] = {}
    for spec in models:
        key = stored_args(argparse.Namespace(m=spec), ("m",), ("m",))["m"]
        if key in seen:
            if not quiet:
                print(f"tokparity: {spec} is given twice (as {seen[key]} before); judged once", file=sys.stderr)
            continue
        seen[key] = spec
    return list(seen.values())


# What a run writes in its -o folder: no input may be one of them (the journal would overwrite it),
# and none may be there already as a symbolic link or a folder (the run would write through it).
OUTPUTS = ("cases.jsonl", "report.html", "mismatches.csv", "summary.md", "summary.json", "fuzz-findings.jsonl",
           "fuzz-findings.jsonl.partial")


def refuse_inputs_in_outputs(out: Path, inputs: dict[str, list[str] | None], junit: str | None = None) -> None:
    """Refused before anything is written: a corpus, known-divergences file or model that is the -o
    folder or a file the run writes there (``compare -c D/cases.jsonl -o D``); a symbolic link or a
    folder where the run writes a file of its own in -o (a link to a file elsewhere would be
    overwritten); ``--junit`` or ``$GITHUB_STEP_SUMMARY`` naming an input or a file of the run."""
    from tokparity.errors import TokparityError

    written = [out] + [out / name for name in OUTPUTS]
    # (an input that is no file, a built-in corpus name like 'edge' or a zoo model's name, is not at risk)
    existing = {option: [f for v in values or [] for f in _files_of(v, every=option == "-c")]
                for option, values in inputs.items()}
    for option, values in existing.items():
        for value in values:
            path = Path(os.path.expanduser(value))
            if any(_same_file(path, w) for w in written):
                what = "the report folder" if _same_file(path, out) else "a file the run writes there"
                raise TokparityError(f"{option} {value}: is {what} (-o {out}); the run would overwrite it: copy it "
                                     "elsewhere first, or choose another -o folder")
    if _in_cache(out) or _own(out):
        where = "tokparity's cache" if _in_cache(out) else "tokparity itself"
        raise TokparityError(f"-o {out}: is a folder of {where}; the run writes its reports there: choose another "
                             "-o folder")
    for path in written[1:]:
        # (a hard link's other name may be anywhere: the journal key, a zoo file, tokparity's own)
        if path.is_symlink() or (path.exists() and not path.is_file()) or _names(path) > 1:
            what = ("a symbolic link" if path.is_symlink() else "a folder" if path.is_dir() else
                    "not a regular file" if not path.is_file() else f"a hard link ({_names(path)} names for one file)")
            raise TokparityError(f"{path}: is {what}, where the run writes a file of its own; it writes nothing "
                                 "through it: remove it, or choose another -o folder")
    ci_files: list[tuple[str, str | None, str]] = [
        ("--junit", junit, "overwrite it with JUnit XML"),
        ("$GITHUB_STEP_SUMMARY", os.environ.get("GITHUB_STEP_SUMMARY"), "append the summary to it")]
    for option, named, does in ci_files:
        if not named:
            continue
        path = Path(os.path.expanduser(named))
        taken = next((f"{name} {v}" for name, values in existing.items() for v in values
                      if _same_file(path, Path(os.path.expanduser(v)))), None)
        if taken is None and any(_same_file(path, w) for w in written):
            taken = f"a file the run writes in -o {out}"
        if taken is None:
            taken = _read_by_the_run(path, [Path(os.path.expanduser(v)) for v in existing.get("MODEL", [])])
        if taken is None:  # (a file not there yet that a corpus glob would read, the next run or a resume)
            taken = next((f"a file the corpus glob -c {p} stands for" for p in inputs.get("-c") or []
                          if _matches(path, p)), None)
        if taken is not None:
            raise TokparityError(f"{option} {named}: is {taken}; the run would {does}: name another file")
        if option == "$GITHUB_STEP_SUMMARY" and _names(path) > 1:  # (appended to: not replaced, as --junit is)
            raise TokparityError(f"{option} {named}: is a hard link ({_names(path)} names for one file); appending "
                                 "would change that file under every name: name a file of its own")
        what = not_a_summary(path) if option == "$GITHUB_STEP_SUMMARY" else ""
        if what:
            raise TokparityError(f"{option} {named}: is {what}; a step summary is a Markdown file (no suffix, .md or "
                                 ".txt): name another file")
    if junit:  # (after the checks above, which name the input it is)
        refuse_unsafe_output("--junit", junit)


def _matches(path: Path, pattern: str) -> bool:
    """Whether ``path`` is a file the corpus glob ``pattern`` matches, there already or not (a ``*``
    of the pattern is taken to match a ``/`` too: a near miss is refused, not written)."""
    import fnmatch
    import glob

    from tokparity.corpus.pipeline import split_options

    pattern = split_options(pattern)[0]
    if not glob.has_magic(pattern):
        return False
    return fnmatch.fnmatchcase(os.path.abspath(path), os.path.abspath(os.path.expanduser(pattern)))


def _files_of(value: str, every: bool = False) -> list[str]:
    """The files an input names: itself where it exists, and the files a glob or a folder of corpus
    files stands for (``corpus_files``); ``every``: a saved dataset's description files too (a
    corpus). A built-in corpus's name names no file here (``_own``)."""
    from tokparity.corpus.pipeline import corpus_files
    from tokparity.errors import TokparityError

    path = Path(os.path.expanduser(value))
    try:
        found = [str(f) for f, _ in corpus_files(value)]
    except (TokparityError, OSError):
        found = []
    # (a saved dataset's description files too: state.json and dataset_dict.json say where its rows are)
    described = [str(d) for d in (path / "dataset_dict.json", path / "state.json", *path.glob("*/state.json"))
                 if d.is_file()] if every and path.is_dir() else []
    return list(dict.fromkeys(([value] if path.exists() else []) + found + described))


def _read_by_the_run(path: Path, models: list[Path]) -> str | None:
    """What ``path`` is, if the run reads it: a file of a local model (``files_read_with``), or a file
    of tokparity's cache (the zoo's models, the releases' virtualenvs, the key that signs journals),
    there already or not; else None."""
    from tokparity.textview import shown_path
    from tokparity.zoo.model_file import files_read_with

    for model in models if path.is_file() else ():
        if any(_same_file(path, read) for read in files_read_with(model)):
            return f"a file of the model {shown_path(model)}"
    # (a file of the cache that is not there yet too: the run may make it, the journal key first)
    return IN_CACHE if _in_cache(path) else OWN if _own(path) else None


IN_CACHE = "a file of tokparity's cache (zoo models, releases, the key that signs journals)"
OWN = "a file of tokparity's own (its code, its shipped lists, its built-in corpora)"


def _own(path: Path) -> bool:
    """Whether ``path`` is in tokparity's package or its built-in corpora (``-c edge``)."""
    import tokparity
    from tokparity.corpus import corpora_dir
    from tokparity.errors import TokparityError

    folders = [Path(os.path.realpath(Path(tokparity.__file__).parent))]
    try:
        folders.append(Path(os.path.realpath(corpora_dir())))
    except TokparityError:  # (no built-in corpora here: none to protect; said where one is asked for)
        pass
    named = (Path(os.path.abspath(path)), Path(os.path.realpath(path)))
    return any(p.is_relative_to(f) for f in folders for p in named)


def _in_cache(path: Path) -> bool:
    from tokparity.errors import TokparityError
    from tokparity.zoo import cache_dir

    try:
        cache = Path(os.path.realpath(cache_dir()))
    except TokparityError:  # (a cache that cannot be a folder holds nothing to protect; said when it is used)
        return False
    return any(p.is_relative_to(cache) for p in (Path(os.path.abspath(path)), Path(os.path.realpath(path))))


def refuse_unsafe_output(option: str, named: str, inputs: tuple[str, ...] = ()) -> None:
    """A file written where the user names it (``--junit``, ``convert -o``), refused before anything is
    written when it is there already as a symbolic link, a device, a FIFO or a folder (renamed over,
    the link or the device itself is replaced: ``--junit /dev/full`` as root), when it is a file of
    tokparity's cache, or one of ``inputs``."""
    from tokparity.errors import TokparityError
    from tokparity.textview import shown_path

    path = Path(os.path.expanduser(named))
    if path.is_symlink() or (path.exists() and not path.is_file()):
        what = "a symbolic link" if path.is_symlink() else "a folder" if path.is_dir() else "a device or a FIFO"
        raise TokparityError(f"{option} {shown_path(named)}: is {what}; tokparity writes a regular file of its own "
                             "there: name another file")
    if _in_cache(path):  # (there already or not: the run may make it, the journal key first)
        raise TokparityError(f"{option} {shown_path(named)}: is {IN_CACHE}; name another file")
    if _own(path):
        raise TokparityError(f"{option} {shown_path(named)}: is {OWN}; name another file")
    if any(_same_file(path, Path(os.path.expanduser(i))) for i in inputs):
        raise TokparityError(f"{option} {shown_path(named)}: is the file it reads; name another file")
    # (whatever else it may be, an engine's file found through a shell's words or a package's
    # folder: a JUnit file replaces only a JUnit file, or an empty one)
    if option == "--junit" and path.is_file() and not junit_or_empty(path):
        raise TokparityError(f"{option} {shown_path(named)}: is a file that holds no JUnit report; tokparity "
                             "replaces only a JUnit report there: name another file, or remove it first")


def _names(path: Path) -> int:
    """How many hard links a regular file has (0: none there)."""
    try:
        return os.stat(path).st_nlink if path.is_file() else 0
    except OSError:
        return 0


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of symlinks, a name the system refuses: not ours
        return False


def write_reports_or_say(results, out: Path, command: str, backends: list[str] | None = None) -> dict[str, Path]:
    """The reports, or one line naming the file that could not be written (a full disk, a folder
    made read-only): the journal keeps every case, so a resume writes them again. ``backends``: those
    named with -b; a run that judged none of them is titled "nothing compared" (``with_nothing_compared``)."""
    from tokparity.errors import TokparityError
    from tokparity.report import write_reports

    try:
        return write_reports(with_nothing_compared(results, backends), out)
    except OSError as e:
        where = e.filename or out
        raise TokparityError(f"{where}: cannot write the report ({e.strerror or e}); every case is in "
                             f"{out / 'cases.jsonl'}: free space, then 'tokparity {command} --resume {out}'") from None


def compare_options(args: argparse.Namespace):
    from tokparity.errors import TokparityError
    from tokparity.reference.decode import DecodeSettings
    from tokparity.run.known import load_known
    from tokparity.run.ops import parse_ops
    from tokparity.run.options import DEFAULT_MAX_CHARS, CompareOptions, Services, progress_to_stderr, tick_on_terminal

    ops = parse_ops(getattr(args, "ops", None) or "encode")
    clean_up = getattr(args, "clean_up_spaces", None)
    if clean_up not in (None, "on", "off"):  # (a journal's stored value: argparse checks a typed one)
        raise TokparityError(f"--clean-up-spaces {clean_up!r}: give on or off")
    spaced = bool(getattr(args, "spaces_between_specials", False))
    removed = bool(getattr(args, "remove_special", False))
    if (clean_up is not None or spaced or removed) and "decode" not in ops:
        raise TokparityError("--clean-up-spaces, --spaces-between-specials and --remove-special are settings of "
                             "decode: add --ops decode (or all); streams never take them")
    from tokparity.backends.registry import release_of
    releases = tuple(getattr(args, "try_release", None) or ())
    wanted = []
    for name in releases:  # every name's spelling and backend checked before any install
        release = release_of(name)
        if release is None:
            raise TokparityError(f"--try-release {name!r}: give BACKEND@VERSION, a library backend at a release "
                                 "(e.g. sentencepiece@0.2.0)")
        wanted.append(release)
    for release in wanted:
        if not release.installed_here():  # installed now, so that a release that cannot be is said before any run
            from tokparity.backends.releases import python_for
            python_for(release)
    return CompareOptions(add_special=args.add_special, parse_special=args.parse_special, oracle=args.oracle,
                          releases=releases,
                          ops=ops, diagnose=not getattr(args, "no_diagnose", False),
                          checks=bool(getattr(args, "check", False)),
                          decoding=DecodeSettings(bool(getattr(args, "skip_special", False)),
                                                  {"on": True, "off": False}.get(clean_up or ""), spaced, removed),
                          stream_step=getattr(args, "stream_step", None) or 1,
                          explicit_backends=bool(args.backends),
                          engine_folder=getattr(args, "engine_folder", None),
                          services=Services(progress=None if args.quiet else progress_to_stderr,
                                            ticker=None if args.quiet else tick_on_terminal,
                                            known=load_known(args.known, builtin=not args.no_builtin_known)),
                          max_chars=DEFAULT_MAX_CHARS if args.max_chars is None else (args.max_chars or None),
                          jobs=args.jobs or os.cpu_count() or 1, timeout=args.timeout, ray=getattr(args, "ray", None))


def resumed_ray(given: str | None, header: dict) -> str | None:
    """--ray of a resumed run: the one given now (another cluster, say), else the interrupted
    run's, so that a Ray run continues on Ray."""
    return given if given is not None else header.get("args", {}).get("ray")


def run(args: argparse.Namespace) -> int:
    from tokparity.backends.registry import labelled_with_oracle
    from tokparity.commands.arguments import checked, corpus_specs
    from tokparity.corpus.base import CHATS
    from tokparity.errors import ServerGone, TokparityError
    from tokparity.report import clear_reports
    from tokparity.report.build import not_opened as models_not_opened
    from tokparity.report.ci import write_ci_outputs
    from tokparity.report.plain import summary_lines, terminal_columns
    from tokparity.report.writeup import plural
    from tokparity.run.chat import CHAT_MODELS
    from tokparity.run.driver import run_compare
    from tokparity.run.journal import Journal
    from tokparity.run.journal.resume import stored_args, take_args
    from tokparity.run.options import DEFAULT_CORPORA, DEFAULT_MODELS
    from tokparity.zoo import distinct_names, named_path
    # (named before a resume compares the models given now with the ones it stored, named so)
    args.models = distinct_names(once_each(list(args.models), args.quiet))
    journal = None
    if args.resume:
        journal = Journal.reopen(args.resume, "compare", arg_checks=ARG_CHECKS, trust=args.trust_journal)
        take_args(args, journal.header, args.resume, "compare", PATHS, RESUMED)
        args.ray = resumed_ray(args.ray, journal.header)
    elif args.trust_journal:
        raise TokparityError("--trust-journal goes with --resume DIR (it trusts the journal in DIR)")
    if args.timeout is not None:  # (here too: a resumed run's comes from its journal)
        check_seconds("--timeout", args.timeout)
    if args.jobs < 0:
        raise TokparityError(f"--jobs must be 0 (one per CPU) or more, not {args.jobs}")
    from tokparity.run.ops import parse_ops
    if args.ray is not None and parse_ops(args.ops or "encode") != ("encode",):
        raise TokparityError(f"--ops {args.ops}: a Ray run judges encode only (its driver feeds texts, not the id "
                             "sequences the other ops decode); run the other ops without --ray, with -j N")
    labelled_with_oracle(args.backends or [], args.oracle)  # two backends under one name: refused before any run
    if args.max_chars is not None:  # (again: a resumed run's arguments come from its journal)
        args.max_chars = checked("--max-chars", non_negative_int, args.max_chars)
    models = list(args.models)  # (stored with their names: a resume gives each model the same name)
    if getattr(args, "all", False):
        from tokparity.zoo.manifest import load_manifest
        models += [m for m in load_manifest().models if m not in models]
    chat = parse_ops(args.ops or "encode") == ("chat",)
    models = models or list(CHAT_MODELS if chat else DEFAULT_MODELS)
    corpora = corpus_specs(args.corpora or ([CHATS] if chat else list(DEFAULT_CORPORA)), args)
    out = Path(args.out) if args.out else Path("reports") / time.strftime("%Y%m%d-%H%M%S")
    try:
        model_paths = [str(named[1]) if (named := named_path(m)) is not None else m for m in models]
        refuse_inputs_in_outputs(out, {"-c": args.corpora, "--known": args.known, "MODEL": model_paths,
                                       "-b": engine_files(args.backends, getattr(args, "engine_folder", None))}, args.junit)
        options = compare_options(args)
        if journal is None:
            clear_reports(out)  # an earlier run's: they would speak for this one (a file not ours: refused)
            journal = Journal.create(out, "compare", stored_args(args, RESUMED + ("ray",), PATHS), corpora,
                                     models=stored_args(args, ("models",), PATHS)["models"])
        options.services.journal = journal
        try:
            results = run_compare(models, corpora, args.backends, options)
        except ServerGone as e:  # (the cases judged are in the journal)
            raise TokparityError(f"{e}: tokparity compare --resume {shown_path(out)}") from None
        gone = journal.gone()  # (before the reports make the folder again)
        if gone and journal.folder_replaced() and os.path.lexists(out):  # (a link planted in its place)
            raise TokparityError(f"{gone}, and {shown_path(out)} is another folder now: no report is written into "
                                 "it; run again into a folder nothing else changes")
        paths = write_reports_or_say(results, out, "compare", args.backends)  # (the journal's lock held)
        if gone:
            raise TokparityError(f"{gone}: the reports are written from what the run held ({out}), but no "
                                 "--resume can continue it; run it again into a folder nothing else removes")
    finally:
        if journal is not None:
            journal.close()
    if not results.runs and not results.interrupted:  # e.g. -b ref --oracle ref: no ✅ for comparing nothing
        unjudged = [note for note in results.options.get("unavailable", [])
                    if "are not judged" in note or "nothing to judge" in note]
        raise TokparityError(f"nothing was compared: {unjudged[0]}" if unjudged else
                             "nothing was compared: no backend other than the oracle ran on any model; name one "
                             "with -b that is not the --oracle")
    if not any(r.cases for r in results.runs) and not results.interrupted:  # an empty corpus: no ✅ either
        unjudged = [note for note in results.options.get("unavailable", []) if "nothing to judge" in note]
        if unjudged:
            raise TokparityError(f"nothing was compared: {'; '.join(unjudged)}")
        from tokparity.corpus.pipeline import split_options
        given = ", ".join(shown_path(split_options(c)[0]) for c in corpora)  # (not the reading options' inner key)
        raise TokparityError(f"nothing was compared: no case was judged on any backend (the corpora "
                             f"{given} gave no text to judge, or every backend skipped every case); "
                             f"the reports are in {out}")
    refuse_silent_templates(results, out)
    refuse_named_unjudged(results, args.backends or [], out)
    write_ci_outputs(results, paths, args.junit, "compare")
    print("\n".join(summary_lines(results, terminal_columns())))
    print(f"reports: {shown_path(paths['report.html'])}")  # (a folder name's escape sequence spelled out)
    if results.interrupted:
        print("tokparity: interrupted; the reports cover the cases done; continue with: "
              f"tokparity compare --resume {shown_path(out)}{journal.resume_flags if journal else ''}", file=sys.stderr)
        return 130
    not_opened = models_not_opened(results)
    if not_opened:  # (after the reports and the CI's files: they cover the other models)
        more = f" (and {plural(len(not_opened) - 1, 'other model')}, in summary.md)" if len(not_opened) > 1 else ""
        raise TokparityError(f"{not_opened[0]}{more}; the reports cover the other models: {shown_path(out)}")
    return 1 if results.unexplained or results.files_broken else 0
