"""A backend at another release of its library: ``-b hf@0.21.4``, ``-b old=sentencepiece@0.2.0``.

The release gets a virtualenv of its own, made once and kept in the cache
(``$TOKPARITY_CACHE/releases/tokenizers-0.21.4-py311/``, one lock per release so that two
processes never build it at once, and a ``ready.json`` written last so that an interrupted
install is made again, not used). pip installs ``PACKAGE==VERSION`` there with its
dependencies, reading the user's own pip settings (index, mirror, proxy, wheel cache: a compiled
release such as llama-cpp-python is built from source once, then comes from pip's wheel cache).

The backend then runs in a child process (``isolated.py``) on that virtualenv's Python: the
release's own packages come first, and a ``.pth`` file adds this tokparity's site folders after
them (named in the child's environment: one cached virtualenv serves every tokparity of the
machine), so that the child imports this very tokparity and whatever it needs that the release
does not bring. Its reports call it by the name it was asked by (``hf@0.21.4``, or ``old``), and its
version is the release the child imported.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tokparity.errors import TokparityError

# The version part of NAME@VERSION: a release as PyPI spells them (PEP 440), nothing a shell or
# pip could read as an option or a second requirement.
VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]*")
INSTALL_TIMEOUT_S = 3600  # a llama-cpp-python build takes about 7 minutes on 2 cores; a stuck index, forever
READY = "ready.json"
PARENT_SITE = "tokparity-parent-site.pth"
# Packages built from source on install (no wheel on PyPI for Linux), and how long that takes once.
BUILT_FROM_SOURCE = {"llama-cpp-python": "a build from source of llama.cpp, about 7 minutes on 2 cores"}


class ReleaseError(TokparityError):
    """A release that cannot be had: unknown, not reachable, or not installable."""


@dataclass(frozen=True)
class Release:
    """Backend ``backend`` (a registry name) on release ``version`` of its library ``package``."""

    backend: str
    package: str
    module: str
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    def __str__(self) -> str:
        return f"{self.backend}@{self.version}"

    def installed_here(self) -> bool:
        """Whether this interpreter has this very release (then no virtualenv is needed)."""
        import importlib.metadata
        import importlib.util
        try:
            return importlib.metadata.version(self.package) == self.version and \
                importlib.util.find_spec(self.module) is not None
        except importlib.metadata.PackageNotFoundError:
            return False


def releases_dir() -> Path:
    from tokparity.zoo.fetch import cache_dir
    return cache_dir() / "releases"


def environment_dir(release: Release) -> Path:
    """Where ``release``'s virtualenv lives (one per release and Python version)."""
    return releases_dir() / f"{release.package}-{release.version}-py{sys.version_info[0]}{sys.version_info[1]}"


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def python_for(release: Release, say=None) -> Path:
    """The Python of ``release``'s virtualenv, made first if it is not in the cache (``say``:
    where progress lines go, stderr by default). ``ReleaseError`` in one line when it cannot be."""
    say = say or _to_stderr
    env = environment_dir(release)
    from tokparity.zoo.fetch import file_lock
    with file_lock(env.with_name(env.name + ".lock")):
        if (env / READY).is_file():  # made before, or by another process while this one waited
            _link_parent_site(env)
        else:
            _make(release, env, say)
    return _python(env)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _make(release: Release, env: Path, say) -> None:
    if env.exists():  # an install cut short (no ready.json): made again from nothing
        shutil.rmtree(env)
    slow = BUILT_FROM_SOURCE.get(release.package)
    say(f"installing {release.requirement} for backend {release} into {env} (once; "
        f"{slow + ', then from pip' + chr(39) + 's wheel cache' if slow else 'a minute or so'})")
    started = time.monotonic()
    try:
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, capture_output=True, text=True,
                       timeout=300)
        log = env / "pip-install.log"
        with open(log, "w", encoding="utf-8") as out:
            done = subprocess.run([str(_python(env)), "-m", "pip", "install", "--disable-pip-version-check",
                                   "--no-input", release.requirement], stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=INSTALL_TIMEOUT_S)
        if done.returncode != 0:
            raise ReleaseError(_install_failure(release, log.read_text("utf-8", "replace"), log))
        installed = _installed_version(env, release)
        if installed != release.version:
            raise ReleaseError(f"backend {release}: pip installed {release.package} {installed or '(nothing)'}, not "
                               f"{release.version}; the whole log: {log}")
        _link_parent_site(env)
    except subprocess.TimeoutExpired:
        _discard(env)
        raise ReleaseError(f"backend {release}: installing {release.requirement} took more than "
                           f"{INSTALL_TIMEOUT_S // 60} minutes; stopped (is the package index answering?)") from None
    except subprocess.CalledProcessError as e:
        _discard(env)
        raise ReleaseError(f"backend {release}: cannot make a virtualenv in {env} "
                           f"({(e.stderr or '').strip().splitlines()[-1:] or e}); "
                           "does this Python have its venv module (Debian: apt install python3-venv)?") from None
    except ReleaseError:
        _discard(env, keep_log=True)
        raise
    except BaseException:
        _discard(env)
        raise
    (env / READY).write_text(json.dumps({"package": release.package, "version": release.version,
                                         "python": sys.version.split()[0], "seconds": round(time.monotonic() - started)})
                             + "\n", "utf-8")
    say(f"installed {release.requirement} in {time.monotonic() - started:.0f} s")


