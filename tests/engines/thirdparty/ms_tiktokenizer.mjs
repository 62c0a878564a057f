// @microsoft/tiktokenizer (npm, Microsoft's TypeScript port of tiktoken: its own regex strings,
// its own byte-pair merge loop) as a tokparity cmd: engine, on a zoo tiktoken encoding:
//
//   tokparity compare cl100k-tiktoken -b 'ms-tiktokenizer=cmd:node tests/engines/thirdparty/ms_tiktokenizer.mjs cl100k_base {tiktoken}'
//   tokparity compare o200k-tiktoken  -b 'ms-tiktokenizer=cmd:node tests/engines/thirdparty/ms_tiktokenizer.mjs o200k_base {tiktoken}'
//
// createByEncoderName() would download the .tiktoken ranks from openaipublic; the engine instead
// hands createTokenizer() the same ranks read from the zoo's file (dqbd's JSON: "! OFFSET b64 b64
// …" lines, as js-tiktoken reads them), with the package's own regex and special tokens for that
// encoder (getRegexByEncoder, getSpecialTokensByEncoder): what createByEncoderName builds.
// parse_special maps to allowedSpecial (every special token of the encoder, or none).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { serve } from "./protocol.mjs";

const [encoder, ranksPath] = process.argv.slice(2);
if (!encoder || !ranksPath) {
  console.error("usage: node ms_tiktokenizer.mjs ENCODER RANKS_JSON");
  process.exit(2);
}
const { createTokenizer, getRegexByEncoder, getSpecialTokensByEncoder } =
  createRequire(import.meta.url)("@microsoft/tiktokenizer");

const ranks = new Map();
for (const line of JSON.parse(readFileSync(ranksPath, "utf-8")).bpe_ranks.split("\n")) {
  if (!line) continue;
  const [, offset, ...tokens] = line.split(" ");
  tokens.forEach((b64, i) => ranks.set(new Uint8Array(Buffer.from(b64, "base64")), Number(offset) + i));
}
const specials = getSpecialTokensByEncoder(encoder);
const tokenizer = createTokenizer(ranks, specials, getRegexByEncoder(encoder));
const all = [...specials.keys()];

await serve({
  encode: (text, _addSpecial, parseSpecial) => tokenizer.encode(text, parseSpecial ? all : undefined),
  decode: (ids) => tokenizer.decode(ids),
});
