"""A ``transformers`` tokenizer class loaded from a SentencePiece ``.model``, as a tokparity
``cmd:`` engine:

    tokparity compare llama-spm -b 'cmd:{python} tests/engines/thirdparty/transformers_spm.py {spm_model} LlamaTokenizer'
    tokparity compare botchan-unigram -b 'cmd:{python} tests/engines/thirdparty/transformers_spm.py {spm_model} T5Tokenizer'

This is what a user gets from ``XTokenizer.from_pretrained(folder)`` when the folder holds only
the SentencePiece file: transformers (5.x) converts the ``.model`` to a ``tokenizers`` pipeline
with the class's own converter (``convert_slow_tokenizer``), which decides the normalizer, the
pre-tokenizer and the special ids from the class, not only from the file. The file is linked
into a temporary folder under the name the class expects (``vocab_files_names``). T5Tokenizer
gets ``extra_ids=0`` (the zoo's models have no sentinel tokens).

transformers encodes added tokens' text as those tokens unless ``split_special_tokens`` is set
(it then sets the ``tokenizers`` backend's ``encode_special_tokens``), so ``parse_special`` maps to
``split_special_tokens=not parse_special``. It does not import tokparity.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings


def load(spm_model: str, class_name: str):
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore")
    import transformers

    cls = getattr(transformers, class_name, None)
    if cls is None:
        sys.exit(f"transformers_spm: transformers {transformers.__version__} has no class {class_name!r}")
    folder = tempfile.mkdtemp(prefix="tokparity-tfm-")
    name = cls.vocab_files_names.get("vocab_file", "tokenizer.model")
    os.symlink(os.path.abspath(spm_model), os.path.join(folder, name))
    extra = {"extra_ids": 0} if class_name.startswith("T5") else {}
    return cls.from_pretrained(folder, **extra)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: transformers_spm.py MODEL.model TokenizerClass")
    tok = load(sys.argv[1], sys.argv[2])
    for line in sys.stdin.buffer:
        req = json.loads(line)
        try:
            if req["op"] == "encode":
                ids = tok.encode(req["text"], add_special_tokens=bool(req.get("add_special")),
                                 split_special_tokens=not req.get("parse_special"))
                reply = {"id": req["id"], "ids": ids}
            elif req["op"] == "decode":
                reply = {"id": req["id"], "text": tok.decode(req["ids"])}
            else:
                reply = {"id": req["id"], "error": f"unsupported op {req['op']!r}"}
        except Exception as e:  # report it for this request and keep serving
            reply = {"id": req.get("id"), "error": f"{type(e).__name__}: {e}"}
        sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
