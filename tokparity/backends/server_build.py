"""llama-server, built once per machine from the llama.cpp that llama-cpp-python vendors.

The ``llama.cpp`` backend runs the llama.cpp inside the installed llama-cpp-python. Its server is
built from the same source, so both sides are one release: pip downloads that version's sdist,
CMake builds its ``vendor/llama.cpp`` (the server alone: no web UI, no HTTPS, no download), and
the binary is kept under ``$TOKPARITY_CACHE/llama-server/<version>/``. A second build of the same
version waits for the first (one lock). ``TOKPARITY_LLAMA_SERVER`` names a binary to use instead.
A failed build is one line that names its log.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from tokparity.child_python import python_argv
from tokparity.errors import BackendUnavailable

BINARY = "llama-server"
ENV = "TOKPARITY_LLAMA_SERVER"
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DGGML_NATIVE=OFF",
               "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_TOOLS=ON",
               "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_BUILD_UI=OFF",
               "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_OPENSSL=OFF")


def llama_cpp_python_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        raise BackendUnavailable(BINARY, "llama-server is built from llama-cpp-python's source, which is not "
                                         "installed: pip install 'tokparity[llama]'") from None


def server_binary(say: Callable[[str], None] = print) -> Path:
    """The llama-server binary: ``TOKPARITY_LLAMA_SERVER``'s, or the one built for the installed
    llama-cpp-python (built now, once, where it is missing)."""
    given = os.environ.get(ENV)
    if given:
        path = Path(given).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BackendUnavailable(BINARY, f"{ENV}={given}: not an executable file; point it at a llama-server "
                                             "binary, or unset it to build one")
        return path
    from tokparity.zoo.fetch import cache_dir, file_lock
    version = llama_cpp_python_version()
    home = cache_dir() / "llama-server" / version
    binary = home / BINARY
    if binary.is_file():
        return binary
    home.mkdir(parents=True, exist_ok=True)
    lock = home.with_name(version + ".lock")
    with file_lock(lock, lambda: say(f"another process is building llama-server for this machine; waiting for it "
                                     f"(lock: {lock})")):
        if not binary.is_file():
            _build(version, home, say)
    return binary


def _build(version: str, home: Path, say: Callable[[str], None]) -> None:
    log = home / "build.log"
    say(f"building llama-server from llama-cpp-python {version}'s llama.cpp, once for this machine "
        f"(a few minutes; log: {log})")
    jobs = str(max(1, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory(prefix="tokparity-llama-server-") as tmp, open(log, "wb") as out:
        work = Path(tmp)
        # (-P and the temporary folder: no module of the current folder is imported by pip)
        _run(python_argv("-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
                         f"llama-cpp-python=={version}", "-d", str(work)), out, log, cwd=work)
        sdist = next(work.glob("llama_cpp_python-*.tar.gz"), None)
        if sdist is None:
            raise BackendUnavailable(BINARY, f"pip gave no llama-cpp-python {version} sdist; see {log}")
        with tarfile.open(sdist) as tar:
            tar.extractall(work, filter="data")
        source = next(work.glob("llama_cpp_python-*/vendor/llama.cpp"), None)
        if source is None:
            raise BackendUnavailable(BINARY, f"llama-cpp-python {version}'s sdist holds no vendor/llama.cpp; see {log}")
        build = work / "build"
        _run(["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS], out, log)
        _run(["cmake", "--build", str(build), "-j", jobs, "--target", BINARY], out, log)
        made = build / "bin" / BINARY
        if not made.is_file():
            raise BackendUnavailable(BINARY, f"the build made no {made.name}; see {log}")
        shutil.copy2(made, home / (BINARY + ".part"))
        os.replace(home / (BINARY + ".part"), home / BINARY)
    say(f"built {home / BINARY}")


def _run(argv: list[str], out, log: Path, cwd: Path | None = None) -> None:
    out.write(f"$ {' '.join(argv)}\n".encode())
    out.flush()
    try:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd)
    except FileNotFoundError:
        raise BackendUnavailable(BINARY, f"building llama-server needs {argv[0]}, which is not installed "
                                         f"(apt install cmake g++); or set {ENV} to a llama-server binary") from None
    if done.returncode != 0:
        raise BackendUnavailable(BINARY, f"building llama-server failed at `{' '.join(argv[:3])} …` (exit "
                                         f"{done.returncode}); see {log}")
