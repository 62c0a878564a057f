// @lenml/tokenizers (a fork of transformers.js v3's tokenizers, the library the zoo's gemma-3,
// qwen3, lenml-llama2 and llama-bpe tokenizer.json files are published with) as a tokparity
// cmd: engine:
//
//   tokparity compare gemma-3 -b 'cmd:node tests/engines/thirdparty/lenml_tokenizers.mjs {tokenizer_json}'
//
// It reads the tokenizer.json and the tokenizer_config.json beside it (an empty config when there
// is none) and builds the tokenizer with TokenizerLoader.fromPreTrained, as the package's readme
// shows. Like transformers.js it has no parse_special switch: added tokens are always matched.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { TokenizerLoader } from "@lenml/tokenizers";
import { serve } from "./protocol.mjs";

const path = process.argv[2];
if (!path || !existsSync(path)) {
  console.error("usage: node lenml_tokenizers.mjs TOKENIZER_JSON");
  process.exit(2);
}
const configPath = join(dirname(path), "tokenizer_config.json");
const tokenizer = TokenizerLoader.fromPreTrained({
  tokenizerJSON: JSON.parse(readFileSync(path, "utf8")),
  tokenizerConfig: existsSync(configPath) ? JSON.parse(readFileSync(configPath, "utf8")) : {},
});

await serve({
  encode: (text, addSpecial) => tokenizer.encode(text, { add_special_tokens: addSpecial }),
  decode: (ids) => tokenizer.decode(ids),
});
