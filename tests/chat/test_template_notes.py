"""A setting the model's own template ignores cannot be checked on that model: the run says so,
in the terminal and in every report, rather than pass an engine on it silently. The zoo's Llama 3
template (an earlier revision) ends every prompt with the assistant's header; Qwen3's writes it
only when asked."""

from __future__ import annotations

from tokparity.report import markdown, plain
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions


def test_a_template_that_ignores_add_generation_prompt_is_said(zoo):
    zoo("llama-bpe")
    zoo("qwen3")
    results = run_compare(["llama-bpe", "qwen3"], ["chats"], ["hf"], CompareOptions(ops=("chat",)))
    notes = list(results.options.get("notes", ()))
    assert len(notes) == 1 and notes[0].startswith("llama-bpe: its chat template writes the same prompt whether")
    for view in (markdown.render(results), " ".join(plain.summary_lines(results))):  # (what compare prints)
        assert "llama-bpe: its chat template writes the same prompt" in view
