// KernelFunction: one kernel as the dispatcher stores it (c10::KernelFunction's role).
//
//   functor_     the user's function (its address is what a debugger symbolizes), or a
//                heap-allocated functor object for stateful lambdas
//   boxed_fn_    void(functor, op, ks, Stack*): always set for a valid kernel; for unboxed
//                kernels it is a generated wrapper that unboxes the stack
//   unboxed_fn_  Ret(functor, ks, Args...): set for kernels registered with a C++ signature
//
// A call through a typed handle uses unboxed_fn_ when present and otherwise boxes its
// arguments and calls boxed_fn_, so boxed kernels (fallbacks) serve every operator.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "dscope/DispatchKeySet.h"
#include "dscope/Error.h"
#include "dscope/IValue.h"

namespace dscope {

class OperatorHandle;
namespace debug {
struct Layout;
}

using BoxedKernelFunction = void(void* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack);
// The two signatures a user may give a boxed kernel (c10's).
using BoxedFunction = void(const OperatorHandle& op, Stack* stack);
using BoxedFunctionWithKeySet = void(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);

// The C++ signature of an operator (Ret(Args...) without a leading DispatchKeySet); kernels and
// typed handles of one operator must agree on it.
class CppSignature {
 public:
  template <class FuncType>
  static CppSignature make() { return CppSignature(typeid(FuncType)); }
  std::string name() const;  // demangled
  bool operator==(const CppSignature& o) const { return *type_ == *o.type_; }

 private:
  explicit CppSignature(const std::type_info& t) : type_(&t) {}
  const std::type_info* type_;
};

namespace detail {

// ---- boxing: C++ value -> IValue, IValue -> C++ value ----
// A Tensor parameter taken by reference binds to the Tensor inside the IValue; everything else
// is converted to a value (so a const Scalar& parameter binds to a live temporary).
template <class T>
struct ivalue_to {
  using D = std::decay_t<T>;
  using R = std::conditional_t<std::is_same_v<D, Tensor> && std::is_reference_v<T>, const Tensor&, D>;
  static R call(const IValue& v) {
    if constexpr (std::is_same_v<D, Tensor>) return v.toTensor();
    else if constexpr (std::is_same_v<D, Scalar>) return v.toScalar();
    else if constexpr (std::is_same_v<D, int64_t>) return v.toInt();
    else if constexpr (std::is_same_v<D, double>) return v.toDouble();
    else if constexpr (std::is_same_v<D, bool>) return v.toBool();
    else if constexpr (std::is_same_v<D, ScalarType>) return v.toScalarType();
    else if constexpr (std::is_same_v<D, Device>) return v.toDevice();
    else if constexpr (std::is_same_v<D, std::string>) return v.toStringRef();
    else if constexpr (std::is_same_v<D, IntArrayRef>) return IntArrayRef(v.toIntList());
    else if constexpr (std::is_same_v<D, TensorList>) return TensorList(v.toTensorList());
    else if constexpr (std::is_same_v<D, std::vector<Tensor>>) return v.toTensorList();
    else static_assert(sizeof(T) == 0, "unsupported operator argument type");
  }
};
template <class T>
struct ivalue_to<std::optional<T>> {
  static std::optional<T> call(const IValue& v) {
    if (v.isNone()) return std::nullopt;
    return ivalue_to<T>::call(v);
  }
};
template <class T>
struct ivalue_to<const std::optional<T>&> : ivalue_to<std::optional<T>> {};

// ---- schema inference: the type names c10 prints for a kernel's inferred schema ----
template <class T>
constexpr const char* schemaTypeName() {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) return "Tensor";
  else if constexpr (std::is_same_v<D, std::optional<Tensor>>) return "Tensor?";
  else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::vector<Tensor>>) return "Tensor[]";
  else if constexpr (std::is_same_v<D, Scalar>) return "Scalar";
  else if constexpr (std::is_same_v<D, std::optional<Scalar>>) return "Scalar?";
  else if constexpr (std::is_same_v<D, int64_t>) return "int";
  else if constexpr (std::is_same_v<D, std::optional<int64_t>>) return "int?";
  else if constexpr (std::is_same_v<D, double>) return "float";
  else if constexpr (std::is_same_v<D, std::optional<double>>) return "float?";
  else if constexpr (std::is_same_v<D, bool>) return "bool";
  else if constexpr (std::is_same_v<D, std::optional<bool>>) return "bool?";
  else if constexpr (std::is_same_v<D, IntArrayRef>) return "int[]";
  else if constexpr (std::is_same_v<D, ScalarType>) return "ScalarType";
  else if constexpr (std::is_same_v<D, std::optional<ScalarType>>) return "ScalarType?";
  else if constexpr (std::is_same_v<D, Device>) return "Device";
  else if constexpr (std::is_same_v<D, std::optional<Device>>) return "Device?";
  else if constexpr (std::is_same_v<D, std::string>) return "str";
  else static_assert(sizeof(T) == 0, "unsupported operator argument type");
}

