#include "CommandLine.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "dscope/DispatchKey.h"

namespace dscope::inspect {

std::vector<std::string> splitWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
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
  if (quote) fail(std::string("unterminated ") + quote + " in the command line");
  if (in_word) words.push_back(word);
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
      args.flags.insert(w);
    } else if (spec.valued.count(w)) {
      if (i + 1 >= words.size()) usageError(w + " needs a value", usage);
      args.values[w] = words[++i];
    } else {
      usageError("unknown option " + w, usage);
    }
  }
  return args;
}

std::optional<uint64_t> parseNumber(const std::string& text) {
  if (text.empty() || text.size() > 40 || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  bool is_hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* digits = text.c_str() + (is_hex ? 2 : 0);
  for (const char* p = digits; *p; ++p)
    if (!(is_hex ? std::isxdigit(static_cast<unsigned char>(*p)) : std::isdigit(static_cast<unsigned char>(*p))))
      return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(digits, &end, is_hex ? 16 : 10);
  // A number too large is the user's mistake, said here rather than in each debugger's words.
  if (errno == ERANGE) fail(text + " does not fit in 64 bits");
  if (*end != '\0') return std::nullopt;
  return static_cast<uint64_t>(v);
}

uint64_t numberOrExpression(const Remote& mem, const std::string& text) {
  if (auto n = parseNumber(text)) return *n;
  std::string error;
  if (auto v = mem.evaluate(text, &error)) return *v;
  if (!error.empty()) fail("cannot evaluate '" + text + "': " + error);
  fail("not a number: " + text + " (a decimal or 0x-hex value; expressions need a debugger)");
}

DispatchKey parseKeyOrFail(const std::string& name) {
  if (auto k = parseDispatchKey(name)) return *k;
  fail("unknown dispatch key '" + name + "' (PyTorch's names: CPU, AutogradCPU, Meta, BackendSelect, ...)");
}

}  // namespace dscope::inspect
