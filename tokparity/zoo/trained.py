"""Trained zoo models: SentencePiece models tokparity trains itself from a pinned text.

``models.toml`` declares them with ``trained = { text = "botchan", model_type = "unigram",
vocab_size = 1000, byte_fallback = true }``: one model per trainer flag that changes how text is
encoded, so that every flag is judged (SentencePiece, the library the model is trained with, is
its oracle; the GGUF and tokenizer.json tokparity derives from it show what llama.cpp and
tokenizers make of the flag).

Training is deterministic, so a trained model is as reproducible as a pinned one:

- one thread (``num_threads=1``: with two, unigram training gives another model), the whole
  text in its order (``input_sentence_size=0``: no sampling, so no shuffle), the library's random
  seed fixed, and the text given as sentences (``sentence_iterator``) so no file path ends up in
  the model's ``trainer_spec``;
- the result lives in the cache under ``trained/<model>/spm_model-<key>/<model>.model``, where
  ``key`` hashes the text's pinned sha256, the flags (with tokparity's fixed settings), the
  sentencepiece version and this module's ``TRAINER_VERSION``; beside it, ``trained.json``
  records the flags, the result's sha256 and the training time.

A model that cannot be trained (sentencepiece missing, the trainer refusing the flags) is not an
error for the rest of the zoo: it is reported in ``ModelFiles.missing`` with the reason.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tokparity.errors import TokparityError
from tokparity.zoo.fetch import cache_dir, cached_path, fetch_files, file_lock, is_cached, publish_folder
from tokparity.zoo.manifest import FIXED, TrainSpec, ZooModel, load_manifest

# Bump when the way a model is trained changes (manifest.FIXED, the seed below, how the text is read).
TRAINER_VERSION = 1
SIDECAR = "trained.json"
RANDOM_SEED = 20261122


@dataclass(frozen=True)
class Training:
    """How one trained model was made."""

    key: str
    text: str
    options: dict
    sha256: str
    seconds: float
    library: str  # sentencepiece-0.2.3

    def describe(self) -> str:
        return f"trained by tokparity with {self.library} on {self.text}"


def library_version() -> str:
    try:
        return f"sentencepiece-{metadata.version('sentencepiece')}"
    except metadata.PackageNotFoundError:
        return "sentencepiece-none"


def training_options(spec: TrainSpec) -> dict:
    """Every option given to the trainer, tokparity's fixed settings included."""
    return spec.options | FIXED


def training_key(spec: TrainSpec, text_sha256: str) -> str:
    canonical = json.dumps({"text": text_sha256, "options": training_options(spec), "library": library_version(),
                            "seed": RANDOM_SEED, "trainer": TRAINER_VERSION}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _folder(model: str, key: str) -> Path:
    return cache_dir() / "trained" / model / f"spm_model-{key}"


def _read(folder: Path, model: str) -> tuple[Path, Training] | None:
    path, sidecar = folder / f"{model}.model", folder / SIDECAR
    if not (path.is_file() and sidecar.is_file()):
        return None
    try:
        d = json.loads(sidecar.read_text("utf-8"))
        return path, Training(d["key"], d["text"], d["options"], d["sha256"], d["seconds"], d["library"])
    except (ValueError, KeyError, TypeError):  # a damaged sidecar: the model is trained again
        return None


def train_bytes(spec: TrainSpec, text: Path) -> bytes:
    """Train one model on ``text`` (one sentence a line) and return the ``.model`` bytes."""
    try:
        import sentencepiece as spm
    except ImportError:
        from tokparity.errors import MissingDependency
        raise MissingDependency("training a zoo model", "sentencepiece") from None
    lines = text.read_text("utf-8").splitlines()
    out = io.BytesIO()
    spm.set_random_generator_seed(RANDOM_SEED)
    try:
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, **training_options(spec))
    except (RuntimeError, ValueError) as e:
        raise TokparityError(f"sentencepiece refused to train it: {str(e).strip().splitlines()[-1]}") from None
    return out.getvalue()


def _train(model: ZooModel, spec: TrainSpec, text: Path, text_sha256: str, key: str, folder: Path
           ) -> tuple[Path, Training]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".spm_model-", dir=folder.parent))
    try:
        started = time.perf_counter()
        data = train_bytes(spec, text)
        seconds = round(time.perf_counter() - started, 2)
        out = tmp / f"{model.name}.model"
        out.write_bytes(data)
        training = Training(key, spec.text, training_options(spec), hashlib.sha256(data).hexdigest(), seconds,
                            library_version())
        publish_folder(tmp, folder, tmp / SIDECAR, {
            "model": model.name, "key": key, "text": spec.text, "text_sha256": text_sha256,
            "options": training.options, "seed": RANDOM_SEED, "library": training.library,
            "trainer": TRAINER_VERSION, "sha256": training.sha256, "seconds": seconds, "bytes": len(data),
        })
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder / out.name, training


def trained_file(model: ZooModel, build: bool = True,
                 log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr)
                 ) -> tuple[Path | None, Training | None, str | None]:
    """The trained ``.model`` of a zoo model: ``(path, training, None)``, or ``(None, None, why)``.

    With ``build`` the pinned text is fetched and the model trained if the cache lacks it."""
    spec = model.trained
    assert spec is not None
    manifest = load_manifest()
    pinned = manifest.texts[spec.text]
    key = training_key(spec, pinned.sha256)
    folder = _folder(model.name, key)
    found = _read(folder, model.name)
    if found is None and build:
        fetch_files([pinned], manifest, log=log)
        with file_lock(cache_dir() / "trained" / ".train.lock"):
            found = _read(folder, model.name)  # another process may have trained it meanwhile
            if found is None:
                try:
                    found = _train(model, spec, cached_path(pinned), pinned.sha256, key, folder)
                except TokparityError as e:
                    why = f"trained from text {spec.text}, could not be trained: {e}"
                    log(f"warning: {model.name}: {why}")
                    return None, None, why
                log(f"trained {model.name} in {found[1].seconds} s ({spec.describe()}) in {found[0].parent}")
    if found is None:
        how = "not trained yet" if is_cached(pinned) or not build else "its text is not available"
        return None, None, f"trained from text {spec.text}, {how} (tokparity zoo fetch {model.name})"
    return found[0], found[1], None

