"""The library of an engine's file, asked beside it unjudged (``registry.witnesses``): where the
engine gives that library's ids on a case, the library's reviewed difference (a known divergence
of its own) is the engine's too, and the row says so. Where its ids are its own, nothing is
excused: an engine that reads Unicode 3.2's tables (tests/engines/blind/byte_bpe.py, written
blind) differs from llama.cpp where tokenizers does, but with other ids, and stays unexplained."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from tokparity.backends.registry import witnesses
from tokparity.report.overview import backend_versions
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services
from tokparity.run.results import Results, RunSummary, join_backends

ROOT = Path(__file__).parents[2]


def shipped() -> CompareOptions:
    """A run with tokparity's own known list, as the command line has it."""
    return CompareOptions(services=Services(known=load_known([], builtin=True)))

TEMPLATE = ROOT / "examples" / "engines" / "template_engine.py"
BYTE_BPE = ROOT / "tests" / "engines" / "blind" / "byte_bpe.py"


def test_the_witness_of_an_engine_is_the_library_of_the_file_it_names(zoo):
    model = zoo("llama-bpe")
    assert witnesses("mine=cmd:python3 e.py {tokenizer_json}", model) == ["hf"]
    assert witnesses("cmd:python3 e.py {gguf} {tokenizer_json}", model) == ["llama.cpp", "hf"]
    assert witnesses("hf", model) == []
    # (a py: class is given every file of the model: each file's library)
    assert set(witnesses("py:mine:encode", model)) == {"llama.cpp", "hf"}
    assert witnesses("cmd:e {spm_model}", model) == []  # (a file the model does not have)


def test_an_engine_that_does_what_its_library_does_is_told_so_and_passes(zoo):
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["seams"], ["ref", f"mine=cmd:{sys.executable} {TEMPLATE} {{tokenizer_json}}"],
                          shipped())
    runs = {r.backend: r for r in results.runs}
    assert "hf" not in runs and {"ref", "mine"} <= set(runs)  # (the witness is asked, not judged)
    # (listed among the backends, it says why it has no row)
    assert results.backends["hf"]["witness_of"] == {"llama-bpe": ("mine",)} and "witness_of" not in results.backends["ref"]
    assert backend_versions(results).endswith("; hf only asked beside mine, not judged")
    mine = [m for m in results.mismatches if m.backend == "mine"]
    assert runs["mine"].mismatches == len(mine) == 7 and runs["mine"].unexplained == 0
    assert {m.known for m in mine} == {"llama-cpp-unicode-tables-before-16"}
    assert all(m.cause_evidence.startswith("hf gives these ids too, on the same file") for m in mine)
    assert all(m.tags["witness"] == "hf" for m in mine)
    assert {m.given_too for m in mine} == {"hf gives these ids too, on the same file"}
    # The engine's own entry matched, not the library's: nothing is said of the library.
    own = replace(mine[0], decision=replace(mine[0].decision, cause_evidence="the known divergence of the engine"))
    assert own.given_too == ""


def test_a_witness_is_said_to_be_one_only_where_it_judges_nowhere():
    """A library may be a witness on one model and judged, or judging, on another: the Backends
    line calls it a witness only where it has no row and is no oracle on any model."""
    backends: dict[str, dict] = {}
    join_backends(backends, {"hf": {"version": "0.23.3", "witness_of": {"llama-bpe": ["mine"]}}})
    join_backends(backends, {"hf": {"version": "0.23.3", "witness_of": {"gemma-3": ["mine", "yours"]}},
                             "ref": {"version": "0.1.0"}})
    assert backends == {"hf": {"version": "0.23.3", "witness_of": {"llama-bpe": ["mine"], "gemma-3": ["mine", "yours"]}},
                        "ref": {"version": "0.1.0"}}
    alone = Results("0.1.0", backends, [RunSummary("llama-bpe", "llama.cpp", "mine")])
    assert backend_versions(alone) == "hf (tokenizers 0.23.3), ref (tokparity 0.1.0); hf only asked beside mine, yours, not judged"
    for elsewhere in (RunSummary("qwen3", "golden/hf", "mine"), RunSummary("qwen3", "template+hf", "mine"),
                      RunSummary("qwen3", "llama.cpp", "hf")):
        assert backend_versions(Results("0.1.0", backends, [alone.runs[0], elsewhere])) == \
            "hf (tokenizers 0.23.3), ref (tokparity 0.1.0)"


def test_an_engine_with_ids_of_its_own_is_not_excused(zoo):
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["seams"],
                          [f"bug=cmd:{sys.executable} {BYTE_BPE} {{tokenizer_json}} --unicode-3.2"], shipped())
    bug = next(r for r in results.runs if r.backend == "bug")
    mine = [m for m in results.mismatches if m.backend == "bug"]
    excused = [m for m in mine if m.known]
    assert bug.mismatches == len(mine) > 60 and bug.unexplained == len(mine) - len(excused) > 60
    # (a case is excused only where the engine's ids are tokenizers' own)
    assert all(m.tags.get("witness") == "hf" and any({"bug", "hf"} <= set(g) for g in m.partition) for m in excused)


def test_a_bos_the_engine_adds_counts_only_where_the_oracle_adds_it_too():
    """With --add-special a port adds BOS itself where the file's library adds none: the library
    still gives its ids. An engine that adds a BOS the oracle does not, or drops an EOS the library
    writes, is not the library's (a second read, 2026-12-04)."""
    from types import SimpleNamespace

    from tokparity.run.judge import ModelRun

    bos, eos, a = 1, 2, 7
    run = SimpleNamespace(options=SimpleNamespace(add_special=True),
                          vocab=SimpleNamespace(special_ids={"bos": bos, "eos": eos}))
    given_too = ModelRun._given_too
    assert given_too(run, [bos, a], [a], [bos, a])  # (the port's BOS, as the oracle's)
    assert not given_too(run, [bos, a], [a], [a])  # (a BOS the model does not add)
    # (an EOS left out as the library leaves it out: the library's ids too, but for the BOS)
    assert given_too(run, [bos, a], [a], [bos, a, eos])
    assert not given_too(run, [bos, a], [a, eos], [bos, a, eos])  # (the EOS the library adds, dropped)
    assert given_too(run, [bos, a, eos], [a], [bos, a, eos])
    assert not given_too(SimpleNamespace(options=SimpleNamespace(add_special=False), vocab=run.vocab),
                         [bos, a], [a], [bos, a])


def test_golden_ids_no_run_read_are_not_listed():
    """A chat run loads the golden ids with the model, and no run reads them: the Backends line
    named them all the same (a newcomer's chat run, 2026-12-04). Another backend stays: in a
    decoding run the ids judged may be its, though no run names it."""
    backends = {"golden": {"version": ""}, "llama.cpp": {"version": "0.3.36"}, "mine": {"version": ""}}
    chat = Results("0.1.0", backends, [RunSummary("llama-bpe", "template+llama.cpp", "mine", op="chat")])
    assert backend_versions(chat) == "llama.cpp (llama-cpp-python 0.3.36), mine"
    encode = Results("0.1.0", backends, [RunSummary("llama-bpe", "golden/llama.cpp", "mine")])
    assert backend_versions(encode) == "golden, llama.cpp (llama-cpp-python 0.3.36), mine"
