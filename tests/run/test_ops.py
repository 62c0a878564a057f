"""compare --ops decode,stream,pieces on real libraries: the reference agrees with each model's own
library, its streams add up to its decode, and the judge names what real streaming decoders get
wrong (tokenizers' DecodeStream, checked by hand below) and what a server-style engine with one bug
does (a cmd: engine built on llama-cpp-python)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tokparity.corpus.ids import id_cases
from tokparity.errors import TokparityError
from tokparity.reference.decode import DecodeSettings
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.ops import TEXT_OPS, parse_ops
from tokparity.run.options import CompareOptions, Services

sys.path.insert(0, str(Path(__file__).parents[1] / "diagnose"))
from thirdparty import node, node_engines  # noqa: E402, F401  (tests/diagnose/thirdparty.py; node_engines: a fixture)

sys.path.pop(0)

ENGINE = Path(__file__).parent.parent / "engines" / "stream_engine.py"
ENGINES = Path(__file__).parent.parent / "engines" / "thirdparty"


def runs(results) -> dict[tuple[str, str], object]:
    return {(r.backend, r.op): r for r in results.runs}


def corpus(tmp_path: Path, texts: list[str]) -> str:
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)), "utf-8")
    return str(path)


TEXTS = ["Hello world! 私の名前は 🤗 ok", " leading space", "a\n\nb  c", "x = 1\n\tif y:\n", "naïve café Ωmega"]


def test_ops_are_parsed_and_a_wrong_one_is_one_line():
    assert parse_ops("stream,encode") == ("encode", "stream")
    assert parse_ops("all") == TEXT_OPS
    with pytest.raises(TokparityError, match="unknown op 'decod'"):
        parse_ops("encode,decod")


@pytest.mark.parametrize("model", ["llama-spm", "botchan-unigram", "llama-bpe"])
def test_the_reference_agrees_with_the_libraries_on_decode_stream_and_pieces(zoo, tmp_path, model):
    """On texts and on the id sequences made from the vocabulary (split characters, a prompt
    ending inside one, lone continuation bytes, specials, random ids), the reference decodes,
    streams and gives each id's bytes as llama.cpp and SentencePiece do."""
    zoo(model)
    backends = ["ref", "llama.cpp"] + (["sentencepiece"] if model != "llama-bpe" else [])
    results = run_compare([model], [corpus(tmp_path, TEXTS), "ids"], backends, CompareOptions(ops=TEXT_OPS))
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
    assert {m.cause for m in leaks} == {"stream.prompt-resent"}


@pytest.mark.parametrize("bug,cls,cause", [("latin1", "stream-text", "stream.bytes-as-latin1"),
                                           ("replace", "stream-replacement", "stream.split-character-sent"),
                                           ("prompt", "stream-prompt", "stream.prompt-resent"),
                                           ("hold-all", "stream-held", "stream.held-to-end"), ("", None, None)])
def test_a_streaming_engine_with_one_bug_is_named_and_its_twin_agrees(zoo, tmp_path, bug, cls, cause):
    """A cmd: engine streaming llama.cpp's pieces (llama-cpp-python) the way a server does, with
    one bug of the issue's list: byte tokens sent as Latin-1 (mlx-examples #808), a split character
    sent as U+FFFD at once (llama.cpp #4036), the prompt's text sent in the first delta (vLLM
    #48853), the whole text held to the last delta (right, but nothing to read until the end: the
    texts whose ids finish a word before their last). Each is classed and its cause reproduced on at least 95 % of its mismatches; without
    the bug it agrees on every case."""
    zoo("llama-spm")
    engine = f"cmd:{sys.executable} {ENGINE} {{gguf}}" + (f" --bug {bug}" if bug else "")
    results = run_compare(["llama-spm"], [corpus(tmp_path, TEXTS), "ids", "edge"], ["ref", f"eng={engine}"],
                          CompareOptions(ops=("decode", "stream")))
    by = runs(results)
    stream = by[("eng", "stream")]
    assert by[("eng", "decode")].mismatches == 0
    if cls is None:
        assert stream.cases > 700 and stream.mismatches == 0
        return
    assert stream.mismatches > 50 and stream.classes.get(cls, 0) >= 0.95 * stream.mismatches, stream.classes
    named = sum(1 for m in results.mismatches if m.backend == "eng" and m.cause == cause)
    assert named >= 0.95 * stream.mismatches, (named, stream.mismatches, stream.causes)


