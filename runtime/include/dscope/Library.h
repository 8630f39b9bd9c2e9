// Library and the DSCOPE_LIBRARY macros (torch::Library / TORCH_LIBRARY's role).
//
//   DSCOPE_LIBRARY(myops, m) { m.def("my_add(Tensor a, Tensor b) -> Tensor"); }
//   DSCOPE_LIBRARY_IMPL(myops, CPU, m) { m.impl("my_add", my_add_cpu); }
//   DSCOPE_LIBRARY_IMPL(_, AutogradCPU, m) { m.fallback(dscope::CppFunction::makeFallthrough()); }
//
// Every registration is undone when its Library is destroyed (tables are recomputed).
// Debug strings read "registered at FILE:LINE" of the library block, as in c10.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dscope/Dispatcher.h"

namespace dscope {

// A kernel plus how to describe it (torch::CppFunction).
class CppFunction {
 public:
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, CppFunction> && !std::is_same_v<std::decay_t<F>, KernelFunction>)
  CppFunction(F&& f) : kernel_(KernelFunction::makeFromUnboxed(std::forward<F>(f))) {}
  explicit CppFunction(KernelFunction k) : kernel_(std::move(k)) {}

  static CppFunction makeFallthrough() { return CppFunction(KernelFunction::makeFallthrough()); }
  static CppFunction makeFromBoxedFunction(BoxedFunction* f) { return CppFunction(KernelFunction::makeFromBoxedFunction(f)); }
  static CppFunction makeFromBoxedFunction(BoxedFunctionWithKeySet* f) {
    return CppFunction(KernelFunction::makeFromBoxedFunction(f));
  }
  // Replaces the "registered at FILE:LINE" text (c10's CppFunction::debug).
  CppFunction&& debug(std::string d) && { debug_ = std::move(d); return std::move(*this); }

 private:
  friend class Library;
  template <class F>
  friend CppFunction dispatch(DispatchKey k, F&& f);
  KernelFunction kernel_;
  std::optional<DispatchKey> key_;
  std::optional<std::string> debug_;
};

// m.impl("op", dispatch(DispatchKey::CPU, fn)): pin a kernel to a key inside any library.
template <class F>
CppFunction dispatch(DispatchKey k, F&& f) {
  CppFunction c(std::forward<F>(f));
  c.key_ = k;
  return c;
}

class Library final {
 public:
  enum Kind { DEF, IMPL, FRAGMENT };

  // ns "_" means "every namespace" (only valid for fallbacks in IMPL libraries).
  Library(Kind kind, std::string ns, std::optional<DispatchKey> k, const char* file, uint32_t line);
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&&) = default;
  ~Library();

  Library& def(std::string_view schema);
  // def + a catch-all (CompositeImplicitAutograd) kernel.
  Library& def(std::string_view schema, CppFunction f);
  Library& impl(std::string_view name, CppFunction f);
  Library& fallback(CppFunction f);

  const std::string& ns() const { return ns_; }

 private:
  std::string where() const;  // "registered at FILE:LINE" of this block
  std::string debugString(const CppFunction& f) const;
  OperatorName qualify(std::string_view name) const;

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> key_;
  std::string file_;
  uint32_t line_;
  std::vector<Dispatcher::Deregister> registrations_;  // undone in reverse order
};

namespace detail {
// Runs a library block at static-initialization time and keeps the Library alive.
class LibraryInit {
 public:
  LibraryInit(Library::Kind kind, void (*fn)(Library&), const char* ns, std::optional<DispatchKey> k,
              const char* file, uint32_t line)
      : lib_(kind, ns, k, file, line) {
    fn(lib_);
  }

 private:
  Library lib_;
};
}  // namespace detail

}  // namespace dscope

#define DSCOPE_CONCAT_(a, b) a##b
#define DSCOPE_CONCAT(a, b) DSCOPE_CONCAT_(a, b)
#define DSCOPE_UID(prefix) DSCOPE_CONCAT(prefix, __COUNTER__)

#define DSCOPE_LIBRARY(ns, m) DSCOPE_LIBRARY_BLOCK_(DEF, ns, std::nullopt, m, DSCOPE_UID(dscope_library_))
#define DSCOPE_LIBRARY_FRAGMENT(ns, m) DSCOPE_LIBRARY_BLOCK_(FRAGMENT, ns, std::nullopt, m, DSCOPE_UID(dscope_fragment_))
#define DSCOPE_LIBRARY_IMPL(ns, k, m) \
  DSCOPE_LIBRARY_BLOCK_(IMPL, ns, ::dscope::DispatchKey::k, m, DSCOPE_UID(dscope_library_impl_))

#define DSCOPE_LIBRARY_BLOCK_(kind, ns, key, m, uid)                                                 \
  static void DSCOPE_CONCAT(uid, _init)(::dscope::Library&);                                         \
  static const ::dscope::detail::LibraryInit DSCOPE_CONCAT(uid, _static)(                           \
      ::dscope::Library::kind, &DSCOPE_CONCAT(uid, _init), #ns, key, __FILE__, __LINE__);            \
  void DSCOPE_CONCAT(uid, _init)(::dscope::Library & m)
