"""The causes of ``--ops chat`` mismatches, named by reproduction: the reference's prompt made
another way, one named step or several at once (tokparity.chat.way.ChatWay), gives the
backend's prompt exactly: its ids where it gave ids, its text where it gave text, or the same
refusal.

The smallest set of ``ChatVariant``s that reproduces the backend's prompt names the cause: up to
three ways of writing the text at once, and on top of them the ways of encoding it (a BOS put
first, special-token text not parsed) and a BOS text left out, so an engine with several bugs gets
all of them named. Other sets found with as many ways of writing the text are its alternatives.
A set of three is not rendered where one of its ways changes nothing in this prompt, alone and
beside each of the two others. A set of two or three is not rendered where one of its ways, alone,
changes the prompt before the backend's first change or after its last (``_Spared``).
A row none reproduces is tried, once the engine's other rows are in, with sets of up to seven of
the causes they show (``_composed``). None is named where none reproduces it: the class stays the
judge's.
The catalogue (docs/catalogue/causes.md, "Chat causes") describes each name with its real cases.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain, combinations, islice, product
from os.path import commonprefix

from tokparity.chat import RAISED_SHOWN, ChatAnswer
from tokparity.chat.conversation import Conversation
from tokparity.chat.reference import BOTH_ASKED, EMPTY_CONVERSATION, OWN_CHECK, ChatReference, own_refusal
from tokparity.chat.way import ChatWay
from tokparity.diagnose.chat_read import derived
from tokparity.diagnose.chat_values import values_read
from tokparity.diagnose.chat_ways import (
    BY_NAME,
    ENCODINGS,
    NO_BOS_TEXT,
    ORDER,
    TEXT_VARIANTS,
    VARIANTS,
    ChatVariant,
    combined,
)
from tokparity.diagnose.verdict import proven
from tokparity.errors import BackendTimeout, BadConversation, CaseFailure, TemplateRaised
from tokparity.records import BREAKS_LISTED, Diagnosis, Judgement, RootCause

MAX_AT_ONCE = 3
# An engine's bugs are the same on each of its rows: a row no way of MAX_AT_ONCE causes reproduces is
# tried with more at once, drawn from the causes its other rows show (at most this many of them).
MAX_POOL = 7
FEWER_TRIED = 3  # (the shorter sets of causes a verdict that is not proven weighs, most named first)
CHOICES_TRIED = 16  # (the choices of forms a set of causes is checked with, at most; the first cause's forms change slowest)
COMPOSED_TRIES = 192  # (the sets tried on one row, at most: the pool's 98 and the catalogue's 77 fit)
NO_WAY = "no way of making the reference's prompt"  # (how the search says it found none)
NOT_FOUND = "not found within"  # (how it says its budget ran out first)
# The search's budget per mismatch, counted in work and not in seconds, so that no answer depends on
# the machine's speed: the characters of the prompts it renders and encodes. A long prompt must not
# hold the run; a short one is searched in full (every way of up to MAX_AT_ONCE causes, at once).
SEARCH_CHARS = 40_000_000


def _backend_answer(j: Judgement) -> ChatAnswer:
    """The backend's prompt as the judge kept it (``tags["gave"]``: text, ids or both)."""
    output = j.backend_output[0] if j.backend_output else None
    if output is not None and output.startswith(RAISED_SHOWN):
        return ChatAnswer(raised=output)
    gave = j.tags.get("gave", "both")
    return ChatAnswer(output if gave != "ids" else None, list(j.backend_ids) if gave != "text" else None)


# A refusal that names what the template lacked: a variable, a filter, a test, or any message at
# all (transformers' refusal of an empty conversation). transformers' refusal of a generation prompt
# asked with a continued message is named too. Only such a message says why two refusals are one;
# a generic error (an index out of range, a raise_exception text that any broken alternation
# reaches) does not.
NAMED_LACK = re.compile(r"'[^']+' is undefined|[Nn]o (?:filter|test) named '[^']+'|has no attribute '[^']+'|"
                        r"\w+ object has no element \d+|can only concatenate str \(not \"\w+\"\) to str|"
                        + re.escape(EMPTY_CONVERSATION) + "|" + re.escape(BOTH_ASKED))


