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

import contextlib
import json
import os
import re
import shutil
import signal
import site
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tokparity.child_python import killed_with_parent, python_argv
from tokparity.errors import ReleaseError

# The version part of NAME@VERSION: a release as PyPI spells them (PEP 440), nothing a shell or
# pip could read as an option or a second requirement.
VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]*")
INSTALL_TIMEOUT_S = 3600  # a llama-cpp-python build takes about 7 minutes on 2 cores; a stuck index, forever
READY = "ready.json"
PARENT_SITE = "tokparity-parent-site.pth"
# Packages built from source on install (no wheel on PyPI for Linux), and how long that takes once.
BUILT_FROM_SOURCE = {"llama-cpp-python": "a build from source of llama.cpp, about 7 minutes on 2 cores"}


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
            return same_version(importlib.metadata.version(self.package), self.version) and \
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
            try:
                _link_parent_site(env)
                return _python(env)
            except OSError as e:  # (its site folder gone, its .pth a folder: damaged by hand)
                say(f"backend {release}: its cached virtualenv {env} is damaged ({e.strerror or e}); made again")
        _make(release, env, say)
    return _python(env)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _make(release: Release, env: Path, say) -> None:
    slow = BUILT_FROM_SOURCE.get(release.package)
    say(f"installing {release.requirement} for backend {release} into {env} (once; "
        f"{slow + ', then from pip' + chr(39) + 's wheel cache' if slow else 'a minute or so'})")
    started = time.monotonic()
    log = env.with_name(env.name + ".pip-install.log")  # beside the virtualenv: kept when it is not
    try:
        log.unlink(missing_ok=True)  # (an earlier failure's)
        if env.exists():  # an install cut short (no ready.json): made again from nothing
            shutil.rmtree(env)
        _step(release, python_argv("-m", "venv", str(env)), log, 300, "making its virtualenv")
        _step(release, python_argv("-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                                    release.requirement, python=str(_python(env))), log, INSTALL_TIMEOUT_S, "installing it")
        installed = _installed_version(env, release)
        if not same_version(installed, release.version):
            raise ReleaseError(f"backend {release}: pip installed {release.package} {installed or '(nothing)'}, not "
                               f"{release.version}; the whole log: {log}")
        _link_parent_site(env)
        freeze = subprocess.run(python_argv("-m", "pip", "freeze", "--disable-pip-version-check", python=str(_python(env))),
                                capture_output=True, text=True, timeout=120, env=_isolated_env()).stdout.split()
        (env / READY).write_text(json.dumps({"package": release.package, "version": release.version,
                                             "python": sys.version.split()[0], "packages": freeze,
                                             "seconds": round(time.monotonic() - started)}) + "\n", "utf-8")
    except OSError as e:  # a full disk, a cache folder made read-only
        shutil.rmtree(env, ignore_errors=True)
        raise ReleaseError(f"backend {release}: cannot write {e.filename or env} ({e.strerror or e}); free space or "
                           "point TOKPARITY_CACHE at a folder you can write") from None
    except BaseException:
        shutil.rmtree(env, ignore_errors=True)
        raise
    log.unlink(missing_ok=True)  # (a failed one's log stays, for the error's reader)
    say(f"installed {release.requirement} in {time.monotonic() - started:.0f} s")


# A virtualenv with pip and one library takes 20 to 60 MB; with less room than this, a failed step is
# said to be the disk's.
ROOM_NEEDED = 128 << 20


def _step(release: Release, argv: list[str], log: Path, timeout: float, doing: str) -> None:
    """One step of an install, its output appended to ``log``; in a process group of its own, so
    that a timeout or Ctrl-C stops what it started too (pip's build of a compiled release)."""
    with open(log, "a", encoding="utf-8") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=_isolated_env(), start_new_session=True, preexec_fn=killed_with_parent)
        try:
            code = proc.wait(timeout=timeout)
        except BaseException as e:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(e, subprocess.TimeoutExpired):
                raise ReleaseError(f"backend {release}: {doing} ({release.requirement}) took more than "
                                   f"{timeout / 60:.0f} minutes; stopped (is the package index answering?); "
                                   f"its log: {log}") from None
            raise
    if code != 0:
        output = log.read_text("utf-8", "replace") if log.is_file() else ""
        free = shutil.disk_usage(log.parent).free
        if free < ROOM_NEEDED:  # (a full disk may leave no log to read, either)
            raise ReleaseError(f"backend {release}: {doing} failed with {free >> 20} MiB free in {log.parent}; free "
                               "space, or point TOKPARITY_CACHE at a folder with room")
        if doing == "making its virtualenv":
            said = next((line for line in reversed(output.splitlines()) if line.strip()), f"exit status {code}")
            raise ReleaseError(f"backend {release}: cannot make a virtualenv ({said.strip()[:200]}); does this Python "
                               f"have its venv module (Debian: apt install python3-venv)? Its log: {log}")
        raise ReleaseError(_install_failure(release, output, log))


def _isolated_env() -> dict[str, str]:
    """pip's and the new virtualenv's environment: none of this process's paths (pip would take a
    package on PYTHONPATH for one installed, and the version check would read it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "TOKPARITY_PARENT_SITE")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def same_version(a: str, b: str) -> bool:
    """Whether two spellings name one release (``0.21`` and ``0.21.0``), as pip compares them."""
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pragma: no cover - packaging comes with pip and every build tool
        return a == b
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _install_failure(release: Release, output: str, log: Path) -> str:
    """pip's failure, in one line: no such release, no index, or a build that failed."""
    kept = log
    listed = re.search(r"\(from versions: ([^)]*)\)", output)
    if listed and listed.group(1).strip() not in ("", "none"):
        versions = [v.strip() for v in listed.group(1).split(",")]
        return (f"backend {release}: {release.package} has no release {release.version} on the package index for "
                f"this Python and platform (its latest: {', '.join(versions[-6:][::-1])})")
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
    done = subprocess.run(python_argv("-c", "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))",
                                      release.package, python=str(_python(env))), capture_output=True, text=True,
                          timeout=120, env=_isolated_env())
    return done.stdout.strip() if done.returncode == 0 else ""


# The .pth line: the site folders of whichever tokparity starts the release's Python, read from
# the environment it gives the child (parent_site), so that one cached virtualenv serves every
# tokparity of the machine (a checkout, a nox session's, a user's), each with its own packages.
# (site runs the line with exec() inside a function: a comprehension's own scope would not see
# the names it imports, hence map and filter.)
PARENT_SITE_LINE = ("import os, site; list(map(site.addsitedir, filter(None, "
                    "os.environ.get('TOKPARITY_PARENT_SITE', '').split(os.pathsep))))\n")


def parent_site() -> dict[str, str]:
    """The environment that makes a release's Python take this tokparity's site folders after its own."""
    user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    folders = [p for p in (*site.getsitepackages(), *user) if os.path.isdir(p)]
    return {"TOKPARITY_PARENT_SITE": os.pathsep.join(folders)}


def _link_parent_site(env: Path) -> None:
    """The ``.pth`` in the release's site folder that adds the parent's site folders after it: the
    release's own packages win, tokparity and what it needs come from the parent. Written once pip
    is done (pip must see the virtualenv alone, or it would take the parent's packages for its own)
    and checked at every use (a virtualenv made by an older tokparity is brought up to date)."""
    pth = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / PARENT_SITE
    if not pth.is_file() or pth.read_text("utf-8") != PARENT_SITE_LINE:
        pth.write_text(PARENT_SITE_LINE, "utf-8")