template <class Ret>
std::string inferReturns() {
  if constexpr (std::is_void_v<Ret>) {
    return "()";
  } else if constexpr (requires { std::tuple_size<Ret>::value; }) {
    std::string s = "(";
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((s += (I ? ", " : "") + std::string(schemaTypeName<std::tuple_element_t<I, Ret>>()) + " _" + std::to_string(I)), ...);
    }(std::make_index_sequence<std::tuple_size_v<Ret>>());
    return s + ")";
  } else {
    return std::string(schemaTypeName<Ret>()) + " _0";
  }
}

// "(Tensor _0, Tensor _1) -> Tensor _0"
template <class Ret, class... Args>
std::string inferSchema() {
  std::string s = "(";
  size_t i = 0;
  ((s += (i ? ", " : "") + std::string(schemaTypeName<Args>()) + " _" + std::to_string(i), ++i), ...);
  return s + ") -> " + inferReturns<Ret>();
}

template <class Ret>
void pushReturn(Stack* stack, Ret&& r) {
  if constexpr (requires { std::tuple_size<std::decay_t<Ret>>::value; })
    std::apply([&](auto&&... e) { (stack->emplace_back(std::forward<decltype(e)>(e)), ...); }, std::forward<Ret>(r));
  else
    stack->emplace_back(std::forward<Ret>(r));
}

template <class Ret>
Ret popReturn(Stack* stack) {
  if constexpr (std::is_void_v<Ret>) {
    return;
  } else if constexpr (requires { std::tuple_size<Ret>::value; }) {
    constexpr size_t n = std::tuple_size_v<Ret>;
    DSCOPE_CHECK(stack->size() >= n, "boxed kernel returned too few values");
    size_t base = stack->size() - n;
    Ret r = [&]<size_t... I>(std::index_sequence<I...>) {
      return Ret{ivalue_to<std::tuple_element_t<I, Ret>>::call((*stack)[base + I])...};
    }(std::make_index_sequence<n>());
    stack->resize(base);
    return r;
  } else {
    DSCOPE_CHECK(!stack->empty(), "boxed kernel returned no value");
    Ret r = ivalue_to<Ret>::call(stack->back());
    stack->pop_back();
    return r;
  }
}

// Calls f (a function pointer or functor) with or without the leading DispatchKeySet.
template <class F, class... Args>
decltype(auto) invokeKernel(F&& f, DispatchKeySet ks, Args&&... args) {
  if constexpr (std::is_invocable_v<F&&, DispatchKeySet, Args&&...>)
    return std::forward<F>(f)(ks, std::forward<Args>(args)...);
  else
    return std::forward<F>(f)(std::forward<Args>(args)...);
}

