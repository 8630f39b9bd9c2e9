// The autograd engine: GradMode, graph helpers, AccumulateGrad and the backward pass.
#include <algorithm>
#include <limits>
#include <queue>
#include <unordered_map>

#include "dscope/Error.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"

namespace dscope::autograd {

// ---------------------------------------------------------------- GradMode

namespace {
// Zero-initialized per thread with no TLS init code: false means "grad mode enabled".
thread_local bool grad_mode_disabled;
// Per-thread creation counter (PyTorch's sequence_nr).
thread_local uint64_t next_sequence_nr;
}  // namespace

bool GradMode::is_enabled() { return !grad_mode_disabled; }
void GradMode::set_enabled(bool enabled) { grad_mode_disabled = !enabled; }

// ---------------------------------------------------------------- Node, SavedVariable

Node::Node() : sequence_nr(next_sequence_nr++) {}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata.push_back({std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.dtype(), t.device()});
  return static_cast<uint32_t>(input_metadata.size() - 1);
}

SavedVariable::SavedVariable(const Tensor& t) : data_(t.defined() ? t.detach() : Tensor()) {
  if (t.defined()) saved_version_ = t._version();
}

Tensor SavedVariable::unpack(const Node& owner) const {
  DSCOPE_CHECK(!was_released_,
               "Trying to backward through the graph a second time (or directly access saved tensors after they have "
               "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
               "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
               "if you need to access saved tensors after calling backward.");
  if (data_.defined() && data_._version() != saved_version_)
    throw Error("one of the variables needed for gradient computation has been modified by an inplace operation: [" +
                data_.toString() + "], which is used by " + owner.name() + ", is at version " +
                std::to_string(data_._version()) + "; expected version " + std::to_string(saved_version_) + " instead.");
  return data_;
}

// ---------------------------------------------------------------- AccumulateGrad, NotImplemented

// Runs before anything else that is ready (PyTorch gives it the maximal sequence number).
AccumulateGrad::AccumulateGrad(Tensor v) : Node(std::numeric_limits<uint64_t>::max()), variable(std::move(v)) {
  add_input_metadata(variable);
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor> grads) {
  const Tensor& g = grads.at(0);
  if (!g.defined()) return {};
  const Tensor& existing = variable.grad();
  if (!existing.defined()) {
    // Own a fresh contiguous copy: the incoming gradient may be a stride-0 expand view or
    // shared with another node (PyTorch steals it only when it is safe to).
    variable.set_grad(at::_to_copy(g));
  } else {
    existing.add_(g);  // grad mode is off during backward, so in place is fine (as in PyTorch)
  }
  return {};
}

std::vector<Tensor> NotImplemented::apply(std::vector<Tensor> /*grads*/) {
  throw Error("derivative for " + op_name + " is not implemented");
}

// ---------------------------------------------------------------- helpers for kernels

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  if (const auto& fn = t.grad_fn()) return {fn, t.output_nr()};
  if (t.requires_grad()) return {std::make_shared<AccumulateGrad>(t), 0};
  return {};
}

std::vector<Edge> collect_next_edges(const std::vector<Tensor>& ts) {
  std::vector<Edge> edges;
  edges.reserve(ts.size());
  for (const auto& t : ts) edges.push_back(gradient_edge(t));
  return edges;
}

void set_history(const Tensor& output, const std::shared_ptr<Node>& fn) {
  output.set_history(fn, fn->add_input_metadata(output));
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn) { set_history(self, fn); }

void check_inplace(const Tensor& self, bool any_requires_grad) {
  if (any_requires_grad && GradMode::is_enabled() && self.is_leaf() && self.requires_grad())
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
}

// ---------------------------------------------------------------- the backward pass

