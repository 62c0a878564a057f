// gpt-3-encoder (npm, latitudegames; a JavaScript port of OpenAI's GPT-2 encoder.py with GPT-2's
// encoder.json and vocab.bpe) as a tokparity cmd: engine:
//
//   tokparity compare gpt-2 -b 'gpt-3-encoder=cmd:node tests/engines/thirdparty/gpt_3_encoder.mjs'
//
// encode(text) has no options (no special tokens, no BOS); both flags are ignored.

import encoder from "gpt-3-encoder";
import { serve } from "./protocol.mjs";

await serve({
  encode: (text) => encoder.encode(text),
  decode: (ids) => encoder.decode(ids),
});