@pytest.mark.parametrize("bug", ["specials", ""])
def test_skip_special_leaves_specials_out_and_an_engine_that_writes_them_is_named(zoo, tmp_path, bug):
    """``--skip-special``: every decoder is asked to leave special tokens out (tokenizers'
    skip_special_tokens=True, llama.cpp's unparse_special off, a cmd: engine's "skip_special": true).
    On llama-bpe the reference, llama.cpp and tokenizers then agree on every id sequence, specials
    between words included; an engine that writes them anyway is named decode.specials-written on
    those sequences, and its twin that honours the request agrees."""
    zoo("llama-bpe")
    engine = f"cmd:{sys.executable} {ENGINE} {{gguf}}" + (f" --bug {bug}" if bug else "")
    results = run_compare(["llama-bpe"], [corpus(tmp_path, TEXTS), "ids"], ["ref", "hf", f"eng={engine}"],
                          CompareOptions(ops=("decode", "stream"), decoding=DecodeSettings(skip_special=True)))
    by = runs(results)
    assert by[("ref", "decode")].cases >= len(TEXTS) + 10 and by[("ref", "decode")].mismatches == 0
    assert by[("hf", "decode")].mismatches == 0
    decode = [m for m in results.mismatches if m.backend == "eng" and m.op == "decode"]
    if not bug:
        assert decode == [] and by[("eng", "stream")].mismatches == 0
        return
    assert decode and {m.tags["ids"] for m in decode} == {"special-between"}
    assert {m.cause for m in decode} == {"decode.specials-written"}
    assert all("<|" in m.backend_output[0] and "<|" not in m.oracle_output[0] for m in decode)
    assert {m.tags["ids"] for m in results.mismatches if m.backend == "eng" and m.op == "stream"} == {"special-between"}


