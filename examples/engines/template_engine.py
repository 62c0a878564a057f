"""A tokparity engine: replace load() and encode() with your tokenizer's calls."""
import json
import sys


def load(path):  # here: Hugging Face tokenizers on the model's tokenizer.json
    from tokenizers import Tokenizer
    return Tokenizer.from_file(path)


def encode(tok, text, add_special, parse_special):
    tok.encode_special_tokens = not parse_special  # "<|eot_id|>" in the text: a token, or text?
    return tok.encode(text, add_special_tokens=add_special).ids  # add_special: BOS/EOS as the model says


def main():
    tok = load(sys.argv[1])
    for line in sys.stdin:  # one JSON request per line, one reply per line, in order
        req = json.loads(line)
        try:
            if req["op"] == "encode":
                reply = {"id": req["id"], "ids": encode(tok, req["text"], req["add_special"], req["parse_special"])}
            else:  # "decode" is optional: an error with no status says "not supported"
                reply = {"id": req["id"], "error": f"op {req['op']} not supported"}
        except Exception as e:  # one bad case is that case's failure, not the end of the run
            reply = {"id": req["id"], "error": repr(e), "status": "error"}
        print(json.dumps(reply), flush=True)  # stdout is the protocol: logs go to stderr


if __name__ == "__main__":
    main()
