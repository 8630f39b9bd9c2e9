#include "dscope/IValue.h"

namespace dscope {

const char* IValue::tagName() const {
  static const char* names[] = {"None", "Tensor", "float", "int", "bool", "int[]", "Tensor[]", "Device", "str"};
  return names[v_.index()];
}

}  // namespace dscope
