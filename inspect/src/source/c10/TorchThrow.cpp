// The c10 error an uncaught throw left on the stack (TorchThrow.h). __cxa_throw and what it calls
// (the unwinder, std::terminate, the terminate handler) keep the thrown object's address in their
// frames; the object is recognised by its dynamic type (checkedTypeName: vtable, type_info and name
// all in read-only data), not by where a word lies, so no frame layout is assumed.
#include "source/c10/TorchThrow.h"

#include <algorithm>
#include <vector>

namespace dscope::inspect {

namespace {

constexpr uint64_t kMaxSpan = 64 << 10;     // the frames between the innermost and the thrower
constexpr uint64_t kGnuCxxExceptionClass = 0x474e5543432b2b00;  // "GNUCC++\0" as the ABI packs it: a C++ exception's unwind header
constexpr uint64_t kUnwindExceptionSize = 32;  // sizeof(_Unwind_Exception) on x86-64
constexpr uint64_t kMessagePrefix = 512;    // "Could not run 'OP' with ... the 'KEY' backend" lies in the first bytes

// What c10 throws a Could-not-run as (1.13: TORCH_CHECK_NOT_IMPLEMENTED; older: TORCH_CHECK).
bool isC10Error(const std::string& mangled) { return mangled == "N3c1019NotImplementedErrorE" || mangled == "N3c105ErrorE"; }

// The text between `before` and the next `after` from `at`, or nullopt.
std::optional<std::string> between(const std::string& s, const std::string& before, const std::string& after, size_t& at) {
  const size_t start = s.find(before, at);
  if (start != at) return std::nullopt;
  const size_t end = s.find(after, start + before.size());
  if (end == std::string::npos) return std::nullopt;
  at = end + after.size();
  return s.substr(start + before.size(), end - start - before.size());
}

// OperatorEntry::reportError's message, split; nullopt for any other message.
std::optional<CouldNotRun> parseCouldNotRun(const std::string& message) {
  size_t at = 0;
  auto op = between(message, "Could not run '", "' with arguments from the '", at);
  if (!op) return std::nullopt;
  auto key = between(message, "", "' backend", at);
  if (!key) return std::nullopt;
  return CouldNotRun{*op, *key};
}

}  // namespace

std::optional<CouldNotRun> couldNotRunThrown(const TorchView& tv, uint64_t low, uint64_t high) {
  const Remote& mem = tv.mem();
  if (!low || high <= low) return std::nullopt;
  std::vector<uint64_t> words((std::min(high - low, kMaxSpan)) / 8);
  try {
    mem.read(low, words.data(), words.size() * 8, "a thread's stack");
  } catch (const InspectError&) {
    return std::nullopt;
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  const uint64_t message_at = tv.layout().Error_msg;
  for (uint64_t word : words) {
    // A thrown object lies after its __cxa_exception header, aligned as malloc aligns (16). A frame
    // may hold the object, or only the header's _Unwind_Exception (the unwinder's argument), which
    // the object follows (Itanium C++ ABI: unwindHeader is the header's last member).
    if (!word || word % 16) continue;
    uint64_t object = word;
    try {
      if (mem.read<uint64_t>(word, "an exception header") == kGnuCxxExceptionClass) object = word + kUnwindExceptionSize;
    } catch (const InspectError&) {
      continue;
    }
    if (!isC10Error(dynamicTypeName(mem, object))) continue;
    try {
      const uint64_t data = mem.readPointer(object + message_at, "an error's message");
      const uint64_t size = mem.readPointer(object + message_at + 8, "an error's message");
      std::string text(std::min(size, kMessagePrefix), '\0');
      mem.read(data, text.data(), text.size(), "an error's message");
      auto found = parseCouldNotRun(text);
      if (!found || !tv.keys().byName(found->key)) continue;
      const auto& ops = tv.operators();
      if (std::any_of(ops.begin(), ops.end(), [&](const Operator& op) { return op.name == found->op; })) return found;
    } catch (const InspectError&) {
    }
  }
  return std::nullopt;
}

}  // namespace dscope::inspect
