"""``py:MODULE:CALLABLE``: a user's tokenizer written in Python.

    py:mypkg.engine:encode            mypkg/engine.py defines encode(text, add_special, parse_special)
    py:./my_engine.py:Engine          a file path works too; a class is made once with the model's
                                      files, {"gguf": "/path/...", ...}, and its .encode (and, where
                                      it has them, .decode(ids), .stream(ids, prompt) -> [delta per id
                                      after the prompt], .pieces() -> [bytes or None per id]) are called;
                                      an ``unsupported = ["parse_special=false"]`` attribute declares
                                      an engine that parses special-token text whatever is asked;
                                      with --skip-special, decode and stream get skip_special=True,
                                      with --clean-up-spaces decode gets clean_up_tokenization_spaces=
                                      True/False, with --spaces-between-specials
                                      spaces_between_special_tokens=True, with --remove-special
                                      remove_special=True, with --stream-step K stream
                                      gets step=K (not tried where they take no such argument);
                                      .chat(messages, tools, options) -> {"text", "ids"} (--ops chat)

``encode`` returns the ids as a list of ints (exactly: ``1.5``, ``True`` or ``"3"`` make the case
a failure, "engine returned ...", as from a ``cmd:`` engine), ``decode`` a str. By default the code runs in a child process
(isolated.py), so an infinite loop is a ``timeout`` and a crash in an extension module a
``crash``, as with ``cmd:`` engines; ``isolate=False`` runs it in process, faster, unguarded.
"""

from __future__ import annotations

import copy
import importlib
import importlib.machinery
import importlib.util
import inspect
import operator
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tokparity.backends.base import Backend, declared
from tokparity.backends.process import scrubbed
from tokparity.errors import CaseFailure, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, EVERY_SWITCH, DecodeSettings
from tokparity.textview import clipped, message_of
from tokparity.zoo import ModelFiles

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation
    from tokparity.vocab import Vocab


def _keywords(call, name: str, **asked) -> dict:
    """The keywords ``call`` is given: each of ``asked`` that is not None (``skip_special=True``,
    ``step=3``, ``clean_up_tokenization_spaces=False``); a callable that takes none of that name
    (nor ``**kwargs``) is not tried with it."""
    wanted = {key: value for key, value in asked.items() if value is not None}
    if not wanted:
        return {}
    try:
        parameters = list(inspect.signature(call).parameters.values())
    except (TypeError, ValueError):  # (a builtin without a signature: tried as if it took them)
        return wanted
    taken = {p.name for p in parameters} | ({*wanted} if any(p.kind == p.VAR_KEYWORD for p in parameters) else set())
    missing = [key for key in wanted if key not in taken]
    if missing:
        raise NotImplementedError(f"{name}: {getattr(call, '__name__', 'its callable')} takes no {missing[0]} argument")
    return wanted


def check_target(target: str) -> tuple[str, str]:
    """``"mypkg.engine:encode" -> ("mypkg.engine", "encode")``; a clear error for anything else."""
    module, sep, attr = target.rpartition(":")
    file = module.endswith(".py") or os.sep in module or "/" in module
    if not sep or not module or not attr or (not file and not all(p.isidentifier() for p in module.split("."))) \
            or not all(p.isidentifier() and not p.startswith("__") for p in attr.split(".")):
        raise TokparityError(f"py:{target}: expected py:MODULE:CALLABLE, MODULE a module's dotted name or a .py "
                             "file, CALLABLE a name in it, e.g. py:mypkg.engine:encode or py:./my_engine.py:encode")
    return module, attr


