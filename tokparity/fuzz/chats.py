"""``fuzz --ops chat``: conversations made at random, judged by the chat judge (tokparity.run.chat)
as ``compare --ops chat`` judges them, each distinct cause per backend shrunk to its smallest
conversation.

A conversation mixes what templates and their engines get wrong: a system message or none, roles
out of turn, padded, empty and multi-line contents, non-ASCII and emoji, contents that start or
end with a space only some engines strip (U+FEFF, U+0085, U+001F: the encode seams' spaces), the vocabulary's own
special-token texts inside a message, contents as lists of parts, tools, tool calls with object
and string arguments and their results, reasoning, the generation prompt on or off, a continued
last message. A mismatch is keyed as a compare run decides it (its cause, else
``unexplained:CLASS``, or the known divergence); the first of each key is shrunk by taking
messages out, then tools and options, then halving each content, while the backend still differs
under the same key.

No journal: a chat fuzz run is not resumed (it is cheap to run again with the same seed).
"""

from __future__ import annotations

import copy
import random
import time
from dataclasses import dataclass

from tokparity.chat import TEMPLATE_CHECKS
from tokparity.chat.conversation import Conversation
from tokparity.corpus import Case
from tokparity.errors import TokparityError
from tokparity.fuzz.ids import PROGRESS_EVERY, finding_key
from tokparity.fuzz.seams import SPACE_SEAMS
from tokparity.records import Mismatch
from tokparity.run.options import CompareOptions
from tokparity.run.pipeline import ModelPipeline
from tokparity.run.results import FoundCause, FuzzSummary, Results, ResultsSoFar

SHRINK_SECONDS = 10.0  # per finding
CORPUS = "fuzz-chats"
WORDS = ("Hello", "world", "tokenizer", "Zürich", "naïve café", "東京", "مرحبا", "🤗", "👩‍👩‍👧", "x != y", "don't",
         "{{ braces }}", "{% raw %}", "<b>bold</b> & 'quotes'", "  padded  ", "\ttab", "line\nbreak", "\n\n", "")
TOOL = {"type": "function", "function": {"name": "lookup", "description": "Look something up",
                                         "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                                                        "required": ["q"]}}}


@dataclass
class ChatFinding:
    backend: str
    key: str
    case: Case  # shrunk
    mismatch: Mismatch  # of the shrunk case
    original: Case
    count: int
    found_after: float
    shrink_seconds: float


class ConversationSource:
    """Random conversations (the same ones for the same seed and specials)."""

    def __init__(self, specials: list[str], seed: int):
        self.rng = random.Random(f"chats:{seed}")
        self.specials = specials[:64]
        self.n = 0

    def text(self) -> str:
        rng = self.rng
        parts = [rng.choice(WORDS) for _ in range(rng.randrange(1, 5))]
        if self.specials and rng.random() < 0.2:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(self.specials))
        text = " ".join(parts) if rng.random() < 0.8 else "".join(parts)
        if rng.random() < 0.25:  # a space only some engines take for one, where a template trims
            space = chr(rng.choice(SPACE_SEAMS))
            text = rng.choice((space + text, text + space, space + text + space))
        return text

    def content(self) -> str | list:
        if self.rng.random() < 0.15:
            return [{"type": "text", "text": self.text()} for _ in range(self.rng.randrange(1, 3))]
        return self.text()

    def next(self) -> Case:
        rng = self.rng
        messages: list[dict] = []
        if rng.random() < 0.4:
            messages.append({"role": "system", "content": self.content()})
        tools = [TOOL] if rng.random() < 0.2 else None
        for turn in range(rng.randrange(1, 5)):
            role = "user" if turn % 2 == 0 or rng.random() < 0.1 else "assistant"
            message: dict = {"role": role, "content": self.content()}
            if role == "assistant" and rng.random() < 0.15:
                message["reasoning_content"] = self.text()
            messages.append(message)
            if tools and role == "user" and rng.random() < 0.5:
                arguments: object = {"q": self.text()}
                if rng.random() < 0.5:
                    import json
                    arguments = json.dumps(arguments, ensure_ascii=False)
                messages.append({"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": arguments}}]})
                messages.append({"role": "tool", "tool_call_id": "call_1", "name": "lookup", "content": self.text()})
        options: dict = {"date_string": "26 Jul 2024"}
        if messages[-1]["role"] == "assistant" and isinstance(messages[-1]["content"], str) and \
                messages[-1]["content"].strip() and rng.random() < 0.3:
            options["continue_final_message"] = True
        else:
            options["add_generation_prompt"] = rng.random() < 0.8
        if rng.random() < 0.2:
            options["enable_thinking"] = rng.random() < 0.5
        self.n += 1
        return as_case(f"fuzz-chat-{self.n}", Conversation(messages, tools, options))


def as_case(case_id: str, conversation: Conversation) -> Case:
    return Case(case_id, conversation.to_text(), CORPUS, {"chat": "fuzz"})


