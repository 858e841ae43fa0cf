// Every node whose op has a derivative rule (compiler/ir/ops.def), through the tape on this
// backend (the suite runs on the CPU and on Vulkan: e2e_test.vulkan): y[i] = op(x0[i], x1[i],
// ...) in f64 on random inputs where the op is smooth, and x_j.grad against central
// differences of y computed on the CPU in f64. The op table, not a list kept here, says
// which nodes these are.
#include <cmath>

#include "compiler/graph/document_json.h"
#include "compiler/graph/node_library.h"
#include "compiler/ir/op.h"
#include "engine_plugin/include/loom/tape.h"
#include "tests/e2e/e2e_util.h"
#include "tests/support/derivative_inputs.h"

using namespace loom;
using namespace loom::test;

namespace {

constexpr int64_t kN = 16;

// The document: fields x0.. (f64 [16], needs_grad) and y; kernel `k` stores y[i] = the node.
graph::Document document(ir::Op op, int arity) {
  static const char* pins[] = {"a", "b", "c"};
  std::string fields, loads, inputs;
  for (int j = 0; j < arity; ++j) {
    std::string x = "x" + std::to_string(j), id = std::to_string(2 + j);
    fields += R"({"name": ")" + x + R"(", "type": "f64", "shape": [16], "needs_grad": true},)";
    loads += R"({"id": )" + id +
             R"(, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": ")" + x + R"("}},)";
    inputs += std::string(j ? ", " : "") + "\"" + pins[j] + "\": \"" + id + "\"";
  }
  std::string text = R"({"format": "loom-graph", "version": 2, "name": "rule", "fields": [)" +
                     fields +
                     R"({"name": "y", "type": "f64", "shape": [16], "needs_grad": true}],
      "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "range_for", "inputs": {"end0": 16},
      "regions": {"body": [)" +
                     loads + R"({"id": 9, "type": ")" + std::string(ir::op_name(op)) +
                     R"(", "inputs": {)" + inputs + R"(}},
      {"id": 10, "type": "store", "inputs": {"i0": "1.i0", "value": "9"}, "params": {"field": "y"}}
      ]}}]}]})";
  return graph::load_document(text, "rule_" + std::string(ir::op_name(op)));
}

void set(Program& p, const std::string& name, const std::vector<double>& v) {
  p.write_array(name, v.data(), v.size() * sizeof(double));
}

std::vector<double> get(Program& p, const std::string& name) {
  ArrayView a = p.array(name);
  std::vector<double> v(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) v[static_cast<size_t>(i)] = element<double>(a, i);
  return v;
}

}  // namespace

TEST(DerivativeRules, EveryDifferentiableNodeMatchesCentralDifferences) {
  int checked = 0;
  for (int o = 0; o < ir::kOpCount; ++o) {
    auto op = static_cast<ir::Op>(o);
    const ir::OpInfo& info = ir::op_info(op);
    // Select and Cast have nodes of other shapes (a condition; a type): the interpreter
    // test checks their rules.
    if (info.gradient != ir::Differentiable::Yes || op == ir::Op::Select || op == ir::Op::Cast)
      continue;
    if (!graph::find_node_spec(ir::op_name(op))) continue;
    SCOPED_TRACE(std::string(ir::op_name(op)));
    int arity = info.arity;
    std::vector<std::vector<double>> x = derivative_inputs(op, arity, kN, 100 + o);
    Program p(no_cache());
    p.load(document(op, arity));
    for (int j = 0; j < arity; ++j) set(p, "x" + std::to_string(j), x[static_cast<size_t>(j)]);
    Tape tape(p, {.loss = "y"});  // d sum(y) / d x_j[i] = d op / d operand j at element i
    tape.launch("k");
    tape.backward();
    // Central differences on the CPU in f64, all elements at once (y[i] reads only x_j[i]).
    ProgramOptions cpu = no_cache();
    cpu.backend = Backend::Cpu;
    Program f(cpu);
    f.load(document(op, arity));
    auto y_at = [&](int j, double h) {
      for (int k = 0; k < arity; ++k) {
        std::vector<double> v = x[static_cast<size_t>(k)];
        if (k == j)
          for (double& e : v) e += h;
        set(f, "x" + std::to_string(k), v);
      }
      f.launch("k");
      return get(f, "y");
    };
    // Vulkan computes f64 transcendental functions at f32 precision (docs/vulkan.md).
    const double tolerance = p.backend() == Backend::Vulkan ? 2e-5 : 1e-6;
    for (int j = 0; j < arity; ++j) {
      const double h = 1e-5;
      std::vector<double> plus = y_at(j, h), minus = y_at(j, -h);
      std::vector<double> g = get(p, "x" + std::to_string(j) + ".grad");
      for (int64_t i = 0; i < kN; ++i) {
        auto e = static_cast<size_t>(i);
        double fd = (plus[e] - minus[e]) / (2 * h);
        EXPECT_NEAR(g[e], fd, tolerance * std::max(1.0, std::abs(fd)))
            << "operand " << j << ", x = " << x[static_cast<size_t>(j)][e];
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}
