//===- mix-tokenize.cpp - Tokenize and detokenize files -------------------===//
//
// Encodes a text file into token ids, decodes ids back into text, counts
// tokens, or writes a corpus's tokens as binaries for training, with the
// byte or the GPT-2 tokenizer; errors are one stderr line.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CommandLine.h"
#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/TextCorpus.h"
#include "mixrt/TokenCache.h"
#include "mixrt/Tokenizer.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <new>
#include <sstream>

using namespace mixrt;

static const char *const kTool = "mix-tokenize";

static CommandSpec spec(const char *name, const char *summary,
                        const char *fileHelp) {
  return {kTool,
          name,
          summary,
          {{"FILE", fileHelp}},
          // The defaults of mix-run's options of the same names.
          {{"tokenizer", "byte|gpt2", "tokenizer (default byte)", false},
           {"gpt2-dir", "DIR", "encoder.json and vocab.bpe for gpt2", false}}};
}

static std::unique_ptr<Tokenizer> tokenizerFor(const ParsedArgs &args) {
  return createTokenizer(args.getOptional("tokenizer").value_or("byte"),
                         args.getOptional("gpt2-dir").value_or(""));
}

static int runEncode(const ParsedArgs &args) {
  const std::string &path = args.positionals[0];
  auto tok = tokenizerFor(args);
  std::string text = readFile(path);
  std::vector<TokenId> ids;
  try {
    ids = tok->encode(text);
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
  std::string out;
  out.reserve(ids.size() * 6);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i)
      out += ' ';
    out += std::to_string(ids[i]);
  }
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

static int runDecode(const ParsedArgs &args) {
  const std::string &path = args.positionals[0];
  auto tok = tokenizerFor(args);
  std::istringstream in(readFile(path));
  std::vector<TokenId> ids;
  std::string word;
  while (in >> word)
    ids.push_back(static_cast<TokenId>(
        parseInteger(word, path + ": token id " + quote(word))));
  std::string text;
  try {
    text = tok->decode(ids);
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

static int runCount(const ParsedArgs &args) {
  const std::string &path = args.positionals[0];
  auto tok = tokenizerFor(args);
  std::string text = readFile(path);
  auto start = std::chrono::steady_clock::now();
  size_t count;
  try {
    count = tok->encode(text).size();
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::cout << path << ": " << text.size() << " bytes, " << count << " "
            << tok->getName() << " tokens (encoded in " << seconds << " s)\n";
  return 0;
}

static int runBin(const ParsedArgs &args) {
  const std::string &data = args.positionals[0];
  auto tok = tokenizerFor(args);
  TextCorpus corpus = findTextCorpus(data);
  uint64_t bytes = corpus.train.getBytes() + corpus.val.getBytes();
  const std::string &out = args.get("out");
  std::fprintf(stderr, "tokenizing %s (%.1f MB, %s tokenizer) into %s\n",
               data.c_str(), double(bytes) / 1e6, tok->getName(), out.c_str());
  TokenBinaries bins = writeTokenBinaries(data, corpus, *tok, out,
                                          args.getOptional("progress") ||
                                              bytes >= kTokenProgressMinBytes);
  std::cout << out << "/train.bin: " << bins.trainTokens << " tokens from "
            << corpus.train.name << "\n"
            << out << "/val.bin: " << bins.valTokens << " tokens from "
            << corpus.val.name << "\n"
            << out << "/tokens.json: uint" << 8 * bins.width << " tokens of "
            << tok->getName() << "\n";
  return 0;
}

static void printTopUsage(std::ostream &os) {
  os << "usage: mix-tokenize <command> FILE [--tokenizer byte|gpt2] "
        "[--gpt2-dir DIR]\n"
        "       mix-tokenize bin DATA --out DIR [--tokenizer byte|gpt2] "
        "[--gpt2-dir DIR] [--progress]\n\n"
        "commands:\n"
        "  encode  print the token ids of a UTF-8 text file\n"
        "  decode  print the text of a file of token ids\n"
        "  count   print how many tokens a file has\n"
        "  bin     write a corpus's tokens as train.bin and val.bin\n\n"
        "Run 'mix-tokenize <command> --help' for details, 'mix-tokenize "
        "--version' for the version.\n";
}

static std::pair<CommandSpec, CommandBody>
selectCommand(const std::string &command) {
  if (command == "encode")
    return {spec("encode",
                 "Prints the token ids of FILE on one line, separated by "
                 "spaces.",
                 "the text to encode (UTF-8 for gpt2)"),
            runEncode};
  if (command == "decode")
    return {spec("decode",
                 "Prints the text that the token ids in FILE stand for.",
                 "token ids separated by white space"),
            runDecode};
  if (command == "count")
    return {spec("count",
                 "Prints the number of tokens in FILE and the time "
                 "encoding took.",
                 "the text to encode"),
            runCount};
  if (command == "bin") {
    CommandSpec bin =
        spec("bin",
             "Tokenizes DATA, a corpus as mix-run's --data takes it (a "
             "directory holding train.txt and val.txt, one text file, or a "
             "directory of text files), into DIR/train.bin and DIR/val.bin "
             "(nanoGPT's layout: uint16 tokens, uint32 for vocabularies "
             "over 65536) and DIR/tokens.json (their width and source). "
             "`mix-run train --data DIR` memory-maps them.",
             "the text corpus");
    bin.positionals[0].name = "DATA";
    bin.options.push_back({"out", "DIR", "where to write the binaries", true});
    bin.options.push_back({"progress", "",
                           "draw a progress bar for any input (without it, "
                           "from 16 MiB up)",
                           false});
    return {bin, runBin};
  }
  fail("unknown command ", quote(command),
       " (expected encode, decode, count or bin; see 'mix-tokenize "
       "--help')");
}

static int run(const std::vector<std::string> &words) {
  return runSubcommand(words, printTopUsage, selectCommand);
}

int main(int argc, char **argv) { return runToolMain(kTool, argc, argv, run); }
