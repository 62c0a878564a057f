// gpt-tokenizer (npm) as a tokparity cmd: engine for GPT-2, with its bundled r50k_base ranks
// (GPT-2's vocabulary: no download, no model file read):
//
//   tokparity compare gpt-2 -b 'cmd:node tests/engines/thirdparty/gpt_tokenizer.mjs'
//
// parse_special maps to its allowedSpecial option: every special token ("all") when asked,
// none otherwise, with nothing disallowed (so "<|endoftext|>" in a text is plain text rather
// than an error). add_special has no meaning for GPT-2 (no BOS/EOS is added). decode and stream are
// the library's own (decode, decodeGenerator).

import { decode, decodeGenerator, encode } from "gpt-tokenizer/encoding/r50k_base";
import { serve } from "./protocol.mjs";

const plain = { allowedSpecial: new Set(), disallowedSpecial: new Set() };
const parsed = { allowedSpecial: "all" };

// stream: the library's decodeGenerator, called as a server calls it, once per generated id (the
// prompt's ids first, their text not sent): what it yields for an id is that id's delta.
function stream(ids, prompt) {
  for (const _ of decodeGenerator(ids.slice(0, prompt)));
  return ids.slice(prompt).map((id) => [...decodeGenerator([id])].join(""));
}

await serve({
  encode: (text, _addSpecial, parseSpecial) => encode(text, parseSpecial ? parsed : plain),
  decode: (ids) => decode(ids),
  stream,
});
