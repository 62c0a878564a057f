"""The goldens as the oracle of a regress run: a backend that answers from the goldens file."""

from __future__ import annotations

from tokparity.backends.base import Backend
from tokparity.chat import ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.corpus import Case
from tokparity.errors import CaseFailure, NotCovered
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.regress.goldens import Answer, Decoded, Goldens, OracleChain, Prompt, failure

ORACLE = "goldens"  # the name the stored goldens judge under, in reports and summary.json


class StoredGoldens(Backend):
    """The goldens as a backend: answers the texts of its corpora from the file, add_special off
    and on (texts of digest-only corpora go to the live oracle once it has proven equal), and the
    ids the goldens decoded with the decoder's text; every id's bytes are the live decoder's once
    they have proven to hash to the stored digest (``pieces``)."""

    name = ORACLE

    def __init__(self, goldens: Goldens, cases: dict[str, list[Case]], vocab, live: OracleChain | None = None,
                 pieces: list[bytes | None] | None = None):
        self.goldens, self.vocab, self.live, self.pieces_table = goldens, vocab, live, pieces
        self.lossy_pieces = False  # as the live decoder's table is, once proven (judge_model)
        self._answers: dict[bool, dict[str, Answer]] = {False: {}, True: {}}
        self._prompts: dict[str, Prompt] = {}  # a conversation's text -> the prompt its template gave
        self._delegated: set[str] = set()
        self._decoded: dict[tuple[int, ...], Decoded] = dict(goldens.decoding.sequences) if goldens.decoding else {}
        for corpus, corpus_cases in cases.items():
            stored = goldens.corpora[corpus]
            if stored.prompts_made is not None:
                self._prompts.update((case.text, prompt) for case, prompt in zip(corpus_cases, stored.prompts))
                continue
            if not stored.per_case:
                self._delegated.update(c.text for c in corpus_cases)
                continue
            decoded = stored.decoded if goldens.decoding else []
            for k, (case, plain, special) in enumerate(zip(corpus_cases, stored.plain, stored.special)):
                self._answers[False].setdefault(case.text, plain)
                self._answers[True].setdefault(case.text, special)
                if decoded and plain.status == "ok" and plain.ids:
                    text = decoded[k]
                    self._decoded.setdefault(tuple(plain.ids), case.text if text is None else text)

    @property
    def version(self) -> str:
        return f"{self.goldens.path.name} ({self.goldens.made_by()})"

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        answer = self._answers[add_special].get(text)
        if answer is None and self.live is not None and text in self._delegated:
            answer = self.live.answer(text, add_special)
        if answer is None:
            raise NotCovered("the goldens hold no ids for this text")
        if answer.status != "ok":
            raise failure(answer.status, f"the oracle {answer.by} failed when the goldens were made: {answer.detail}")
        return list(answer.ids or [])

    def prompt(self, conversation: Conversation) -> ChatAnswer:
        """The prompt the model's template gave for ``conversation`` when the goldens were made."""
        found = self._prompts.get(conversation.to_text())
        if found is None:
            raise NotCovered("the goldens hold no prompt for this conversation")
        if isinstance(found, CaseFailure):
            raise failure(found.status, f"the reference failed when the goldens were made: {found.detail}")
        return found

    def pieces(self, ids: list[int]) -> list[str]:
        tokens = self.vocab.tokens
        return [tokens[i] if 0 <= i < len(tokens) else f"<id {i}?>" for i in ids]

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        # (the goldens hold texts decoded as the files say: decode_switches is empty)
        text = self._decoded.get(tuple(ids))
        if text is None:
            raise NotCovered("the goldens hold no decoded text for these ids")
        if isinstance(text, CaseFailure):
            raise failure(text.status, f"the decoder failed when the goldens were made: {text.detail}")
        return text

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        if self.pieces_table is None:
            raise NotCovered("the goldens hold no proven bytes of the tokens")
        return [self.pieces_table[i] if 0 <= i < len(self.pieces_table) else None for i in ids]

    def close(self) -> None:
        if self.live is not None:
            for backend in self.live.backends.values():
                backend.close()
            self.live = None
