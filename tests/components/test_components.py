"""tokenizer.json as typed components (tokparity.components) and the reference that runs them.

Each tokenizers component type is one frozen dataclass with the library's defaults; a bad one
is one line naming it; the reference runs Unigram, WordPiece and WordLevel files and Metaspace's
every prepend_scheme as the ``tokenizers`` library does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.components import AddedToken, models, normalizers, parse_tokenizer_json, pre_tokenizers, processors
from tokparity.errors import BadModelFile
from tokparity.reference import RefTokenizer
from tokparity.vocab import load_vocab

tokenizers = pytest.importorskip("tokenizers")
ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


# --- typed parsing ----------------------------------------------------------------------------------


def test_components_take_tokenizers_defaults():
    spec = parse_tokenizer_json({
        "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}},
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "BertNormalizer"}, {"type": "Strip"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Metaspace", "replacement": "_"}, {"type": "Split", "pattern": {"String": "-"}},
            {"type": "Metaspace", "add_prefix_space": False}, {"type": "FixedLength"}]},
        "post_processor": {"type": "RobertaProcessing"},
        "added_tokens": [{"id": 0, "content": "[UNK]", "special": True}, {"id": 1, "content": "a"}],
    })
    assert spec.model == models.WordPiece({}, "[UNK]", "##", 100)
    assert spec.normalizer_steps() == [normalizers.BertNormalizer(True, True, None, True), normalizers.Strip(True, True)]
    assert spec.pre_tokenizer_steps() == [
        pre_tokenizers.Metaspace("_", "always", True), pre_tokenizers.Split("-", False, "Isolated", False),
        pre_tokenizers.Metaspace("\u2581", "never", True), pre_tokenizers.FixedLength(5)]
    assert spec.post_processor == processors.RobertaProcessing(("</s>", 2), ("<s>", 0), True, True)
    assert spec.post_processor.around() == ([0], [2])
    # a special token is not normalized unless it says so; any other is
    assert spec.added_tokens == (AddedToken(0, "[UNK]", normalized=False, special=True), AddedToken(1, "a"))


@pytest.mark.parametrize("edit, words", [
    pytest.param({"pre_tokenizer": {"type": "Metaspace", "prepend_scheme": "sometimes"}},
                 ["pre_tokenizer step 0 (Metaspace) prepend_scheme is 'sometimes'", "always, first, never"],
                 id="metaspace-scheme"),
    pytest.param({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Titlecase"}]}},
                 ["normalizer step 1 has unknown type 'Titlecase'", "Lowercase"], id="unknown-normalizer"),
    pytest.param({"pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways"}},
                 ["pre_tokenizer step 0 (Split) behavior is 'Sideways'", "Contiguous"], id="split-behavior"),
    pytest.param({"post_processor": {"type": "BertProcessing", "sep": ["[SEP]", "x"]}},
                 ["post_processor (BertProcessing) sep is", "expected [token, id]"], id="bert-sep"),
])
def test_a_bad_component_is_one_line_naming_it(tmp_path, edit, words):
    data = {"model": {"type": "WordLevel", "vocab": {"<unk>": 0, "a": 1}}, **edit}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BadModelFile):
        parse_tokenizer_json(data, path)
    run = _cli("encode", str(path), "a", "-b", "ref", timeout=60)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("tokparity: error:")]
    assert len(lines) == 1, run.stderr
    for word in words:
        assert word in lines[0], lines[0]


# --- Metaspace's prepend_scheme against tokenizers -----------------------------------------------------


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
def test_metaspace_prepend_scheme_as_tokenizers(zoo, tmp_path, scheme):
    data = json.loads(Path(zoo("botchan-bpe").path("tokenizer_json")).read_text())
    data["normalizer"] = None
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": True}
    data["added_tokens"] = list(data.get("added_tokens") or []) + [
        {"id": len(data["model"]["vocab"]), "content": "<x>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
         "special": False}]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data))
    theirs = tokenizers.Tokenizer.from_file(str(path))
    ref = RefTokenizer(load_vocab(path))
    texts = ["<x>hello world", "hello <x>world", "the <x> cat", " leading", "", "<x>", "a<x>b<x>c"]
    for text in texts:
        assert ref.encode(text) == theirs.encode(text, add_special_tokens=False).ids, (scheme, text)
    # "first" prepends only before the text's first piece, not after an added token
    after_token = ref.encode("<x>hello")
    if scheme == "first":
        assert after_token == theirs.encode("<x>hello", add_special_tokens=False).ids
        assert ref.encode("hello")[0] == ref.encode("\u2581hello")[0]
    by_scheme = {s: _with_scheme(tmp_path, data, s).encode("<x>hello") for s in ("always", "first")}
    assert by_scheme["always"] != by_scheme["first"]


def _with_scheme(tmp_path: Path, data: dict, scheme: str) -> RefTokenizer:
    path = tmp_path / scheme / "tokenizer.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({**data, "pre_tokenizer": {**data["pre_tokenizer"], "prepend_scheme": scheme}}))
    return RefTokenizer(load_vocab(path))


# --- Unigram, WordPiece, WordLevel tokenizer.json files, compared end to end ---------------------------


def _compare_ref_hf(path: Path, out: Path) -> None:
    run = _cli("compare", str(path), "-c", "edge", "-c", "multilingual", "-c", "emoji", "-b", "ref", "-b", "hf",
               "-o", str(out), "-q")
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    records = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()[1:]]
    assert len(records) > 1000
    mismatches = (out / "mismatches.csv").read_text().splitlines()[1:]
    assert mismatches == []


def test_unigram_tokenizer_json_agrees_with_tokenizers(zoo, tmp_path):
    _compare_ref_hf(Path(zoo("botchan-unigram").path("tokenizer_json")), tmp_path / "out")


def _bge_vocab(zoo) -> dict[str, int]:
    vocab = load_vocab(zoo("bert-bge").path("gguf"))
    return {token: i for i, token in reversed(list(enumerate(vocab.tokens)))}


def test_wordpiece_tokenizer_json_agrees_with_tokenizers(zoo, tmp_path):
    from tokenizers import Tokenizer
    from tokenizers import normalizers as n
    from tokenizers import pre_tokenizers as p
    from tokenizers import processors as pp
    from tokenizers.models import WordPiece
    ids = _bge_vocab(zoo)
    tok = Tokenizer(WordPiece(ids, unk_token="[UNK]"))
    tok.normalizer = n.BertNormalizer()
    tok.pre_tokenizer = p.BertPreTokenizer()
    tok.post_processor = pp.BertProcessing(("[SEP]", ids["[SEP]"]), ("[CLS]", ids["[CLS]"]))
    path = tmp_path / "wordpiece" / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    assert RefTokenizer(load_vocab(path)).encode("Hello, wörld!", add_special=True) == \
        tok.encode("Hello, wörld!").ids
    _compare_ref_hf(path, tmp_path / "out")


def test_wordlevel_tokenizer_json_agrees_with_tokenizers(zoo, tmp_path):
    from tokenizers import Tokenizer
    from tokenizers import normalizers as n
    from tokenizers import pre_tokenizers as p
    from tokenizers.models import WordLevel
    tok = Tokenizer(WordLevel(_bge_vocab(zoo), unk_token="[UNK]"))
    tok.normalizer = n.Lowercase()
    tok.pre_tokenizer = p.Sequence([p.WhitespaceSplit(), p.Punctuation(), p.Digits(individual_digits=True)])
    path = tmp_path / "wordlevel" / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    _compare_ref_hf(path, tmp_path / "out")
