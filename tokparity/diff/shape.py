"""What an engine did, in one sentence: the shape of a mismatch, on every op.

A shape is read off the two answers alone, with no variant of the reference run. Encode: each
side's ids are turned back into the input bytes they stand for, and the two byte strings are
compared. Decode, stream and pieces: the engine's text, deltas or bytes against the decoder's.
Chat: the engine's prompt against the template's, and the part of the conversation where they
part. A shape says what the engine did and where. It is a description, not a cause: a cause is
proven only by a variant that gives the engine's answer.

    >>> from tokparity.vocab.model import TokenType as T, Vocab
    >>> v = Vocab("spm", ["<s>", "▁He", "llo", "▁Hel", "lo", "▁wor", "ld", "<unk>"],
    ...           token_types=[T.CONTROL, *[T.NORMAL] * 6, T.UNKNOWN])
    >>> encode_shape(v, "Hello world", [0, 1, 2, 5, 6], [0, 1, 2])
    "ids missing at the end: the engine gives 3 of the reference's 5 ids, for 6 of 12 bytes; ' world' has none"
    >>> encode_shape(v, "Hello world", [0, 1, 2, 5, 6], [0, 3, 4])
    "text missing at the end: the engine's 3 ids spell 6 of the reference's 12 bytes; ' world' has none"
    >>> encode_shape(v, "Hello world", [0, 1, 2, 5, 6], [1, 2, 5, 6])
    "special token '<s>' left out at the start"
    >>> encode_shape(v, "Hello world", [0, 1, 2, 5, 6], [0, 3, 4, 5, 6])
    "same bytes, cut otherwise at character 0: '▁Hel|lo' where the reference has '▁He|llo'"
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from itertools import accumulate

from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import ids_bytes, token_bytes

SHOWN = 24  # characters of text a shape quotes, at most

# Every shape sentence starts with the words of its kind; the catalogue (tools/cause_shapes.py)
# counts the kinds each cause gives. In order: a longer start before a shorter one it begins with.
KINDS = (
    "id not in the vocabulary",
    "special token text read as its id", "special token text spelt as text", "special token left out", "special token added", "special token repeated",
    "special tokens replaced", "ids missing at the end", "ids added at the end", "unknown token written",
    "same bytes, cut otherwise", "text dropped", "text inserted", "text trimmed", "text padded",
    "text written otherwise", "text missing at the end", "text added at the end of the prompt",
    "text added at the end", "deltas split otherwise", "pieces for other ids", "pieces' bytes differ",
    "prompt cut short", "prompt made where the template refuses", "conversation refused", "the engine failed",
    "the engine gave no answer in time", "the decoder failed", "the oracle failed",
)
_KIND_STARTS = (
    (r"special token text .* read as its id", "special token text read as its id"),
    (r"special token text .* spelt as text", "special token text spelt as text"),
    (r"id -?\d+ is not in the vocabulary", "id not in the vocabulary"), (r"special tokens? .* left out", "special token left out"),
    (r"special tokens? .* added at", "special token added"), (r"special token .* \d+ times", "special token repeated"),
    (r"special tokens .* where the reference has", "special tokens replaced"),
    (r"the engine writes .* where the reference spells", "unknown token written"),
    (r"the deltas add up to the decoder's text", "deltas split otherwise"), (r"\d+ pieces for \d+ ids", "pieces for other ids"),
    (r"\d+ of \d+ ids' bytes differ", "pieces' bytes differ"),
    (r"the engine made a prompt where the template refuses", "prompt made where the template refuses"),
    (r"the engine refused the conversation", "conversation refused"),
)
# Where in a conversation a chat shape is (_part): the part's words, as the kind's suffix
_PARTS = (("before message", "at the start"), ("in message", "in a content"), ("between message", "between contents"),
          ("after the last message", "at the end"))


def kind(shape: str) -> str:
    """The kind of a shape sentence: its first words (KINDS), with a chat shape's part of the
    conversation; "" for no shape.

        >>> kind("text trimmed at character 3: 'a' where the reference has ' a'")
        'text trimmed'
        >>> kind("special token '<s>' left out at the start; special token '</s>' added at the end")
        'special token left out'
        >>> kind("text inserted at character 0, before message 0's content (the prompt's start: BOS, …): 'x'")
        'text inserted at the start'
    """
    first = shape.split("; ")[0]
    found = next((k for k in KINDS if first.startswith(k)), "")
    found = found or next((k for pattern, k in _KIND_STARTS if re.match(pattern, first)), "")
    part = next((words for marker, words in _PARTS if f", {marker}" in first), "")
    return f"{found} {part}" if found and part else found


def encode_shape(vocab: Vocab, text: str, oracle_ids: Sequence[int], backend_ids: Sequence[int]) -> str:
    """The shape of one encode mismatch (see the module); "" when the ids agree."""
    if list(oracle_ids) == list(backend_ids):
        return ""
    unknown = [i for i in backend_ids if not 0 <= i < vocab.size]
    if unknown:
        return f"id {unknown[0]} is not in the vocabulary ({vocab.size} tokens)"
    ends = _ends(vocab, oracle_ids, backend_ids)
    if ends:
        return ends
    a, b = list(oracle_ids), list(backend_ids)
    a_parts, b_parts = ids_bytes(vocab, a), ids_bytes(vocab, b)  # (each side's bytes, read once)
    return _parsed(vocab, text, a, b, a_parts, b_parts) or _middle(vocab, text, a, b, a_parts, b_parts)


def _parsed(vocab: Vocab, text: str, a: Sequence[int], b: Sequence[int], a_parts: Sequence[bytes] | None = None,
            b_parts: Sequence[bytes] | None = None) -> str:
    """A special token's text read as its one id by one side and spelt as text by the other, the
    rest the same: both sides' ids spell one text, spaces aside, once each special token is written
    as its text.

        >>> from tokparity.vocab.model import TokenType as T, Vocab
        >>> v = Vocab("spm", ["<s>", "▁<", "s", ">", "▁Hi"], token_types=[T.CONTROL, *[T.NORMAL] * 4])
        >>> _parsed(v, "<s> Hi", [1, 2, 3, 4], [0, 4])
        "special token text '<s>' read as its id at character 0, where the reference spells it as text"
    """
    controls = vocab.control_ids()
    a_only = [i for i in a if i in controls and i not in b]
    b_only = [i for i in b if i in controls and i not in a]
    if not (a_only or b_only) or (a_only and b_only):
        return ""

    def written(ids: Sequence[int], parts: Sequence[bytes] | None) -> bytes:
        parts = ids_bytes(vocab, ids) if parts is None else parts
        return b"".join(vocab.tokens[i].encode("utf-8", "surrogatepass") if i in controls else part
                        for i, part in zip(ids, parts))

    # (spaces aside: a special token read as its id cuts the text, and each fragment may then get a space prefix)
    if b"".join(written(a, a_parts).split()) != b"".join(written(b, b_parts).split()):
        return ""
    token = vocab.tokens[(b_only or a_only)[0]]
    at = f"at character {text.find(token)}" if token in text else "in the text"
    if b_only:
        return f"special token text {token!r} read as its id {at}, where the reference spells it as text"
    return f"special token text {token!r} spelt as text {at}, where the reference reads it as its id"


def _run(vocab: Vocab, ids: Sequence[int], from_end: bool) -> list[int]:
    """The special tokens at one end of ``ids``."""
    controls = vocab.control_ids()
    run: list[int] = []
    for i in (reversed(ids) if from_end else ids):
        if i not in controls:
            break
        run.append(i)
    return run


def _ends(vocab: Vocab, a: Sequence[int], b: Sequence[int]) -> str:
    """Special tokens left out, added or doubled at the ends, where the ids between agree."""
    controls = vocab.control_ids()
    if a and b and not ({a[0], a[-1], b[0], b[-1]} & controls):
        return ""  # (no special token at either end: the ids between differ)
    a_start, b_start = _run(vocab, a, False), _run(vocab, b, False)
    a_end, b_end = _run(vocab, a[len(a_start):], True), _run(vocab, b[len(b_start):], True)
    if list(a[len(a_start):len(a) - len(a_end)]) != list(b[len(b_start):len(b) - len(b_end)]):
        return ""  # the text differs too: the middle says more
    changes = [_special_change(vocab, ra, rb, where)
               for ra, rb, where in ((a_start, b_start, "start"), (a_end[::-1], b_end[::-1], "end")) if ra != rb]
    return "; ".join(changes)


def _special_change(vocab: Vocab, ra: list[int], rb: list[int], where: str) -> str:
    """How the run of special tokens ``rb`` at one end differs from the reference's ``ra``: the
    tokens the two runs share at their ends are not said."""
    names = lambda ids: ", ".join(repr(vocab.tokens[i]) for i in ids)  # noqa: E731
    k = 0
    while k < min(len(ra), len(rb)) and ra[k] == rb[k]:
        k += 1
    s = 0
    while s < min(len(ra), len(rb)) - k and ra[-1 - s] == rb[-1 - s]:
        s += 1
    gone, put = ra[k:len(ra) - s], rb[k:len(rb) - s]
    if not put:
        return f"special token{'s' * (len(gone) > 1)} {names(gone)} left out at the {where}"
    if not gone and len(set(put)) == 1 and put[0] in ra:  # (a token the reference has there too, repeated)
        return f"special token {names(put[:1])} {rb.count(put[0])} times at the {where}, where the reference has {ra.count(put[0])}"
    if not gone:
        return f"special token{'s' * (len(put) > 1)} {names(put)} added at the {where}"
    return f"special tokens {names(rb)} at the {where}, where the reference has {names(ra)}"


def _spans(parts: Sequence[bytes]) -> tuple[bytes, list[int]]:
    """The bytes that ids stand for, given each id's (``ids_bytes``), and where each id's bytes end."""
    return b"".join(parts), list(accumulate(map(len, parts)))


def _quote(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    shown = text if len(text) <= SHOWN else text[:SHOWN] + "…"
    odd = [c for c in dict.fromkeys(shown)  # (repr escapes what is not printable: these it shows as they are)
           if c.isprintable() and (c == "\ufffd" or (not c.isascii() and unicodedata.category(c)[0] in "ZCM"))]
    named = ", ".join(f"U+{ord(c):04X}" for c in odd[:3])
    return repr(shown) + (f" ({named})" if named else "")


def _chars(data: bytes) -> int:
    return len(data.decode("utf-8", "replace"))


def _at(text: str, data: bytes, offset: int) -> str:
    """Where byte ``offset`` of the reference's bytes ``data`` is, as a character of ``text``. The
    reference's bytes may hold a space the text has not (SentencePiece's prefix): the text is
    looked for in them. A text the reference normalized is not found: its own count is said."""
    start = data.find(text.encode("utf-8", "surrogatepass")) if text else -1
    if start < 0:
        return f"at character {_chars(data[:offset])} of the reference's text"
    return f"at character {_chars(data[start:max(offset, start)])}"


def _id_at(ends: list[int], offset: int) -> int:
    """The index of the id whose bytes hold byte ``offset`` (len(ends) past the end)."""
    return next((k for k, e in enumerate(ends) if e > offset), len(ends))


def _middle(vocab: Vocab, text: str, a: list[int], b: list[int], a_parts: Sequence[bytes],
            b_parts: Sequence[bytes]) -> str:
    ab, a_ends = _spans(a_parts)
    bb, b_ends = _spans(b_parts)
    if ab == bb:
        return _cut_otherwise(vocab, text, a, b, ab, a_ends, b_ends)
    unk_b = [i for i in b if 0 <= i < vocab.size and vocab.type_of(i) == TokenType.UNKNOWN]
    p, gone, put = _change(ab, bb)
    if p == len(bb) and a[:len(b)] == b:
        return (f"ids missing at the end: the engine gives {len(b)} of the reference's {len(a)} ids, for {len(bb)} "
                f"of {len(ab)} bytes; {_quote(ab[p:])} has none")
    if unk_b and p == len(bb) and b[-1] in unk_b:  # (an unknown token spells nothing: it is not text missing)
        return f"the engine writes {vocab.tokens[b[-1]]!r} where the reference spells {_quote(ab[p:])}, {_at(text, ab, p)}"
    if p == len(bb):  # (its last id spells less than the reference's there: "  " read as " ")
        return (f"text missing at the end: the engine's {len(b)} ids spell {len(bb)} of the reference's {len(ab)} "
                f"bytes; {_quote(ab[p:])} has none")
    if p == len(ab):
        return f"ids added at the end: {_quote(bb[p:])} after the text's {len(ab)} bytes"
    at = _at(text, ab, p)
    if unk_b and not put:
        k = _id_at(b_ends, p)
        return f"the engine writes {vocab.tokens[b[min(k, len(b) - 1)]]!r} where the reference spells {_quote(gone)}, {at}"
    return _changed(gone, put, at, "has no ids", "not in the reference's ids")


def _change(a: bytes, b: bytes) -> tuple[int, bytes, bytes]:
    """Where ``b`` first parts from ``a``, and the stretch of each between their common start and
    end, widened to whole characters: a stretch cut inside one would read as U+FFFD on both sides."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    while 0 < p < min(len(a), len(b)) and (_continues(a, p) or _continues(b, p)):  # (not where one side ends)
        p -= 1
    s = _common_end(a, b, p)
    return p, a[p:len(a) - s], b[p:len(b) - s]