namespace {

// PyTorch's validate_outputs: a gradient must match the input it flows into; a 0-d input that
// was broadcast gets the sum, a different dtype or device is converted.
Tensor validateGradient(const Node& producer, size_t index, Tensor grad, const InputMetadata& expected) {
  if (!grad.defined()) return grad;
  auto sizes = grad.sizes();
  if (!std::equal(sizes.begin(), sizes.end(), expected.shape.begin(), expected.shape.end())) {
    DSCOPE_CHECK(expected.shape.empty(), "Function " + producer.name() + " returned an invalid gradient at index " +
                                             std::to_string(index) + " - got " + grad.toString() +
                                             " but expected shape compatible with " +
                                             std::to_string(expected.shape.size()) + "-D input");
    grad = grad.sum();
  }
  if (grad.dtype() != expected.dtype || !(grad.device() == expected.device))
    grad = grad.to(expected.device, expected.dtype);
  return grad;
}

struct ReadyFirst {  // later nodes first, like PyTorch's ReadyQueue
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

// How many edges lead into each node reachable from the roots.
std::unordered_map<Node*, int> countDependencies(const std::vector<Edge>& roots) {
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_map<Node*, bool> seen;
  for (const auto& r : roots)
    if (r.is_valid() && !seen[r.function.get()]) {
      seen[r.function.get()] = true;
      stack.push_back(r.function.get());
    }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->next_edges) {
      if (!e.is_valid()) continue;
      ++deps[e.function.get()];
      if (!seen[e.function.get()]) {
        seen[e.function.get()] = true;
        stack.push_back(e.function.get());
      }
    }
  }
  return deps;
}

void runBackward(const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads, bool retain_graph) {
  NoGradGuard no_grad;  // gradients are computed with at:: ops and build no graph (no create_graph)
  auto deps = countDependencies(roots);
  // Keeps every node alive while the pass runs (edges own them, but a root may be the only owner).
  std::unordered_map<Node*, std::shared_ptr<Node>> owners;
  std::unordered_map<Node*, std::vector<Tensor>> buffers;  // gradients waiting for each node

  auto accumulate = [&](const Edge& e, Tensor grad) {
    Node* n = e.function.get();
    owners.emplace(n, e.function);
    auto& buf = buffers[n];
    buf.resize(std::max(buf.size(), n->num_inputs()));
    Tensor& slot = buf.at(e.input_nr);
    slot = slot.defined() ? at::add(slot, grad) : grad;
  };

  std::priority_queue<Node*, std::vector<Node*>, ReadyFirst> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i].is_valid()) continue;
    accumulate(roots[i], root_grads[i]);
    if (deps[roots[i].function.get()] == 0) ready.push(roots[i].function.get());
  }

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    std::vector<Tensor> inputs = std::move(buffers[node]);
    buffers.erase(node);
    bool any_grad = std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.defined(); });
    std::vector<Tensor> outputs;
    if (any_grad) outputs = node->apply(std::move(inputs));
    if (!retain_graph) node->release_variables();

    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.is_valid()) continue;
      if (i < outputs.size() && outputs[i].defined())
        accumulate(e, validateGradient(*node, i, outputs[i], e.function->input_metadata.at(e.input_nr)));
      if (--deps[e.function.get()] == 0) ready.push(e.function.get());
    }
  }
}

}  // namespace

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph) {
  std::vector<Edge> edges;
  std::vector<Tensor> grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = roots[i];
    DSCOPE_CHECK(root.requires_grad(), "element " + std::to_string(i) +
                                           " of tensors does not require grad and does not have a grad_fn");
    Tensor grad = i < grad_roots.size() ? grad_roots[i] : Tensor();
    if (!grad.defined()) {
      DSCOPE_CHECK(root.numel() == 1, "grad can be implicitly created only for scalar outputs");
      grad = at::ones(root.sizes(), TensorOptions(root.dtype()).device(root.device()));
    }
    edges.push_back(gradient_edge(root));
    grads.push_back(grad);
  }
  runBackward(edges, grads, retain_graph);
}

}  // namespace dscope::autograd

namespace dscope {
void Tensor::backward(const Tensor& gradient) const { autograd::backward({*this}, {gradient}); }
}  // namespace dscope
