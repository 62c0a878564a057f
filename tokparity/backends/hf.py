"""The ``hf`` backend: Hugging Face ``tokenizers`` on a ``tokenizer.json``, or
``transformers.AutoTokenizer`` on a folder.

Which one: ``tokenizers`` whenever the model has a ``tokenizer.json`` (it is the library that
file belongs to, and it loads in a fraction of the time); ``transformers`` when the model is a
folder without one (a ``tokenizer.model`` with its ``tokenizer_config.json``), or when asked
with ``loader="transformers"``. The two can differ: ``AutoTokenizer`` applies the folder's
``tokenizer_config.json`` on top of the ``tokenizer.json``.

Quirks, as Hugging Face has them:

* ``parse_special`` off is ``encode_special_tokens=True`` (``split_special_tokens`` in
  transformers): special added tokens in the text are tokenized as text. Non-special added
  tokens are always matched whole, as llama.cpp does with USER_DEFINED tokens.
* ``add_special`` runs the file's post-processor (BOS/EOS templates), whatever it says.
* ``pre_tokenize`` shows the pre-tokenizer's split of the normalized text, in the vocabulary's
  spelling (``Ġworld`` for byte-level BPE), as tokparity's reference does.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import tokenizers

from tokparity.backends.base import Backend
from tokparity.errors import BackendCrash

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation
from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.vocab.hf_json import check_tokenizer_json, file_state
from tokparity.zoo import ModelFiles


def is_rust_panic(e: BaseException) -> bool:
    """tokenizers' Rust panics arrive as ``pyo3_runtime.PanicException``, a ``BaseException``
    (so ``except Exception`` lets them through) that cannot be imported by name."""
    return type(e).__name__ == "PanicException"


class _RustStderr:
    """Where fd 2 points while tokenizers runs: a scratch file. Rust's panic hook writes the panic
    (and with RUST_BACKTRACE set, a whole backtrace) to stderr before Python sees the exception;
    tokparity reports the panic as one case's crash, so that text is dropped, and anything else
    written there is passed on. Three system calls per call into tokenizers when nothing is written."""

    def __init__(self) -> None:
        self.scratch: int | None = None
        self.real: int | None = None

    @contextlib.contextmanager
    def held(self):
        if self.scratch is None:
            try:
                self.scratch = os.memfd_create("tokparity-rust-stderr") if hasattr(os, "memfd_create") \
                    else os.open(os.devnull, os.O_WRONLY)
                self.real = os.dup(2)
            except OSError:  # no fd to spare: let Rust print
                yield
                return
        assert self.real is not None
        os.dup2(self.scratch, 2)
        panicked = False
        try:
            yield
        except BaseException as e:
            panicked = is_rust_panic(e)
            raise
        finally:
            os.dup2(self.real, 2)
            if os.lseek(self.scratch, 0, os.SEEK_CUR):  # something was written
                if not panicked:
                    os.lseek(self.scratch, 0, os.SEEK_SET)
                    os.write(self.real, os.read(self.scratch, 1 << 16))
                os.ftruncate(self.scratch, 0)
                os.lseek(self.scratch, 0, os.SEEK_SET)


_RUST_STDERR = _RustStderr()


@contextlib.contextmanager
def panics_as_crashes(what: str):
    """A panic inside tokenizers while doing ``what`` -> ``BackendCrash`` for this case only."""
    try:
        with _RUST_STDERR.held():
            yield
    except BaseException as e:
        if not is_rust_panic(e):
            raise
        raise BackendCrash(f"tokenizers panicked in {what}: {str(e).splitlines()[0] if str(e) else 'no message'}") \
            from None


@contextlib.contextmanager
def quiet_transformers():
    """Import transformers without its "PyTorch was not found" advice on stderr. The environment
    is changed only for the first import: llama.cpp may read it on another thread (beside.py)."""
    if "transformers" in sys.modules:
        import transformers
        transformers.utils.logging.set_verbosity_error()
        yield transformers
        return
    saved = os.environ.get("TRANSFORMERS_NO_ADVISORY_WARNINGS")
    os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"
    try:
        import transformers
        transformers.utils.logging.set_verbosity_error()
        yield transformers
    finally:
        if saved is None:
            os.environ.pop("TRANSFORMERS_NO_ADVISORY_WARNINGS", None)
        else:
            os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = saved


def after_anchor(anchor: list[int], decode, ids: list[int]) -> list[bytes | None]:
    """What each id adds to the text of ``anchor`` (a plain token) as ``decode`` writes it, as UTF-8;
    None where the text of anchor + id does not begin with the anchor's."""
    head = decode(anchor)
    out: list[bytes | None] = []
    for i in ids:
        text = decode(anchor + [i])
        out.append(text[len(head):].encode("utf-8", "surrogatepass") if text.startswith(head) else None)
    return out


