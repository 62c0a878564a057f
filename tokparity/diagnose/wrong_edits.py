"""Wrong decoders whose text is right until a last edit of it.

The decoded text is cut at its first NUL or line break, loses its first byte after a BOS, is
stripped or normalized, leaves its added tokens out, or loses a tag's blocks or its control
characters. A stream never sends its blank deltas, sends its last one twice, drops a delta the
text sent so far already holds, or stops once its text departs from what it sent, strips each
delta, loses its first delta or the delta after a special token. It loses a delta with a Unicode
line break, or removes the previous delta from each, or a delta that could begin the stop string.
A decoder drops the first id, or a leading byte-order mark. Each takes
``(reference, ids, prompt, asked)`` as those of ``tokparity.diagnose.wrong_decoders`` do.
``tokparity.diagnose.decoding``'s ``VARIANTS`` lists them.
"""

from __future__ import annotations

import html
import unicodedata
from itertools import accumulate
from typing import Literal

import regex

from tokparity.diagnose.regex_engines import ECMASCRIPT_SPACE
from tokparity.diagnose.variants.model import ASTRAL  # (the characters past U+FFFF)
from tokparity.diagnose.wrong_decoders import PREFIXES_UP_TO, bytes_of, decoded, is_special, right_deltas, step_texts
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings, incomplete_tail
from tokparity.vocab.model import TokenType


def text_lstripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The decoded text with its leading spaces taken off, or all its leading whitespace (a
    completion's ``trim_start()``)."""
    text = decoded(ref, ids, asked)
    return [text.lstrip(" "), text.lstrip()]


def text_stripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The decoded text with a set of characters taken off its end, or off both ends (a reply tidied
    with ``strip()``). Each ``STRIPPED`` set is a form. Each None where it changes nothing."""
    text = decoded(ref, ids, asked)
    forms = [text.rstrip(chars) for chars in STRIPPED] + [text.strip(chars) for chars in STRIPPED]
    return [None if f == text else f for f in forms]


def text_normalized(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The decoded text put through a Unicode normalization form: NFC, NFKC, NFD, NFKD, in that
    order. Each None where it changes nothing."""
    text = decoded(ref, ids, asked)
    return [None if (f := unicodedata.normalize(form, text)) == text else f for form in NORMAL_FORMS]


NORMAL_FORMS: tuple[Literal["NFC", "NFKC", "NFD", "NFKD"], ...] = ("NFC", "NFKC", "NFD", "NFKD")


# What a strip takes off: spaces; Python's whitespace; line ends (LF, or CR and LF); C's isspace().
STRIPPED = (" ", None, "\n", "\r\n", " \t\n\v\f\r")


def token_chars_stripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The decoded text with the characters of the EOS token's text taken off its end, as
    ``text.rstrip("<|im_end|>")`` does: it takes a set of characters, not a suffix (``Hello world``
    loses its ``d``). Second form: off both ends. Each None where it changes nothing."""
    text, chars = decoded(ref, ids, asked), _eos_text(ref)
    if not chars:
        return []
    # (a form that takes off no more than one EOS text at the end is a right cut at the EOS, not this bug)
    return [None if f in (text, text.removesuffix(chars)) else f for f in (text.rstrip(chars), text.strip(chars))]


def _eos_text(ref: RefTokenizer) -> str:
    return ref.vocab.special_texts().get(ref.vocab.special_ids.get("eos", -1), "")


def pad_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids decoded without the padding token's, whatever ``skip_special`` says: a decoder that
    takes padding off a batch's rows. None where the ids hold no pad id."""
    special = ref.vocab.special_ids
    pad = special.get("pad")
    if pad is None or pad in (special.get("eos"), special.get("bos")):
        return []  # (a pad that is the EOS or the BOS: leaving it out is another cause's)
    kept = [i for i in ids if i != pad]
    return [decoded(ref, kept, asked) if len(kept) < len(ids) else None]


def added_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids decoded without some added tokens, whatever ``skip_special`` says. Each form leaves
    out other ids: those past the model's own table (a port that reads only the model's ``vocab``);
    every token typed user-defined or control; every token tokenizer.json lists as added; or only
    the listed ones not marked special (a port that reads only the added tokens marked special).
    The rest are decoded as asked. Each None where it leaves no id out."""
    vocab = ref.vocab
    own = vocab.extra.get("model_size")
    added = [t for t in vocab.extra.get("added_tokens") or () if isinstance(t, dict)]
    listed = {t.get("id") for t in added}
    unmarked = {t.get("id") for t in added if not t.get("special")}
    typed = (TokenType.USER_DEFINED, TokenType.CONTROL)
    kinds = [lambda i: own is not None and i >= own, lambda i: 0 <= i < vocab.size and vocab.type_of(i) in typed,
             lambda i: i in listed, lambda i: i in unmarked]
    forms = [[i for i in ids if not left_out(i)] for left_out in kinds]
    return [decoded(ref, kept, asked) if len(kept) < len(ids) else None for kept in forms]


def cut(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text up to its first NUL (read back as a C string: ``strlen``), up to its first line
    break (a reader of one line), or up to its first character past U+FFFF (a store of three bytes
    a character at most, MySQL's ``utf8``); each None where the text has no such character."""
    text = decoded(ref, ids, asked)
    astral = ASTRAL.search(text)
    return [text[:at] if at >= 0 else None
            for at in (text.find("\x00"), text.find("\n"), astral.start() if astral else -1)]


