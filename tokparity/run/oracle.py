"""Who judges a model: the library its tokenizer was trained with.

A model's files often come in several formats with no word on which is the original: a folder
with a SentencePiece ``.model`` and a GGUF converted from it, a Hub repository with a
``tokenizer.model`` and a ``tokenizer.json``. A conversion can lose what the training library
does (llama.cpp's UGM writes ``<unk>`` where SentencePiece falls back to bytes), so the converted
file must not judge the original. The oracle is therefore, in this order:

1. the library whose own format the model is in, the format it was trained in: SentencePiece for
   a ``.model``, Hugging Face tokenizers for a ``tokenizer.json``;
2. golden ids shipped beside a GGUF (llama.cpp's ``.inp``/``.out``, written by the original
   Hugging Face tokenizer), for the texts they hold;
3. llama.cpp for a GGUF.

Files tokparity derived itself (``ModelFiles.derived``) never judge: they add a backend. Where the
provenance is known (a zoo model whose manifest names its original file, ``judge``), that file's
library judges. A user's ``--oracle`` overrides all of this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokparity.backends.registry import BUILTIN
from tokparity.zoo import ModelFiles

if TYPE_CHECKING:  # (a type only: `tokparity inspect` need not load the journal's modules)
    from tokparity.run.options import CompareOptions

# A file role, the library that trains tokenizers into that format (a backend name), and why: as
# the registry has them.
TRAINED_IN = tuple((spec.role, spec.name, spec.trains) for spec in BUILTIN.values() if spec.trains and spec.role)


@dataclass(frozen=True)
class Oracle:
    """The backends that judge a model's cases, tried in order (golden ids have only some texts),
    and the sentence that says why. A reason an option gave starts with that option (``--oracle``)."""

    chain: tuple[str, ...]
    why: str

    @property
    def label(self) -> str:
        return "/".join(self.chain)


def choose_oracle(model: ModelFiles, named: str | None = None, add_special: bool = False) -> Oracle:
    """The oracle of ``model``: ``named`` (``--oracle``, a label or ``label=spec``) if given, else the
    training library of its original files, then golden ids, then llama.cpp (see the module doc)."""
    if named:
        from tokparity.backends.registry import split_label
        return Oracle((split_label(named)[0],), "--oracle named it")
    files = model.original_files
    if model.judge is not None:  # the zoo knows the provenance: only that file (and its golden ids) judges
        role, said = model.judge
        judged = choose_oracle(_only(model, role), add_special=add_special)
        why = f"the zoo's manifest says the {role} is the original: {said}"
        return Oracle(judged.chain, f"{judged.why}; {why}" if judged.why.startswith("--") else why)
    trained = next(((backend, why) for role, backend, why in TRAINED_IN if role in files), None)
    golden = "gguf" in files and "golden_out" in files and not add_special  # golden ids are add_special off
    if trained:  # a library answers every text: nothing after it would ever judge
        others = _others(files)
        chain = [trained[0]]
        why = trained[1] + (f"; the {others} beside it may be a conversion, so it does not judge" if others else "")
    elif golden:
        chain = ["golden", "llama.cpp"]
        why = ("it is a GGUF, a format no library trains: the golden ids beside it (from the original tokenizer) "
               "judge the texts they hold, llama.cpp the others")
    elif "gguf" in files and "golden_out" in files:  # (with --add-special)
        chain = ["llama.cpp"]
        why = ("--add-special: the golden ids beside the GGUF hold no BOS or EOS. So llama.cpp judges every text: "
               "it is the reference implementation of GGUF")
    else:
        chain = ["llama.cpp"]
        why = "it is a GGUF alone, and llama.cpp is the reference implementation of that format"
    derived = sorted(model.derived)
    if derived:
        why += f"; its {' and '.join(derived)} {'are' if len(derived) > 1 else 'is'} tokparity's conversion, never a judge"
    return Oracle(tuple(chain), why)


def oracle_chain(model: ModelFiles, options: CompareOptions) -> list[str]:
    """The backends that judge ``model``'s cases, in order (the training library of its original
    files, then golden ids, then llama.cpp; ``--oracle`` overrides)."""
    return list(choose_oracle(model, options.oracle, options.add_special).chain)


def _only(model: ModelFiles, role: str) -> ModelFiles:
    keep = {role, "golden_inp", "golden_out"} if role == "gguf" else {role}
    return ModelFiles(model.name, {r: p for r, p in model.original_files.items() if r in keep}, model.origin)


def _others(files: dict) -> str:
    names = {"gguf": "GGUF", "tokenizer_json": "tokenizer.json", "spm_model": ".model", "tiktoken": "rank file",
             "rwkv_vocab": "rwkv vocabulary"}
    trained_role = next(role for role, _, _ in TRAINED_IN if role in files)
    return " and ".join(name for role, name in names.items() if role in files and role != trained_role)
