"""Named engines: ``-b mine=cmd:…`` / ``-b mine=py:…`` (and ``-b fast=hf``) label a backend ``mine``
everywhere: summary.json, mismatches.csv, the reports, --known matching, --oracle, a resume,
``encode``, ``fuzz`` and ``regress``. Without a name every label stays what it was.

The engine that disagrees is examples/engines/greedy_engine.py (greedy longest match) on llama-spm,
over the edge corpus: 181 of its cases differ from llama.cpp's ids.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.backends.registry import labelled, labelled_with_oracle, split_label
from tokparity.errors import TokparityError
from tokparity.run.journal.signing import commands_in

ROOT = Path(__file__).resolve().parents[1]
GREEDY = "cmd:{python} " + str(ROOT / "examples" / "engines" / "greedy_engine.py") + " {gguf}"
FLAKY = str(ROOT / "tests" / "engines" / "flaky_py.py")
GREEDY_MISMATCHES = 181  # greedy_engine on llama-spm's edge corpus


def tokparity(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text("utf-8"))


def runs_by_backend(out: Path) -> dict[str, dict]:
    return {r["backend"]: r for r in summary(out)["runs"]}


# -- the syntax ---------------------------------------------------------------------------------

@pytest.mark.parametrize("arg, expected", [
    pytest.param("mine=cmd:python3 eng.py {gguf}", ("mine", "cmd:python3 eng.py {gguf}"), id="named-cmd"),
    pytest.param("my-eng.v2=py:pkg.mod:encode", ("my-eng.v2", "py:pkg.mod:encode"), id="named-py"),
    pytest.param("fast=hf", ("fast", "hf"), id="named-builtin"),
    pytest.param("cmd:eng --opt=1", ("cmd:eng --opt=1", "cmd:eng --opt=1"), id="unnamed-cmd-with-equals"),
    pytest.param("py:./a=b.py:encode", ("py:./a=b.py:encode", "py:./a=b.py:encode"), id="unnamed-py-with-equals"),
    pytest.param("llama.cpp", ("llama.cpp", "llama.cpp"), id="builtin"),
])
def test_split_label(arg, expected):
    assert split_label(arg) == expected


@pytest.mark.parametrize("arg, words", [
    pytest.param("ref=cmd:eng", "names a backend of tokparity's own", id="builtin-name"),
    pytest.param("goldens=cmd:eng", "names a backend of tokparity's own", id="regress-oracle-name"),
    pytest.param("cmd=hf", "names a backend of tokparity's own", id="cmd"),
    pytest.param("mine=", "nothing after '='", id="empty"),
    pytest.param("a=b=hf", "one name per backend", id="two-names"),
])
def test_bad_names_refused(arg, words):
    with pytest.raises(TokparityError, match=words):
        split_label(arg)


def test_one_name_for_two_backends_refused():
    with pytest.raises(TokparityError, match="two backends are named 'mine'"):
        labelled(["mine=hf", "mine=ref"])
    assert labelled(["mine=hf", "mine=hf", "ref", "ref"]) == {"mine": "mine=hf", "ref": "ref"}
    assert labelled_with_oracle(["mine=hf", "ref"], "mine") == {"mine": "mine=hf", "ref": "ref"}
    with pytest.raises(TokparityError, match="two backends are named 'mine'"):
        labelled_with_oracle(["mine=hf"], "mine=ref")


def test_journal_signs_named_commands_not_named_builtins():
    """A resume runs what a journal names: a named cmd: is still a command to be signed."""
    assert commands_in({"backends": ["fast=ref", "ref", "mine=cmd:eng"], "oracle": "mine"}) == ["mine=cmd:eng",
                                                                                                 "mine"]


# -- compare, end to end --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def named_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("named") / "out"
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"mine={GREEDY}", "-b", "fast=ref",
                     "--no-diagnose", "-q", "-o", str(out))
    return proc, out


def test_compare_labels_a_named_backend_everywhere(named_run):
    proc, out = named_run
    assert proc.returncode == 1, proc.stderr
    runs = runs_by_backend(out)
    assert set(runs) == {"mine", "fast", "llama.cpp"}
    assert runs["mine"]["mismatches"] == GREEDY_MISMATCHES and runs["fast"]["mismatches"] == 0
    backends = summary(out)["backends"]
    assert backends["mine"]["spec"] == GREEDY and backends["fast"]["spec"] == "ref"  # what each name stands for
    assert "spec" not in backends["llama.cpp"]
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        assert {row["backend"] for row in csv.DictReader(f)} == {"mine"}
    for name in ("report.html", "summary.md"):
        text = (out / name).read_text("utf-8")
        assert "greedy_engine" not in text and "mine" in text, name
    assert "  mine  " in proc.stdout and "greedy_engine" not in proc.stdout


def test_resume_keeps_the_names(named_run, tmp_path):
    _, done = named_run
    out = tmp_path / "resumed"
    out.mkdir()
    lines = (done / "cases.jsonl").read_text("utf-8").splitlines(keepends=True)
    (out / "cases.jsonl").write_text("".join(lines[:300]), "utf-8")  # interrupted after 299 cases
    proc = tokparity("compare", "--resume", str(out), "-q")
    assert proc.returncode == 1, proc.stderr
    runs = runs_by_backend(out)
    assert set(runs) == {"mine", "fast", "llama.cpp"}
    assert runs["mine"]["mismatches"] == GREEDY_MISMATCHES


def test_jobs_keep_the_names(tmp_path):
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"mine={GREEDY}", "-b", "fast=ref", "-j", "2",
                     "--no-diagnose", "-q", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    runs = runs_by_backend(out)
    assert set(runs) == {"mine", "fast", "llama.cpp"} and runs["mine"]["mismatches"] == GREEDY_MISMATCHES


def test_known_divergence_matches_the_name(tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('[[divergence]]\nid = "greedy-is-greedy"\nmodels = ["llama-spm"]\nbackends = ["mine"]\n'
                     'classes = ["whitespace-runs", "merge-order"]\nreason = "a greedy engine, on purpose"\nupstream = "tests/engines"\n', "utf-8")
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"mine={GREEDY}", "--known", str(known),
                     "--no-builtin-known", "--no-diagnose", "-q", "-o", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = runs_by_backend(out)["mine"]
    assert (run["mismatches"], run["unexplained"]) == (GREEDY_MISMATCHES, 0)
    assert summary(out)["known"]["used"] == {"greedy-is-greedy": GREEDY_MISMATCHES}


def test_oracle_by_name(tmp_path):
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"mine={GREEDY}", "-b", "ref", "--oracle", "mine",
                     "--no-diagnose", "-q", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert [(r["oracle"], r["backend"], r["mismatches"]) for r in summary(out)["runs"]] == \
        [("mine", "ref", GREEDY_MISMATCHES)]


def test_two_backends_under_one_name_exit_2(tmp_path):
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", f"mine={GREEDY}", "-b", "mine=ref", "-q",
                     "-o", str(out))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "two backends are named 'mine'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (out / "cases.jsonl").exists()  # refused before the run began


def test_unnamed_labels_unchanged(tmp_path):
    """Without a name the label is the whole -b argument, as before: old goldens and known files still match."""
    out = tmp_path / "out"
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", GREEDY, "--no-diagnose", "-q", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert GREEDY in runs_by_backend(out)


# -- encode, fuzz, regress ------------------------------------------------------------------------

def test_encode_shows_names_whole():
    """Unnamed, two py: engines of one file were cut to the same 40 characters; named, each is its name."""
    proc = tokparity("encode", "llama-spm", "Hello world", "-b", f"bytes=py:{FLAKY}:encode",
                     "-b", f"bytes.class=py:{FLAKY}:BytesEngine", "-b", "fast=ref", "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert [b["name"] for b in doc["backends"]] == ["bytes", "bytes.class", "fast"]
    assert doc["groups"] == {"A": ["bytes", "bytes.class"], "B": ["fast"]}
    text = tokparity("encode", "llama-spm", "Hello world", "-b", f"bytes=py:{FLAKY}:encode", "-b", "fast=ref").stdout
    assert "A = bytes · B = fast" in text and "flaky_py" not in text


def test_encode_two_backends_under_one_name_exit_2():
    proc = tokparity("encode", "llama-spm", "Hello", "-b", "x=ref", "-b", "x=llama.cpp")
    assert proc.returncode == 2 and "two backends are named 'x'" in proc.stderr and "Traceback" not in proc.stderr


def test_fuzz_names_the_backend(tmp_path):
    out = tmp_path / "out"
    proc = tokparity("fuzz", "llama-spm", "-b", f"mine={GREEDY}", "--seconds", "3", "--no-hypothesis", "-x",
                     "-g", "ascii-pairs", "-q", "-o", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert set(runs_by_backend(out)) == {"mine"}
    findings = [json.loads(line) for line in (out / "fuzz-findings.jsonl").read_text("utf-8").splitlines()]
    assert findings and {f["tags"]["backend"] for f in findings} == {"mine"}


def test_regress_names_the_backend(tmp_path):
    goldens = tmp_path / "goldens"
    assert tokparity("regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(goldens), "-q").returncode == 0
    out = tmp_path / "out"
    proc = tokparity("regress", "llama-spm", "--goldens", str(goldens), "-b", f"mine={GREEDY}", "-b", "fast=ref",
                     "-q", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    runs = runs_by_backend(out)
    assert set(runs) == {"mine", "fast"}
    assert runs["mine"]["mismatches"] == 2 * GREEDY_MISMATCHES and runs["fast"]["mismatches"] == 0


@pytest.mark.parametrize("declares", [True, False])
def test_an_engine_that_declares_no_parse_special_switch_is_not_judged_on_special_texts(zoo, tmp_path, declares):
    """Several JavaScript and wasm tokenizers parse special-token text whatever is asked. An engine
    that says so (``"unsupported": ["parse_special=false"]`` in its replies) is not judged on the
    texts that hold special-token text: they are counted and listed as not applicable, apart from
    mismatches, and it agrees on the rest. The same engine without the declaration still fails on
    them."""
    from tokparity.cli import main

    zoo("llama-bpe")
    engine = Path(__file__).parent / "engines" / "stream_engine.py"
    spec = f"mine=cmd:{sys.executable} {engine} {{gguf}} --always-parse-special" + (" --declare" if declares else "")
    corpus = tmp_path / "texts.jsonl"
    texts = ["Hello <|begin_of_text|> world", "a<|eot_id|>b", "plain text", "<|start_header_id|>user"]
    corpus.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    out = tmp_path / "r"
    code = main(["compare", "llama-bpe", "-c", str(corpus), "-c", "edge", "-b", spec, "-q", "-o", str(out)])
    runs = {r["backend"]: r for r in json.loads((out / "summary.json").read_text())["runs"]}
    mine = runs["mine"]
    if declares:
        assert code == 0
        assert mine["mismatches"] == 0 and mine["not_applicable"] >= 3
        assert {"texts/t0", "texts/t1", "texts/t3"} <= set(mine["not_applicable_cases"])
        assert "texts/t2" not in mine["not_applicable_cases"] and mine["cases"] > 800
        summary = (out / "summary.md").read_text("utf-8")
        assert "not applicable" in summary and "declares it cannot do (leave special-token text as text" in summary
    else:
        assert code == 1 and mine["not_applicable"] == 0 and mine["unexplained"] >= 3


def test_every_special_text_of_a_large_vocabulary_is_not_applicable(zoo, tmp_path):
    """Gemma 3 has 6,252 special texts, ``<image_soft_token>`` (id 262,144) the last. An engine that
    declares it parses special-token text whatever is asked is not judged on any of them: the check
    once looked at the first 4,096 only, and a helper's run of snaptokens 0.2.6 (which parses them
    all, as it declared) was named ``user-defined.atomic:+262144`` on ``<image_soft_token>``."""
    from tokparity.cli import main

    zoo("gemma-3")
    engine = Path(__file__).parent / "engines" / "stream_engine.py"
    spec = f"mine=cmd:{sys.executable} {engine} {{gguf}} --always-parse-special --declare"
    corpus = tmp_path / "texts.jsonl"
    texts = ["<image_soft_token>", "a <start_of_image> b", "plain text", "x<unused6000>y"]
    corpus.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    out = tmp_path / "r"
    code = main(["compare", "gemma-3", "-c", str(corpus), "-b", spec, "-q", "-o", str(out)])
    mine = {r["backend"]: r for r in json.loads((out / "summary.json").read_text())["runs"]}["mine"]
    assert code == 0 and mine["mismatches"] == 0
    assert sorted(mine["not_applicable_cases"]) == ["texts/t0", "texts/t1", "texts/t3"]
