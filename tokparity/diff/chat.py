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

And of the expected prompt alone (the template's own check, ``template:specials``):

    chat-special-split  a special token's text the prompt writes is not that token's id in its ids
                        (the tokenizer splits the template's special-token text)
"""

from __future__ import annotations

from tokparity.chat import ChatAnswer
from tokparity.textview import single_line, visible
from tokparity.vocab.special_texts import SpecialTextFinder

# Found: (class, evidence, first index where the ids differ)
Found = tuple[str, str, int]


def first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((k for k in range(n) if a[k] != b[k]), n)


def text_evidence(want: str, got: str) -> str:
    at = first_difference(want, got)
    start = max(0, at - 20)
    return (f"the prompts first differ at character {at}: expected …{visible(want[start:at + 30])}… vs "
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
        return "chat-raises", f"{who}'s template refused the conversation ({single_line(why[:300])}); the other made a prompt", 0
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


class SpecialTexts:
    """The vocabulary's special tokens by their text (``{id: text}`` of tokparity.vocab.Vocab.special_texts),
    found in a prompt leftmost and longest first, as a tokenizer that parses special-token text finds them."""

    def __init__(self, texts: dict[int, str], unk: int | None = None):
        # (the unknown token is left out: a tokenizer makes it of text it cannot tokenize, not of its text;
        # a text twice: its lowest id)
        self.ids = {text: i for i, text in sorted(texts.items(), reverse=True) if text and i != unk}
        self.finder = SpecialTextFinder(self.ids)

    def split(self, answer: ChatAnswer) -> Found | None:
        """Where ``answer``'s text writes a special token whose id its ids do not hold in that place
        (the specials in the text and the special ids in the ids, in order); None: each is its id."""
        if not self.finder or answer.text is None or answer.ids is None:
            return None
        written = self.finder.find(answer.text)
        special_ids = set(self.ids.values())
        held = [(k, i) for k, i in enumerate(answer.ids) if i in special_ids]
        for n, (at, text) in enumerate(written):
            if n < len(held) and held[n][1] == self.ids[text]:
                continue
            first = held[n - 1][0] + 1 if n else 0
            instead = f"the special id {held[n][1]} comes next" if n < len(held) else "no special id follows"
            return "chat-special-split", (f"the prompt writes {visible(text)} (id {self.ids[text]}) at character {at}, "
                                          f"its special-token text number {n + 1}; in its ids {instead} (from position "
                                          f"{first}): the tokenizer does not make that text its id"), first
        if len(held) > len(written):
            k, i = held[len(written)]
            return "chat-special-split", (f"the ids hold the special id {i} at {k}, which the prompt's text does not "
                                          "write as that token's text"), k
        return None
