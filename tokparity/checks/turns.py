"""Multi-turn prefix: the ids a conversation has after a turn are the start of the next turn's prompt.

A rollout (reinforcement learning, an agent, a server's prompt cache) keeps the ids it has: the
prompt of turn k, then what the model wrote, up to and including the token that closes its turn.
Turn k+1's prompt is rendered again from the messages. Training and caching assume the first ids
are a prefix of the second. Two things break that, and each is said apart:

* The template writes a turn differently once it is history: it drops the reasoning of earlier
  turns, trims the content, or writes more after the end of the turn. The texts part.
* The texts agree, but the ids do not: encoding the prompt and the reply apart splits the text at
  the boundary otherwise than encoding them together.

What the model wrote is read off the template itself: the conversation up to and including the
reply, rendered without a generation prompt, after turn k's prompt, up to the end-of-turn token.
The prompts are the chat reference's (tokparity.chat.reference): the template rendered as
transformers renders it, encoded by the model's oracle with special-token text parsed.
"""

from __future__ import annotations

from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import ChatReference
from tokparity.checks import Finding, PropertyCheck
from tokparity.errors import TemplateRaised, TokparityError
from tokparity.textview import clipped
from tokparity.vocab import Vocab

NAME = "multi-turn-prefix"
SHOWN_IDS = 4  # ids shown each side of where the runs part
EDIT_WINDOW = 400  # characters of each text, from where they part, searched for the edit
AGREE_AFTER = 16  # characters that must agree after an edit for it to be the one
SHIFT_MAX = 8  # characters a cut to a text's end is moved back, to start where a reader would cut


def check(conversations: list[tuple[str, Conversation]], reference: ChatReference, vocab: Vocab,
          turn_end: int | None) -> PropertyCheck:
    """Each assistant turn of ``conversations`` that more messages follow; ``turn_end``: the id of the
    token the template closes a turn with (None: the reply runs to where the next message starts)."""
    turns = parted = 0
    findings: list[Finding] = []
    for name, conversation in conversations:
        messages = conversation.messages
        for a, message in enumerate(messages):
            if message.get("role") != "assistant" or a == 0 or a + 1 >= len(messages):
                continue
            nxt = next((b for b in range(a + 1, len(messages)) if messages[b].get("role") == "assistant"), len(messages))
            try:
                finding = _turn(reference, vocab, conversation, a, nxt, turn_end, f"{name}, turn {a}")
            except TemplateRaised:
                continue  # (a conversation the template refuses has no turns to compare)
            turns += 1
            if finding is not None:
                parted += 1
                if not any(f.said == finding.said for f in findings):  # (one finding per way the turns part)
                    findings.append(finding)
    if not turns:
        return PropertyCheck.skipped(NAME, "no conversation with a turn after an assistant's reply")
    facts = [f"{turns} turns of {len(conversations)} conversations: {parted} not a prefix of the next prompt"]
    return PropertyCheck.of(NAME, facts, findings)


def _turn(reference: ChatReference, vocab: Vocab, conversation: Conversation, a: int, b: int,
          turn_end: int | None, where: str) -> Finding | None:
    options = {k: v for k, v in conversation.options.items() if k not in ("add_generation_prompt", "continue_final_message")}
    messages = conversation.messages

    def made(upto: int, generation_prompt: bool) -> str:
        return reference.text(Conversation(messages[:upto], conversation.tools,
                                           options | {"add_generation_prompt": generation_prompt}))

    prompt, with_reply, following = made(a, True), made(a + 1, False), made(b, True)
    if not with_reply.startswith(prompt):
        at = _parting(prompt, with_reply)
        return Finding(
            "The template writes an assistant's reply after other text than the prompt it gives the model for "
            f"that turn: {_edit(prompt, with_reply, at, 'the prompt', 'the written reply')}", where,
            f"prompt {_around(prompt, at)} vs with the reply {_around(with_reply, at)}")
    reply = with_reply[len(prompt):]
    if turn_end is not None and (end := reply.find(vocab.tokens[turn_end])) >= 0:
        reply = reply[:end + len(vocab.tokens[turn_end])]  # (the model stops at its turn's end)
    rollout_text = prompt + reply
    if not following.startswith(rollout_text):
        at = _parting(rollout_text, following)
        return Finding(_why_texts_part(messages[a], rollout_text, following, at), where,
                       f"rollout {_around(rollout_text, at)} vs next prompt {_around(following, at)}")
    ids = list(reference.encode(prompt, True)) + list(reference.encode(reply, True))
    together = list(reference.encode(following, True))
    if together[:len(ids)] == ids:
        return None
    at = _parting(ids, together)
    return Finding(
        "The texts agree, but the ids do not: the prompt's ids and the reply's ids, each encoded on its own (as a "
        "trainer of prompt-completion pairs does), are not the start of the next prompt's ids", where,
        f"from id {at}: rollout {_ids(vocab, ids, at)} vs next prompt {_ids(vocab, together, at)}")


