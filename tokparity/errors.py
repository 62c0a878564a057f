"""One base exception for everything tokparity reports to a user.

A ``TokparityError`` is bad input or a missing dependency, never a bug in tokparity: the CLI
prints its message as one line and exits with status 2. Messages name the file, key or
argument and say what to do, e.g.
``ggml-vocab-x.gguf: truncated at byte 1024 (array tokenizer.ggml.tokens wants 262144 strings); re-download the file``.
"""

from __future__ import annotations


class TokparityError(Exception):
    """Bad input, bad usage or a missing optional dependency (exit status 2)."""


class BadModelFile(TokparityError):
    """A tokenizer file that cannot be read: truncated, wrong magic, missing key, unknown type."""

    def __init__(self, path: object, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class MissingDependency(TokparityError):
    """An optional library is not installed."""

    def __init__(self, what: str, package: str, extra: str | None = None):
        hint = f"pip install 'tokparity[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{what} needs the '{package}' package, which is not installed ({hint})")


class EngineDidNotStart(TokparityError):
    """An engine that never answered anything: it died or hung at every start (a wrong command, a
    missing file). The run stops in one line; a per-case crash would say it once for every case."""