class TokenizersBackend(Backend):
    """A backend around one ``tokenizers.Tokenizer`` (shared by ``hf`` and ``hf-gguf``)."""

    def __init__(self, tokenizer: tokenizers.Tokenizer):
        self.tok = tokenizer
        self.n_vocab = tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def version(self) -> str:
        return tokenizers.__version__

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        if self.tok.encode_special_tokens == parse_special:
            self.tok.encode_special_tokens = not parse_special
        with panics_as_crashes("encode"):
            return self.tok.encode(text, add_special_tokens=add_special).ids

    # tokenizers never cleans up tokenization spaces, and has no spaces between special tokens
    decode_switches = frozenset({"skip_special", "clean_up=off"})

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        with panics_as_crashes("decode"):
            return self.tok.decode(list(ids), skip_special_tokens=settings.skip_special)

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        """tokenizers' ``DecodeStream``, prefilled with the prompt's ids: one ``step`` call per id
        after it, or per ``step`` ids (its step takes a list)."""
        from tokenizers.decoders import DecodeStream
        with panics_as_crashes("stream"):
            decoder = DecodeStream(list(ids[:prompt]), skip_special_tokens=settings.skip_special)
            rest = list(ids[prompt:])  # (step takes an id or a list of them: the same to tokenizers)
            return [decoder.step(self.tok, rest[k:k + step]) or "" for k in range(0, len(rest), step)]

    lossy_pieces = True  # decode is a str: a token that is part of a character shows as U+FFFD

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        """What each id adds after another token, as grammar engines read a tokenizers vocabulary:
        ``decode([a, id])`` less ``decode([a])`` (``a``: the token of "a"), as UTF-8. Decoded alone,
        a Metaspace token loses its leading space and a WordPiece word its separating one."""
        with panics_as_crashes("decode"):
            return after_anchor(self.tok.encode("a", add_special_tokens=False).ids[-1:],
                                lambda part: self.tok.decode(part, skip_special_tokens=False), ids)

    def pieces(self, ids: list[int]) -> list[str]:
        out = []
        for i in ids:
            piece = self.tok.id_to_token(i)
            if piece is None:
                raise ValueError(f"token id {i} is not in the vocabulary ({self.n_vocab} tokens)")
            out.append(piece)
        return out

    def normalize(self, text: str) -> str:
        normalizer = self.tok.normalizer
        with panics_as_crashes("normalize"):
            return normalizer.normalize_str(text) if normalizer is not None else text

    def pre_tokenize(self, text: str) -> list[str]:
        normalized = self.normalize(text)
        pre = self.tok.pre_tokenizer
        if pre is None:
            return [normalized] if normalized else []
        with panics_as_crashes("pre_tokenize"):
            return [piece for piece, _ in pre.pre_tokenize_str(normalized)]


