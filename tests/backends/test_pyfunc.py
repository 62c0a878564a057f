"""py: engines: a Python callable, in a child process by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokparity.backends.isolated import IsolatedBackend
from tokparity.backends.pyfunc import PyFuncBackend
from tokparity.backends.registry import make_backend
from tokparity.backends.runner import run_cases
from tokparity.errors import TokparityError

ENGINES = Path(__file__).resolve().parents[1] / "engines"  # test engines

FLAKY_FILE = ENGINES / "flaky_py.py"


def test_crash_timeout_and_error_are_records(zoo):
    engine = make_backend(f"py:{FLAKY_FILE}:encode", zoo("llama-spm"), timeout=1.0)
    try:
        assert isinstance(engine, IsolatedBackend) and engine.name == f"py:{FLAKY_FILE}:encode"
        results = run_cases(engine, ["a", "SEGV", "b", "HANG", "RAISE", "c"])
        assert [r.status for r in results] == ["ok", "crash", "ok", "timeout", "error", "ok"]
        assert [r.ids for r in results] == [[97], [], [98], [], [], [99]]
        assert "killed by SIGSEGV on this case" in results[1].detail
        assert results[4].detail.endswith("ValueError: RAISE is not a text this engine likes")
        assert engine.encode("x", add_special=True) == [1, 120]
    finally:
        engine.close()


def test_module_form_in_process(zoo, monkeypatch):
    monkeypatch.chdir(ENGINES)  # MODULE is imported from the working directory, as `python -m` would
    engine = make_backend("py:flaky_py:encode", zoo("llama-spm"), isolate=False)
    assert isinstance(engine, PyFuncBackend)
    assert engine.encode("hé") == [104, 195, 169]
    assert engine.pieces([15043]) == ["▁Hello"]
    with pytest.raises(NotImplementedError, match="has no decode"):
        engine.decode([104])


def test_class_form_gets_the_model_files(zoo, monkeypatch):
    monkeypatch.chdir(ENGINES)
    for isolate in (False, True):
        engine = make_backend("py:flaky_py:BytesEngine", zoo("llama-spm"), isolate=isolate)
        try:
            assert engine.encode("ok") == [111, 107]
            assert engine.decode([111, 107]) == "ok"
        finally:
            engine.close()


@pytest.mark.parametrize("target, message", [
    pytest.param("py:no_such_module_xyz:f", r"cannot import no_such_module_xyz", id="no-module"),
    pytest.param(f"py:{FLAKY_FILE}:nope", r"flaky_py.py has no 'nope'", id="no-callable"),
    pytest.param("py:/no/such/file.py:f", r"no such file /no/such/file.py", id="no-file"),
])
def test_bad_targets(zoo, target, message):
    with pytest.raises(TokparityError, match=message):
        make_backend(target, zoo("llama-spm"), isolate=False)
    with pytest.raises(TokparityError, match=message):  # the child says the same, when the backend is made
        make_backend(target, zoo("llama-spm"))


def test_a_file_role_spelt_wrong_is_told_with_the_roles_the_model_has(zoo, tmp_path):
    """``files["tokenizer.json"]`` for ``files["tokenizer_json"]``: the error lists the roles,
    in process and from the child alike (a newcomer met a bare KeyError)."""
    engine = tmp_path / "typo_engine.py"
    engine.write_text("class Engine:\n    def __init__(self, files):\n        self.path = files['tokenizer.json']\n\n"
                      "    def encode(self, text, add_special, parse_special):\n        return []\n", encoding="utf-8")
    with pytest.raises(KeyError, match=r"'tokenizer.json' is no file of llama-spm; its files are .*gguf"):
        make_backend(f"py:{engine}:Engine", zoo("llama-spm"), isolate=False)
    with pytest.raises(TokparityError, match=r"'tokenizer.json' is no file of llama-spm; its files are .*gguf"):
        make_backend(f"py:{engine}:Engine", zoo("llama-spm"))


def test_an_encode_that_raises_not_implemented_is_not_answered(zoo, tmp_path):
    """docs/guides/first-check.md: an engine written for another op, whose ``encode`` raises a bare
    ``NotImplementedError``, gets no crash per case. On some cases: those count as not answered. On
    every case: the run refuses with one line, as for an engine that skips every case."""
    import json

    from cli_runs import tokparity

    (tmp_path / "some.py").write_text(
        "from tokenizers import Tokenizer\n\n"
        "class Engine:\n"
        "    def __init__(self, files):\n"
        "        self.tok = Tokenizer.from_file(files['tokenizer_json'])\n\n"
        "    def encode(self, text, add_special, parse_special):\n"
        "        if 'e' in text:\n"
        "            raise NotImplementedError\n"
        "        self.tok.encode_special_tokens = not parse_special\n"
        "        return self.tok.encode(text, add_special_tokens=add_special).ids\n", encoding="utf-8")
    (tmp_path / "none.py").write_text(
        "class Engine:\n"
        "    def __init__(self, files):\n"
        "        pass\n\n"
        "    def encode(self, text, add_special, parse_special):\n"
        "        raise NotImplementedError\n", encoding="utf-8")
    corpus = tmp_path / "texts.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"t{k}", "text": t}) + "\n"
                              for k, t in enumerate(["Hello", "world", "a cat", "tokens"])), encoding="utf-8")
    done = tokparity("compare", "llama-bpe", "-c", str(corpus), "-b", "mine=py:./some.py:Engine", "-o", "out",
                     cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run = next(r for r in json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))["runs"]
               if r["backend"] == "mine")
    assert (run["cases"], run["mismatches"], run["skipped"]) == (2, 0, 2)
    refused = tokparity("compare", "llama-bpe", "-c", str(corpus), "-b", "mine=py:./none.py:Engine", "-o", "out2",
                        cwd=tmp_path)
    line = refused.stderr.strip().splitlines()[-1]
    assert refused.returncode == 2 and "mine judged no case (each skipped, or not applicable)" in line