TEMPLATE_LACK = re.compile(r"'[^']+' is undefined|[Nn]o (?:filter|test) named '[^']+'")  # (a Jinja engine's own gap)
# The words a template's own raise_exception gives (Gemma's "Conversation roles must alternate…"):
# the same words from both sides are the same check of the template, failed by the same conversation.
TEMPLATE_WORDS = re.compile(r"TemplateError: (.{12,})")


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
    """Whether two refusals are one: both name the same thing the template lacked, or both give the
    words of the template's own raise_exception.

    >>> _same_refusal("UndefinedError: 'bos_token' is undefined", "(the template raised: 'bos_token' is undefined)")
    True
    >>> _same_refusal("IndexError: list index out of range", "(the template raised: list index out of range)")
    False
    >>> _same_refusal("UndefinedError: list object has no element 0", "(the template raised: list object has no element 0)")
    True
    >>> _same_refusal('TypeError: can only concatenate str (not "list") to str',
    ...               '(the template raised: TypeError: can only concatenate str (not "list") to str)')
    True

    The template's own raise_exception, in the same words on both sides, is one refusal too:

    >>> _same_refusal("TemplateError: Conversation roles must alternate user/assistant/user/assistant/...",
    ...               "TemplateError: Conversation roles must alternate user/assistant/user/assistant/...")
    True

    A way that refuses by an engine's own check is a refusal of the backend's that names no lack of
    the template's (a Jinja engine without a filter is not refusing parts); a role refused must
    be named in it.

    >>> _same_refusal("(the engine's own check) the role 'tool' is none of system, user, assistant",
    ...               "(the template raised: ValueError: Invalid role 'tool' for Qwen)")
    True
    >>> _same_refusal("(the engine's own check) a content given as a list of parts, not a string",
    ...               "(the template raised: no test named 'iterable')")
    False
    """
    if ours.startswith(OWN_CHECK):
        role = re.search(r"the role ('[^']*')", ours)
        return bool(theirs) and not TEMPLATE_LACK.search(theirs) and (role is None or role.group(1) in theirs)
    lack = NAMED_LACK.search(ours)
    words = TEMPLATE_WORDS.match(ours)
    return lack is not None and lack.group() in theirs or words is not None and words.group(1) in theirs


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
    out_of_reach = _ids_out_of_reach(reference, got)
    if out_of_reach:
        return Diagnosis("", out_of_reach, stage="chat")
    untried = 0
    encoded: dict[str, tuple[ChatVariant, ...] | None] = {}  # a text -> the way of encoding it that gives the backend's
    try:
        read, spent = derived(reference, conversation, got, right)  # (spent: characters rendered and encoded)
    except BackendTimeout as e:
        return _timed_out(e)
    # (a value read off the prompt stands for its cause here: the declared forms say other words)
    ways = tuple(v for v in TEXT_VARIANTS if v.applies(j.backend) and v.name not in {r.name for r in read}) + read
    # A refusal that names nothing the template lacked is reproduced by an engine's own check alone
    # (_same_refusal). That check reads the request before any render: no way that passes it is rendered.
    own_checks_only = bool(got.raised) and not NAMED_LACK.search(got.raised or "") \
        and not TEMPLATE_WORDS.search(got.raised or "")
    # A set of ways refuses by its own check only where one of its ways does alone: a check is one
    # way's field. So only sets that hold such a way are made (most sets are never built).
    # (the ways by identity: a variant's own hash reads every field, and most sets are skipped here)
    refusing = {id(v) for v in ways if (w := combined((v,))) is not None and own_refusal(conversation, w)}
    if own_checks_only and not refusing:
        ways = ()  # (no set refuses: only the empty set is looked at, and it refuses nothing either)
    said: dict[tuple[str, ...], dict[str, str]] = {}  # a set found -> the words of the forms that gave it first
    bos = reference.template.specials.get("bos_token") or "\ue001"  # (a text no prompt holds where there is no BOS)
    later: list[tuple[str, ...]] = []  # (sets found with a BOS text left out: one way more, weighed a size later)
    spared = _Spared(got.text if got.text != right.text else None, bos)
    for size in range(0, MAX_AT_ONCE + 1):
        found, later = later, []
        for variants in combinations(ways, size):
            if own_checks_only and refusing.isdisjoint(map(id, variants)) or spared.spares(variants):
                continue
            way = combined(variants)
            if way is None or own_checks_only and not own_refusal(conversation, way):
                continue
            if spent > SEARCH_CHARS:
                return Diagnosis("", f"{NOT_FOUND} {SEARCH_CHARS:,} characters rendered and encoded: the search "
                                     f"stopped after the ways of {max(size - 1, 0)} cause(s) at once", stage="chat")
            try:
                text = reference.text(conversation, way)
                spared.saw(variants, text)
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
            if got.text is not None and text != got.text and text.startswith(bos) and got.text == text[len(bos):] \
                    and NO_BOS_TEXT not in variants and (whole := combined(variants + (NO_BOS_TEXT,))) is not None:
                try:  # (rendered again: a template may read bos_token elsewhere too)
                    again = reference.text(conversation, whole)
                    spent += len(again)
                    if again == got.text:
                        variants, text = variants + (NO_BOS_TEXT,), got.text
                except BackendTimeout as e:  # (first: a timeout is a CaseFailure too)
                    return _timed_out(e)
                except (TemplateRaised, CaseFailure, NotImplementedError):
                    pass
            if got.text is not None and text != got.text and (got.ids is None or got.text != bos + text):
                continue  # (a BOS text first: the text of a BOS the tokenizer adds, tried among the encodings)
            if text not in encoded:  # (many ways give the same text: each text is encoded once each way)
                encoded[text] = None
                for encoding in ENCODINGS:  # (the same text encoded otherwise: the smallest change first)
                    whole = combined(variants + encoding)
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
            kept = found if len(variants) == size else later
            if how is not None and (names := tuple(v.name for v in variants + how)) not in kept:
                kept.append(names)  # (two forms of one cause: one set, said in the words of the first found)
                said[names] = {v.name: v.does for v in variants + how}
        if found:
            ranked = sorted(found, key=len)
            return _named(ranked, "ids" if got.ids is not None else "text", said[ranked[0]])
    if later:
        ranked = sorted(later, key=len)
        return _named(ranked, "ids" if got.ids is not None else "text", said[ranked[0]])
    unrendered = f" ({untried} ways could not be rendered: not tried)" if untried else ""
    return Diagnosis("", f"{NO_WAY} (up to {MAX_AT_ONCE} ways of writing its text at "
                         f"once, and of encoding it) gives the backend's prompt{unrendered}", stage="chat")


