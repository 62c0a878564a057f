// mistral-tokenizer-js (npm, imoneoi; Mistral 7B v0.1's SentencePiece BPE vocabulary baked into
// the .js file, a fork of llama-tokenizer-js) as a tokparity cmd: engine:
//
//   tokparity compare mistral-v1 -b 'mistral-tokenizer-js=cmd:node tests/engines/thirdparty/mistral_tokenizer_js.mjs'
//
// encode(prompt, add_bos_token, add_preceding_space): add_special maps to add_bos_token; the
// preceding space (SentencePiece's dummy prefix) is always on. parse_special is ignored.

import mistralTokenizer from "mistral-tokenizer-js";
import { serve } from "./protocol.mjs";

await serve({
  encode: (text, addSpecial) => mistralTokenizer.encode(text, addSpecial, true, false),
  decode: (ids) => mistralTokenizer.decode(ids, false, true),
});
