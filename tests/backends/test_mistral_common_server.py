"""mistral-common's own server (``mistral_common serve``), the real one, started here on the zoo's
tekken file and asked over HTTP as a user's would be.

What it does, read in its source (mistral-common 1.13.1, experimental/app/routers.py):
- ``/v1/tokenize/`` runs the library's ``encode_chat_completion``: on every conversation the library
  answers, the server gives its very ids. So the library's reviewed differences from Mistral
  NeMo's template are the server's too (the library is its witness);
- the library's validation raises inside the endpoint, which catches nothing: a conversation the
  library refuses is an HTTP 500 with no words ("Internal Server Error"), where a request's own
  errors are a 400. Those rows are the server's failure, and stay unexplained;
- ``/v1/detokenize/string`` decodes as the library does: it agrees with tiktoken on the zoo's texts."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest
from servers import serving

from tokparity.backends.server_http import free_port
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services

pytest.importorskip("mistral_common.experimental.app.main", reason="mistral-common's server: pip install "
                    "'mistral-common[server]'")

REFUSED_BY_THE_LIBRARY = {"multi-turn-02", "empty-content-02", "reasoning-01"}


@pytest.fixture(scope="module")
def port(zoo, tmp_path_factory):
    """The server, on the zoo's tekken file, on a free loopback port."""
    number = free_port()
    command = [sys.executable, "-m", "mistral_common.experimental.app.main", "serve",
               str(zoo("tekken").path("tiktoken")), "--host", "127.0.0.1", "--port", str(number)]
    with serving(command, number, "/openapi.json", tmp_path_factory.mktemp("mistral-common") / "server.log"):
        yield number


def test_the_server_gives_the_librarys_prompts_and_fails_where_the_library_refuses(port):
    # (no diagnosis: what is checked here is the judge's and the known list's; the search for the
    # library's rows' causes is tests/chat/test_mistral_common.py's, and takes two minutes)
    backends = ["mistral-common", f"srv=http:mistral-common@{port}"]
    results = run_compare(["tekken"], ["chats"], backends, CompareOptions(ops=("chat",), diagnose=False,
                                                                          services=Services(known=load_known([]))))
    runs = {r.backend: r for r in results.runs}
    rows = {name: {m.case_id: m for m in results.mismatches if m.backend == name} for name in ("mistral-common", "srv")}
    assert (runs["srv"].cases, runs["srv"].mismatches) == (35, 9)
    assert set(rows["srv"]) == set(rows["mistral-common"])  # (the same conversations differ)
    failed = {case for case, m in rows["srv"].items() if m.cls == "crash"}
    assert failed == REFUSED_BY_THE_LIBRARY, failed
    assert all("HTTP 500" in rows["srv"][case].evidence and not rows["srv"][case].known for case in failed)
    assert all(rows["mistral-common"][case].cls == "chat-raises" for case in failed)
    # the other six: the library's very answer (its witness), so its reviewed divergence
    witnessed = {case: m for case, m in rows["srv"].items() if case not in failed}
    assert all(m.tags.get("witness") == "mistral-common" for m in witnessed.values()), witnessed
    assert all(m.cause_evidence.startswith("mistral-common gives this prompt too") for m in witnessed.values())
    assert all(m.backend_ids == rows["mistral-common"][case].backend_ids for case, m in witnessed.items())
    assert Counter(m.known for m in witnessed.values()) == Counter(
        m.known for case, m in rows["mistral-common"].items() if case not in failed)
    assert all(m.known for m in witnessed.values()) and runs["srv"].unexplained == 3


def test_its_decode_agrees_and_encode_is_not_covered(port):
    """No endpoint takes a text: every encode case is counted as not covered, none judged."""
    results = run_compare(["tekken"], ["edge", "multilingual"], [f"srv=http:mistral-common@{port}"],
                          CompareOptions(ops=("encode", "decode")))
    found = {r.op: r for r in results.runs if r.backend == "srv"}
    assert found["decode"].cases > 1000 and found["decode"].mismatches == 0
    assert (found["encode"].cases, found["encode"].mismatches) == (0, 0) and found["encode"].skipped > 1000


def test_a_port_where_no_server_answers_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", "tekken", "--ops", "chat",
                           "-b", f"x=http:mistral-common@{free_port()}", "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no mistral-common server answers there" in done.stderr
