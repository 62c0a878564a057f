"""Wrong decoders: each function answers what a decoder with one named bug answers, built from the
reference's own decoding (tokparity/reference/decode.py). ``tokparity.diagnose.decoding`` lists
them as the decoding causes' variants (``VARIANTS``), each under its name in causes.toml.

Each takes ``(reference, ids, prompt, asked)`` and gives a list of answers: the text (decode), the
text the deltas add up to (stream), or each id's bytes (pieces). A bug written in several ways
gives several answers. ``right_answers`` is what the reference itself answers.
"""

from __future__ import annotations

import re
from dataclasses import replace
from os.path import commonprefix

from tokparity.diagnose.kept_texts import decoded, right_deltas
from tokparity.memo import PerObject
from tokparity.reference import RefTokenizer
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings, hf_clean_up, incomplete_tail
from tokparity.vocab.model import TokenType

# What a decoder that fails answers (a strict UTF-8 decode, a table it cannot build): a failure of
# the case, which a backend's crash is compared with (tokparity.diagnose.decoding).
FAILED = "\x00failed"


def one_fffd_a_run(text: str) -> str:
    """``text`` with each run of U+FFFD as one: decoders spell bytes that are not UTF-8 either way."""
    return re.sub("\ufffd+", "\ufffd", text)


def bytes_of(ref: RefTokenizer, ids: list[int], asked: DecodeSettings = AS_FILES_SAY) -> list[bytes]:
    """Each id's bytes; a special token's are its text, or nothing where specials are left out."""
    return [b"" if asked.skip_special and is_special(ref, i) else b for i, b in zip(ids, ref.piece_bytes(ids))]


def is_special(ref: RefTokenizer, i: int) -> bool:
    types = ref.vocab.token_types
    return i in set(ref.vocab.special_ids.values()) or bool(types and 0 <= i < len(types) and
                                                           types[i] == TokenType.CONTROL)


# --- stream ------------------------------------------------------------------------------------


