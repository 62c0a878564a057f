"""The ``llama.cpp`` backend: llama-cpp-python's low-level API on a GGUF, vocabulary only.

Why the low-level API and not ``Llama.tokenize``: ``Llama`` builds a context (and prints an
``n_ctx_seq`` line even with ``verbose=False``), and its ``tokenize`` allocates a fresh buffer of
``n_ctx_train`` tokens on every call. Here the model is loaded with ``vocab_only`` and no
context, and the token and text buffers are allocated once and grown when llama.cpp returns a
negative count (the size it needs). That makes it about twice as fast per call.

Its helpers also have a fixed 32-byte piece buffer (llama-cpp-python #2362: ``token_to_piece``
returns the buffer's 32 bytes, NULs included; ``detokenize`` slices with the negative "too small"
count and loses the piece). Pieces longer than 32 bytes exist (runs of spaces or dashes in code
vocabularies), so ``token_bytes`` and ``decode`` here grow their buffers instead.

llama.cpp logs through one process-wide callback. It is replaced by a collector: the load log
is dropped (kept only to explain a failed load), and warnings raised while one case is encoded,
such as "Added a BOS token ... now the final prompt starts with 2 BOS tokens", become that
case's ``notes``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import llama_cpp

from tokparity.backends.base import Backend, EncodeResult
from tokparity.errors import BadModelFile, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.zoo import ModelFiles

# ggml_log_level as this llama.cpp numbers it.
LOG_WARN, LOG_ERROR, LOG_CONT = 3, 4, 5
_MAX_KEPT = 200  # log lines kept between two reads, so a chatty loop cannot grow without bound


if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation


@contextlib.contextmanager
def _ctrl_c_after() -> Iterator[None]:
    """Ctrl-C (and SIGTERM, which acts through it) during the block acts at its end. llama.cpp logs
    through a Python callback while it loads: a KeyboardInterrupt raised there is swallowed by
    ctypes, and the run went on to its end as if nothing came."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[FrameType | None] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        if callable(previous):
            previous(signal.SIGINT, came[0])
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt


class _LogCollector:
    """The callback llama.cpp logs through, for every backend in this process."""

    def __init__(self):
        self.lines: list[tuple[int, str]] = []
        self._last_level = 0
        self.callback = llama_cpp.llama_log_callback(self._on_log)  # must stay referenced

    def _on_log(self, level: int, text: bytes, _user_data) -> None:
        message = text.decode("utf-8", "replace") if text else ""
        if level == LOG_CONT:  # a continuation of the previous message, at its level
            if self.lines and self.lines[-1][0] == self._last_level:
                self.lines[-1] = (self._last_level, self.lines[-1][1] + message)
            return
        self._last_level = level
        if len(self.lines) < _MAX_KEPT:
            self.lines.append((level, message))

    def take(self, min_level: int = LOG_WARN) -> list[str]:
        kept = [m.strip() for level, m in self.lines if level >= min_level and m.strip()]
        self.lines.clear()
        return kept

    def install(self) -> None:
        llama_cpp.llama_log_set(self.callback, ctypes.c_void_p(0))


_LOG = _LogCollector()
_LOG.install()
_BACKEND_READY = False


def _backend_init() -> None:
    global _BACKEND_READY
    if not _BACKEND_READY:
        llama_cpp.llama_backend_init()
        _BACKEND_READY = True