def _common_end(a: bytes, b: bytes, p: int) -> int:
    """How many bytes ``a`` and ``b`` share at their end, after byte ``p``, in whole characters."""
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    while s > 0 and (_continues(a, len(a) - s) or _continues(b, len(b) - s)):
        s -= 1
    return s


def _continues(data: bytes, k: int) -> bool:
    """Whether byte ``k`` of ``data`` continues a character (a UTF-8 continuation byte)."""
    return k < len(data) and 0x80 <= data[k] < 0xC0


def _changed(gone: bytes, put: bytes, at: str, dropped: str, inserted: str, other: str = "the reference") -> str:
    if not put:
        return f"text dropped {at}: {_quote(gone)} {dropped}"
    if not gone:
        return f"text inserted {at}: {_quote(put)}, {inserted}"
    if put == gone.strip():
        return f"text trimmed {at}: {_quote(put)} where {other} has {_quote(gone)}"
    if gone == put.strip():
        return f"text padded {at}: {_quote(put)} where {other} has {_quote(gone)}"
    return f"text written otherwise {at}: {_quote(put)} where {other} has {_quote(gone)}"


def output_shape(op: str, vocab: Vocab, ids: Sequence[int], oracle_output: Sequence[str],
                 backend_output: Sequence[str]) -> str:
    """The shape of a decode, stream or pieces mismatch: where the backend's text (its deltas
    joined, or each id's bytes) parts from the decoder's, and the id there. "" when either side
    gave no output (a failure: its evidence says so)."""
    if not oracle_output or not backend_output:
        return ""
    if op == "pieces":
        return _pieces_shape(vocab, ids, oracle_output, backend_output)
    want, got = oracle_output[0].encode("utf-8", "surrogatepass"), "".join(backend_output).encode("utf-8", "surrogatepass")
    sent = "the deltas add up to" if op == "stream" else "the text is"
    if want == got:
        return f"{sent} the decoder's text, but split into {len(backend_output)} deltas otherwise" if op == "stream" else ""
    p, gone, put = _change(want, got)
    if p == len(got):
        return f"text missing at the end: {sent} {len(got)} of the decoder's {len(want)} bytes; {_quote(want[p:])} is not"
    if p == len(want):
        return f"text added at the end: {_quote(got[p:])} after the decoder's {len(want)} bytes"
    return _changed(gone, put, f"at character {_chars(want[:p])}", "is missing from the engine's", "not in the decoder's",
                    "the decoder")