def latin1(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return ["".join(b.decode("latin-1") for b in bytes_of(ref, ids[prompt:], asked))]


def joined(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The pieces' bytes joined and read as UTF-8, the bytes of a character the prompt began in
    front: the twin of the variants that send each id's bytes at once."""
    head = b"".join(bytes_of(ref, ids[:prompt], asked))
    held = head[len(head) - incomplete_tail(head):]
    return [(held + b"".join(bytes_of(ref, ids[prompt:], asked))).decode("utf-8", "replace")]


def joined_all(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [b"".join(bytes_of(ref, ids, asked)).decode("utf-8", "replace")]


def eager(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return ["".join(b.decode("utf-8", "replace") for b in bytes_of(ref, ids[prompt:], asked))]


def prompt_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The generated ids decoded as if they began the text, with the first word's space or without.
    A streamer holds back a character its last id leaves unfinished, as the judge allows; the
    first two forms hold it back, the last two send it as U+FFFD (where none is unfinished, the
    same texts)."""
    fresh = decoded(ref, ids[prompt:], asked)
    data = ref.decode_as(ids[prompt:], asked, "surrogateescape").encode("utf-8", "surrogateescape")
    cut = incomplete_tail(data)
    held = data[:len(data) - cut].decode("utf-8", "replace") if cut and fresh.endswith("\ufffd") else fresh
    return [held, held[1:] if held.startswith(" ") else held, fresh, fresh[1:] if fresh.startswith(" ") else fresh]


def prompt_resent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    whole = decoded(ref, ids, asked)
    head = decoded(ref, ids[:prompt], asked)
    rest = whole[len(head.rstrip("\ufffd")):] if whole.startswith(head.rstrip("\ufffd")) else whole
    return [whole, head + rest]


def last_prompt_token_resent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Where the first id after the prompt writes nothing (a special token skipped), the text of the
    prompt's last token sent again first: an incremental detokenizer whose read offset starts one
    token back, for a token it then skips. None where the first id writes text."""
    if not 0 < prompt < len(ids):
        return [None]
    head, shorter = decoded(ref, ids[:prompt], asked), decoded(ref, ids[:prompt - 1], asked)
    if decoded(ref, ids[:prompt + 1], asked) != head:  # (it writes text in context: '▁' alone writes none)
        return [None]
    last = head[len(shorter):] if head.startswith(shorter) else ""
    return [last + right_answers(ref, "stream", ids, prompt, asked)[0]] if last.strip("\ufffd") else [None]


def begun_character_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text after the prompt taken at the length of the prompt's own text: where the prompt ends
    inside a character, its text ends in U+FFFD, and the character that U+FFFD stood for is skipped."""
    whole, head = decoded(ref, ids, asked), decoded(ref, ids[:prompt], asked)
    return [whole[len(head):]] if head.endswith("\ufffd") else []


# The variants that decode every prefix of the ids cost their square: they look at this many ids
# after the prompt at most (the edge corpus's long texts hold about 1,000). A longer stream case is
# left to its shape.
PREFIXES_UP_TO = 1100


def offset_into_lossy_text(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step decodes every id so far, an unfinished character as U+FFFD, and sends the text
    beyond an offset: the U+FFFD goes out, and the character that later takes its place does not.
    Forms: the window holds the prompt (its text the first offset) or starts after it; the offset
    is the last text's length or the length sent (they part where a text shrinks)."""
    if len(ids) - prompt > PREFIXES_UP_TO or not _may_split_or_shrink(ref, ids, prompt, asked):
        return []
    answers = []
    for start in dict.fromkeys((0, prompt)):
        head_text, *texts = step_texts(ref, ids, start, prompt, asked)
        head = len(head_text)
        for follow in (True, False):
            offset, out = head, []
            for text in texts:
                out.append(text[offset:])
                offset = len(text) if follow else offset + len(out[-1])
            answers.append("".join(out))
    return answers


CLUSTER_WINDOW = 32  # characters read before a place to tell whether a grapheme cluster ends there


def text_resent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step decodes every id so far and sends what follows the last step's text; where the last
    text does not start this one (a U+FFFD put right, a space cleaned up), it sends the whole text
    again. Forms: the window holds the prompt or starts after it (None where they are one); then
    the same two where "starts" is read by whole characters as a user sees them, as Swift's
    ``hasPrefix`` reads it (``e`` does not start ``é`` written as e and a combining accent)."""
    import regex

    if len(ids) - prompt > PREFIXES_UP_TO or not _may_split_or_shrink(ref, ids, prompt, asked):
        return []

    def starts(text: str, last: str, by_clusters: bool) -> bool:
        if not text.startswith(last):
            return False
        # (a cluster boundary where last ends, read in a window around it: clusters are short)
        at = len(last)
        begin = max(0, at - CLUSTER_WINDOW)
        return not by_clusters or not last or at - begin in {m.end() for m in regex.finditer(r"\X", text[begin:at + 8])}

    answers: list[str | None] = []
    for by_clusters in (False, True):
        for k, start in enumerate((0, prompt)):
            if k and not prompt:  # (no prompt: the window that starts after it is the whole text)
                answers.append(answers[-1])
                continue
            last, *texts = step_texts(ref, ids, start, prompt, asked)
            out = []
            for text in texts:
                out.append(text[len(last):] if starts(text, last, by_clusters) else text)
                last = text
            answers.append("".join(out))
    return answers


_STEPS: PerObject[tuple[str, ...]] = PerObject(size=16)  # (reference; ids, start, prompt, asked) -> texts


def step_texts(ref: RefTokenizer, ids: list[int], start: int, prompt: int, asked: DecodeSettings) -> tuple[str, ...]:
    """The decoder's text of ``ids[start:end]`` for the prompt's end, then for each end after it: what
    a streamer that decodes everything so far at each step sees. Two stream variants read the same
    texts of one case, and each costs a decode per id: the last few are kept."""
    return _STEPS.get(ref, (tuple(ids), start, prompt, asked),
                      lambda: tuple(decoded(ref, ids[start:end], asked) for end in range(prompt, len(ids) + 1)))


def _may_split_or_shrink(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> bool:
    """Whether a step from the prompt on ends inside a character, or the decoder rewrites the
    bytes (a clean-up, a space taken off): elsewhere each step's text starts the next one's."""
    pieces, tail = bytes_of(ref, ids, asked), b""
    for k, piece in enumerate(pieces, 1):
        tail = (tail + piece)[-4:]
        if k >= prompt and incomplete_tail(tail):
            return True
    return decoded(ref, ids, asked) != b"".join(pieces).decode("utf-8", "replace")


def cluster_resent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each step decodes every id so far and sends what lies past its common prefix with the last
    text, counted in grapheme clusters: a mark that joins the last character sends that character
    again. A text that ends in U+FFFD is held (and at the end never sent)."""
    import regex

    if len(ids) - prompt > PREFIXES_UP_TO or all(len(c) == 1 for c in regex.findall(r"\X", decoded(ref, ids, asked))):
        return []  # (no character of more than one code point: no cluster can change)
    last, out = regex.findall(r"\X", decoded(ref, ids[:prompt], asked)), []
    for end in range(prompt + 1, len(ids) + 1):
        text = decoded(ref, ids[:end], asked)
        if text.endswith("\ufffd"):
            continue
        now = regex.findall(r"\X", text)
        same = len(commonprefix([last, now]))
        out.append("".join(now[same:]))
        last = now
    return ["".join(out)]


def restart_after_newline(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    answers = []
    for start in (prompt, 0):  # (the prompt dropped, as transformers' TextStreamer(skip_prompt) does, or kept)
        parts, run = [], []
        for i in ids[start:]:
            run.append(i)
            if decoded(ref, [i], asked).endswith("\n"):
                parts.append(decoded(ref, run, asked))
                run = []
        parts.append(decoded(ref, run, asked))
        text = "".join(parts)
        answers.append(text if start == prompt else text[len(decoded(ref, ids[:prompt], asked)):])
    return answers


_ADDED: PerObject[list[str]] = PerObject(size=4)  # (vocabulary) -> its added tokens' texts


def added_texts(vocab) -> list[str]:
    """The texts of a vocabulary's added tokens (control and user-defined), read once per vocabulary."""
    added = (TokenType.CONTROL, TokenType.USER_DEFINED)
    return _ADDED.get(vocab, "added", lambda: [vocab.tokens[k] for k in range(vocab.size) if vocab.type_of(k) in added])


_TAG_STARTS: PerObject[tuple[frozenset[str], int]] = PerObject(size=4)  # (vocabulary) -> tag starts, longest


def _tag_starts(vocab) -> tuple[frozenset[str], int]:
    """Every proper start of an added token's text that may become a tag (``<``, ``</thi``), and the
    longest one's length. A token of whitespace is no tag: a streamer holds back none of it."""
    def made() -> tuple[frozenset[str], int]:
        tags = [t for t in added_texts(vocab) if len(t) > 1 and not t.isspace()]
        starts = frozenset(t[:k] for t in tags for k in range(1, len(t)))
        return starts, max(map(len, starts), default=0)
    return _TAG_STARTS.get(vocab, "tag starts", made)


def tag_start_held(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream less its end where that end begins an added token's text (``<``, ``</thi``
    of ``</think>``): a streamer that holds back what may become a tag, and never sends it."""
    starts, longest = _tag_starts(ref.vocab)
    if not starts:
        return []
    text = "".join(right_deltas(ref, ids, prompt, asked))
    held = next((k for k in range(min(longest, len(text)), 0, -1) if text[-k:] in starts), 0)
    return [text[:-held]] if held else []


def tail_never_sent(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream's text up to its last space (or its last whitespace of any kind): the word
    being written is held back and never sent."""
    text = "".join(right_deltas(ref, ids, prompt, asked))
    last_ws = max((k for k, ch in enumerate(text) if ch.isspace()), default=-1)
    return [text[:text.rfind(" ") + 1], text[:last_ws + 1]]


HELD_CHARS = range(1, 65)  # the characters a streamer may hold back for its stop strings, each a form


def last_step_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream less the text of its last step's ids (``asked.step`` at once), which are
    never decoded: a finish that ends the stream before the last step is read."""
    deltas = right_deltas(ref, ids, prompt, asked)
    return ["".join(deltas[:len(deltas) - (len(deltas) % asked.step or asked.step)])] if deltas else []


def last_id_per_step(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Of each step's ids (``asked.step`` at once), only the last one's text sent: a delta made of
    the step's last output only. A step of one id is the right stream."""
    if asked.step < 2:
        return []
    deltas = right_deltas(ref, ids, prompt, asked)
    return ["".join(d for k, d in enumerate(deltas) if (k + 1) % asked.step == 0 or k == len(deltas) - 1)]


def characters_held_back(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right stream less its last N characters, held back (for a stop string that might begin
    there) and never sent at its end: a form per N."""
    text = "".join(right_deltas(ref, ids, prompt, asked))
    return [text[:-n] if len(text) >= n else "" for n in HELD_CHARS]


def right_stream(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return right_answers(ref, "stream", ids, prompt, asked)


def held_to_the_end(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """No text of its own (its text is the right one): diagnose_decoding proves it on the deltas."""
    return []


def lagged(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """No text of its own either: the judge lets a stream send late, unless it sends nothing before
    its end. The run's verdict tells such a stream from one held whole (decoding._held_or_lagged)."""
    return []


# --- decode ------------------------------------------------------------------------------------


def specials_skipped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [decoded(ref, ids, replace(asked, skip_special=True))] if not asked.skip_special else []


def added_skipped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Special tokens skipped as asked, and every other added token with them (``<think>``): every
    token the vocabulary types as user-defined or control, whatever the decoder calls special."""
    if not asked.skip_special:
        return []
    types = ref.vocab.token_types
    added = (TokenType.USER_DEFINED, TokenType.CONTROL)
    kept = [i for i in ids if not (types and 0 <= i < len(types) and types[i] in added)]
    return [decoded(ref, kept, asked)] if len(kept) < len(ids) else []


def specials_written(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [decoded(ref, ids, replace(asked, skip_special=False))] if asked.skip_special else []


def specials_spaced(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text with special and added tokens spaced apart where it was not to be (vLLM's
    spaces_between_special_tokens), or not spaced where it was; or with only the special ones
    spaced apart, user-defined added tokens left inside the runs (as an engine may do either way)."""
    answers = [decoded(ref, ids, replace(asked, spaces_between_specials=not asked.spaces_between_specials))]
    plain = replace(asked, spaces_between_specials=False)
    parts: list[str] = []
    run: list[int] = []
    for i in ids:
        if not is_special(ref, i):
            run.append(i)
        elif not asked.skip_special:
            if run:
                parts.append(decoded(ref, run, plain))
                run = []
            parts.append(decoded(ref, [i], plain))
    if run:
        parts.append(decoded(ref, run, plain))
    return answers + [" ".join(parts)]


def cleanup(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text cleaned up (transformers' way), or decoded as the files say with clean-up forced
    off and on (llama.cpp's own three passes where the files are llama.cpp's)."""
    return [hf_clean_up(decoded(ref, ids, asked)), decoded(ref, ids, replace(asked, clean_up=False)),
            decoded(ref, ids, replace(asked, clean_up=True))]


def remove_special(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """llama.cpp's remove_special flipped; or, asked, the BOS and EOS taken off and the ids decoded
    as if they began the text (its first space dropped: the dummy prefix's, which llama.cpp keeps
    once the BOS is gone)."""
    answers = [decoded(ref, ids, replace(asked, remove_special=not asked.remove_special))]
    specials = ref.vocab.special_ids
    trimmed = ids[1:] if ids and ids[0] == specials.get("bos") else ids
    trimmed = trimmed[:-1] if trimmed and trimmed[-1] == specials.get("eos") else trimmed
    if asked.remove_special and trimmed != ids:
        answers.append(decoded(ref, trimmed, replace(asked, remove_special=False)))
    return answers


def unfinished_end_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    from tokparity.reference.decode import held_tail, shown
    text = ref.decode_as(ids, asked, "surrogateescape")
    held = held_tail(text)
    return [shown(text[:len(text) - held])] if held else []


def each_alone(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id decoded alone, the texts joined: a part of a character written as U+FFFD, or
    dropped (``decode("utf-8", errors="ignore")``). The second is None where it is the whole text
    with its bad bytes dropped: that is decode.invalid-bytes-dropped's answer, the simpler reading
    (``each_alone_ignoring`` gives it to the run's verdict)."""
    ignoring = each_alone_ignoring(ref, ids, prompt, asked)[1]
    return ["".join(decoded(ref, [i], asked) for i in ids), None if ignoring == ref.decode_as(ids, asked, "ignore") else ignoring]


def each_alone_ignoring(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id decoded alone with its bad bytes dropped, the texts joined: ``each_alone``'s second
    form, in its place."""
    return [None, "".join(ref.decode_as([i], asked, "ignore") for i in ids)]


def rest_dropped_after_invalid(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The text up to the first byte that is not UTF-8 (an unfinished last character too), the rest dropped."""
    text = ref.decode_as(ids, asked, "surrogateescape")
    cut = next((k for k, ch in enumerate(text) if "\udc80" <= ch <= "\udcff"), None)
    return [text[:cut]] if cut is not None else []


def lstrip(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The pieces joined with one leading space of each taken off (llama.cpp's ``lstrip`` of 1: "skip
    up to 1 leading space"), or every leading space."""
    pieces = bytes_of(ref, ids, asked)
    return [b"".join(b[1:] if b.startswith(b" ") else b for b in pieces).decode("utf-8", "replace"),
            b"".join(b.lstrip(b" ") for b in pieces).decode("utf-8", "replace")]


def prefix_kept(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The decoded text with the space its first token begins with kept (one, or all of its leading
    spaces): a decoder that never strips the space the tokenizer put before the text."""
    text = decoded(ref, ids, asked)
    first = next(((i, b) for i, b in zip(ids, bytes_of(ref, ids, asked)) if b), None)
    tokens = ref.vocab.tokens
    # (the space a tokenizer puts before the text is a SentencePiece ``▁``: a WordPiece decoder's
    # space before a piece, or a byte-level ``Ġ`` that no decoder strips, is not it)
    if first is None or not (0 <= first[0] < len(tokens) and tokens[first[0]].startswith("\u2581")):
        return []
    spaces = len(first[1]) - len(first[1].lstrip(b" "))
    # (the decoder stripped a space where the text leads with fewer spaces than the ids' bytes: a text
    # may begin with a space of its own, after a first token "▁" the decoder took whole)
    joined = b"".join(bytes_of(ref, ids, asked))
    if not spaces or len(text) - len(text.lstrip(" ")) >= len(joined) - len(joined.lstrip(b" ")):
        return []
    return [" " + text, " " * spaces + text]  # (each form in its place: the verdict counts a form by its place)


BUFFERS = (8, 16, 32, 64, 128, 256)  # fixed sizes a token's buffer or field may have, in bytes


def long_token_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """For each buffer size: the ids decoded without the tokens longer than it, by the decoder and
    by joining the bytes (an engine that joins them keeps a Metaspace text's first space)."""
    pieces = bytes_of(ref, ids, asked)
    answers = []
    for size in BUFFERS:
        kept = [i for i, b in zip(ids, pieces) if len(b) <= size]
        answers += [decoded(ref, kept, asked), b"".join(b for b in pieces if len(b) <= size).decode("utf-8", "replace")]
    return answers


BYTE_SHAPED = re.compile(r"<.{4}>", re.DOTALL)  # the length and brackets of `<0xHH>`, whatever is inside
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_shaped_tokens(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Every token spelt as six characters ``<....>`` read as a byte token: the others (``<mask>``)
    as a byte that is not UTF-8, or as nothing; or, as tokenizers' ByteFallback decodes a run of
    byte tokens that is not UTF-8, the whole run with it as U+FFFD. By joining the bytes, with the
    decoder's first space dropped where the right text drops it."""
    tokens, pieces = ref.vocab.tokens, bytes_of(ref, ids, asked)
    shaped = {k for k, i in enumerate(ids) if pieces[k] and 0 <= i < len(tokens)
              and BYTE_SHAPED.fullmatch(tokens[i]) and not BYTE_TOKEN.fullmatch(tokens[i])}
    if not shaped:
        return []
    in_run = set(shaped)  # the byte tokens next to a shaped one, and theirs, and so on
    for k in sorted(shaped):
        for step in (-1, 1):
            j = k + step
            while 0 <= j < len(ids) and (j in shaped or (0 <= ids[j] < len(tokens) and BYTE_TOKEN.fullmatch(tokens[ids[j]]))):
                in_run.add(j)
                j += step
    right, joined = decoded(ref, ids, asked), b"".join(pieces).decode("utf-8", "replace")
    answers = []
    for byte, bad in ((b"\xff", shaped), (b"", shaped), (b"\xff", in_run)):
        text = b"".join(byte if k in bad else b for k, b in enumerate(pieces)).decode("utf-8", "replace")
        answers.append(text[1:] if joined != right and joined[1:] == right and text.startswith(" ") else text)
    return answers


def decoded_right(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The right text, by the decoder and by joining the bytes: the twin of the variants that do either."""
    return [decoded(ref, ids, asked), b"".join(bytes_of(ref, ids, asked)).decode("utf-8", "replace")]


def decode_latin1(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The ids' bytes read as Latin-1: each id's bytes joined, or the right text's bytes. Or read as
    Latin-1 only where they are not UTF-8 (``try: utf-8 except: latin-1``); None where they are."""
    joined = b"".join(bytes_of(ref, ids, asked))
    try:
        joined.decode("utf-8")
        fallback = None
    except UnicodeDecodeError:
        fallback = joined.decode("latin-1")
    return [joined.decode("latin-1"), decoded(ref, ids, asked).encode().decode("latin-1"), fallback]


# --- pieces ------------------------------------------------------------------------------------


def raw_tokens(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each token's string as its bytes; the second form maps a byte-level token's space and newline
    marks (``Ġ``, ``Ċ``) back and leaves every other character as written (the first where the ids
    have none: an engine of either form answers so there; a ``▁`` mapped alone is
    pieces.byte-tokens-raw's answer)."""
    raw = [ref.vocab.tokens[i].encode("utf-8", "surrogateescape") for i in ids]
    marks = {"\u0120": b" ", "\u010a": b"\n"}
    spaced = [b"".join(marks.get(c, c.encode("utf-8", "surrogateescape")) for c in ref.vocab.tokens[i]) for i in ids]
    return [raw, spaced]


def byte_ff_dropped(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    right = ref.piece_bytes(ids)
    return [[b"" if b == b"\xff" else b for b in right]] if b"\xff" in right else []


def decoded_alone(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [[ref.decode([i], "surrogateescape", special=True).encode("utf-8", "surrogateescape") for i in ids]]


def added_raw(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each added token that is not special written with ``▁`` for its spaces, as a SentencePiece or
    Metaspace file spells it (the loader reads them as spaces, as llama.cpp does)."""
    if "\u2581" not in "".join(ref.vocab.tokens[:1000]):  # (a vocabulary that spells no space ▁)
        return []
    types = ref.vocab.token_types or []
    right = ref.piece_bytes(ids)
    raw = [b.replace(b" ", "\u2581".encode()) if 0 <= i < len(types) and types[i] == TokenType.USER_DEFINED else b
           for i, b in zip(ids, right)]
    return [raw] if raw != right else []


def text_not_bytes(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """Each id's bytes read as UTF-8 text, one U+FFFD where they are not (a table of strings)."""
    right = ref.piece_bytes(ids)
    text = [b.decode("utf-8", "replace").encode("utf-8") for b in right]
    return [text] if text != right else []


def specials_left_out(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """The special tokens with no bytes; or every added token, special or not (a table built from
    the model's own vocabulary alone); or the user-defined ones alone (a table that writes only a
    normal token's text, and a control token's). Or only those the model's files name (BOS, EOS,
    unknown, padding: transformers' ``all_special_ids``). Or the added tokens tokenizer.json does not
    mark special (``<|fim_prefix|>`` too, which looks like a control token), or those it marks special."""
    right, vocab = ref.piece_bytes(ids), ref.vocab
    user_defined = [0 <= i < vocab.size and vocab.type_of(i) == TokenType.USER_DEFINED for i in ids]
    named = set(vocab.special_ids.values())
    marked = {t.get("id"): bool(t.get("special")) for t in vocab.extra.get("added_tokens") or () if isinstance(t, dict)}
    forms = [[b"" if is_special(ref, i) else b for i, b in zip(ids, right)],
             [b"" if is_special(ref, i) or u else b for i, b, u in zip(ids, right, user_defined)],
             [b"" if u else b for b, u in zip(right, user_defined)],
             # (a table that writes the newline token's text apart, as llama.cpp's wrappers do)
             [b"" if u and b != b"\n" else b for b, u in zip(right, user_defined)],
             [b"" if i in named else b for i, b in zip(ids, right)],
             [b"" if marked.get(i) is False else b for i, b in zip(ids, right)],
             [b"" if marked.get(i) else b for i, b in zip(ids, right)]]
    return forms if any(out != right for out in forms) else []  # (each form in its place)


def space_before_space(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """A space put before each token that begins with ``▁`` (or is byte 0x20), over the space the
    ``▁`` already stands for: a fix for decoders that drop a first token's space, applied to one
    that does not."""
    right = ref.piece_bytes(ids)
    # (an added token as the file spells it: Gemma 3's runs of spaces are added tokens '▁▁'…)
    added = {t.get("id"): t.get("content") for t in ref.vocab.extra.get("added_tokens") or () if isinstance(t, dict)}
    spelt = [str(added.get(i, ref.vocab.tokens[i] if 0 <= i < ref.vocab.size else "")) for i in ids]
    out = [b" " + b if token.startswith("\u2581") or token == "<0x20>" else b for token, b in zip(spelt, right)]
    return [out] if out != right else []


def long_token_cut(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    right = ref.piece_bytes(ids)
    return [[b[:size] for b in right] for size in BUFFERS]


def right_pieces(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    return [ref.piece_bytes(ids)]


def right_answers(ref: RefTokenizer, op: str, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
    """What the reference's own decoding answers (as a backend's answer is read: decoding.py)."""
    if op == "pieces":
        return [ref.piece_bytes(ids)]
    if op == "stream":
        whole, head = decoded(ref, ids, asked), decoded(ref, ids[:prompt], asked)
        deltas = "".join(right_deltas(ref, ids, prompt, asked))
        held = incomplete_tail(ref.decode_as(ids[:prompt], asked, "surrogateescape")[-4:].encode(
            "utf-8", "surrogateescape")) if prompt else 0
        # (two answers in their places, as callers read them; the second: the text after the prompt's,
        # where a U+FFFD in the prompt's own text is the prompt's)
        answers = [deltas, deltas if held else whole[len(commonprefix([whole, head])):]]
        # (a character the prompt leaves unfinished is the generation's: its U+FFFD, one for the sequence or
        # one per byte, is sent with the generated text, as the judge takes it: tokparity.diff.decode.expected_stream)
        for k in dict.fromkeys((1, held)) if held else ():
            if head.endswith("\ufffd" * k) and whole.startswith(head[:len(head) - k]):
                answers.append(whole[len(head) - k:])
        return answers
    return [decoded(ref, ids, asked)]
