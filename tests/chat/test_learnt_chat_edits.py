"""Chat causes learnt off the prompt as rules, not listed one by one: a text added to some
contents (``chat.content-added``, tokparity/diagnose/content_added.py) and the tools' JSON
edited (``chat.tools-edited``, tokparity/diagnose/tools_edited.py). The reading is a guess the
search proves; these tests pin the guesses and the edits they stand for."""

from __future__ import annotations

import json

from tokparity.chat import message_edits
from tokparity.chat.conversation import Conversation
from tokparity.chat.message_edits import text_added
from tokparity.chat.tool_edits import edited, said
from tokparity.diagnose import content_added, content_cut, tools_edited

NO_THINK = {"role": "user", "which": "last", "before": "", "after": " /no_think"}


def chatml(messages: list[dict]) -> str:
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def test_a_text_is_added_to_the_messages_its_rule_picks():
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Why?"}]
    out, options = text_added(messages, {"x": 1}, json.dumps(NO_THINK))
    assert [m["content"] for m in out] == ["Be brief.", "Hi", "Hello", "Why? /no_think"] and options == {"x": 1}
    each = NO_THINK | {"which": "each", "role": "", "before": "> "}
    assert [m["content"] for m in text_added(messages, {}, json.dumps(each))[0]] == \
        ["> Be brief. /no_think", "> Hi /no_think", "> Hello /no_think", "> Why? /no_think"]
    # (a list of parts: with "parts", the text goes into its last text part, an image part stays
    # as it is; without, the list stays as it is)
    parts = [{"role": "user", "content": [{"type": "text", "text": "See"}, {"type": "image_url", "image_url": {}}]}]
    assert text_added(parts, {}, json.dumps(NO_THINK | {"parts": True}))[0][0]["content"][0]["text"] == "See /no_think"
    assert text_added(parts, {}, json.dumps(NO_THINK))[0] == parts


def test_a_text_in_place_of_an_option_is_added_only_where_the_option_has_that_value():
    messages = [{"role": "user", "content": "Hi"}]
    value = json.dumps(NO_THINK | {"when": ["enable_thinking", False]})
    assert text_added(messages, {"enable_thinking": False, "d": 1}, value) == \
        ([{"role": "user", "content": "Hi /no_think"}], {"d": 1})
    # (the option is never passed on; another value, or none, adds nothing; 0 is not false)
    assert text_added(messages, {"enable_thinking": True}, value) == (messages, {})
    assert text_added(messages, {}, value) == (messages, {})
    assert text_added(messages, {"enable_thinking": 0}, value) == (messages, {})


def test_the_text_added_is_read_with_every_rule_that_picks_those_messages():
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"},
                {"role": "user", "content": "Think."}]
    conversation = Conversation(messages, options={"enable_thinking": False})
    got = chatml([*messages[:2], {"role": "user", "content": "Think. /no_think"}])
    values, aligned = content_added.read(chatml(messages), got, conversation)
    assert aligned > 0
    read = [json.loads(v) for v in values]
    assert read[0] == NO_THINK | {"role": "user"}
    assert NO_THINK | {"when": ["enable_thinking", False]} in read
    assert {"role": "", "which": "last", "before": "", "after": " /no_think"} in read
    assert content_added.said(values[1]) == ("puts '␣/no_think' after the content of the last user message, where "
                                             "the option enable_thinking is false, and never passes enable_thinking "
                                             "to the template")


def test_a_text_that_starts_as_the_content_ends_is_still_read_at_the_content_s_end():
    # (" ." put after "Hi." reads as ". " put after "Hi": the aligner may place it either way)
    messages = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Bye."}]
    got = chatml([{"role": "user", "content": "Hi. ."}, {"role": "user", "content": "Bye. ."}])
    read = [json.loads(v) for v in content_added.read(chatml(messages), got, Conversation(messages))[0]]
    assert {"role": "user", "which": "each", "before": "", "after": " ."} in read


def test_no_text_added_is_read_where_the_prompts_part_elsewhere_or_no_rule_fits():
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}, {"role": "user", "content": "c"}]
    # (the middle message alone: no rule picks it)
    got = chatml([messages[0], {"role": "user", "content": "b!"}, messages[2]])
    assert content_added.read(chatml(messages), got, Conversation(messages))[0] == []
    # (a header written otherwise is no content's)
    assert content_added.read(chatml(messages), chatml(messages).replace("assistant", "bot"),
                              Conversation(messages))[0] == []


