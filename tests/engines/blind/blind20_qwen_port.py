"""A Qwen2/Qwen3 port in Python (``py:``): its own split regex in tokenizers' ``Split`` before
tokenizers' BPE. A helper wrote it on 2026-12-04 from a one-paragraph bug description, after
``pretokenizer.regex-part`` learnt other ways to write a part; it read no diagnosis code. Its bug:
the letter alternative written ``\\s?\\p{L}+`` (any one whitespace character may join a word), where
Qwen has ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``. ``FixedEngine`` is its twin with Qwen's regex.

    -b 'mine=py:tests/engines/blind/blind20_qwen_port.py:Engine'
"""
from tokenizers import Regex, Tokenizer, pre_tokenizers

# Correct Qwen2/Qwen3 (= Llama 3) split regex.
FIXED_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# Planted bug: letter alternative written as \s?\p{L}+ instead of [^\r\n\p{L}\p{N}]?\p{L}+.
BUGGY_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|\s?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


class _Base:
    REGEX = None

    def __init__(self, files):
        tok = Tokenizer.from_file(files["tokenizer_json"])
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(self.REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        self.tok = tok

    def encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids


class Engine(_Base):
    REGEX = BUGGY_REGEX


class FixedEngine(_Base):
    REGEX = FIXED_REGEX