def _discard(env: Path, keep_log: bool = False) -> None:
    """Remove a virtualenv that was not finished (its pip log kept beside it, for the error's reader)."""
    log = env / "pip-install.log"
    if keep_log and log.is_file():
        shutil.copy(log, env.with_name(env.name + ".pip-install.log"))
    shutil.rmtree(env, ignore_errors=True)


def _install_failure(release: Release, output: str, log: Path) -> str:
    """pip's failure, in one line: no such release, no index, or a build that failed."""
    kept = log.parent.with_name(log.parent.name + ".pip-install.log")  # (where _discard keeps it)
    listed = re.search(r"\(from versions: ([^)]*)\)", output)
    if listed and listed.group(1).strip() not in ("", "none"):
        versions = [v.strip() for v in listed.group(1).split(",")]
        return (f"backend {release}: {release.package} has no release {release.version} on the package index "
                f"(its latest: {', '.join(versions[-6:][::-1])})")
    if listed or re.search(r"NewConnectionError|Failed to establish|Temporary failure in name resolution|"
                           r"No route to host|Network is unreachable|ConnectTimeout|ProxyError", output):
        return (f"backend {release}: cannot install {release.requirement}: the package index is not reachable "
                "(offline?); installing a release needs the index pip is set up for (pip config list), "
                f"once per release; pip's log: {kept}")
    lines = [line.strip() for line in output.splitlines()]
    step = next((line.lstrip("× ").rstrip(".") for line in lines if line.startswith("×")), "")
    if step:  # a build from source that failed: the step, and the build's own last words
        ends = [i for i, line in enumerate(lines) if line == "[end of output]"]
        said = next((line for line in reversed(lines[:ends[0]]) if line), "") if ends else ""
        why = f"building it from source failed: {step}" + (f": {said}" if said else "")
    else:
        errors = [line[len("ERROR:"):].strip() for line in lines if line.startswith("ERROR:")]
        why = errors[0] if errors else next((line for line in reversed(lines) if line), "no output")
    return f"backend {release}: pip could not install {release.requirement} ({why[:300]}); the whole log: {kept}"


def _installed_version(env: Path, release: Release) -> str:
    done = subprocess.run([str(_python(env)), "-c", "import importlib.metadata as m, sys; "
                           "print(m.version(sys.argv[1]))", release.package], capture_output=True, text=True,
                          timeout=120)
    return done.stdout.strip() if done.returncode == 0 else ""


# The .pth line: the site folders of whichever tokparity starts the release's Python, read from
# the environment it gives the child (parent_site), so that one cached virtualenv serves every
# tokparity of the machine (a checkout, a nox session's, a user's), each with its own packages.
PARENT_SITE_LINE = ("import os, site; [site.addsitedir(p) for p in os.environ.get('TOKPARITY_PARENT_SITE', '')"
                    ".split(os.pathsep) if p]\n")


def parent_site() -> dict[str, str]:
    """The environment that makes a release's Python take this tokparity's site folders after its own."""
    folders = [p for p in (*site.getsitepackages(), site.getusersitepackages()) if os.path.isdir(p)]
    return {"TOKPARITY_PARENT_SITE": os.pathsep.join(folders)}


def _link_parent_site(env: Path) -> None:
    """The ``.pth`` in the release's site folder that adds the parent's site folders after it: the
    release's own packages win, tokparity and what it needs come from the parent. Written once pip
    is done (pip must see the virtualenv alone, or it would take the parent's packages for its own)
    and checked at every use (a virtualenv made by an older tokparity is brought up to date)."""
    pth = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / PARENT_SITE
    if not pth.is_file() or pth.read_text("utf-8") != PARENT_SITE_LINE:
        pth.write_text(PARENT_SITE_LINE, "utf-8")