def _why_texts_part(reply: dict, rollout: str, following: str, at: int) -> str:
    reasoning = reply.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip() and reasoning.strip() in rollout[at:] and \
            reasoning.strip() not in following:
        return ("The template drops the reasoning of an earlier turn: the rollout's ids hold it, the next prompt "
                "does not. Train on each turn's own prompt, or keep the reasoning in the template")
    return ("The template writes a turn differently once it is history: "
            f"{_edit(rollout, following, at, 'the rollout', 'the next prompt')}")


def _edit(before: str, after: str, at: int, first: str, second: str) -> str:
    """The smallest text ``after`` leaves out of ``before``, or adds to it, from character ``at`` (where
    the two part), said with their names: the rest must then agree for ``AGREE_AFTER`` characters."""
    r, f = before[at:at + EDIT_WINDOW], after[at:at + EDIT_WINDOW]
    for k in range(1, EDIT_WINDOW + 1):
        rest = r[k:k + AGREE_AFTER]
        if k <= len(r) and f.startswith(rest) and (rest or k == len(r)):
            return f"{second} leaves out {clipped(_leftmost(before, at, r[:k]), 60)}, which {first} holds"
        if k <= len(f) and r and f[k:].startswith(r[:AGREE_AFTER]):
            return f"{second} adds {clipped(_leftmost(after, at, f[:k]), 60)}, which {first} lacks"
    return f"{first} goes on {clipped(r[:30], 40)} where {second} goes on {clipped(f[:30], 40)}"


def _leftmost(text: str, at: int, piece: str) -> str:
    """``piece``, cut out of ``text`` at ``at``, as a reader would cut it. The same cut may move left
    while the character before it ends it: ``think>…<`` after a shared ``<`` is also ``<think>…``.
    Of those, the first that starts a markup tag (``<``), else the first that starts with no space."""
    cuts = [piece]
    if at + len(piece) == len(text):  # (a cut to the text's end may start anywhere before: what follows is gone)
        cuts += [text[start:] for start in range(at - 1, max(0, at - SHIFT_MAX) - 1, -1)]
    while at > 0 and text[at - 1] == piece[-1]:
        piece, at = text[at - 1] + piece[:-1], at - 1
        cuts.append(piece)
    return next((c for c in cuts if c.startswith("<")), next((c for c in cuts if not c[0].isspace()), cuts[0]))


def _parting(a, b) -> int:
    """The first index where two sequences differ (the shorter one's length if one starts the other)."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def _around(text: str, at: int) -> str:
    return clipped(text[max(0, at - 24):at + 24], 60) + f" (character {at})"


def _ids(vocab: Vocab, ids: list[int], at: int) -> str:
    shown = ids[max(0, at - SHOWN_IDS):at + SHOWN_IDS]
    return "[" + ", ".join(f"{i} {vocab.tokens[i]!r}" if 0 <= i < vocab.size else str(i) for i in shown) + "]"


# How a model's reply often begins or ends, beyond what the corpus's replies do: each is tried on
# the first reply of every conversation (the boundaries a rollout joins its ids at).
REPLY_SHAPES = (("a newline first", "\n{}"), ("a space first", " {}"), ("a space last", "{} "),
                ("two newlines first", "\n\n{}"))


def conversations() -> list[tuple[str, Conversation]]:
    """The built-in ``chats`` corpus's conversations that have a turn after an assistant's reply,
    and each again with its first reply in each of ``REPLY_SHAPES``."""
    from tokparity.corpus import load_corpus

    out = []
    for case in load_corpus("chats"):
        try:
            conversation = Conversation.from_text(case.text, f"{case.corpus}/{case.id}")
        except TokparityError:
            continue
        roles = [m.get("role") for m in conversation.messages]
        if "assistant" not in roles[1:-1]:
            continue
        name = f"{case.corpus}/{case.id}"
        out.append((name, conversation))
        first = roles.index("assistant", 1)
        reply = conversation.messages[first]
        if not isinstance(reply.get("content"), str) or not reply["content"] or reply.get("tool_calls"):
            continue
        for shape, written in REPLY_SHAPES:
            messages = list(conversation.messages)
            messages[first] = reply | {"content": written.format(reply["content"])}
            out.append((f"{name} with {shape} in the reply", Conversation(messages, conversation.tools,
                                                                          conversation.options)))
    return out
