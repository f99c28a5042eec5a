//===- GPT2Tokenizer.cpp - GPT-2 byte-level BPE encode and decode ---------===//
//
// Merges the bytes of each pre-tokenized piece by rank, exactly as
// gpt-3-encoder's bpe() does, and maps token ids back to bytes.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TokenizerGPT2.h"

#include "mixrt/Error.h"

#include <cstdint>
#include <unordered_map>

using namespace mixrt;

void GPT2Tokenizer::encodePiece(std::string_view piece,
                                std::vector<TokenId> &out) const {
  // The symbols are adjacent substrings of the piece: symbol i is
  // piece[bounds[i], bounds[i + 1]). It starts as one symbol a byte.
  std::vector<uint32_t> bounds(piece.size() + 1);
  for (size_t i = 0; i <= piece.size(); ++i)
    bounds[i] = static_cast<uint32_t>(i);
  auto symbol = [&](size_t i) {
    return piece.substr(bounds[i], bounds[i + 1] - bounds[i]);
  };

  std::string key;
  std::vector<uint32_t> merged;
  while (bounds.size() > 2) {
    // The pair of lowest rank; on a tie the last such pair, because
    // gpt-3-encoder keeps the last pair it sees for each rank. Pairs are
    // looked up as "first,second", which is gpt-3-encoder's key for them.
    size_t numSymbols = bounds.size() - 1;
    int64_t bestRank = -1;
    size_t best = 0;
    for (size_t i = 0; i + 1 < numSymbols; ++i) {
      key.assign(symbol(i));
      key += ',';
      key.append(symbol(i + 1));
      auto it = mergeRanks.find(key);
      if (it != mergeRanks.end() && (bestRank < 0 || it->second <= bestRank)) {
        bestRank = it->second;
        best = i;
      }
    }
    if (bestRank < 0)
      break;

    // Merge every occurrence of the pair, left to right.
    std::string_view first = symbol(best), second = symbol(best + 1);
    merged.clear();
    for (size_t i = 0; i < numSymbols;) {
      merged.push_back(bounds[i]);
      if (i + 1 < numSymbols && symbol(i) == first && symbol(i + 1) == second)
        i += 2;
      else
        i += 1;
    }
    merged.push_back(bounds[numSymbols]);
    bounds.swap(merged);
  }

  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    auto it = bytesToId.find(std::string(symbol(i)));
    // Only the "first,second" key quirk can merge two symbols into one that
    // is not in the vocabulary; gpt-3-encoder then emits `undefined`.
    if (it == bytesToId.end())
      fail("gpt2 tokenizer: BPE of a piece of ", piece.size(),
           " bytes made a symbol that is not in the vocabulary");
    out.push_back(it->second);
  }
}

std::vector<TokenId> GPT2Tokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3);
  // Text repeats its words, so remember each distinct piece's ids for the
  // length of this call (per call, so that encode() stays thread-safe).
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> cache;
  std::vector<TokenId> cachedIds;
  GPT2PreTokenizer splitter(text);
  std::string_view piece;
  while (splitter.next(piece)) {
    auto [it, inserted] = cache.try_emplace(piece);
    if (inserted) {
      size_t begin = cachedIds.size();
      encodePiece(piece, cachedIds);
      it->second = {begin, cachedIds.size()};
    }
    ids.insert(ids.end(), cachedIds.begin() + it->second.first,
               cachedIds.begin() + it->second.second);
  }
  return ids;
}

std::string GPT2Tokenizer::decode(const TokenId *ids, size_t count) const {
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= getVocabSize())
      fail("gpt2 tokenizer: token id ", ids[i], " at position ", i,
           " is outside [0, ", getVocabSize(), ")");
    text += idToBytes[ids[i]];
  }
  return text;
}
