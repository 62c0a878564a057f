"""The ``hf-gguf`` backend: the tokenizer transformers builds from a GGUF's metadata.

``AutoTokenizer.from_pretrained(folder, gguf_file=...)`` reads the GGUF with transformers' own
reader, which imports torch. Its tokenizer converter does not: ``convert_gguf_tokenizer(
architecture, tokenizer_dict)`` takes the metadata as a dict keyed by the values of
``GGUF_TOKENIZER_MAPPING["tokenizer"]`` (``tokens``, ``scores``, ``merges``, ``bos_token_id``, …).
So tokparity reads the file with its own loader and hands the converter that dict; what comes
back is the ``tokenizers.Tokenizer`` a transformers user gets from the GGUF.

It is not always the tokenizer the model was trained with: on the llama.cpp test files it
disagrees with the original ids on several models (see tests/backends/test_hf_gguf.py), and it
has no builder for WordPiece (``bert``) files at all. That is transformers' behaviour, and
exactly what this backend exists to show.

``add_special`` is whatever post-processor the converter built; it does not read
``tokenizer.ggml.add_bos_token`` (transformers applies that later, in the tokenizer class).

The conversion is slow (importing transformers, then building a 250k-piece model in Python:
3 s for nomic-bert-moe, most of a compare run's load time), and its result is a plain
``tokenizers.Tokenizer``. So it is kept, serialized by tokenizers itself, under
``$TOKPARITY_CACHE/derived/hf-gguf/``, keyed by the GGUF's sha256 and the versions of
transformers, tokenizers and this conversion; a file transformers cannot convert keeps its
error message the same way. A later run loads the tokenizer (or the error) without importing
transformers. ``TOKPARITY_HF_GGUF_CACHE=0`` converts afresh every time; ``=DIR`` keeps them in DIR.
"""

from __future__ import annotations

import hashlib
import os
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import tokenizers

from tokparity.backends.hf import TokenizersBackend, apply_chat_template, is_rust_panic, quiet_transformers
from tokparity.errors import BadModelFile, TokparityError
from tokparity.vocab import Vocab, load_vocab
from tokparity.whole_files import write_whole
from tokparity.zoo import ModelFiles

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation

# GGUF keys (after "tokenizer.") holding plain values, passed on as the file has them.
_SCALARS = ("ggml.model", "ggml.pre", "ggml.bos_token_id", "ggml.eos_token_id", "ggml.unknown_token_id",
            "ggml.padding_token_id", "ggml.add_space_prefix")


def _utf8(s: str) -> str:
    # tokparity keeps invalid UTF-8 as surrogate escapes; transformers' reader decodes strictly,
    # and tokenizers cannot hold a surrogate, so such a token is spelled with U+FFFD.
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def tokenizer_dict(vocab: Vocab, mapping: dict[str, str]) -> dict:
    """The dict ``convert_gguf_tokenizer`` wants, from a GGUF ``Vocab``. ``mapping`` is
    ``GGUF_TOKENIZER_MAPPING["tokenizer"]`` (GGUF key -> dict key), so exactly the keys
    transformers reads are passed, under its names: ``{"tokenizer_type": "llama", "tokens": [...]}``."""
    values = {
        "ggml.tokens": [_utf8(t) for t in vocab.tokens],
        "ggml.scores": vocab.scores,
        "ggml.token_type": vocab.token_types,
        "ggml.merges": [_utf8(f"{a} {b}") for a, b in vocab.merges] if vocab.merges_count else None,
        "ggml.precompiled_charsmap": list(vocab.precompiled_charsmap) if vocab.precompiled_charsmap else None,
    }
    for key in _SCALARS:
        values[key] = vocab.extra.get(f"tokenizer.{key}")
    return {mapping[key]: value for key, value in values.items() if key in mapping and value is not None}


