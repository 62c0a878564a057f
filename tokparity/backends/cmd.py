"""``cmd:COMMAND``: any program that speaks tokparity's JSON-lines protocol (docs/contracts.md).

    -> {"id": 1, "op": "encode", "text": "Hello world", "add_special": false, "parse_special": false}
    <- {"id": 1, "ids": [15043, 3186]}
    -> {"id": 2, "op": "decode", "ids": [15043, 3186]}
    <- {"id": 2, "text": "Hello world"}
    <- {"id": 3, "error": "what went wrong"}

Two optional additions a program may use: ``"notes": ["..."]`` in a reply (warnings about that
case, kept with its result) and ``"status": "skipped"`` in an error reply (the program has no
answer for this input, rather than a wrong one).

The command. It is split into words first (``shlex.split``), then ``{gguf}``, ``{spm_model}``,
``{tokenizer_json}`` (any file role), ``{name}`` and ``{python}`` (the interpreter running
tokparity) are replaced, and it is started without a shell. A placeholder that is a word of its
own becomes exactly that argument, whatever the path holds (spaces, quotes, ``;``): no shell
ever reads it. The same values are in the program's environment, one variable per file role the
model has: ``TOKPARITY_GGUF``, ``TOKPARITY_SPM_MODEL``, ``TOKPARITY_TOKENIZER_JSON``,
``TOKPARITY_TOKENIZER_CONFIG``, ``TOKPARITY_GOLDEN_INP``, ``TOKPARITY_GOLDEN_OUT``, and
``TOKPARITY_NAME``, ``TOKPARITY_PYTHON``. For pipes or globbing, run a shell and let it read the
variables, in double quotes:

    cmd:sh -c '{python} my_engine.py "$TOKPARITY_GGUF" 2>/dev/null'

A placeholder inside a larger word (``--model={gguf}``, or ``{gguf}`` in such a script) is only
replaced when its value holds nothing but letters, digits and ``_ . / + , : @ % = -``; otherwise
the command is refused, saying to write ``"$TOKPARITY_GGUF"``: pasted into a script, a model file
named ``m;touch${IFS}PWNED;#.gguf`` would end its quotation and run ``touch``.

The program runs in an ``EngineProcess`` (tokparity.backends.engine_process): how it is started,
timed, restarted and stopped is said there.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tokparity.backends.base import Answer, Backend, EncodeResult, declared
from tokparity.backends.engine_process import DEFAULT_TIMEOUT, EngineProcess
from tokparity.backends.requests import body, encode_body
from tokparity.errors import (
    CaseFailure,
    NotCovered,
    TokparityError,
)
from tokparity.reference.decode import AS_FILES_SAY, EVERY_SWITCH, DecodeSettings
from tokparity.zoo import FILE_ROLES, ModelFiles

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation
    from tokparity.vocab import Vocab

PIECES_TIMEOUT = 120.0  # seconds for the table of every id's bytes (one request per model)


def _piece_table(reply: dict, label: str, size: int) -> list[bytes | None]:
    """A pieces reply's ``pieces``: hex bytes or null per id of a vocabulary of ``size`` ids, checked."""
    pieces = reply.get("pieces")
    if not isinstance(pieces, list):
        raise CaseFailure(f"{label}: the pieces reply has no list 'pieces': {json.dumps(reply)[:200]}")
    # (a GGUF may pad its vocabulary past the model's file: a little longer is fine; fewer: the ids past
    # its end have no bytes)
    if len(pieces) > 2 * size + 1024:
        raise CaseFailure(f"{label}: the pieces reply has {len(pieces):,} entries for a vocabulary of {size:,} ids")
    table: list[bytes | None] = []
    for i, hexed in enumerate(pieces):
        if hexed is None:
            table.append(None)
            continue
        try:
            table.append(bytes.fromhex(hexed))
        except (TypeError, ValueError):
            raise CaseFailure(f"{label}: pieces[{i}] is {json.dumps(hexed)[:40]}, not hex bytes or null") from None
    return table


