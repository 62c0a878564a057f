"""The causes of ``--ops chat`` mismatches, named by reproduction: the reference's prompt made
another way, one named step or several at once (tokparity.chat.reference.ChatWay), gives the
backend's prompt exactly: its ids where it gave ids, its text where it gave text, or the same
refusal.

The smallest set of ``ChatVariant``s that reproduces the backend's prompt names the cause: up to
three ways of writing the text at once, and on top of them the ways of encoding it (a BOS put
first, special-token text not parsed), so an engine with several bugs gets all of them named.
Other sets found with as many ways of writing the text are its alternatives. None is named where
none reproduces it: the class stays the judge's.
The catalogue (docs/catalogue/causes.md, "Chat causes") describes each name with its real cases.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations, islice, product
from os.path import commonprefix

from tokparity.chat import RAISED_SHOWN, ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import EMPTY_CONVERSATION, TRANSFORMERS_WAY, ChatReference, ChatWay
from tokparity.chat.render import TOJSON_TRAITS
from tokparity.diagnose.info import of_stage
from tokparity.diagnose.verdict import proven
from tokparity.errors import BackendTimeout, BadConversation, CaseFailure, TemplateRaised
from tokparity.records import BREAKS_LISTED, Diagnosis, Judgement, RootCause

MAX_AT_ONCE = 3
# The search's budget per mismatch, counted in work and not in seconds, so that no answer depends on
# the machine's speed: the characters of the prompts it renders and encodes. A long prompt must not
# hold the run; a short one is searched in full (every way of up to MAX_AT_ONCE causes, at once).
SEARCH_CHARS = 40_000_000


@dataclass(frozen=True)
class ChatVariant:
    name: str
    does: str  # what the backend does, as a sentence after "the backend"
    changes: tuple[tuple[str, object], ...]  # ChatWay fields (render switches included) and their values
    fix: str = ""
    library: str = ""  # tried only for a backend that is this library (llama.cpp's own built-ins)
    others_than: str = ""  # tried only for a backend that is not this library

    def way(self, base: ChatWay = TRANSFORMERS_WAY) -> ChatWay:
        return base.changed(**dict(self.changes))

    def applies(self, backend: str) -> bool:
        """Whether the search tries this way for ``backend``: a cause names a library only for
        that library (another engine that writes the same format is named for what it does)."""
        def named(library: str) -> bool:
            return backend == library or backend.startswith(library + "@")
        return (not self.library or named(self.library)) and not (self.others_than and named(self.others_than))


def _declared(name: str, entry: dict) -> list[ChatVariant]:
    """A cause's ways: its changes, then each of its other forms (a joiner of two turns: a blank
    line, a newline…). A cause whose value is read off the backend's prompt alone has none."""
    forms = ([entry["changes"]] if entry["changes"] else []) + list(entry.get("forms", []))
    return [ChatVariant(name, form.get("does", entry["does"]), tuple((k, v) for k, v in form.items() if k != "does"),
                        entry["fix"], entry.get("library", ""), entry.get("others_than", "")) for form in forms]


# Each way is declared once, in causes.toml (its words and the ChatWay fields it changes), in the
# order the search tries them.
CHAT_CAUSES = of_stage("chat")
VARIANTS = tuple(v for name, entry in CHAT_CAUSES.items() for v in _declared(name, entry))
# (a cause by its first way: its forms may say narrower words, each its own)
BY_NAME = {v.name: v for v in reversed(VARIANTS)} | {name: ChatVariant(name, entry["does"], (), entry["fix"])
                                             for name, entry in CHAT_CAUSES.items() if not entry["changes"]}
