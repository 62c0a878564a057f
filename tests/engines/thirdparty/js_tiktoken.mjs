// js-tiktoken (npm, the JavaScript port of OpenAI's tiktoken) as a tokparity cmd: engine for
// GPT-2, with its bundled "gpt2" ranks (no download, no model file read):
//
//   tokparity compare gpt-2 -b 'cmd:node tests/engines/thirdparty/js_tiktoken.mjs'
//
// parse_special maps to allowedSpecial ("all" when asked, none otherwise), with nothing
// disallowed so a special token's text is encoded as plain text rather than refused.

import { Tiktoken } from "js-tiktoken/lite";
import gpt2 from "js-tiktoken/ranks/gpt2";
import { serve } from "./protocol.mjs";

const encoding = new Tiktoken(gpt2);

await serve({
  encode: (text, _addSpecial, parseSpecial) => encoding.encode(text, parseSpecial ? "all" : [], []),
  decode: (ids) => encoding.decode(ids),
});
