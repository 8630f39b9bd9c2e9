// A minimal JSON writer: enough for one object per command, always valid (strings escaped,
// commas placed by the writer, 64-bit values that JavaScript cannot hold exactly as hex strings).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dscope::inspect {

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
  void quote(std::string_view s) {
    static const char* digits = "0123456789abcdef";
    out_ += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c == '\n') {
        out_ += "\\n";
      } else if (c < 0x20 || c >= 0x7f) {
        // Non-ASCII bytes from target memory need not be valid UTF-8: escape them as code points.
        out_ += "\\u00";
        out_ += digits[c >> 4];
        out_ += digits[c & 15];
      } else {
        out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace dscope::inspect