STRICT = [{"key": "additionalProperties", "where": "object", "value": False},
          {"key": "required", "where": "properties", "value_of": "properties"}]
WEATHER = {"type": "function", "function": {"name": "weather", "description": "The weather.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "description": "A city."},
                                     "when": {"type": "object", "properties": {"day": {"type": "string"}}}},
    "required": ["city"]}}}


def test_the_tools_edited_by_rules_as_openai_s_strict_mode_makes_them():
    params = edited([WEATHER], json.dumps(STRICT))[0]["function"]["parameters"]
    # (a key the object holds keeps its place; a new one comes last)
    assert list(params) == ["type", "properties", "required", "additionalProperties"]
    assert params["required"] == ["city", "when"] and params["additionalProperties"] is False
    assert params["properties"]["when"] == {"type": "object", "properties": {"day": {"type": "string"}},
                                            "additionalProperties": False, "required": ["day"]}
    assert WEATHER["function"]["parameters"]["required"] == ["city"]  # (the request's own tools are left alone)
    assert said(json.dumps(STRICT)) == ("sets additionalProperties to false in every object schema; sets required "
                                        "to the names of its properties in every schema with properties")


def prompt(tools: list[dict]) -> str:
    return "<tools>\n" + "\n".join(json.dumps(t, ensure_ascii=False) for t in tools) + "\n</tools>\nHi"


def test_the_rules_are_read_off_the_tools_json_a_prompt_writes():
    conversation = Conversation([{"role": "user", "content": "Hi"}], tools=[WEATHER])
    strict = edited([WEATHER], json.dumps(STRICT))
    values, read = tools_edited.read(prompt([WEATHER]), prompt(strict), conversation)
    assert read > 0 and len(values) == 1
    assert edited([WEATHER], values[0]) == strict
    # (descriptions taken out, as an adapter for an API that refuses them does)
    dropped = json.loads(json.dumps(WEATHER))
    del dropped["function"]["parameters"]["properties"]["city"]["description"]
    del dropped["function"]["description"]
    values = tools_edited.read(prompt([WEATHER]), prompt([dropped]), conversation)[0]
    assert [json.loads(v) for v in values] == [[{"key": "description", "where": "any", "drop": True}]]


def test_no_rule_is_read_where_a_tool_changes_otherwise():
    conversation = Conversation([{"role": "user", "content": "Hi"}], tools=[WEATHER])
    # (one property's type changed, not the other's: no rule picks that object alone)
    other = json.loads(json.dumps(WEATHER))
    other["function"]["parameters"]["properties"]["city"]["type"] = "integer"
    assert tools_edited.read(prompt([WEATHER]), prompt([other]), conversation)[0] == []
    # (a tool left out: the prompts write other numbers of objects)
    assert tools_edited.read(prompt([WEATHER, WEATHER]), prompt([WEATHER]),
                             Conversation([{"role": "user", "content": "Hi"}], tools=[WEATHER, WEATHER]))[0] == []


def test_a_typed_struct_is_read_where_keys_come_in_another_order():
    # (a server that reads each tool into structs: its fields in its order, a missing one as "")
    struct = [{"where": "parameters", "fields": ["type", "required", "properties"]},
              {"where": "property", "fields": ["type", "description", "enum"], "defaults": {"description": ""}}]
    made = edited([WEATHER], json.dumps(struct))[0]["function"]["parameters"]
    assert list(made) == ["type", "required", "properties"]
    assert made["properties"]["when"] == {"type": "object", "description": ""}  # (its own properties dropped)
    conversation = Conversation([{"role": "user", "content": "Hi"}], tools=[WEATHER])
    values = tools_edited.read(prompt([WEATHER]), prompt(edited([WEATHER], json.dumps(struct))), conversation)[0]
    assert len(values) == 1 and edited([WEATHER], values[0]) == edited([WEATHER], json.dumps(struct))
    # (the properties' objects keep their order: a property's own properties taken out, a description set)
    assert said(values[0]) == ("writes only type, required, properties, in that order, in every tool's parameters; "
                               "takes properties out of every property's schema; sets description to \"\" where "
                               "missing, in every property's schema")