@pytest.mark.parametrize("bug", ["last-of-step", ""])
def test_streams_fed_several_ids_a_step(zoo, tmp_path, bug):
    """``--stream-step 3``: every stream is fed three ids at a time after its prompt, one delta a step
    (tokenizers' DecodeStream.step takes the list; llama.cpp's pieces and the reference's stream are
    sent a step at a time; a cmd: engine gets "step": 3). The libraries agree on llama-bpe as they do
    one id at a time; an engine that sends only the text of each step's last id is a stream-text on
    most texts, and its twin that sends the whole step agrees."""
    zoo("llama-bpe")
    engine = f"cmd:{sys.executable} {ENGINE} {{gguf}}" + (f" --bug {bug}" if bug else "")
    results = run_compare(["llama-bpe"], [corpus(tmp_path, TEXTS), "ids", "edge"], ["ref", "hf", f"eng={engine}"],
                          CompareOptions(ops=("stream",), stream_step=3,
                                         services=Services(known=load_known([], builtin=True))))
    by = runs(results)
    unknown = [m for m in results.mismatches if not m.known]
    assert by[("ref", "stream")].cases > 600 and not [m for m in unknown if m.backend in ("ref", "hf", "llama.cpp")]
    mine = [m for m in results.mismatches if m.backend == "eng"]
    if not bug:
        assert not [m for m in mine if not m.known]
        return
    assert len(mine) > 300 and {m.cls for m in mine} <= {"stream-text", "stream-cleanup", "stream-prompt"}
    lost = next(m for m in mine if m.case_id == "t0")  # 'Hello world! 私の名前は 🤗 ok'
    assert len(lost.backend_output) == -(-(len(lost.oracle_ids) - 1) // 3)  # one delta a step
    assert "".join(lost.backend_output) != lost.oracle_output[0]


def test_an_engine_that_does_not_read_step_is_not_tried_with_it(zoo, tmp_path):
    """A cmd: engine written before "step" answers one delta per id: it is not tried for the stream
    op with --stream-step (its cases skipped), not failed on every case."""
    zoo("llama-bpe")
    engine = tmp_path / "per_id.py"
    engine.write_text("import json, sys\n"
                      "for line in sys.stdin:\n"
                      "    req = json.loads(line)\n"
                      "    reply = {'id': req['id']}\n"
                      "    if req.get('op') == 'stream':\n"
                      "        reply['deltas'] = [''] * (len(req['ids']) - req['prompt'])\n"
                      "    else:\n"
                      "        reply['error'] = 'no'\n"
                      "    print(json.dumps(reply), flush=True)\n", "utf-8")
    texts = [TEXTS[0], TEXTS[3], TEXTS[4]]  # (several steps each: one delta an id is then told from one a step)
    results = run_compare(["llama-bpe"], [corpus(tmp_path, texts)], ["ref", f"eng=cmd:{sys.executable} {engine}"],
                          CompareOptions(ops=("stream",), stream_step=3))
    eng = runs(results)[("eng", "stream")]
    assert eng.cases == 0 and eng.skipped == len(texts) >= 3 and eng.mismatches == 0


def test_a_stream_with_a_delta_per_id_when_fed_steps_breaks_the_protocol():
    from tokparity.diff.decode import judge_stream

    found = judge_stream(lambda ids: "a", [1, 2, 3, 4, 5], 1, "abcde", ["b", "c", "d", "e"], step=2)
    assert found is not None and found[0] == "crash" and "4 deltas for 4 ids after the prompt (one per 2 ids" in found[1]
    assert judge_stream(lambda ids: "a", [1, 2, 3, 4, 5], 1, "abcde", ["bc", "de"], step=2) is None


def thirdparty(model: str, spec: str, tmp_path: Path):
    """One run of a third-party streaming engine on the edge corpus and the id sequences: its
    stream mismatches that no known divergence explains, by cause."""
    from collections import Counter

    results = run_compare([model], ["edge", "ids"], ["ref", f"eng={spec}"], CompareOptions(ops=("stream",)))
    return Counter(m.cause for m in results.mismatches if m.backend == "eng" and not m.known), results


def test_transformers_js_text_streamer(zoo, tmp_path, node_engines):
    """transformers.js 4.3.1's TextStreamer (npm @huggingface/transformers, src/generation/streamers.js),
    driven as generate() drives it with skip_prompt. Checked by hand: put() returns on the prompt
    without caching it, and the cache is emptied after every text that ends in a newline; each next
    decode of the cache then starts a text afresh. On Llama 2 (lenml's tokenizer.json, a Metaspace
    decoder that drops a text's first space) the prompt 'Hello' + 'world' streams 'world': the
    space is lost (stream.restart-after-newline, which drops the prompt too). On Llama 3 a prompt
    that ends inside a character leaves its first bytes behind: U+FFFD (stream.prompt-dropped);
    and 'I 'm' streams ' ' then 'm', the apostrophe lost: the cache's text is cleaned up to "'m"
    and sliced at the length printed before (stream.offset-into-cleaned-text)."""
    zoo("lenml-llama2")
    zoo("llama-bpe")
    spec = node("transformers_js.mjs", "{tokenizer_json}")
    causes, _ = thirdparty("lenml-llama2", spec, tmp_path)
    assert causes["stream.restart-after-newline"] >= 0.95 * sum(causes.values()) and \
        causes["stream.restart-after-newline"] > 100, causes
    causes, results = thirdparty("llama-bpe", spec, tmp_path)
    assert causes["stream.prompt-dropped"] > 50 and causes["stream.offset-into-cleaned-text"] >= 1, causes
    assert sum(causes.values()) == causes["stream.prompt-dropped"] + causes["stream.offset-into-cleaned-text"]
    (lost,) = [m for m in results.mismatches if m.backend == "eng" and m.text == "I 'm"]
    assert lost.backend_output == (" ", "m") and lost.oracle_output == ("'m",)


def test_mlx_lm_streaming_detokenizers(zoo, tmp_path):
    """mlx-lm 0.32.2's streaming detokenizers (PyPI, mlx_lm/tokenizer_utils.py), as stream_generate
    uses them: the detokenizer is reset for the generation and never sees the prompt. Checked by
    hand in the source: SPMStreamingDetokenizer (Llama 2) and BPEStreamingDetokenizer (Llama 3) both
    trim the first text's leading space (trim_space, _maybe_trim_space), so 'Hello world' after the
    prompt 'Hello' streams 'world'; and BPEStreamingDetokenizer maps 'Ā', byte 0x00's character, with
    ``res = byte_decoder.get(c, False); if res:``, which reads 0 as not found: 'a\x00b' streams
    'Āb'. tokparity names the first stream.prompt-dropped and the second stream.byte-zero-unmapped."""
    zoo("lenml-llama2")
    zoo("llama-bpe")
    spec = f"cmd:{sys.executable} {ENGINES / 'mlx_lm_detokenizer.py'} {{tokenizer_json}}"
    causes, _ = thirdparty("lenml-llama2", spec, tmp_path)
    assert causes["stream.prompt-dropped"] >= 0.95 * sum(causes.values()) and causes["stream.prompt-dropped"] > 100
    causes, results = thirdparty("llama-bpe", spec, tmp_path)
    assert causes["stream.prompt-dropped"] >= 0.95 * sum(causes.values()) and causes["stream.prompt-dropped"] > 100
    (nul,) = [m for m in results.mismatches if m.backend == "eng" and m.text == "a\x00b"]
    assert (nul.cause, nul.backend_output) == ("stream.byte-zero-unmapped", ("\u0100", "b"))


def test_gpt_tokenizer_decoder_state_leaks_between_calls(zoo, tmp_path, node_engines):
    """gpt-tokenizer 4.0.0 (npm) decodes with one module-wide ``new TextDecoder("utf8")`` called with
    ``{stream: true}`` (esm/BytePairEncodingCore.js, decodeNative), checked by hand: ids that end
    inside a character decode without it (no U+FFFD), and its bytes stay in the decoder for the
    next call. A broken lead byte before a word vanishes as well (the first byte of '私': ' t a', not
    ' t� a'). tokparity names these rows decode.invalid-bytes-dropped, which reproduces the four of
    them (decode.unfinished-end-dropped only the three ends). The next id sequence then decodes with
    the leftover bytes in front (the 3 bytes of an unfinished '🤗' and a lone 0x80 make '🤀'), which
    no variant of one call reproduces: it stays unexplained, with the two texts."""
    zoo("gpt-2")
    results = run_compare(["gpt-2"], ["ids"], ["ref", f"eng={node('gpt_tokenizer.mjs')}"],
                          CompareOptions(ops=("decode",)))
    rows = {m.tags["about"]: m for m in results.mismatches if m.backend == "eng"}
    dropped = [m for about, m in rows.items() if about.startswith("unfinished-end")]
    assert all(m.oracle_output[0].endswith("\ufffd") and not m.backend_output[0].endswith("\ufffd") for m in dropped)
    broken = rows["broken-lead: the first byte of '私' alone, then a word"]
    assert broken.backend_output[0] == " t a" and broken.oracle_output[0] == " t\ufffd a"
    assert len(dropped) == 3 and {m.cause for m in dropped + [broken]} == {"decode.invalid-bytes-dropped"}
    leaked = rows["lone-continuation: a continuation byte alone between words"]
    assert "\U0001F900" in leaked.backend_output[0] and leaked.cause == ""


def test_llguidance_token_table(zoo, tmp_path):
    """llguidance 1.9.1's token table (PyPI; the grammar engine of vLLM, SGLang and llama.cpp),
    ``LLTokenizer(tokenizer.json).decode_bytes([id])`` for every id: on Llama 2, Llama 3, Gemma 3,
    Qwen 3 and a byte-fallback SentencePiece model converted by tokparity it gives each id the bytes
    the model's own library does, except one id each: the byte 0xFF token (Llama 2's '<0xFF>',
    Llama 3's 'ÿ') has no bytes, checked by hand (the only empty entries of the whole table); its
    token trie marks special tokens with 0xFF. tokparity names it pieces.byte-ff-dropped. A
    tokenizer.json with a plain Metaspace decoder (a converted SentencePiece file without byte
    fallback) it refuses to load: every case a crash, with its error."""
    models = ["lenml-llama2", "llama-bpe", "gemma-3", "qwen3", "spm-bpe-byte-fallback", "botchan-unigram"]
    for model in models:
        zoo(model)
    spec = f"cmd:{sys.executable} {ENGINES / 'llguidance_engine.py'} {{tokenizer_json}}"
    results = run_compare(models, ["edge", "ids"], ["ref", f"eng={spec}"], CompareOptions(ops=("pieces",)))
    by = {r.model: r for r in results.runs if r.backend == "eng"}
    for model in models[:5]:
        # (the case of 0xFF between words, and the vocabulary's block that holds the id)
        assert by[model].cases > 800 and by[model].mismatches == 2, (model, by[model].classes)
        rows = [m for m in results.mismatches if m.model == model and m.backend == "eng"]
        assert sorted(m.tags.get("ids") for m in rows) == ["invalid-byte", "vocabulary"], [m.case_id for m in rows]
        assert all(m.cause == "pieces.byte-ff-dropped" for m in rows), [m.evidence for m in rows]
    assert set(by["botchan-unigram"].classes) == {"crash"}
    assert "can't determine decoder type" in next(m.evidence for m in results.mismatches
                                                   if m.model == "botchan-unigram")


def test_tiktoken_token_bytes(zoo, tmp_path):
    """tiktoken 0.x (PyPI) ``decode_single_token_bytes`` for every id of GPT-2 and Llama 3 (an
    Encoding built from the GGUF's ranks): the same bytes as llama.cpp's token_to_piece and the
    reference, id for id (its whole decode too)."""
    for model in ("gpt-2", "llama-bpe"):
        zoo(model)
    spec = f"cmd:{sys.executable} {ENGINES / 'tiktoken_engine.py'} {{gguf}}"
    results = run_compare(["gpt-2", "llama-bpe"], ["edge", "ids"], ["ref", f"eng={spec}"],
                          CompareOptions(ops=("pieces",)))
    by = {r.model: r for r in results.runs if r.backend == "eng"}
    assert all(by[m].cases > 800 and by[m].mismatches == 0 for m in by), {m: r.classes for m, r in by.items()}


def test_two_jobs_give_the_reports_of_one(zoo, tmp_path):
    """With --ops all a case has a record per op; --jobs 2 sends a worker's records a whole case at
    a time, so the parent counts them in order: the same runs and rows as one process."""
    zoo("llama-spm")
    one, two = (run_compare(["llama-spm"], ["edge", "ids"], ["ref", "llama.cpp", "sentencepiece"],
                            CompareOptions(ops=TEXT_OPS, jobs=jobs)) for jobs in (1, 2))

    def shown(results):
        return (sorted((r.backend, r.op, r.cases, r.mismatches, r.skipped, str(r.classes)) for r in results.runs),
                sorted(str(m.row()) for m in results.mismatches))

    assert shown(one) == shown(two) and len(one.runs) == 10  # (llama.cpp judged for encode beside golden ids)


HOSTILE = Path(__file__).parent.parent / "engines" / "ops_hostile.py"


def hostile_run(tmp_path, mode: str, ops=("decode", "stream", "pieces")):
    spec = f"cmd:{sys.executable} {HOSTILE} llama-spm {mode}"
    results = run_compare(["llama-spm"], [corpus(tmp_path, TEXTS), "ids"], ["ref", f"eng={spec}"],
                          CompareOptions(ops=ops))
    return {r.op: r for r in results.runs if r.backend == "eng"}, results


def test_an_engine_without_the_ops_is_not_tried_and_one_that_fails_is_a_crash(zoo, tmp_path):
    """An error with no status: the engine has no such op, every case skipped for it (not a pass,
    not a failure); ``"status": "error"``: a failure of each case; ``"status": "skipped"``: no
    answer for that case. The same reply means the same on every request."""
    zoo("llama-spm")
    by, _ = hostile_run(tmp_path, "no-ops")
    assert all(by[op].cases == 0 and by[op].skipped > 20 for op in ("decode", "stream", "pieces"))
    by, _ = hostile_run(tmp_path, "stream-error", ("stream",))
    assert by["stream"].classes == {"crash": by["stream"].cases} and by["stream"].cases > 20
    by, _ = hostile_run(tmp_path, "skip-leading", ("stream",))
    assert by["stream"].skipped == 1 and by["stream"].mismatches == 0


def test_a_pieces_table_far_longer_than_the_vocabulary_is_refused(zoo, tmp_path):
    zoo("llama-spm")
    by, results = hostile_run(tmp_path, "long-table", ("pieces",))
    assert set(by["pieces"].classes) == {"crash"}
    assert "entries for a vocabulary of 32,000 ids" in next(m.evidence for m in results.mismatches)


def test_a_decoder_without_the_op_skips_every_backend(zoo, tmp_path):
    """rwkv-world's decoder (the rwkv package) gives no bytes per id: the pieces op is not judged
    for anyone (skipped), rather than passed against nothing."""
    zoo("rwkv-world")
    results = run_compare(["rwkv-world"], [corpus(tmp_path, TEXTS)], ["ref", "llama.cpp"],
                          CompareOptions(ops=("pieces",)))
    runs_ = [r for r in results.runs if r.op == "pieces"]
    assert runs_ and all(r.cases == 0 and r.skipped == len(TEXTS) for r in runs_), [(r.backend, r.cases) for r in runs_]


def test_lossy_pieces_still_compare_whole_characters_byte_for_byte(tmp_path):
    """tokenizers gives a token's text, not its bytes: a token that is part of a character is
    compared as the text both read as, every other one byte for byte."""
    from tokparity.diff.decode import judge_pieces

    assert judge_pieces([1, 2], [b"\xef\xbf\xbd", b" a"], [b"\xa9", b" a"], True, False) is None
    assert judge_pieces([1, 2], [b"\xef\xbf\xbd", b" a"], [b"\xa9", b" b"], True, False)[0] == "piece-bytes"


def test_a_run_with_ops_resumes_whole_cases(zoo, tmp_path):
    """A journal whose last line was cut by a kill: that case runs again with every op, and the
    resumed run's counts are those of an uninterrupted one."""
    from tokparity.cli import main

    zoo("llama-spm")
    texts = corpus(tmp_path, TEXTS)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    for out in (whole, cut):
        assert main(["compare", "llama-spm", "-c", texts, "-b", "ref", "--ops", "encode,decode,stream", "-o", str(out),
                     "-q"]) in (0, 1)
    journal = cut / "cases.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-1]) + lines[-1][:20])  # the last case's stream line, cut
    assert main(["compare", "--resume", str(cut), "-q"]) in (0, 1)

    def counts(out):
        runs_ = json.loads((out / "summary.json").read_text("utf-8"))["runs"]
        return sorted((r["backend"], r["op"], r["cases"], r["mismatches"]) for r in runs_)

    assert counts(cut) == counts(whole)


@pytest.mark.parametrize("model", ["llama-bpe", "lenml-llama2"])
def test_fuzzing_streams_finds_decodestream_and_leaves_the_reference_clean(zoo, tmp_path, model):
    """fuzz --ops stream, 8 s: tokenizers' DecodeStream sending prompt text again is found and
    shrunk to a few ids (its cause named); the reference's stream shows nothing but the
    libraries' reviewed conventions."""
    from tokparity.fuzz.ids import run_id_fuzz

    zoo(model)
    options = CompareOptions(ops=("stream",), services=Services(known=load_known()))
    results, findings, cases = run_id_fuzz(model, ["hf", "ref"], options, 8.0, 0)
    assert cases > 100
    ref_runs = [r for r in results.runs if r.backend == "ref"]
    assert ref_runs and all(r.unexplained == 0 for r in ref_runs), [r.classes for r in ref_runs]
    resent = [f for f in findings if f.backend == "hf" and f.mismatch.cause == "stream.prompt-resent"]
    assert resent and len(resent[0].case.ids) <= 6 < len(resent[0].original.ids) + 6


def test_transformers_text_streamer_drops_the_first_space(zoo):
    """transformers' own TextStreamer (PyPI, generation/streamers.py; the hf backend's stream with
    the transformers loader), checked by hand: ``put()`` returns on the prompt without caching it,
    so the first generated token is decoded as if it began the text, and Llama 2's Metaspace decoder
    drops its space: 'Hello world' after the prompt 'Hello' streams 'world'. The judge classes it
    and the diagnosis names it as for transformers.js."""
    from tokparity.backends.registry import make_backend
    from tokparity.diagnose.decoding import diagnose_decoding
    from tokparity.diff.decode import judge_stream
    from tokparity.records import Judgement
    from tokparity.reference import RefTokenizer
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    zoo("lenml-llama2")
    model = resolve_model("lenml-llama2")
    streamer = make_backend("hf", model, loader="transformers", isolate=False)
    ids = streamer.encode("Hello world")
    deltas = streamer.stream(ids, 1)
    assert deltas == ["world"] and streamer.decode(ids) == "Hello world"
    cls, evidence, want, got, _ = judge_stream(streamer.decode, ids, 1, "Hello world", deltas)
    assert cls == "stream-text" and want == [" world"]
    j = Judgement("lenml-llama2", "t", "t", {"prompt": 1}, "hf", "tf", cls, evidence, "stream", 0, "Hello world",
                  ids, ids, [], [], op="stream", oracle_output=want, backend_output=got)
    reference = RefTokenizer(load_vocab(model.primary[1]))
    assert diagnose_decoding(reference, j).cause in ("stream.prompt-dropped", "stream.restart-after-newline")


@pytest.mark.parametrize("model", ["llama-bpe", "lenml-llama2"])
def test_real_streamers_that_hold_words_are_not_held_to_the_end(zoo, model):
    """A stream is ``stream-held`` when it sends nothing until its last step though a word was
    finished before; the libraries' streamers must never be: tokenizers' DecodeStream (holds a step
    that ends inside a character) and transformers' TextStreamer (holds a word until a " ", sends a
    text whole once it ends in a newline, so a tab, a no-break space or a newline inside a step's
    text does not make it send), at steps 1 to 3, on the edge corpus and texts made for it."""
    from tokparity.backends.registry import make_backend
    from tokparity.corpus import load_corpus
    from tokparity.diff.decode import judge_stream

    files = zoo(model)
    texts = [c.text for c in load_corpus("edge")][:400] + ["x\nHi.\nOk\nNo", "a\tb\tc d", "10\u00a0000 km", "é\nx y"]
    held = []
    for streamer in (make_backend("hf", files, isolate=False), make_backend("hf", files, loader="transformers",
                                                                           isolate=False)):
        for text in texts:
            ids = streamer.encode(text)
            if len(ids) < 3:
                continue
            for step in (1, 2, 3):
                deltas = streamer.stream(ids, 1, step=step)
                found = judge_stream(streamer.decode, ids, 1, streamer.decode(ids), deltas, step=step)
                if found is not None and found[0] == "stream-held":
                    held.append((streamer.loader, step, text, deltas))
    assert held == []


def test_ids_that_have_no_token_are_no_ones_failure(zoo):
    """cl100k has ids with no token (100256, 100261..100275; the loader fills them as [PAD…]): tiktoken,
    the decoder, fails on them, and that failure is not the engine's. Its twin: an engine that
    fails on ids that are tokens (a byte that is not UTF-8 alone) is still that engine's crash."""
    from tokparity.backends.registry import make_backend
    from tokparity.corpus.ids import IdCase
    from tokparity.records import SKIPPED
    from tokparity.run.ops import DecodingJudge
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    zoo("cl100k-tiktoken")
    model = resolve_model("cl100k-tiktoken")
    vocab = load_vocab(model.primary[1])
    gap = next(i for i, token in enumerate(vocab.tokens) if token == f"[PAD{i}]")
    panics = f"cmd:{sys.executable} {Path(__file__).parent.parent / 'engines' / 'ops_hostile.py'} {{tiktoken}} panic"
    backends = {"tiktoken": make_backend("tiktoken", model), "engine": make_backend(panics, model)}
    try:
        judge = DecodingJudge("cl100k-tiktoken", vocab, backends, "tiktoken", {"decode": ["engine"]})
        record = judge.record("decode", 0, IdCase("gap", (gap, 245), 1, "gap", {}), [gap, 245], 1, "tiktoken", ())
        assert record.verdicts == {"engine": SKIPPED} and not record.judgements
        record = judge.record("decode", 1, IdCase("byte", (245,), 1, "byte", {}), [245], 1, "tiktoken", ())
        assert [j.cls for j in record.judgements] == ["crash"], record
    finally:
        for backend in backends.values():
            backend.close()