class _Spared:
    """The sets of ways a search need not render, read off its own renders of one conversation.

    A way is idle in a set of three where the prompt is the same with it as without it: alone, and
    beside each of the two others. A way strays where, alone, it changes the prompt before the
    backend's first change or after its last (``got``: the backend's text, None where it gave the
    reference's own or none). A way that changes the prompt's first or last character never strays:
    it acts on whatever the others leave there (a trailing newline dropped after a generation
    prompt added). Two assumptions make this sound: a way idle beside each of two others stays idle
    beside both, and no way undoes another's change. Where one fails, a smallest set of two or three
    may go unfound."""

    def __init__(self, got: str | None, bos: str) -> None:
        self._got, self._bos = got, bos
        self._texts: dict[tuple[int, ...], str] = {}  # (the ways by identity) -> the prompt; sets of 0 and 1
        self._idle_beside: set[tuple[int, int]] = set()  # (way, other): way changes nothing beside other
        self._strays: set[int] = set()
        self._shared = (0, 0)  # (the backend's prompt: the characters it shares with the plain one, first and last)

    def saw(self, variants: tuple[ChatVariant, ...], text: str) -> None:
        """Keep what a rendered set shows (sets of up to two ways)."""
        keys = tuple(map(id, variants))
        if not keys:
            self._texts[keys] = text
            if self._got is not None:
                # (a BOS text first on the backend's side only may be the encoder's: both are read)
                gots = [self._got] + ([self._got[len(self._bos):]] if self._got.startswith(self._bos) else [])
                ends = [_shared_ends(text, got) for got in gots]
                first = 0 if self._got.startswith(self._bos) != text.startswith(self._bos) else min(e[0] for e in ends)
                self._shared = (first, min(e[1] for e in ends))
        elif len(keys) == 1:
            self._texts[keys] = text
            plain = self._texts.get(())
            if self._got is not None and plain is not None and text != plain:
                first, last = _shared_ends(plain, text)
                if first > 0 and last > 0 and (first < self._shared[0] or last < self._shared[1]):
                    self._strays.add(keys[0])
        elif len(keys) == 2:
            a, b = keys
            if self._texts.get((a,)) == text:
                self._idle_beside.add((b, a))
            if self._texts.get((b,)) == text:
                self._idle_beside.add((a, b))

    def spares(self, variants: tuple[ChatVariant, ...]) -> bool:
        """Whether a set need not be rendered: it holds a way that strays, or, of three, one idle."""
        if len(variants) < 2:
            return False
        keys = tuple(map(id, variants))
        if not self._strays.isdisjoint(keys):
            return True
        plain = self._texts.get(())
        return len(keys) == 3 and plain is not None and any(
            self._texts.get((k,)) == plain and all((k, o) in self._idle_beside for o in keys if o != k) for k in keys)


