// @lenml/llama2-tokenizer 1.1.4 with @lenml/llama2-tokenizer-vocab-llama2 1.1.1 (npm, pinned in this
// folder's package.json) as a tokparity cmd: engine (encode, decode).
//
//   -b 'lenml2=cmd:node tests/engines/thirdparty/lenml_llama2_tokenizer.mjs'
//
// The package reads no model file: it ships its vocabulary (32,000 pieces, the same ids and pieces as
// the zoo's lenml-llama2 tokenizer.json and mistral-v1's tokenizer.model), so the command takes no
// placeholder; run it on those two models only. A helper wrapped it for the eighth survey
// (docs/findings.md).
//
// As its README calls it: const t = new Llama2Tokenizer(); t.install_vocab(load_vocab());
// t.encode(text) and t.decode(ids). It has no BOS/EOS option (an encode asked with add_special gets none: what
// the package gives) and no switch for special-token text (every vocabulary piece, "<s>" included, is
// matched in the text), so encode replies declare "unsupported": ["parse_special=false"].
import { createInterface } from "node:readline";
import { Llama2Tokenizer } from "@lenml/llama2-tokenizer";
import { load_vocab } from "@lenml/llama2-tokenizer-vocab-llama2";

const tok = new Llama2Tokenizer();
tok.install_vocab(load_vocab());

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let req, reply;
  try {
    req = JSON.parse(line);
    if (req.op === "encode") {
      reply = { id: req.id, ids: tok.encode(req.text), unsupported: ["parse_special=false"] };
    } else if (req.op === "decode") {
      if (req.skip_special || req.clean_up_spaces != null || req.spaces_between_specials || req.remove_special) {
        reply = { id: req.id, error: "setting not supported" };
      } else {
        reply = { id: req.id, text: tok.decode(req.ids) };
      }
    } else {
      reply = { id: req.id, error: `op ${JSON.stringify(req.op)} not supported` };
    }
  } catch (e) {
    reply = { id: req?.id ?? null, error: `${e?.name ?? "Error"}: ${e?.message ?? e}`, status: "error" };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