def test_a_key_renamed_in_its_place_is_read_as_renamed():
    renamed = [{"key": "parameters", "where": "function", "rename": "arguments"}]
    made = edited([WEATHER], json.dumps(renamed))[0]["function"]
    assert list(made) == ["name", "description", "arguments"]
    conversation = Conversation([{"role": "user", "content": "Hi"}], tools=[WEATHER])
    values = tools_edited.read(prompt([WEATHER]), prompt(edited([WEATHER], json.dumps(renamed))), conversation)[0]
    assert [json.loads(v) for v in values] == [renamed]
    assert said(values[0]) == "writes parameters as arguments in every tool's function"


def test_a_text_that_holds_the_content_is_read_with_the_content_marked():
    # (Open WebUI's system prompt added once more before itself: S + S + "\n" + S, whatever S is)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    got = chatml([{"role": "system", "content": "Be brief.Be brief.\nBe brief."}, messages[1]])
    values = content_added.read(chatml(messages), got, Conversation(messages))[0]
    assert values, values
    other = [{"role": "system", "content": "Say yes."}, {"role": "user", "content": "Hi"}]
    assert text_added(other, {}, values[0])[0][0]["content"] == "Say yes.Say yes.\nSay yes."
    assert "{content}" in content_added.said(values[0])


def test_a_long_content_cut_short_with_a_note_is_read_as_a_rule_of_its_role():
    # (open-interpreter keeps a tool output's last 2,000 characters after a note)
    long = "".join(f"line {k}\n" for k in range(400))
    note = "Output truncated. Showing the last 2000 characters.\n\n"
    messages = [{"role": "user", "content": "Run it."}, {"role": "tool", "content": long}]
    got = chatml([messages[0], {"role": "tool", "content": note + long[-2000:]}])
    values, aligned = content_cut.read(chatml(messages), got, Conversation(messages))
    assert aligned > 0 and [json.loads(v) for v in values] == [{"role": "tool", "head": 0, "tail": 2000, "note": note}]
    assert content_cut.said(values[0]) == ("cuts a tool message's content longer than 2000 characters to its last "
                                           "2000, after 'Output␣truncated.␣Showing␣the␣last␣2000␣characters.↵↵'")
    # (a short content stays whole; so do the other roles')
    short = [{"role": "tool", "content": "ok"}, {"role": "user", "content": long}]
    assert message_edits.content_cut(short, values[0]) == short
    assert message_edits.content_cut(messages, values[0])[1]["content"] == note + long[-2000:]


def test_no_cut_is_read_where_a_content_is_stripped_emptied_or_a_word_replaced():
    long = "The weather in London is mild today, with rain later.  "
    for written in (long.strip(), "", long.replace("London", "Paris")):
        messages = [{"role": "tool", "content": long}]
        got = chatml([{"role": "tool", "content": written}])
        assert content_cut.read(chatml(messages), got, Conversation(messages))[0] == [], written


def test_a_word_is_rewritten_only_where_it_is_a_whole_word():
    assert message_edits.characters_rewritten("cat category", json.dumps({"cat": "dog", "xy": "z"})) == "dog category"


def test_an_array_s_items_written_as_a_struct_and_json_too_deep_are_read_without_failing():
    tool = {"type": "function", "function": {"name": "tag", "parameters": {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string", "title": "Tag"}}}}}}
    reordered = json.loads(json.dumps(tool))
    reordered["function"]["parameters"]["properties"]["tags"]["items"] = {"title": "Tag", "type": "string"}
    conversation = Conversation([{"role": "user", "content": "Hi"}], tools=[tool])
    values = tools_edited.read(prompt([tool]), prompt([reordered]), conversation)[0]
    assert len(values) == 1 and json.dumps(edited([tool], values[0])) == json.dumps([reordered])
    assert said(values[0]) == "writes only title, type, in that order, in every array's items"
    deep = prompt([tool]) + '{"a":' + "[" * 5000
    assert tools_edited.read(deep, prompt([reordered]) + '{"a":' + "[" * 5000, conversation)[0] == values