// Functor storage: a function pointer is stored as itself (returned by value), anything else
// as a heap object (returned by reference).
template <class F>
decltype(auto) functorRef(void* functor) {
  if constexpr (std::is_pointer_v<F>) return reinterpret_cast<F>(functor);
  else return *static_cast<F*>(functor);
}

template <class F, class Ret, class... Args>
Ret unboxedTrampoline(void* functor, DispatchKeySet ks, Args... args) {
  return invokeKernel(functorRef<F>(functor), ks, std::forward<Args>(args)...);
}

template <class F, class Ret, class... Args>
void boxedWrapper(void* functor, const OperatorHandle&, DispatchKeySet ks, Stack* stack) {
  constexpr size_t n = sizeof...(Args);
  DSCOPE_CHECK(stack->size() >= n, "boxed call: stack holds " + std::to_string(stack->size()) +
                                       " values, the kernel takes " + std::to_string(n));
  size_t base = stack->size() - n;
  auto call = [&]<size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
    return invokeKernel(functorRef<F>(functor), ks, ivalue_to<Args>::call((*stack)[base + I])...);
  };
  if constexpr (std::is_void_v<Ret>) {
    call(std::index_sequence_for<Args...>());
    stack->resize(base);
  } else {
    Ret r = call(std::index_sequence_for<Args...>());
    stack->resize(base);
    pushReturn(stack, std::move(r));
  }
}

// The signature of a kernel: its function type with any leading DispatchKeySet removed.
template <class T>
struct function_traits : function_traits<decltype(&T::operator())> {};
template <class R, class... A>
struct function_traits<R (*)(A...)> {
  using type = R(A...);
};
template <class R, class... A>
struct function_traits<R(A...)> : function_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct function_traits<R (C::*)(A...) const> : function_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct function_traits<R (C::*)(A...)> : function_traits<R (*)(A...)> {};

template <class Sig>
struct strip_keyset { using type = Sig; };
template <class R, class... A>
struct strip_keyset<R(DispatchKeySet, A...)> { using type = R(A...); };

template <class F>
using kernel_signature_t = typename strip_keyset<typename function_traits<std::decay_t<F>>::type>::type;

void fallthroughKernel(void*, const OperatorHandle&, DispatchKeySet, Stack*);
void missingKernel(void*, const OperatorHandle&, DispatchKeySet, Stack*);
void ambiguousAutogradOtherKernel(void*, const OperatorHandle&, DispatchKeySet, Stack*);

}  // namespace detail

class KernelFunction {
 public:
  KernelFunction() = default;  // invalid: no kernel

  static KernelFunction makeFallthrough() { return KernelFunction(nullptr, &detail::fallthroughKernel, nullptr); }
  static KernelFunction makeMissing() { return KernelFunction(nullptr, &detail::missingKernel, nullptr); }
  static KernelFunction makeAmbiguousAutogradOther() {
    return KernelFunction(nullptr, &detail::ambiguousAutogradOtherKernel, nullptr);
  }
  static KernelFunction makeFromBoxedFunction(BoxedFunction* f) {
    return KernelFunction(reinterpret_cast<void*>(f), &callBoxedFunction, nullptr);
  }
  static KernelFunction makeFromBoxedFunction(BoxedFunctionWithKeySet* f) {
    return KernelFunction(reinterpret_cast<void*>(f), &callBoxedFunctionWithKeySet, nullptr);
  }

  // A function pointer or a lambda, with or without a leading DispatchKeySet parameter.
  template <class F>
  static KernelFunction makeFromUnboxed(F&& f) {
    using Sig = detail::kernel_signature_t<F>;
    return makeFromUnboxedImpl(std::forward<F>(f), static_cast<Sig*>(nullptr));
  }

