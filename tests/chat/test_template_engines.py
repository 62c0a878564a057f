"""Third-party Jinja engines judged by ``compare --ops chat`` against tokparity's reference (the
template rendered as transformers' ``apply_chat_template`` renders it, in jinja2's sandbox).

Each engine is wrapped as a ``cmd:`` engine of tests/engines/thirdparty/ (``chat_*.py``/``.mjs``:
the wrapper's docstring says how the engine is set up, as close to transformers' environment as
the engine lets it be) and run on the five zoo models whose tokenizer_config.json carries a chat
template, with the 35 conversations of ``chats``. The two ``continue_final_message``
conversations are skipped by every wrapper (not implemented: an error reply without status), so
33 are judged per model. Each test asserts the exact outcome: which (model, conversation) pairs
differ, with which class, what the engine answered there, and that every other conversation
agrees (a conversation both sides refuse is an agreement).

Every difference's root cause was read in the engine's source (the files and functions are
named in each test's docstring) and confirmed by rendering the construct alone. The pinned npm
packages come from tests/engines/thirdparty/package.json (installed once by its install.py; without
node or npm the JavaScript tests skip with a warning naming the command); minijinja comes from
PyPI (``pip install minijinja``; the test skips with a warning without it).

The runs name causes as a user's do. One is named: an engine that refuses a content of parts
where the reference makes a prompt is ``chat.parts-refused`` (its ``trim`` takes no list). Every
other difference is the engine's own (a missing filter, another ``+``): no way of making the
reference's prompt reproduces it. An engine that refuses every conversation gets no cause for a
refusal (llama.cpp's built-ins, which take no conversation with parts or tools, are not tried on
those: not a refusal to match).

The three JavaScript engines share one run: the reference's prompts and ids (most of the time:
transformers loading gemma-3 and gemini) are made once for the three.
"""

from __future__ import annotations

import csv
import importlib.metadata
import json
import shutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from tokparity.cli import main

sys.path.insert(0, str(Path(__file__).parents[1] / "diagnose"))
from thirdparty import ENGINES, node_engines  # noqa: E402, F401  (tests/diagnose/thirdparty.py; node_engines: a fixture)

sys.path.pop(0)

MODELS = ("qwen3", "gemma-3", "deepseek-v3", "gemini", "llama-bpe")
JUDGED, SKIPPED = 33, 2  # of the 35 conversations of chats: continue-01 and continue-02 are not answered
MINIJINJA_VERIFIED = ("3.0.", "3.1.")  # 3.0.5 and 3.1.0 give the same 175 replies on these models


@dataclass
class ChatRun:
    exit_code: int
    runs: dict[str, dict]  # model -> the engine's summary run
    rows: dict[tuple[str, str], dict]  # (model, case id) -> its mismatches.csv row

    @property
    def classes(self) -> dict[tuple[str, str], str]:
        return {key: row["class"] for key, row in self.rows.items()}

    def backend_said(self, model: str, case: str) -> str:
        return json.loads(self.rows[model, case]["backend_output"])[0]


def compare_chat(tmp_path: Path, engines: dict[str, str]) -> dict[str, ChatRun]:
    """``tokparity compare MODELS --ops chat -c chats -b NAME=cmd:COMMAND …``, read back for each
    NAME. One run judges several engines: the reference's prompts are made once for all. A
    content of parts refused is ``chat.parts-refused``; no other cause is named: each other
    difference is a feature of the engine's own (a filter, an operator), which no way of making the
    reference's prompt reproduces."""
    out = tmp_path / "out"
    code = main(["compare", *MODELS, "--ops", "chat", "-c", "chats",
                 *(arg for name, command in engines.items() for arg in ("-b", f"{name}=cmd:{command}")),
                 "-o", str(out), "-q"])
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        every_row = list(csv.DictReader(f))
    found = {}
    for name in engines:
        runs = {r["model"]: r for r in summary["runs"] if r["backend"] == name}
        rows = {(r["model"], r["case_id"]): r for r in every_row if r["backend"] == name}
        assert sorted(runs) == sorted(MODELS), summary["runs"]
        for model, run in runs.items():
            assert (run["op"], run["cases"], run["skipped"]) == ("chat", JUDGED, SKIPPED), (model, run)
            assert run["mismatches"] == sum(m == model for m, _ in rows), (model, run)
        assert all(row["cause"] == "" or (row["cause"] == "chat.parts-refused" and case.startswith("content-parts")
                                          and row["class"] == "chat-raises") for (_, case), row in rows.items()), \
            {key: row["cause"] for key, row in rows.items()}
        found[name] = ChatRun(code, runs, rows)
    return found