def encode_failure_shape(text: str, oracle_ids: Sequence[int] | None, cls: str) -> str:
    """The shape of an encode case one side gave no ids for: the oracle (``oracle_ids`` None), whose
    failure leaves the engine unjudged, or the engine, with what the oracle gives.

        >>> encode_failure_shape("Hello", [9, 10], "crash")
        'the engine failed on a text of 5 characters (5 bytes) where the reference gives 2 ids'
        >>> encode_failure_shape("é", [9], "timeout")
        'the engine gave no answer in time on a text of 1 character (2 bytes) where the reference gives 1 id'
        >>> encode_failure_shape("é", None, "crash")
        "the oracle failed on this text: the engine's answer is not judged"
    """
    if oracle_ids is None:
        return "the oracle failed on this text: the engine's answer is not judged"
    did = "failed" if cls == "crash" else "gave no answer in time"
    size = len(text.encode("utf-8", "surrogatepass"))
    return (f"the engine {did} on a text of {_count(len(text), 'character')} ({_count(size, 'byte')}) where the "
            f"reference gives {_count(len(oracle_ids), 'id')}")


def chat_failure_shape(reference_failed: bool, cls: str, detail: str) -> str:
    """The shape of a chat case one side gave no prompt for: the reference (the engine then is not
    judged), or the engine, with the first words of its error.

        >>> chat_failure_shape(False, "crash", "KeyError: 'name'")
        "the engine failed on this conversation: KeyError: 'name'"
        >>> chat_failure_shape(True, "crash", "")
        "the oracle failed on this conversation: the engine's answer is not judged"
    """
    if reference_failed:
        return "the oracle failed on this conversation: the engine's answer is not judged"
    did = "failed" if cls == "crash" else "gave no answer in time"
    return f"the engine {did} on this conversation" + (f": {detail[:160]}" if detail else "")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def failure_shape(op: str, vocab: Vocab, ids: Sequence[int], cls: str, decoder_failed: bool, want: object) -> str:
    """The shape of a decoding op's failure: which side gave no answer, and where the engine's did
    not, what the decoder gives (``want``: its text, or each id's bytes in hex) and whether the
    ids' bytes are UTF-8."""
    if decoder_failed:
        return f"the decoder failed on these {len(ids)} ids: the engine's answer is not judged"
    did = "failed" if cls == "crash" else "gave no answer in time"
    data = b"".join(token_bytes(vocab, i) for i in ids)
    try:
        data.decode("utf-8")
        valid = ""
    except UnicodeDecodeError:
        valid = "; the ids' bytes are not UTF-8"
    if op == "pieces" or not isinstance(want, str):
        return f"the engine {did} on {len(ids)} ids{valid}"
    return f"the engine {did} where the decoder gives {_quote(want.encode('utf-8', 'surrogatepass'))}{valid}"


