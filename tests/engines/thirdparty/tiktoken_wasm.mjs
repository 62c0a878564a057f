// tiktoken's WebAssembly build from npm (OpenAI's Rust tiktoken compiled to wasm, published by
// dqbd as both `tiktoken` and `@dqbd/tiktoken`) as a tokparity cmd: engine, with the encodings it
// bundles (no download, no model file read):
//
//   tokparity compare gpt-2 -b 'tiktoken-npm=cmd:node tests/engines/thirdparty/tiktoken_wasm.mjs tiktoken gpt2'
//   tokparity compare cl100k-tiktoken -b 'tiktoken-npm=cmd:node tests/engines/thirdparty/tiktoken_wasm.mjs tiktoken cl100k_base'
//   tokparity compare o200k-tiktoken -b 'dqbd=cmd:node tests/engines/thirdparty/tiktoken_wasm.mjs @dqbd/tiktoken o200k_base'
//
// parse_special maps to allowed_special ("all" when asked, none otherwise), with nothing
// disallowed so a special token's text is encoded as plain text rather than refused.

import { createRequire } from "node:module";
import { serve } from "./protocol.mjs";

const [pkg, name] = process.argv.slice(2);
if (!pkg || !name) {
  console.error("usage: node tiktoken_wasm.mjs PACKAGE ENCODING");
  process.exit(2);
}
const { get_encoding } = createRequire(import.meta.url)(pkg);
const encoding = get_encoding(name);
const utf8 = new TextDecoder("utf-8");

await serve({
  encode: (text, _addSpecial, parseSpecial) => encoding.encode(text, parseSpecial ? "all" : [], []),
  decode: (ids) => utf8.decode(encoding.decode(Uint32Array.from(ids))),
});
