// A tokparity engine in JavaScript: transformers.js on a local tokenizer.json, the JSON-lines
// protocol in ~40 lines (copy it and put your own tokenizer where transformers.js is).
//
//   (cd examples/engines && npm install @huggingface/transformers@4.3.1 --ignore-scripts)   # once
//   tokparity compare qwen3 -b 'cmd:node examples/engines/transformers_js_engine.mjs {tokenizer_json}'
//
// One JSON request per line on stdin, one reply per line on stdout, in order:
//   -> {"id": 1, "op": "encode", "text": "Hello world", "add_special": false, "parse_special": false}
//   <- {"id": 1, "ids": [9707, 1879]}
// Anything it cannot answer gets {"id": ..., "error": "..."}; logs go to stderr, never stdout.
// transformers.js has no parse_special switch (it always matches added tokens), so a run with
// parse_special off shows those texts as `specials.parse`: that is the library, not the engine.
// tests/engines/thirdparty/ has this engine with the others (and pinned versions).

import { createInterface } from "node:readline";
import { dirname, basename } from "node:path";
import { AutoTokenizer, env } from "@huggingface/transformers";

const path = process.argv[2];
if (!path || basename(path) !== "tokenizer.json") {
  console.error("usage: node transformers_js_engine.mjs path/to/tokenizer.json (tokenizer_config.json beside it)");
  process.exit(2);
}
env.allowRemoteModels = false; // never reach for the Hub: the folder is the model
env.localModelPath = dirname(dirname(path));
const tokenizer = await AutoTokenizer.from_pretrained(basename(dirname(path)));

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  let req, reply;
  try {
    req = JSON.parse(line);
    if (req.op === "encode") reply = { id: req.id, ids: tokenizer.encode(req.text, { add_special_tokens: req.add_special }) };
    else if (req.op === "decode") reply = { id: req.id, text: tokenizer.decode(req.ids) };
    else reply = { id: req.id, error: `unsupported op ${req.op}` };
  } catch (e) {
    reply = { id: req?.id ?? null, error: String(e) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
