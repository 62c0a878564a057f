// llama3-tokenizer-js (npm, belladoreai; Llama 3's byte-level BPE vocabulary baked into the .js
// file) as a tokparity cmd: engine:
//
//   tokparity compare llama-bpe -b 'llama3-tokenizer-js=cmd:node tests/engines/thirdparty/llama3_tokenizer_js.mjs'
//
// encode(prompt, {bos, eos}): add_special maps to bos (Llama 3 adds <|begin_of_text|> only).
// The library always parses special-token text in the input (it has no switch); parse_special
// is ignored.

import llama3Tokenizer from "llama3-tokenizer-js";
import { serve } from "./protocol.mjs";

await serve({
  encode: (text, addSpecial) => llama3Tokenizer.encode(text, { bos: addSpecial, eos: false }),
  decode: (ids) => llama3Tokenizer.decode(ids),
});
