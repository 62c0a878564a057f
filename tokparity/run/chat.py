"""How a conversation is judged (``compare --ops chat``): every backend's prompt against the reference's.

The reference (tokparity.chat.reference) renders the model's template as transformers does and
encodes the prompt with the oracle (the chain's first library), as ``apply_chat_template`` does;
each backend with a ``chat`` op answers its own text and ids (tokparity.diff.chat judges them). A
backend without the op, or that does not cover the conversation (llama.cpp's built-ins take no
tools), is skipped for it; a model without a chat template has nothing to judge: its cases are
skipped on every backend, and the run says so once.

Every prompt the reference makes is checked against its own tokenizer too, as a backend named
``template:specials``: each special token's text the template writes (``<|im_start|>``) must be
exactly that token's id in the prompt's ids, not split into ordinary tokens (a tokenizer saved
with ``split_special_tokens``, a special token typed as text): a model that fails it gets a
prompt it was not trained on from every engine alike, so no comparison of engines shows it.

Where the template reads list-of-parts content (a part's ``type``), the run also judges the
template itself as a backend named ``template:parts``: each conversation with its string contents
sent as lists of one text part must give the same prompt (where the template takes parts at all);
a difference is named ``chat.content-as-parts``, the branch the template takes for parts.

``regress --ops chat`` judges by the prompts its goldens stored instead (``expected``), and the
template as tokparity renders and encodes it today is then judged too, as a backend named
``template``: a template file, a tokenizer or tokparity's renderer that changed since shows there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tokparity.backends.base import Backend, outside_every_vocabulary, too_many_ids
from tokparity.chat import PARTS_CHECK, RAISED_SHOWN, SPECIALS_CHECK, TEMPLATE_CHECK, ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import ChatReference, prompt_encoder
from tokparity.chat.sandbox import RENDER_TIMEOUT, TemplateSandbox
from tokparity.chat.template import ChatTemplate, gguf_template
from tokparity.chat.way import TRANSFORMERS_WAY
from tokparity.corpus import Case
from tokparity.diff.chat import SpecialTexts, judge_chat
from tokparity.diff.shape import chat_failure_shape, chat_ids_shape, chat_shape
from tokparity.errors import CaseFailure
from tokparity.records import AGREE, SKIPPED, CaseRecord, Judgement, Verdict
from tokparity.run.ops import ask_op, capped
from tokparity.textview import clipped, single_line
from tokparity.vocab import Vocab
from tokparity.zoo import ModelFiles

CHAT_STAGE = "chat"
# compare --ops chat without a model: zoo models whose files carry a template, from transformers'
# files (Llama 3, Qwen3, Gemma 3) and from GGUFs (Phi-3, Qwen2), each family's template once
CHAT_MODELS = ("llama-bpe", "qwen3", "gemma-3", "phi-3", "qwen2")
PARTS_WAY = TRANSFORMERS_WAY.changed(content_as_parts=True)


def chat_reference(template: ChatTemplate, encoder: Backend, vocab: Vocab, timeout: float | None = None,
                   model: ModelFiles | None = None) -> ChatReference:
    """The reference's prompts: ``template`` rendered in a sandbox (``timeout`` seconds a render),
    the text encoded by ``encoder`` as apply_chat_template encodes it (no special tokens added);
    ``model``'s GGUF template, where it is another, is the one llama.cpp's built-ins are tried on."""
    return ChatReference(template, prompt_encoder(encoder.encode, vocab), vocab.special_ids.get("bos"),
                         TemplateSandbox(timeout or RENDER_TIMEOUT),
                         gguf_template(model, template) if model else None)



def answers_shape(vocab: Vocab, conversation: Conversation, want: ChatAnswer, got: ChatAnswer) -> str:
    """Where the backend's prompt parts from the template's (tokparity.diff.shape); where one side
    refused the conversation, which one. Where both sides gave ids, the ids are read, as their
    tokens' texts: they are what the model gets. An engine whose text has no BOS but whose ids do
    is shown where its ids part, not at the BOS. Where the ids agree, the texts are read."""
    why = clipped(" ".join((want.raised or got.raised).split()))  # (a refusal's reason, on one line)
    if want.raised and (got.text is not None or got.ids is not None):
        return f"the engine made a prompt where the template refuses the conversation ({why})"
    if got.raised and not want.raised:
        return f"the engine refused the conversation ({why}) where the template makes a prompt"
    if want.raised or got.raised:
        return ""
    contents = [str(m["content"]) if isinstance(m.get("content"), str) else "" for m in conversation.messages
                if isinstance(m, dict)]
    if want.ids is not None and got.ids is not None and list(want.ids) != list(got.ids):
        return chat_ids_shape(vocab, contents, want.text or "", want.ids, got.ids)
    if want.text is None or got.text is None:
        return ""
    return chat_shape(contents, want.text, got.text)


def shown(answer: ChatAnswer) -> list[str]:
    """What a report shows of a side's prompt: its text (or what its template raised)."""
    if answer.raised:
        return [f"{RAISED_SHOWN}{answer.raised})"]
    return [answer.text] if answer.text is not None else []


