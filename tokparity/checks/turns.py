"""Multi-turn prefix: the ids a conversation has after a turn are the start of the next turn's prompt.

A rollout (reinforcement learning, an agent, a server's prompt cache) keeps the ids it has: the
prompt of turn k, then what the model wrote, up to and including the token that closes its turn.
Turn k+1's prompt is rendered again from the messages. Training and caching assume the first ids
are a prefix of the second. Two things break that, and each is said apart:

* The template writes a turn differently once it is history: it drops the reasoning of earlier
  turns, trims the content, or writes more after the end of the turn. The texts part.
* The texts agree, but the ids do not: encoding the prompt and the reply apart splits the text at
  the boundary otherwise than encoding them together.

What the model wrote is read two ways, each said in its findings. As the template writes it: the
conversation up to and including the reply, rendered without a generation prompt, after turn k's
prompt, up to the end-of-turn token. As the model wrote it: the message's content, then the
end-of-turn token, where the template writes that content but for its whitespace (not for a reply
with tool calls or reasoning, or one the template adds a header to, whose generated text the
message does not hold). A template that trims every reply passes the first reading and fails the
second once a reply opens with a space.
The prompts are the chat reference's (tokparity.chat.reference): the template rendered as
transformers renders it, encoded by the model's oracle with special-token text parsed.
"""

from __future__ import annotations

from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import ChatReference
from tokparity.checks import Finding, PropertyCheck
from tokparity.errors import CaseFailure, TemplateRaised, TokparityError
from tokparity.textview import clipped, single_line
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
    kinds: dict[str, Finding] = {}  # the kind of parting and how it reads -> its first finding
    unrendered: list[str] = []
    refused: list[str] = []
    for name, conversation in conversations:
        messages = conversation.messages
        for a, message in enumerate(messages):
            if message.get("role") != "assistant" or a == 0 or a + 1 >= len(messages):
                continue
            nxt = next((b for b in range(a + 1, len(messages)) if messages[b].get("role") == "assistant"), len(messages))
            try:
                found = _turn(reference, vocab, conversation, a, nxt, turn_end,
                              f"{reference.template.source}; {name}, turn {a}")
            except TemplateRaised as e:  # (a conversation the template refuses has no turns to compare)
                refused.append(f"{name}, turn {a}: {single_line(e)}")
                continue
            except CaseFailure as e:  # (a render that timed out or died: that turn is not compared)
                unrendered.append(f"{name}, turn {a}: {single_line(e)}")
                continue
            turns += 1
            parted += bool(found)
            for kind, finding in found:  # (one finding per kind of parting: the first conversation that shows it)
                kinds.setdefault(kind, finding)
    if not turns:
        return PropertyCheck.skipped(NAME, f"no turn rendered: {unrendered[0]}" if unrendered else
                                     f"the template refuses every turn after an assistant's reply: {refused[0]}"
                                     if refused else "no conversation with a turn after an assistant's reply")
    facts = [f"{turns} turns of {len(conversations)} conversations (the chats corpus's, and each again with its first "
             f"reply reshaped): {parted} not a prefix of the next prompt"]
    if unrendered:
        facts.append(f"{len(unrendered)} turns not rendered, the first: {unrendered[0]}")
    return PropertyCheck.of(NAME, facts, list(kinds.values()))


def _turn(reference: ChatReference, vocab: Vocab, conversation: Conversation, a: int, b: int,
          turn_end: int | None, where: str) -> list[tuple[str, Finding]]:
    """How turn ``a`` parts from the next prompt (rendered up to message ``b``): nothing, or a
    finding for each reading of the reply that parts, each with the kind of parting it is."""
    options = {k: v for k, v in conversation.options.items() if k not in ("add_generation_prompt", "continue_final_message")}
    messages = conversation.messages

    def made(upto: int, generation_prompt: bool) -> str:
        return reference.text(Conversation(messages[:upto], conversation.tools,
                                           options | {"add_generation_prompt": generation_prompt}))

    prompt, with_reply, following = made(a, True), made(a + 1, False), made(b, True)
    if not with_reply.startswith(prompt):
        at = _parting(prompt, with_reply)
        return [("prompt", Finding(
            "The template writes an assistant's reply after other text than the prompt it gives the model for "
            f"that turn: {_edit(prompt, with_reply, at, 'the prompt', 'the written reply')}", where,
            f"prompt {_around(prompt, at)} vs with the reply {_around(with_reply, at)}"))]
    end = vocab.tokens[turn_end] if turn_end is not None else None
    written = with_reply[len(prompt):]
    if end is not None and (cut := written.find(end)) >= 0:
        written = written[:cut + len(end)]  # (the model stops at its turn's end)
    replies = [("as the template writes it", written)]
    message = messages[a]
    content = message.get("content")
    # (only where the template writes the content itself, its whitespace aside: a template that adds
    # a header the model writes itself, as harmony's channel, is not second-guessed)
    if end is not None and isinstance(content, str) and not message.get("tool_calls") and \
            not message.get("reasoning_content") and content + end != written and \
            "".join(written.split()) == "".join((content + end).split()):
        replies.append(("as its content, then the end-of-turn token", content + end))
    found = []
    for reading, reply in replies:
        parting = _parts(reference, vocab, message, prompt, reply, following, reading, where)
        if parting is not None:
            found.append((f"{parting[0]} {reading}", parting[1]))
    return found


