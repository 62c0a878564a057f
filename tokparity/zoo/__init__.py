"""The model zoo, and the one place that turns a model argument into files.

Anywhere the CLI takes a MODEL it accepts a zoo name (``llama-spm``; a model tokparity trains, like
``spm-unigram-byte-fallback``, is trained on first use), a local file (``.gguf``,
``.model``, ``tokenizer.json``), a local folder holding such files, or ``hf:ORG/NAME`` for the
Hugging Face Hub (online users only).
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlparse

from tokparity.errors import TokparityError
from tokparity.textview import shown_path, single_line
from tokparity.zoo.derived import Derivation, derived_files
from tokparity.zoo.fetch import cache_dir, cached_path, fetch_files, is_cached
from tokparity.zoo.manifest import FILE_ROLES, Manifest, PinnedFile, ZooModel, load_manifest
from tokparity.zoo.model_file import checked_model_file, refuse_links_out
from tokparity.zoo.trained import Training, trained_file

__all__ = ["ModelFiles", "resolve_model", "load_manifest", "cache_dir", "fetch_files", "is_cached",
           "cached_path", "zoo_text", "FILE_ROLES", "Manifest", "ZooModel", "PinnedFile", "Derivation", "Training"]

# The order in which a model's files are preferred as "its" vocabulary when it has several: the
# training libraries' own formats first, as for the oracle (tokparity.run.oracle), so the reference
# reads what the judge reads (a GGUF converted from a byte-fallback .model lost the fallback).
PRIMARY_ORDER = ("spm_model", "tokenizer_json", "tiktoken", "rwkv_vocab", "gguf")


@dataclass
class ModelFiles:
    """A model as files on disk: ``files[role] -> Path`` with roles from ``FILE_ROLES``."""

    name: str
    files: dict[str, Path]
    origin: str  # zoo | local | hf
    algorithm: str | None = None
    description: str = ""
    missing: dict[str, str] = field(default_factory=dict)  # role -> why it is not there
    # Files tokparity converted from the others (zoo ``derived``): role -> how. They are in
    # ``files`` too, so backends find them, but they never stand for the model's original.
    derived: dict[str, Derivation] = field(default_factory=dict)
    # A zoo model tokparity trained (zoo ``trained``): how its spm_model was made. That file is
    # the model's original (the training library's own format), so it stays in original_files.
    trained: Training | None = None
    # The zoo's word on which file is the original (role, why), where it knows (ZooModel.judge).
    judge: tuple[str, str] | None = None

    @property
    def original_files(self) -> dict[str, Path]:
        """The files as their publisher made them: ``files`` without the derived ones."""
        return {role: p for role, p in self.files.items() if role not in self.derived}

    @property
    def primary(self) -> tuple[str, Path]:
        """The file that is "the" vocabulary: the one the zoo names as the original, else an original
        before any derived file."""
        if self.judge is not None and self.judge[0] in self.files:
            return self.judge[0], self.files[self.judge[0]]
        for files in (self.original_files, self.files):
            for role in PRIMARY_ORDER:
                if role in files:
                    return role, files[role]
        raise TokparityError(f"model {self.name}: no tokenizer file (.gguf, .model, tokenizer.json or rwkv_vocab*.txt) found")

    def path(self, role: str) -> Path | None:
        return self.files.get(role)


def _files_in_folder(folder: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    ggufs = sorted(folder.glob("*.gguf"))
    if len(ggufs) > 1:
        raise TokparityError(f"{folder}: holds {len(ggufs)} .gguf files; name the one you mean")
    if ggufs:
        files["gguf"] = ggufs[0]
        for role, suffix in (("golden_inp", ".inp"), ("golden_out", ".out")):
            p = ggufs[0].with_name(ggufs[0].name + suffix)
            if os.path.lexists(p):
                files[role] = p
    # (a FIFO, a folder or a dangling link under a model file's name is refused below, in one line)
    for role, name in (("tokenizer_json", "tokenizer.json"), ("tokenizer_config", "tokenizer_config.json"),
                       ("spm_model", "tokenizer.model")):
        if os.path.lexists(folder / name):
            files[role] = folder / name
    rwkv = sorted(folder.glob("rwkv_vocab*.txt"))
    if len(rwkv) == 1:
        files["rwkv_vocab"] = rwkv[0]
    if "spm_model" not in files:
        models = sorted(folder.glob("*.model"))
        if len(models) == 1:
            files["spm_model"] = models[0]
    return {role: checked_model_file(path, folder) for role, path in files.items()}


def _local(path: Path) -> ModelFiles:
    if not path.is_dir() and not path.is_file():  # a FIFO or a device: reading it may never end
        raise TokparityError(f"{shown_path(path)}: not a regular file; a model is a zoo name, a .gguf, .model, "
                             "tokenizer.json or tiktoken file, or a folder of them")
    if path.is_dir():
        refuse_links_out(path)
        files = _files_in_folder(path)
        if not files:
            raise TokparityError(f"{path}: no .gguf, .model or tokenizer.json in this folder")
        return ModelFiles(shown_path(_local_name(path)), files, "local")  # (a label: printable, UTF-8)
    from tokparity.vocab import detect_format
    fmt = detect_format(path)
    role = {"gguf": "gguf", "spm-model": "spm_model", "hf-json": "tokenizer_json", "tiktoken": "tiktoken",
            "rwkv-vocab": "rwkv_vocab"}[fmt]
    files = {role: path}
    if role == "gguf":
        for golden, suffix in (("golden_inp", ".inp"), ("golden_out", ".out")):
            p = path.with_name(path.name + suffix)
            if os.path.lexists(p):
                files[golden] = checked_model_file(p, path.parent)
    if role == "tokenizer_json" and os.path.lexists(path.with_name("tokenizer_config.json")):
        files["tokenizer_config"] = checked_model_file(path.with_name("tokenizer_config.json"), path.parent)
    name = path.name.removeprefix("ggml-vocab-").removesuffix(".gguf") if role == "gguf" else path.stem
    return ModelFiles(shown_path(name), files, "local")


def _check_hub_reachable(repo: str) -> None:
    """Fail in seconds, not after huggingface_hub's five retries, when the Hub cannot be reached
    (unless HF_HUB_OFFLINE is set: then its cache may still answer)."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return
    address = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    shown = re.sub(r"^([^/@]*//)?[^/@]*@", r"\1…@", address)  # (its user and password, if it holds them, never said)
    try:
        endpoint = urlparse(address)
        host, port = endpoint.hostname, endpoint.port or (443 if endpoint.scheme == "https" else 80)
    except ValueError as e:
        raise TokparityError(f"HF_ENDPOINT={shown!r}: not a URL ({e}); set it to the Hub's address, or unset it "
                             "for https://huggingface.co") from None
    if endpoint.scheme not in ("http", "https") or not host:  # ('not-a-url' was taken for huggingface.co)
        raise TokparityError(f"HF_ENDPOINT={shown!r}: not an http(s) URL with a host; set it to the Hub's address, "
                             "or unset it for https://huggingface.co")
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as e:
        raise TokparityError(
            f"hf:{repo}: cannot reach the Hugging Face Hub at {host} ({e.strerror or type(e).__name__}); check your "
            "network, or download the tokenizer files and pass their folder instead") from None