class LlamaCppBackend(Backend):
    name = "llama.cpp"

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"llama.cpp backend: unknown option(s) {', '.join(sorted(opts))}")
        path = model.path("gguf")
        if path is None:
            raise TokparityError(f"model {model.name}: the llama.cpp backend needs a .gguf file, and it has none "
                                 f"(it has: {', '.join(model.files) or 'nothing'})")
        self.path = Path(path)
        self._model = None
        _backend_init()
        _LOG.install()  # in case something else (a Llama object) replaced the callback
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        _LOG.take()
        with _ctrl_c_after():
            handle = llama_cpp.llama_model_load_from_file(os.fsencode(self.path), params)  # (a name not UTF-8 too)
        if not handle:
            errors = _LOG.take(LOG_ERROR)  # the first lines say why, the last ones only that it failed
            why = "; ".join(errors[:2]) if errors else "no reason given"
            raise BadModelFile(self.path, f"llama.cpp could not load it: {why}")
        _LOG.take()
        self._model = handle
        self._vocab = llama_cpp.llama_model_get_vocab(handle)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self._vocab)
        if self.n_vocab <= 0:  # llama.cpp loads it, then aborts on the first text (unordered_map::at)
            self.close()
            raise BadModelFile(self.path, "the vocabulary has no tokens (tokenizer.ggml.tokens is empty); "
                                          "not a usable tokenizer")
        # Reused between calls, grown when llama.cpp says they are too small (a negative return).
        self._tokens = (llama_cpp.llama_token * 512)()
        self._text = ctypes.create_string_buffer(256)

    @property
    def version(self) -> str:
        return llama_cpp.__version__

    # -- encode ----------------------------------------------------------------------------------

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        data = text.encode("utf-8")
        n = llama_cpp.llama_tokenize(self._vocab, data, len(data), self._tokens, len(self._tokens),
                                     add_special, parse_special)
        if n < 0:  # the buffer is too small; -n is what it needs. Grow it (for good) and ask again.
            self._tokens = (llama_cpp.llama_token * max(-n, 2 * len(self._tokens)))()
            n = llama_cpp.llama_tokenize(self._vocab, data, len(data), self._tokens, len(self._tokens),
                                         add_special, parse_special)
            if n < 0:
                raise RuntimeError(f"llama_tokenize asked for {-n} tokens after being given {len(self._tokens)}")
        return self._tokens[:n]

    def encode_with_notes(self, text: str, add_special: bool = False, parse_special: bool = False) -> EncodeResult:
        _LOG.take()
        ids = self.encode(text, add_special, parse_special)
        return EncodeResult(ids, _LOG.take(LOG_WARN))

    # -- decode and pieces -----------------------------------------------------------------------

    def _check_ids(self, ids: list[int]) -> None:
        # llama.cpp looks ids up with .at(): an id outside the vocabulary throws through the C API
        # and aborts the process, so it is refused here.
        for i in ids:
            if not 0 <= i < self.n_vocab:
                raise ValueError(f"token id {i} is outside the vocabulary (0..{self.n_vocab - 1})")

    def decode_bytes(self, ids: list[int], remove_special: bool = False, unparse_special: bool = True) -> bytes:
        """``llama_detokenize``; special tokens rendered as their text (llama.cpp's common default)."""
        ids = list(ids)
        self._check_ids(ids)
        arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
        for _ in range(3):
            n = llama_cpp.llama_detokenize(self._vocab, arr, len(ids), self._text, len(self._text),
                                           remove_special, unparse_special)
            if n >= 0:
                return self._text.raw[:n]
            self._text = ctypes.create_string_buffer(-n + 64)
        raise RuntimeError("llama_detokenize kept asking for a larger buffer")

    # (clean_spaces comes from the vocabulary: llama_detokenize has no switch for it)
    decode_switches = frozenset({"skip_special", "remove_special"})

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        return self.decode_bytes(ids, remove_special=settings.remove_special,
                                 unparse_special=not settings.skip_special).decode("utf-8", "replace")

    def token_bytes(self, ids: list[int], special: bool = True) -> list[bytes]:
        """What each token renders to (``llama_token_to_piece``): byte tokens as their byte, ``▁`` as a space."""
        ids = list(ids)
        self._check_ids(ids)
        out = []
        for i in ids:
            n = llama_cpp.llama_token_to_piece(self._vocab, i, self._text, len(self._text), 0, special)
            if n < 0:
                self._text = ctypes.create_string_buffer(-n + 64)
                n = llama_cpp.llama_token_to_piece(self._vocab, i, self._text, len(self._text), 0, special)
            out.append(self._text.raw[:n])
        return out

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        """llama.cpp's pieces (``token_to_piece``, specials as their text unless skipped) sent one id
        at a time, a character not yet complete held back (tokparity.reference.decode.piece_stream).
        llama-server holds more: all of a chunk that ends inside a character, and none of a
        character the prompt began (docs/findings.md)."""
        from tokparity.backends.base import in_steps
        from tokparity.reference.decode import piece_stream
        return in_steps(piece_stream(lambda part: self.token_bytes(part, special=not settings.skip_special), ids, prompt), step)

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        return list(self.token_bytes(ids))

    def supports(self, stage: str) -> bool:
        if stage == "chat":  # (its chat formats by the GGUF's own template: a GGUF without one has no chat)
            return self._model is not None and bool(llama_cpp.llama_model_chat_template(self._model, None))
        return super().supports(stage)

    def chat(self, conversation: Conversation) -> ChatAnswer:
        """llama.cpp's built-in templates (``llama_chat_apply_template``: it recognizes the GGUF's
        template by what its text holds and formats with its own C++ code, what llama-cli and
        llama-server do without ``--jinja``), the prompt then tokenized as they tokenize it
        (``add_special`` as the vocabulary says, special-token text parsed). Built-ins take a role
        and a string content per message: other conversations are not covered (skipped)."""
        from tokparity.chat import ChatAnswer
        from tokparity.chat.builtin import builtin_text
        from tokparity.errors import NotCovered

        template = llama_cpp.llama_model_chat_template(self._model, None)
        if not template:
            raise NotImplementedError(f"{self.path}: no tokenizer.chat_template")
        if not conversation.only_text_content() or conversation.continue_final_message:
            raise NotCovered("llama.cpp's built-in templates take a role and a string content per message, "
                             "no tools, no continued message")
        text = builtin_text(template.decode("utf-8", "surrogateescape"), conversation,
                            conversation.add_generation_prompt)  # (NotImplementedError: no built-in matches)
        return ChatAnswer(text, self.encode(text, add_special=True, parse_special=True))

    def pieces(self, ids: list[int]) -> list[str]:
        """The token text as the GGUF stores it (``▁Hello``, ``Ġworld``, ``<0x0A>``)."""
        ids = list(ids)
        self._check_ids(ids)
        get = llama_cpp.llama_vocab_get_text
        return [(get(self._vocab, i) or b"").decode("utf-8", "surrogateescape") for i in ids]

    def generation_marks(self) -> tuple[frozenset[int], frozenset[int]]:
        """The ids a generation ends at (``llama_vocab_is_eog``), and the ids a server writes only when
        asked for special tokens (UNKNOWN or CONTROL: ``token_to_piece`` gives nothing without ``special``)."""
        hidden = llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN | llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        ends = frozenset(i for i in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self._vocab, i))
        special = frozenset(i for i in range(self.n_vocab) if llama_cpp.llama_vocab_get_attr(self._vocab, i) & hidden)
        return ends, special

    def close(self) -> None:
        self._free(beside=True)

    def _free(self, beside: bool) -> None:
        """Free the model: ``beside``, on a thread of its own (a large vocabulary takes a while to
        free, in C without Python's lock, and the run goes on to its next model meanwhile). Not
        while Python shuts down: a thread started then never runs, and its start waits for ever."""
        # Forget the model before freeing it: a Ctrl-C or SIGTERM that arrived during the free is
        # raised as soon as it returns, and __del__ would then free the model a second time.
        model, self._model, self._vocab = self._model, None, None
        if model is None:
            return
        if beside and not sys.is_finalizing():
            try:
                threading.Thread(target=llama_cpp.llama_model_free, args=(model,), name="tokparity-free-llama.cpp",
                                 daemon=True).start()
                return
            except RuntimeError:  # (Python 3.12 starts no thread once its exit has begun, in an atexit handler too)
                pass
        llama_cpp.llama_model_free(model)

    def __del__(self):
        try:
            self._free(beside=False)
        except Exception:  # interpreter shutdown: llama_cpp may already be gone
            pass
