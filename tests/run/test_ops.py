"""compare --ops decode,stream,pieces on real libraries: the reference agrees with each model's own
library, its streams add up to its decode, and the judge names what real streaming decoders get
wrong (tokenizers' DecodeStream, checked by hand below) and what a server-style engine with one bug
does (a cmd: engine built on llama-cpp-python)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tokparity.errors import TokparityError
from tokparity.run.driver import run_compare
from tokparity.run.ops import OPS, id_cases, parse_ops
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parent.parent / "engines" / "stream_engine.py"


def runs(results) -> dict[tuple[str, str], object]:
    return {(r.backend, r.op): r for r in results.runs}


def corpus(tmp_path: Path, texts: list[str]) -> str:
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)), "utf-8")
    return str(path)


TEXTS = ["Hello world! 私の名前は 🤗 ok", " leading space", "a\n\nb  c", "x = 1\n\tif y:\n", "naïve café Ωmega"]


def test_ops_are_parsed_and_a_wrong_one_is_one_line():
    assert parse_ops("stream,encode") == ("encode", "stream")
    assert parse_ops("all") == OPS
    with pytest.raises(TokparityError, match="unknown op 'decod'"):
        parse_ops("encode,decod")


@pytest.mark.parametrize("model", ["llama-spm", "botchan-unigram", "llama-bpe"])
def test_the_reference_agrees_with_the_libraries_on_decode_stream_and_pieces(zoo, tmp_path, model):
    """On texts and on the id sequences made from the vocabulary (split characters, a prompt
    ending inside one, lone continuation bytes, specials, random ids), the reference decodes,
    streams and gives each id's bytes as llama.cpp and SentencePiece do."""
    zoo(model)
    backends = ["ref", "llama.cpp"] + (["sentencepiece"] if model != "llama-bpe" else [])
    results = run_compare([model], [corpus(tmp_path, TEXTS), "ids"], backends, CompareOptions(ops=OPS))
    by = runs(results)
    for op in ("decode", "stream", "pieces"):
        assert by[("ref", op)].cases >= len(TEXTS) + 10, op
        assert by[("ref", op)].mismatches == 0, [m.evidence for m in results.mismatches if m.backend == "ref"][:3]
    assert by[("llama.cpp", "stream")].cases > 0
    if model != "llama-bpe":
        # SentencePiece has no streaming call: not tried, every case counted as skipped
        assert by[("sentencepiece", "stream")].cases == 0 and by[("sentencepiece", "stream")].skipped > 0


def test_the_generated_id_sequences_split_characters_where_the_vocabulary_can():
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    cases = id_cases(load_vocab(resolve_model("llama-spm").primary[1]))
    about = {c.about.split(":")[0] for c in cases}
    assert {"split-character", "prompt-ends-inside", "unfinished-end", "lone-continuation", "random"} <= about
    assert id_cases(load_vocab(resolve_model("llama-spm").primary[1])) == cases  # the same every run


def test_decodestream_sends_prompt_text_again_when_the_prompt_ends_inside_a_character(zoo, tmp_path):
    """tokenizers 0.23.3's DecodeStream, prefilled with the prompt [in, <0xC3>] of llama-bpe and
    stepped with <0xA9>, returns 'iné' (checked by hand: ``DecodeStream([258, 127]).step(tok, 102)``
    is 'iné'; stepped from an empty prefill the same ids give 'in', None, 'é'): the prompt's 'in' is
    sent again. tokparity calls it stream-prompt; llama.cpp's pieces with the server's holding back,
    and the reference, send 'é'."""
    zoo("llama-bpe")
    results = run_compare(["llama-bpe"], ["ids"], ["llama.cpp", "hf", "ref"], CompareOptions(ops=("stream",)))
    by = runs(results)
    assert by[("ref", "stream")].mismatches == 0 and by[("llama.cpp", "stream")].mismatches == 0
    leaks = [m for m in results.mismatches if m.backend == "hf" and m.cls == "stream-prompt"]
    assert {m.tags["ids"] for m in leaks} == {"prompt-ends-inside"}
    (e_acute,) = [m for m in leaks if "'é'" in m.tags["about"]]
    assert e_acute.backend_output[0].endswith("é") and len(e_acute.backend_output[0]) > 1
    assert "of the prompt's text" in e_acute.evidence


@pytest.mark.parametrize("bug,cls", [("latin1", "stream-text"), ("replace", "stream-replacement"),
                                     ("prompt", "stream-prompt"), ("", None)])
def test_a_streaming_engine_with_one_bug_is_named_and_its_twin_agrees(zoo, tmp_path, bug, cls):
    """A cmd: engine streaming llama.cpp's pieces (llama-cpp-python) the way a server does, with
    one bug of the issue's list: byte tokens sent as Latin-1 (mlx-examples #808), a split character
    sent as U+FFFD at once (llama.cpp #4036), the prompt's text sent in the first delta (vLLM
    #48853); without the bug it agrees on every case."""
    zoo("llama-spm")
    engine = f"cmd:{sys.executable} {ENGINE} {{gguf}}" + (f" --bug {bug}" if bug else "")
    results = run_compare(["llama-spm"], [corpus(tmp_path, TEXTS), "ids"], ["ref", f"eng={engine}"],
                          CompareOptions(ops=("decode", "stream")))
    by = runs(results)
    stream = by[("eng", "stream")]
    assert by[("eng", "decode")].mismatches == 0
    if cls is None:
        assert stream.cases > 20 and stream.mismatches == 0
        return
    assert stream.mismatches > 0 and set(stream.classes) == {cls}, stream.classes
