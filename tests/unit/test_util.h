// Helpers shared by the unit tests: reading the real PyTorch outputs in shared/data.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace dscope::testing {

inline std::string readSharedFile(const std::string& relative) {
  std::ifstream in(std::string(DSCOPE_SHARED_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in, "cannot open shared/" << relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The sections of torch-2.11-dump-examples.txt: "_dispatch_dump('aten::mm')" -> its lines.
inline std::map<std::string, std::vector<std::string>> dumpExampleSections() {
  std::map<std::string, std::vector<std::string>> sections;
  std::string current;
  for (const auto& line : splitLines(readSharedFile("data/torch-2.11-dump-examples.txt"))) {
    if (line.rfind("===== ", 0) == 0) {
      current = line.substr(6);
      sections[current];
    } else if (!current.empty() && !line.empty()) {
      sections[current].push_back(line);
    }
  }
  return sections;
}

// The message of the exception f throws, or "(no error)".
inline std::string errorOf(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

inline std::string joinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace dscope::testing

// doctest stringifies with an unqualified toString(), which finds dscope::toString by ADL and
// fails to compile; so CHECKs compare dscope enums and key sets inside double parentheses (no
// decomposition) or compare their raw values / strings.