class ProtocolBackend(Backend):
    """A backend whose every answer comes from an ``EngineProcess``."""

    def __init__(self, engine: EngineProcess, model: ModelFiles, timeout: float = DEFAULT_TIMEOUT):
        self.engine = engine
        self.model = model
        self.timeout = float(timeout)
        if not self.timeout > 0:  # (nan too) inf is allowed: no limit; poll() waits in pieces
            engine.close()
            raise TokparityError(f"{engine.label}: the timeout must be a number of seconds above 0, not {timeout!r}")
        self._vocab: Vocab | None = None
        self._piece_table: list[bytes | None] | None = None

    @property
    def version(self) -> str:
        return ""  # the protocol has no way to ask; a program's version is its own business

    def _checked(self, reply: dict) -> dict:
        if reply.get("error") is not None:
            detail = f"{self.engine.label}: {clipped_text(str(reply['error']))}"
            status = reply.get("status")
            if status == "skipped":
                raise NotCovered(detail)
            if status == "unsupported":
                raise NotImplementedError(detail)
            raise CaseFailure(detail)
        return reply

    def _call(self, payload: dict) -> dict:
        reply, _junk = self.engine.request(body(payload), self.timeout)
        return self._checked(reply)

    def _encode_result(self, reply: dict, junk: list[str]) -> EncodeResult:
        try:
            self._checked(reply)
        except NotImplementedError as e:  # (it cannot encode this case: not answered, as a skip is)
            raise NotCovered(str(e)) from None
        ids = reply.get("ids")
        if type(ids) is not list or not all(type(i) is int for i in ids):
            raise CaseFailure(f"{self.engine.label}: the reply has no list of integer 'ids': "
                              f"{json.dumps(reply)[:200]}")
        if "unsupported" in reply:  # (it declares, with any reply, what it cannot do: kept for the run)
            self.unsupported = self.unsupported | declared(reply["unsupported"], self.engine.label)
        notes = reply.get("notes")
        return EncodeResult(ids, [str(n) for n in notes] + junk if notes else junk)

    def encode_with_notes(self, text: str, add_special: bool = False, parse_special: bool = False) -> EncodeResult:
        reply, junk = self.engine.request(encode_body(text, add_special, parse_special), self.timeout)
        return self._encode_result(reply, junk)

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        return self.encode_with_notes(text, add_special, parse_special).ids

    def encode_many(self, texts: list[str], add_special: bool = False,
                    parse_special: bool = False) -> list[Answer]:
        """Pipelined: the requests go out while the replies come back."""
        bodies = [encode_body(t, add_special, parse_special) for t in texts]
        out: list[Answer] = []
        for (reply, junk, seconds), text in zip(self.engine.request_many(bodies, self.timeout), texts):
            result: EncodeResult | CaseFailure
            if isinstance(reply, CaseFailure):
                result = reply
            else:
                try:
                    result = self._encode_result(reply, junk)
                except CaseFailure as e:
                    result = e
            out.append(Answer.of(result, seconds, text))
        return out

    # Asked of the engine: one that cannot give a setting answers an error (not tried with it).
    decode_switches = EVERY_SWITCH

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        request = {"op": "decode", "ids": [int(i) for i in ids], "skip_special": settings.skip_special}
        if settings.clean_up is not None:
            request["clean_up_spaces"] = settings.clean_up
        if settings.spaces_between_specials:
            request["spaces_between_specials"] = True
        if settings.remove_special:
            request["remove_special"] = True
        reply = self._op_call("decode", request)
        text = reply.get("text")
        if not isinstance(text, str):
            raise CaseFailure(f"{self.engine.label}: the decode reply has no 'text': {json.dumps(reply)[:200]}")
        return text

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        request = {"op": "stream", "ids": [int(i) for i in ids], "prompt": int(prompt),
                   "skip_special": settings.skip_special}
        reply = self._op_call("stream", request | ({"step": int(step)} if step != 1 else {}))
        deltas = reply.get("deltas")
        if not (isinstance(deltas, list) and all(isinstance(d, str) for d in deltas)):
            raise CaseFailure(f"{self.engine.label}: the stream reply has no list of strings 'deltas': "
                              f"{json.dumps(reply)[:200]}")
        generated = len(ids) - prompt
        if step != 1 and len(deltas) == generated != -(-generated // step):  # one delta an id: "step" not read
            raise NotImplementedError(f"{self.engine.label} answers one delta per id: it does not take \"step\"")
        return deltas

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        """From the engine's table of every id's bytes (``{"op": "pieces"}``), asked once."""
        if self._piece_table is None:
            reply = self._op_call("pieces", {"op": "pieces"}, timeout=max(self.timeout, PIECES_TIMEOUT))
            self._piece_table = _piece_table(reply, self.engine.label, len(self._tokens()))
        table = self._piece_table
        return [table[i] if 0 <= i < len(table) else None for i in ids]

    def _op_call(self, op: str, payload: dict, timeout: float | None = None) -> dict:
        """``_call`` for an op an engine may not implement: an error reply with no ``status`` (or
        ``"unsupported"``) means it does not answer this op here (NotImplementedError: not tried,
        the case skipped for it); ``"skipped"`` that it has no answer for these ids; any other
        status is a failure of the case. The same reply means the same whatever came before."""
        reply, _junk = self.engine.request(body(payload), timeout or self.timeout)
        if reply.get("error") is not None and reply.get("status") in (None, "unsupported"):
            raise NotImplementedError(f"{self.engine.label} does not answer {op!r}: {str(reply['error'])[:200]}")
        return self._checked(reply)

    def chat(self, conversation: Conversation) -> ChatAnswer:
        """``{"op": "chat", "messages": [...], "tools": [...], "options": {...}}`` ->
        ``{"text": "...", "ids": [...]}`` (either may be absent, not both), or ``{"raised": "why"}``:
        the template refused the conversation. An ``error`` with no status before any chat answer:
        the engine has no chat op (not tried); after one, a failure of that conversation (an engine
        that errors on tools must not pass by being skipped)."""
        from tokparity.chat import ChatAnswer

        if getattr(self, "_answers_chat", False):  # (it has answered chat: an error now is this conversation's failure)
            reply = self._call({"op": "chat", **conversation.to_request()})
        else:
            reply = self._op_call("chat", {"op": "chat", **conversation.to_request()})
            self._answers_chat = True
        text, ids = reply.get("text"), reply.get("ids")
        if isinstance(reply.get("raised"), str):
            return ChatAnswer(raised=reply["raised"] or "raised")
        if text is not None and not isinstance(text, str) or \
                ids is not None and not (type(ids) is list and all(type(i) is int for i in ids)) or \
                text is None and ids is None:
            raise CaseFailure(f"{self.engine.label}: a chat reply needs a string 'text', a list of integer 'ids' "
                              f"or both: {json.dumps(reply)[:200]}")
        return ChatAnswer(text, ids)

    def pieces(self, ids: list[int]) -> list[str]:
        """The protocol has no pieces: they come from the model's vocabulary, read by tokparity."""
        tokens = self._tokens()
        return [tokens[i] if 0 <= i < len(tokens) else f"<id {i} outside the vocabulary>" for i in ids]

    def _tokens(self) -> list[str]:
        if self._vocab is None:
            from tokparity.vocab import load_vocab
            self._vocab = load_vocab(self.model.primary[1])
        return self._vocab.tokens

    def close(self) -> None:
        self.engine.close()


PLACEHOLDERS = (*FILE_ROLES, "name", "python")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(map(re.escape, PLACEHOLDERS)) + r")\}")
# A word in braces that looks meant as a placeholder (``{tokenizer.json}``, ``{GGUF}``): refused when
# it is close to one, since it would reach the engine as it is. Other braces (``${HOME}``, a JSON
# argument, an f-string of ``python -c``) are the command's own.
_BRACED = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
# Words that mean "the model's file" without saying which kind: as a word of their own, refused with
# the list of kinds (``{model}`` is near ``{spm_model}``, but meant for any file).
_ANY_FILE = frozenset({"model", "file", "path", "model_file", "model_path", "vocab", "weights"})
# What a value may hold to be pasted inside a larger word of the command (``--model={gguf}``, a
# ``sh -c`` script): characters that mean nothing to a shell, quoted or not. A path with anything
# else (a space, a quote, ``$``, ``;``) could end a quotation and run what its name says.
_SAFE_INSIDE_A_WORD = re.compile(r"[A-Za-z0-9_./+,:@%=-]+")


