"""The chat reference keeps a template's refusal of each request, and raises it again when the
search asks again. Raised again as the same exception, each raise added its frames to the
traceback the exception held. So the kept refusal grew with every raise, and when the cache let it
go, its frames were a cycle for the collector to find. One blind round's chat test made 10 million
such objects, and collecting them took a fifth of its time."""

from __future__ import annotations

import gc
import json

from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import ChatReference
from tokparity.chat.sandbox import TemplateSandbox
from tokparity.chat.template import find_template
from tokparity.errors import TemplateRaised


def test_a_kept_refusal_raised_again_leaves_nothing_to_collect(zoo):
    reference = ChatReference(find_template(zoo("gemma-3")), lambda text, parse: [], None, TemplateSandbox(10))
    # (Gemma 3's template raises where two user messages follow each other)
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    conversation = Conversation.from_text(json.dumps({"messages": messages}), "two-users")
    refusals = []

    def raise_again(times: int) -> int:
        """The objects the collector tracks after the refusal is raised ``times`` more times."""
        for _ in range(times):
            try:
                reference.text(conversation)
            except TemplateRaised as e:
                refusals.append(str(e))
        gc.collect()
        return len(gc.get_objects())

    try:
        before = raise_again(50)
        after = raise_again(200)
    finally:
        reference.close()
    assert len(refusals) == 250 and len(set(refusals)) == 1 and "alternate" in refusals[0], refusals[0]
    assert after - before < 100, after - before  # (before: about 9 objects a raise, 1,790 here)
