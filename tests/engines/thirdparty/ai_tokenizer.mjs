// ai-tokenizer (npm, Coder's "faster than tiktoken" BPE in plain JavaScript: its own merge loop,
// its own rank tables generated into dist/encoding/*.js, no WASM) as a tokparity cmd: engine, on
// the encoding named by the first argument (cl100k_base, o200k_base, p50k_base):
//
//   tokparity compare cl100k-tiktoken -b 'ai-tokenizer=cmd:node tests/engines/thirdparty/ai_tokenizer.mjs cl100k_base'
//   tokparity compare o200k-tiktoken  -b 'ai-tokenizer=cmd:node tests/engines/thirdparty/ai_tokenizer.mjs o200k_base'
//   tokparity compare p50k-base       -b 'ai-tokenizer=cmd:node tests/engines/thirdparty/ai_tokenizer.mjs p50k_base'
//
// As its README builds it: new Tokenizer(encoding[name]); no model file is read (the ranks are
// the package's own). encode(text, allowedSpecial, disallowedSpecial) has tiktoken's signature:
// parse_special maps to allowedSpecial ("all" when asked, none otherwise), with nothing
// disallowed so a special token's text is encoded as plain text rather than refused. The ids are
// passed on as the package returns them (a non-number becomes null, which tokparity refuses).

import Tokenizer from "ai-tokenizer";
import * as encodings from "ai-tokenizer/encoding";
import { serve } from "./protocol.mjs";

const name = process.argv[2];
if (!encodings[name]) {
  console.error(`usage: node ai_tokenizer.mjs ENCODING (one of ${Object.keys(encodings).join(", ")})`);
  process.exit(2);
}
const tokenizer = new Tokenizer(encodings[name]);

await serve({
  encode: (text, _addSpecial, parseSpecial) => tokenizer.encode(text, parseSpecial ? "all" : [], []),
  decode: (ids) => tokenizer.decode(ids),
});
