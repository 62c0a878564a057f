"""A hand-written Llama 3 pre-tokenizer in front of tokenizers' BPE model: a py: engine.

A helper trying the README as a newcomer wrote it on 2026-12-04, with a bug of its own choosing,
before the cause that names it had this form. Its split regex was typed from memory, with
GPT-2's letter alternative `` ?\\p{L}+`` where Llama 3 has ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``:
``aujourd'hui`` splits ``'hui`` as ``'``, ``hui``, and ``.B`` as ``.``, ``B``. ``FixedEngine`` is
its twin with Llama 3's regex whole. Both split with tokenizers' own ``Split`` (Oniguruma).

    -b 'mine=py:tests/engines/blind/newcomer6_port.py:Engine'
"""
from tokenizers import Regex, Tokenizer, pre_tokenizers

LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)| ?\p{L}+|\p{N}{1,3}"  # BUG: [^\r\n\p{L}\p{N}]?\p{L}+
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
FIXED_SPLIT = LLAMA3_SPLIT.replace(r"| ?\p{L}+|", r"|[^\r\n\p{L}\p{N}]?\p{L}+|")


class Engine:
    split = LLAMA3_SPLIT

    def __init__(self, files):
        self.tok = Tokenizer.from_file(files["tokenizer_json"])
        self.tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(self.split), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        self.bos = self.tok.token_to_id("<|begin_of_text|>")

    def encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return [self.bos] + ids if add_special else ids


class FixedEngine(Engine):
    split = FIXED_SPLIT
