"""The library stage: another release of the oracle's own library in place of the reference."""

from __future__ import annotations

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant


class ReleasePipeline:
    """Another release of the oracle's library (a backend on it, releases.py) in place of the
    reference's pipeline: what an engine that embeds that release gives. It exposes no stage."""

    def __init__(self, backend):
        self.backend = backend

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return list(self.backend.encode(text, add_special=add_special, parse_special=parse_special))

    def normalize(self, text: str) -> str:
        raise NotImplementedError("another release's stages are not read")

    pre_tokenize = normalize


def release_variant(name: str, backend) -> Variant:
    """``library.release:NAME``: the ids of ``backend``, the release NAME (``sentencepiece@0.2.0``)
    of the oracle's library, taken for the reference's (on the reference as it is: no other
    variant of the pipeline under it; those of the input and BOS/EOS may go around it)."""
    def apply(c: Candidate) -> Candidate | None:
        return c.replace(pipeline=ReleasePipeline(backend)) if c.pipeline is not None else None
    return Variant(f"library.release:{name}", "library.release",
                   f"{name}: release {backend.version} of the oracle's library, in place of the reference", apply)
