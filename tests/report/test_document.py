"""The report as one document (tokparity.report.build): every renderer lays out every kind of
node, a section added to the builder's table shows in every report, and what is read of a run
beyond its plain fields is read by the builder's accessors only."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from tokparity.records import Mismatch, RootCause
from tokparity.report import build, html, markdown, plain
from tokparity.report import nodes as n
from tokparity.run.results import Results, RunSummary

REPORT = Path(build.__file__).parent


def mismatch(case_id: str, text: str, cause: str = "", known: str = "") -> Mismatch:
    return Mismatch.of(model="m", corpus="edge", case_id=case_id, tags={"kind": "x"}, oracle="golden/llama.cpp",
                    backend="mine", cls="merge-order", evidence=f"evidence of {case_id}", stage="model",
                    first_diff=1, text=text, oracle_ids=[1, 2, 3], backend_ids=[1, 5, 3],
                    oracle_pieces=["▁a", "b", "c"], backend_pieces=["▁a", "d", "c"], known=known, cause=cause,
                    cause_evidence="the reference reproduces it")


@pytest.fixture
def results() -> Results:
    verdict = RootCause("model.greedy-longest-match", ("model.greedy-longest-match",), explains=2, mismatches=2,
                        keeps=7, agreements=7, proven=True)
    return Results("0.1.0", backends={"mine": {}}, seconds=1.25, runs=[
        RunSummary("m", "golden/llama.cpp", "mine", cases=9, mismatches=2, unexplained=2,
                   classes={"merge-order": 2}, causes={"model.greedy-longest-match": 2}, root_cause=verdict)],
        mismatches=[mismatch("a-1", "It is raining today", "model.greedy-longest-match"),
                    mismatch("a-2", "x  y", "model.greedy-longest-match")])


def one_of_each() -> list[n.Block]:
    """A node of every block kind nodes.Block names."""
    token = n.Token(5, "␣a", "▁a")
    comparison = n.Comparison("o", "b", (n.Span("same", (token,), (token,)), n.Span("diff", (token,), ()),
                                         n.Span("gap", skipped=4, start=2)))
    text = n.runs("plain ", n.Run("name", n.CODE), " ", n.Run("cls", n.CLASS), " ", n.Run("known: k", n.KNOWN),
                  " ", n.Run("a␣text", n.TEXT), n.Run("", n.BREAK), n.Run("tip", note="a tooltip"))
    blocks: list[n.Block] = [
        n.Paragraph(text, "lead"), n.Title("0.1.0", "✅ no mismatch to review", True),
        n.Fields((("Label", text),)), n.Table(("a", "b"), ((text, n.runs("1")),), frozenset({"b"}), True),
        n.Items((text,)), n.FixList((n.Fix("c", "do this", "spec.py"),)), comparison,
        n.Alignment("o", "b", (n.AlignedRow("equal", (token,), (token,), 0, 0),
                               n.AlignedRow("fold", (token,) * 2, (token,) * 2, 1, 1, skipped=3, tail=(token,) * 2))),
        n.Quote("a␣text", "… (9 characters)"), n.Sample("Most telling case", "Case", "edge/x", "(note)", "t", "",
                                                      comparison),
        n.Listing((n.Listed("m / b", "edge/x", (n.runs(n.Run("cls", n.CLASS)),), text, "why"),)),
        n.Part("Root cause", (n.Paragraph(text), comparison)),
        n.Article(n.runs("title"), (n.Paragraph(text),), "case", (("model", "m"),)),
        n.Details("folded", (n.Paragraph(text),)), n.Filters((("model", "model", ("m",)),)),
    ]
    assert {type(b) for b in blocks} == set(n.Block.__args__)  # (a new kind of node belongs here)
    return blocks


@pytest.mark.parametrize("lay_out", [html.block, markdown.block, lambda b: "\n".join(plain.block(b, 100))],
                         ids=["html", "markdown", "plain"])
def test_every_renderer_lays_out_every_node_kind(lay_out):
    for b in one_of_each():
        shown = lay_out(b)
        assert isinstance(shown, str)
        assert shown or isinstance(b, n.Filters), b  # (a text report has no selects)


def test_nodes_are_frozen():
    for kind in (*n.Block.__args__, n.Run, n.Token, n.Span, n.Fix, n.Section, n.Document):
        assert kind.__dataclass_params__.frozen, kind
        assert fields(kind)


def test_a_section_added_to_the_table_shows_in_every_report(results, monkeypatch):
    def notes(src: build.Source):
        return "Notes", (n.Paragraph(n.runs(f"{len(src.results.runs)} run, noted")),)

    monkeypatch.setitem(build.SECTIONS, "notes", notes)
    assert '<section id="notes">\n<h2>Notes</h2>\n<p>1 run, noted</p>' in html.render(results)
    assert "\n## Notes\n\n1 run, noted\n" in markdown.render(results)
    assert "\nNotes\n1 run, noted\n" in "\n".join(plain.summary_lines(results)) + "\n"
    assert "\nNotes\n1 run, noted" in "\n".join(plain.run_lines(results, "DIR"))


def test_every_view_says_the_same_write_up(results):
    """The sentence, the root cause and the fix of the one write-up, in every view that shows it."""
    page, md = html.render(results), markdown.render(results)
    explained = " ".join("\n".join(plain.run_lines(results, "DIR")).split())
    for said in ("because of model.greedy-longest-match", "reproduces 2 of 2 mismatches and keeps all 7 agreements.",
                 "Most telling case", "first difference at token 1"):
        assert said in page and said in md, said
    assert "Case edge/a-1 'It␣is␣raining␣today'" in explained
    assert "Root cause model.greedy-longest-match: reproduces 2 of 2 mismatches and keeps all 7 agreements." in explained


def test_only_the_accessors_read_root_cause_and_options():
    """A run summary's ``root_cause`` and ``results.options`` are read by build.py's accessors and
    nowhere else in the reports (one place to change when their types change)."""
    accessors = {"root_cause", "verdict_sentence", "fuzz_run", "run_notes", "diagnosed", "not_opened"}
    found = []
    for path in sorted(REPORT.glob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        inside = [(fn.lineno, fn.end_lineno or fn.lineno) for fn in ast.walk(tree)
                  if path.name == "build.py" and isinstance(fn, ast.FunctionDef) and fn.name in accessors]
        found += [f"{path.name}:{node.lineno} .{node.attr}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and node.attr in ("root_cause", "options")
                  and not any(lo <= node.lineno <= hi for lo, hi in inside)]
    assert found == []


@pytest.mark.parametrize("label", ["template+llama.cpp", "template+hf-gguf", "Root cause"])
def test_a_label_keeps_a_space_before_its_text(label):
    """A label as wide as the terminal's column of labels (a chat oracle's name) stays apart from
    the prompt beside it; a shorter one is padded to the column."""
    first = plain.labelled(label, "'<|begin_of_text|>'", 100)[0]
    assert first.startswith(label + " ") and first.endswith("'<|begin_of_text|>'")
    assert len(first) - len("'<|begin_of_text|>'") == max(plain.LABEL, len(label) + 1)
