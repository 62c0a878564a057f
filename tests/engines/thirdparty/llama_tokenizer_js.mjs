// llama-tokenizer-js (npm, belladoreai; Llama 1/2's SentencePiece BPE vocabulary baked into the
// .js file) as a tokparity cmd: engine. Compare with the zoo model of the same vocabulary:
//
//   tokparity compare llama-spm -b 'llama-tokenizer-js=cmd:node tests/engines/thirdparty/llama_tokenizer_js.mjs'
//
// encode(prompt, add_bos_token, add_preceding_space): add_special maps to add_bos_token; the
// preceding space (SentencePiece's dummy prefix) is always on, as Llama's model asks. The library
// has no notion of special-token text (parse_special is ignored).

import llamaTokenizer from "llama-tokenizer-js";
import { serve } from "./protocol.mjs";

await serve({
  encode: (text, addSpecial) => llamaTokenizer.encode(text, addSpecial, true, false),
  decode: (ids) => llamaTokenizer.decode(ids, false, true),
});
