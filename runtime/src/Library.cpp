#include "dscope/Library.h"

namespace dscope {

namespace {
const char* kindName(Library::Kind k) {
  switch (k) {
    case Library::DEF: return "DSCOPE_LIBRARY";
    case Library::IMPL: return "DSCOPE_LIBRARY_IMPL";
    case Library::FRAGMENT: return "DSCOPE_LIBRARY_FRAGMENT";
  }
  return "?";
}
}  // namespace

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> k, const char* file, uint32_t line)
    : kind_(kind), ns_(std::move(ns)), key_(k), file_(file), line_(line) {
  DSCOPE_CHECK(kind_ == IMPL || !key_, std::string(kindName(kind_)) + " takes no dispatch key");
  if (kind_ == DEF) registrations_.push_back(Dispatcher::singleton().registerLibrary(ns_, where()));
}

Library::~Library() {
  for (auto it = registrations_.rbegin(); it != registrations_.rend(); ++it) (*it)();
}

std::string Library::where() const { return "registered at " + file_ + ":" + std::to_string(line_); }

std::string Library::debugString(const CppFunction& f) const { return f.debug_.value_or(where()); }

OperatorName Library::qualify(std::string_view name) const {
  if (name.find("::") != std::string_view::npos) {
    auto op = OperatorName::parse(name);
    DSCOPE_CHECK(ns_ == "_" || op.name.substr(0, op.name.find("::")) == ns_,
                 "Explicitly provided namespace in operator name " + std::string(name) + " does not match namespace " +
                     ns_ + " of the enclosing " + kindName(kind_) + " block at " + file_ + ":" + std::to_string(line_));
    return op;
  }
  return OperatorName::parse(ns_ + "::" + std::string(name));
}

Library& Library::def(std::string_view schema) {
  DSCOPE_CHECK(kind_ != IMPL, "def(\"" + std::string(schema) + "\"): cannot define an operator inside a " +
                                  kindName(kind_) + " block at " + file_ + ":" + std::to_string(line_) +
                                  "; use DSCOPE_LIBRARY or DSCOPE_LIBRARY_FRAGMENT");
  registrations_.push_back(
      Dispatcher::singleton().registerDef(FunctionSchema::parse(schema, ns_), where()));
  return *this;
}

Library& Library::def(std::string_view schema, CppFunction f) {
  def(schema);
  auto parsed = FunctionSchema::parse(schema, ns_);
  std::string debug = debugString(f);
  registrations_.push_back(Dispatcher::singleton().registerImpl(parsed.op, f.key_, std::move(f.kernel_), std::move(debug)));
  return *this;
}

Library& Library::impl(std::string_view name, CppFunction f) {
  DSCOPE_CHECK(ns_ != "_", "impl(\"" + std::string(name) + "\") in a library for all namespaces (_): only fallback() is allowed there");
  // The key: the CppFunction's own (dispatch(k, f)), else the block's, else catch-all.
  std::optional<DispatchKey> key = f.key_ ? f.key_ : key_;
  DSCOPE_CHECK(!(f.key_ && key_ && *f.key_ != *key_),
               "impl(\"" + std::string(name) + "\"): dispatch key " + toString(*f.key_) +
                   " conflicts with the block's key " + toString(*key_));
  std::string debug = debugString(f);
  registrations_.push_back(Dispatcher::singleton().registerImpl(qualify(name), key, std::move(f.kernel_), std::move(debug)));
  return *this;
}

Library& Library::fallback(CppFunction f) {
  DSCOPE_CHECK(kind_ == IMPL && key_, "fallback() is only allowed in a DSCOPE_LIBRARY_IMPL block with a dispatch key");
  DSCOPE_CHECK(ns_ == "_", "fallback() must be registered for all namespaces: use DSCOPE_LIBRARY_IMPL(_, " +
                               std::string(toString(*key_)) + ", m)");
  std::string debug = debugString(f);
  // An alias key stands for every runtime key it covers.
  for (DispatchKey k : getRuntimeDispatchKeySet(*key_))
    registrations_.push_back(Dispatcher::singleton().registerFallback(k, f.kernel_, debug));
  return *this;
}

}  // namespace dscope