def _shared_ends(plain: str, other: str) -> tuple[int, int]:
    """How many characters two texts share at their start and at their end. Each is read alone:
    where a text is written in, the two overlap, and each says no more than that the change ends
    or starts beyond it.

    >>> _shared_ends("<s>[INST] Hi [/INST]", "<s>[INST] Hi  [/INST]")
    (13, 8)
    """
    return len(commonprefix((plain, other))), len(commonprefix((plain[::-1], other[::-1])))


def _ids_out_of_reach(reference: ChatReference, got: ChatAnswer) -> str:
    """Why no way of making the prompt can give the backend's ids, where it gave its text too ("" where
    one may). A way reproduces the backend only with its very text (less a BOS text the template
    writes first), so its ids are that text encoded with or without special-token parsing, a BOS put
    first or not. Where the backend's ids are none of these, the search is spared."""
    if got.ids is None or not got.text:
        return ""
    bos = reference.template.specials.get("bos_token") or ""
    texts = {got.text} | ({got.text[len(bos):]} if bos and got.text.startswith(bos) else set())
    try:
        encoded = [reference.encode(text, parse) for text in texts for parse in (False, True)]
    except CaseFailure:  # (the oracle could not encode it: the search says so)
        return ""
    if got.ids == [] and all(encoded):
        return (f"the backend gave no ids for its prompt of {len(got.text):,} characters. The reference's encoder "
                "gives ids for that text, with or without special-token parsing, so no way of making the prompt "
                "gives none")
    reach = encoded + ([[reference.bos, *ids] for ids in encoded] if reference.bos is not None else [])
    if got.ids in reach:
        return ""
    return ("the backend's ids are none of the reference's encodings of the backend's own prompt text (special-token "
            "text parsed or not, a BOS put first or not): the text was encoded otherwise, and no way of making the "
            "prompt gives these ids")


def _timed_out(e: BackendTimeout) -> Diagnosis:
    """The search stops at a timeout: what it found after one would depend on the machine's speed."""
    return Diagnosis("", f"not searched further: a render timed out ({e})", stage="chat")


def _named(found: list[tuple[str, ...]], gave: str, does_of: dict[str, str] | None = None) -> Diagnosis:
    """The first set found names the cause; the others are its alternatives."""
    first, others = _in_order(found[0]), [_in_order(f) for f in found[1:]]
    does = "; and ".join((does_of or {}).get(n) or BY_NAME[n].does for n in first)
    also = f"; so do {', '.join('+'.join(f) for f in others)}" if others else ""
    return Diagnosis("+".join(first), f"reproduced: the reference's prompt made as an engine that {does} gives the "
                                      f"backend's {gave} exactly{also}", first, tuple(others), stage="chat")


