"""``chat.content-rewritten``: characters of the contents written as others, read off a prompt as a
table (tokparity/diagnose/content_chars.py). The reading is a guess that the search proves; these
tests pin the guesses."""

from __future__ import annotations

import json

from tokparity.chat.message_edits import characters_rewritten
from tokparity.diagnose import content_chars

HEAD = "<|im_start|>user\n"
TAIL = "<|im_end|>\n<|im_start|>assistant\n"


def tables(content: str, written: str) -> list[dict[str, str]]:
    values, aligned = content_chars.read(HEAD + content + TAIL, HEAD + written + TAIL, [content])
    assert aligned > 0
    return [json.loads(v) for v in values]


def test_a_text_put_after_a_character_is_read_both_ways_the_fewest_first():
    # (``&`` as ``&amp;``: the text put after ``&``, or before the space that follows it)
    assert tables("Tom & Jerry", "Tom &amp; Jerry") == [{"&": "&amp;"}, {" ": "amp; "}]
    read = tables("a\nb.\nc", "a\r\nb.\r\nc")
    assert {"\n": "\r\n"} in read


def test_a_character_written_as_another_text_or_left_out():
    assert tables("it\u2019s \u201cso\u201d", "it's \"so\"") == [{"\u2019": "'", "\u201c": '"', "\u201d": '"'}]
    assert tables("zero\u200bwidth", "zerowidth") == [{"\u200b": ""}]
    assert tables("x\t\ty", "x        y") == [{"\t": "    "}]


def test_no_table_where_the_prompts_part_otherwise():
    # (a whole message changed: more characters than a rewrite holds)
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    assert content_chars.read(HEAD + alphabet + TAIL, HEAD + alphabet[::-1].upper() + "!" + TAIL, [alphabet])[0] == []
    assert content_chars.read("", "x", []) == ([], 0)
    assert content_chars.read("same", "same", ["same"]) == ([], 0)


def test_a_character_the_contents_do_not_hold_is_not_read():
    # (text put before the template's "<|im_end|>": "<" is no content's)
    assert tables("Tell me a joke?", "Tell me a joke?\n") == [{"?": "?\n"}]
    # (text put at the prompt's very end has no character after it: read as put after the last one)
    assert '{"&": "&amp;", "b": "b<think>"}' in content_chars.read("a & b", "a &amp; b<think>", ["a & b"])[0]


def test_several_characters_written_as_one_text_are_split_by_what_the_others_say():
    # (a line feed and a tab written as JSON escapes, side by side: each is read alone elsewhere)
    content = 'a\nb\tc "d"\n\te'
    assert tables(content, json.dumps(content, ensure_ascii=False)[1:-1])[0] == {"\t": "\\t", "\n": "\\n", '"': '\\"'}


def test_each_row_keeps_the_table_the_other_rows_share():
    # (a row whose one line feed follows an ``m`` is given by both readings: the others say which)
    crlf, m = json.dumps({"\n": "\r\n"}), json.dumps({"m": "m\r"})
    assert content_chars.chosen([[m, crlf], [crlf], [crlf], []]) == [crlf, crlf, crlf, None]


def test_tables_joined_over_rows_each_character_as_most_rows_holding_it_write_it():
    amp, lt = json.dumps({"&": "&amp;"}), json.dumps({"<": "&lt;"})
    joined = content_chars.joined([(amp, "a & b"), (lt, "a < b"), (amp, "c & d"), (json.dumps({"&": "and"}), "&"),
                                   (None, "no rewrite")])
    assert json.loads(joined) == {"&": "&amp;", "<": "&lt;"}
    assert content_chars.said(joined) == "'&' as '&amp;', '<' as '&lt;'"
    # (one row read ``.`` as ``.\n``: three rows whose contents hold a ``.`` left it as it is)
    dot = json.dumps({".": ".\\n", "\n": "\\n"})
    joined = content_chars.joined([(dot, "End.\n"), (json.dumps({"\n": "\\n"}), "a.\nb."), (None, "c."), (None, "d.")])
    assert json.loads(joined) == {"\n": "\\n"}


def test_words_written_as_others_are_read_where_no_table_of_characters_fits():
    # (text-generation-webui's macros: `{{user}}` and `<BOT>` written as names, in every content)
    content = "Hi {{user}}, I am <BOT>. Bye {{user}}!"
    values = content_chars.read(HEAD + content + TAIL, HEAD + "Hi You, I am AI. Bye You!" + TAIL, [content])[0]
    assert [json.loads(v) for v in values] == [{"{{user}}": "You", "<BOT>": "AI"}]
    assert content_chars.said(values[0]) == "'<BOT>' as 'AI', '{{user}}' as 'You'"
    assert characters_rewritten("{{user}} and <BOT>", values[0]) == "You and AI"
    # (a word read two ways is no table)
    assert content_chars.read(HEAD + "a {{x}} {{x}}" + TAIL, HEAD + "a 1 2" + TAIL, ["a {{x}} {{x}}"])[0] == []