ORDER = {name: k for k, name in enumerate(CHAT_CAUSES)}
# The causes whose value is read off the backend's prompt (the text of the system message it adds,
# the words its raise_exception writes): cause -> the ChatWay field (tokparity.diagnose.chat.derived).
DERIVED = {name: entry["derived"] for name, entry in CHAT_CAUSES.items() if "derived" in entry}
MARK = "\ue000"  # a private-use character, which no template writes: where a field's value lands
# The values of those fields that declared causes try already (an empty system message, the message
# alone, nothing): a value read off a prompt that is one of them is left to its declared cause.
DECLARED_VALUES = {key: {value for v in VARIANTS for k, value in v.changes if k == key} for key in DERIVED.values()}
# The ways that change only how the prompt's text becomes ids (a BOS put first, special-token text
# not parsed): tried on top of each way of writing the text, so they never take a place of the cap.
ID_FIELDS = ("add_bos", "parse_special")
TEXT_VARIANTS = tuple(v for v in VARIANTS if not all(key in ID_FIELDS for key, _ in v.changes))
ENCODINGS = tuple(c for size in range(len(VARIANTS) - len(TEXT_VARIANTS) + 1)
                  for c in combinations(tuple(v for v in VARIANTS if v not in TEXT_VARIANTS), size))


def _combined(variants: tuple[ChatVariant, ...]) -> ChatWay | None:
    """One way with every variant's changes (None where two set the same field differently)."""
    changes: dict[str, object] = {}
    for v in variants:
        for key, value in v.changes:
            if key in changes and changes[key] != value:
                return None
            changes[key] = value
    return TRANSFORMERS_WAY.changed(**changes)


def _backend_answer(j: Judgement) -> ChatAnswer:
    """The backend's prompt as the judge kept it (``tags["gave"]``: text, ids or both)."""
    output = j.backend_output[0] if j.backend_output else None
    if output is not None and output.startswith(RAISED_SHOWN):
        return ChatAnswer(raised=output)
    gave = j.tags.get("gave", "both")
    return ChatAnswer(output if gave != "ids" else None, list(j.backend_ids) if gave != "text" else None)


# A refusal that names what the template lacked: a variable, a filter, a test, or any message at
# all (transformers' refusal of an empty conversation). Only such a message says why two refusals
# are one; a generic error (an index out of range, a raise_exception text that any broken
# alternation reaches) does not.
NAMED_LACK = re.compile(r"'[^']+' is undefined|[Nn]o (?:filter|test) named '[^']+'|has no attribute '[^']+'|"
                        r"\w+ object has no element \d+|"
                        + re.escape(EMPTY_CONVERSATION))


def _same(answer: ChatAnswer, got: ChatAnswer) -> bool:
    """Whether a way's prompt is the backend's: its ids where it gave ids, its text where it gave text.
    A refusal reproduces another only where both name the same thing the template lacked ("'bos_token'
    is undefined"). Two engines refuse for their own reasons (a missing filter, an empty list): a
    refusal alone says nothing of which."""
    if got.raised or answer.raised:
        return bool(got.raised and answer.raised) and _same_refusal(answer.raised, got.raised)
    if got.ids is not None and answer.ids != got.ids:
        return False
    # (a BOS shown in the text only beside ids that hold it: an engine that gave text alone wrote its own)
    return got.text is None or answer.text == got.text or bool(
        answer.added_bos and answer.text is not None and got.ids is not None and got.text == answer.added_bos + answer.text)


def _same_refusal(ours: str, theirs: str) -> bool:
    """Whether two refusals are one: both name the same thing the template lacked.

    >>> _same_refusal("UndefinedError: 'bos_token' is undefined", "(the template raised: 'bos_token' is undefined)")
    True
    >>> _same_refusal("IndexError: list index out of range", "(the template raised: list index out of range)")
    False
    >>> _same_refusal("UndefinedError: list object has no element 0", "(the template raised: list object has no element 0)")
    True
    """
    lack = NAMED_LACK.search(ours)
    return lack is not None and lack.group() in theirs