def gguf_tokenizer_config(vocab: Vocab) -> dict:
    """What transformers' ``get_gguf_tokenizer`` (transformers 5, integrations/gguf/
    gguf_tokenizer_mapping.py) hands the tokenizer class beside the converted tokenizer: the
    template, add_bos/add_eos as the file says (a ``llama`` vocabulary adds BOS where it does not
    say; ``gemma4`` never, its template writes ``<bos>``), and the special tokens' texts by the
    file's ids. Built here from tokparity's reading of the file because that function's GGUF
    reader imports torch."""
    config: dict = {"chat_template": vocab.chat_template}
    for key in ("add_bos_token", "add_eos_token"):
        if (value := vocab.extra.get(f"tokenizer.ggml.{key}")) is not None:
            config[key] = value
    kind = vocab.extra.get("tokenizer.ggml.model")
    if kind == "llama":
        config.setdefault("add_bos_token", True)
    elif kind == "gemma4":
        config["add_bos_token"] = False
    for name, key in (("bos_token", "bos_token_id"), ("eos_token", "eos_token_id"), ("unk_token", "unknown_token_id"),
                      ("pad_token", "padding_token_id")):
        token_id = vocab.extra.get(f"tokenizer.ggml.{key}")
        config[name] = _utf8(vocab.tokens[token_id]) if isinstance(token_id, int) and 0 <= token_id < vocab.size else None
    return config


# Bump when tokenizer_dict() or the conversion call changes what is built from the same file.
_CONVERSION = "1"


# Kept instead of a tokenizer that does not behave the same once saved and loaded (phi-3 with
# tokenizers 0.23: the converter's '</s>' is matched in text after loading, not before).
_UNFAITHFUL = "not kept: the saved tokenizer would behave differently from the converted one"


def _same_after_saving(tok: tokenizers.Tokenizer) -> bool:
    """Whether ``tok`` saved and loaded again splits its added tokens' texts as ``tok`` does,
    with special-token parsing on and off (the state a saved file can lose)."""
    again = tokenizers.Tokenizer.from_str(tok.to_str())
    texts = [t.content for t in tok.get_added_tokens_decoder().values()]
    probes = texts + [f"a{t} b{t}" for t in texts[:512]]
    before = tok.encode_special_tokens
    try:
        for literal in (False, True):
            tok.encode_special_tokens = again.encode_special_tokens = literal
            if any(tok.encode(p).ids != again.encode(p).ids for p in probes):
                return False
    except BaseException as e:  # a panic on a probe: not worth keeping; the cases will say the rest
        if not is_rust_panic(e):
            raise
        return False
    finally:
        tok.encode_special_tokens = before
    return True


class _ConversionCache:
    """One GGUF's converted tokenizer (or transformers' error on it), on disk."""

    def __init__(self, gguf: Path):
        setting = os.environ.get("TOKPARITY_HF_GGUF_CACHE", "")
        self.enabled = setting != "0"
        try:
            self.transformers_version = metadata.version("transformers")
        except metadata.PackageNotFoundError:
            self.enabled, self.transformers_version = False, ""  # the import below says what to install
        if not self.enabled:
            return
        from tokparity.zoo.fetch import cache_dir, sha256_of

        folder = Path(setting) if setting not in ("", "1") else cache_dir() / "derived" / "hf-gguf"
        key = f"hf-gguf {_CONVERSION}\0{self.transformers_version}\0{tokenizers.__version__}\0{sha256_of(gguf)}"
        base = folder / hashlib.sha256(key.encode()).hexdigest()[:32]
        self.tokenizer_file, self.error_file = base.with_suffix(".tokenizer.json"), base.with_suffix(".error.txt")

    def load(self) -> tokenizers.Tokenizer | str | None:
        """The kept tokenizer, the kept error message (or ``_UNFAITHFUL``), or None (nothing
        kept, or unreadable)."""
        if not self.enabled:
            return None
        try:
            if self.error_file.is_file():
                return self.error_file.read_text("utf-8")  # an error message, or _UNFAITHFUL
            if self.tokenizer_file.is_file():
                return tokenizers.Tokenizer.from_file(str(self.tokenizer_file))
        except Exception:  # a damaged entry (tokenizers raises its own Exception): convert again
            return None
        return None

    def keep(self, result: tokenizers.Tokenizer | str) -> None:
        """Keep a tokenizer, an error message, or ``_UNFAITHFUL`` (convert afresh every time)."""
        if not self.enabled:
            return
        target = self.error_file if isinstance(result, str) else self.tokenizer_file
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # (whole or not at all, whoever else converts the same file)
            write_whole(target, lambda partial: partial.write_text(result, "utf-8") if isinstance(result, str)
                        else result.save(str(partial)), suffix=".partial")
        except OSError:
            pass  # a cache that cannot be written only costs the next run the conversion


