"""The traits of a tojson (tokparity/chat/render.py): the ways a JSON writer departs from Python's
json.dumps, which chat.tojson-written-otherwise reads off an engine's prompt."""

from __future__ import annotations

import pytest

from tokparity.chat.render import _tojson


def test_a_tojson_of_traits_writes_each_and_refuses_an_unknown_one():
    assert _tojson("compact+ascii+slash+html+sorted")({"b": "a/b<é>", "a": 1}) == '{"a":1,"b":"a\\/b\\u003c\\u00e9\\u003e"}'
    assert _tojson("transformers")({"b": "a/b", "a": 1}) == '{"b": "a/b", "a": 1}'
    with pytest.raises(ValueError):
        _tojson("compact+typo")


def test_reading_a_tojsons_traits_counts_its_renders(zoo):
    """Reading the traits renders the conversation once for each set of traits tried: all six
    first, each alone, then the sets of those that change the prompt alone: eight at least. Those
    characters count in the chat search's budget (SEARCH_CHARS): they were
    rendered for free before."""
    import json
    from pathlib import Path

    from tokparity.backends.registry import make_backend
    from tokparity.chat.conversation import Conversation
    from tokparity.chat.template import find_template
    from tokparity.chat.way import TRANSFORMERS_WAY
    from tokparity.diagnose.chat import derived
    from tokparity.run.chat import chat_reference
    from tokparity.vocab import load_vocab

    model = zoo("qwen3")
    chats = Path(__file__).resolve().parents[2] / "corpora" / "chats.jsonl"
    line = next(json.loads(t) for t in chats.read_text("utf-8").splitlines() if '"id": "tools-01"' in t)
    conversation = Conversation(line["messages"], line["tools"])
    reference = chat_reference(find_template(model), make_backend("hf", model), load_vocab(model.primary[1]))
    try:
        right = reference.answer(conversation)
        written = reference.text(conversation, TRANSFORMERS_WAY.changed(tojson="compact+sorted"))
        read, rendered = derived(reference, conversation, type(right)(written, None), right)
        assert [v.does for v in read] == ["writes tojson's JSON with no space after ',' and ':' and its keys sorted"]
        assert rendered >= 8 * min(len(right.text), len(written))
    finally:
        reference.close()