@dataclass
class ChatJudge:
    model: str
    vocab: Vocab
    backends: dict[str, Backend]
    reference: ChatReference
    oracle: str  # whose encoder gives the reference's ids (judged by stored prompts: whose they are)
    compared: list[str]
    # the prompt each conversation must give (regress: the goldens'); None: the reference's
    expected: Callable[[Conversation], ChatAnswer] | None = None
    # a server -> the library whose code it runs, asked where the server differs (registry.witnesses)
    witness_of: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.specials = SpecialTexts(self.vocab.special_texts(), self.vocab.special_ids.get("unk"))

    def record(self, n: int, case: Case, keys: tuple[str, ...]) -> CaseRecord:
        conversation = Conversation.from_text(case.text, f"{case.corpus}/{case.id}")
        seconds: dict[str, float] = {}
        started = time.perf_counter()
        want = ask_op(lambda: (self.expected or self.reference.answer)(conversation))
        seconds["ref"] = time.perf_counter() - started
        verdicts: dict[str, Verdict] = {}
        judgements: list[Judgement] = []
        asked: dict[str, object] = {}  # each backend's answer, asked once (a witness may be asked first)
        for name in self.compared:
            started = time.perf_counter()
            # (a template the reference could not render, too slow or too big, is not given to the
            # backends: the failure is every backend's case, as an oracle's failure is when encoding)
            got = ChatAnswer() if isinstance(want, CaseFailure) else self._asked(name, conversation, want, asked)
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started
            if got is None or isinstance(got, CaseFailure) and got.status == "skipped":
                verdicts[name] = SKIPPED
                continue
            found = self._judge(want, got, name)
            if found is None:
                verdicts[name] = AGREE
                continue
            cls, evidence, first = found
            verdicts[name] = Verdict.differs(cls)
            want_answer = want if isinstance(want, ChatAnswer) else ChatAnswer()
            got_answer = got if isinstance(got, ChatAnswer) else ChatAnswer()
            gave = "both" if got_answer.text is not None and got_answer.ids is not None else \
                "ids" if got_answer.ids is not None else "text"
            tags = dict(case.tags) | {"gave": gave} | self._witnessed(name, conversation, want, got, asked)
            judgements.append(Judgement(
                model=self.model, corpus=case.corpus, case_id=case.id, tags=tags,
                oracle=self.oracle if self.expected else f"template+{self.oracle}",
                backend=name, cls=cls, evidence=evidence, stage=CHAT_STAGE, first_diff=first, text=case.text,
                oracle_ids=list(want_answer.ids or []), backend_ids=list(got_answer.ids or []),
                oracle_pieces=self._pieces(want_answer.ids), backend_pieces=self._pieces(got_answer.ids), op="chat",
                oracle_output=capped(shown(want_answer)), backend_output=capped(shown(got_answer)),
                shape=chat_failure_shape(isinstance(want, CaseFailure), cls,
                                         single_line(got.detail or "") if isinstance(got, CaseFailure) else "")
                if isinstance(want, CaseFailure) or isinstance(got, CaseFailure) else
                answers_shape(self.vocab, conversation, want_answer, got_answer)))
        return CaseRecord(self.model, n, case.id, case.corpus, self.oracle, keys, verdicts,
                          tuple(judgements), op="chat", seconds=seconds)

    def _witnessed(self, name: str, conversation: Conversation, want: object, got: object,
                   asked: dict[str, object]) -> dict[str, str]:
        """The tags of a server's row where the library whose code it runs gave its very answer:
        ``witness``, and that library's own row on the case (``witness_class``, ``witness_evidence``:
        the library may show more than the server, its text). tokparity.run.decide matches the
        library's known divergences against that row."""
        if isinstance(want, CaseFailure) or not isinstance(got, ChatAnswer):
            return {}
        for library in self.witness_of.get(name, ()):
            theirs = self._asked(library, conversation, want, asked)
            if _same_answer(got, theirs):
                own = self._judge(want, theirs, library)
                return {"witness": library} | ({"witness_class": own[0], "witness_evidence": own[1]} if own else {})
        return {}

    def _asked(self, name: str, conversation: Conversation, want: object, asked: dict[str, object]) -> object:
        if name not in asked:
            asked[name] = self._ask(name, conversation, want)
        return asked[name]

    def _ask(self, name: str, conversation: Conversation, want: object) -> object:
        """What ``name`` makes of the conversation: a backend's chat op, or one of the template's own
        checks (``template:specials`` judges the expected prompt itself: skipped where it was refused
        or is empty, which every engine matches and proves nothing)."""
        if name == SPECIALS_CHECK:
            return want if isinstance(want, ChatAnswer) and not want.raised and (want.text or want.ids) else None
        if name == PARTS_CHECK:
            return self._parts_twin(conversation)
        if name == TEMPLATE_CHECK:
            return ask_op(lambda: self.reference.answer(conversation))
        answer = ask_op(lambda: self.backends[name].chat(conversation))
        if isinstance(answer, ChatAnswer) and answer.ids:
            # (such an id would make the journal unreadable; so many ids, its reports huge. The ids
            # are bounded by the longest text they could stand for: either prompt, or the conversation)
            texts = [want.text if isinstance(want, ChatAnswer) else None, answer.text, conversation.to_text()]
            prompt = max((t for t in texts if t), key=len)
            if (wrong := outside_every_vocabulary(answer.ids) or too_many_ids(answer.ids, prompt)) is not None:
                return CaseFailure(f"{name}: {wrong}")
        return answer

    def _parts_twin(self, conversation: Conversation) -> ChatAnswer | CaseFailure | None:
        """The template's own check: the reference's prompt for the conversation with each string
        content sent as a list of one text part; None (skipped) where there is no string content,
        or where the template refuses parts here (it does not claim to take them)."""
        if not any(isinstance(m.get("content"), str) for m in conversation.messages):
            return None
        twin = ask_op(lambda: self.reference.answer(conversation, PARTS_WAY))
        return None if isinstance(twin, ChatAnswer) and twin.raised else twin  # type: ignore[return-value]

    def _judge(self, want: object, got: object, name: str) -> tuple[str, str, int] | None:
        for side, answer in (("the reference", want), (name, got)):
            if isinstance(answer, CaseFailure):
                cls = answer.status if answer.status in ("crash", "timeout") else "crash"
                return cls, f"chat failed on {side}'s side: {single_line(answer.detail or answer.status)}", 0
        assert isinstance(want, ChatAnswer) and isinstance(got, ChatAnswer)
        if name == SPECIALS_CHECK:
            return self.specials.split(got)
        special = self.vocab.special_ids
        return judge_chat(want, got, special.get("bos"), special.get("eos"))

    def _pieces(self, ids: list[int] | None) -> list[str]:
        return self.vocab.pieces_of(ids or [])


def _same_answer(got: ChatAnswer, theirs: object) -> bool:
    """Whether a library answered as the engine did: both refused, or the same ids and text on
    whatever the engine gave (an engine that gave nothing gave no answer to share)."""
    if not isinstance(theirs, ChatAnswer) or bool(got.raised) != bool(theirs.raised):
        return False
    if not got.raised and got.ids is None and got.text is None:
        return False
    return bool(got.raised) or ((got.ids is None or got.ids == theirs.ids) and
                                (got.text is None or got.text == theirs.text))
