// Function calls: a call node inlines its function's graph, within two limits that keep a
// hostile document from exhausting the stack or the time of whoever lowers it.
#include <algorithm>

#include "compiler/graph/lowerer.h"
#include "runtime/common/error.h"

namespace loom::graph::detail {

namespace {

// "a -> b -> c", at most `keep` names from each end so a long chain gives a short message.
std::string chain_text(const std::vector<std::string>& names, size_t keep = 3) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names.size() > 2 * keep && i == keep) {
      s += " -> ... (" + std::to_string(names.size() - 2 * keep) + " more)";
      i = names.size() - keep - 1;
      continue;
    }
    s += (i ? " -> " : "") + names[i];
  }
  return s;
}

}  // namespace

std::string call_chain_text(const std::vector<std::string>& names) { return chain_text(names); }

const FunctionDecl* Lowerer::find_function(const std::string& name) {
  if (!function_index_) {
    // The last function of a name wins, as validation sees them.
    for (const FunctionDecl& f : doc_.functions) own_function_index_[f.name] = &f;
    function_index_ = &own_function_index_;
  }
  auto it = function_index_->find(name);
  return it == function_index_->end() ? nullptr : it->second;
}

Outs Lowerer::node_call() {
  std::string name = param_string("function");
  const FunctionDecl* fn = find_function(name);
  if (!fn) fail_here("function", "unknown function '" + name + "'");
  if (std::find(calls_.begin(), calls_.end(), name) != calls_.end()) {
    std::vector<std::string> chain(calls_);
    chain.push_back(name);
    fail_here("function", "function '" + name + "' calls itself (" + chain_text(chain) +
                              "); recursion is not supported");
  }
  if (calls_.size() >= static_cast<size_t>(kMaxCallDepth)) {
    std::vector<std::string> chain(calls_);
    chain.push_back(name);
    fail_here("function", "kernel '" + decl_.name + "': calls nest more than " +
                              std::to_string(kMaxCallDepth) + " functions deep (" +
                              chain_text(chain) + ")");
  }
  GraphInst g;
  g.name = fn->name;
  g.is_function = true;
  g.fn = fn;
  g.stamp = graph_->stamp >= 0 ? graph_->stamp : node_->id;
  for (const Input& in : node_->inputs) {
    bool known = false;
    for (const FunctionPort& p : fn->inputs) known |= p.name == in.pin;
    if (!known) fail_here(in.pin, "function '" + name + "' has no input '" + in.pin + "'");
  }
  for (const FunctionPort& p : fn->inputs) {
    auto t = parse_value_type(p.type);
    if (!t)
      fail(-1, p.name,
           "function '" + name + "': input '" + p.name + "' has unknown type '" + p.type + "'");
    g.inputs.emplace_back(p.name, convert(input(p.name), *t, p.name));
  }
  Outs outs;
  // A scratch kernel checking one function (validation, the editor's types) checks that
  // function's calls against the callees' declared ports only: values cross a call converted
  // to the declared types, so a callee's body adds nothing to its caller's checks, and every
  // function has its own scratch kernel. Inlining here made validation quadratic in the depth
  // of call chains.
  if (as_function_ && graph_->is_function) {
    for (const FunctionPort& p : fn->outputs) {
      auto t = parse_value_type(p.type);
      if (!t)
        fail_here(p.name, "function '" + name + "': output '" + p.name + "' has unknown type '" +
                              p.type + "'");
      // A value the checks cannot see through, like the function's own inputs here.
      std::vector<Inst*> c;
      c.reserve(static_cast<size_t>(t->components()));
      for (int i = 0; i < t->components(); ++i) c.push_back(B().local_load(B().alloca_(t->scalar)));
      outs.emplace_back(p.name, value(*t, std::move(c)));
    }
    return outs;
  }
  collect_ids(fn->nodes, g.all);
  inlined_nodes_ += static_cast<int64_t>(g.all.size());
  if (inlined_nodes_ > kMaxInlinedNodes)
    fail_here("function", "kernel '" + decl_.name + "': its calls inline more than " +
                              std::to_string(kMaxInlinedNodes) +
                              " nodes of functions (the limit is reached calling '" + name +
                              "'); call chains that branch multiply their functions' nodes");
  GraphInst* saved_graph = graph_;
  Scope* saved_scope = cur_;
  const Node* saved_node = node_;
  std::vector<int> saved_stack;
  saved_stack.swap(stack_);
  calls_.push_back(name);
  Scope root;
  root.graph = &g;
  root.cursor = cur_->cursor;
  graph_ = &g;
  node_ = nullptr;
  init_scope(root, fn->nodes);
  cur_ = &root;
  lower_region(root);
  calls_.pop_back();
  graph_ = saved_graph;
  cur_ = saved_scope;
  node_ = saved_node;
  stack_.swap(saved_stack);
  for (const FunctionPort& p : fn->outputs) {
    bool found = false;
    for (auto& [n, v] : g.outputs)
      if (n == p.name) {
        outs.emplace_back(n, v);
        found = true;
      }
    if (!found)
      fail_here(p.name, "function '" + name + "' never sets its output '" + p.name +
                            "' (add an output node)");
  }
  return outs;
}

}  // namespace loom::graph::detail