class HFBackend(TokenizersBackend):
    name = "hf"

    def __init__(self, model: ModelFiles, loader: str | None = None, **opts):
        if opts:
            raise TokparityError(f"hf backend: unknown option(s) {', '.join(sorted(opts))} (known: loader)")
        json_path = model.path("tokenizer_json")
        if loader is None:
            loader = "tokenizers" if json_path else "transformers"
        tok: tokenizers.Tokenizer | None
        if loader == "tokenizers":
            if json_path is None:
                raise TokparityError(f"model {model.name}: the hf backend needs a tokenizer.json, and it has none "
                                     f"(it has: {', '.join(model.files) or 'nothing'})")
            self.path = Path(json_path)
            tok = _load_tokenizers(self.path)
            self.auto = None
            self.loads_on_first_use = frozenset({"chat"})  # (transformers' AutoTokenizer: _chat_tokenizer)
            self._version = tokenizers.__version__
        elif loader == "transformers":
            self.path = _folder(model)
            if json_path is not None:  # AutoTokenizer reads it too
                check_tokenizer_json(json_path)
            with quiet_transformers() as transformers:
                try:
                    # Never the folder's own code (auto_map): a tokenizer file must not run anything.
                    self.auto = transformers.AutoTokenizer.from_pretrained(str(self.path), trust_remote_code=False)
                except (OSError, ValueError) as e:
                    raise BadModelFile(self.path, f"transformers.AutoTokenizer could not load it ({e})") from None
                self._version = f"{transformers.__version__} (tokenizers {tokenizers.__version__})"
            tok = getattr(self.auto, "backend_tokenizer", None)
        else:
            raise TokparityError(f"hf backend: loader must be 'tokenizers' or 'transformers', not {loader!r}")
        self.loader = loader
        if tok is not None:
            super().__init__(tok)
        else:  # a slow (Python) tokenizer: no stages to show
            # tok stays None: every method checks it first and uses self.auto instead
            self.tok, self.n_vocab = None, len(cast(Any, self.auto))  # type: ignore[assignment]

    @property
    def version(self) -> str:
        return self._version

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        if self.auto is None:
            return super().encode(text, add_special, parse_special)
        with panics_as_crashes("encode"):
            return list(self.auto.encode(text, add_special_tokens=add_special,
                                         split_special_tokens=not parse_special))

    @property
    def decode_switches(self) -> frozenset[str]:  # type: ignore[override]
        """transformers (a folder) takes clean_up_tokenization_spaces, but 5.23 ignores it set on
        for a BPE model (tokenization_utils_tokenizers.py ``_decode``: "destructive for BPE",
        unless clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output); it spaces
        no special token apart: its SentencePiece tokenizers take spaces_between_special_tokens
        and drop it (tokenization_utils_sentencepiece.py ``_decode``), the others do not take it."""
        cleans = self.auto is not None and not (
            self.tok is not None and type(self.tok.model).__name__ == "BPE" and
            not getattr(self.auto, "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output", False))
        return frozenset({"skip_special", "clean_up=off"} | ({"clean_up=on"} if cleans else set()))

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        if self.auto is None:
            return super().decode(ids, settings)
        forced = {} if settings.clean_up is None else {"clean_up_tokenization_spaces": settings.clean_up}
        with panics_as_crashes("decode"):
            return self.auto.decode(list(ids), skip_special_tokens=settings.skip_special, **forced)

    def pieces(self, ids: list[int]) -> list[str]:
        if self.auto is None:
            return super().pieces(ids)
        return list(self.auto.convert_ids_to_tokens(list(ids)))

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        """With the transformers loader: transformers' ``TextStreamer`` (skip_prompt), fed the prompt
        and then ``step`` ids at a time (as generate() puts a step's new tokens); each delta is the
        text it printed for them."""
        if self.loader != "transformers":
            return super().stream(ids, prompt, settings, step)
        with quiet_transformers() as transformers:
            printed: list[str] = []

            streamer_class: Any = transformers.TextStreamer  # type: ignore[attr-defined]

            class Collected(streamer_class):
                def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
                    printed.append(text)

            streamer = Collected(self.auto, skip_prompt=True, skip_special_tokens=settings.skip_special)
            import numpy  # (put() reads .shape and .tolist(): what generate() passes, without torch)
            streamer.put(numpy.array([list(ids[:prompt]) or [0]]))
            deltas = []
            rest = list(ids[prompt:])
            for k in range(0, len(rest), step):
                printed.clear()
                streamer.put(numpy.array(rest[k:k + step]))
                deltas.append("".join(printed))
            printed.clear()
            streamer.end()
            if deltas:
                deltas[-1] += "".join(printed)
            return deltas

    def chat(self, conversation: Conversation) -> ChatAnswer:
        """transformers' ``apply_chat_template`` on an ``AutoTokenizer`` of the model's folder (loaded
        on first use where the run reads the tokenizer.json with tokenizers)."""
        auto = self._chat_tokenizer()
        if not getattr(auto, "chat_template", None):
            raise NotImplementedError(f"{self.path.parent}: no chat template for transformers")
        return apply_chat_template(auto, conversation)

    def _chat_tokenizer(self) -> Any:
        """The AutoTokenizer the run has, else one loaded for chat alone (encode and decode stay
        with the library the run reads)."""
        if self.auto is not None:
            return self.auto
        if getattr(self, "_chat_auto", None) is None:
            with quiet_transformers() as transformers:
                try:
                    self._chat_auto = transformers.AutoTokenizer.from_pretrained(str(self.path.parent),
                                                                                 trust_remote_code=False)
                except (OSError, ValueError) as e:
                    raise NotImplementedError(f"transformers.AutoTokenizer could not load {self.path.parent} ({e})") \
                        from None
        return self._chat_auto

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        if self.auto is None:
            return super().piece_bytes(ids)
        with panics_as_crashes("decode"):  # (what an id adds after the token of "a", as the tokenizers path reads it)
            return after_anchor(list(self.auto.encode("a", add_special_tokens=False))[-1:],
                                lambda part: self.auto.decode(part, skip_special_tokens=False), ids)

    def supports(self, stage: str) -> bool:
        return self.tok is not None and super().supports(stage)

    def normalize(self, text: str) -> str:
        if self.tok is None:
            raise NotImplementedError("hf: this transformers tokenizer is a slow one; it exposes no normalizer")
        return super().normalize(text)

    def pre_tokenize(self, text: str) -> list[str]:
        if self.tok is None:
            raise NotImplementedError("hf: this transformers tokenizer is a slow one; it exposes no pre-tokenizer")
        return super().pre_tokenize(text)


