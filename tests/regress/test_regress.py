"""``tokparity regress``: unchanged goldens pass, one hand-changed id fails naming its case, an
edited corpus stops the run with a clear word, and the committed goldens are current.

Every run is real: llama.cpp and tokparity's reference on zoo models, goldens made by
``regress --update`` in a scratch folder (never the committed ones, which only the last test reads).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tokparity.backends.registry import make_backend
from tokparity.cli import main
from tokparity.corpus.ids import id_cases
from tokparity.regress.goldens import default_goldens_dir, read_goldens
from tokparity.vocab import load_vocab

COMMITTED = Path(__file__).resolve().parents[1] / "goldens"


def test_the_default_goldens_are_the_checkouts(monkeypatch):
    monkeypatch.delenv("TOKPARITY_GOLDENS", raising=False)
    assert default_goldens_dir() == COMMITTED


def regress(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["regress", "-q", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def llama_spm_goldens(tmp_path_factory) -> Path:
    """llama-spm's goldens over the edge corpus, made once for the module."""
    folder = tmp_path_factory.mktemp("goldens")
    assert main(["regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(folder), "-q"]) == 0
    return folder


@pytest.fixture
def scratch(llama_spm_goldens, tmp_path) -> Path:
    """A copy this test may spoil."""
    return Path(shutil.copytree(llama_spm_goldens, tmp_path / "goldens"))


def rewrite_case(path: Path, case_id: str, change) -> list[int]:
    """Apply ``change`` to one case line of a goldens file (what the issue's check does by hand)."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    line = next(obj for obj in lines if obj.get("id") == case_id)
    change(line)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(obj, ensure_ascii=False) + "\n" for obj in lines)
    return line.get("ids")


def test_update_writes_header_digest_and_cases(llama_spm_goldens, zoo):
    goldens = read_goldens(llama_spm_goldens / "llama-spm.jsonl.gz")
    assert goldens.header["oracles"] == {"plain": ["golden", "llama.cpp"], "add_special": ["llama.cpp"]}
    assert goldens.header["versions"]["llama.cpp"].startswith("0.")
    assert goldens.header["wrap"] == [[1], []]  # add_special puts llama's BOS (id 1) in front
    edge = goldens.corpora["edge"]
    assert edge.per_case and edge.cases == len(edge.plain) == 884
    assert len(edge.texts_sha256) == 64
    # one case, as llama.cpp tokenizes it today, add_special off and on
    i = edge.case_ids.index("digits-0068")  # "127.0.0.1:8080"
    with make_backend("llama.cpp", zoo("llama-spm")) as llama:
        assert edge.plain[i].ids == llama.encode("127.0.0.1:8080", False) and len(edge.plain[i].ids) > 5
        assert edge.special[i].ids == llama.encode("127.0.0.1:8080", True) == [1] + edge.plain[i].ids


def test_unchanged_goldens_pass(capsys, llama_spm_goldens, tmp_path):
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(llama_spm_goldens), "-o", str(tmp_path / "r"))
    assert code == 0, out
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    runs = {r["backend"]: r for r in summary["runs"]}
    assert set(runs) == {"golden", "llama.cpp", "ref"}
    assert runs["llama.cpp"]["cases"] == 2 * 884 and runs["llama.cpp"]["mismatches"] == 0
    assert runs["ref"]["unexplained"] == 0
    assert runs["llama.cpp"]["oracle"].startswith("goldens (golden ggml-vocab-llama-spm.gguf.out, llama.cpp ")
    assert runs["llama.cpp"]["oracle_why"] == "the ids its oracle gave when `regress --update` made llama-spm.jsonl.gz"


def test_one_changed_id_fails_and_names_the_case(capsys, scratch, tmp_path):
    original = rewrite_case(scratch / "llama-spm.jsonl.gz", "digits-0068", lambda line: None)
    assert original, "the case has ids to change"
    rewrite_case(scratch / "llama-spm.jsonl.gz", "digits-0068",
                 lambda line: line.update(ids=[line["ids"][0] + 1] + line["ids"][1:]))
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "-b", "llama.cpp",
                           "-o", str(tmp_path / "r"))
    assert code == 1
    assert "CHANGED llama-spm edge/digits-0068 llama.cpp" in out
    rows = list(csv.DictReader(open(tmp_path / "r" / "mismatches.csv", encoding="utf-8")))
    # the add_special ids are stored as "BOS + these ids", so they changed too
    assert [(r["case_id"], r["corpus"], r["backend"]) for r in rows] == [
        ("digits-0068", "edge", "llama.cpp"), ("digits-0068", "edge +add_special", "llama.cpp")]
    assert json.loads(rows[0]["oracle_ids"])[0] == original[0] + 1
    assert json.loads(rows[0]["backend_ids"]) == original
    assert rows[0]["class"]  # classified like any compare mismatch


def test_a_known_divergence_does_not_fail(capsys, scratch, tmp_path):
    rewrite_case(scratch / "llama-spm.jsonl.gz", "digits-0068",
                 lambda line: line.update(ids=[line["ids"][0] + 1] + line["ids"][1:]))
    code, _, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "-b", "llama.cpp", "-o", str(tmp_path / "r1"))
    cls = next(csv.DictReader(open(tmp_path / "r1" / "mismatches.csv", encoding="utf-8")))["class"]
    known = tmp_path / "known.toml"
    known.write_text(f'''[[divergence]]
id = "test-changed-id"
models = ["llama-spm"]
backends = ["llama.cpp"]
classes = ["{cls}"]
case_ids = ["digits-0068"]
reason = "this test changed the golden id on purpose"
upstream = "tests/regress/test_regress.py"
''')
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "-b", "llama.cpp", "--no-builtin-known",
                           "--known", str(known), "-o", str(tmp_path / "r2"))
    assert code == 0, out
    assert "CHANGED" not in out
    assert json.loads((tmp_path / "r2" / "summary.json").read_text())["known"]["used"] == {"test-changed-id": 2}


def test_changed_add_special_id_is_reported_in_its_own_corpus(capsys, scratch, tmp_path):
    rewrite_case(scratch / "llama-spm.jsonl.gz", "digits-0068", lambda line: line.update(special=[2] + line["ids"]))
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "-b", "llama.cpp", "-o", str(tmp_path / "r"))
    assert code == 1
    assert "CHANGED llama-spm edge +add_special/digits-0068 llama.cpp" in out


def test_edited_corpus_is_a_clear_error(capsys, tmp_path):
    corpus = tmp_path / "mine.jsonl"
    corpus.write_text('{"id": "a", "text": "Hello world"}\n{"id": "b", "text": " tab\\there"}\n')
    folder = tmp_path / "g"
    assert main(["regress", "--update", "bert-bge", "-c", str(corpus), "--goldens", str(folder), "-q"]) == 0
    capsys.readouterr()
    assert regress(capsys, "bert-bge", "--goldens", str(folder), "-o", str(tmp_path / "r1"))[0] == 0
    corpus.write_text('{"id": "a", "text": "Hello world!"}\n{"id": "b", "text": " tab\\there"}\n')
    code, out, err = regress(capsys, "bert-bge", "--goldens", str(folder), "-o", str(tmp_path / "r2"))
    assert code == 2
    assert err.count("\n") == 1
    assert f"corpus '{corpus}' changed since these goldens were made (2 cases then, 2 now; same case ids, " \
           "edited text)" in err
    assert f"tokparity regress --update bert-bge -c {corpus}" in err


def test_missing_goldens_and_corpus_are_clear_errors(capsys, llama_spm_goldens):
    code, _, err = regress(capsys, "bert-bge", "--goldens", str(llama_spm_goldens))
    assert code == 2 and "bert-bge.jsonl.gz: no goldens for this model" in err
    assert "tokparity regress --update bert-bge" in err
    code, _, err = regress(capsys, "llama-spm", "-c", "emoji", "--goldens", str(llama_spm_goldens))
    assert code == 2 and "no goldens for corpus 'emoji' (they hold edge)" in err


def test_damaged_goldens_name_the_file(capsys, scratch):
    path = scratch / "llama-spm.jsonl.gz"
    path.write_bytes(path.read_bytes()[:2000])  # truncated gzip
    code, _, err = regress(capsys, "llama-spm", "--goldens", str(scratch))
    assert code == 2
    assert str(path) in err and "damaged goldens" in err and "--update" in err


@pytest.mark.parametrize("change, said", [
    (lambda line: line.update(ids="x"), "ids must be a list of integers, not 'x'"),
    (lambda line: line.update(ids="12"), "ids must be a list of integers, not '12'"),  # (not [1, 2])
    (lambda line: line.update(ids=[1, "2"]), "ids must be a list of integers"),
    (lambda line: line.update(ids=[True]), "ids must be a list of integers"),
])
def test_hand_edited_ids_name_the_file_and_line(capsys, scratch, change, said):
    rewrite_case(scratch / "llama-spm.jsonl.gz", "digits-0068", change)
    code, _, err = regress(capsys, "llama-spm", "--goldens", str(scratch))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "llama-spm.jsonl.gz:" in err and "damaged goldens" in err and said in err


def test_digest_only_corpus(capsys, tmp_path):
    folder = tmp_path / "g"
    assert main(["regress", "--update", "bert-bge", "-c", "edge", "--digest-only", "--goldens", str(folder), "-q"]) == 0
    path = folder / "bert-bge.jsonl.gz"
    with gzip.open(path, "rt") as fh:
        lines = [json.loads(line) for line in fh]
    # the header and one line for the whole corpus (then the decoder's texts of the id sequences made from the
    # vocabulary and of their prompts: no text's)
    assert len([line for line in lines if "seq" not in line and "decoding" not in line]) == 2
    made = {tuple(line["seq"]): line["prompt"] for line in lines if "case" in line}
    texts = {tuple(line["seq"]) for line in lines if "text" in line}
    assert made and texts == set(made) | {ids[:prompt] for ids, prompt in made.items()}
    code, out, _ = regress(capsys, "bert-bge", "--goldens", str(folder), "-b", "ref", "-o", str(tmp_path / "r1"))
    assert code == 0, out
    rewrite_lines(path, lambda line: dict(line, ids_sha256="0" * 64) if "corpus" in line else line)
    code, out, _ = regress(capsys, "bert-bge", "--goldens", str(folder), "-b", "ref", "-o", str(tmp_path / "r2"))
    assert code == 1
    assert "CHANGED bert-bge edge: the oracle's ids no longer hash to the stored digest" in out


def test_update_is_reproducible(tmp_path, llama_spm_goldens):
    """The same oracle makes the same bytes: an --update that changes nothing shows no git diff."""
    assert main(["regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(tmp_path), "-q"]) == 0
    assert (tmp_path / "llama-spm.jsonl.gz").read_bytes() == (llama_spm_goldens / "llama-spm.jsonl.gz").read_bytes()


# --- the decoding ops against the decoder's texts the goldens hold ----------------------------------

STREAM_ENGINE = Path(__file__).resolve().parents[1] / "engines" / "stream_engine.py"


def rewrite_lines(path: Path, change) -> None:
    """Apply ``change`` to every line of a goldens file (it returns the line, or None to drop it)."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(obj, ensure_ascii=False) + "\n" for obj in map(change, lines) if obj is not None)


def test_update_stores_what_the_decoder_gave(llama_spm_goldens, zoo):
    goldens = read_goldens(llama_spm_goldens / "llama-spm.jsonl.gz")
    decoding = goldens.decoding
    assert decoding is not None and decoding.decoder == "llama.cpp" and decoding.version.startswith("0.")
    assert decoding.pieces_sha256 and len(decoding.pieces_sha256) == 64
    edge = goldens.corpora["edge"]
    # llama.cpp gives ' hello' back for the ids of ' hello' (its dummy prefix aside): the case's own text,
    # not stored; where it is not the case's text it is stored ('  ' is two spaces, decoded: one id of '▁▁')
    with make_backend("llama.cpp", zoo("llama-spm")) as llama:
        for k, case_id in enumerate(edge.case_ids):
            ids = edge.plain[k].ids
            if edge.plain[k].status == "ok" and ids:
                assert edge.decoded[k] in (None, llama.decode(ids)), case_id
        assert sum(text is not None for text in edge.decoded) >= 1
        # the id sequences made from the vocabulary (every one: two share their ids, not their prompt), with
        # llama.cpp's text of each and of its prompt; the vocabulary's blocks are the table's digest above
        assert decoding.id_cases == [c for c in id_cases(load_vocab(zoo("llama-spm").primary[1])) if not c.pieces_only]
        for case in decoding.id_cases:
            assert decoding.sequences[case.ids] == llama.decode(list(case.ids))
            assert case.ids[:case.prompt] in decoding.sequences


def test_unchanged_goldens_pass_every_op(capsys, llama_spm_goldens, tmp_path):
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(llama_spm_goldens), "--ops", "all",
                           "-o", str(tmp_path / "r"))
    assert code == 0, out
    runs = {(r["backend"], r["op"]): r for r in json.loads((tmp_path / "r" / "summary.json").read_text())["runs"]}
    for op in ("decode", "stream", "pieces"):
        for backend in ("llama.cpp", "ref"):
            assert runs[backend, op]["cases"] > 700 and runs[backend, op]["mismatches"] == 0, (backend, op)
    assert runs["llama.cpp", "encode"]["cases"] == 2 * 884  # the encoding, add_special off and on, as before


def test_a_changed_decoded_text_fails_and_names_the_case(capsys, scratch, tmp_path):
    original = []

    def change(line):
        if line.get("id") == "digits-0068":
            original.append(line.get("decoded"))
            line["decoded"] = "127.0.0.1:8081"
        return line

    rewrite_lines(scratch / "llama-spm.jsonl.gz", change)
    assert original == [None], "llama.cpp gives the case's own text back"
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "-b", "llama.cpp", "--ops", "decode",
                           "-o", str(tmp_path / "r"))
    assert code == 1
    assert "CHANGED llama-spm edge/digits-0068 llama.cpp decode: decode-roundtrip" in out
    rows = list(csv.DictReader(open(tmp_path / "r" / "mismatches.csv", encoding="utf-8")))
    assert [(r["case_id"], r["op"]) for r in rows] == [("digits-0068", "decode")]
    assert json.loads(rows[0]["oracle_output"]) == ["127.0.0.1:8081"]
    assert json.loads(rows[0]["backend_output"]) == ["127.0.0.1:8080"]