@pytest.fixture(scope="module")
def node_runs(node_engines, tmp_path_factory) -> dict[str, ChatRun]:
    """The three JavaScript engines in one run: each test below reads its own engine's rows."""
    return compare_chat(tmp_path_factory.mktemp("node"), {
        "hf-jinja": node("chat_hf_jinja.mjs", "{tokenizer_config}"),
        "transformers.js": node("chat_transformers_js.mjs", "{tokenizer_json}"),
        "nunjucks": node("chat_nunjucks.mjs", "{tokenizer_config}")})


def node(script: str, *args: str) -> str:
    return f"{shutil.which('node') or 'node'} {ENGINES / script} {' '.join(args)}"


# The conversations whose contents are lists of parts ({"type": "text", "text": ...}): a template
# that expects a string meets a list there, where the engines part from jinja2's Python semantics.
PARTS_1, PARTS_2 = "content-parts-01", "content-parts-02"


@pytest.mark.slow
def test_minijinja_agrees_everywhere(tmp_path):
    """MiniJinja (PyPI ``minijinja`` 3.1.0, the Python binding of the Rust crate 3.1.0; 3.0.5 gives
    the same replies) with trim_blocks/lstrip_blocks, lenient undefined, pycompat and transformers'
    ``tojson``/``raise_exception``/``strftime_now`` as Python callables: the same prompt as the
    reference on every judged conversation of the five models, and the same refusals (gemma-3 and
    gemini: raise_exception on a system message or broken alternation; qwen3 and deepseek-v3 on
    content parts).

    Why content parts agree where the JavaScript engines differ: the binding does not convert a
    Python dict or list into a MiniJinja value but wraps it (minijinja-py/src/typeconv.rs,
    ``to_minijinja_value`` -> ``DynamicObject``), and a wrapped object renders as Python's
    ``str()`` (``impl Object for DynamicObject``, ``render``: ``write!(f, "{}", self.inner)``),
    so ``content | trim`` on a list gives jinja2's ``[{'type': 'text', 'text': ...}]`` exactly
    (minijinja/src/filters.rs ``trim`` takes a ``StringInput``, made by value/argtypes.rs
    ``value_to_string_cow`` with ``value.to_string()``, that render). ``'<｜User｜>' + content``
    with a list refuses (value/ops.rs: ``tried to use + operator on unsupported types``) as
    Python's ``str + list`` does, and ``content.startswith`` on a list looks the method up with
    Python's getattr (``DynamicObject::call_method``): its AttributeError comes out of
    ``render_str`` as itself (error_support.rs ``to_py_error``), which the wrapper reports as the
    refusal it is (jinja2: UndefinedError)."""
    pytest.importorskip("minijinja", reason="pip install minijinja (tests/engines/thirdparty/chat_minijinja.py)")
    version = importlib.metadata.version("minijinja")
    if not version.startswith(MINIJINJA_VERIFIED):
        message = f"minijinja {version} NOT TESTED: its outcome was verified on 3.0.5 and 3.1.0 only"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    run = compare_chat(tmp_path, {"minijinja": f"{sys.executable} {ENGINES / 'chat_minijinja.py'} {{tokenizer_config}}"})["minijinja"]
    assert run.classes == {}
    assert run.exit_code == 0


HF_JINJA_DIFFERENCES = {
    ("deepseek-v3", PARTS_1): "chat-raises",
    ("deepseek-v3", PARTS_2): "chat-raises",
    ("gemini", PARTS_1): "chat-raises",
    ("llama-bpe", PARTS_1): "chat-raises",
    ("llama-bpe", PARTS_2): "chat-raises",
}