class HFGGUFBackend(TokenizersBackend):
    name = "hf-gguf"
    loads_on_first_use = frozenset({"chat"})  # (transformers' PreTrainedTokenizerFast: chat)

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"hf-gguf backend: unknown option(s) {', '.join(sorted(opts))}")
        path = model.path("gguf")
        if path is None:
            raise TokparityError(f"model {model.name}: the hf-gguf backend needs a .gguf file, and it has none "
                                 f"(it has: {', '.join(model.files) or 'nothing'})")
        self.path = Path(path)
        cache = _ConversionCache(self.path)
        kept = cache.load()
        if kept == _UNFAITHFUL:
            super().__init__(self._convert())
            return
        if kept is not None:
            self._version = f"{cache.transformers_version} (tokenizers {tokenizers.__version__})"
            if isinstance(kept, str):
                raise TokparityError(kept)
            super().__init__(kept)
            self._check_not_empty()  # kept before tokparity refused empty vocabularies (load_vocab does now)
            return
        try:
            tok = self._convert()
        except TokparityError as e:
            if "cannot build a tokenizer" in str(e):
                cache.keep(str(e))  # transformers' verdict on this file, as stable as its result
            raise
        cache.keep(tok if _same_after_saving(tok) else _UNFAITHFUL)
        super().__init__(tok)

    def _check_not_empty(self) -> None:
        # (transformers adds <s>, </s>, <unk> of its own to a converted empty vocabulary)
        if self.tok.get_vocab_size(with_added_tokens=False) <= 0:
            raise BadModelFile(self.path, "the vocabulary has no tokens (tokenizer.ggml.tokens is empty); "
                                          "not a usable tokenizer")

    def _convert(self) -> tokenizers.Tokenizer:
        vocab = load_vocab(self.path)
        with quiet_transformers() as transformers:
            try:
                from transformers.integrations.gguf.gguf_tokenizer_mapping import (
                    GGUF_TOKENIZER_MAPPING,
                    convert_gguf_tokenizer,
                )
            except ModuleNotFoundError as e:  # transformers 4.x (hf-gguf@4.57.6): the same two names, one module
                if not (e.name or "").startswith("transformers.integrations.gguf"):
                    raise  # (a dependency of transformers 5's module missing: said as it is)
                from transformers.integrations.ggml import (  # type: ignore[no-redef]
                    GGUF_TOKENIZER_MAPPING,
                    convert_gguf_tokenizer,
                )
            self._version = f"{transformers.__version__} (tokenizers {tokenizers.__version__})"
            architecture = vocab.extra.get("general.architecture") or vocab.extra.get("tokenizer.ggml.model")
            if not isinstance(architecture, str):
                raise TokparityError(f"{self.path.name}: no general.architecture or tokenizer.ggml.model; transformers "
                                     "needs one to pick its tokenizer converter")
            mapping = GGUF_TOKENIZER_MAPPING["tokenizer"]
            try:
                tok, _ = convert_gguf_tokenizer(architecture, tokenizer_dict(vocab, mapping))
            except (ValueError, KeyError, TypeError) as e:
                raise TokparityError(f"{self.path.name}: transformers {transformers.__version__} cannot build a "
                                     f"tokenizer from this GGUF ({type(e).__name__}: {e})") from None
            except BaseException as e:  # tokenizers' panic is a BaseException; anything else goes on up
                if not is_rust_panic(e):
                    raise
                raise TokparityError(f"{self.path.name}: tokenizers panicked building a tokenizer from this GGUF "
                                     f"({str(e).splitlines()[0] if str(e) else 'no message'})") from None
        return tok

    @property
    def version(self) -> str:
        return self._version

    def supports(self, stage: str) -> bool:
        if stage == "chat":  # (its chat renders the GGUF's own template: a GGUF without one has no chat)
            try:
                return bool(load_vocab(self.path).chat_template)
            except TokparityError:  # (a GGUF its chat could not read either)
                return False
        return super().supports(stage)

    def chat(self, conversation: Conversation) -> ChatAnswer:
        """transformers' ``apply_chat_template`` on the tokenizer a transformers user gets from this
        GGUF: the converted tokenizer, with the GGUF's ``tokenizer.chat_template`` and special tokens
        as ``from_pretrained(…, gguf_file=…)`` sets them (``gguf_tokenizer_config``)."""
        if getattr(self, "_chat_auto", None) is None:
            vocab = load_vocab(self.path)
            if not vocab.chat_template:
                raise NotImplementedError(f"{self.path.name}: no tokenizer.chat_template for transformers")
            with quiet_transformers() as transformers:
                self._chat_auto = transformers.PreTrainedTokenizerFast(tokenizer_object=self.tok,
                                                                       **gguf_tokenizer_config(vocab))
        return apply_chat_template(self._chat_auto, conversation)