def env_name(key: str) -> str:
    """``"gguf" -> "TOKPARITY_GGUF"``: where the engine finds a value in its environment."""
    return f"TOKPARITY_{key.upper()}"


def engine_env(model: ModelFiles, base: dict[str, str] | None = None) -> dict[str, str]:
    """The engine's environment: ours, plus ``TOKPARITY_GGUF``, ``TOKPARITY_SPM_MODEL``, … (one per
    file role the model has; the others removed, so none is inherited from a caller),
    ``TOKPARITY_NAME`` and ``TOKPARITY_PYTHON``."""
    env = dict(os.environ if base is None else base)
    for role in FILE_ROLES:
        path = model.path(role)
        if path is None:
            env.pop(env_name(role), None)
        else:
            env[env_name(role)] = str(path)
    env[env_name("name")] = model.name
    env[env_name("python")] = sys.executable
    return env


def _a_word_of_its_own(command: str, start: int, end: int) -> bool:
    """True if ``command[start:end]`` is a shell word, an option's value (``--model=…``) or a quoted
    word (``"…"``, ``'…'``): a word a user meant as a whole, not a piece of a larger one."""
    before, after = command[max(0, start - 1):start], command[end:end + 1]
    if before in ("'", '"') and after == before:
        before, after = command[max(0, start - 2):start - 1], command[end + 1:end + 2]
    return before in ("", " ", "\t", "=") and after in ("", " ", "\t")