def assert_hf_jinja_differences(run: ChatRun) -> None:
    assert run.classes == HF_JINJA_DIFFERENCES
    # string + list: the list's items as JSON joined by "," (no brackets), where jinja2 raises
    assert "the reference's template refused" in run.rows["deepseek-v3", PARTS_1]["evidence"]
    assert run.backend_said("deepseek-v3", PARTS_1) == \
        '<｜begin▁of▁sentence｜><｜User｜>{"type": "text", "text": "Hello from a part."}<｜Assistant｜>'
    assert '<｜User｜>{"type": "text", "text": "Two"},{"type": "text", "text": "parts."}<｜Assistant｜>' in \
        run.backend_said("deepseek-v3", PARTS_2)
    # list | trim: refused, where jinja2 trims the list's str()
    for model, case in (("gemini", PARTS_1), ("llama-bpe", PARTS_1), ("llama-bpe", PARTS_2)):
        assert "Unknown ArrayValue filter: trim" in run.backend_said(model, case)
        assert "[{'type': 'text', 'text': " in json.loads(run.rows[model, case]["oracle_output"])[0]


@pytest.mark.slow
def test_huggingface_jinja(node_runs):
    """@huggingface/jinja 0.5.11 (``new Template(source).render(variables)``; nothing to configure:
    the Template constructor always lexes with lstrip_blocks and trim_blocks, every Environment has
    ``namespace``, render() sets raise_exception and strftime_now, and ``tojson`` is built into the
    interpreter, with no API to add or replace a filter). Every conversation with string
    contents agrees on the five models, tools and tojson included; the five differences are all a
    list of content parts where the template expects a string:

    * deepseek-v3 content-parts-01/02 (chat-raises, the reference refuses): ``'<｜User｜>' +
      message['content']`` with a list. jinja2: TypeError (str + list). @huggingface/jinja,
      dist/index.js ``Interpreter.evaluateBinaryExpression``: when either side is a StringValue,
      ``+`` is ``left.value.toString() + right.value.toString()``; ``right.value`` is the JavaScript
      array of ObjectValues, whose ``Array.prototype.toString`` joins the items' ``toString()``
      (``ObjectValue.toString`` -> ``toJSON(this, {}, 0, false)``) with ",": the prompt holds
      ``{"type": "text", "text": "Two"},{"type": "text", "text": "parts."}``, no brackets.
    * gemini content-parts-01 and llama-bpe content-parts-01/02 (chat-raises, the engine refuses):
      ``message['content'] | trim`` with a list. jinja2's ``do_trim`` is
      ``soft_str(value).strip()``: the list's Python repr, trimmed. dist/index.js
      ``Interpreter.applyFilter``: an ArrayValue operand has only list, first, last, length,
      reverse, sort, join, string and unique; ``trim`` falls to ``default: throw new
      Error("Unknown ArrayValue filter: trim")``. (gemini content-parts-02 has a system message:
      both refuse it, "System role not supported".)"""
    run = node_runs["hf-jinja"]
    assert_hf_jinja_differences(run)


@pytest.mark.slow
def test_transformers_js_apply_chat_template(node_runs):
    """transformers.js 4.3.1 ``tokenizer.apply_chat_template`` (text with tokenize false, ids with
    tokenize true): its template engine is @huggingface/jinja 0.5.10, bundled into
    dist/transformers.node.mjs (``evaluateBinaryExpression`` and ``applyFilter`` there are the
    code above, line for line), so it differs on exactly the same five conversations for the same
    reasons. Its tokenizer gives the reference's ids on every prompt where the texts agree
    (special-token text parsed, no special tokens added: ``_call(rendered, {add_special_tokens:
    false})``), so no chat-ids or chat-bos appears. It passes the messages as given, where
    transformers drops a key whose value is None and aliases reasoning to ``thinking`` and
    ``reasoning_content``: no conversation of ``chats`` shows that difference."""
    run = node_runs["transformers.js"]
    assert_hf_jinja_differences(run)
    for model, case in HF_JINJA_DIFFERENCES:
        if "Unknown ArrayValue filter" not in run.backend_said(model, case):  # a prompt: its ids came too
            assert json.loads(run.rows[model, case]["backend_ids"])