def diagnose_chat(reference: ChatReference, j: Judgement) -> Diagnosis:
    if j.cls == "chat-special-split":  # (the template's own check: the expected prompt against its tokenizer)
        return Diagnosis("", "the expected prompt itself: its tokenizer splits a special token's text the template "
                             "writes, in every engine alike; no way of making the prompt is at fault (see the "
                             "tokenizer's split_special_tokens, and the token's type)", stage="chat")
    conversation = Conversation.from_text(j.text, f"{j.corpus}/{j.case_id}")
    got = _backend_answer(j)
    right = reference.answer(conversation)
    if got.raised and right.raised:  # (both refuse, for two reasons: the judge keeps the row)
        return Diagnosis("", "the backend's template refused the conversation, and so does the model's: a "
                             "refusal reproduces no way of making the prompt (its reason is the engine's own)",
                         stage="chat")
    if _same(right, got):  # (regress: judged by stored prompts, which the template no longer makes)
        return Diagnosis("", "the backend's prompt is the one the model's template makes today: the stored prompts "
                             "were made from another template, tokenizer or tokparity (`regress --update` remakes "
                             "them once the change is reviewed)", stage="chat")
    untried = 0
    encoded: dict[str, tuple[ChatVariant, ...] | None] = {}  # a text -> the way of encoding it that gives the backend's
    try:
        read, spent = derived(reference, conversation, got, right)  # (spent: characters rendered and encoded)
    except BackendTimeout as e:
        return _timed_out(e)
    # (a value read off the prompt stands for its cause here: the declared forms say other words)
    ways = tuple(v for v in TEXT_VARIANTS if v.applies(j.backend) and v.name not in {r.name for r in read}) + read
    said: dict[tuple[str, ...], dict[str, str]] = {}  # a set found -> the words of the forms that gave it first
    bos = reference.template.specials.get("bos_token") or "\ue001"  # (a text no prompt holds where there is no BOS)
    for size in range(0, MAX_AT_ONCE + 1):
        found: list[tuple[str, ...]] = []
        for variants in combinations(ways, size):
            way = _combined(variants)
            if way is None:
                continue
            if spent > SEARCH_CHARS:
                return Diagnosis("", f"not found within {SEARCH_CHARS:,} characters rendered and encoded: the search "
                                     f"stopped after the ways of {max(size - 1, 0)} cause(s) at once", stage="chat")
            try:
                text = reference.text(conversation, way)
            except TemplateRaised as e:  # (a refusal reproduces only the same refusal)
                names = tuple(v.name for v in variants)
                if got.raised and _same_refusal(str(e), got.raised) and names not in found:
                    found.append(names)
                    said[names] = {v.name: v.does for v in variants}
                continue
            except NotImplementedError:  # (a way not taken here)
                continue
            except BackendTimeout as e:
                return _timed_out(e)
            except CaseFailure:  # could not be rendered this way (too big, the renderer died): not tried
                untried += 1
                continue
            spent += len(text)
            if got.text is not None and text != got.text and (got.ids is None or got.text != bos + text):
                continue  # (a BOS text first: the text of a BOS the tokenizer adds, tried among the encodings)
            if text not in encoded:  # (many ways give the same text: each text is encoded once each way)
                encoded[text] = None
                for encoding in ENCODINGS:  # (the same text encoded otherwise: the smallest change first)
                    whole = _combined(variants + encoding)
                    if whole is None:
                        continue
                    try:
                        answer = reference.answer(conversation, whole)
                    except BackendTimeout as e:
                        return _timed_out(e)
                    except CaseFailure:  # (the oracle could not encode it: not tried)
                        untried += 1
                        continue
                    spent += len(text)
                    if _same(answer, got) and not _same(answer, right):
                        encoded[text] = encoding
                        break
            how = encoded[text]
            if how is not None and (names := tuple(v.name for v in variants + how)) not in found:
                found.append(names)  # (two forms of one cause: one set, said in the words of the first found)
                said[names] = {v.name: v.does for v in variants + how}
        if found:
            ranked = sorted(found, key=len)
            return _named(ranked, "ids" if got.ids is not None else "text", said[ranked[0]])
    unrendered = f" ({untried} ways could not be rendered: not tried)" if untried else ""
    return Diagnosis("", f"no way of making the reference's prompt (up to {MAX_AT_ONCE} ways of writing its text at "
                         f"once, and of encoding it) gives the backend's prompt{unrendered}", stage="chat")


