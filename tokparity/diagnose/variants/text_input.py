"""The input stage: the text as an engine is handed it (cut at a NUL or a line break, stripped, its
last line feed taken off, its backslash escapes read, sent as Latin-1, a blank text looked up
whole), before the tokenizer sees it."""

from __future__ import annotations

import re
import unicodedata
import urllib.parse
from collections.abc import Callable
from functools import partial

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant


def _text_map(text_map: Callable[[str], str], c: Candidate) -> Candidate | None:
    return c.replace(text_maps=c.text_maps + (text_map,))


def cut_at_nul(text: str) -> str:
    """A C string's reading: what comes before the first NUL."""
    return text.split("\0", 1)[0]


_LINE_BREAK = re.compile("[\n\r]")


def first_line(text: str) -> str:
    """A line reader's: what comes before the first line break."""
    return _LINE_BREAK.split(text, 1)[0]


def last_newline_popped(text: str) -> str:
    """A prompt file's reading in llama.cpp: one line feed taken off the text's end."""
    return text[:-1] if text.endswith("\n") else text


def universal_newlines(text: str) -> str:
    """Python's text mode (``open(path)``, ``newline=None``): each CR LF and each lone CR read as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|[nrt'\"\\])")
_ESCAPED = {"n": "\n", "r": "\r", "t": "\t", "'": "'", '"': '"', "\\": "\\"}


def escapes_processed(text: str) -> str:
    """llama.cpp's ``string_process_escapes``: ``\\n`` ``\\r`` ``\\t`` ``\\'`` ``\\"`` ``\\\\``
    as the character they name, ``\\x`` and two hex digits as that byte (an ASCII one here: a
    byte above 0x7F would leave the text not UTF-8), any other backslash kept."""
    def one(m: re.Match) -> str:
        code = m.group(1)
        if code[0] != "x":
            return _ESCAPED[code]
        return chr(int(code[1:], 16)) if int(code[1:], 16) < 0x80 else m.group()
    return _ESCAPE.sub(one, text)


def latin1_replaced(text: str) -> str:
    """The text sent as ISO-8859-1 (Java's ``getBytes`` of a request body without a charset): each
    character past U+00FF becomes ``?``."""
    return text.encode("latin-1", "replace").decode("latin-1")


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def latin1_read_as_utf8(text: str) -> str:
    """The text sent as ISO-8859-1 and read back as UTF-8 (a Go server's JSON decoder): each
    character past U+00FF becomes ``?``. Then each byte that is not UTF-8 becomes U+FFFD, one for
    each byte, as Go's decoder writes it."""
    read = text.encode("latin-1", "replace").decode("utf-8", "surrogateescape")
    return _ESCAPED_BYTE.sub("\ufffd", read)


INVISIBLE = frozenset({"Cf", "Cc", "Co", "Cn"})


def invisible_removed(text: str, only_with_non_ascii: bool = True) -> str:
    """Each format, control, private-use and unassigned character removed (line feeds and tabs
    too), as a scanner for hidden prompt injections does; by default only in a text that holds a
    character past ASCII. The categories are Python's own (its Unicode version)."""
    if only_with_non_ascii and text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) not in INVISIBLE)


def query_read(text: str, percent: bool = False) -> str:
    """The text sent in a URL's query without its reserved characters escaped (JavaScript's
    ``encodeURI``), as the server's query parser reads it back: the URL ends at the first ``#``
    (a fragment is never sent), the field at the first ``&``, and each ``+`` is a space. With
    ``percent``, nothing was escaped at all, and each ``%`` and two hex digits is read as its byte."""
    text = text.split("#", 1)[0].split("&", 1)[0].replace("+", " ")
    return urllib.parse.unquote(text, errors="replace") if percent else text


def _whitespace_piece(c: Candidate) -> Candidate | None:
    return c.replace(whitespace_piece=True)


def variants() -> list[Variant]:
    """The input stage's variants, in catalogue order."""
    return [
        Variant("input.cut:nul", "input.cut", "the text read as a C string: cut at its first NUL",
                partial(_text_map, cut_at_nul), lambda c, text: "\0" in text),
        Variant("input.cut:line", "input.cut", "only the text's first line read (cut at its first line break)",
                partial(_text_map, first_line), lambda c, text: _LINE_BREAK.search(text) is not None),
        Variant("input.strip:leading", "input.strip", "whitespace stripped from the start of the text (str.lstrip)",
                partial(_text_map, str.lstrip), lambda c, text: text[:1].isspace()),
        Variant("input.strip:both", "input.strip", "whitespace stripped from both ends of the text (str.strip)",
                partial(_text_map, str.strip), lambda c, text: text[:1].isspace() or text[-1:].isspace()),
        Variant("input.strip:trailing", "input.strip", "whitespace stripped from the end of the text (str.rstrip)",
                partial(_text_map, str.rstrip), lambda c, text: text[-1:].isspace()),
        Variant("input.strip:newline", "input.strip", "one line feed taken off the end of the text (as llama.cpp "
                "does to a prompt read from a file)", partial(_text_map, last_newline_popped),
                lambda c, text: text.endswith("\n")),
        Variant("input.universal-newlines", "input.universal-newlines", "each CR LF and each lone CR in the text "
                "read as LF (Python's text mode)", partial(_text_map, universal_newlines), lambda c, text: "\r" in text),
        Variant("input.escapes-processed", "input.escapes-processed", "backslash escapes in the text read as the "
                "characters they name (llama.cpp's string_process_escapes: \\n as a line feed)",
                partial(_text_map, escapes_processed), lambda c, text: escapes_processed(text) != text),
        Variant("input.latin1:replaced", "input.latin1", "the text sent as ISO-8859-1: each character past U+00FF "
                "as '?'", partial(_text_map, latin1_replaced), lambda c, text: any(ord(ch) > 0xFF for ch in text)),
        Variant("input.latin1:read-as-utf8", "input.latin1", "the text sent as ISO-8859-1 and read back as UTF-8: "
                "each character past U+00FF as '?', each byte that is not UTF-8 then as U+FFFD",
                partial(_text_map, latin1_read_as_utf8), lambda c, text: any(ord(ch) > 0x7F for ch in text)),
        Variant("input.invisible-removed:non-ascii", "input.invisible-removed", "in a text with a character past "
                "ASCII, each format, control, private-use and unassigned character removed (line feeds and tabs too)",
                partial(_text_map, invisible_removed), lambda c, text: invisible_removed(text) != text),
        Variant("input.invisible-removed:always", "input.invisible-removed", "each format, control, private-use "
                "and unassigned character removed (line feeds and tabs too)",
                partial(_text_map, partial(invisible_removed, only_with_non_ascii=False)),
                lambda c, text: invisible_removed(text, False) != text),
        Variant("input.query-string:encodeuri", "input.query-string", "the text sent in a URL's query with "
                "encodeURI: cut at its first '#' and its first '&', each '+' read as a space",
                partial(_text_map, query_read), lambda c, text: query_read(text) != text),
        Variant("input.query-string:unescaped", "input.query-string", "the text sent in a URL's query unescaped: cut "
                "at its first '#' and its first '&', each '+' read as a space, each '%' and two hex digits as a byte",
                partial(_text_map, partial(query_read, percent=True)), lambda c, text: query_read(text, True) != text),
        Variant("input.whitespace-piece", "input.whitespace-piece",
                "a blank text (whitespace only) taken as one piece: its id as typed or with the vocabulary's space mark, "
                "else <unk> or nothing", _whitespace_piece, lambda c, text: not text.strip()),
    ]