def apply_chat_template(auto: Any, conversation: Conversation) -> ChatAnswer:
    """transformers' ``apply_chat_template`` on ``conversation``: the text, then the ids
    (``tokenize=True``, which encodes with no special tokens added); its refusal is the answer."""
    import copy

    from tokparity.chat import ChatAnswer

    asked = dict(tools=copy.deepcopy(conversation.tools), documents=copy.deepcopy(conversation.options.get("documents")),
                 add_generation_prompt=conversation.add_generation_prompt,
                 continue_final_message=conversation.options.get("continue_final_message", False),
                 **copy.deepcopy(conversation.variables))
    try:
        with quiet_transformers():
            text = auto.apply_chat_template(copy.deepcopy(conversation.messages), tokenize=False, **asked)
            ids = auto.apply_chat_template(copy.deepcopy(conversation.messages), tokenize=True, return_dict=False,
                                           **asked)
    except Exception as e:  # the template's refusal (TemplateError), or transformers' (ValueError)
        return ChatAnswer(raised=f"{type(e).__name__}: {e}")
    return ChatAnswer(text, [int(i) for i in ids])


# Tokenizers loaded in this process, by file (file_state, as check_tokenizer_json keeps its verdict): a
# test session or a ``regress`` opens one file for many runs, and tokenizers parses a large
# vocabulary in about a second. A file changed on disk is loaded again. The one setting a backend changes (encode_special_tokens) is
# set before each encode, and no two backends encode at once (tokparity runs no threads).
_LOADED: OrderedDict[tuple, tokenizers.Tokenizer] = OrderedDict()
KEPT_TOKENIZERS = 2  # (a large vocabulary holds half a gigabyte)


def _load_tokenizers(path: Path) -> tokenizers.Tokenizer:
    """``Tokenizer.from_file`` on a file ``check_tokenizer_json`` let through (a pipeline that
    would panic or exhaust memory is refused first, with the step named). Kept per file and stat."""
    key = file_state(path)  # (None: the load below says what is wrong with the path)
    if key is not None and key in _LOADED:
        _LOADED.move_to_end(key)
        return _LOADED[key]
    tok = _loaded_tokenizers(path)
    if key is not None:
        _LOADED[key] = tok
        while len(_LOADED) > KEPT_TOKENIZERS:
            _LOADED.popitem(last=False)
    return tok


def _loaded_tokenizers(path: Path) -> tokenizers.Tokenizer:
    check_tokenizer_json(path)
    try:
        # from the text, not the path: tokenizers refuses a file name that is not UTF-8
        text = path.read_bytes().decode("utf-8")
        with _RUST_STDERR.held():
            return tokenizers.Tokenizer.from_str(text)
    except (OSError, UnicodeDecodeError) as e:
        raise BadModelFile(path, f"cannot read it as UTF-8 JSON ({e})") from None
    except Exception as e:  # tokenizers raises its own Exception type for a bad file
        raise BadModelFile(path, f"tokenizers could not load it ({e})") from None
    except BaseException as e:
        if not is_rust_panic(e):
            raise
        raise BadModelFile(path, f"tokenizers panicked loading it ({str(e).splitlines()[0] if str(e) else e!r})") \
            from None


def _folder(model: ModelFiles) -> Path:
    for role in ("tokenizer_json", "tokenizer_config", "spm_model"):
        p = model.path(role)
        if p is not None:
            return Path(p).parent
    raise TokparityError(f"model {model.name}: the hf backend needs a tokenizer.json or a folder with a "
                         "tokenizer_config.json, and it has neither")