def _timed_out(e: BackendTimeout) -> Diagnosis:
    """The search stops at a timeout: what it found after one would depend on the machine's speed."""
    return Diagnosis("", f"not searched further: a render timed out ({e})", stage="chat")


def derived(reference: ChatReference, conversation: Conversation, got: ChatAnswer,
            right: ChatAnswer) -> tuple[tuple[ChatVariant, ...], int]:
    """The ways whose value is read off the backend's prompt, and the characters rendered to read
    them (the search's budget counts them). The template rendered with ``MARK`` where the value
    lands (the content of an added system message, the words raise_exception returns) says where
    to read it. The search still proves each: a value read wrongly reproduces nothing. Only a
    backend that gave its prompt's text can be read so."""
    if got.text is None:
        return (), 0
    out = []
    rendered = 0
    for name, key in DERIVED.items():
        if key == "tojson":
            traits, chars = _tojson_read(reference, conversation, got.text, right.text)
            rendered += chars
            if traits is not None and traits not in DECLARED_VALUES.get(key, ()):
                out.append(_tojson_variant(name, traits.split("+")))
            continue
        if key == "generation_prompt_as":
            value, chars = _generation_prompt_read(reference, conversation, got.text, right.text)
            rendered += chars
            if value is not None:
                entry = CHAT_CAUSES[name]
                out.append(ChatVariant(name, f"{entry['does']}: {value!r}", ((key, value),), entry["fix"]))
            continue
        if key == "system_default" and not any(m.get("role") == "system" for m in conversation.messages):
            marked = TRANSFORMERS_WAY.changed(system_default=MARK)
        elif key == "raise_exception" and right.raised:
            marked = TRANSFORMERS_WAY.changed(raise_exception=MARK + "{message}" + MARK)
        else:
            continue
        text = _rendered(reference, conversation, marked)
        if text is None:
            continue
        rendered += len(text)
        parts = text.split(MARK)
        if key == "raise_exception":  # (head, message, what follows up to the next call's message, …)
            value = _read_off(parts[:3], got.text) if len(parts) >= 3 and len(parts) % 2 and parts[2] else None
            value = value.replace(parts[1], "{message}", 1) if value is not None and parts[1] else value
        else:
            value = _read_off(parts, got.text) if len(parts) == 2 else None
        if value is None or value in DECLARED_VALUES.get(key, ()):  # (the declared ways: tried already)
            continue
        entry = CHAT_CAUSES[name]
        out.append(ChatVariant(name, f"{entry['does']}: {value!r}", ((key, value),), entry["fix"]))
    return tuple(out), rendered


def _generation_prompt_read(reference: ChatReference, conversation: Conversation, text: str,
                            right: str | None) -> tuple[str | None, int]:
    """What the backend writes in place of the template's generation prompt, and the characters
    rendered to read it: its prompt less the template's prompt without one. None where no
    generation prompt is asked, or where the two prompts part before it."""
    if right is None or not conversation.add_generation_prompt:
        return None, 0
    head = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(generation_prompt=False))
    if head is None or not text.startswith(head) or not right.startswith(head):
        return None, len(head or "")
    own, template = text[len(head):], right[len(head):]
    # (none at all is chat.generation-prompt-missing's; a text far longer than the template's is the
    # rest of a prompt, not its generation prompt)
    return (own if own not in ("", template) and len(own) <= 2 * len(template) + 32 else None), len(head)


def _rendered(reference: ChatReference, conversation: Conversation, way: ChatWay) -> str | None:
    """The reference's prompt made ``way``; None where that way makes none (refused, not taken
    here, too big to render). A timeout stops the search: it is raised."""
    try:
        return reference.text(conversation, way)
    except BackendTimeout:
        raise
    except (NotImplementedError, TemplateRaised, CaseFailure):
        return None


