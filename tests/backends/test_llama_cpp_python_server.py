"""llama-cpp-python's own server (``python -m llama_cpp.server``), the real one, started here on a
tiny model with the zoo's tokenizer and asked over HTTP as a user's would be.

What it does differently was read in its source (llama-cpp-python 0.3.36):
- ``/extras/tokenize`` always adds the BOS and parses special-token text (server/app.py): the
  backend declares both, and a run that asks otherwise finds its cases not applicable;
- ``/extras/detokenize`` joins each id's piece (``_internals.py`` ``LlamaModel.detokenize``), so it
  never cleans up the spaces before punctuation that ``llama_detokenize`` cleans up for Llama 3;
- that loop reads each piece into a 32-byte buffer and keeps ``buffer[:n]`` where llama.cpp answers
  with ``-n`` for a longer piece: a token longer than 32 bytes is dropped
  (``decode.long-token-dropped``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from servers import serving

from tokparity.backends.server_http import free_port
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions
from tokparity.zoo import resolve_model

pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server: pip install 'llama-cpp-python[server]'")


def server_command(number: int) -> list[str]:
    """The server on a tiny model with llama-bpe's tokenizer, on loopback port ``number``."""
    from tokparity.backends.llama_server import gguf_of, tiny_model_for
    model = resolve_model("llama-bpe")
    tiny = tiny_model_for(model, gguf_of(model, print))
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(tiny), "--host", "127.0.0.1",
            "--port", str(number), "--n_ctx", "512", "--verbose", "False"]


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """The server on a free loopback port."""
    number = free_port()
    with serving(server_command(number), number, "/v1/models",
                 tmp_path_factory.mktemp("llama-cpp-python") / "server.log"):
        yield number


def test_encode_agrees_and_detokenize_is_named_by_its_two_bugs(port):
    backend = f"lcp=http:llama-cpp-python@{port}"
    plain = run_compare(["llama-bpe"], ["edge"], [backend], CompareOptions(ops=("encode", "decode")))
    found = {(r.backend, r.op): r for r in plain.runs}
    encode, decode = found[("lcp", "encode")], found[("lcp", "decode")]
    assert encode.cases == 0 and encode.not_applicable > 800  # (declared: it always adds the BOS)
    assert decode.causes == {"decode.cleanup": 9, "decode.long-token-dropped": 4}
    assert decode.cases > 800 and decode.root_cause.keeps == decode.root_cause.agreements
    asked = run_compare(["llama-bpe"], ["edge", "multilingual"], [backend],
                        CompareOptions(ops=("encode",), add_special=True, parse_special=True))
    run = {(r.backend, r.op): r for r in asked.runs}[("lcp", "encode")]
    assert run.cases > 1000 and run.mismatches == 0 and run.not_applicable == 0


def test_a_port_where_no_server_answers_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge",
                           "-b", f"x=http:llama-cpp-python@{free_port()}", "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no llama-cpp-python server answers there" in done.stderr


def test_a_server_that_stops_mid_run_is_one_line_and_the_run_resumes(tmp_path):
    """Killed halfway, the server refuses every later case: the run stops in one line (not a crash
    per case), the journal keeps the cases judged, and once the server is back the run resumes."""
    number, out = free_port(), tmp_path / "out"
    journal = out / "cases.jsonl"
    with serving(server_command(number), number, "/v1/models", tmp_path / "first.log") as server:
        run = subprocess.Popen([sys.executable, "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "-c",
                                "multilingual", "--ops", "encode,decode", "--add-special", "--parse-special", "-b",
                                f"x=http:llama-cpp-python@{number}", "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            while run.poll() is None and not (journal.exists() and journal.read_text("utf-8").count("\n") > 300):
                time.sleep(0.05)
            server.kill()
            _, err = run.communicate(timeout=300)
        finally:
            run.kill()
    assert run.returncode == 2, err
    assert err.count("\n") == 1 and "the server stopped" in err and f"tokparity compare --resume {out}" in err, err
    kept = journal.read_text("utf-8").count("\n")
    assert kept > 300 and '"crash"' not in journal.read_text("utf-8")
    with serving(server_command(number), number, "/v1/models", tmp_path / "again.log"):
        resumed = subprocess.run([sys.executable, "-m", "tokparity", "compare", "--resume", str(out)],
                                 capture_output=True, text=True, timeout=600)
    assert resumed.returncode in (0, 1), resumed.stderr
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["complete"] and journal.read_text("utf-8").count("\n") > kept
    assert '"crash"' not in journal.read_text("utf-8")
