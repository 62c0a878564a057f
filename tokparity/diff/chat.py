"""How a backend's prompt for a conversation differs from the reference's (``--ops chat``).

The ids decide where both sides give them: they are what the model receives (llama.cpp's
built-in templates write no BOS and let the tokenizer add it: the same ids from another text is
agreement). Then, in this order:

    chat-raises  one side's template refused the conversation, the other's made a prompt
                 (both refusing is agreement)
    chat-bos     the ids differ only by a BOS or EOS doubled, added or missing at an end
    chat-text    the prompts' texts differ (the evidence shows where, whitespace made visible)
    chat-ids     the same text (or no text from the backend), other ids: the prompt is tokenized
                 otherwise (special-token text not parsed, another tokenizer)
"""

from __future__ import annotations

from tokparity.chat import ChatAnswer
from tokparity.textview import visible

# Found: (class, evidence, first index where the ids differ)
Found = tuple[str, str, int]


def first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((k for k in range(n) if a[k] != b[k]), n)


def text_evidence(want: str, got: str) -> str:
    at = first_difference(want, got)
    start = max(0, at - 20)
    return (f"the prompts part at character {at}: reference …{visible(want[start:at + 30])}… vs "
            f"…{visible(got[start:at + 30])}…")


def _bos_eos(want: list[int], got: list[int], bos: int | None, eos: int | None) -> str:
    """How ``got`` is ``want`` with a BOS or EOS more or fewer at an end ("" when it is not)."""
    for tok, name in ((bos, "BOS"), (eos, "EOS")):
        if tok is None:
            continue
        if name == "BOS":
            if got[:1] == [tok] and got[1:] == want:
                return f"a BOS ({tok}) more at the start" + (" (doubled)" if want[:1] == [tok] else "")
            if want[:1] == [tok] and want[1:] == got:
                return f"the BOS ({tok}) missing at the start"
        else:
            if got[-1:] == [tok] and got[:-1] == want:
                return f"an EOS ({tok}) more at the end"
            if want[-1:] == [tok] and want[:-1] == got:
                return f"the EOS ({tok}) missing at the end"
    return ""


def first_id_difference(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    return next((k for k in range(n) if a[k] != b[k]), n)


def judge_chat(want: ChatAnswer, got: ChatAnswer, bos: int | None, eos: int | None) -> Found | None:
    """None where ``got`` (the backend's prompt) agrees with ``want`` (the reference's)."""
    if want.raised or got.raised:
        if want.raised and got.raised:
            return None
        who, why = ("the reference", want.raised) if want.raised else ("the backend", got.raised)
        return "chat-raises", f"{who}'s template refused the conversation ({why[:300]}); the other made a prompt", 0
    if want.ids is not None and got.ids is not None:
        if want.ids == got.ids:
            return None
        first = first_id_difference(want.ids, got.ids)
        how = _bos_eos(want.ids, got.ids, bos, eos)
        if how:
            return "chat-bos", f"{how}: {len(want.ids)} ids vs {len(got.ids)}", first
        if got.text is not None and want.text is not None and got.text != want.text:
            return "chat-text", text_evidence(want.text, got.text), first
        return "chat-ids", (f"the same prompt text, other ids from id {first}" if got.text is not None else
                            f"other ids from id {first} (the backend gave no text)"), first
    if got.text is not None and want.text is not None and got.text != want.text:
        return "chat-text", text_evidence(want.text, got.text), 0
    return None