def _parts(reference: ChatReference, vocab: Vocab, message: dict, prompt: str, reply: str, following: str,
           reading: str, where: str) -> tuple[str, Finding] | None:
    """Whether the prompt then ``reply`` (read ``reading``) starts ``following``, in text, then in ids;
    where not, the kind of parting and its finding."""
    rollout_text = prompt + reply
    if not following.startswith(rollout_text):
        at = _parting(rollout_text, following)
        kind, why = _why_texts_part(message, rollout_text, following, at)
        return kind, Finding(f"{why} (the reply read {reading})", where,
                             f"rollout {_around(rollout_text, at)} vs next prompt {_around(following, at)}")
    ids = list(reference.encode(prompt, True)) + list(reference.encode(reply, True))
    together = list(reference.encode(following, True))
    if together[:len(ids)] == ids:
        return None
    at = _parting(ids, together)
    return "ids", Finding(
        "The texts agree, but the ids do not: the prompt's ids and the reply's ids, each encoded on its own (as a "
        "trainer of prompt-completion pairs does), are not the start of the next prompt's ids "
        f"(the reply read {reading})", where,
        f"from id {at}: rollout {_ids(vocab, ids, at)} vs next prompt {_ids(vocab, together, at)}")


def _why_texts_part(reply: dict, rollout: str, following: str, at: int) -> tuple[str, str]:
    """The kind of edit the template makes to a turn once it is history, and the sentence saying it."""
    reasoning = reply.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip() and reasoning.strip() in rollout[at:] and \
            reasoning.strip() not in following:
        return "reasoning", ("The template drops the reasoning of an earlier turn: the rollout's ids hold it, the next "
                             "prompt does not. Train on each turn's own prompt, or keep the reasoning in the template")
    edit = _edit(rollout, following, at, "the rollout", "the next prompt")
    piece = _edit_piece(rollout, following, at)
    if piece is not None and piece[0] == "leaves out" and piece[1].isspace():
        return "whitespace", f"The template strips whitespace from a reply once it is history: {edit}"
    return "edit", f"The template writes a turn differently once it is history: {edit}"


def _edit(before: str, after: str, at: int, first: str, second: str) -> str:
    """The smallest text ``after`` leaves out of ``before``, or adds to it, from character ``at`` (where
    the two part), said with their names."""
    found = _edit_piece(before, after, at)
    if found is None:
        r, f = before[at:], after[at:]
        return f"{first} goes on {clipped(r[:30], 40)} where {second} goes on {clipped(f[:30], 40)}"
    verb, piece = found
    return f"{second} {verb} {clipped(piece, 60)}, which {first} {'holds' if verb == 'leaves out' else 'lacks'}"


def _edit_piece(before: str, after: str, at: int) -> tuple[str, str] | None:
    """``("leaves out", text)`` or ``("adds", text)``: the smallest edit from character ``at`` after
    which the two texts agree for ``AGREE_AFTER`` characters (or to the end of ``before``)."""
    r, f = before[at:at + EDIT_WINDOW], after[at:at + EDIT_WINDOW]
    for k in range(1, EDIT_WINDOW + 1):
        rest = r[k:k + AGREE_AFTER]
        if k <= len(r) and f.startswith(rest) and (rest or k == len(r)):
            return "leaves out", _leftmost(before, at, r[:k])
        if k <= len(f) and r and f[k:].startswith(r[:AGREE_AFTER]):
            return "adds", _leftmost(after, at, f[:k])
    return None


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