def _pieces_shape(vocab: Vocab, ids: Sequence[int], want: Sequence[str], got: Sequence[str]) -> str:
    differ = [k for k, (a, b) in enumerate(zip(want, got)) if a != b]
    if len(want) != len(got):
        return f"{len(got)} pieces for {len(want)} ids"
    if not differ:
        return ""
    k = differ[0]
    piece = vocab.tokens[ids[k]] if 0 <= ids[k] < vocab.size else "?"
    return (f"{len(differ)} of {len(ids)} ids' bytes differ; the first, id {ids[k]} ({piece!r}): "
            f"{_quote(_hex(got[k]))} where the decoder has {_quote(_hex(want[k]))}")


def _hex(cell: str) -> bytes:
    try:
        return bytes.fromhex(cell)
    except ValueError:  # (not written by tokparity's judge: shown as it is)
        return cell.encode("utf-8", "surrogatepass")


def _cut_otherwise(vocab: Vocab, text: str, a: list[int], b: list[int], data: bytes, a_ends: list[int],
                   b_ends: list[int]) -> str:
    """The same bytes in other tokens: the first stretch where the cuts differ, each side's cuts.
    ``a_ends``, ``b_ends``: where each id's bytes end (``_spans``)."""
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    start = a_ends[k - 1] if k else 0
    pos_a, pos_b, ia, ib = start, start, k, k
    pa, pb = [], []
    while True:  # to the next point where both sides cut again
        if pos_a <= pos_b and ia < len(a):
            pa.append(a[ia])
            pos_a = a_ends[ia]
            ia += 1
        elif ib < len(b):
            pb.append(b[ib])
            pos_b = b_ends[ib]
            ib += 1
        else:
            break
        if pos_a == pos_b and pa and pb:
            break
    show = lambda ids: "|".join(vocab.tokens[i] for i in ids)  # noqa: E731
    return f"same bytes, cut otherwise {_at(text, data, start)}: {show(pb)!r} where the reference has {show(pa)!r}"


