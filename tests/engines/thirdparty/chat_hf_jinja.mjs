// @huggingface/jinja (npm, the JavaScript Jinja of transformers.js) as a `cmd:` chat engine.
//
//     cmd:node chat_hf_jinja.mjs {tokenizer_config}
//
// Renders the chat template of tokenizer_config.json ("chat_template": a string, or a list of
// {name, template} of which "default" is used, "tool_use" for a conversation with tools) with
// `new Template(source).render(variables)`, as transformers.js' apply_chat_template does. Nothing
// of it can be configured: the Template constructor always tokenizes with lstrip_blocks and
// trim_blocks on, every Environment has its own `namespace`, render() sets its own globals
// (raise_exception, strftime_now, range, true/false/none), and the filters, its own tojson among
// them, are built into the interpreter (there is no API to add or replace one), so the engine
// runs as it is. Messages are prepared as transformers prepares
// them (a key whose value is null dropped, reasoning aliased to `thinking` and
// `reasoning_content`); the special tokens' texts and every option but add_generation_prompt /
// continue_final_message are variables, `tools` and `documents` (null) too.
//
// Gives text only: {"text"}, {"raised"} where the template raised or did not parse, and an error
// with "status": "skipped" for continue_final_message (not answered), without status for any op but "chat".

import { readFileSync, realpathSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { Template } from "@huggingface/jinja";

const REASONING_FIELDS = ["reasoning_content", "thinking", "reasoning"];
const OWN_OPTIONS = new Set(["add_generation_prompt", "continue_final_message"]);

export function loadConfig(path) {
  const config = JSON.parse(readFileSync(path, "utf-8"));
  const found = config.chat_template;
  const templates = typeof found === "string" ? { default: found }
    : Object.fromEntries((found ?? []).map((t) => [t.name, t.template]));
  const specials = {};
  for (const role of ["bos", "eos", "unk", "pad"]) {
    let value = config[`${role}_token`];
    if (value && typeof value === "object") value = value.content;
    if (typeof value === "string") specials[`${role}_token`] = value;
  }
  return { templates, specials };
}

// transformers' own preparation (utils/chat_template_utils.py): null values dropped, reasoning aliased.
export function prepared(messages) {
  return messages.map((m) => {
    m = Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null && v !== undefined));
    const key = REASONING_FIELDS.find((k) => m[k] !== null && m[k] !== undefined);
    return key === undefined ? m : { thinking: m[key], ...m, reasoning_content: m[key] };
  });
}

// {templates, specials} and a render(source, variables) -> string; one reply per request line.
export async function serveChat({ templates, specials }, render) {
  const compiled = new Map();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const req = JSON.parse(line);
    let reply;
    const options = req.options ?? {};
    const name = req.tools != null && "tool_use" in templates ? "tool_use" : "default";
    if (req.op !== "chat") {
      reply = { error: `unsupported op ${JSON.stringify(req.op)}` };
    } else if (options.continue_final_message) {
      reply = { error: "continue_final_message is not implemented by this wrapper", status: "skipped" };
    } else if (!(name in templates)) {
      reply = { error: "the model has no chat template" };
    } else {
      const variables = { ...specials };
      for (const [k, v] of Object.entries(options)) if (!OWN_OPTIONS.has(k)) variables[k] = v;
      Object.assign(variables, {
        messages: prepared(req.messages), tools: req.tools ?? null, documents: null,
        add_generation_prompt: !!options.add_generation_prompt,
      });
      try {
        reply = { text: render(templates[name], variables, compiled) };
      } catch (e) {
        reply = { raised: `${e?.name ?? "Error"}: ${e?.message ?? e}` };
      }
    }
    process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\n");
  }
}

// (chat_nunjucks.mjs imports loadConfig and serveChat from here)
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  await serveChat(loadConfig(process.argv[2]), (source, variables, compiled) => {
    if (!compiled.has(source)) compiled.set(source, new Template(source));
    return compiled.get(source).render(variables);
  });
}
