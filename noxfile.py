"""nox sessions: the README's commands and CI run through these.

Sessions reuse their virtualenv, so llama-cpp-python (a 7-minute compile on 2 cores) is built
once per machine: the first build lands in pip's wheel cache, later venvs install the wheel.
"""

from __future__ import annotations

import os
import shutil

import nox

nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = True


def _install(session: nox.Session, extras: str) -> None:
    # Not editable: the tests see the package as a user installs it (package data included).
    session.install(f".[{extras}]")


def _ensure_chromium(session: nox.Session) -> None:
    """The report tests open report.html in Debian's Chromium (driven by Playwright, which needs no
    browser download of its own). Install it where we can; say so loudly where we cannot."""
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True,
                    env={"DEBIAN_FRONTEND": "noninteractive"})
    else:
        session.warn("CHROMIUM IS MISSING: the browser test of the HTML report will fail; "
                     "install Debian's 'chromium' package (sudo apt-get install chromium)")


@nox.session
def tests(session: nox.Session) -> None:
    """The examples in the package's docstrings (doctests), then the whole test suite, with every
    backend library installed (nothing skips)."""
    _install(session, "all,test")
    _ensure_chromium(session)
    # Most tests start `python -m tokparity` from this checkout. Where Python is told to write no
    # byte-code (PYTHONDONTWRITEBYTECODE), each of those runs compiles the package again: half a
    # second a run, a quarter of a test file's time. compileall writes it all the same, once.
    session.run("python", "-m", "compileall", "-q", "tokparity", "tests", "examples", "tools")
    # `python -m` puts the checkout first on sys.path, so the doctests import the same modules as
    # the tests. A module whose optional library is missing is skipped, not a collection error.
    session.run("python", "-m", "pytest", "-q", "--doctest-modules", "--doctest-ignore-import-errors", "tokparity")
    # On every core (pytest-xdist): a test goes to whichever worker is free; a group stays on one
    # (tests/conftest.py). `-n 0` among the arguments runs it in one process.
    session.run("python", "-m", "pytest", "-n", "auto", "--dist", "loadgroup", *session.posargs)


# The fast tier (every push) and the heavy tier (nightly, or before a release). Times measured on
# a 2-core machine with the zoo cached and the virtualenv built; the README quotes them.
FUZZ_MODELS = ("llama-spm", "llama-bpe", "botchan-unigram", "nomic-bert-moe")


# For parity and parity-all, exit 1 (an unexplained mismatch) is the verdict, not a broken session:
# the reports say what diverged; a failure of tokparity itself (exit 2) still fails the session.

@nox.session
def parity(session: nox.Session) -> None:
    """The main job on the built-in default: a handful of zoo models (one per algorithm) × all
    corpora × every backend their files allow; HTML, CSV, Markdown and JSON into reports/parity/."""
    _install(session, "all")
    session.run("tokparity", "compare", "-q", "-o", "reports/parity", *session.posargs, success_codes=[0, 1])


@nox.session(name="parity-all")
def parity_all(session: nox.Session) -> None:
    """The heavy tier: every zoo model (262k-token vocabularies included) × all corpora."""
    _install(session, "all")
    session.run("tokparity", "zoo", "fetch")
    session.run("tokparity", "compare", "--all", "-q", "-o", "reports/parity-all", *session.posargs,
                success_codes=[0, 1])


def _fuzz(session: nox.Session, seconds: int) -> None:
    _install(session, "all")
    session.run("tokparity", "zoo", "fetch", *FUZZ_MODELS)
    for model in FUZZ_MODELS:
        session.run("tokparity", "fuzz", model, "-b", "ref", "--seconds", str(seconds), "--seed", "0",
                    "-o", f"reports/fuzz-{model}", *session.posargs, success_codes=[0, 1])


@nox.session
def fuzz(session: nox.Session) -> None:
    """Time-boxed fuzzing (seeded generators and Hypothesis, shrunk findings) of the reference
    against each model's oracle: 60 s per model."""
    _fuzz(session, 60)


@nox.session(name="fuzz-long")
def fuzz_long(session: nox.Session) -> None:
    """The heavy tier of fuzzing: 15 minutes per model."""
    _fuzz(session, 900)


@nox.session
def regress(session: nox.Session) -> None:
    """Every model with committed goldens (tests/goldens) against today's libraries, every op, then
    the prompts of the models with chat templates: exit 1 names each case whose ids, decoded text or
    prompt changed (reports in reports/regress/ and reports/regress-chat/). `nox -s regress --
    --update` regenerates the goldens instead, for review in the diff."""
    _install(session, "all")
    if "--update" in session.posargs:
        session.run("tokparity", "regress", "-q", "--goldens", "tests/goldens", *session.posargs)
        return
    session.run("tokparity", "regress", "-q", "--goldens", "tests/goldens", "-o", "reports/regress", "--ops", "all",
                *session.posargs)
    session.run("tokparity", "regress", "-q", "--goldens", "tests/goldens", "-o", "reports/regress-chat",
                "--ops", "chat", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (pyflakes, pycodestyle, bugbear, pyupgrade, import order) and mypy."""
    session.install("ruff>=0.6", "mypy>=1.10")
    session.run("ruff", "check", "tokparity", "tools", "tests", "benchmarks", "examples", "noxfile.py")
    session.run("mypy", "tokparity", "tools")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: mkdocs build --strict (every warning fails: broken internal links and
    anchors, generated pages out of step with the code) into site/. External links are not checked."""
    _install(session, "docs")
    # Material 9.7+ prints a notice about MkDocs 2.0 on every build (docs/about.md says what it means).
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs,
                env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: medians and ratios against the other implementations, measured in one run."""
    _install(session, "all,test")
    # Every script runs even when an earlier one misses a target; the session fails at the end.
    failed = []
    for script in sorted(__import__("pathlib").Path("benchmarks").glob("bench_*.py")):
        try:
            session.run("python", str(script), *session.posargs)
        except nox.command.CommandFailed:
            failed.append(script.name)
    session.run("python", "benchmarks/benchlib.py", "--join")
    if failed:
        session.error(f"targets not met (or a benchmark failed): {', '.join(failed)}; see reports/bench/")


@nox.session
def robustness(session: nox.Session) -> None:
    """The hostile-input campaigns. First the command line's (tools.robustness.campaign):
    hostile arguments, corpora, journals, engines, signals and tokenizer.json files, output-folder
    traps, concurrent writers, compression bombs, hand-edited runs for explain and a hostile
    environment, each run as a user would; exit status 1 on any traceback, hang, orphan process,
    lost case, unclear exit or file written that the run must not write
    (reports/hostile-campaign/campaign.jsonl). Then the hostile-loader campaign: random hostile
    variants of the small zoo files loaded in a sandboxed child for 10 minutes (or `-- --seconds
    N`), the inputs with a bad outcome in reports/hostile-loaders/. Then the robustness tests."""
    _install(session, "all,test")
    session.run("python", "-m", "tools.robustness.campaign", "-o", "reports/hostile-campaign")
    session.run("python", "-m", "tools.robustness.loaders", "--seconds", "600", "--seed", "1", *session.posargs)
    session.run("python", "-m", "pytest", "-q", "tests/robustness")