def chat_shape(contents: Sequence[str], want: str, got: str) -> str:
    """The shape of a chat mismatch: where the backend's prompt parts from the template's, and
    which part of the conversation is there. ``contents``: the messages' string contents, in order
    ("" for one that is not a string). They are looked for in the template's prompt, each after
    the one before; a content the template changed (trimmed, say) is looked for trimmed."""
    if want == got:
        return ""
    a, b = want.encode("utf-8", "surrogatepass"), got.encode("utf-8", "surrogatepass")
    return _prompts_part(contents, want, a, b, *_change(a, b))


def chat_ids_shape(vocab: Vocab, contents: Sequence[str], want_text: str, want: Sequence[int], got: Sequence[int]) -> str:
    """``chat_shape`` of two prompts given as ids, read as their tokens' texts (a special token as
    its name). Where they part inside a special token's name, they part at its start: ``<|eot_id|>``
    and ``<|start_header_id|>`` share ``<|``, but not as text. The same text in other ids is an
    encode shape."""
    if list(want) == list(got):
        return ""
    ends = _ends(vocab, list(want), list(got))  # (a BOS added or doubled: said as a special token)
    if ends:
        return ends
    a_parts, b_parts = [_spelled(vocab, i) for i in want], [_spelled(vocab, i) for i in got]
    a, b = b"".join(a_parts), b"".join(b_parts)
    if a == b:
        return encode_shape(vocab, want_text, want, got)
    a_specials, b_specials = _special_spans(vocab, want, a_parts), _special_spans(vocab, got, b_parts)
    p = _change(a, b)[0]
    p = min([p, *(start for start, end in a_specials + b_specials if start < p < end)])
    s = _common_end(a, b, p)
    s = min([s, *(len(a) - end for start, end in a_specials if start < len(a) - s < end),
             *(len(b) - end for start, end in b_specials if start < len(b) - s < end)])
    return _prompts_part(contents, a.decode("utf-8", "replace"), a, b, p, a[p:len(a) - s], b[p:len(b) - s])


