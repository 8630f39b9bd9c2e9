// Debugger values of our runtime's types (Values.cpp, ValueSummary.cpp): the key set a value
// holds, the dispatch in a selected frame, and the one line and children the value printers show.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dscope/inspect.h"

namespace dscope::inspect {

class Session;

// The key set word a debugger value of our runtime's types holds: a DispatchKeySet's repr_; a
// tensor's (Tensor, TensorImpl, or a pointer to either); an integer as it is. InspectError with
// the message after "cannot evaluate".
uint64_t keySetWord(Session& s, const std::string& expr, const dscope_value& v);
// The dispatch in the debugger's selected frame (named `frame`): whether its operator is `name`
// (full or base name), and its key (inspect.h dscope_frame_op_is, dscope_frame_key).
bool frameOpIs(Session& s, const std::string& frame, const std::string& name);
std::string frameKey(Session& s, const std::string& frame);

// One child an IDE shows under a value (inspect.h dscope_value_child; "" for no type).
struct Child {
  std::string name;
  std::string summary;
  std::string type;
  uint64_t word = 0;
  std::vector<int64_t> elements;
};
struct Summary {
  std::string text;
  std::vector<Child> children;
};
// A value of a table type: its one line and its children (inspect.h dscope_value_summary).
Summary summarize(Session& s, const dscope_value& value);
// Row `index` of the value printers' type table (inspect.h dscope_value_type_at), else nullptr.
const dscope_value_type* valueTypeAt(uint64_t index);

}  // namespace dscope::inspect