SET_ATTRIBUTE_MODELS = ("qwen3", "deepseek-v3")  # templates with {% set ns.attr = ... %}
EVERY_JUDGED = ("single-01", "system-01", "single-02", "system-02", "multi-turn-01", "multi-turn-02",
                "long-history-01", "alternation-broken-01", "alternation-broken-02", "whitespace-01", "whitespace-02",
                "whitespace-03", "empty-content-01", "empty-content-02", PARTS_1, PARTS_2, "content-string-twin-01",
                "non-ascii-01", "non-ascii-02", "emoji-01", "injection-01", "injection-02", "injection-03", "markup-01",
                "tools-01", "tools-02", "tool-call-object-01", "tool-call-string-01", "tool-result-01", "reasoning-01",
                "thinking-01", "thinking-02", "date-01")
NUNJUCKS_DIFFERENCES = {
    **{(model, case): "chat-raises" for model in SET_ATTRIBUTE_MODELS for case in EVERY_JUDGED
       if case not in (PARTS_1, PARTS_2)},  # (those two the reference refuses too)
    ("gemini", PARTS_1): "chat-raises",
    ("llama-bpe", PARTS_1): "chat-raises",
    ("llama-bpe", PARTS_2): "chat-raises",
}


@pytest.mark.slow
def test_nunjucks(node_runs):
    """Nunjucks 3.2.4 with ``installJinjaCompat()``, autoescape off, trimBlocks/lstripBlocks on and
    transformers' tojson (Python's json.dumps, written in the wrapper), raise_exception,
    strftime_now, namespace and dict. gemma-3 agrees on every conversation (slices, ``is
    string``, ``is iterable``, ``loop.first``, raise_exception: all there); 65 differences, every
    one the engine refusing a conversation the reference renders:

    * qwen3 and deepseek-v3, all 31 conversations the reference renders: their templates assign
      a namespace attribute (``{% set ns.multi_step_tool = false %}``, ``{% set ns.is_first = true
      %}``). The parser takes any primary as a set target (src/parser.js ``parseSet``:
      ``parsePrimary``, so ``ns.attr`` is a LookupVal), but src/compiler.js ``compileSet`` reads
      the target's name as ``target.value`` (undefined for a LookupVal) and calls
      ``name.charAt(0)``: the template does not compile, "TypeError: Cannot read properties of
      undefined (reading 'charAt')". (That failure hides what the qwen3 template would meet next:
      Python's ``str.startswith``/``strip``/``lstrip`` are not there, ``x.split(s)[-1]`` is
      undefined, and there is no ``false`` test, for ``enable_thinking is false``.) The two
      content-parts conversations agree: jinja2 refuses them too.
    * gemini content-parts-01, llama-bpe content-parts-01/02: ``message['content'] | trim`` with a
      list. src/filters.js ``trim(str)`` is ``str.replace(/^\\s*|\\s*$/g, '')`` with no
      conversion to a string: "TypeError: str.replace is not a function", where jinja2 trims the
      list's str()."""
    run = node_runs["nunjucks"]
    assert run.classes == NUNJUCKS_DIFFERENCES
    for model in SET_ATTRIBUTE_MODELS:
        assert run.runs[model]["mismatches"] == JUDGED - 2
    for (model, case) in NUNJUCKS_DIFFERENCES:
        said = run.backend_said(model, case)
        if model in SET_ATTRIBUTE_MODELS:
            assert "Cannot read properties of undefined (reading 'charAt')" in said, (model, case, said)
        else:
            assert "str.replace is not a function" in said, (model, case, said)
        assert "the backend's template refused" in run.rows[model, case]["evidence"]
    assert run.runs["gemma-3"]["mismatches"] == 0
