"""End of generation: the ids that end a generation, as each file and each engine has them.

A model ends its turn by writing one token. An engine stops there only if that id is in the set it
stops at, and engines build that set from different files:

* llama.cpp (llama-cli, llama-server) asks ``llama_vocab_is_eog``: the GGUF's ``eos``, ``eot`` and
  ``eom`` keys, plus every token whose text is on its own list (``<|im_end|>``, ``</s>``, ...).
  This module runs llama.cpp on the GGUF to read that set; it does not copy the list.
* A GGUF runtime that reads the keys alone stops at ``tokenizer.ggml.eos_token_id``,
  ``eot_token_id`` and ``eom_token_id``.
* transformers' ``generate()`` stops at ``generation_config.json``'s ``eos_token_id`` (an id or a
  list); without that file, at ``config.json``'s.
* ``tokenizer.eos_token_id`` in transformers is ``tokenizer_config.json``'s ``eos_token``; engines
  that stop at the tokenizer's end token read it. SentencePiece's ``eos_id()`` is its model's.

The chat template says which token closes an assistant turn: the one it writes right after the
reply, when the reply is the conversation's last message. Some templates close a tool call with a
token of its own (gpt-oss: ``<|call|>``, where a reply ends with ``<|return|>``). The property is
broken where a set lacks a closing token (the engine writes on past the turn or the call), where a
set holds a token the file types as text (an answer that writes that text stops there), or where
an id is outside the vocabulary.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokparity.checks import Finding, PropertyCheck
from tokparity.checks.libraries import Libraries
from tokparity.errors import TokparityError
from tokparity.textview import shown_path
from tokparity.vocab import Vocab, load_vocab
from tokparity.vocab.model import TokenType
from tokparity.zoo import ModelFiles
from tokparity.zoo.model_file import CONFIGURATION, read_model_json

NAME = "end-of-generation"
LLAMA = "llama.cpp"
GGUF_SET, SPM_SET, CONFIG_SET = "the GGUF's keys", "the SentencePiece model's eos_id", "tokenizer_config.json eos_token"
TOKENIZER_SETS = (GGUF_SET, SPM_SET, CONFIG_SET)  # the sets a tokenizer file itself names
REPLY = "Reply\ue002"  # (a private-use character: no template writes it itself)
ARGUMENT = "Zanzibar9"  # a tool call's argument: plain ASCII, so repr() and tojson() keep it as it is
TOOL_CALL: dict[str, Any] = {"type": "function", "id": "call12345",  # (nine letters and digits: Mistral's templates ask it)
             "function": {"name": "lookup", "arguments": {"query": ARGUMENT}}}
TURN, CALL = "an assistant turn", "a tool call"
CONFIG_BYTES = 1 << 20  # generation_config.json, config.json: a few kilobytes each
GGUF_KEYS = {"eos": "tokenizer.ggml.eos_token_id", "eot": "tokenizer.ggml.eot_token_id",
             "eom": "tokenizer.ggml.eom_token_id"}


def check(model: ModelFiles, libraries: Libraries) -> PropertyCheck:
    """The property for ``model``, with ``libraries`` run on its files (llama.cpp's end ids, and
    whether a token's text encodes to that token)."""
    role, vocab = ids_vocabulary(model)
    facts: list[str] = []
    findings: list[Finding] = []
    found = template_turn_end(model, vocab)
    closing: dict[str, int] = {}  # TURN or CALL -> the id the template closes it with
    if isinstance(found, Unrendered) and found.refused:  # (no engine makes a chat prompt with it)
        findings.append(Finding(f"The chat template refuses a user's message and a reply ({found.why}). No engine "
                                "makes a chat prompt with it, and the end of an assistant turn cannot be read from it",
                                found.source, "a user's 'Hello', then an assistant's reply"))
    elif isinstance(found, Unrendered):  # (past tokparity's own limits: an engine without them may render it)
        findings.append(Finding(f"The chat template could not be rendered here for a user's message and a reply "
                                f"({found.why}), so the end of an assistant turn was not read from it", found.source,
                                "a user's 'Hello', then an assistant's reply", broken=False))
    elif isinstance(found, str):
        facts.append(f"chat template: {found}")
    else:
        closing[TURN] = found[0]
        facts.append(f"chat template: closes an assistant turn with {_token(vocab, found[0])} ({found[1]})")
        call = template_call_end(model, vocab)
        if isinstance(call, (str, Unrendered)):  # (a template may take no tool calls)
            facts.append(f"chat template: no tool call's end checked ({call})")
        elif call[0] != found[0]:
            closing[CALL] = call[0]
            facts.append(f"chat template: closes a tool call with {_token(vocab, call[0])}")
    sets = stop_sets(model, vocab, libraries)
    if not sets and not findings:
        return PropertyCheck.skipped(NAME, "no file of the model names an end-of-generation id")
    # (the tokenizer's own end ids: a configuration's list may name a token by mistake, so it is judged)
    named = {i for name, _, ids, _ in sets if name in TOKENIZER_SETS and not isinstance(ids, str) for i in ids}
    named.update(closing.values())
    by_text = next((ids for name, _, ids, _ in sets if name == LLAMA and not isinstance(ids, str)), frozenset())
    for name, where, ids, engines in sets:
        if isinstance(ids, str):
            facts.append(f"{name}: not read ({ids})")
            continue
        facts.append(f"{name}: {', '.join(_token(vocab, i) for i in sorted(ids)) or 'none'}")
        findings += _judged(vocab, role, name, where, ids, engines, closing, named, by_text, libraries)
    return PropertyCheck.of(NAME, facts, findings)


def _judged(vocab: Vocab, role: str, name: str, where: str, ids: frozenset[int], engines: str,
            closing: dict[str, int], named: set[int], by_text: frozenset[int],
            libraries: Libraries) -> list[Finding]:
    """What is wrong with one set: ``closing``, the ids the template closes a turn and a tool call
    with; ``named``, the ids some file names as an end; ``by_text``, llama.cpp's."""
    found = []
    for i in sorted(ids):
        if not 0 <= i < vocab.size:
            found.append(Finding(f"{name} names id {i}, outside the vocabulary of {vocab.size:,} ids ({role}). "
                                 f"The model never writes it, so it never ends a generation by {engines}", where,
                                 f"id {i}"))
            continue
        kind = vocab.type_of(i)
        if i in named or kind not in (TokenType.NORMAL, TokenType.USER_DEFINED):
            continue
        encoded = libraries.encoded(role, vocab.tokens[i]) if kind == TokenType.NORMAL else None
        if kind == TokenType.NORMAL and encoded is not None and encoded[1] == [i]:
            # (a piece of ordinary text, and the tokenizer gives it for that text: the model writes it in answers)
            found.append(Finding(
                f"A generation by {engines} stops at {_token(vocab, i)}, which no tokenizer file names as an end and "
                f"the {role} types as ordinary text. {encoded[0]} gives that id for the text {vocab.tokens[i]!r}, so an "
                "answer that writes it ends there.", where, f"the text {vocab.tokens[i]!r}"))
        elif kind == TokenType.NORMAL:  # (a token no text encodes to: the model was never trained to write it)
            got = "" if encoded is None else f" ({encoded[0]} gives {', '.join(_token(vocab, j) for j in encoded[1])})"
            found.append(Finding(
                f"A generation by {engines} stops at {_token(vocab, i)}, which no tokenizer file names as an end and "
                f"the {role} types as ordinary text. Its text does not encode to it{got}, so a model rarely writes it.", where,
                f"the text {vocab.tokens[i]!r}", broken=False))
        else:  # (an added token: often a marker the model writes on purpose, so said, not broken)
            found.append(Finding(
                f"A generation by {engines} stops at {_token(vocab, i)}, which no tokenizer file names as an end; the "
                f"{role} types it as user-defined, so the text {vocab.tokens[i]!r} gives it too", where,
                f"the text {vocab.tokens[i]!r}",
                broken=False))
    for what, end in closing.items():
        if end in ids:
            continue
        rescued = " llama.cpp stops there only because it knows the token's text." \
            if name != LLAMA and end in by_text else ""
        past = "the end of the model's turn" if what == TURN else "the call, before any tool has answered"
        found.append(Finding(
            f"{_token(vocab, end)} is missing from {name}, though the chat template writes it to close {what}. "
            f"A generation by {engines} runs on past {past}.{rescued}", where,
            f"{'a reply' if what == TURN else 'a tool call'} that ends with {vocab.tokens[end]!r}"))
    return found


def ids_vocabulary(model: ModelFiles) -> tuple[str, Vocab]:
    """The vocabulary ids are read in: the publisher's transformers files first, else the primary file."""
    for role in ("tokenizer_json", "gguf"):
        if role in model.original_files:
            return role, load_vocab(model.files[role])
    role, path = model.primary
    return role, load_vocab(path)


def _token(vocab: Vocab, i: int) -> str:
    return f"{i} {vocab.tokens[i]!r}" if 0 <= i < vocab.size else f"{i} (no such id)"


@dataclass(frozen=True)
class Unrendered:
    """A chat template that failed on a one-turn conversation: it refused it, or could not be
    rendered within the sandbox's limits."""

    source: str  # the template's file and key
    what: str  # the conversation's last message: "a reply", "a tool call"
    why: str
    refused: bool  # the template refused it (raise_exception, an error): else too slow or too big to render here

    def __str__(self) -> str:
        return f"{self.source} does not render a user's message and {self.what} ({self.why})"


def template_turn_end(model: ModelFiles, vocab: Vocab) -> tuple[int, str] | Unrendered | str:
    """The id of the token the chat template writes right after an assistant's reply that ends the
    conversation, and the template's file; or why there is none."""
    return _closing(model, vocab, {"role": "assistant", "content": REPLY}, REPLY, "a reply")


def template_call_end(model: ModelFiles, vocab: Vocab) -> tuple[int, str] | Unrendered | str:
    """The id of the token the chat template writes last after an assistant's tool call that ends
    the conversation, and the template's file; or why there is none (a template may write no calls).
    The last: a call may hold markers of its own after its arguments (DeepSeek V3's
    ``<｜tool▁call▁end｜>``). The message's content is None first, as OpenAI's API sends it, then "";
    the arguments a mapping first, as transformers documents them, then a JSON string, as the API sends them."""
    found: tuple[int, str] | Unrendered | str = ""
    as_text = {**TOOL_CALL, "function": {**TOOL_CALL["function"], "arguments": json.dumps({"query": ARGUMENT})}}
    for call in (TOOL_CALL, as_text):
        for content in (None, ""):
            found = _closing(model, vocab, {"role": "assistant", "content": content, "tool_calls": [call]},
                             ARGUMENT, "a tool call", last=True)
            if isinstance(found, tuple):
                return found
    return found


def _closing(model: ModelFiles, vocab: Vocab, message: dict, marker: str, what: str,
             last: bool = False) -> tuple[int, str] | Unrendered | str:
    """The first special token (``last``: the last) the chat template writes after ``marker``, the
    text of ``message``, the assistant message that ends a one-turn conversation."""
    from tokparity.chat.sandbox import TemplateSandbox
    from tokparity.chat.template import find_template
    from tokparity.chat.way import TRANSFORMERS_WAY
    from tokparity.errors import CaseFailure, TemplateRaised

    template = find_template(model)
    if template is None:
        return "none"
    messages = [{"role": "user", "content": "Hello"}, message]
    sandbox = TemplateSandbox()
    try:
        text = sandbox.render(template.for_conversation(False), messages, None, {"add_generation_prompt": False},
                              template.specials, TRANSFORMERS_WAY.render.to_json())
    except (TemplateRaised, CaseFailure) as e:
        return Unrendered(template.source, what, str(e), isinstance(e, TemplateRaised))
    finally:
        sandbox.close()
    at = text.rfind(marker)
    if at < 0:
        return f"{template.source} does not write {what}"
    after = text[at + len(marker):]
    for kinds in ((TokenType.CONTROL,), (TokenType.USER_DEFINED,)):
        found = _special_token(vocab, after, kinds, last)
        if found is not None:
            return found, template.source
    return f"{template.source} writes no special token after {what} ({after[:40]!r})"


def _special_token(vocab: Vocab, text: str, kinds: tuple[TokenType, ...], last: bool = False) -> int | None:
    """The id of the first (``last``: the last) token of ``kinds`` whose text occurs in ``text``
    (the longest at each place)."""
    by_text = {vocab.tokens[i]: i for i in range(vocab.size - 1, -1, -1)
               if vocab.type_of(i) in kinds and len(vocab.tokens[i]) > 1}
    if not by_text:
        return None
    pattern = re.compile("|".join(re.escape(t) for t in sorted(by_text, key=len, reverse=True)))
    found = [m.group() for m in pattern.finditer(text)] if last else [m.group() for m in [pattern.search(text)] if m]
    return by_text[found[-1]] if found else None


StopSet = tuple[str, str, "frozenset[int] | str", str]  # name, file and key, ids or why not read, who stops by it


def stop_sets(model: ModelFiles, vocab: Vocab, libraries: Libraries) -> list[StopSet]:
    """Every set of end-of-generation ids the model's files give, with the engines that stop by it."""
    sets: list[StopSet] = []
    gguf = model.original_files.get("gguf")
    if gguf is not None:
        keys = load_vocab(gguf).special_ids
        named = {role: keys[role] for role in GGUF_KEYS if role in keys}
        sets.append((GGUF_SET, f"{shown_path(gguf)} " + ", ".join(GGUF_KEYS[r] for r in named or GGUF_KEYS),
                     frozenset(named.values()), "a GGUF runtime that reads these keys alone"))
        sets.append((LLAMA, f"{shown_path(gguf)}, llama_vocab_is_eog", libraries.llama_ends(),
                     "llama.cpp and llama-server"))
    spm = model.original_files.get("spm_model")
    if spm is not None and "eos" in (keys := load_vocab(spm).special_ids):
        sets.append((SPM_SET, f"{shown_path(spm)} trainer_spec.eos_id",
                     frozenset({keys["eos"]}), "an engine that stops at sentencepiece's eos_id()"))
    config = model.original_files.get("tokenizer_config")
    if config is not None:
        eos = _eos_text(model_json(config, "tokenizer_config.json"))
        if eos is not None:
            i = vocab.id_of(eos)
            ids: frozenset[int] | str = frozenset() if i is None else frozenset({i})
            if i is None:
                ids = f"its eos_token {eos!r} is no token of the vocabulary"
            sets.append((CONFIG_SET, f"{shown_path(config)} eos_token", ids,
                         "an engine that stops at the tokenizer's eos_token_id"))
    folder = config_folder(model)
    if folder is not None:
        for name in CONFIGURATION:  # (in order: generate() reads the first it finds)
            path = folder / name
            if not os.path.lexists(path):  # (a folder or a FIFO by that name is read, and refused in one line)
                continue
            value = model_json(path, name).get("eos_token_id")
            if value is None:
                continue
            listed = value if isinstance(value, list) else [value]
            if not all(type(i) is int for i in listed):
                raise TokparityError(f"{shown_path(path)}: eos_token_id must be an id or a list of ids, "
                                     f"not {json.dumps(value)[:60]}; fix the file")
            sets.append((f"{name} eos_token_id", f"{shown_path(path)} eos_token_id", frozenset(listed),
                         "transformers' generate()"))
            break  # (generate() reads config.json only without a generation_config.json)
    return sets


def config_folder(model: ModelFiles) -> Path | None:
    """The folder of a local model's transformers files, where its generation_config.json and
    config.json may be. None for a zoo model (its cache holds no configuration of its own) and for a
    GGUF or .model alone (a file beside it belongs to no one)."""
    files = model.original_files
    role = next((r for r in ("tokenizer_config", "tokenizer_json") if r in files), None)
    if model.origin != "local" or role is None:
        return None
    return files[role].parent


def model_json(path: Path, what: str) -> dict:
    """A JSON file of the model's folder: tokenizer_config.json within its own limit, a configuration
    within ``CONFIG_BYTES``."""
    from tokparity.vocab.hf_json import CONFIG_BYTES as TOKENIZER_CONFIG_BYTES

    limit = TOKENIZER_CONFIG_BYTES if what == "tokenizer_config.json" else CONFIG_BYTES
    return read_model_json(path, path.parent, limit, what)


def _eos_text(config: dict) -> str | None:
    value = config.get("eos_token")
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None
