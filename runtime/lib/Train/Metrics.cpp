//===- Metrics.cpp - The metrics file of a resumed run --------------------===//
//
// Reads back the lines of metrics.jsonl that a resumed run keeps, with the
// training and validation curves of the loss plot.
//
//===----------------------------------------------------------------------===//

#include "Metrics.h"

#include "mixrt/Json.h"

#include <string_view>

using namespace mixrt;

MetricsPrefix mixrt::readMetricsPrefix(const std::string &text, int64_t step) {
  MetricsPrefix prefix;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      break;
    json::Value line;
    try {
      line = json::parse(std::string_view(text).substr(begin, end - begin));
    } catch (const json::ParseError &) {
      break;
    }
    const json::Value *lineStep = line.isObject() ? line.find("step") : nullptr;
    if (!lineStep || !lineStep->isInteger() || lineStep->getInteger() > step)
      break;
    prefix.lastStep = lineStep->getInteger();
    if (const json::Value *loss = line.find("loss"); loss && loss->isNumber())
      prefix.trainCurve.emplace_back(prefix.lastStep, loss->getNumber());
    if (const json::Value *val = line.find("val_ce"); val && val->isNumber())
      prefix.valCurve.emplace_back(prefix.lastStep, val->getNumber());
    begin = end + 1;
    prefix.bytes = begin;
  }
  return prefix;
}