def prefer_chat(diagnoses: list[Diagnosis], broken: Callable[[tuple[str, ...]], int] = lambda keys: 0
                ) -> list[Diagnosis]:
    """One engine, one cause: where several sets reproduce a conversation, the order says which
    names it. A set that changes none of the engine's agreements comes first (``broken``: how many
    it changes). Then the smallest, then the one that changes the fewest. Then the one that
    reproduces the most of the engine's conversations. Qwen3's template writes ChatML. An engine
    that drops the tools is not one that falls back to ChatML: its other conversations agree, and
    ChatML would change them. (What the backend gave, ids or text, is read off the evidence the
    search wrote.)"""
    counts: dict[tuple[str, ...], int] = {}
    for d in diagnoses:
        for keys in (d.variants, *d.alternatives):
            counts[keys] = counts.get(keys, 0) + 1
    out = []
    for d in diagnoses:
        sets = [d.variants, *d.alternatives]
        ranked = sorted(sets, key=lambda keys: (broken(keys) > 0, len(keys), broken(keys), -counts[keys]))
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
    read = values_read(reference, rows, lambda c, got, way: _gives(reference, c, got, way))
    gave = next((j.tags["gave"] for j, _ in mine if "gave" in j.tags), "both")  # (an engine gives one kind)
    rights: dict[int, ChatAnswer] = {}
    for c in agreeing:
        try:
            right = reference.answer(c)
        except CaseFailure:  # (not made in time: nothing to check it with)
            continue
        # (compared by ids alone where the backend gives ids, as the judge does: Phi-3's special
        # tokens take the newline after them, so two texts may differ where the ids agree)
        rights[id(c)] = ChatAnswer(right.text if gave == "text" else None, right.ids if gave != "text" else None,
                                   right.raised)
    kept_memo: dict[tuple[str, ...], int] = {}

    def changed(way: ChatWay) -> list[int]:
        """The positions of the agreements ``way`` would change."""
        return [k for k, c in enumerate(agreeing)
                if id(c) in rights and not _same_answer(reference, c, way, rights[id(c)])]

    def broken(keys: tuple[str, ...]) -> int:
        if keys not in kept_memo:  # (of a cause's forms that give one of its rows, the one that changes fewest)
            ways = _ways(keys, read)
            giving = [w for w in ways if any(row is not None and _gives(reference, row[0], row[1], w) for row in rows)]
            kept_memo[keys] = min((len(changed(way)) for way in giving or ways), default=len(rights))
        return kept_memo[keys]

    chosen = _composed(reference, rows, prefer_chat([d for _, d in mine], broken), read)
    if all(_backend_answer(j).raised for j, _ in mine) and all(r.raised for r in rights.values()):
        chosen = [_no_own_check(d) for d in chosen]
    named = [d.variants for d in chosen if d.variants]
    if not named:
        return chosen, None
    counts: dict[str, int] = {}
    for keys in named:
        for n in keys:
            counts[n] = counts.get(n, 0) + 1
    def scored(names: tuple[str, ...]) -> tuple[bool, int, int, int, list[int], tuple[str, ...]]:
        """Whether ``names`` is proven, what its best way explains and keeps, and which (of ways
        that explain and keep as many, the first; each way's changes computed once)."""
        explains, keeps, at, broke = max(((_explained(reference, rows, way), len(rights) - len(ks), -k, ks)
                                          for k, (way, _) in enumerate(_choices(names, read)) for ks in (changed(way),)),
                                         key=lambda scored: scored[:3], default=(0, 0, 0, []))
        return proven(explains, len(mine), keeps, len(rights)), explains, keeps, at, broke, names

    # (a union that is not proven is weighed beside the one, two or three causes most rows name: a
    # cause a few rows' search found may be their accident, and it breaks the agreements. The one
    # proven first, else the one that explains, then keeps, the most)
    union = _union(counts, read)
    tried = [scored(union)]
    if not tried[0][0] and len(union) > 1:
        most = sorted(union, key=lambda n: (-counts[n], n))
        tried += [scored(_in_order(tuple(most[:k]))) for k in range(1, min(len(most), FEWER_TRIED + 1))]
    _, explains, keeps, at, broke, union = max(tried, key=lambda t: (t[0], t[1], t[2]))
    choices = _choices(union, read)
    breaks = [labels[k] if k < len(labels) else f"agreement {k + 1}" for k in broke]
    # (the words of the forms the verdict checked, where a value was read off the prompts or a form
    # is not its cause's first)
    forms = choices[-at][1] if choices else ()
    own = [v.does if v.name in read or v.does != BY_NAME[v.name].does else "" for v in forms]
    said = tuple(own) if any(own) else ()
    # (an engine that refuses every conversation leaves no agreement to check a cause on: any way
    # that makes the template refuse would read so)
    checked = bool(rights) or not all(_backend_answer(j).raised for j, _ in mine)
    return chosen, RootCause("+".join(union), union, explains, len(mine), keeps, len(rights),
                             checked and proven(explains, len(mine), keeps, len(rights)), 0,
                             tuple(breaks[:BREAKS_LISTED]), said)


