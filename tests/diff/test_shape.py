"""The shape of an encode mismatch says what the engine did, on a real vocabulary: llama.cpp gives
the reference's ids, and each engine is llama.cpp with one behaviour changed, on the input or on
the output, as a buggy port would. Its bug-free twin (llama.cpp itself) has no shape."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest

from tokparity.diff.shape import chat_shape, encode_shape, output_shape
from tokparity.vocab import load_vocab

sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "engines"))
from greedy_engine import GreedyEngine  # noqa: E402

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install 'tokparity[llama]'")

TEXT = "The café's ｆｕｌｌ menu\u200b costs 12 €."


@pytest.fixture(scope="module")
def spm(zoo):
    path = zoo("llama-spm").files["gguf"]
    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(llm.model)

    def encode(text: str, add_special: bool = True, parse_special: bool = False) -> list[int]:
        data = text.encode()
        buf = (llama_cpp.llama_token * (len(data) + 8))()
        n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, len(buf), add_special, parse_special)
        return list(buf[:n])

    yield path, load_vocab(path), encode
    del llm


def shape(spm, engine_ids: list[int], text: str = TEXT) -> str:
    _, vocab, encode = spm
    return encode_shape(vocab, text, encode(text), engine_ids)


def test_the_bug_free_twin_has_no_shape(spm):
    assert shape(spm, spm[2](TEXT)) == ""


def test_ids_cut_at_a_count(spm):
    ids = spm[2](TEXT)
    said = shape(spm, ids[:8])
    assert said.startswith(f"ids missing at the end: the engine gives 8 of the reference's {len(ids)} ids, for ")
    assert said.endswith("has none")


def test_a_character_the_normalizer_strips(spm):
    said = shape(spm, spm[2](TEXT.replace("\u200b", "")))
    assert said == f"text dropped at character {TEXT.index(chr(0x200B))}: '\\u200b' has no ids"


def test_nfkc_where_the_model_has_none(spm):
    said = shape(spm, spm[2](unicodedata.normalize("NFKC", TEXT)))
    assert said.startswith(f"text written otherwise at character {TEXT.index('ｆ')}: 'full")
    assert "where the reference has 'ｆｕｌｌ" in said


def test_a_space_prefix_added_twice(spm):
    assert shape(spm, spm[2](" " + TEXT)) == "text inserted at character 0: ' ', not in the reference's ids"


def test_bos_left_out_and_doubled(spm):
    ids = spm[2](TEXT)
    assert shape(spm, spm[2](TEXT, add_special=False)) == "special token '<s>' left out at the start"
    assert shape(spm, ids[:1] + ids) == "special token '<s>' 2 times at the start, where the reference has 1"
    assert shape(spm, ids + [2]) == "special token '</s>' added at the end"
    assert shape(spm, ids[1:] + [2]) == "special token '<s>' left out at the start; special token '</s>' added at the end"


def test_special_token_text_read_as_its_id_or_spelt(spm):
    """llama.cpp asked to parse special-token text, where the reference spells it, and the reverse."""
    _, vocab, encode = spm
    text = "Hi </s> there"
    spelt, parsed = encode(text, add_special=False), encode(text, add_special=False, parse_special=True)
    assert encode_shape(vocab, text, spelt, parsed) == (
        "special token text '</s>' read as its id at character 3, where the reference spells it as text")
    assert encode_shape(vocab, text, parsed, spelt) == (
        "special token text '</s>' spelt as text at character 3, where the reference reads it as its id")


def test_the_same_bytes_cut_by_the_longest_piece(spm):
    _, vocab, _ = spm
    said = shape(spm, [1, *GreedyEngine(vocab).encode(TEXT)])
    assert said.startswith("same bytes, cut otherwise at character ")


def test_an_id_the_vocabulary_has_not(spm):
    assert shape(spm, [*spm[2](TEXT), 10**6]) == "id 1000000 is not in the vocabulary (32000 tokens)"


# -- decode, stream and pieces: the shape of the text a detokenizer gives ----------------------------

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed: pip install 'tokparity[hf]'")
WORDS = "Hello world, 𓀀 café"  # (the hieroglyph: four byte tokens)


@pytest.fixture(scope="module")
def bpe(zoo):
    path = zoo("llama-bpe").files["tokenizer_json"]
    tok = tokenizers.Tokenizer.from_file(str(path))
    return load_vocab(path), tok, tok.encode(WORDS, add_special_tokens=False).ids


def test_each_id_decoded_alone(bpe):
    vocab, tok, ids = bpe
    alone = "".join(tok.decode([i]) for i in ids)
    said = output_shape("decode", vocab, ids, [tok.decode(ids)], [alone])
    assert said.startswith(f"text written otherwise at character {WORDS.index('𓀀')}: '�")
    assert "(U+FFFD)" in said and "where the decoder has '𓀀" in said


def test_the_rest_dropped_after_an_invalid_byte(bpe):
    vocab, tok, ids = bpe
    whole = tok.decode(ids)
    cut = b"".join(tok.decode_batch([[i]])[0].encode() for i in ids).split(b"\xef\xbf\xbd")[0].decode()
    assert output_shape("decode", vocab, ids, [whole], [cut]) == (
        f"text missing at the end: the text is {len(cut.encode())} of the decoder's {len(whole.encode())} bytes; "
        f"{whole[len(cut):]!r} is not")


def test_a_stream_that_adds_up_but_splits_otherwise_and_one_that_repeats(bpe):
    vocab, tok, ids = bpe
    whole = tok.decode(ids)
    assert output_shape("stream", vocab, ids, [whole], [whole]) == \
        "the deltas add up to the decoder's text, but split into 1 deltas otherwise"
    said = output_shape("stream", vocab, ids, [whole], [whole[:5], whole[:11], whole[11:]])
    assert said == "text inserted at character 5: 'Hello', not in the decoder's"


def test_pieces_written_raw(bpe):
    vocab, _, ids = bpe
    right = [vocab.tokens[i].encode().hex() for i in ids]
    raw = [("X" + vocab.tokens[i]).encode().hex() if k == 1 else right[k] for k, i in enumerate(ids)]
    said = output_shape("pieces", vocab, ids, right, raw)
    assert said.startswith(f"1 of {len(ids)} ids' bytes differ; the first, id {ids[1]} ({vocab.tokens[ids[1]]!r}): 'X")


def test_no_output_no_shape(bpe):
    vocab, _, ids = bpe
    assert output_shape("decode", vocab, ids, ["a"], []) == ""


# -- chat: where the engine's prompt parts from the template's, as a part of the conversation -------

CHATML = ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
          "<|im_start|>assistant\n")
CONTENTS = ["Be brief.", "Hi there"]


def test_chat_generation_prompt_left_out():
    said = chat_shape(CONTENTS, CHATML, CHATML.removesuffix("<|im_start|>assistant\n"))
    assert said.startswith(f"prompt cut short at character {len(CHATML) - 22}, after the last message's content "
                           "(message 1: its end, the generation prompt): '<|im_start|>assistant\\n'")


def test_chat_content_trimmed_and_system_turn_added():
    padded = CHATML.replace("Hi there", " Hi there ")
    assert chat_shape([c if k == 0 else " Hi there " for k, c in enumerate(CONTENTS)], padded, CHATML) == (
        f"text trimmed at character {padded.index(' Hi')}, in message 1's content (character 0 of it): 'Hi there' "
        "where the template has ' Hi there '")
    said = chat_shape(CONTENTS, CHATML, "<|im_start|>system\nYou are helpful.<|im_end|>\n" + CHATML)
    assert said.startswith("text inserted at character 19, before message 0's content (the prompt's start: BOS, a "
                           "system turn, tools, headers)")


def test_chat_separator_between_messages():
    said = chat_shape(CONTENTS, CHATML, CHATML.replace("<|im_end|>\n<|im_start|>user", "<|im_end|><|im_start|>user"))
    at = CHATML.index("<|im_end|>\n<|im_start|>user") + len("<|im_end|>")
    assert said == (f"text dropped at character {at}, between message 0's content and message 1's (a separator, a "
                    "header): '\\n' is missing from the engine's prompt")


def test_a_whole_message_without_text_is_said_to_stand_where_the_prompts_part():
    """llama-cpp-python's chat formats leave out an assistant turn of tool calls: the shape said
    "a separator, a header" between the messages around it, as if only a separator were lost. It
    says the turn or a header: a role renamed in the next message's header parts there too."""
    call = "<|im_start|>assistant\n<tool_call>{}</tool_call><|im_end|>\n"
    with_call = CHATML.replace("<|im_start|>assistant\n", call + "<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n")
    without = with_call.replace(call, "")
    said = chat_shape([*CONTENTS, "", "Thanks"], with_call, without)
    at = with_call.index(call) + len("<|im_start|>")  # (the prompts share the next turn's start)
    assert said.startswith(f"text dropped at character {at}, between message 1's content and message 3's: in "
                           "message 2's turn, or a separator or header beside it (no text content of message 2's "
                           "found: tool calls, parts, none): 'assistant")


def test_a_change_inside_a_character_is_said_in_whole_characters(spm):
    """An engine that writes '秘' where the text has '私' (both begin with the bytes e7 a7, byte
    tokens in Llama 2's vocabulary): the stretch that differs was cut at the bytes, so each side
    read as U+FFFD (a newcomer's find: "'�' where the reference has '�'")."""
    text = "a私b"
    said = shape(spm, spm[2]("a秘b"), text)
    assert said == "text written otherwise at character 1: '秘' where the reference has '私'", said
