// transformers.js (@huggingface/transformers) apply_chat_template as a `cmd:` chat engine: the
// prompt's text AND ids, as a user of the library gets them.
//
//     cmd:node chat_transformers_js.mjs {tokenizer_json}
//
// The tokenizer is loaded as transformers_js.mjs loads it (AutoTokenizer.from_pretrained on a
// folder with the model's tokenizer.json and the tokenizer_config.json beside it, which carries
// the chat template and the special tokens' texts). Each conversation is rendered twice with the
// library's own call, nothing prepared by this wrapper:
//
//     tokenizer.apply_chat_template(messages, {tools, add_generation_prompt, tokenize: false, ...variables})
//     tokenizer.apply_chat_template(messages, {..., tokenize: true, return_tensor: false, return_dict: false})
//
// (every option but add_generation_prompt / continue_final_message is passed as a keyword, which
// the library hands to the template as a variable). The template engine is the @huggingface/jinja
// bundled into transformers.js' dist (0.5.10 in 4.3.1); the ids come from its tokenizer with
// add_special_tokens false (and special-token text always parsed). {"raised"} where the template
// raised; an error with "status": "skipped" for continue_final_message, without status for any op but "chat".

import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { AutoTokenizer, env } from "@huggingface/transformers";

const OWN_OPTIONS = new Set(["add_generation_prompt", "continue_final_message"]);
const path = process.argv[2];
if (!path || !existsSync(path)) {
  console.error("usage: node chat_transformers_js.mjs TOKENIZER_JSON");
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), "tokparity-tjs-chat-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
const folder = join(root, "model");
const config = join(dirname(resolve(path)), "tokenizer_config.json");
mkdirSync(folder);
symlinkSync(resolve(path), join(folder, "tokenizer.json"));
if (existsSync(config)) symlinkSync(config, join(folder, "tokenizer_config.json"));
else writeFileSync(join(folder, "tokenizer_config.json"), "{}");

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = root;
const tokenizer = await AutoTokenizer.from_pretrained("model");

function chat(req) {
  const options = req.options ?? {};
  if (options.continue_final_message) return { error: "continue_final_message is not implemented by this wrapper", status: "skipped" };
  if (!tokenizer.chat_template) return { error: "the model has no chat template" };
  const kwargs = Object.fromEntries(Object.entries(options).filter(([k]) => !OWN_OPTIONS.has(k)));
  const call = { ...kwargs, tools: req.tools ?? null, add_generation_prompt: !!options.add_generation_prompt };
  try {
    const text = tokenizer.apply_chat_template(req.messages, { ...call, tokenize: false });
    const ids = tokenizer.apply_chat_template(req.messages, { ...call, tokenize: true, return_tensor: false, return_dict: false });
    return { text, ids: Array.from(ids, Number) };
  } catch (e) {
    return { raised: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  const reply = req.op === "chat" ? chat(req) : { error: `unsupported op ${JSON.stringify(req.op)}` };
  process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\n");
}