def _tojson_read(reference: ChatReference, conversation: Conversation, text: str,
                 right: str | None) -> tuple[str | None, int]:
    """The traits of a tojson (TOJSON_TRAITS) whose prompt comes closest to the backend's ``text``,
    the fewest first, where one comes closer than the right prompt ``right``; None where none
    does, or where the conversation's prompt writes no JSON a trait changes. Closest: the most
    characters shared at the start and the end. Then the characters rendered to find them."""
    def closeness(candidate: str) -> int:
        if candidate == text:  # (the prompt itself: closer than any near one that shares as much)
            return len(text) + 1
        head = len(commonprefix([candidate, text]))
        return head + min(len(commonprefix([candidate[::-1], text[::-1]])), min(len(candidate), len(text)) - head)

    rendered = 0

    def render(traits: tuple[str, ...]) -> str | None:
        nonlocal rendered
        made = _rendered(reference, conversation, TRANSFORMERS_WAY.changed(tojson="+".join(traits)))
        rendered += len(made or "")
        return made

    if right is None or render(TOJSON_TRAITS) in (None, right):
        return None, rendered
    best, best_traits = closeness(right), None
    # (a trait that alone changes nothing here, no '/' to escape, is left out of the combinations)
    singles = {trait: render((trait,)) for trait in TOJSON_TRAITS}
    useful = [trait for trait, made in singles.items() if made is not None and made != right]
    for size in range(1, len(useful) + 1):
        for traits in combinations(useful, size):
            candidate = singles[traits[0]] if size == 1 else render(traits)
            if candidate is not None and closeness(candidate) > best:
                best, best_traits = closeness(candidate), traits
    return ("+".join(best_traits) if best_traits else None), rendered


_TRAIT_WORDS = {"compact": "no space after ',' and ':'", "ascii": "non-ASCII as \\uXXXX", "slash": "'/' as '\\/'",
                "html": "'<', '>' and '&' escaped", "apostrophe": "\"'\" as \\u0027", "sorted": "its keys sorted"}


def _tojson_variant(name: str, traits: Iterable[str]) -> ChatVariant:
    """The tojson of these traits, in words: "writes tojson's JSON with its keys sorted"."""
    ordered = [t for t in TOJSON_TRAITS if t in set(traits)]
    words = [_TRAIT_WORDS[t] for t in ordered]
    said = ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
    return ChatVariant(name, f"writes tojson's JSON with {said}", (("tojson", "+".join(ordered)),), CHAT_CAUSES[name]["fix"])


def _read_off(parts: list[str], text: str) -> str | None:
    """What ``text`` holds where the marked render has its marks: the text between the render's
    head (before the first mark) and the start of its tail (after the last)."""
    head, tail = parts[0], parts[-1]
    if not text.startswith(head):
        return None
    if not tail:
        return text[len(head):]
    end = text.find(tail[:16], len(head))
    return text[len(head):end] if end >= 0 else None


def _named(found: list[tuple[str, ...]], gave: str, does_of: dict[str, str] | None = None) -> Diagnosis:
    """The first set found names the cause; the others are its alternatives."""
    first, others = _in_order(found[0]), [_in_order(f) for f in found[1:]]
    does = "; and ".join((does_of or {}).get(n) or BY_NAME[n].does for n in first)
    also = f"; so do {', '.join('+'.join(f) for f in others)}" if others else ""
    return Diagnosis("+".join(first), f"reproduced: the reference's prompt made as an engine that {does} gives the "
                                      f"backend's {gave} exactly{also}", first, tuple(others), stage="chat")


