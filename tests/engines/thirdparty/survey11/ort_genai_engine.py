"""onnxruntime-genai 0.15.2 (PyPI, Microsoft's ONNX Runtime generate() API): its ``Tokenizer``
(ONNX Runtime Extensions' C++ tokenizer, built in), its ``TokenizerStream`` and its
``apply_chat_template`` (Google's minja, a C++ Jinja, as ONNX Runtime Extensions runs it) as a
tokparity cmd: engine. No fixes.

    -b 'ortgenai=cmd:VENV/bin/python tests/engines/thirdparty/survey11/ort_genai_engine.py {name} {tokenizer_json} {tokenizer_config}'

Ops: encode, decode, stream, chat (no pieces: the API gives no bytes per id).

0.15.2 is the release whose C++ source is public at its tag (v0.15.2, with ONNX Runtime Extensions
at the commit its cmake/deps.txt pins, fe4e13f): every line quoted in the survey is that source.
Its ``Tokenizer`` is made from an ``og.Model`` only, as its examples do
(``og.Model(folder)``, ``og.Tokenizer(model)``). A model folder is made once per model under
``$TMPDIR/tokparity-survey11-ortgenai/``: the model's ``tokenizer.json`` and
``tokenizer_config.json`` (links), a ``genai_config.json`` as its model builder writes one
(``onnxruntime_genai/models/builders/base.py``, ``make_genai_config``) and a stand-in
``model.onnx`` that gives zero logits (made with the ``onnx`` package). No weights are needed to
tokenize; the tokenizer never reads the graph.

- encode: ``tokenizer.update_options(add_special_tokens="true"|"false")``, then
  ``tokenizer.encode(text)``. It has no switch for special-token text (added tokens are always
  matched): every reply says ``"unsupported": ["parse_special=false"]``.
- decode: ``tokenizer.update_options(skip_special_tokens="true"|"false")`` as asked, then
  ``tokenizer.decode(ids)``. Its default is ``skip_special_tokens=true`` (src/models/model.cpp:311).
- stream: as its examples stream a generation (examples/python/model-qa.py): a new
  ``tokenizer.create_stream()``, and ``stream.decode(id)`` for each generated id. The prompt's ids
  are not given to the stream (the examples never do). Special tokens as asked, through
  ``update_options(skip_special_tokens=…)``.
- chat: ``tokenizer.apply_chat_template(json.dumps(messages), tools=json.dumps(tools) or None,
  add_generation_prompt=…)``, then ``tokenizer.encode(prompt)`` with its default options, as its
  examples do (examples/python/model-chat.py). The API takes no other variable: the
  conversation's other options (enable_thinking, date_string) are not passed. A conversation with
  ``continue_final_message`` is not answered (status "skipped": no such option). A template
  error is the engine's refusal (``raised``).
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import onnxruntime_genai as og

NAME, TOKENIZER_JSON, TOKENIZER_CONFIG = sys.argv[1:4]
TYPES = {"qwen3": "qwen3", "llama-bpe": "llama", "gemma-3": "gemma3_text", "lenml-llama2": "llama"}


def model_folder() -> Path:
    folder = Path(tempfile.gettempdir()) / "tokparity-survey11-ortgenai" / NAME
    if (folder / "model.onnx").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for src, dst in ((TOKENIZER_JSON, "tokenizer.json"), (TOKENIZER_CONFIG, "tokenizer_config.json")):
        link = folder / dst
        if not link.exists():
            link.symlink_to(os.path.abspath(src))
    tj = json.loads(Path(TOKENIZER_JSON).read_text())
    cfg = json.loads(Path(TOKENIZER_CONFIG).read_text())
    vocab = tj["model"]["vocab"]
    size = 1 + max([len(vocab) - 1] + [t["id"] for t in tj.get("added_tokens", [])])

    def token_id(key):
        tok = cfg.get(key)
        tok = tok.get("content") if isinstance(tok, dict) else tok
        for added in tj.get("added_tokens", []):
            if added["content"] == tok:
                return added["id"]
        return vocab.get(tok, 0) if isinstance(vocab, dict) else 0

    genai_config = {
        "model": {
            "bos_token_id": token_id("bos_token"), "context_length": 4096,
            "decoder": {"session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                        "filename": "model.onnx", "head_size": 64, "hidden_size": 64,
                        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask"},
                        "outputs": {"logits": "logits"},
                        "num_attention_heads": 1, "num_hidden_layers": 1, "num_key_value_heads": 1},
            "eos_token_id": token_id("eos_token"), "pad_token_id": token_id("pad_token"),
            "type": TYPES.get(NAME, "llama"), "vocab_size": size},
        "search": {"max_length": 4096},
    }
    (folder / "genai_config.json").write_text(json.dumps(genai_config, indent=1))
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Shape", ["input_ids"], ["s"]),
             helper.make_node("Constant", [], ["v"], value=helper.make_tensor("vv", TensorProto.INT64, [1], [size])),
             helper.make_node("Concat", ["s", "v"], ["shape"], axis=0),
             helper.make_node("ConstantOfShape", ["shape"], ["logits"],
                              value=helper.make_tensor("z", TensorProto.FLOAT, [1], [0.0]))]
    graph = helper.make_graph(
        nodes, "stand-in",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", size])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    tmp = folder / f"model.onnx.{os.getpid()}"
    onnx.save(model, str(tmp))
    tmp.rename(folder / "model.onnx")
    return folder


MODEL = og.Model(str(model_folder()))
TOK = og.Tokenizer(MODEL)
_options = {}


def options(**kw):
    want = {k: "true" if v else "false" for k, v in kw.items()}
    if any(_options.get(k) != v for k, v in want.items()):
        TOK.update_options(**want)
        _options.update(want)


def encode(text, add_special):
    options(add_special_tokens=add_special)
    return [int(i) for i in TOK.encode(text)]


def decode(ids, skip_special):
    options(skip_special_tokens=skip_special)
    import numpy as np

    return TOK.decode(np.array(ids, dtype=np.int32))


def stream(ids, prompt, skip_special):
    options(skip_special_tokens=skip_special)
    s = TOK.create_stream()
    return [s.decode(int(i)) for i in ids[prompt:]]


def chat(messages, tools, opts):
    options(add_special_tokens=False)  # the examples' defaults
    text = TOK.apply_chat_template(json.dumps(messages), tools=json.dumps(tools) if tools else None,
                                   add_generation_prompt=bool(opts.get("add_generation_prompt", False)))
    return {"text": text, "ids": [int(i) for i in TOK.encode(text)]}


for line in sys.stdin:
    req = json.loads(line)
    reply = {"id": req["id"]}
    try:
        op = req["op"]
        if op == "encode":
            reply["ids"] = encode(req["text"], req["add_special"])
            reply["unsupported"] = ["parse_special=false"]
        elif op == "decode":
            if any(req.get(k) for k in ("clean_up_spaces", "spaces_between_specials", "remove_special")):
                reply["error"] = "no such setting"
            else:
                reply["text"] = decode(req["ids"], req.get("skip_special", False))
        elif op == "stream":
            if req.get("step", 1) != 1:
                reply["error"] = "one id a step"
            else:
                reply["deltas"] = stream(req["ids"], req["prompt"], req.get("skip_special", False))
        elif op == "chat":
            opts = req.get("options") or {}
            if opts.get("continue_final_message"):
                reply.update(error="apply_chat_template has no continue_final_message", status="skipped")
            else:
                try:
                    reply.update(chat(req["messages"], req.get("tools"), opts))
                except RuntimeError as e:  # the template's error, or minja's
                    reply["raised"] = str(e)
        else:
            reply["error"] = f"op {op} not supported"
    except Exception as e:
        reply.update(error=repr(e), status="error")
    print(json.dumps(reply), flush=True)
