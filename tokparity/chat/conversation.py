"""A conversation: what ``--ops chat`` turns into a prompt (tokparity.chat).

A line of a conversation corpus (JSONL, the built-in ``chats``, or a file of yours)::

    {"id": "tools-1", "messages": [{"role": "user", "content": "Hi"}],
     "tools": [{"type": "function", "function": {...}}],
     "options": {"add_generation_prompt": true, "date_string": "26 Jul 2024"}, "tags": {"chat": "tools"}}

``messages`` is a list of objects (a ``content`` may be a string or a list of parts, as the
OpenAI and transformers APIs take them); ``tools`` a list of JSON schemas; ``options`` the
switches of ``apply_chat_template`` (``add_generation_prompt``, ``continue_final_message``) and any
other variable the template reads (``enable_thinking``, ``date_string``): every option is passed
to the template, as transformers passes its keyword arguments.

Inside a run a conversation travels as a case whose text is its canonical JSON (``to_text``), so
the journal, the reports and ``--resume`` keep it as they keep any text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property

from tokparity.errors import BadConversation

# Options apply_chat_template reads itself (the others are only the template's variables).
OWN_OPTIONS = ("add_generation_prompt", "continue_final_message", "documents")
MAX_MESSAGES = 10_000
CONVERSATION_TAG = "conversation"  # a corpus case's tag: its text is a conversation (a text op refuses it)


@dataclass(frozen=True)
class Conversation:
    messages: list[dict]
    tools: list[dict] | None = None
    options: dict = field(default_factory=dict)

    @property
    def add_generation_prompt(self) -> bool:
        return bool(self.options.get("add_generation_prompt", False))

    @property
    def continue_final_message(self) -> bool:
        return bool(self.options.get("continue_final_message", False))

    @property
    def variables(self) -> dict:
        """The template's variables besides ``messages``, ``tools`` and the special tokens' texts."""
        return {k: v for k, v in self.options.items() if k not in OWN_OPTIONS}

    def to_text(self) -> str:
        """The JSON a case carries (non-ASCII as itself, every object's keys in their order: a
        template sees them in that order, and ``tojson`` writes them so)."""
        return self._json

    @cached_property
    def _json(self) -> str:  # (written once: the chat diagnosis keys its renders by it, thousands of times)
        body: dict = {"messages": self.messages}
        if self.tools is not None:
            body["tools"] = self.tools
        if self.options:
            body["options"] = self.options
        return json.dumps(body, ensure_ascii=False)

    def to_request(self) -> dict:
        """The protocol's ``chat`` request members (tokparity.backends.cmd)."""
        return {"messages": self.messages, "tools": self.tools, "options": self.options}

    def only_text_content(self) -> bool:
        """Every message is a role and a string content, nothing else (what llama.cpp's built-in
        templates can take)."""
        return self.tools is None and all(set(m) <= {"role", "content"} and isinstance(m.get("content"), str)
                                          for m in self.messages)

    @classmethod
    def from_record(cls, record: dict, where: str) -> Conversation:
        """A corpus record's conversation, checked; ``BadConversation`` names ``where`` and the key."""
        messages = record.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadConversation(f"{where}: 'messages' must be a non-empty list of message objects")
        if len(messages) > MAX_MESSAGES:
            raise BadConversation(f"{where}: {len(messages):,} messages, more than {MAX_MESSAGES:,}; split the conversation")
        for k, m in enumerate(messages):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise BadConversation(f"{where}: messages[{k}] must be an object with a string 'role'")
            content = m.get("content")
            if content is not None and not isinstance(content, (str, list)):
                raise BadConversation(f"{where}: messages[{k}].content must be a string, a list of parts or null")
        tools = record.get("tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
            raise BadConversation(f"{where}: 'tools' must be a list of objects (JSON schemas)")
        options = record.get("options") or {}
        if not isinstance(options, dict):
            raise BadConversation(f"{where}: 'options' must be an object")
        if not isinstance(options.get("continue_final_message", False), (bool, str)):
            raise BadConversation(f"{where}: options.continue_final_message must be true, false or the name of the "
                                  "field to continue")
        if options.get("add_generation_prompt") and options.get("continue_final_message"):
            raise BadConversation(f"{where}: add_generation_prompt and continue_final_message cannot both be set "
                                  "(a new message, or the last one continued)")
        return cls(messages, tools, options)

    @classmethod
    def from_text(cls, text: str, where: str) -> Conversation:
        """A case's text (``to_text``) back to its conversation."""
        try:
            record = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            record = None
        if not isinstance(record, dict) or "messages" not in record:
            raise BadConversation(f"{where}: not a conversation; --ops chat reads corpora of conversations (the "
                                  "built-in chats, or JSONL lines with 'messages')")
        return cls.from_record(record, where)
