//===- CommandLine.cpp - A small subcommand argument parser ---------------===//
//
// Accepts "--flag VALUE" and "--flag=VALUE"; "--" ends the options.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CommandLine.h"

#include "mix/Version.h"

#include "mixrt/Error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <new>

using namespace mixrt;

int64_t mixrt::parseInteger(const std::string &text, const std::string &what) {
  int64_t value = 0;
  const char *first = text.data(), *last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range)
    fail(what, ": ", quote(text), " is out of range");
  if (text.empty() || ec != std::errc() || ptr != last)
    fail(what, ": expected an integer, got ", quote(text));
  return value;
}

double mixrt::parseNumber(const std::string &text, const std::string &what) {
  double value = 0;
  const char *first = text.data(), *last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || ptr != last || !std::isfinite(value))
    fail(what, ": expected a number, got ", quote(text));
  return value;
}

const std::string &ParsedArgs::get(const std::string &flag) const {
  auto it = values.find(flag);
  if (it == values.end())
    fail(command, ": missing option --", flag);
  return it->second;
}

std::optional<std::string>
ParsedArgs::getOptional(const std::string &flag) const {
  auto it = values.find(flag);
  if (it == values.end())
    return std::nullopt;
  return it->second;
}

int64_t ParsedArgs::getInteger(const std::string &flag, int64_t min,
                               int64_t max) const {
  std::string what = concat(command, ": option --", flag);
  int64_t value = parseInteger(get(flag), what);
  if (value < min || value > max)
    fail(what, ": ", value, " is outside [", min, ", ", max, "]");
  return value;
}

double ParsedArgs::getNumber(const std::string &flag) const {
  return parseNumber(get(flag), concat(command, ": option --", flag));
}

void ParsedArgs::set(const std::string &flag, std::string value) {
  if (!values.emplace(flag, std::move(value)).second)
    fail(command, ": option --", flag, " given more than once");
}

ParsedArgs mixrt::parseArgs(const CommandSpec &spec,
                            const std::vector<std::string> &args) {
  ParsedArgs parsed(spec.name);
  std::string seeHelp =
      concat(" (see '", spec.tool, " ", spec.name, " --help')");
  if (std::find_if(args.begin(), args.end(), [](const std::string &arg) {
        return arg == "--help" || arg == "-h";
      }) != args.end()) {
    parsed.help = true;
    return parsed;
  }
  bool optionsEnded = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (optionsEnded || arg.size() < 2 || arg[0] != '-') {
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsEnded = true;
      continue;
    }
    if (arg.compare(0, 2, "--") != 0)
      fail(spec.name, ": unknown option ", quote(arg), seeHelp);
    std::string flag = arg.substr(2);
    std::optional<std::string> value;
    if (size_t equals = flag.find('='); equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag.resize(equals);
    }
    auto option = std::find_if(
        spec.options.begin(), spec.options.end(),
        [&](const CommandSpec::Option &o) { return o.flag == flag; });
    if (option == spec.options.end())
      fail(spec.name, ": unknown option ", quote("--" + flag), seeHelp);
    if (option->metavar.empty()) {
      // An option without a metavar is a flag: `--resume=no` must not
      // quietly mean --resume.
      if (value)
        fail(spec.name, ": option --", flag, " takes no value, got ",
             quote(*value));
      value = "1";
    } else if (!value) {
      if (i + 1 == args.size())
        fail(spec.name, ": option --", flag, " needs a value (",
             option->metavar, ")");
      value = args[++i];
    }
    parsed.set(flag, std::move(*value));
  }
  if (parsed.positionals.size() != spec.positionals.size()) {
    std::string names;
    for (const CommandSpec::Positional &positional : spec.positionals)
      names += (names.empty() ? "" : " ") + positional.name;
    fail(spec.name, ": expected ", spec.positionals.size(), " argument",
         spec.positionals.size() == 1 ? "" : "s", " (", names, "), got ",
         parsed.positionals.size(), seeHelp);
  }
  for (const CommandSpec::Option &option : spec.options)
    if (option.required && !parsed.getOptional(option.flag))
      fail(spec.name, ": missing option --", option.flag, " ", option.metavar,
           seeHelp);
  return parsed;
}

/// "--flag METAVAR", or "--flag" for a flag.
static std::string optionWords(const CommandSpec::Option &option) {
  return "--" + option.flag +
         (option.metavar.empty() ? "" : " " + option.metavar);
}

std::string mixrt::formatUsage(const CommandSpec &spec) {
  std::string out = "usage: " + spec.tool + " " + spec.name;
  for (const CommandSpec::Positional &positional : spec.positionals)
    out += " " + positional.name;
  for (const CommandSpec::Option &option : spec.options) {
    std::string word = optionWords(option);
    out += " " + (option.required ? word : "[" + word + "]");
  }
  out += "\n\n" + spec.summary + "\n";

  size_t width = 6; // "--help"
  for (const CommandSpec::Positional &positional : spec.positionals)
    width = std::max(width, positional.name.size());
  for (const CommandSpec::Option &option : spec.options)
    width = std::max(width, option.flag.size() + option.metavar.size() + 3);
  auto line = [&](const std::string &left, const std::string &help) {
    return "  " + left + std::string(width - left.size() + 2, ' ') + help +
           "\n";
  };
  if (!spec.positionals.empty()) {
    out += "\narguments:\n";
    for (const CommandSpec::Positional &positional : spec.positionals)
      out += line(positional.name, positional.help);
  }
  out += "\noptions:\n";
  for (const CommandSpec::Option &option : spec.options)
    out += line(optionWords(option), option.help);
  out += line("--help", "print this help");
  return out;
}

int mixrt::runToolMain(const char *tool, int argc, char **argv,
                       int (*run)(const std::vector<std::string> &)) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.size() == 1 && words[0] == "--version") {
    std::cout << mix::versionLine(tool) << "\n";
    return 0;
  }
  // One write a message: std::cerr is unbuffered, and under mpirun the
  // pieces of several ranks' messages (and mpirun's own) would interleave.
  auto report = [&](const std::string &what) {
    std::cerr << (std::string(tool) + ": error: " + what + "\n");
  };
  try {
    return run(words);
  } catch (const std::bad_alloc &) {
    report("out of memory");
  } catch (const std::exception &e) {
    report(e.what());
  } catch (...) {
    report("unexpected failure");
  }
  return 1;
}

int mixrt::runSubcommand(
    const std::vector<std::string> &words, void (*printUsage)(std::ostream &),
    std::pair<CommandSpec, CommandBody> (*select)(const std::string &command)) {
  if (words.empty()) {
    printUsage(std::cerr);
    return 1;
  }
  const std::string &command = words[0];
  if (command == "--help" || command == "-h" || command == "help") {
    printUsage(std::cout);
    return 0;
  }
  auto [spec, body] = select(command);
  ParsedArgs args =
      parseArgs(spec, std::vector<std::string>(words.begin() + 1, words.end()));
  if (args.help) {
    std::cout << formatUsage(spec);
    return 0;
  }
  return body(args);
}