def prefer_chat(diagnoses: list[Diagnosis], broken: Callable[[tuple[str, ...]], int] = lambda keys: 0
                ) -> list[Diagnosis]:
    """One engine, one cause: where several sets reproduce a conversation, a set that changes none
    of the engine's agreements comes first (``broken``: how many it changes), then the smallest,
    then the one that reproduces the most of the engine's conversations. Qwen3's template writes
    ChatML: an engine that drops the tools is not one that falls back to ChatML where its other
    conversations, the ones ChatML would change, agree. (What the backend gave, ids or text, is
    read off the evidence the search wrote.)"""
    counts: dict[tuple[str, ...], int] = {}
    for d in diagnoses:
        for keys in (d.variants, *d.alternatives):
            counts[keys] = counts.get(keys, 0) + 1
    out = []
    for d in diagnoses:
        sets = [d.variants, *d.alternatives]
        ranked = sorted(sets, key=lambda keys: (broken(keys) > 0, len(keys), -counts[keys]))
        if len(sets) < 2 or ranked[0] == d.variants:
            out.append(d)
            continue
        gave = "ids" if "backend's ids exactly" in d.evidence else "text"
        out.append(_named(ranked, gave))
    return out


def chat_verdict(reference: ChatReference, mine: list[tuple[Judgement, Diagnosis]],
                 agreeing: list[Conversation], labels: Sequence[str] = ()) -> tuple[list[Diagnosis], RootCause | None]:
    """One engine's run-level verdict on its prompts, checked as encode's is. Each conversation's
    cause is chosen as ``prefer_chat`` says, weighing how many of the ``agreeing`` conversations
    each set would change. The verdict is the union of the chosen sets (the engine's bugs): it
    reproduces a conversation where the union, made one way, gives the backend's prompt, and keeps an
    agreement where it leaves the prompt as it is; ``labels`` name the agreements (corpus/id) where
    the verdict lists those it would change. A value read off the backend's prompts (an added
    system message's text) is the one most of its rows read: the union is checked with it."""
    rows = _rows(mine)
    read = _values_read(reference, rows)
    gave = next((j.tags["gave"] for j, _ in mine if "gave" in j.tags), "both")  # (an engine gives one kind)
    rights: dict[int, ChatAnswer] = {}
    for c in agreeing:
        try:
            right = reference.answer(c)
        except CaseFailure:  # (not made in time: nothing to check it with)
            continue
        # (kept as the backend gives it: an engine of ids keeps a prompt whose ids stay)
        rights[id(c)] = ChatAnswer(right.text if gave != "ids" else None, right.ids if gave != "text" else None,
                                   right.raised)
    kept_memo: dict[tuple[str, ...], int] = {}

    def changed(way: ChatWay) -> list[int]:
        """The positions of the agreements ``way`` would change."""
        return [k for k, c in enumerate(agreeing)
                if id(c) in rights and not _same_answer(reference, c, way, rights[id(c)])]

    def broken(keys: tuple[str, ...]) -> int:
        if keys not in kept_memo:  # (of a cause's forms, the one that changes fewest: the engine has one)
            kept_memo[keys] = min((len(changed(way)) for way in _ways(keys, read)), default=len(rights))
        return kept_memo[keys]

    chosen = prefer_chat([d for _, d in mine], broken)
    named = [d.variants for d in chosen if d.variants]
    if not named:
        return chosen, None
    counts: dict[str, int] = {}
    for keys in named:
        for n in keys:
            counts[n] = counts.get(n, 0) + 1
    union = _union(counts, read)
    # (of ways that explain and keep as many, the first; each way's changes computed once)
    explains, keeps, _, broke = max(((_explained(reference, rows, way), len(rights) - len(ks), -k, ks)
                                     for k, way in enumerate(_ways(union, read)) for ks in (changed(way),)),
                                    key=lambda scored: scored[:3], default=(0, 0, 0, []))
    breaks = [labels[k] if k < len(labels) else f"agreement {k + 1}" for k in broke]
    # (an engine that refuses every conversation leaves no agreement to check a cause on: any way
    # that makes the template refuse would read so)
    checked = bool(rights) or not all(_backend_answer(j).raised for j, _ in mine)
    return chosen, RootCause("+".join(union), union, explains, len(mine), keeps, len(rights),
                             checked and proven(explains, len(mine), keeps, len(rights)), 0,
                             tuple(breaks[:BREAKS_LISTED]))