# The Hub's download, in a child Python that is stopped after HUB_SECONDS: huggingface_hub retries a
# server that never answers for minutes, and waits for ever on one that drips a byte at a time.
# The child prints the path of each file, or "-" for a file the repository does not have, or
# "!KIND" for the error that stopped it.
HUB_SECONDS = 120.0
HUB_CHILD = """
import sys
import huggingface_hub
from huggingface_hub import errors
for filename in sys.argv[2:]:
    try:
        print(huggingface_hub.hf_hub_download(sys.argv[1], filename, etag_timeout=10), flush=True)
    except getattr(errors, "RemoteEntryNotFoundError", ()):
        print("-", flush=True)
    except Exception as e:
        print("!" + type(e).__name__, flush=True)
        break
"""


def _from_hub(repo: str) -> ModelFiles:
    """Download a tokenizer from the Hugging Face Hub (needs network and huggingface_hub)."""
    import importlib.util
    import subprocess

    from tokparity.child_python import python_argv

    if importlib.util.find_spec("huggingface_hub") is None:
        raise TokparityError(f"hf:{repo} needs the 'huggingface_hub' package (pip install huggingface_hub)")
    _check_hub_reachable(repo)
    wanted = {"tokenizer_json": "tokenizer.json", "tokenizer_config": "tokenizer_config.json",
              "spm_model": "tokenizer.model"}
    env = dict(os.environ, HF_HUB_DOWNLOAD_TIMEOUT=os.environ.get("HF_HUB_DOWNLOAD_TIMEOUT", "10"))
    try:
        done = subprocess.run(python_argv("-c", HUB_CHILD, repo, *wanted.values()), capture_output=True, text=True,
                              timeout=HUB_SECONDS, env=env, stdin=subprocess.DEVNULL)
        said = done.stdout.splitlines()
        if len(said) < len(wanted) and not any(line.startswith("!") for line in said):  # (the child died)
            said.append("!" + (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1])
    except subprocess.TimeoutExpired:
        said = [f"!no answer within {HUB_SECONDS:.0f} s"]
    files: dict[str, Path] = {}
    for (role, filename), line in zip(wanted.items(), said):
        if line.startswith("!"):  # offline, unknown repo, gated repo, no answer: all end the same way for a user
            raise TokparityError(
                f"hf:{repo}: cannot get {filename} from the Hugging Face Hub ({single_line(line[1:])[:120]}); check "
                "the name and your network, or download the tokenizer files and pass their folder instead")
        if line != "-":
            files[role] = Path(line)
    if not files:
        raise TokparityError(f"hf:{repo}: the repository has no tokenizer.json or tokenizer.model")
    return ModelFiles(repo.split("/")[-1], files, "hf")


