"""Two models whose files share a name (``two/a/tokenizer.json``, ``two/b/tokenizer.json``) get
names a user can tell apart, the shortest distinguishing path, in every report and on resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tokparity.cli import main
from tokparity.zoo import distinct_names, resolve_model


def two_tokenizers(zoo, root: Path) -> tuple[Path, Path]:
    """qwen3's tokenizer.json twice, the second with a Lowercase normalizer: different models, one file name."""
    source = zoo("qwen3").files["tokenizer_json"]
    a, b = root / "two" / "a" / "tokenizer.json", root / "two" / "b" / "tokenizer.json"
    for path in (a, b):
        path.parent.mkdir(parents=True)
    shutil.copy(source, a)
    data = json.loads(source.read_text("utf-8"))
    data["normalizer"] = {"type": "Lowercase"}
    b.write_text(json.dumps(data), "utf-8")
    return a, b


def test_colliding_names_become_their_shortest_distinguishing_paths(zoo, tmp_path):
    a, b = two_tokenizers(zoo, tmp_path)
    (tmp_path / "x" / "two" / "a").mkdir(parents=True)
    c = tmp_path / "x" / "two" / "a" / "tokenizer.json"
    shutil.copy(a, c)
    specs = distinct_names([str(a), str(b), "llama-spm", str(c)])
    assert specs[2] == "llama-spm"  # a zoo name stays
    # (one depth for the whole group: the shortest that tells all three apart)
    assert [s.partition("=")[0] for s in (specs[0], specs[1], specs[3])] == [
        f"{tmp_path.name}/two/a/tokenizer", f"{tmp_path.name}/two/b/tokenizer", "x/two/a/tokenizer"]
    assert [resolve_model(s).name for s in specs[:2]] == [f"{tmp_path.name}/two/a/tokenizer",
                                                         f"{tmp_path.name}/two/b/tokenizer"]
    assert [s.partition("=")[0] for s in distinct_names([str(a), str(b)])] == ["a/tokenizer", "b/tokenizer"]
    assert resolve_model(specs[1]).files["tokenizer_json"] == b.resolve()
    assert distinct_names([str(a)]) == [str(a)]  # alone, its name is its own
    # "=" in a folder's name: the name ends at the "=" before the path
    for run in ("run=1", "run=2"):
        (tmp_path / run).mkdir()
        shutil.copy(a, tmp_path / run / "tokenizer.json")
    named = distinct_names([str(tmp_path / "run=1" / "tokenizer.json"), str(tmp_path / "run=2" / "tokenizer.json")])
    assert [resolve_model(s).name for s in named] == ["run=1/tokenizer", "run=2/tokenizer"]
    # a local file named as a zoo model, or as an hf: model, is told apart from it
    shutil.copy(zoo("llama-spm").files["gguf"], tmp_path / "llama-spm.gguf")
    assert distinct_names(["llama-spm", str(tmp_path / "llama-spm.gguf")])[1].startswith(f"{tmp_path.name}/llama-spm=")
    (tmp_path / "gpt2").mkdir()
    shutil.copy(a, tmp_path / "gpt2" / "tokenizer.json")
    assert distinct_names(["hf:openai-community/gpt2", str(tmp_path / "gpt2")])[1].startswith(f"{tmp_path.name}/gpt2=")


def test_every_report_and_a_resume_name_them_apart(zoo, tmp_path, capsys, monkeypatch):
    a, b = two_tokenizers(zoo, tmp_path)
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "texts.jsonl"
    corpus.write_text('{"id": "t1", "text": "Hello World"}\n{"id": "t2", "text": "ÉCOLE"}\n', "utf-8")
    out = tmp_path / "r"
    code = main(["compare", "two/a/tokenizer.json", "two/b/tokenizer.json", "-c", str(corpus), "-b", "ref", "-q",
                 "-o", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    summary = json.loads((out / "summary.json").read_text())
    assert {r["model"] for r in summary["runs"]} == {"a/tokenizer", "b/tokenizer"}
    for report in ("summary.md", "report.html"):
        text = (out / report).read_text("utf-8")
        assert "a/tokenizer" in text and "b/tokenizer" in text, report
    assert "a/tokenizer" in printed and "b/tokenizer" in printed
    header = json.loads((out / "cases.jsonl").read_text("utf-8").splitlines()[0])
    assert [m.partition("=")[0] for m in header["args"]["models"]] == ["a/tokenizer", "b/tokenizer"]
    monkeypatch.chdir(tmp_path / "two")  # a resume from elsewhere finds the same files under the same names
    assert main(["compare", "--resume", str(out), "-q"]) == 0
    # the models given again with the resume are the same models
    assert main(["compare", str(a), str(b), "--resume", str(out), "-q"]) == 0
    capsys.readouterr()
    assert {r["model"] for r in json.loads((out / "summary.json").read_text())["runs"]} == {"a/tokenizer",
                                                                                          "b/tokenizer"}
