"""The Gemma 3 case of docs/gemma3.md, end to end through the CLI.

Gemma 3's tokenizer.json is the original; tokparity derives a GGUF from it (llama.cpp) and a
.model from that GGUF (SentencePiece), and compares them with Hugging Face tokenizers (the
oracle) and its own reference. Then a greedy longest-match engine, the write-up's bug, comes in
through ``cmd:`` and the report names what is wrong with it.

Both runs use the edge corpus (884 cases: whitespace runs, special-token lookalikes, …) or the
multilingual one (353), not all 7,831 cases, to keep the suite quick; docs/gemma3.md has the
numbers over all corpora.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GREEDY = Path(__file__).resolve().parents[2] / "examples" / "engines" / "greedy_engine.py"


def _compare(out: Path, *args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict, list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", "gemma-3", "-q", "--no-builtin-known",
                           "-o", str(out), *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})})
    summary = json.loads((out / "summary.json").read_text("utf-8")) if (out / "summary.json").is_file() else {}
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return proc, summary, rows


def test_gemma3_four_implementations_from_a_cache_without_derived_files(zoo, tmp_path):
    """`tokparity compare gemma-3 -b ref -b llama.cpp -b hf -b sentencepiece`, with the GGUF and
    the .model built by the run itself (the cache holds only the fetched tokenizer.json)."""
    zoo("gemma-3")
    from tokparity.zoo import cache_dir
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "zoo").symlink_to(cache_dir() / "zoo", target_is_directory=True)
    proc, summary, rows = _compare(tmp_path / "out", "-c", "edge", "-b", "ref", "-b", "llama.cpp", "-b", "hf",
                                   "-b", "sentencepiece", env={"TOKPARITY_CACHE": str(cache)})
    assert proc.returncode == 1, proc.stderr[-2000:]  # llama.cpp and SentencePiece differ from HF: below
    assert "built gemma-3 gguf from tokenizer_json" in proc.stderr
    assert "built gemma-3 spm_model from gguf" in proc.stderr
    assert list((cache / "derived" / "gemma-3").glob("gguf-*/gemma-3.gguf"))
    runs = {r["backend"]: r for r in summary["runs"]}
    assert set(runs) == {"ref", "llama.cpp", "sentencepiece"}
    assert {r["oracle"] for r in runs.values()} == {"hf"}  # the original library judges, not a derived file
    assert {r["cases"] for r in runs.values()} == {884}
    assert runs["ref"]["mismatches"] == 0

    def texts(backend):
        return sorted(r["text"] for r in rows if r["backend"] == backend)

    # SentencePiece on the derived .model: only HF matching the special '<mask>' in plain text
    # (HF always matches added tokens; SentencePiece never matches control pieces in text).
    assert texts("sentencepiece") == ["<mask>", "The capital is <mask>."]
    assert runs["sentencepiece"]["classes"] == {"special-parsing": 2}
    # llama.cpp on the derived GGUF: the same '<mask>' cases; '</s>' (user-defined in the file,
    # which llama.cpp makes an end-of-generation control token and does not match in text); and
    # a literal ▁ in the text, which HF's added whitespace tokens match after its normalizer.
    lcpp = texts("llama.cpp")
    assert len(lcpp) == 12
    assert [t for t in lcpp if "<mask>" in t] == ["<mask>", "The capital is <mask>."]
    assert sum("</s>" in t for t in lcpp) == 7
    assert sorted(t for t in lcpp if "\u2581" in t and "</s>" not in t) == [" \u2581 ", "\u2581\u2581",
                                                                         "\u2581\u2581\u2581\u2581"]


@pytest.fixture(scope="module")
def greedy_run(zoo, tmp_path_factory):
    zoo("gemma-3")
    out = tmp_path_factory.mktemp("greedy")
    return _compare(out, "-c", "multilingual", "-b", f"cmd:{sys.executable} {GREEDY} {{gguf}}",
                    "-b", f"cmd:{sys.executable} {GREEDY} {{gguf}} --file-space-prefix")


def test_greedy_engine_is_diagnosed(greedy_run):
    proc, summary, rows = greedy_run
    assert proc.returncode == 1, proc.stderr[-2000:]
    as_written, prefix_fixed = sorted(summary["runs"], key=lambda r: "--file-space-prefix" in r["backend"])
    assert as_written["cases"] == prefix_fixed["cases"] == 353
    # As in the write-up, the engine prepends ▁ though the file says add_space_prefix=false: every
    # text starting with a piece that has a ▁ form is off from its first id.
    classes = as_written["classes"]
    assert max(classes, key=classes.get) == "space-prefix" and classes["space-prefix"] > 300
    first = next(r for r in rows if r["backend"] == as_written["backend"] and r["case_id"] == "en-0001")
    assert first["class"] == "space-prefix" and "add_space_prefix is false" in first["evidence"]
    assert json.loads(first["oracle_ids"])[:2] == [818, 236743] and json.loads(first["backend_ids"])[0] == 669
    # With the prefix fixed, what remains is the greedy longest match itself.
    classes = prefix_fixed["classes"]
    assert max(classes, key=classes.get) == "merge-order" and classes["merge-order"] > prefix_fixed["mismatches"] // 2
    de = next(r for r in rows if r["backend"] == prefix_fixed["backend"] and r["case_id"] == "de-0001")
    assert de["class"] == "merge-order"
    assert "'pätung'" in de["evidence"] and "'pä', 223605 'tung'" in de["evidence"]