  bool isValid() const { return boxed_fn_ != nullptr; }
  bool isFallthrough() const { return boxed_fn_ == &detail::fallthroughKernel; }
  bool isMissing() const { return boxed_fn_ == &detail::missingKernel; }
  bool hasBoxed() const { return isValid(); }
  bool hasUnboxed() const { return unboxed_fn_ != nullptr; }
  // The user's function (what a debugger symbolizes); null for sentinels and stateful functors.
  const void* functionAddress() const { return owned_functor_ ? nullptr : functor_; }
  // "fallthrough boxed ", "boxed unboxed ", ... (c10's KernelFunction::dumpState)
  std::string dumpState() const;

  // Small and always inlined into the dispatch path; boxing stays out of line.
  template <class Ret, class... Args>
  [[gnu::always_inline]] Ret call(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    if (unboxed_fn_) [[likely]]
      return reinterpret_cast<Ret (*)(void*, DispatchKeySet, Args...)>(unboxed_fn_)(functor_, ks, std::forward<Args>(args)...);
    return callBoxedAndUnbox<Ret, Args...>(op, ks, std::forward<Args>(args)...);
  }
  void callBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
    boxed_fn_(functor_, op, ks, stack);
  }

 private:
  KernelFunction(void* functor, BoxedKernelFunction* boxed, void* unboxed)
      : functor_(functor), boxed_fn_(boxed), unboxed_fn_(unboxed) {}

  template <class F, class Ret, class... Args>
  static KernelFunction makeFromUnboxedImpl(F&& f, Ret (*)(Args...)) {
    using D = std::decay_t<F>;
    using Stored = std::conditional_t<std::is_convertible_v<D, Ret (*)(Args...)>, Ret (*)(Args...),
                   std::conditional_t<std::is_convertible_v<D, Ret (*)(DispatchKeySet, Args...)>,
                                      Ret (*)(DispatchKeySet, Args...), D>>;
    KernelFunction k(nullptr, &detail::boxedWrapper<Stored, Ret, Args...>,
                     reinterpret_cast<void*>(&detail::unboxedTrampoline<Stored, Ret, Args...>));
    if constexpr (std::is_pointer_v<Stored>) {
      k.functor_ = reinterpret_cast<void*>(static_cast<Stored>(f));
    } else {
      auto owned = std::make_shared<D>(std::forward<F>(f));
      k.functor_ = owned.get();
      k.owned_functor_ = std::move(owned);
    }
    k.signature_ = std::make_shared<CppSignature>(CppSignature::make<Ret(Args...)>());
    k.inferred_schema_ = std::make_shared<std::string>(detail::inferSchema<Ret, Args...>());
    return k;
  }
  // A kernel without an unboxed entry (a boxed kernel, a fallback, a sentinel) called through
  // a typed handle: box the arguments, run it, unbox the result.
  template <class Ret, class... Args>
  [[gnu::noinline]] Ret callBoxedAndUnbox(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    Stack stack;
    stack.reserve(sizeof...(Args));
    (stack.emplace_back(args), ...);
    callBoxed(op, ks, &stack);
    return detail::popReturn<Ret>(&stack);
  }
  static void callBoxedFunction(void* f, const OperatorHandle& op, DispatchKeySet, Stack* s) {
    reinterpret_cast<BoxedFunction*>(f)(op, s);
  }
  static void callBoxedFunctionWithKeySet(void* f, const OperatorHandle& op, DispatchKeySet ks, Stack* s) {
    reinterpret_cast<BoxedFunctionWithKeySet*>(f)(op, ks, s);
  }

  friend struct debug::Layout;
  void* functor_ = nullptr;
  BoxedKernelFunction* boxed_fn_ = nullptr;
  void* unboxed_fn_ = nullptr;
  std::shared_ptr<void> owned_functor_;

 public:
  // Registration-time metadata (null for boxed kernels): the C++ signature and the inferred
  // schema that _dispatch_dump prints ("(Tensor _0) -> Tensor _0").
  std::shared_ptr<const CppSignature> signature_;
  std::shared_ptr<const std::string> inferred_schema_;
};

}  // namespace dscope