def cut_at_eos(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids before the first EOS id decoded, the EOS and every id after it dropped: a caller that
    splits a generation at its end before decoding it. The second form drops a last EOS alone (a
    stop token sliced off). Each None where it changes nothing; none where the ids hold no EOS."""
    eos = ref.vocab.special_ids.get("eos")
    if eos not in ids:
        return []
    return [decoded(ref, ids[:ids.index(eos)], asked), decoded(ref, ids[:-1], asked) if ids[-1] == eos else None]


def first_byte_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids' bytes less their first, read as UTF-8, where the ids start with the BOS: a wrapper
    that takes off the space it believes SentencePiece put after the BOS (None where they do not)."""
    bos = ref.vocab.special_ids.get("bos")
    if bos is None or ids[:1] != [bos]:
        return [None]
    data = b"".join(b or b"" for b in bytes_of(ref, ids, asked))
    return [data[1:].decode("utf-8", "replace")]


_JS_BLANK = regex.compile(f"[{ECMASCRIPT_SPACE}]*")


def blank_deltas_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream with every delta of whitespace only never sent (``if not content.strip():
    continue``), of each grouping (``_groupings``). The second form of each reads whitespace as
    JavaScript's ``trim()`` does: U+FEFF is one, U+0085 and U+001C to U+001F are not."""
    return [form for deltas in _groupings(ref, ids, prompt, asked)
            for form in ("".join(d for d in deltas if d.strip()), "".join(d for d in deltas if not _JS_BLANK.fullmatch(d)))]


# The line breaks Python's ``str.splitlines`` reads that JSON leaves unescaped in an SSE ``data:`` line
# (it escapes the control characters): a client that splits its lines so cuts the event in two.
UNICODE_LINE_BREAKS = ("\x85", "\u2028", "\u2029")


# C0 controls but tab, line feed and carriage return: what a sanitizer for XML or a terminal removes
# (then DEL too, or every C1 control as well)
C0_CONTROLS = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r")


def control_characters_removed(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text with control characters removed: the C0 ones but tab, line feed and carriage
    return; with DEL too; with every C1 control as well (U+0080 to U+009F). Not where NUL is the
    only control character: a C string's end drops it alone (a learnt edit says so exactly)."""
    right = decoded(ref, ids, asked)
    if not any(ch in right for ch in C0_CONTROLS[1:] + "\x7f") and not any("\x80" <= ch <= "\x9f" for ch in right):
        return []
    sets = (C0_CONTROLS, C0_CONTROLS + "\x7f", C0_CONTROLS + "\x7f" + "".join(chr(c) for c in range(0x80, 0xA0)))
    return [right.translate(dict.fromkeys(map(ord, removed))) for removed in sets]


def unicode_line_break_deltas_lost(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream with every delta that holds U+0085, U+2028 or U+2029 lost: an SSE client
    that splits the stream's lines with ``splitlines`` cuts that event's JSON, which then fails."""
    deltas = right_deltas(ref, ids, prompt, asked)
    kept = [d for d in deltas if not any(ch in d for ch in UNICODE_LINE_BREAKS)]
    return ["".join(kept)] if len(kept) < len(deltas) else []


OPENING_TAG = regex.compile(r"<([A-Za-z][\w-]{0,31})>")


def tag_blocks_removed(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text with each block of one tag, its tags included, removed (``<think>…</think>``,
    as a client that hides a model's reasoning with ``re.sub`` does); then also the text stripped.
    One pair of answers for each tag the text holds a block of, where each of the tag's two texts is
    an added token of the model (Qwen 3's ``<think>``): a tag typed in a text (``<b>``) is left alone."""
    right = decoded(ref, ids, asked)
    answers = []
    vocab = ref.vocab
    for name in dict.fromkeys(found.group(1) for found in OPENING_TAG.finditer(right)):
        if not all((i := vocab.id_of(tag)) is not None and vocab.type_of(i) in (TokenType.USER_DEFINED, TokenType.CONTROL)
                   for tag in (f"<{name}>", f"</{name}>")):
            continue
        cut = regex.sub(rf"<{regex.escape(name)}>.*?</{regex.escape(name)}>", "", right, flags=regex.DOTALL)
        answers += [cut, cut.strip()] if cut != right else []
    return answers


MARKUP_TAG = regex.compile(r"</?[A-Za-z][^>]*>")


def tags_removed(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text with every markup tag removed, what it encloses kept (``<b>``, ``</speak>``,
    ``<break time="1s"/>``): a client that strips HTML or SSML from a model's text with a regex.
    Then also the text stripped."""
    right = decoded(ref, ids, asked)
    cut = MARKUP_TAG.sub("", right)
    return [cut, cut.strip()] if cut != right else []


def astral_as_replacements(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text with each character past U+FFFF as U+FFFD: six (each of its two UTF-16
    surrogates read alone as three bytes that are not UTF-8, as a JSON reader that decodes each
    ``\\uXXXX`` escape alone writes them), two (one for each surrogate), or one."""
    right = decoded(ref, ids, asked)
    if not ASTRAL.search(right):
        return []
    return [ASTRAL.sub("\ufffd" * n, right) for n in (6, 2, 1)]


# Emoji as filters find them: the emoji blocks (Mahjong to Legacy Computing, Miscellaneous Symbols,
# Dingbats, Miscellaneous Symbols and Arrows), variation selectors, ZWJ and the keycap mark, as a
# pattern of ranges spells them; or Unicode's Extended_Pictographic with modifiers, VS16, ZWJ,
# the keycap mark and tag characters.
EMOJI = (regex.compile("[\U0001F000-\U0001FBFF\u2600-\u26FF\u2700-\u27BF\u2B00-\u2BFF\uFE00-\uFE0F\u200D\u20E3]"),
         regex.compile("[\\p{Extended_Pictographic}\\p{Emoji_Modifier}\uFE0F\u200D\u20E3\U000E0020-\U000E007F]"))


def emoji_removed(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text with its emoji removed (each form of ``EMOJI``): a filter for speech or plain
    text run on what the user reads. A stream's deltas hold whole characters, so a filter run on
    each delta gives a stream the same text."""
    right = decoded(ref, ids, asked)
    answers = [pattern.sub("", right) for pattern in EMOJI]
    return answers if any(answer != right for answer in answers) else []


def leading_bom_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text without the U+FEFF it begins with: JavaScript's ``TextDecoder`` made without
    ``ignoreBOM`` takes those three bytes for a byte-order mark."""
    right = decoded(ref, ids, asked)
    return [right[1:]] if right.startswith("\ufeff") else []


def html_unescaped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text with its HTML character references read (``html.unescape``: ``&amp;`` as
    ``&``, ``&copy`` as ``©``): a reply cleaned as if it were HTML."""
    right = decoded(ref, ids, asked)
    answer = html.unescape(right)
    return [answer] if answer != right else []


def html_escaped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text escaped as HTML, a reply made safe for a web page. Forms: ``html.escape``
    (``& < > " '``), without quotes (``& < >``), and ``&`` and ``<`` only (a hand-written escape)."""
    right = decoded(ref, ids, asked)
    return _in_place(right, [html.escape(right), html.escape(right, quote=False),
                             right.replace("&", "&amp;").replace("<", "&lt;")])


def through_code_page(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text through a one-byte code page, each character it lacks written as ``?`` (Python's
    ``encode(page, "replace")``): a console or a file in ASCII, ISO-8859-1 or Windows-1252."""
    right = decoded(ref, ids, asked)
    return _in_place(right, [right.encode(page, "replace").decode(page) for page in CODE_PAGES])


CODE_PAGES = ("ascii", "latin-1", "cp1252")


def _in_place(right: str, forms: list[str]) -> list:
    """Each form in its place, None where it is the right answer (the verdict counts a form by its
    place); none at all where no form differs."""
    return [None if form == right else form for form in forms] if any(form != right for form in forms) else []


def partial_stop_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream less each delta that could begin the EOS token's text, a stop string: a
    delta that is a start of it, or that ends with one (``<``). A server holds such a delta back in
    case the stop string follows, then never sends it."""
    stop = _eos_text(ref)
    if len(stop) < 2:
        return []

    def may_begin_stop(delta: str) -> bool:  # (FastChat's is_partial_stop: the delta, or an end of it shorter than both)
        return any(stop.startswith(delta[-k:] if k else delta) for k in range(min(len(delta), len(stop))))

    deltas = right_deltas(ref, ids, prompt, asked)
    kept = [d for d in deltas if not may_begin_stop(d)]
    return ["".join(kept)] if len(kept) < len(deltas) else []


def last_delta_resent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream with its last delta that holds text sent once more at the end: a final
    flush that sends again what the last step sent."""
    deltas = [d for d in right_deltas(ref, ids, prompt, asked) if d]
    return ["".join(deltas) + deltas[-1]] if deltas else []


def previous_delta_removed(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream with the first occurrence of the previous delta's text removed from each
    delta: a client that merges chunks with ``chunk.replace(lastChunk, '')``, taking each for the
    text so far. The previous delta is the last one sent, or the last one that held text (a server
    that sends no empty delta)."""
    deltas = right_deltas(ref, ids, prompt, asked)
    answers = []
    for skip_empty in (False, True):
        out, before = [], ""
        for d in deltas:
            out.append(d.replace(before, "", 1) if before else d)
            before = d if d or not skip_empty else before
        if out != deltas and "".join(out) not in answers:
            answers.append("".join(out))
    return answers


def repeated_delta_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream merged into a buffer that drops a delta the text sent so far already ends
    with, or starts with: a client's guard against a chunk sent twice (``hel``, ``l``, ``o`` loses
    the second ``l``)."""
    deltas = right_deltas(ref, ids, prompt, asked)
    out = []
    for held in (str.endswith, str.startswith):
        text = ""
        for d in deltas:
            if not (d and text and held(text, d)):
                text += d
        out.append(text)
    return out


def first_token_marks_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Every ``▁`` inside the first token dropped (its leading one still the space the tokenizer
    put before the text): a Metaspace decoder that meant to drop one mark of the first token and
    dropped them all (``▁in▁the``, ``▁house`` reads ``inthe house``)."""
    tokens = ref.vocab.tokens
    first = next((k for k, b in enumerate(bytes_of(ref, ids, asked)) if b), None)
    if first is None or not 0 <= ids[first] < len(tokens) or "\u2581" not in tokens[ids[first]][1:]:
        return []
    head, text = decoded(ref, ids[:first + 1], asked), decoded(ref, ids, asked)
    # (the leading mark's space, where the decoder keeps it: the others are the inner marks')
    kept = tokens[ids[first]].startswith("\u2581") and head.count(" ") == tokens[ids[first]].count("\u2581")
    wrong = head[:1] + head[1:].replace(" ", "") if kept else head.replace(" ", "")
    return [wrong + text[len(head):]] if text.startswith(head) and wrong != head else []


def stalls_after_change(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step decodes every id so far and sends what follows the text it sent. Once a step's text
    no longer starts with what was sent (a U+FFFD it sent became a character), it sends nothing more.
    Forms: the window holds the prompt or starts after it; the texts compared by code point, or by
    user-perceived character (Swift's ``hasPrefix``: an accent added to a letter sent departs too)."""
    if len(ids) - prompt > PREFIXES_UP_TO:
        return []
    answers = []
    for start in dict.fromkeys((0, prompt)):
        head, *texts = step_texts(ref, ids, start, prompt, asked)
        for by_cluster in (False, True):
            shown = head
            for text in texts:
                if not _starts(text, shown, by_cluster):
                    break
                shown = text
            answers.append(shown[len(head):])
    return answers


CLUSTER = regex.compile(r"\X")


def _starts(text: str, prefix: str, by_cluster: bool) -> bool:
    """Whether ``text`` starts with ``prefix``; ``by_cluster``: and ends a user-perceived character
    where ``prefix`` ends (only the prefix's last character is read again: a stream is long)."""
    if not text.startswith(prefix):
        return False
    if not by_cluster or not prefix or len(text) == len(prefix):
        return True
    last = CLUSTER.findall(prefix[-32:])[-1]
    return CLUSTER.match(text, len(prefix) - len(last)).end() == len(prefix)


def first_space_trimmed(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas, but while nothing has been sent a delta loses one leading space (again on
    the next one, where that left it empty): a streamer that trims the first text it flushes, as a
    decoder of the generated ids alone would drop it."""
    deltas, sent = right_deltas(ref, ids, prompt, asked), False
    out = []
    for delta in deltas:
        if not sent and delta.startswith(" "):
            delta = delta[1:]
        sent = sent or bool(delta)
        out.append(delta)
    return ["".join(out)]


def space_dropped_after_bos(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id's bytes joined, a piece's leading space dropped only right after a BOS: the first
    piece of ids without a BOS keeps its space, and one after a BOS in the middle loses it."""
    bos = ref.vocab.special_ids.get("bos")
    if bos is None:
        return []
    pieces = bytes_of(ref, ids, asked)
    joined = b"".join(p[1:] if k and ids[k - 1] == bos and p.startswith(b" ") else p for k, p in enumerate(pieces))
    return [joined.decode("utf-8", "replace")]


def runs_decoded_alone(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each run of ids between special tokens decoded alone, each special written as its text
    between them: a run's decoder drops the run's first space, as SentencePiece drops a text's.
    Forms: a space put before a special token that follows text (transformers' slow Llama
    tokenizer with ``legacy``); the first token's ``▁`` dropped before the decoder drops its own."""
    special = [is_special(ref, i) for i in ids]
    if asked.skip_special:
        return []
    forms = []
    for legacy in (False, True):
        for first_twice in (False, True):
            out, run = "", []
            for k, i in enumerate(ids):
                if not special[k]:
                    run.append(i)
                    continue
                out += (" " if legacy and k and not special[k - 1] else "") + _run_text(ref, run, asked, first_twice and not out) \
                    + ref.vocab.tokens[i]
                run = []
            forms.append(out + _run_text(ref, run, asked, first_twice and not out))
    return forms


def _run_text(ref: RefTokenizer, run: list[int], asked: DecodeSettings, first_twice: bool) -> str:
    """A run decoded alone; ``first_twice``: where its first token begins with ``▁``, one more
    leading space dropped than the decoder drops."""
    text = decoded(ref, run, asked)
    tokens = ref.vocab.tokens
    if first_twice and run and 0 <= run[0] < len(tokens) and tokens[run[0]].startswith("\u2581") and text.startswith(" "):
        return text[1:]
    return text


def first_id_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids decoded without their first, whatever it is: a decoder sure that every sequence
    opens with a BOS. Not tried where the first id is special: a decoder that skips it is right."""
    return [decoded(ref, ids[1:], asked)] if ids and not is_special(ref, ids[0]) else []


def last_id_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids decoded without their last, whatever it is: a caller that slices ``ids[:-1]`` to take
    off an EOS that is not always there. Not tried where the last id is special: that is
    ``decode.cut-at-eos``'s, or a right skip."""
    return [decoded(ref, ids[:-1], asked)] if ids and not is_special(ref, ids[-1]) else []


def deltas_rstripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas, each with its trailing spaces taken off, or all its trailing whitespace
    (a chunk's ``rstrip()``). What is taken off is never sent. A streamer that holds back a whole
    delta ending inside a character cuts its text otherwise (``_groupings``): two forms more. The
    last form takes the EOS token's characters off each delta (``rstrip`` given the token's text)."""
    forms, chars = [], _eos_text(ref) or None
    for deltas in _groupings(ref, ids, prompt, asked):
        forms += ["".join(d.rstrip(" ") for d in deltas), "".join(d.rstrip() for d in deltas)]
    # (the EOS token's characters taken off each delta: ``delta.rstrip("<|im_end|>")`` meant as a suffix)
    return forms + ["".join(d.rstrip(chars) for d in right_deltas(ref, ids, prompt, asked)) if chars else None]


def delta_after_special_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas, but the one of the id just after a special token never sent (a streamer
    that resets after a special token and loses a step). The prompt's last id counts too. A
    streamer that holds back a delta ending inside a character is a second form. [] where no
    special token stands before a generated id."""
    lost = {k - prompt for k in range(max(prompt, 1), len(ids)) if is_special(ref, ids[k - 1])}
    if not lost:
        return []
    return ["".join(d for k, d in enumerate(deltas) if k not in lost) for deltas in _groupings(ref, ids, prompt, asked)]


def first_delta_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas less the first generated id's, never sent: a streamer that skips its prompt
    off by one. Forms: the first delta dropped, of each grouping (``_groupings``); the stream as if
    the prompt held one id more. Not tried where the first generated id is special: a streamer that
    skips it is ``decode.specials-skipped``'s. Nor where the first delta holds U+FFFD: the causes
    that drop bytes that are not UTF-8 name it."""
    if len(ids) <= prompt or is_special(ref, ids[prompt]):
        return []
    if "\ufffd" in right_deltas(ref, ids, prompt, asked)[0]:
        return []
    forms = ["".join(deltas[1:]) for deltas in _groupings(ref, ids, prompt, asked)]
    return forms + ["".join(right_deltas(ref, ids, prompt + 1, asked))]


def first_delta_stripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas with the first one's leading whitespace taken off: a streamer that tidies
    the start of a reply (``lstrip()`` on its first chunk). Forms: the first delta, and the first
    one that is not empty, of each grouping (``_groupings``); and every delta trimmed at its start
    until one keeps some text (the reply's leading whitespace never sent, however many deltas hold
    it), by Python's whitespace and by JavaScript's ``trimStart`` (U+FEFF too, U+0085 not)."""
    groupings = _groupings(ref, ids, prompt, asked)
    right = "".join(groupings[0])  # (the first grouping is the right deltas)
    forms = [right.lstrip(), right[len(_JS_BLANK.match(right).group()):]]
    for deltas in groupings:
        for k in (0, next((k for k, d in enumerate(deltas) if d), 0)):
            forms.append("".join([*deltas[:k], deltas[k].lstrip(), *deltas[k + 1:]]) if deltas else "")
    return [None if form == right else form for form in forms]


def stripped_each_step(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step strips the ends of the text generated so far and sends what lies past the length
    it sent. Leading whitespace never comes, nor whitespace at the end. ChatGLM's ``stream_chat``
    does it: ``process_response`` strips. The text so far is one of three. It is the generated ids
    decoded alone, with or without a step that ends in U+FFFD. Or it is the right deltas joined.
    Each is sliced by the length sent, or sends nothing where it no longer starts with what it sent."""
    if len(ids) - prompt > PREFIXES_UP_TO:
        return []
    alone = step_texts(ref, ids, prompt, prompt, asked)[1:]
    joined = list(accumulate(right_deltas(ref, ids, prompt, asked)))
    forms = []
    for texts in ([t for t in alone if not t.endswith("\ufffd")], alone, joined):
        for guarded in (False, True):
            out, shown = [], ""
            for text in texts:
                text = text.strip()
                if guarded and not text.startswith(shown):
                    continue
                out.append(text[len(shown):])
                shown = text
            forms.append("".join(out))
    return forms


def whole_text_each_step(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step that adds text sends the whole text generated so far, not what it adds. A client
    that appends each delta then shows the reply over and over. Forms: over each grouping of the
    right deltas (``_groupings``)."""
    if len(ids) - prompt > PREFIXES_UP_TO:
        return []
    forms = []
    for deltas in _groupings(ref, ids, prompt, asked):
        forms.append("".join(accumulate(d for d in deltas if d)))
    return forms


LINE_ENDS = regex.compile(r"\r\n|\r|\n")


def last_line_only(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each delta cut to what follows its last line break: a delta that ends in one sends nothing.
    A client that reads only the last ``data:`` line of a Server-Sent Event does this, where the
    server writes a delta's lines as several. Forms: a line ends at LF; at CR LF, CR or LF."""
    deltas = right_deltas(ref, ids, prompt, asked)
    return ["".join(d.rsplit("\n", 1)[-1] for d in deltas), "".join(LINE_ENDS.split(d)[-1] for d in deltas)]


def first_line_only(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each delta cut at its first line break: what follows it in the delta is never sent. A server
    that writes a delta as one Server-Sent Events ``data:`` line does this: the client reads the
    lines after the first as fields of their own. Forms: a line ends at LF; at CR LF, CR or LF."""
    deltas = right_deltas(ref, ids, prompt, asked)
    return ["".join(d.split("\n", 1)[0] for d in deltas), "".join(LINE_ENDS.split(d, 1)[0] for d in deltas)]


def _groupings(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list[list[str]]:
    """The right deltas, and those of a streamer that holds a whole delta back while it ends inside
    a character. Each is a form in its place on every row, alike or not: a verdict counts a form by
    its place."""
    return [right_deltas(ref, ids, prompt, asked), held_back_deltas(bytes_of(ref, ids, asked), prompt)]


def held_back_deltas(pieces: list[bytes], prompt: int) -> list[str]:
    """The deltas of a streamer that sends nothing while its bytes end inside a character, then all
    it holds at once; at the last id, what it holds. The prompt's unfinished character opens it."""
    head = b"".join(pieces[:prompt])
    held, out = head[len(head) - incomplete_tail(head):], []
    for k in range(prompt, len(pieces)):
        held += pieces[k]
        if incomplete_tail(held[-3:]) and k < len(pieces) - 1:
            out.append("")
            continue
        out.append(held.decode("utf-8", "replace"))
        held = b""
    return out


def deltas_lstripped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right deltas, each with its leading spaces taken off; or trimmed, its whitespace at both
    ends taken off (a chunk's ``trim()``)."""
    deltas = right_deltas(ref, ids, prompt, asked)
    # (each form in its place, equal or not: the verdict counts a form by its place)
    return ["".join(d.lstrip(" ") for d in deltas), "".join(d.strip() for d in deltas)]
