// bert-tokenizer 1.1.8 (npm) as a tokparity cmd: engine; started by bert_tokenizer_npm.py with the vocab.json it writes.
const readline = require("readline");
const { BertTokenizer } = require("bert-tokenizer");

const tok = new BertTokenizer(process.argv[2], true);
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const req = JSON.parse(line);
  const reply = { id: req.id };
  try {
    if (req.op === "encode") {
      const ids = tok.tokenize(req.text);
      reply.ids = req.add_special ? [tok.clsId, ...ids, tok.sepId] : ids;
    } else {
      reply.error = `${req.op} is not in the package`;
      reply.status = "skipped";
    }
  } catch (e) {
    reply.error = String(e);
    reply.status = "error";
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