def load_target(target: str):
    module_name, attr = check_target(target)
    if module_name.endswith(".py") or os.sep in module_name or "/" in module_name:
        path = Path(module_name).expanduser().resolve()
        if not path.is_file():
            raise TokparityError(f"py:{target}: no such file {path}")
        spec = importlib.util.spec_from_file_location(f"tokparity_user_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise TokparityError(f"py:{target}: {path} cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise TokparityError(f"py:{target}: importing {path} failed ({type(e).__name__}: {message_of(e)})") from None
    else:
        try:
            _from_the_current_folder(module_name.split(".")[0])
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise TokparityError(f"py:{target}: cannot import {module_name} ({e}); is it on PYTHONPATH?") from None
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TokparityError(f"py:{target}: {module_name} has no {attr!r}") from None
    if not callable(obj):
        raise TokparityError(f"py:{target}: {attr!r} is not callable")
    return module, obj


def _from_the_current_folder(top: str) -> None:
    """Where the module named is not on the path, its top-level module or package from the current
    folder (`tokparity` as a console script does not put that folder on the path). Only that one is
    taken from there: the folder never joins ``sys.path``, so a ``torch.py`` or ``json.py`` beside it
    never stands in for a library (one the engine's library looks for would be imported from there)."""
    if top in sys.modules or importlib.util.find_spec(top) is not None:
        return
    spec = importlib.machinery.PathFinder.find_spec(top, [os.getcwd()])
    if spec is None or spec.loader is None:
        return  # (not there either: import_module says so)
    module = importlib.util.module_from_spec(spec)
    sys.modules[top] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[top]
        raise


def checked_ids(name: str, ids: object) -> list[int]:
    """``ids`` as a list of ints, checked as a ``cmd:`` engine's reply is: ``[1.5]`` or ``[True, False]``
    would otherwise be recorded as ``[1]`` and ``[1, 0]``, and could agree. Any sequence of integers
    will do (a tuple, a numpy array of int64: whatever has ``__index__``, except bools)."""
    if isinstance(ids, (str, bytes, bytearray, dict, set, frozenset)) or not hasattr(ids, "__iter__"):
        raise CaseFailure(f"{name}: engine returned {clipped(ids, 100)} ({type(ids).__name__}), not a list of ints")
    out = []
    for i in cast(Iterable, ids):
        if isinstance(i, bool) or not hasattr(type(i), "__index__"):
            raise CaseFailure(f"{name}: engine returned {clipped(ids, 100)}, holding {clipped(i, 100)} ({type(i).__name__}), "
                              "not a list of ints")
        out.append(operator.index(i))
    return out


class FileRoles(dict):
    """The model's files by role, as a ``py:`` engine's class gets them. A role the model lacks
    raises a KeyError that lists the roles it has: ``files["tokenizer.json"]`` is a typo for
    ``files["tokenizer_json"]``."""

    def __init__(self, model: ModelFiles):
        super().__init__({role: str(p) for role, p in model.files.items()})
        self.model = model.name

    def __missing__(self, role: str) -> str:
        raise KeyError(f"{role!r} is no file of {self.model}; its files are {', '.join(sorted(self))}")


class PyFuncBackend(Backend):
    """The callable itself, in this process (``make_backend("py:...", model, isolate=False)``)."""

    def __init__(self, target: str, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"py backend: unknown option(s) {', '.join(sorted(opts))}")
        self.name = f"py:{target}"
        self.model = model
        module, found = load_target(target)
        obj = cast(Any, found)  # a user's class or callable: its shape is checked by calling it
        self._version = str(getattr(module, "__version__", ""))
        if inspect.isclass(obj):
            instance = cast(Any, obj)(FileRoles(model))
            self._encode = instance.encode
            self._decode = getattr(instance, "decode", None)
            self._stream = getattr(instance, "stream", None)
            self._pieces = getattr(instance, "pieces", None)
            self._chat = getattr(instance, "chat", None)
        else:
            self._encode, self._decode, self._stream, self._pieces, self._chat = obj, None, None, None, None
        self._piece_table: list[bytes | None] | None = None
        self._vocab: Vocab | None = None
        # what it declares it cannot do: ``unsupported = ["parse_special=false"]`` on its class or callable
        try:
            self.unsupported = declared(getattr(obj, "unsupported", ()), self.name)
        except CaseFailure as e:
            raise TokparityError(str(e)) from None

    @property
    def version(self) -> str:
        return self._version

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        return checked_ids(self.name, self._encode(text, add_special, parse_special))

    # A callable that takes no keyword for a setting is not tried with it (_keywords).
    decode_switches = EVERY_SWITCH

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        if self._decode is None:
            raise NotImplementedError(f"{self.name} has no decode")
        asked = _keywords(self._decode, self.name, skip_special=settings.skip_special or None,
                          clean_up_tokenization_spaces=settings.clean_up,
                          spaces_between_special_tokens=settings.spaces_between_specials or None,
                          remove_special=settings.remove_special or None)
        text = self._decode(list(ids), **asked)
        if not isinstance(text, str):
            raise CaseFailure(f"{self.name}: decode returned {clipped(text, 100)}, not a str")
        return scrubbed(text)

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        if self._stream is None:
            raise NotImplementedError(f"{self.name} has no stream")
        asked = _keywords(self._stream, self.name, skip_special=settings.skip_special or None,
                          step=step if step != 1 else None)
        deltas = self._stream(list(ids), prompt, **asked)
        if not (isinstance(deltas, list) and all(isinstance(d, str) for d in deltas)):
            raise CaseFailure(f"{self.name}: stream returned {clipped(deltas, 100)}, not a list of str")
        return [scrubbed(d) for d in deltas]

    def chat(self, conversation: Conversation) -> ChatAnswer:
        """``.chat(messages, tools, options)`` -> ``{"text": ..., "ids": [...]}`` (either may be
        absent) or ``{"raised": "why"}``, as the protocol's reply."""
        from tokparity.chat import ChatAnswer

        if self._chat is None:
            raise NotImplementedError(f"{self.name} has no chat")
        # (copies: an engine that edits the messages it is given must not edit the conversation the
        # next backend and the diagnosis read)
        reply = self._chat(copy.deepcopy(conversation.messages), copy.deepcopy(conversation.tools),
                           copy.deepcopy(conversation.options))
        if isinstance(reply, dict) and isinstance(reply.get("raised"), str):
            return ChatAnswer(raised=reply["raised"] or "raised")
        text, ids = (reply.get("text"), reply.get("ids")) if isinstance(reply, dict) else (None, None)
        if not isinstance(reply, dict) or (text is None and ids is None) or \
                (text is not None and not isinstance(text, str)):
            raise CaseFailure(f"{self.name}: chat returned {clipped(reply, 100)}, not a dict with a str 'text' "
                              "and/or a list 'ids'")
        return ChatAnswer(scrubbed(text) if text is not None else None,
                          checked_ids(self.name, ids) if ids is not None else None)

    @property
    def n_vocab(self) -> int:
        return len(self._table())

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        table = self._table()
        return [table[i] if 0 <= i < len(table) else None for i in ids]

    def _table(self) -> list[bytes | None]:
        """The engine's ``pieces()``: every id's bytes (or None), asked once."""
        if self._piece_table is None:
            if self._pieces is None:
                raise NotImplementedError(f"{self.name} has no pieces")
            table = self._pieces()
            if not (isinstance(table, list) and all(b is None or isinstance(b, bytes) for b in table)):
                raise CaseFailure(f"{self.name}: pieces returned {clipped(table, 100)}, not a list of bytes or None")
            self._piece_table = table
        return self._piece_table

    def pieces(self, ids: list[int]) -> list[str]:
        """From the model's vocabulary, read by tokparity."""
        if self._vocab is None:
            from tokparity.vocab import load_vocab
            self._vocab = load_vocab(self.model.primary[1])
        tokens = self._vocab.tokens
        return [tokens[i] if 0 <= i < len(tokens) else f"<id {i} outside the vocabulary>" for i in ids]
