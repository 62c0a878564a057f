"""The judge is the training library: a folder holding a model in several formats, with nothing
saying which is the original, is judged by the library whose own format is there (SentencePiece
for a .model, tokenizers for a tokenizer.json), then golden ids, then llama.cpp; a zoo model whose
manifest knows its original is judged by that; ``inspect`` and the report say which and why.

The end-to-end case is the one from issue #19: a unigram model trained with byte_fallback and
converted to GGUF. llama.cpp's UGM has no byte fallback, so where SentencePiece writes byte
pieces it writes <unk>. The run must name llama.cpp as the one that differs, by that cause, and
the reference (reading the .model, as the judge does) must agree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.run.oracle import choose_oracle
from tokparity.zoo import resolve_model, zoo_text

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def tokparity(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def folder_with(tmp_path: Path, *files: Path) -> Path:
    for f in files:
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


@pytest.fixture(scope="module")
def byte_fallback_folder(tmp_path_factory) -> Path:
    """SentencePiece unigram, byte_fallback on, trained on Botchan; beside it its GGUF conversion."""
    sentencepiece = pytest.importorskip("sentencepiece", reason="SentencePiece is the oracle under test")
    folder = tmp_path_factory.mktemp("byte-fallback")
    sentencepiece.SentencePieceTrainer.train(input=str(zoo_text("botchan")), model_prefix=str(folder / "tokenizer"),
                                             vocab_size=1000, model_type="unigram", byte_fallback=True,
                                             num_threads=1, minloglevel=2)
    (folder / "tokenizer.vocab").unlink()
    converted = tokparity("convert", "--to", "gguf", "-o", str(folder / "converted.gguf"), str(folder / "tokenizer.model"))
    assert converted.returncode == 0, converted.stderr
    return folder


def test_a_model_and_its_gguf_are_judged_by_sentencepiece(zoo, tmp_path):
    botchan = zoo("botchan-unigram")
    folder = folder_with(tmp_path, botchan.files["spm_model"], botchan.files["gguf"])
    oracle = choose_oracle(resolve_model(str(folder)))
    assert oracle.chain == ("sentencepiece",)
    assert oracle.why.startswith("its .model is SentencePiece's own format")
    assert "the GGUF beside it may be a conversion, so it does not judge" in oracle.why


def test_a_tokenizer_json_and_a_gguf_are_judged_by_tokenizers(zoo, tmp_path):
    llama3 = zoo("llama-bpe")  # GGUF with golden ids, and the same vocabulary as a tokenizer.json
    folder = folder_with(tmp_path, llama3.files["gguf"], llama3.files["golden_out"], llama3.files["tokenizer_json"])
    assert choose_oracle(resolve_model(str(folder))).chain == ("hf",)


def test_a_zoo_model_whose_provenance_is_known_is_judged_by_its_original(zoo):
    llama3 = zoo("llama-bpe")  # the manifest: the GGUF and golden ids are the original, the tokenizer.json a copy
    oracle = choose_oracle(llama3)
    assert oracle.chain == ("golden", "llama.cpp")
    assert oracle.why.startswith("the zoo's manifest says the gguf is the original: ")
    assert choose_oracle(llama3, add_special=True).why.startswith("--add-special: ")
    assert llama3.primary[0] == "gguf"  # and the reference reads that file


def test_a_gguf_alone_is_judged_by_golden_ids_then_llama_cpp(zoo, tmp_path):
    llama2 = zoo("llama-spm")
    folder = folder_with(tmp_path, llama2.files["gguf"], llama2.files["golden_out"])
    oracle = choose_oracle(resolve_model(str(folder)))
    assert oracle.chain == ("golden", "llama.cpp")
    with_specials = choose_oracle(resolve_model(str(folder)), add_special=True)
    assert with_specials.chain == ("llama.cpp",)  # golden: add_special off; the option's doing is said first
    assert with_specials.why.startswith("--add-special: the golden ids beside the GGUF hold no BOS or EOS")
    assert choose_oracle(resolve_model(str(llama2.files["gguf"]))).chain == ("golden", "llama.cpp")


def test_derived_files_never_judge_and_named_oracles_win(zoo):
    gemma3 = zoo("gemma-3")  # a tokenizer.json, with a GGUF and a .model tokparity converted from it
    oracle = choose_oracle(gemma3)
    assert oracle.chain == ("hf",) and "gguf and spm_model are tokparity's conversion, never a judge" in oracle.why
    assert choose_oracle(gemma3, named="llama.cpp") == type(oracle)(("llama.cpp",), "--oracle named it")


def test_inspect_says_which_oracle_and_why(byte_fallback_folder):
    proc = tokparity("inspect", str(byte_fallback_folder), "--json")
    assert proc.returncode == 0, proc.stderr
    oracle = json.loads(proc.stdout)["oracle"]
    assert oracle["chain"] == ["sentencepiece"] and "GGUF beside it" in oracle["why"]
    text = tokparity("inspect", str(byte_fallback_folder)).stdout
    assert "  oracle: sentencepiece: its .model is SentencePiece's own format" in text


def test_llama_cpp_is_the_one_that_differs_by_byte_fallback(byte_fallback_folder, tmp_path):
    out = tmp_path / "report"
    proc = tokparity("compare", str(byte_fallback_folder), "-c", "emoji", "-b", "ref", "-b", "llama.cpp",
                     "-o", str(out), "-q")
    assert proc.returncode == 1, proc.stderr  # llama.cpp differs, and nothing says it is known
    runs = {r["backend"]: r for r in json.loads((out / "summary.json").read_text())["runs"]}
    assert set(runs) == {"ref", "llama.cpp"}  # sentencepiece judges: not a backend of its own
    assert {r["oracle"] for r in runs.values()} == {"sentencepiece"}
    assert runs["ref"]["mismatches"] == 0  # the reference reads the .model, byte fallback and all
    llama = runs["llama.cpp"]
    assert llama["mismatches"] > 100 and llama["causes"] == {"bytes.fallback": llama["mismatches"]}
    assert "the GGUF beside it may be a conversion" in llama["oracle_why"]
    assert f"{byte_fallback_folder.name} is judged by sentencepiece: its .model" in (out / "summary.md").read_text()
    assert "(its .model is SentencePiece" in (out / "report.html").read_text()


def test_the_terminal_says_why_when_an_option_chose_the_oracle():
    from tokparity.report.overview import oracle_lines
    from tokparity.run.results import Results, RunSummary

    def line(why: str) -> str:
        (said,) = oracle_lines(Results("0", runs=(RunSummary("m", "llama.cpp", "hf", oracle_why=why),)), why=False)
        return said

    assert line("it is a GGUF alone, and …") == "m is judged by llama.cpp; summary.md says why"  # (noise to a newcomer)
    assert line("--add-special: the golden ids …") == "m is judged by llama.cpp: --add-special: the golden ids …"
