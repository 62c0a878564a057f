"""Vocabulary size: how many ids each file of a model says there are, and what the ids in a gap
decode to.

The sizes come from each original tokenizer file (a GGUF's token count, the highest id of a
tokenizer.json plus one, a SentencePiece model's pieces), from ``tokenizer_config.json``'s
``added_tokens_decoder`` and from ``config.json``'s ``vocab_size`` (the rows of the model's
embedding). A model may write any id below ``vocab_size``; a tokenizer may give any id it holds.

The property is broken where a tokenizer gives an id the model has no row for (an engine reads
past its embedding), where tokenizer_config.json adds an id a file lacks, or where the libraries
decode an id of a gap differently (one writes ``''``, another fails the request). A gap that every
library decodes alike is padding: said, not broken.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tokparity.checks import Finding, PropertyCheck
from tokparity.checks.ends import config_folder, model_json
from tokparity.checks.libraries import Libraries
from tokparity.errors import TokparityError
from tokparity.textview import shown_path
from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType
from tokparity.zoo import ModelFiles

NAME = "vocabulary-size"
VOCAB_ROLES = ("gguf", "tokenizer_json", "spm_model", "tiktoken", "rwkv_vocab")
# The most ids a model may have: GGUF and llama.cpp hold an id in a signed 32-bit integer.
MOST_IDS = 2**31 - 1
SHOWN_GAP_IDS = 3  # the gap's ids decoded and shown: its first, its last and one between


def check(model: ModelFiles, libraries: Libraries) -> PropertyCheck:
    sizes: list[tuple[str, int]] = []  # (what says it, the number of ids)
    facts: list[str] = []
    for role in VOCAB_ROLES:
        path = model.original_files.get(role)
        if path is None:
            continue
        vocab = load_vocab(path)
        holes = sum(1 for i in range(vocab.size) if vocab.type_of(i) == TokenType.UNUSED
                    and vocab.tokens[i] == f"[PAD{i}]") if role == "tokenizer_json" else 0
        said = f"{shown_path(path)} ({role})"
        sizes.append((said, vocab.size))
        facts.append(f"{said}: {vocab.size:,} ids" + (f", {holes:,} of them without a token" if holes else ""))
    if not sizes:
        return PropertyCheck.skipped(NAME, "no tokenizer file")
    findings: list[Finding] = []
    smallest_said, smallest = min(sizes, key=lambda s: s[1])
    config = model.original_files.get("tokenizer_config")
    if config is not None:
        ids = _added_ids(config)
        if ids:
            said = f"{shown_path(config)} added_tokens_decoder"
            facts.append(f"{said}: added ids up to {max(ids):,}")
            if max(ids) >= smallest:
                findings.append(Finding(
                    f"{said} adds id {max(ids):,}, beyond the {smallest:,} ids of {smallest_said}. The files "
                    "disagree on that token's id, so a library that reads one file and one that reads both give "
                    "it different ids", said,
                    _gap(libraries, smallest, max(ids) + 1)[0]))
    rows: int | None = None  # config.json's vocab_size: the model's embedding rows
    rows_where = ""
    if folder := config_folder(model):
        path = folder / "config.json"
        value = model_json(path, "config.json").get("vocab_size") if os.path.lexists(path) else None
        if value is not None and (type(value) is not int or not 0 < value <= MOST_IDS):
            raise TokparityError(f"{shown_path(path)}: vocab_size must be a whole number from 1 to {MOST_IDS:,}, "
                                 f"not {json.dumps(value)[:40]}; fix the file")
        if value is not None:
            rows, rows_where = value, f"{shown_path(path)} vocab_size"
            facts.append(f"{rows_where}: {rows:,} (the model's embedding rows)")
    largest_said, largest = max(sizes, key=lambda s: s[1])
    if rows is not None and largest > rows:
        findings.append(Finding(
            f"The tokenizer gives ids up to {largest - 1:,} ({largest_said}), but the model has {rows:,} embedding "
            f"rows (config.json vocab_size). An engine reads past the embedding for ids {rows:,} and above",
            rows_where, f"id {rows:,}"))
    if smallest < largest:
        shown, alike = _gap(libraries, smallest, largest)
        findings.append(Finding(
            f"{largest_said} has {largest:,} ids, {smallest_said} only {smallest:,}: ids {smallest:,} to "
            f"{largest - 1:,} are in one and not the other" + _decoded(alike), smallest_said, shown,
            broken=not alike))
    if rows is not None and rows > largest:
        shown, alike = _gap(libraries, largest, rows)
        findings.append(Finding(
            f"The model has {rows:,} embedding rows and its tokenizer {largest:,} ids: ids {largest:,} to "
            f"{rows - 1:,} have no token" + _decoded(alike), rows_where, shown, broken=not alike))
    return PropertyCheck.of(NAME, facts, findings)


def _added_ids(config: Path) -> list[int]:
    """The ids of tokenizer_config.json's ``added_tokens_decoder``. transformers reads each key as
    an id (``int(key)``). A key that is no id, or a field that is no object, is refused in one line."""
    added = model_json(config, "tokenizer_config.json").get("added_tokens_decoder")
    if added is None:
        return []
    if not isinstance(added, dict):
        raise TokparityError(f"{shown_path(config)}: added_tokens_decoder must be an object from ids to tokens, "
                             f"not {type(added).__name__}; fix the file")
    for key in added:
        if not (key.isascii() and key.isdigit() and len(key) <= len(str(MOST_IDS))) or int(key) > MOST_IDS:
            raise TokparityError(f"{shown_path(config)}: added_tokens_decoder key {json.dumps(key)[:40]} is no id "
                                 f"(a whole number up to {MOST_IDS:,}); fix the file")
    return [int(key) for key in added]


def _decoded(alike: bool) -> str:
    return ". Every library here decodes them alike (padding)" if alike else \
        ". The libraries decode them differently"


def _gap(libraries: Libraries, start: int, end: int) -> tuple[str, bool]:
    """What each library decodes a few ids of ``start`` .. ``end - 1`` to (``hf 151669: ''; ...``), and
    whether every library decodes each of them alike."""
    ids = sorted({start, (start + end - 1) // 2, end - 1})[:SHOWN_GAP_IDS]
    names = [name for name, _role in libraries.decoders()]
    got = {(name, i): libraries.decoded(name, i) for name in names for i in ids}
    alike = all(len({got[name, i] for name in names}) <= 1 for i in ids)
    return "; ".join(f"{name} {i}: {got[name, i]}" for name in names for i in ids), alike
