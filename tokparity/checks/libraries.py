"""The libraries a check runs on a model's files, each made once when first asked, each in a child
process (a file that crashes a library costs that answer, not the check)."""

from __future__ import annotations

from tokparity.backends.base import Backend
from tokparity.errors import CaseFailure, TokparityError
from tokparity.zoo import ModelFiles

# The libraries a check decodes with, and the file each reads.
DECODERS = (("hf", "tokenizer_json"), ("llama.cpp", "gguf"), ("sentencepiece", "spm_model"), ("tiktoken", "tiktoken"),
            ("rwkv", "rwkv_vocab"))


class Libraries:
    def __init__(self, model: ModelFiles):
        self.model = model
        self._made: dict[str, Backend | str] = {}  # name -> the backend, or why it could not be made

    def backend(self, name: str) -> Backend | str:
        """The backend ``name`` on the model (in a child process), or why there is none."""
        if name not in self._made:
            from tokparity.backends.registry import make_backend

            try:
                self._made[name] = make_backend(name, self.model, isolate=True)
            except TokparityError as e:
                self._made[name] = str(e)
        return self._made[name]

    def decoders(self) -> list[tuple[str, str]]:
        """``(backend, file role)`` for each library that reads one of the model's original files."""
        return [(name, role) for name, role in DECODERS if role in self.model.original_files]

    def llama_ends(self) -> frozenset[int] | str:
        """llama.cpp's end-of-generation ids on the model's GGUF (``llama_vocab_is_eog``), or why not."""
        llama = self.backend("llama.cpp")
        if isinstance(llama, str):
            return llama
        try:
            ends, _hidden = llama.generation_marks()  # type: ignore[attr-defined]
        except (CaseFailure, NotImplementedError) as e:
            return str(e)
        return ends

    def encoded(self, role: str, text: str) -> tuple[str, list[int]] | None:
        """The library that reads the model's file ``role``, and its ids for ``text`` (no special tokens
        added, none parsed); None where no library reads that file or it fails on the text."""
        name = next((n for n, r in DECODERS if r == role), None)
        backend = self.backend(name) if name else "no library"
        if isinstance(backend, str):
            return None
        try:
            return backend.name, list(backend.encode(text))
        except (CaseFailure, NotImplementedError):
            return None

    def decoded(self, name: str, i: int) -> str:
        """What backend ``name`` decodes the id ``i`` to, as a report shows it: ``''``, ``'<s>'`` or
        ``fails: why``."""
        backend = self.backend(name)
        if isinstance(backend, str):
            return f"not run: {backend}"
        try:
            return repr(backend.decode([i]))
        except (CaseFailure, NotImplementedError) as e:
            return f"fails: {str(e)[:120]}"
        except Exception as e:  # (a backend's own error that no child process turned into a failure)
            return f"fails: {type(e).__name__}: {str(e)[:120]}"

    def close(self) -> None:
        for backend in self._made.values():
            if not isinstance(backend, str):
                backend.close()
        self._made.clear()
