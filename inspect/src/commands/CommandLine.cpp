#include "commands/CommandLine.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "dscope/DispatchKey.h"

namespace dscope::inspect {

std::vector<std::string> splitWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;  // the quote we are inside, if any
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const bool has_next = i + 1 < line.size();
    if (quote == '\'') {
      if (c == quote) quote = 0;
      else word += c;
    } else if (quote == '"') {
      if (c == quote) quote = 0;
      else if (c == '\\' && has_next && (line[i + 1] == '"' || line[i + 1] == '\\')) word += line[++i];
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && has_next && std::string_view(" \t\\'\"`").find(line[i + 1]) != std::string_view::npos) {
      word += line[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);  // an unterminated quote ends with the line, as in LLDB
  return words;
}

void usageError(const std::string& problem, const std::string& usage) { fail(problem + "; usage: " + usage); }

ParsedArgs parseArgs(const std::vector<std::string>& words, const OptionSpec& spec, const std::string& usage) {
  ParsedArgs args;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w.compare(0, 2, "--") != 0) {
      args.positional.push_back(w);
    } else if (spec.flags.count(w)) {
      if (!args.flags.insert(w).second) usageError(w + " is given twice", usage);
    } else if (spec.valued.count(w)) {
      if (i + 1 >= words.size()) usageError(w + " needs a value", usage);
      if (args.values.count(w)) usageError(w + " is given twice", usage);
      args.values[w] = words[++i];
    } else {
      usageError("unknown option " + shown(w), usage);
    }
  }
  return args;
}

TypedWord typedWord(const std::string& arguments, const OptionSpec& spec, Completes operand) {
  std::vector<std::string> words = splitWords(arguments);
  // A new word starts at the cursor when one more character would make one (after a space outside
  // quotes): splitWords' own rules decide, quotes and escapes included.
  if (splitWords(arguments + "x").size() > words.size()) words.emplace_back();
  const std::string typing = words.back();
  if (typing.compare(0, 1, "-") == 0) return {Completes::Nothing, typing};
  size_t operands_before = 0;
  bool value_of_option = false;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    // A valued option's next word is its value, whatever it looks like (as in parseArgs).
    if (value_of_option) {
      value_of_option = false;
    } else if (spec.valued.count(words[i])) {
      value_of_option = true;
    } else if (words[i].compare(0, 1, "-") != 0) {
      ++operands_before;
    }
  }
  if (value_of_option) {
    const std::string& option = words[words.size() - 2];
    if (spec.key_names.count(option)) return {Completes::KeyName, typing};
    if (spec.expressions.count(option)) return {Completes::Expression, typing};
    return {Completes::Nothing, typing};
  }
  if (operand == Completes::Operator && operands_before > 0) return {Completes::Nothing, typing};
  return {operand, typing};
}

std::optional<uint64_t> parseNumber(const std::string& text) {
  if (text.empty() || text.size() > 40 || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  // C's and the debuggers' rules: 0x is hex, another leading 0 octal.
  const bool is_hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const bool is_octal = !is_hex && text.size() > 1 && text[0] == '0';
  const char* digits = text.c_str() + (is_hex ? 2 : 0);
  for (const char* p = digits; *p; ++p)
    if (!(is_hex ? std::isxdigit(static_cast<unsigned char>(*p)) : std::isdigit(static_cast<unsigned char>(*p))))
      return std::nullopt;
  if (is_octal && text.find_first_of("89") != std::string::npos)
    fail(shown(text) + " is no number: a leading 0 makes it octal, as in C, and 8 and 9 are no octal digits");
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(digits, &end, is_hex ? 16 : is_octal ? 8 : 10);
  // A number too large is the user's mistake, said here rather than in each debugger's words.
  if (errno == ERANGE) fail(shown(text) + " does not fit in 64 bits");
  if (*end != '\0') return std::nullopt;
  return static_cast<uint64_t>(v);
}

uint64_t numberOption(const std::string& option, const std::string& text, const std::string& what, uint64_t max) {
  std::optional<uint64_t> n;
  try {
    n = parseNumber(text);
  } catch (const InspectError&) {  // past 64 bits: out of range like any number past max
  }
  if (!n || *n > max) fail(option + " needs " + what + ", got '" + shown(text) + "'");
  return *n;
}

std::optional<int64_t> threadOption(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  return static_cast<int64_t>(numberOption("--thread", *text, "a thread number", INT64_MAX));
}

}  // namespace dscope::inspect
