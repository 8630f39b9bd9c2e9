// One command line, split into words, positional arguments and options. Each command declares
// its options; anything else is a usage error (one line, with the command's usage).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/KeyTable.h"
#include "target/Remote.h"
#include "dscope/DispatchKey.h"

namespace dscope::inspect {

// Splits on whitespace; '...' and "..." group words (expressions may contain spaces). The rules
// are LLDB's (lldb_private::Args), because the LLDB plugin only ever sees LLDB's words: a
// backslash outside quotes escapes a space, tab, backslash or quote; inside "..." it escapes " and
// backslash; '...' is literal; an unterminated quote ends with the line.
std::vector<std::string> splitWords(const std::string& line);

struct ParsedArgs {
  std::vector<std::string> positional;
  std::set<std::string> flags;                  // "--json"
  std::map<std::string, std::string> values;    // "--key" -> "CPU"

  bool has(const std::string& flag) const { return flags.count(flag) != 0; }
  std::optional<std::string> value(const std::string& option) const {
    auto it = values.find(option);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

struct OptionSpec {
  std::set<std::string> flags;   // options without a value
  std::set<std::string> valued;  // options followed by one value
  // What some valued options' values are, for completion; each is one of `valued`.
  std::set<std::string> key_names;    // a runtime key name ("--key CPU")
  std::set<std::string> expressions;  // an expression of the debugger's ("--explain ks")
};

// Throws InspectError("dscope: <problem>; usage: <usage>") on an unknown option, a missing value
// or an option given twice.
ParsedArgs parseArgs(const std::vector<std::string>& words, const OptionSpec& spec, const std::string& usage);

// What the word being typed at the end of a command's arguments is, and so what completes it.
enum class Completes {
  Nothing,     // an option, another option's value, or a word where the command takes none
  Operator,    // an operator name: the command's operand, where it goes
  KeyName,     // a runtime key name: the value of one of the spec's key_names
  Expression,  // an expression of the debugger's: the command's operand, or one of the spec's expressions
};
struct TypedWord {
  Completes completes;
  std::string text;  // the word as typed so far (as splitWords reads it); "" at the start of a new word
};
// `arguments`: the command line after the command word, up to the cursor; `operand`: what the
// command's words that are no option and no option's value are (Operator: only the first
// completes, the command takes one; Expression: each; Nothing). Decided by the words parseArgs
// would read, with the spec parseArgs is given.
TypedWord typedWord(const std::string& arguments, const OptionSpec& spec, Completes operand);

[[noreturn]] void usageError(const std::string& problem, const std::string& usage);

// "1234", "0x4d2", "02322" (octal, as in C) -> the value; nullopt for anything else; InspectError
// for a number past 64 bits or an octal one with an 8 or 9.
std::optional<uint64_t> parseNumber(const std::string& text);

// An option's value that must be a number up to max ("--max-frames 100"); else InspectError
// "OPTION needs WHAT, got 'TEXT'". Negative numbers and expressions are mistakes here.
uint64_t numberOption(const std::string& option, const std::string& text, const std::string& what,
                      uint64_t max = UINT64_MAX);

// --thread N: a debugger thread number or an OS thread id (numberOption, at most INT64_MAX);
// nullopt without the option.
std::optional<int64_t> threadOption(const std::optional<std::string>& text);

}  // namespace dscope::inspect