def expand_command(command: str, model: ModelFiles) -> list[str]:
    """``"python3 eng.py {gguf}"`` -> ``["python3", "eng.py", "/path/to/model.gguf"]``.

    The command is split first (``shlex.split``), then each placeholder replaced: one that is a
    whole word becomes that word exactly, whatever the path holds (no shell sees it); one inside a
    larger word (``sh -c '... {gguf}'``) only if the value is made of harmless characters, because
    the quoting around it is the command's, not ours. Otherwise the error says to write
    ``"$TOKPARITY_GGUF"`` instead, which the engine's environment holds (``engine_env``)."""
    if not command.strip():
        raise TokparityError("cmd: needs a command after the colon, e.g. -b 'cmd:python3 my_engine.py {gguf}'")
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise TokparityError(f"cmd:{command}: cannot split the command ({e}); check its quotes") from None

    def value(key: str) -> str:
        if key == "name":
            return model.name
        if key == "python":
            return sys.executable
        path = model.path(key)
        if path is None:
            raise TokparityError(f"cmd:{command}: model {model.name} has no {key} file for {{{key}}} "
                                 f"(it has: {', '.join(model.files) or 'nothing'})")
        return str(path)

    def inside_a_word(m: re.Match) -> str:
        key = m.group(1)
        found = value(key)
        if not _SAFE_INSIDE_A_WORD.fullmatch(found):
            raise TokparityError(f"cmd:{command}: {{{key}}} sits inside a larger word and its value {found!r} holds "
                                 f"characters a shell would act on; write \"${env_name(key)}\" there instead (the "
                                 "engine's environment holds it), or make {" + key + "} a word of its own")
        return found

    refuse_unknown_placeholders(command)
    argv = []
    for word in words:
        whole = _PLACEHOLDER.fullmatch(word)
        argv.append(value(whole.group(1)) if whole else _PLACEHOLDER.sub(inside_a_word, word))
    return argv


def refuse_unknown_placeholders(command: str) -> None:
    """A ``{word}`` that is no placeholder but near one (``{gguff}``) is a typo: refused in one line.
    (Another ``{…}``, a JSON argument say, is the command's own.) Checked when ``-b`` is read, before
    a run makes its report folder."""
    for m in _BRACED.finditer(command):
        if m.group(1).lower() in _ANY_FILE:
            # ({model} as a word or an option's value is near {spm_model}, but it means any model's
            # file; inside a larger word it may be the command's own, an f-string's)
            if _a_word_of_its_own(command, m.start(), m.end()):
                raise TokparityError(f"cmd:{command}: {{{m.group(1)}}} is not a placeholder; name the model's file "
                                     f"by its kind: {', '.join('{' + p + '}' for p in FILE_ROLES)}")
        elif m.group(1) not in PLACEHOLDERS:
            near = difflib.get_close_matches(m.group(1).lower().replace(".", "_").replace("-", "_"), PLACEHOLDERS, 1, 0.6)
            if near:
                raise TokparityError(f"cmd:{command}: {{{m.group(1)}}} is not a placeholder; did you mean {{{near[0]}}}? "
                                     f"(the placeholders: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})")


ERROR_KEPT = 2000  # characters of an engine's error kept: the case's evidence, not a log


def clipped_text(text: str) -> str:
    return text if len(text) <= ERROR_KEPT else text[:ERROR_KEPT] + f"… ({len(text):,} characters)"


class CmdBackend(ProtocolBackend):
    """A user's program; started when the backend is made, so a wrong command fails at once."""

    def __init__(self, command: str, model: ModelFiles, timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float | None = None, cwd: str | os.PathLike | None = None, **opts):
        if opts:
            raise TokparityError(f"cmd backend: unknown option(s) {', '.join(sorted(opts))} "
                                 "(known: timeout, startup_timeout, cwd)")
        self.name = f"cmd:{command}"
        self.command = command
        argv = expand_command(command, model)
        engine = EngineProcess(argv, f"engine {Path(argv[0]).name}" + (f" {argv[1]}" if len(argv) > 1 else ""),
                               env=engine_env(model), cwd=str(cwd) if cwd else None, startup_timeout=startup_timeout)
        super().__init__(engine, model, timeout)
        engine.start()
