"""``tokparity regress``: unchanged goldens pass, one hand-changed id fails naming its case, an
edited corpus stops the run with a clear word, and the committed goldens are current.

Every run is real: llama.cpp and tokparity's reference on zoo models, goldens made by
``regress --update`` in a scratch folder (never the committed ones, which only the last test reads).
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import pytest

from tokparity.backends.registry import make_backend
from tokparity.cli import main
from tokparity.regress.goldens import default_goldens_dir, read_goldens

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


def test_digest_only_corpus(capsys, tmp_path):
    folder = tmp_path / "g"
    assert main(["regress", "--update", "bert-bge", "-c", "edge", "--digest-only", "--goldens", str(folder), "-q"]) == 0
    path = folder / "bert-bge.jsonl.gz"
    with gzip.open(path, "rt") as fh:
        assert len(fh.readlines()) == 2  # the header and one line for the whole corpus
    code, out, _ = regress(capsys, "bert-bge", "--goldens", str(folder), "-b", "ref", "-o", str(tmp_path / "r1"))
    assert code == 0, out
    with gzip.open(path, "rt") as fh:
        header, corpus = (json.loads(line) for line in fh)
    corpus["ids_sha256"] = "0" * 64
    with gzip.open(path, "wt") as fh:
        fh.write(json.dumps(header) + "\n" + json.dumps(corpus) + "\n")
    code, out, _ = regress(capsys, "bert-bge", "--goldens", str(folder), "-b", "ref", "-o", str(tmp_path / "r2"))
    assert code == 1
    assert "CHANGED bert-bge edge: the oracle's ids no longer hash to the stored digest" in out


def test_update_is_reproducible(tmp_path, llama_spm_goldens):
    """The same oracle makes the same bytes: an --update that changes nothing shows no git diff."""
    assert main(["regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(tmp_path), "-q"]) == 0
    assert (tmp_path / "llama-spm.jsonl.gz").read_bytes() == (llama_spm_goldens / "llama-spm.jsonl.gz").read_bytes()


@pytest.mark.parametrize("model", [
    pytest.param("llama-spm", id="llama-spm"),  # golden ids, then llama.cpp
    pytest.param("bert-bge", id="bert-bge"),  # WPM, [CLS] … [SEP] with add_special
    pytest.param("botchan-unigram", id="botchan-unigram"),  # SentencePiece is the oracle
    pytest.param("qwen3", id="qwen3"),  # Hugging Face tokenizers is the oracle
])
def test_committed_goldens_are_current(capsys, tmp_path, model):
    """The goldens in tests/goldens agree with today's oracle and reference on every corpus."""
    code, out, _ = regress(capsys, model, "--goldens", str(COMMITTED), "-o", str(tmp_path / "r"))
    assert code == 0, out
    goldens = read_goldens(COMMITTED / f"{model}.jsonl.gz")
    assert set(goldens.corpora) == {"multilingual", "emoji", "edge", "llama.cpp-tests"}
