"""Nothing compared is exit 2, for every corpus kind (issue: hostile input, round 2): an empty JSON
lines file, a Parquet file of no rows and one whose text column is all null each gave "✅ no
unexplained mismatch" on 0 case runs, exit 0. The reports are still written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from gguf_builder import kv_string, tiny_spm_gguf

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", ["empty.jsonl", "empty.parquet", "nulls.parquet"])
def test_a_corpus_with_no_text_is_nothing_compared(tmp_path, zoo, kind):
    zoo("llama-spm")
    corpus = tmp_path / kind
    if kind == "empty.jsonl":
        corpus.write_text("", "utf-8")
    else:
        pq.write_table(pa.table({"text": pa.array([] if kind == "empty.parquet" else [None, None], pa.string())}),
                       corpus)
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", str(corpus), "-b", "ref",
                           "-o", str(tmp_path / "out"), "-q"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = [line for line in done.stderr.splitlines() if line.startswith("tokparity: error:")]
    assert len(error) == 1 and "nothing was compared: no case was judged" in error[0] and kind in error[0]
    assert "✅" not in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert summary["runs"] and all(r["cases"] == 0 for r in summary["runs"])
    # the reports say it too: their title was ✅ (a sixth hostile campaign's find)
    title = (tmp_path / "out" / "summary.md").read_text("utf-8").split("\n", 1)[0]
    assert "✅" not in title and "nothing compared" in title, title
    html = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "✅" not in html and "class='verdict bad'>tokparity" in html and "nothing compared" in html


def test_a_fraction_that_keeps_no_case_names_the_corpus_as_given(tmp_path, zoo):
    """``--fraction 1e-9`` keeps no case: the error named the corpus by an inner key, with a NUL
    and the reading options' JSON (an independent hostile campaign's find)."""
    zoo("llama-spm")
    corpus = tmp_path / "big.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"text {i}"}) + "\n" for i in range(50)), "utf-8")
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", str(corpus), "-b", "ref",
                           "--fraction", "1e-9", "-o", str(tmp_path / "out"), "-q"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("tokparity: error:")]
    assert f"the corpora {corpus} gave no text" in error and '"fraction"' not in error and "<0x00>" not in error, error


def test_the_pytest_plugin_passes_nothing_compared(zoo):
    """``assert_tokenizer_parity`` passed on no text, on an empty corpus and on an engine that skips
    every case (issue: hostile input, round 3); each fails now, saying why. Its twin passes."""
    from tokparity.backends.ref import RefBackend
    from tokparity.errors import NotCovered
    from tokparity.pytest_plugin import assert_tokenizer_parity

    ref = RefBackend(zoo("llama-spm"))

    def right(text, add_special, parse_special):
        return ref.encode(text, add_special, parse_special)

    def skips(text, add_special, parse_special):
        raise NotCovered("not this text")

    with pytest.raises(AssertionError, match="compared on no case: no text was given"):
        assert_tokenizer_parity(right, model="llama-spm", texts=[])
    with pytest.raises(AssertionError, match=r"compared on none of the 3 cases of the given texts \(llama-spm\): "
                                             "3 skipped"):
        assert_tokenizer_parity(skips, model="llama-spm", texts=["a", "b", "c"])
    assert assert_tokenizer_parity(right, model="llama-spm", texts=["a", "b", "c"]) == 3


def test_the_pytest_plugin_fails_on_an_empty_corpus(tmp_path, zoo):
    from tokparity.backends.ref import RefBackend
    from tokparity.pytest_plugin import assert_tokenizer_parity

    ref = RefBackend(zoo("llama-spm"))
    corpus = tmp_path / "empty.jsonl"
    corpus.write_text("", "utf-8")
    with pytest.raises(AssertionError, match="compared on no case: no text was given"):
        assert_tokenizer_parity(lambda t, a, p: ref.encode(t, a, p), model="llama-spm", corpus=str(corpus))


def _chat_run(folder: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", "compare", str(folder), "--ops", "chat", "-o", str(out),
                           "-q"], env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("template, said", [
    ("{{ raise_exception('no chat here') }}", "gave a prompt for none of the 35 conversations"),
    ("{% if %}never compiles", "gave a prompt for none of the 35 conversations"),
    # (an empty prompt for every conversation: every engine agrees with it; a fifth campaign's find)
    ("{% if false %}x{% endif %}", "gave a prompt for none of the 35 conversations"),
    ("  \n", "its files carry no chat template"),
    ("{{ messages[0]['content'] }}", None),  # (the twin: a template that renders is compared)
])
def test_a_chat_template_that_gives_no_prompt_is_nothing_compared(tmp_path, zoo, template, said):
    """A template that raises on every conversation, or never compiles, gave ✅ and exit 0: both
    sides refused every conversation, so they agreed (issue: hostile input, round 3)."""
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(zoo("qwen3").files["tokenizer_json"], folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}), "utf-8")
    done = _chat_run(folder, tmp_path / "out")
    if said is None:
        assert done.returncode in (0, 1) and "✅" in done.stdout, done.stderr
        return
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: nothing was compared: "), lines
    assert said in done.stderr and "✅" not in done.stdout


def _model_with_template(tmp_path: Path, zoo, template: str) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(zoo("qwen3").files["tokenizer_json"], folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}), "utf-8")
    return folder


def _tokparity(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", *argv], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("template", ["{{ raise_exception('never') }}", "{% if false %}x{% endif %}"])
def test_fuzz_of_a_template_that_gives_no_prompt_is_nothing_compared(tmp_path, zoo, template):
    """``fuzz --ops chat`` said "no failure found", exit 0, on a template that raised on every
    conversation or wrote nothing (a fifth independent campaign's find); compare said exit 2."""
    folder = _model_with_template(tmp_path, zoo, template)
    done = _tokparity("fuzz", str(folder), "--ops", "chat", "--seconds", "3", "-o", str(tmp_path / "out"), "-q")
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: nothing was compared: "), lines


def test_regress_of_no_case_and_of_a_template_that_gives_no_prompt_is_nothing_compared(tmp_path, zoo):
    """``regress`` said ✅, exit 0, "0 mismatches in 0 case runs" on goldens of an empty corpus, and
    "0 mismatches in 70 case runs" with ``--ops chat`` on a template that raised on every
    conversation (a fifth independent campaign's finds)."""
    empty = tmp_path / "empty.txt"
    empty.write_text("", "utf-8")
    zoo("llama-spm")
    done = _tokparity("regress", "--update", "llama-spm", "-c", str(empty), "--goldens", str(tmp_path / "g"))
    assert done.returncode == 0, done.stderr
    done = _tokparity("regress", "llama-spm", "--goldens", str(tmp_path / "g"), "-o", str(tmp_path / "o1"), "-q")
    assert done.returncode == 2 and "nothing was compared: every backend skipped every case" in done.stderr, \
        (done.stdout, done.stderr)
    folder = _model_with_template(tmp_path, zoo, "{{ raise_exception('never') }}")
    done = _tokparity("regress", "--update", str(folder), "-c", "chats", "--goldens", str(tmp_path / "g2"))
    assert done.returncode == 0, done.stderr
    done = _tokparity("regress", str(folder), "--goldens", str(tmp_path / "g2"), "--ops", "chat",
                      "-o", str(tmp_path / "o2"), "-q")
    assert done.returncode == 2 and "gave a prompt for none of the 35 conversations" in done.stderr, (done.stdout,
                                                                                                       done.stderr)


def test_a_gguf_with_an_empty_template_is_nothing_compared(tmp_path):
    """A GGUF whose ``tokenizer.chat_template`` is "" was ✅ with no backend judged."""
    path = tmp_path / "tiny.gguf"
    data = tiny_spm_gguf()
    count = int.from_bytes(data[16:24], "little")  # (the key/value count, after magic, version, tensors)
    path.write_bytes(data[:16] + (count + 1).to_bytes(8, "little") + data[24:] + kv_string("tokenizer.chat_template", ""))
    done = _chat_run(path, tmp_path / "out")
    assert done.returncode == 2 and "its files carry no chat template" in done.stderr, (done.stdout, done.stderr)


def skipping_engine(tmp_path: Path, file: str = "gguf") -> str:
    """``-b`` for an engine that answers every request with a skip (given the model's ``file``)."""
    engine = tmp_path / "skips.py"
    engine.write_text("import json, sys\n"
                      "for line in sys.stdin:\n"
                      "    req = json.loads(line)\n"
                      "    print(json.dumps({'id': req['id'], 'error': 'not mine', 'status': 'skipped'}), flush=True)\n",
                      "utf-8")
    return f"mine=cmd:{sys.executable} {engine} {{{file}}}"


@pytest.mark.parametrize("ops", ["encode", "decode"])
def test_fuzz_of_an_engine_that_skips_every_case_is_nothing_compared(tmp_path, zoo, ops):
    """``fuzz`` of an engine that answers every case with a skip said "no failure found", ✅, exit 0
    on 4,535 skipped cases (found by a hostile-input helper)."""
    zoo("llama-spm")
    done = subprocess.run([sys.executable, "-m", "tokparity", "fuzz", "llama-spm", "--seconds", "2", "--ops", ops,
                           "-b", skipping_engine(tmp_path), "-o", str(tmp_path / "out"), "-q"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == ["tokparity: error: nothing was compared: every backend skipped every "
                                                f"case (or there was none); the reports are in {tmp_path / 'out'}"]
    assert "no failure found" not in done.stdout


def test_compare_of_a_named_engine_that_skips_every_case_is_nothing_compared(tmp_path, zoo):
    """``-b mine`` that skipped every case passed as ✅ when the corpus held llama.cpp's golden
    texts: llama.cpp was judged against the golden ids beside it (a hostile-input helper's find)."""
    zoo("llama-spm")
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", "llama.cpp-tests",
                           "-b", skipping_engine(tmp_path), "-o", str(tmp_path / "out"), "-q"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "nothing was compared: mine judged no case" in done.stderr and "✅" not in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    assert any(r["cases"] for r in summary["runs"] if r["backend"] != "mine")  # (others were judged)


@pytest.mark.parametrize(("model", "ops", "file"), [("llama-spm", "encode", "gguf"), ("llama-spm", "decode", "gguf"),
                                                    ("qwen3", "chat", "tokenizer_json")])
def test_regress_of_a_named_engine_that_skips_every_case_is_nothing_compared(tmp_path, zoo, model, ops, file):
    """``regress -b ENGINE`` of an engine that skips every case (every conversation) said ✅, exit 0,
    "0 mismatches in 0 case runs" (an independent hostile campaign's find); compare and fuzz said
    exit 2. The reports are written, and say what was skipped."""
    zoo(model)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tokparity", "regress", model, "--ops", ops,
                           "-b", skipping_engine(tmp_path, file), "-o", str(out), "-q"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.strip().splitlines() == ["tokparity: error: nothing was compared: mine judged no case (each "
                                                f"skipped, or not applicable); the reports are in {out}"]
    assert (out / "summary.json").is_file()


def test_an_engine_that_skips_every_case_beside_one_that_judged_is_nothing_compared(tmp_path, zoo):
    """``-b ref -b mine``, where mine skipped every case, said ✅ and exit 0: ref's cases were
    judged (a fourth hostile campaign's find). A backend named as the oracle is judged by its role."""
    zoo("llama-spm")
    zoo("llama-bpe")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command in (["compare", "llama-spm", "-c", "edge"], ["fuzz", "llama-spm", "--seconds", "2"]):
        out = tmp_path / command[0]
        done = subprocess.run([sys.executable, "-m", "tokparity", *command, "-b", "ref", "-b", skipping_engine(tmp_path),
                               "-o", str(out), "-q"], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.strip().splitlines()[-1] == ("tokparity: error: nothing was compared: mine judged no case "
                                                        f"(each skipped, or not applicable); the reports are in {out}")
    twin = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "--oracle", "hf",
                           "-b", "hf", "-b", "ref", "-o", str(tmp_path / "twin"), "-q"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert twin.returncode == 0, (twin.stdout, twin.stderr)


@pytest.mark.parametrize("ops", ["encode", "decode"])
def test_an_oracle_that_skips_every_case_is_nothing_compared(tmp_path, zoo, ops):
    """``--oracle mine``, where mine skipped every case: each case was a crash of ``ref``, "the
    oracle mine failed", ❌ and exit 1 (a fourteenth hostile campaign's find). With no oracle's
    answer nothing is judged: exit 2."""
    zoo("llama-spm")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", "edge", "--ops", ops,
                           "-b", "ref", "-b", skipping_engine(tmp_path), "--oracle", "mine", "-o", str(out), "-q"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "nothing was compared" in done.stderr and "❌" not in done.stdout, done.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert all(r["cases"] == 0 and r["mismatches"] == 0 for r in summary["runs"]), summary["runs"]


def test_a_reader_that_goes_away_neither_passes_the_run_nor_loses_its_reports(tmp_path, zoo):
    """``tokparity compare ... 2>&1 | head -1`` exited 0 with no reports: the closed pipe ended the
    run as if it had passed, and a CI step with pipefail passed a failing engine (a fourth hostile
    campaign's find). The run goes on silently: its reports, and exit 1 for its mismatches."""
    zoo("llama-spm")
    greedy = f"g=cmd:{sys.executable} {Path(__file__).parents[2] / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}}"
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", "edge", "-b", "ref",
                             "-b", greedy, "-o", str(out)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # (as head does after its line)
    assert proc.wait(timeout=300) == 1
    assert json.loads((out / "summary.json").read_text("utf-8"))["complete"] is True


def test_a_later_run_that_stops_leaves_no_earlier_verdict_in_its_folder(tmp_path, zoo):
    """A passing run, then a run into the same folder whose engine never starts: exit 2, and the
    earlier run's ✅ reports stayed beside it, speaking for the run that failed (a sixth hostile
    campaign's find). A new run clears the folder's reports as it starts."""
    zoo("llama-spm")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "out"
    for engine, status in (("ref", 0), (f"mine=cmd:{sys.executable} {tmp_path / 'nope.py'} {{gguf}}", 2)):
        done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c", "edge", "-b", engine,
                               "-o", str(out), "-q"], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == status, (done.stdout, done.stderr)
    for name in ("summary.md", "report.html", "summary.json", "mismatches.csv"):
        assert not (out / name).exists(), name  # (the engine never started: no report of its own)
    assert (out / "cases.jsonl").is_file()  # the stopped run's own journal, which a resume reads


def test_a_model_a_named_backend_cannot_open_stops_only_that_model(tmp_path, zoo):
    """``-b llama.cpp`` on a model with no GGUF (tekken) beside one it runs: the other model is
    compared and reported, the one that could not be opened is said in one line and in the reports,
    and the run exits 2. Before, the whole run stopped and no report of the first model was written."""
    zoo("llama-spm")
    zoo("tekken")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "tekken", "-c", "edge",
                           "-b", "llama.cpp", "-o", str(out), "-q"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = [line for line in done.stderr.splitlines() if line.startswith("tokparity: error:")]
    assert len(error) == 1 and "model tekken: the llama.cpp backend needs a .gguf file" in error[0], done.stderr
    assert "the reports cover the other models" in error[0] and "Traceback" not in done.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert {r["model"] for r in summary["runs"]} == {"llama-spm"} and all(r["cases"] for r in summary["runs"])
    assert len(summary["options"]["not_opened"]) == 1 and "tekken" in summary["options"]["not_opened"][0]
    page = (out / "summary.md").read_text("utf-8")
    assert "✅" not in page and "1 model not compared" in page.splitlines()[0]