def test_an_engine_that_streams_bytes_as_latin1_fails_against_the_goldens(capsys, llama_spm_goldens, tmp_path, zoo):
    gguf = zoo("llama-spm").files["gguf"]
    engine = f"mine=cmd:{sys.executable} {STREAM_ENGINE} {gguf} --bug latin1"
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(llama_spm_goldens), "-b", engine, "--ops", "stream",
                           "-o", str(tmp_path / "r"))
    assert code == 1
    rows = list(csv.DictReader(open(tmp_path / "r" / "mismatches.csv", encoding="utf-8")))
    assert rows and {r["op"] for r in rows} == {"stream"} and {r["backend"] for r in rows} == {"mine"}
    # the split characters of the id sequences the goldens hold, sent as Latin-1
    assert any(r["corpus"] == "ids" and r["class"] == "stream-text" for r in rows)
    assert re.search(r"^CHANGED llama-spm edge/\S+ mine stream: stream-text: goldens ", out, re.M)


def test_changed_token_bytes_are_a_change(capsys, scratch, tmp_path):
    def change(line):
        if "decoding" in line:
            line["decoding"]["pieces_sha256"] = "0" * 64
        return line

    rewrite_lines(scratch / "llama-spm.jsonl.gz", change)
    code, out, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "--ops", "encode,pieces",
                           "-o", str(tmp_path / "r"))
    assert code == 1
    assert "CHANGED llama-spm pieces: llama.cpp's bytes of the tokens no longer hash to the stored digest" in out
    runs = {(r["backend"], r["op"]): r for r in json.loads((tmp_path / "r" / "summary.json").read_text())["runs"]}
    assert runs["llama.cpp", "pieces"]["unexplained"] == 1 and runs["llama.cpp", "encode"]["unexplained"] == 0


