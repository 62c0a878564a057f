// tiktoken-node (npm, ceifa; Node-API bindings to the Rust crate tiktoken-rs 0.5.8, prebuilt
// .node binaries shipped inside the package, with tiktoken-rs's own bundled rank files and split
// patterns) as a tokparity cmd: engine, on the encoding named by the first argument:
//
//   tokparity compare cl100k-tiktoken -b 'tiktoken-node=cmd:node tests/engines/thirdparty/tiktoken_node.mjs cl100k_base'
//   tokparity compare p50k-base       -b 'tiktoken-node=cmd:node tests/engines/thirdparty/tiktoken_node.mjs p50k_base'
//   tokparity compare gpt-2           -b 'tiktoken-node=cmd:node tests/engines/thirdparty/tiktoken_node.mjs gpt2'
//
// As its readme calls it: getEncoding(name).encode(text). encode has no options: the binding
// calls tiktoken-rs's encode_with_special_tokens (src/lib.rs), so special-token text is always
// that token and parse_special is ignored; no BOS either, add_special is ignored. No model file
// is read.

import { createRequire } from "node:module";
import { serve } from "./protocol.mjs";

const name = process.argv[2];
if (!name) {
  console.error("usage: node tiktoken_node.mjs gpt2|r50k_base|p50k_base|p50k_edit|cl100k_base");
  process.exit(2);
}
const tiktoken = createRequire(import.meta.url)("tiktoken-node");
const encoding = tiktoken.getEncoding(name);

await serve({
  encode: (text) => encoding.encode(text),
  decode: (ids) => encoding.decode(ids),
});
