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
    """The whole test suite, with every backend library installed (nothing skips)."""
    _install(session, "all,test")
    _ensure_chromium(session)
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def parity(session: nox.Session) -> None:
    """The main job on the built-in default: fetch the zoo, then inspect every model.

    (The parity run proper, `tokparity compare` over the zoo and the corpora, replaces the
    inspect step when the compare command lands.)
    """
    _install(session, "all")
    session.run("tokparity", "zoo", "fetch")
    session.run("tokparity", "inspect", "--all")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: medians and ratios against the other implementations, measured in one run."""
    _install(session, "all,test")
    for script in sorted(__import__("pathlib").Path("benchmarks").glob("bench_*.py")):
        session.run("python", str(script), *session.posargs)