def _local_name(path: Path) -> str:
    """The name ``_local`` gives the file or folder (without reading it)."""
    if path.is_dir():
        return path.absolute().name  # (`.` is the folder it names)
    return path.name.removeprefix("ggml-vocab-").removesuffix(".gguf") if path.suffix == ".gguf" else path.stem


def named_path(spec: str) -> tuple[str, Path] | None:
    """``NAME=PATH`` as (NAME, PATH) when PATH exists (a name or a path may hold "=" itself)."""
    for at in (i for i, ch in enumerate(spec) if ch == "="):
        path = Path(os.path.expanduser(spec[at + 1:]))
        if at and path.exists():
            return spec[:at], path
    return None


def _name_of(spec: str) -> str:
    """The name a model argument that is not a local path gets (a zoo name, hf:ORG/NAME, NAME=PATH)."""
    named = named_path(spec)
    if named is not None:
        return named[0]
    return spec.split("/")[-1] if spec.startswith("hf:") else spec


def distinct_names(specs: list[str]) -> list[str]:
    """The model arguments, each local file or folder whose name another shares given as
    ``NAME=PATH`` (absolute), NAME its shortest distinguishing path: ``two/a/tokenizer.json`` and
    ``two/b/tokenizer.json`` become ``a/tokenizer=…`` and ``b/tokenizer=…``. Zoo names, hf: models
    and names given already stay as they are."""
    manifest = load_manifest()
    local = {spec: Path(os.path.expanduser(spec)).resolve() for spec in specs
             if not spec.startswith("hf:") and spec not in manifest.models and Path(os.path.expanduser(spec)).exists()}
    taken = {_name_of(spec) for spec in specs if spec not in local}
    by_name: dict[str, list[str]] = {}
    for spec, path in local.items():
        by_name.setdefault(_local_name(path), []).append(spec)
    renamed: dict[str, str] = {}
    for name, group in by_name.items():
        if len(group) == 1 and name not in taken:
            continue
        for depth in range(1, max(len(local[s].parts) for s in group) + 1):
            labels = {s: "/".join(local[s].parent.parts[-depth:] + (name,)).lstrip("/") for s in group}
            if len(set(labels.values())) == len(group):
                break
        renamed |= {s: f"{labels[s]}={local[s]}" for s in group}
    return [renamed.get(spec, spec) for spec in specs]


def resolve_model(spec: str, fetch: bool = True) -> ModelFiles:
    """Turn a MODEL argument into files on disk, fetching zoo files when ``fetch`` is true."""
    if not spec.strip():  # (an empty path is the current folder to pathlib: a model nobody named)
        raise TokparityError(f"MODEL {spec!r} is empty: give a zoo name (tokparity zoo list), a file, a folder or "
                             "hf:ORG/NAME")
    if spec.startswith("hf:"):
        return _from_hub(spec[3:])
    manifest = load_manifest()
    model = manifest.models.get(spec)
    if model is not None:
        if fetch:
            fetch_files(model.files.values(), manifest)
        files = {role: cached_path(f) for role, f in model.files.items() if is_cached(f)}
        missing = {role: "not fetched (tokparity zoo fetch " + spec + ")"
                   for role, f in model.files.items() if not is_cached(f)}
        training = None
        if model.trained is not None:  # its spm_model is trained by tokparity (zoo.trained)
            trained, training, why = trained_file(model, build=fetch)
            if trained is not None:
                files["spm_model"] = trained
            else:
                missing["spm_model"] = str(why)
        built, derivations, not_built = derived_files(model, build=fetch)
        return ModelFiles(spec, files | built, "zoo", model.algorithm, model.description, missing | not_built,
                          derivations, training, model.judge)
    path = Path(os.path.expanduser(spec))
    if path.exists():
        return _local(path)
    named = named_path(spec)
    if named is not None:  # NAME=PATH (distinct_names)
        return replace(_local(named[1]), name=shown_path(named[0]))
    known = ", ".join(list(manifest.models)[:6])
    raise TokparityError(f"unknown model {spec!r}: not a zoo name (e.g. {known}; see 'tokparity zoo list'), "
                         "not an existing file or folder, not hf:ORG/NAME")


def zoo_text(name: str, fetch: bool = True) -> Path:
    """A text file of the zoo (e.g. ``botchan``), fetched if needed."""
    manifest = load_manifest()
    f = manifest.texts[name]
    if fetch:
        fetch_files([f], manifest)
    return cached_path(f)
