// @llamaindex/replicate 0.0.65 (npm, LlamaIndex.TS's Replicate adapter; with @llamaindex/core
// 0.6.23): its hand-written Llama 3 prompt, ReplicateLLM.mapMessagesToPrompt, as a tokparity cmd:
// chat engine (text only). No fixes.
//
//     -b 'replicate-llama3=cmd:node tests/engines/thirdparty/survey11/llamaindex_replicate_chat.mjs NODE_MODULES'   (llama-bpe)
//
// NODE_MODULES is the folder `npm install @llamaindex/replicate@0.0.65` made (it is not in
// tests/engines/thirdparty/package.json).
//
// `new ReplicateLLM()` is built with its defaults: model "llama-3-70b-instruct", so chatStrategy
// "llama3" (dist/index.js:462-463). Its `chat()` sends `this.mapMessagesToPrompt(messages).prompt`
// to Replicate with prompt_template "{prompt}" (dist/index.js:596-611): that string is the prompt
// the model gets, and it is what this engine answers. Replicate tokenizes it on its side: no ids.
// REPLICATE_API_TOKEN is set to a stand-in so the constructor's Replicate client is made; no
// request is ever sent.
//
// Each OpenAI message becomes a LlamaIndex.TS ChatMessage {role, content}: a string content as it
// is, a list of parts as LlamaIndex.TS's MessageContentDetail list ({type: "text", text}), null as
// "" (MessageContent has no null). The adapter takes no tools, options or template variables:
// add_generation_prompt is not read (the prompt always ends with the assistant's header). Not
// answered (status "skipped"): a request with tools (ReplicateLLM has no tool calls) and one with
// continue_final_message (no such option). An exception is its refusal ({"raised"}).

import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

const modules = resolve(process.argv[2] ?? "node_modules");
const require = createRequire(join(modules, "noop.js"));
process.env.REPLICATE_API_TOKEN ??= "r8_stand-in-never-used";
const { ReplicateLLM } = require("@llamaindex/replicate");
const llm = new ReplicateLLM({ noWarn: true });

function toMessage(m) {
  let content = m.content;
  if (content == null) content = "";
  return { role: m.role, content };
}

function answer(req) {
  if (req.op !== "chat") return { id: req.id, error: `op ${req.op} not supported` };
  const options = req.options ?? {};
  if (req.tools && req.tools.length) return { id: req.id, error: "ReplicateLLM takes no tools", status: "skipped" };
  if (options.continue_final_message) return { id: req.id, error: "no continue_final_message", status: "skipped" };
  try {
    return { id: req.id, text: llm.mapMessagesToPrompt(req.messages.map(toMessage)).prompt };
  } catch (e) {
    return { id: req.id, raised: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (e) {
    reply = { id: null, error: String(e), status: "error" };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
