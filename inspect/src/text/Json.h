// A minimal JSON writer: enough for one object per command, always valid (strings escaped,
// commas placed by the writer, 64-bit values that JavaScript cannot hold exactly as hex strings).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dscope::inspect {

// The length of the well-formed UTF-8 sequence at s[at] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF): 1 to 4, or 0 where the byte starts none.
inline size_t utf8SequenceAt(std::string_view s, size_t at) {
  const auto byte = [&](size_t i) { return at + i < s.size() ? static_cast<unsigned char>(s[at + i]) : 0u; };
  const unsigned c = byte(0);
  const auto tail = [&](size_t i, unsigned lo = 0x80, unsigned hi = 0xbf) { return byte(i) >= lo && byte(i) <= hi; };
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return tail(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return tail(1, lo, hi) && tail(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return tail(1, lo, hi) && tail(2) && tail(3) ? 4 : 0;
  }
  return 0;
}

class Json {
 public:
  Json& beginObject() { return open('{'); }
  Json& endObject() { return close('}'); }
  Json& beginArray() { return open('['); }
  Json& endArray() { return close(']'); }
  Json& key(std::string_view k) {
    separate();
    quote(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  Json& value(std::string_view s) {
    separate();
    quote(s);
    return *this;
  }
  Json& value(const char* s) { return value(std::string_view(s)); }
  Json& value(const std::string& s) { return value(std::string_view(s)); }
  Json& value(bool b) {
    separate();
    out_ += b ? "true" : "false";
    return *this;
  }
  Json& value(int64_t n) {
    separate();
    out_ += std::to_string(n);
    return *this;
  }
  Json& value(uint64_t n) {
    separate();
    out_ += std::to_string(n);
    return *this;
  }
  Json& value(int n) { return value(static_cast<int64_t>(n)); }
  Json& value(uint32_t n) { return value(static_cast<uint64_t>(n)); }
  Json& null() {
    separate();
    out_ += "null";
    return *this;
  }
  // A value already written as JSON (another writer's document, its newline dropped).
  Json& raw(std::string_view json) {
    separate();
    while (!json.empty() && json.back() == '\n') json.remove_suffix(1);
    out_ += json;
    return *this;
  }
  template <class T>
  Json& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  // A text field that may say nothing: null where it is empty.
  Json& text(std::string_view k, const std::string& v) {
    key(k);
    return v.empty() ? null() : value(v);
  }
  std::string str() const { return out_ + "\n"; }

 private:
  Json& open(char c) {
    separate();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  Json& close(char c) {
    out_ += c;
    if (!first_.empty()) first_.pop_back();
    return *this;
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }
  // Valid UTF-8 as it is; control characters (C0, DEL, C1) as \u escapes; a byte that is no UTF-8
  // (target memory and file names need not be) as the lone surrogate U+DC00 + byte, U+DC80 to
  // U+DCFF, which no text holds: the bytes come back losslessly (Python's
  // s.encode("utf-8", "surrogateescape")).
  void quote(std::string_view s) {
    static const char* digits = "0123456789abcdef";
    auto escape = [&](const char* prefix, unsigned char c) {
      out_ += prefix;
      out_ += digits[c >> 4];
      out_ += digits[c & 15];
    };
    out_ += '"';
    for (size_t at = 0; at < s.size();) {
      const auto c = static_cast<unsigned char>(s[at]);
      const size_t n = utf8SequenceAt(s, at);
      if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[at + 1]) < 0xa0) {  // U+0080 to U+009F
        escape("\\u00", static_cast<unsigned char>(s[at + 1]));
      } else if (n > 1) {
        out_.append(s, at, n);
      } else if (n == 0) {
        escape("\\udc", c);
      } else if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c == '\n') {
        out_ += "\\n";
      } else if (c < 0x20 || c == 0x7f) {
        escape("\\u00", c);
      } else {
        out_ += static_cast<char>(c);
      }
      at += n > 1 ? n : 1;
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace dscope::inspect