def test_goldens_without_decoded_texts_refuse_the_decoding_ops(capsys, scratch):
    rewrite_lines(scratch / "llama-spm.jsonl.gz",
                  lambda line: None if "decoding" in line or "seq" in line else line)
    code, _, err = regress(capsys, "llama-spm", "--goldens", str(scratch), "--ops", "decode")
    assert code == 2
    assert "llama-spm.jsonl.gz: holds no decoded texts" in err and "regress --update llama-spm" in err
    code, _, _ = regress(capsys, "llama-spm", "--goldens", str(scratch), "-o", str(scratch.parent / "r"))
    assert code == 0  # encoding is judged as before


@pytest.mark.parametrize("model", [
    pytest.param("llama-spm", id="llama-spm"),  # golden ids, then llama.cpp
    pytest.param("bert-bge", id="bert-bge"),  # WPM, [CLS] … [SEP] with add_special
    pytest.param("botchan-unigram", id="botchan-unigram"),  # SentencePiece is the oracle
    pytest.param("qwen3", id="qwen3"),  # Hugging Face tokenizers is the oracle
])
def test_committed_goldens_are_current(capsys, tmp_path, model):
    """The goldens in tests/goldens agree with today's oracle and reference on every corpus, every op
    (the decoder's texts and token bytes they hold too)."""
    code, out, _ = regress(capsys, model, "--goldens", str(COMMITTED), "--ops", "all", "-o", str(tmp_path / "r"))
    assert code == 0, out
    goldens = read_goldens(COMMITTED / f"{model}.jsonl.gz")
    texts = {"multilingual", "emoji", "edge", "llama.cpp-tests"}
    assert set(goldens.corpora) == texts | ({"chats"} if model == "qwen3" else set())  # (qwen3: a chat template)
    assert goldens.decoding is not None and goldens.decoding.pieces_sha256 and goldens.decoding.id_cases
    runs = {(r["backend"], r["op"]): r for r in json.loads((tmp_path / "r" / "summary.json").read_text())["runs"]}
    assert runs["ref", "decode"]["cases"] > 5000 and runs["ref", "pieces"]["cases"] > 5000


@pytest.mark.parametrize("model", [
    pytest.param("qwen3", id="qwen3"),  # transformers' files: the prompt encoded by Hugging Face tokenizers
    pytest.param("qwen2", id="qwen2"),  # a GGUF's template, encoded by llama.cpp (its built-in: known divergences)
])
def test_committed_prompts_are_current(capsys, tmp_path, model):
    """The prompts in tests/goldens are what the model's template and today's libraries make of the
    built-in conversations: transformers' apply_chat_template, llama.cpp's built-in template (its
    reviewed divergences known) and tokparity's own rendering today."""
    code, out, _ = regress(capsys, model, "--goldens", str(COMMITTED), "--ops", "chat", "-o", str(tmp_path / "r"))
    assert code == 0, out
    runs = {r["backend"]: r for r in json.loads((tmp_path / "r" / "summary.json").read_text())["runs"]}
    assert (runs["template"]["cases"], runs["template"]["mismatches"]) == (35, 0)
    assert runs["hf" if model == "qwen3" else "llama.cpp"]["cases"] >= 20
