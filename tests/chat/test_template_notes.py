"""A setting the model's own template ignores cannot be checked on that model: the run says so,
in the terminal and in every report, rather than pass an engine on it silently. The zoo's Llama 3
template (an earlier revision) ends every prompt with the assistant's header; Qwen3's writes it
only when asked."""

from __future__ import annotations

from tokparity.report import markdown
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions, Services


def test_a_template_that_ignores_add_generation_prompt_is_said(zoo):
    zoo("llama-bpe")
    zoo("qwen3")
    said: list[str] = []
    results = run_compare(["llama-bpe", "qwen3"], ["chats"], ["hf"],
                          CompareOptions(ops=("chat",), services=Services(progress=said.append)))
    notes = list(results.options.get("notes", ()))
    assert len(notes) == 1 and notes[0].startswith("llama-bpe: its chat template ends with the assistant's header")
    assert notes[0] in said
    assert "llama-bpe: its chat template ends with the assistant" in markdown.render(results)
