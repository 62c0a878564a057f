"""``tokparity drift [MODEL…|--all] --library PACKAGE --from VERSION --to VERSION [-c CORPUS]… [-o DIR]``.

What a library bump changes, before it is installed: every case of the corpora through the
library's backend at both releases (``-b BACKEND@FROM -b BACKEND@TO``, releases.py), the old
release the oracle, with no known-divergence list (any change is one), diagnosed and reported as
``compare`` does. Exit status 0 when nothing changed, 1 when anything did, 2 on bad input.
"""

from __future__ import annotations

import argparse

from tokparity.commands.arguments import add_corpus_options, non_negative_int, timeout_seconds


def libraries() -> dict[str, str]:
    """{PyPI package: the backend that runs it}: the libraries a drift can bump."""
    from tokparity.backends.registry import BUILTIN
    return {spec.package: spec.name for spec in BUILTIN.values() if spec.package and spec.role and not spec.starts_server}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "drift", help="what a library bump changes: every case through two releases of one library",
        description="Run every case of the corpora through the backend of one library at two releases (each "
                    "installed once into a cached virtualenv), judge the new release against the old, name the "
                    "root cause of each change by reproducing it, and write the reports as compare does. Exit "
                    "status 0: nothing changed; 1: something did; 2: bad input.")
    p.add_argument("models", nargs="*", metavar="MODEL", help="zoo name, file, folder or hf:ORG/NAME (default: the "
                                                              "default models that have the library's file)")
    p.add_argument("--all", action="store_true", help="every zoo model that has the library's file (the "
                                                      "before-you-bump check of a CI job)")
    p.add_argument("--library", required=True, metavar="PACKAGE",
                   help="the library bumped, by its PyPI name: " + ", ".join(
                       f"{package} ({backend})" for package, backend in libraries().items()))
    p.add_argument("--from", required=True, dest="old", metavar="VERSION", help="the release used now")
    p.add_argument("--to", required=True, dest="new", metavar="VERSION", help="the release to bump to")
    p.add_argument("-c", "--corpus", action="append", dest="corpora", metavar="CORPUS",
                   help="as compare's -c (default: all)")
    add_corpus_options(p)
    p.add_argument("--ops", metavar="OPS", help="as compare's --ops (default: encode)")
    p.add_argument("--add-special", action="store_true", help="encode with add_special (BOS/EOS as the model says)")
    p.add_argument("--parse-special", action="store_true", help="parse special-token text in the input")
    p.add_argument("-o", "--out", metavar="DIR", help="report folder (default: reports/<timestamp>/)")
    p.add_argument("--max-chars", type=non_negative_int, metavar="N", help="as compare's --max-chars")
    p.add_argument("--timeout", type=timeout_seconds, metavar="SECONDS",
                   help="per case, for each release's child process (default: 10)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="as compare's --jobs")
    p.add_argument("--no-diagnose", action="store_true", help="name no root causes (classes only)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tokparity.backends.registry import backends_for, release_of
    from tokparity.backends.releases import VERSION, python_for
    from tokparity.commands import compare
    from tokparity.commands.arguments import OneLineParser
    from tokparity.errors import TokparityError
    from tokparity.run.options import DEFAULT_MODELS
    from tokparity.zoo import resolve_model

    known = libraries()
    backend = known.get(args.library)
    if backend is None:
        raise TokparityError(f"--library {args.library!r}: not a library tokparity runs; give one of "
                             f"{', '.join(known)}")
    for flag, version in (("--from", args.old), ("--to", args.new)):
        if not VERSION.fullmatch(version):
            raise TokparityError(f"{flag} {version!r}: not a release number of {args.library} (e.g. 1.2.3)")
    if args.old == args.new:
        raise TokparityError(f"--from and --to are both {args.old}: give two releases of {args.library}")
    if args.all and args.models:
        raise TokparityError("--all or MODEL…: choose one")
    if args.all:
        from tokparity.zoo.manifest import load_manifest
        specs = list(load_manifest().models)
    else:
        specs = list(args.models or DEFAULT_MODELS)
    models: list[str] = []
    without: list[str] = []
    for spec in specs:
        (models if backend in backends_for(resolve_model(spec)) else without).append(spec)
    if not models:
        raise TokparityError(f"none of the models has a file {backend} ({args.library}) reads: "
                             f"{', '.join(specs[:8])}{' …' if len(specs) > 8 else ''}")
    old, new = f"{backend}@{args.old}", f"{backend}@{args.new}"
    if not args.quiet:
        print(f"drift: {args.library} {args.old} → {args.new} ({backend}) on {len(models)} model(s)"
              + (f"; without a file it reads, not run: {', '.join(without)}" if without else ""), flush=True)
    for name in (old, new):  # installed first: a release that cannot be is one line, before any model
        release = release_of(name)
        if release is not None and not release.installed_here():
            python_for(release)
    # A release that cannot load a model is a change too (or, where neither can, none): said here,
    # and the model left out of the case-by-case run, which needs both.
    unloadable = {spec: _load_failures(spec, (old, new)) for spec in models}
    loads_changed = False
    for spec, failed in unloadable.items():
        for name, why in failed.items():
            print(f"drift: {spec}: {name} cannot load it: {why}", flush=True)
        # (a release that only ran out of time says nothing of what it would give: no change counted)
        refused = [name for name, why in failed.items() if "did not start within" not in why]
        if len(refused) == 1 and len(failed) == 1:
            other = new if old in failed else old
            print(f"drift: {spec}: {other} loads it: a change of the bump", flush=True)
            loads_changed = True
    models = [spec for spec in models if not unloadable[spec]]
    if not models and not loads_changed:  # (neither release loads any model: no verdict, not "no change")
        raise TokparityError(f"nothing was compared: no model loads in both {old} and {new} (each said above); "
                             "fix the model files (or give a release that did not start in time another try)")
    if not models:
        return 1
    argv = ["compare", *models, "-b", old, "-b", new, "--oracle", old, "--no-builtin-known"]
    for corpus in args.corpora or []:
        argv += ["-c", corpus]
    for flag, value in (("--text-column", args.text_column), ("--id-column", args.id_column),
                        ("--sample", args.sample), ("--fraction", args.fraction), ("--seed", args.seed),
                        ("--ops", args.ops), ("-o", args.out), ("--max-chars", args.max_chars),
                        ("--timeout", args.timeout), ("-j", args.jobs)):
        if value is not None:
            argv += [flag, str(value)]
    argv += [flag for flag, on in (("--add-special", args.add_special), ("--parse-special", args.parse_special),
                                   ("--no-diagnose", args.no_diagnose), ("-q", args.quiet)) if on]
    parser = OneLineParser(prog="tokparity")
    compare.add_parser(parser.add_subparsers(dest="command"))
    code = compare.run(parser.parse_args(argv))
    return max(code, 1) if loads_changed else code


def _load_failures(spec: str, releases: tuple[str, ...]) -> dict[str, str]:
    """{release: why} for each of ``releases`` that cannot load model ``spec``."""
    from tokparity.backends.registry import make_backend
    from tokparity.errors import TokparityError
    from tokparity.zoo import resolve_model

    failed = {}
    model = resolve_model(spec)
    for name in releases:
        try:
            make_backend(name, model).close()
        except TokparityError as e:
            failed[name] = str(e)
    return failed