def _special_spans(vocab: Vocab, ids: Sequence[int], parts: list[bytes]) -> list[tuple[int, int]]:
    """Where each special token's name stands in the ids' texts, as byte offsets."""
    spans, at = [], 0
    controls = vocab.control_ids()
    for i, part in zip(ids, parts):
        if i in controls:
            spans.append((at, at + len(part)))
        at += len(part)
    return spans


def _spelled(vocab: Vocab, i: int) -> bytes:
    return token_bytes(vocab, i) or (vocab.tokens[i].encode() if 0 <= i < vocab.size else b"")


def _prompts_part(contents: Sequence[str], want: str, a: bytes, b: bytes, p: int, gone: bytes, put: bytes) -> str:
    """The sentence of a chat shape: the prompts ``a`` (the template's, ``want`` as text) and ``b``
    part at byte ``p``, where ``gone`` stands in ``a`` and ``put`` in ``b``."""
    where = _part(contents, want, _chars(a[:p]), inserted=not gone)
    if p == len(b):
        return f"prompt cut short {where}: {_quote(a[p:])} is missing from the engine's"
    if p == len(a):
        return f"text added at the end of the prompt: {_quote(b[p:])}"
    return _changed(gone, put, where, "is missing from the engine's prompt", "not in the template's prompt",
                    "the template")


def _part(contents: Sequence[str], prompt: str, at: int, inserted: bool = False) -> str:
    """``at`` (a character of ``prompt``) as a part of the conversation. Text ``inserted`` at a
    content's first character is before that content, not in it."""
    spans: list[tuple[int, int, int]] = []  # (message, start, end)
    start = 0
    for k, content in enumerate(contents):
        for needle in (content, content.strip()):
            found = prompt.find(needle, start) if needle else -1
            if found >= 0:
                spans.append((k, found, found + len(needle)))
                start = found + len(needle)
                break
    after_start = int(inserted)  # (how far past a content's start ``at`` must be, to be in it)
    if not spans or at < spans[0][1] + after_start:
        first = spans[0][0] if spans else 0
        return f"at character {at}, before message {first}'s content (the prompt's start: BOS, a system turn, tools, headers)"
    for (k, s, e), after in zip(spans, [*spans[1:], None]):
        if s + after_start <= at < e or (at == e and after is None and at == len(prompt)):
            return f"at character {at}, in message {k}'s content (character {at - s} of it)"
        if after is not None and e <= at < after[1] + after_start:
            between = f"at character {at}, between message {k}'s content and message {after[0]}'s"
            if after[0] == k + 1:
                return f"{between} (a separator, a header)"
            # (a message whose content is no string, or is not in the prompt: its whole turn may be what differs)
            # (the turn, or the header of the next message: a shape read off the texts cannot tell them apart)
            if after[0] == k + 2:
                return f"{between}: in message {k + 1}'s turn, or a separator or header beside it (no text " \
                       f"content of message {k + 1}'s found: tool calls, parts, none)"
            skipped = ", ".join(str(j) for j in range(k + 1, after[0]))
            return f"{between}: in the turns of messages {skipped}, or a separator or header beside them (no " \
                   "text content of theirs found: tool calls, parts, none)"
    k = spans[-1][0]
    return f"at character {at}, after the last message's content (message {k}: its end, the generation prompt)"