def _composed(reference: ChatReference, rows: list[tuple[Conversation, ChatAnswer, Diagnosis] | None],
              chosen: list[Diagnosis], read: dict[str, tuple[ChatVariant, ...]]) -> list[Diagnosis]:
    """``chosen`` with each row the search found no way for tried with more causes at once. First
    come sets of the causes the engine's other rows show, most shown first. Then comes their union
    with one more cause of the catalogue: a bug that only this row shows, on top of the engine's
    others. The first set that gives the backend's prompt exactly is cut to the causes it needs (a
    cause whose removal still gives it goes). The work is counted in characters rendered:
    COMPOSED_TRIES sets a row at most, SEARCH_CHARS for the engine."""
    counts = Counter(n for d in chosen for n in d.variants)
    pool = tuple(n for n, _ in counts.most_common(MAX_POOL))
    base = _union(counts, read)
    out, spent = list(chosen), 0

    def gives(conversation: Conversation, got: ChatAnswer, names: tuple[str, ...]) -> bool:
        nonlocal spent
        for way in _ways(_in_order(names), read):
            answer = reference.answer(conversation, way)  # (a BackendTimeout goes up: the search stops)
            spent += len(answer.text or "") + len(answer.ids or ())
            if _same(answer, got):
                return True
        return False

    for k, (row, d) in enumerate(zip(rows, chosen)):
        if d.variants or row is None or not base or not d.evidence.startswith((NO_WAY, NOT_FOUND)):
            continue
        conversation, got, _ = row
        sets = chain((c for size in range(MAX_AT_ONCE + 1, len(pool) + 1) for c in combinations(pool, size)),
                     ((*base, v.name) for v in TEXT_VARIANTS if v.name not in base))
        for names in islice(sets, COMPOSED_TRIES):
            if spent > SEARCH_CHARS:
                return out
            try:
                if not gives(conversation, got, names):
                    continue
                for name in names:  # (the causes the row needs, no more)
                    if len(names) > 1 and gives(conversation, got, fewer := tuple(n for n in names if n != name)):
                        names = fewer
            except BackendTimeout:  # (first: a timeout is a CaseFailure too; what follows would depend on the machine)
                return out
            except (CaseFailure, NotImplementedError):
                continue
            named = _named([names], "ids" if got.ids is not None else "text")
            added = "".join(f", and {n}" for n in names if n not in counts)  # (the catalogue's one, if any)
            shown = sum(n in counts for n in names)
            out[k] = dataclasses.replace(named, evidence=f"{named.evidence} (with {shown} of the causes the engine's "
                                                         f"other prompts show{added}, at once)")
            break
    return out


def _no_own_check(d: Diagnosis) -> Diagnosis:
    """``d`` less a cause that is an engine's own check (a role or a content it refuses), for an
    engine that refuses every conversation: its refusal says nothing of why."""
    if not any(v.own_check for n in d.variants for v in VARIANTS if v.name == n):
        return d
    return Diagnosis("", "the engine refuses every conversation: a refusal of its own says nothing of why, so no "
                         "check of its own (a role, a content of parts) is named", stage="chat")


def _union(counts: dict[str, int], read: dict[str, tuple[ChatVariant, ...]]) -> tuple[str, ...]:
    """The causes the rows name, most named first, as many as one way can make at once: a cause
    that sets a field another one of them sets otherwise is left to its own rows (an engine that
    continues one final message and prefills another is two answers, not one way)."""
    union: tuple[str, ...] = ()
    for name in sorted(counts, key=lambda n: -counts[n]):
        if len(union) == MAX_POOL:
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


def _gives(reference: ChatReference, conversation: Conversation, got: ChatAnswer, way: ChatWay) -> bool:
    """Whether ``way`` gives the backend's prompt of this conversation exactly."""
    try:
        return _same(reference.answer(conversation, way), got)
    except (CaseFailure, NotImplementedError, TemplateRaised):
        return False


def _ways(names: tuple[str, ...], read: dict[str, tuple[ChatVariant, ...]]) -> list[ChatWay]:
    """The ways a set of causes makes prompts, one per choice of their forms (a joiner of two turns:
    a blank line, a newline…; a value read off the prompts); none where two of them set one field."""
    return [way for way, _ in _choices(names, read)]


def _choices(names: tuple[str, ...], read: dict[str, tuple[ChatVariant, ...]]
             ) -> list[tuple[ChatWay, tuple[ChatVariant, ...]]]:
    """``_ways``, each with the forms it is made of."""
    forms = [list(read[n]) if n in read else [v for v in VARIANTS if v.name == n] for n in names]
    return [(way, choice) for choice in islice(product(*forms), CHOICES_TRIED) if (way := combined(choice)) is not None]


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
