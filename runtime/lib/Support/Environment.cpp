//===- Environment.cpp - Switches read from the environment ---------------===//

#include "mixrt/Environment.h"

#include "mixrt/Error.h"

#include <cstdlib>
#include <cstring>

using namespace mixrt;

/// " (MEANING)", or nothing for no meaning.
static std::string meaning(const char *text) {
  return *text ? concat(" (", text, ")") : std::string();
}

std::optional<bool> mixrt::readSwitch(const char *name, const char *whenOn,
                                      const char *whenOff) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return std::nullopt;
  if (std::strcmp(value, "1") == 0)
    return true;
  if (std::strcmp(value, "0") == 0)
    return false;
  fail(name, " is ", quote(value), ", expected 1", meaning(whenOn), " or 0",
       meaning(whenOff));
}
