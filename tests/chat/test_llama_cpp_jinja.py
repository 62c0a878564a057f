"""llama-cpp-python 0.3.36's Jinja chat formatter (what ``Llama.create_chat_completion`` renders
and tokenizes for a GGUF with a chat template; tests/engines/thirdparty/llama_cpp_jinja.py),
judged against the reference on the zoo's GGUF templates. Every difference was read in its
source (llama_cpp/llama.py, llama_cpp/llama_chat_format.py) and each is named by its cause:

- ``chat.generation-prompt-added``: ``Jinja2ChatFormatter.__init__`` takes
  ``add_generation_prompt=True`` as a default that ``Llama.__init__`` never changes, and ``__call__``
  passes ``self.add_generation_prompt``: a chat completion always ends with the assistant's header,
  so the 3 conversations that ask for none (single-02, system-02, multi-turn-02) get one.
- ``chat.tool-use-template-ignored``: ``Llama.__init__`` registers ``tokenizer.chat_template.tool_use``
  as a chat format of its own and formats with ``chat_template.default``: Command R's two
  conversations with tools are rendered by the default template, where transformers takes the
  tool_use one (which refuses OpenAI-shaped tools: ``'dict object' has no attribute 'name'``).
- ``chat.variables-dropped``: the completion handler calls the formatter with messages, tools and
  the functions/tool_choice it was given, no other variable: Gemma 4's ``enable_thinking=True``
  never reaches the template (thinking-01; thinking-02 asks False, the template's default).
The prompt is tokenized with ``add_bos=not result.added_special`` (False) and ``special=True``, as
transformers does: no BOS difference. Conversations that continue a message are not covered (2)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = f"lcp-jinja=py:{Path(__file__).parents[1] / 'engines' / 'thirdparty' / 'llama_cpp_jinja.py'}:LlamaCppJinja"
NO_GENERATION_PROMPT = {"single-02", "system-02", "multi-turn-02"}
EXPECTED = {
    "phi-3": {},
    "qwen2": {case: "chat.generation-prompt-added" for case in NO_GENERATION_PROMPT},
    "qwen35": {case: "chat.generation-prompt-added" for case in NO_GENERATION_PROMPT},
    "command-r": {**{case: "chat.generation-prompt-added" for case in NO_GENERATION_PROMPT},
                  "tools-01": "chat.tool-use-template-ignored", "tools-02": "chat.tool-use-template-ignored"},
    "gemma-4": {**{case: "chat.generation-prompt-added" for case in NO_GENERATION_PROMPT},
                "thinking-01": "chat.variables-dropped"},
}


def test_llama_cpp_python_jinja_formatter(zoo):
    for model in EXPECTED:
        zoo(model)
    results = run_compare(list(EXPECTED), ["chats"], [ENGINE], CompareOptions(ops=("chat",)))
    for model, expected in EXPECTED.items():
        (run,) = [r for r in results.runs if r.model == model and r.backend == "lcp-jinja"]
        assert (run.cases, run.skipped) == (33, 2), model
        found = {m.case_id: m.cause for m in results.mismatches if m.model == model and m.backend == "lcp-jinja"}
        assert found == expected, model
    assert Counter(m.cls for m in results.mismatches if m.backend == "lcp-jinja") == \
        Counter({"chat-text": 13, "chat-raises": 2})
