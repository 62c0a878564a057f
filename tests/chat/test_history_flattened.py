"""Messages written as the text of one, read off the prompt (``chat.history-flattened``,
tokparity/diagnose/history_read.py) and made again (``message_edits.history_flattened``)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tokparity.chat.conversation import Conversation
from tokparity.chat.message_edits import history_flattened, history_groups
from tokparity.chat.reference import ChatReference
from tokparity.chat.sandbox import TemplateSandbox
from tokparity.chat.template import find_template
from tokparity.chat.way import TRANSFORMERS_WAY
from tokparity.diagnose import history_read

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Why?"},
            {"role": "assistant", "content": "Because."}, {"role": "user", "content": "Thanks"}]


def test_the_groups_of_each_mode():
    assert history_groups(MESSAGES, "all") == [(True, [0, 1, 2, 3, 4, 5])]
    assert history_groups(MESSAGES, "history") == [(False, [0]), (True, [1, 2, 3, 4]), (False, [5])]
    assert history_groups(MESSAGES, "pairs") == [(False, [0]), (True, [1, 2]), (True, [3, 4]), (False, [5])]


def flattened(mode: str, role: str, labels: dict, head: str = "", sep: str = "\n", end: str = "") -> str:
    return json.dumps({"mode": mode, "role": role, "head": head, "labels": labels, "sep": sep, "end": end})


def test_a_text_prompt_of_the_whole_conversation_is_made():
    value = flattened("all", "user", {"system": "", "user": "Human: ", "assistant": "AI: "})
    assert history_flattened(MESSAGES, value) == [
        {"role": "user", "content": "Be brief.\nHuman: Hi\nAI: Hello!\nHuman: Why?\nAI: Because.\nHuman: Thanks"}]
    with pytest.raises(NotImplementedError):  # (a role with no label: this builder's prompt is not known)
        history_flattened([{"role": "tool", "content": "42"}], value)


@pytest.mark.parametrize("mode,role,labels,head,sep,end", [
    ("all", "user", {"system": "", "user": "Human: ", "assistant": "AI: "}, "", "\n", ""),
    ("history", "system", {"user": "User: ", "assistant": "Assistant: "}, "Earlier:\n", "\n", "\n---"),
    ("pairs", "system", {"user": "CONTEXT: USER PROMPT: ", "assistant": "AI RESPONSE: "}, "", " ", ""),
])
def test_each_layout_is_read_off_a_prompt_it_made(zoo, mode, role, labels, head, sep, end):
    reference = ChatReference(find_template(zoo("qwen3")), lambda text, parse: [], None, TemplateSandbox(10))
    conversation = Conversation.from_text(json.dumps({"id": "c", "messages": MESSAGES}), "c")
    value = flattened(mode, role, labels, head, sep, end)
    got = reference.text(dataclasses.replace(conversation, messages=history_flattened(MESSAGES, value)),
                         TRANSFORMERS_WAY)
    values, spent = history_read.read(reference, conversation, got)
    assert spent > 0 and any(json.loads(v) == json.loads(value) for v in values), values
    assert history_read.said(value).startswith("writes ")


def test_the_labels_of_several_rows_are_joined_where_their_layout_is_one():
    one = flattened("all", "user", {"user": "Human: ", "assistant": "AI: "})
    two = flattened("all", "user", {"system": "", "user": "Human: "})
    other = flattened("all", "user", {"tool": "Tool: "}, sep=" ")
    assert json.loads(history_read.merged([one, two, other]))["labels"] == {"assistant": "AI: ", "system": "",
                                                                           "user": "Human: "}


def test_a_preamble_longer_than_any_label_is_read_as_the_head(zoo):
    # (LangChain's ConversationChain: a preamble of many words, then the lines, then an open "AI:")
    reference = ChatReference(find_template(zoo("qwen3")), lambda text, parse: [], None, TemplateSandbox(10))
    messages = MESSAGES[1:]
    conversation = Conversation.from_text(json.dumps({"id": "c", "messages": messages}), "c")
    head = ("The following is a friendly conversation between a human and an AI. The AI is talkative and provides "
            "lots of specific details from its context.\n\nCurrent conversation:\n")
    value = flattened("all", "user", {"user": "Human: ", "assistant": "AI: "}, head, "\n", "\nAI:")
    got = reference.text(dataclasses.replace(conversation, messages=history_flattened(messages, value)), TRANSFORMERS_WAY)
    values, _ = history_read.read(reference, conversation, got)
    assert any(json.loads(v) == json.loads(value) for v in values), values
