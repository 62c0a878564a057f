"""The edits a way makes to the messages before rendering (tokparity.chat.message_edits), each on
a small conversation whose answer is written out by hand."""

from __future__ import annotations

import json

from tokparity.chat.message_edits import (
    TOOLS_MARK,
    blank_lines_collapsed,
    content_normalized,
    result_quoted,
    tools_into_system,
    tools_into_user,
)

TOOLS = [{"type": "function", "function": {"name": "météo"}}]


def test_tools_go_after_the_first_or_the_last_user_message():
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    text = f"\nTools: {TOOLS_MARK}indented_ascii{TOOLS_MARK}"
    first = tools_into_user(messages, TOOLS, text, "first")
    last = tools_into_user(messages, TOOLS, text, "last")
    assert first[0]["content"] == "a\nTools: " + json.dumps(TOOLS, indent=2) and first[1:] == messages[1:]
    assert last[2]["content"] == "c\nTools: " + json.dumps(TOOLS, indent=2) and last[:2] == messages[:2]


def test_tools_after_a_list_of_parts_join_its_last_text_part():
    parts = [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}, {"type": "image"}]
    (message,) = tools_into_user([{"role": "user", "content": parts}], TOOLS, "!", "first")
    assert message["content"] == [*parts[:2], {"type": "text", "text": "b!"}, parts[3]]
    (message,) = tools_into_user([{"role": "user", "content": [{"type": "image"}]}], TOOLS, "!", "first")
    assert message["content"] == [{"type": "image"}, {"type": "text", "text": "!"}]
    (message,) = tools_into_user([{"role": "user", "content": None}], TOOLS, "!", "first")
    assert message["content"] == "!"


def test_without_a_user_message_the_messages_stay():
    messages = [{"role": "system", "content": "s"}]
    assert tools_into_user(messages, TOOLS, "!", "last") == messages


def test_a_mark_around_a_word_that_names_no_form_stays_as_it_is():
    """A content may hold the private-use mark itself: only a form's name between two marks is
    replaced (the read used to raise KeyError on any other word)."""
    text = f" {TOOLS_MARK}word{TOOLS_MARK} {TOOLS_MARK}compact{TOOLS_MARK}"
    (system, _) = tools_into_system([{"role": "user", "content": "x"}], TOOLS, text)
    assert system["content"] == f"{TOOLS_MARK}word{TOOLS_MARK} " + json.dumps(TOOLS, ensure_ascii=False,
                                                                              separators=(",", ":"))


def test_text_edits_reach_a_string_and_each_text_part():
    parts = [{"type": "text", "text": "ﬁ\n\n\n\nx"}, {"type": "image"}]
    assert content_normalized("ﬁ", "NFKC") == "fi"
    assert content_normalized(parts, "NFKC") == [{"type": "text", "text": "fi\n\n\n\nx"}, parts[1]]
    assert blank_lines_collapsed(parts, "\n\n") == [{"type": "text", "text": "ﬁ\n\nx"}, parts[1]]
    assert blank_lines_collapsed("a\n \n\t\nb", "\n") == "a\nb"
    assert content_normalized(None, "NFC") is None


def test_a_tool_result_is_quoted_or_wrapped():
    tool = {"role": "tool", "content": "22 °C"}
    assert result_quoted(tool, "ascii")["content"] == '"22 \\u00b0C"'
    assert result_quoted(tool, "raw")["content"] == '"22 °C"'
    assert result_quoted(tool, "wrapped")["content"] == '{"result": "22 \\u00b0C"}'
    assert result_quoted({"role": "user", "content": "x"}, "wrapped") == {"role": "user", "content": "x"}