def _union(counts: dict[str, int], read: dict[str, ChatVariant]) -> tuple[str, ...]:
    """The causes the rows name, most named first, as many as one way can make at once: a cause
    that sets a field another one of them sets otherwise is left to its own rows (an engine that
    continues one final message and prefills another is two answers, not one way)."""
    union: tuple[str, ...] = ()
    for name in sorted(counts, key=lambda n: -counts[n]):
        if len(union) == MAX_AT_ONCE + 2:
            break
        tried = _in_order((*union, name))
        if _ways(tried, read):
            union = tried
    return union


def _rows(mine: list[tuple[Judgement, Diagnosis]]) -> list[tuple[Conversation, ChatAnswer, Diagnosis] | None]:
    """Each mismatch's conversation, the backend's answer and its diagnosis (None: not readable)."""
    rows: list[tuple[Conversation, ChatAnswer, Diagnosis] | None] = []
    for j, d in mine:
        try:
            rows.append((Conversation.from_text(j.text, f"{j.corpus}/{j.case_id}"), _backend_answer(j), d))
        except BadConversation:
            rows.append(None)
    return rows


def _values_read(reference: ChatReference, rows: list[tuple[Conversation, ChatAnswer, Diagnosis] | None]
                 ) -> dict[str, ChatVariant]:
    """Each cause whose value is read off a prompt, made with the value most of the rows it names read."""
    seen: dict[str, Counter[ChatVariant]] = {}
    for row in rows:
        if row is None:
            continue
        conversation, got, d = row
        # (a cause among a row's alternatives counts too: the run's verdict may choose it)
        names = set(d.variants) | {n for alt in d.alternatives for n in alt}
        if not names & DERIVED.keys():
            continue
        try:
            read, _rendered_chars = derived(reference, conversation, got, reference.answer(conversation))
        except CaseFailure:
            continue
        for v in read:
            if v.name in names:
                seen.setdefault(v.name, Counter())[v] += 1
    # (a tojson's traits joined: a row whose JSON holds no '/' shows no sign of escaping it)
    return {name: _tojson_variant(name, {t for v in counts for t in str(dict(v.changes)["tojson"]).split("+")})
            if DERIVED[name] == "tojson" else counts.most_common(1)[0][0] for name, counts in seen.items()}


def _ways(names: tuple[str, ...], read: dict[str, ChatVariant]) -> list[ChatWay]:
    """The ways a set of causes makes prompts, one per choice of their forms (a joiner of two turns:
    a blank line, a newline…; a value read off the prompts); none where two of them set one field."""
    forms = [[read[n]] if n in read else [v for v in VARIANTS if v.name == n] for n in names]
    return [way for choice in islice(product(*forms), 16) if (way := _combined(choice)) is not None]


def _explained(reference: ChatReference, rows: list[tuple[Conversation, ChatAnswer, Diagnosis] | None],
               way: ChatWay) -> int:
    """How many of the engine's mismatches ``way`` (the union's) gives exactly."""
    explains = 0
    for row in rows:
        if row is None:
            continue
        try:
            explains += _same(reference.answer(row[0], way), row[1])
        except (CaseFailure, NotImplementedError):
            continue
    return explains


def _same_answer(reference: ChatReference, conversation: Conversation, way: ChatWay, right: ChatAnswer) -> bool:
    """Whether ``way`` leaves an agreeing conversation's prompt as it is (what the backend gives of it,
    its text, its ids or both, as ``right`` holds them; or the same refusal)."""
    try:
        answer = reference.answer(conversation, way)
    except CaseFailure:
        return True  # (not made this way in time: nothing to say against it)
    except NotImplementedError:  # (a way that cannot make this conversation's prompt does not keep it)
        return False
    if right.raised or answer.raised:
        return bool(right.raised) == bool(answer.raised)
    return _same(answer, right)


def _in_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """Cause names in the order the catalogue declares them."""
    return tuple(sorted(names, key=lambda n: ORDER[n]))
