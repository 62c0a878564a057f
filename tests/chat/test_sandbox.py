"""Chat templates are code from files: rendered in jinja2's immutable sandbox, in a child process
with an address-space limit, each render under a time limit. A hostile template costs one model a
few seconds and one error per conversation, never a hang, never code run, never the harness."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import ours

from tokparity.chat.sandbox import GIVE_UP_AFTER, TemplateSandbox
from tokparity.errors import BackendTimeout, CaseFailure, TemplateRaised

USER = [{"role": "user", "content": "Hi"}]


@pytest.fixture()
def sandbox():
    s = TemplateSandbox(timeout=2.0)
    yield s
    s.close()


def test_renders_as_transformers_does(sandbox):
    template = ("{{ bos_token }}{% for m in messages %}\n    {% if m.role == 'user' %}<|u|>{{ m.content }}{% endif %}\n"
                "{% endfor %}{{ tools | tojson }}{% if add_generation_prompt %}<|a|>{% endif %}")
    text = sandbox.render(template, USER, [{"name": "météo", "b": "<&>"}], {"add_generation_prompt": True},
                          {"bos_token": "<s>"})
    # trim_blocks and lstrip_blocks take the block lines' whitespace; tojson keeps non-ASCII and <&>, keys in order
    assert text == '<s><|u|>Hi[{"name": "météo", "b": "<&>"}]<|a|>'
    assert sandbox.render(template, USER, [{"name": "météo", "b": "<&>"}], {}, {"bos_token": "<s>"},
                          {"tojson": "jinja2", "trim_blocks": False}) == \
        '<s>\n<|u|>Hi\n[{"b": "\\u003c\\u0026\\u003e", "name": "m\\u00e9t\\u00e9o"}]'


def test_a_template_that_refuses_raises(sandbox):
    with pytest.raises(TemplateRaised, match="roles must alternate"):
        sandbox.render("{{ raise_exception('roles must alternate') }}", USER, None, {}, {})
    with pytest.raises(TemplateRaised, match="does not compile"):
        sandbox.render("{% for %}", USER, None, {}, {})


@pytest.mark.parametrize("escape", [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "{{ namespace.__init__.__globals__['__builtins__']['exec']('open(\"{marker}\", \"w\")') }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.popen('touch {marker}').read() }}",
    "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
])
def test_no_template_runs_code(sandbox, tmp_path, escape):
    marker = tmp_path / "ran"
    try:
        sandbox.render(escape.replace("{marker}", str(marker)), USER, None, {}, {})
    except TemplateRaised:
        pass
    assert not marker.exists()


def test_a_template_that_loops_is_stopped_and_given_up(sandbox):
    loop = "{% for a in range(100000) %}{% for b in range(100000) %}{% if a == b %}{% endif %}{% endfor %}{% endfor %}"
    started = time.monotonic()
    for _ in range(GIVE_UP_AFTER):
        with pytest.raises(BackendTimeout, match="more than 2 s"):
            sandbox.render(loop, USER, None, {}, {})
    with pytest.raises(CaseFailure, match="failed 2 times in a row"):  # at once: not rendered again
        sandbox.render(loop, USER, None, {}, {})
    assert time.monotonic() - started < 2.0 * GIVE_UP_AFTER + 8
    assert sandbox.render("ok", USER, None, {}, {}) == "ok"  # the next template renders in a new child


def test_a_template_that_grows_without_end_is_refused(sandbox):
    with pytest.raises(TemplateRaised, match="more than 4,000,000 characters"):
        sandbox.render("{% for a in range(100000) %}{{ 'x' * 100 }}{% endfor %}", USER, None, {}, {})


def test_a_template_that_runs_out_of_memory_fails_and_is_given_up(sandbox):
    """No refusal of the conversation (an answer both sides could agree on): a failure, given up on
    after ``GIVE_UP_AFTER`` as a template that loops is. A seventh campaign's template took 403 s
    of ``tokparity check`` where each render was tried."""
    bomb = "{{ 'x' * 3000000000 }}"
    for _ in range(GIVE_UP_AFTER):
        with pytest.raises(CaseFailure, match="GiB of memory"):
            sandbox.render(bomb, USER, None, {}, {})
    started = time.monotonic()
    with pytest.raises(CaseFailure, match="failed 2 times in a row"):
        sandbox.render(bomb, USER, None, {}, {})
    assert time.monotonic() - started < 1.0


def test_a_hostile_template_in_a_run_is_one_line_per_conversation(zoo, tmp_path):
    """A model folder whose tokenizer_config.json holds a template that loops: the run ends within
    seconds, every conversation of the model a ``timeout`` or a crash naming the template, and no
    process is left behind."""
    qwen3 = zoo("qwen3")
    folder = tmp_path / "hostile"
    folder.mkdir()
    shutil.copy(qwen3.path("tokenizer_json"), folder / "tokenizer.json")
    config = json.loads(Path(qwen3.path("tokenizer_config")).read_text("utf-8"))
    config["chat_template"] = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    (folder / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tokparity", "compare", str(folder), "--ops", "chat", "-b", "hf",
                           "-q", "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert time.monotonic() - started < 120
    assert done.returncode == 1, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text("utf-8"))
    runs = {r["backend"]: r for r in summary["runs"]}
    assert set(runs) == {"hf", "template:specials"}  # (the template's own check meets the same failures)
    assert all(r["cases"] == 35 and set(r["classes"]) <= {"timeout", "crash"} for r in runs.values())
    rows = (tmp_path / "out" / "mismatches.csv").read_text("utf-8")
    assert "took more than 10 s to render" in rows and "failed 2 times in a row" in rows
    assert ours("tokparity.chat.sandbox") == [], "a sandbox child outlived its run"
