// gpt3-tokenizer (npm, botisan-ai; gpt-3-encoder reworked with Maps, 'gpt3' = GPT-2's
// vocabulary, 'codex' = p50k's extra whitespace tokens) as a tokparity cmd: engine:
//
//   tokparity compare gpt-2 -b 'gpt3-tokenizer=cmd:node tests/engines/thirdparty/gpt3_tokenizer.mjs gpt3'
//
// encode(text) returns {bpe, text}; it has no options, both flags are ignored.

import GPT3TokenizerModule from "gpt3-tokenizer";
import { serve } from "./protocol.mjs";

const GPT3Tokenizer = GPT3TokenizerModule.default ?? GPT3TokenizerModule;
const tokenizer = new GPT3Tokenizer({ type: process.argv[2] ?? "gpt3" });

await serve({
  encode: (text) => tokenizer.encode(text).bpe,
  decode: (ids) => tokenizer.decode(ids),
});