def run_chat_fuzz(spec: str, backend_names: list[str] | None, options: CompareOptions, seconds: float,
                  seed: int, shrink_seconds: float | None = None, exitfirst: bool = False,
                  cases: int | None = None) -> tuple[Results, list[ChatFinding], int, str]:
    """Fuzz ``--ops chat`` on one model for ``seconds``, and at most ``cases`` conversations when
    given. Each finding is shrunk for ``shrink_seconds`` (``SHRINK_SECONDS`` by default).
    ``exitfirst``: stop at the first finding, once shrunk. The fuzz stops too once the model's
    template is given up on (it loops, or needs too much memory): the last item says why, else "".
    Every later conversation would fail at once, and be counted, judging nothing."""
    from tokparity import __version__

    started = time.perf_counter()
    results = ResultsSoFar(options={"add_special": options.add_special, "parse_special": options.parse_special})
    pipeline: ModelPipeline | None = None
    findings: dict[tuple[str, str], ChatFinding] = {}
    n = 0
    given_up = ""
    try:  # (a stop while the backends start too: the reports are written, of nothing yet)
        pipeline = ModelPipeline.open(spec, backend_names, options, results)
        run = pipeline.run
        if run.chatting is None or not [n for n in run.chatting.compared if n not in TEMPLATE_CHECKS]:
            raise TokparityError(f"nothing to fuzz on {run.model.name}: " + (
                "its files carry no chat template" if run.chatting is None else
                "no backend applies chat templates beside the reference; name one with -b"))
        specials = [t for t in run.vocab.special_texts().values() if len(t) > 1]
        source = ConversationSource(specials, seed)
        began = said = time.perf_counter()  # (the budget leaves loading out, as a fuzz of texts does)
        until = began + seconds
        while time.perf_counter() < until and (cases is None or n < cases):
            case = source.next()
            record = run.chat_record(case, n)
            pipeline.count([record])
            for m in pipeline.diagnose_new():  # (each diagnosed once: the verdicts at the end take them)
                key = finding_key(m)
                found = findings.get((m.backend, key))
                if found is not None:
                    found.count += 1
                    continue
                shrink_started = time.perf_counter()
                shrunk, last = _shrink(pipeline, case, m, key, SHRINK_SECONDS if shrink_seconds is None else shrink_seconds)
                findings[(m.backend, key)] = ChatFinding(m.backend, key, shrunk, last, case, 1,
                                                         shrink_started - began, time.perf_counter() - shrink_started)
            n += 1
            if time.perf_counter() - said >= PROGRESS_EVERY:
                said = time.perf_counter()
                options.say(f"fuzz {run.model.name} --ops chat: {said - began:.0f}/{seconds:.0f} s, {n} conversations, "
                            f"{len(findings)} findings")
            given_up = run.chatting.reference.given_up()
            if (exitfirst and findings) or given_up:
                break
    except KeyboardInterrupt:
        results.interrupted = True
    finally:
        if pipeline is not None:
            pipeline.diagnose(None, everything=False)
            pipeline.close()
    if pipeline is not None:
        results.runs.extend(pipeline.settle())
    listed = list(findings.values())
    fuzz = FuzzSummary(seed, seconds, n, {"gen:chats": n}, {}, [_found(f, i) for i, f in enumerate(listed, 1)], [])
    return results.final(__version__, time.perf_counter() - started, fuzz=fuzz), listed, n, given_up


def _smaller(conversation: Conversation):
    """Conversations one step smaller than ``conversation``, the biggest steps first."""
    messages = conversation.messages
    for k in range(len(messages)):
        if len(messages) > 1:
            yield Conversation(messages[:k] + messages[k + 1:], conversation.tools, conversation.options)
    if conversation.tools is not None:
        yield Conversation(messages, None, conversation.options)
    for key in conversation.options:
        if key not in ("add_generation_prompt", "continue_final_message"):
            yield Conversation(messages, conversation.tools, {k: v for k, v in conversation.options.items() if k != key})
    for k, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, str) and len(content) > 1:
            for cut in (content[:len(content) // 2], content[len(content) // 2:]):
                smaller = copy.deepcopy(messages)
                smaller[k]["content"] = cut
                yield Conversation(smaller, conversation.tools, conversation.options)
        elif isinstance(content, list) and len(content) > 1:
            smaller = copy.deepcopy(messages)
            smaller[k]["content"] = content[:1]
            yield Conversation(smaller, conversation.tools, conversation.options)


def _shrink(pipeline: ModelPipeline, case: Case, first: Mismatch, key: str, seconds: float) -> tuple[Case, Mismatch]:
    """``case``'s conversation made smaller, for ``seconds``, while ``first``'s backend still differs
    under ``key``."""
    run = pipeline.run
    best, best_m = case, first
    until = time.perf_counter() + seconds
    shrinking = True
    while shrinking and time.perf_counter() < until:
        shrinking = False
        for smaller in _smaller(Conversation.from_text(best.text, best.id)):
            if time.perf_counter() >= until:
                break
            try:
                candidate = as_case(best.id, Conversation.from_record(
                    {"messages": smaller.messages, "tools": smaller.tools, "options": smaller.options}, best.id))
            except TokparityError:
                continue
            record = run.chat_record(candidate, -1)
            same = next((d for d in (pipeline.decided(j) for j in record.judgements
                                     if j.backend == first.backend) if finding_key(d) == key), None)
            if same is not None:
                best, best_m, shrinking = candidate, same, True
                break
    return best, best_m


def _found(f: ChatFinding, number: int) -> FoundCause:
    """The finding as summary.json lists it: its conversation (JSON), and each side's ids."""
    from tokparity.fuzz.findings import key_label

    m = f.mismatch
    return FoundCause(f"chat-{number}", f.backend, m.oracle, m.cause, f.key, key_label(f.key), m.cls,
                      f.case.text, f.count, round(f.found_after, 3), round(f.shrink_seconds, 3),
                      m.known, f.original.text, list(m.oracle_ids), list(m.backend_ids), list(m.oracle_pieces),
                      list(m.backend_pieces))
