// A small reverse-mode autograd engine in PyTorch's shape (torch/csrc/autograd):
//
//   Node      a backward function (grad_fn), named like PyTorch's (MmBackward0, ...). It takes
//             the gradients of the forward outputs and returns those of the forward inputs,
//             one per next_edge.
//   Edge      (node, input_nr): where a gradient goes next; an invalid edge (null node) means
//             "this input needs no gradient".
//   AccumulateGrad   the node behind a leaf that requires grad: adds into leaf.grad().
//   GradMode / NoGradGuard   thread-local switch (torch.no_grad()).
//
// Autograd kernels (the VariableType pattern) use the helpers at the bottom:
//   if (compute_requires_grad(a, b)) { grad_fn = make_shared<MmBackward0>(); grad_fn->set_next_edges(collect_next_edges(a, b)); }
//   result = redispatch below autograd; if (grad_fn) set_history(result, grad_fn);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dscope/Device.h"
#include "dscope/ScalarType.h"
#include "dscope/Tensor.h"

namespace dscope::autograd {

struct Node;

struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool is_valid() const { return function != nullptr; }
};

// What a gradient flowing into a node must look like (the forward output it belongs to).
struct InputMetadata {
  std::vector<int64_t> shape;
  ScalarType dtype = ScalarType::Float;
  Device device;
};

struct Node {
  Node();
  explicit Node(uint64_t sequence_nr) : sequence_nr(sequence_nr) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // grads[i]: gradient of forward output i (undefined when none flowed). Returns one
  // gradient per next_edge (undefined where next_edges[i] is invalid).
  virtual std::vector<Tensor> apply(std::vector<Tensor> grads) = 0;
  // Frees saved tensors after a backward pass that does not retain the graph.
  virtual void release_variables() {}

  void set_next_edges(std::vector<Edge> edges) { next_edges = std::move(edges); }
  bool should_compute_output(size_t i) const { return i < next_edges.size() && next_edges[i].is_valid(); }
  // Records a forward output's metadata; returns its index (the output_nr of that output).
  uint32_t add_input_metadata(const Tensor& t);
  size_t num_inputs() const { return input_metadata.size(); }

  std::vector<Edge> next_edges;
  std::vector<InputMetadata> input_metadata;
  // Creation order on this thread; the engine runs later nodes first when several are ready.
  uint64_t sequence_nr;
};

// The node behind a leaf that requires grad. PyTorch keeps one per leaf (weak_ptr in its
// AutogradMeta); our AutogradMeta has no such slot, so each edge to a leaf gets its own
// AccumulateGrad. Accumulation is additive, so the result is the same.
struct AccumulateGrad final : Node {
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  Tensor variable;
};

// grad_fn of outputs of an operator without an autograd kernel (the autograd fallback).
struct NotImplemented final : Node {
  explicit NotImplemented(std::string op_name) : op_name(std::move(op_name)) {}
  std::string name() const override { return "NotImplemented"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;  // throws
  std::string op_name;
};

// A tensor a backward function needs later. Remembers the version of its storage so that an
// in-place change made after saving is reported instead of silently giving wrong gradients.
class SavedVariable {
 public:
  SavedVariable() = default;
  // Saves without autograd history (a detached alias), so saving an output of the node that
  // saves it creates no reference cycle.
  explicit SavedVariable(const Tensor& t);
  // The saved tensor; throws if it was freed by backward or modified in place since.
  Tensor unpack(const Node& owner) const;
  void reset() { data_ = Tensor(); was_released_ = true; }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  bool was_released_ = false;
};

// ---- GradMode ----
class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;
  ~AutoGradMode() { GradMode::set_enabled(prev_); }

 private:
  bool prev_;
};

struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

// ---- helpers for autograd kernels ----
// Where the gradient of t goes: its grad_fn, a fresh AccumulateGrad for a leaf requiring grad,
// or an invalid edge.
Edge gradient_edge(const Tensor& t);

template <class... Ts>
std::vector<Edge> collect_next_edges(const Ts&... ts) {
  return {gradient_edge(ts)...};
}
std::vector<Edge> collect_next_edges(const std::vector<Tensor>& ts);

template <class... Ts>
bool compute_requires_grad(const Ts&... ts) {
  return GradMode::is_enabled() && ((ts.defined() && ts.requires_grad()) || ...);
}

// Makes fn the grad_fn of a new output (its next output_nr).
void set_history(const Tensor& output, const std::shared_ptr<Node>& fn);
// After an in-place op: self's old history now feeds fn, and fn becomes self's grad_fn.
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn);
// Throws PyTorch's error for an in-place op on a leaf that requires grad (grad mode on).
void check_inplace(const Tensor& self, bool any_requires_grad = true);

// Runs the backward pass from `roots`, seeding each with its gradient (an undefined gradient
// for a one-element root means ones). Gradients accumulate into the leaves' .grad().
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots = {},
              bool retain_graph = false);

}  // namespace dscope::autograd
