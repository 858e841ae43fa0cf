// Compile time linear in a document's size (issue 17), held without a clock: the compiler's
// elementary steps (compiler/ir/work_count.h: instructions walked and visited by passes and the
// verifier, positions searched, instructions moved, nodes lowered, names and pins looked for)
// for a hostile document of 4N nodes must stay near 4 times those for N. One quadratic step
// makes them about 16 times as many, an exponential one far more, on any machine however
// loaded. The shapes are those of bench/hostile_graphs.py, which measures the seconds.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/document_json.h"
#include "compiler/graph/lower.h"
#include "compiler/graph/validate.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "compiler/passes/pipeline.h"
#include "compiler/passes/porting_warnings.h"
#include "runtime/common/error.h"

namespace loom {
namespace {

std::string num(int64_t v) { return std::to_string(v); }
std::string link(int node, const char* pin = "out") { return "\"" + num(node) + "." + pin + "\""; }

std::string document(const std::string& fields, const std::vector<std::string>& kernels,
                     const std::string& launches, const std::string& layout = "") {
  std::string text = R"({"format": "loom-graph", "version": 2, "name": "hostile", "fields": [)" +
                     fields + R"(], "kernels": [)";
  for (size_t i = 0; i < kernels.size(); ++i) text += (i ? ", " : "") + kernels[i];
  text += R"(], "pipelines": [{"name": "step", "launches": [)" + launches + "]}]";
  if (!layout.empty()) text += R"(, "layout": [)" + layout + "]";
  return text + "}";
}

std::string kernel(const std::string& name, const std::string& nodes,
                   const std::string& params = "") {
  return R"({"name": ")" + name + R"(", "params": [)" + params + R"(], "nodes": [)" + nodes + "]}";
}

std::string launch(const std::string& name, const std::string& args = "") {
  return R"({"kernel": ")" + name + R"(", "args": {)" + args + "}}";
}

std::string field(const std::string& name, const std::string& type, const std::string& shape) {
  return R"({"name": ")" + name + R"(", "type": ")" + type + R"(", "shape": )" + shape + "}";
}

std::string store(int id, const std::string& i0, const std::string& value,
                  const std::string& f = "x", const std::string& i1 = "") {
  return R"({"id": )" + num(id) + R"(, "type": "store", "inputs": {"i0": )" + i0 +
         (i1.empty() ? "" : R"(, "i1": )" + i1) + R"(, "value": )" + value +
         R"(}, "params": {"field": ")" + f + R"("}})";
}

std::string node(int id, const std::string& type, const std::string& inputs,
                 const std::string& params = "") {
  return R"({"id": )" + num(id) + R"(, "type": ")" + type + R"(", "inputs": {)" + inputs + "}" +
         (params.empty() ? "" : R"(, "params": {)" + params + "}") + "}";
}

std::string range_for(int id, int end, const std::string& body) {
  return R"({"id": )" + num(id) + R"(, "type": "range_for", "inputs": {"end0": )" + num(end) +
         R"(}, "regions": {"body": [)" + body + "]}}";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

// ---- the shapes, about n nodes each

// A serial kernel storing n constants (lower_access, offload and LLVM once inserted or searched
// per store).
std::string stores(int n) {
  std::vector<std::string> nodes;
  for (int k = 0; k < n; ++k) nodes.push_back(store(k + 1, num(k), num(k) + ".5"));
  return document(field("x", "f32", "[" + num(n) + "]"), {kernel("k", join(nodes))}, launch("k"));
}

// The same with an editor position for every node (layout checks searched each graph).
std::string laid_out(int n) {
  std::vector<std::string> nodes, positions;
  for (int k = 0; k < n; ++k) {
    nodes.push_back(store(k + 1, num(k), num(k) + ".5"));
    positions.push_back("\"" + num(k + 1) + "\": [" + num(k % 100) + ", " + num(k / 100) + "]");
  }
  return document(field("x", "f32", "[" + num(n) + "]"), {kernel("k", join(nodes))}, launch("k"),
                  R"({"graph": "k", "positions": {)" + join(positions) + "}}");
}

// One parallel loop whose body stores n elements of a row.
std::string loop_stores(int n) {
  std::vector<std::string> body;
  for (int k = 0; k < n; ++k) {
    body.push_back(node(2 * k + 2, "add", R"("a": )" + link(1, "i0") + R"(, "b": )" + num(k)));
    body.push_back(store(2 * k + 3, link(1, "i0"), link(2 * k + 2), "x", num(k)));
  }
  return document(field("x", "i32", "[4, " + num(n) + "]"),
                  {kernel("k", range_for(1, 4, join(body)))}, launch("k"));
}

// A chain of n adds from a load, in a loop.
std::string load_chain(int n) {
  std::vector<std::string> body = {node(2, "load", R"("i0": )" + link(1, "i0"), R"("field": "x")")};
  for (int k = 3; k < n + 3; ++k)
    body.push_back(node(k, "mul", R"("a": )" + link(k - 1) + R"(, "b": 1.5)"));
  body.push_back(store(n + 3, link(1, "i0"), link(n + 2)));
  return document(field("x", "f32", "[64]"), {kernel("k", range_for(1, 64, join(body)))},
                  launch("k"));
}

// n adds each reading the one before twice: 2^n paths through shared operands, the index of a
// read-modify-write in a parallel loop (porting_warnings once walked every path).
std::string dag(int n) {
  std::vector<std::string> body = {node(2, "add", R"("a": 1, "b": 2)")};
  for (int k = 3; k < n + 2; ++k)
    body.push_back(node(k, "add", R"("a": )" + link(k - 1) + R"(, "b": )" + link(k - 1)));
  body.push_back(node(n + 2, "and", R"("a": )" + link(n + 1) + R"(, "b": 63)"));
  body.push_back(node(n + 3, "load", R"("i0": )" + link(n + 2), R"("field": "x")"));
  body.push_back(node(n + 4, "add", R"("a": )" + link(n + 3) + R"(, "b": 1.0)"));
  body.push_back(store(n + 5, link(n + 2), link(n + 4)));
  return document(field("x", "f32", "[64]"), {kernel("k", range_for(1, 64, join(body)))},
                  launch("k"));
}

// n variables, n ifs each setting one of them, n stores of them.
std::string ifs(int n) {
  std::vector<std::string> nodes;
  for (int k = 0; k < n; ++k) nodes.push_back(node(k + 1, "var", "", R"("type": "f32")"));
  int id = n + 1;
  for (int k = 0; k < n; ++k, id += 4) {
    nodes.push_back(node(id, "load", R"("i0": )" + num(k), R"("field": "x")"));
    nodes.push_back(node(id + 1, "gt", R"("a": )" + link(id) + R"(, "b": 0.0)"));
    nodes.push_back(
        R"({"id": )" + num(id + 2) + R"(, "type": "if", "inputs": {"cond": )" + link(id + 1) +
        R"(}, "regions": {"then": [)" +
        node(id + 3, "set", R"("var": )" + link(k + 1, "ref") + R"(, "value": )" + link(id)) +
        R"(], "else": []}})");
  }
  for (int k = 0; k < n; ++k, id += 2) {
    nodes.push_back(node(id, "get", R"("var": )" + link(k + 1, "ref")));
    nodes.push_back(store(id + 1, num(k), link(id), "y"));
  }
  return document(
      field("x", "f32", "[" + num(n) + "]") + ", " + field("y", "f32", "[" + num(n) + "]"),
      {kernel("k", join(nodes))}, launch("k"));
}

// n variables, each a reduction of one parallel loop.
std::string reductions(int n) {
  std::vector<std::string> nodes, body;
  for (int k = 0; k < n; ++k) nodes.push_back(node(k + 2, "var", "", R"("type": "f32")"));
  int id = n + 2;
  body.push_back(node(id, "load", R"("i0": )" + link(1, "i0"), R"("field": "x")"));
  int value = id++;
  for (int k = 0; k < n; ++k, id += 3) {
    body.push_back(node(id, "get", R"("var": )" + link(k + 2, "ref")));
    body.push_back(node(id + 1, "add", R"("a": )" + link(id) + R"(, "b": )" + link(value)));
    body.push_back(
        node(id + 2, "set", R"("var": )" + link(k + 2, "ref") + R"(, "value": )" + link(id + 1)));
  }
  nodes.push_back(range_for(1, 64, join(body)));
  for (int k = 0; k < n; ++k, id += 2) {
    nodes.push_back(node(id, "get", R"("var": )" + link(k + 2, "ref")));
    nodes.push_back(store(id + 1, num(k), link(id), "y"));
  }
  return document(field("x", "f32", "[64]") + ", " + field("y", "f32", "[" + num(n) + "]"),
                  {kernel("k", join(nodes))}, launch("k"));
}

// One formula over n names, each an input pin (each pin was looked for by a scan).
std::string names(int n) {
  std::string formula, inputs;
  for (int k = 0; k < n; ++k) {
    formula += (k ? "+a" : "a") + num(k);
    inputs += (k ? ", \"a" : "\"a") + num(k) + "\": 1.0";
  }
  return document(field("x", "f32", "[1]"),
                  {kernel("k", node(1, "expr", inputs, R"("expr": ")" + formula + "\"") + ", " +
                                   store(2, "0", link(1)))},
                  launch("k"));
}

// One formula a + a + ... of n terms.
std::string sum(int n) {
  std::string formula = "a";
  for (int k = 1; k < n; ++k) formula += " + a";
  return document(field("x", "f32", "[1]"),
                  {kernel("k", node(1, "expr", R"("a": 0.5)", R"("expr": ")" + formula + "\"") +
                                   ", " + store(2, "0", link(1)))},
                  launch("k"));
}

// n kernels of one store each, all launched (kernels were found by name with a scan).
std::string kernels(int n) {
  std::vector<std::string> ks, launches;
  for (int k = 0; k < n; ++k) {
    ks.push_back(kernel("k" + num(k), store(1, num(k % 64), num(k) + ".5")));
    launches.push_back(launch("k" + num(k)));
  }
  return document(field("x", "f32", "[64]"), ks, join(launches));
}

// A kernel of n value parameters, each stored, and n fields (parameters and fields were found
// by name with a scan).
std::string params_and_fields(int n) {
  std::vector<std::string> params, args, nodes, fields;
  for (int k = 0; k < n; ++k) {
    params.push_back(R"({"name": "p)" + num(k) + R"(", "kind": "value", "type": "f32"})");
    args.push_back("\"p" + num(k) + "\": " + num(k) + ".5");
    fields.push_back(field("f" + num(k), "f32", "[1]"));
    nodes.push_back(node(2 * k + 1, "param", "", R"("name": "p)" + num(k) + "\""));
    nodes.push_back(store(2 * k + 2, "0", link(2 * k + 1), "f" + num(k)));
  }
  return document(join(fields), {kernel("k", join(nodes), join(params))}, launch("k", join(args)));
}

// One parallel loop adding into n fields (each gets per-thread copies: privatize_scatter).
std::string scatters(int n) {
  std::vector<std::string> fields, body;
  for (int k = 0; k < n; ++k) {
    fields.push_back(field("g" + num(k), "i32", "[4]"));
    body.push_back(node(k + 2, "atomic_add", R"("i0": 1, "value": )" + link(1, "i0"),
                        R"("field": "g)" + num(k) + "\""));
  }
  return document(join(fields), {kernel("k", range_for(1, 4096, join(body)))}, launch("k"));
}

// Functions f0 .. f(n-1), each calling the next, the last adding 1; the kernel stores what f0
// gives (inlining once recursed per call: 5,000 nested calls overflowed the stack, and each
// level walked what the levels below had inlined).
std::string call_chain(int n) {
  std::vector<std::string> functions;
  for (int i = 0; i < n; ++i) {
    std::string body =
        i + 1 < n
            ? node(2, "call", R"("v": "1")", R"("function": "f)" + num(i + 1) + "\"") + ", " +
                  node(3, "output", R"("r": "2.r")")
            : node(2, "add", R"("a": "1", "b": 1.0)") + ", " + node(3, "output", R"("r": "2")");
    functions.push_back(
        R"({"name": "f)" + num(i) +
        R"(", "inputs": [{"name": "v", "type": "f32"}], "outputs": [{"name": "r", "type": "f32"}], "nodes": [)" +
        node(1, "input", "", R"("name": "v")") + ", " + body + "]}");
  }
  std::string text = document(field("x", "f32", "[1]"),
                              {kernel("k", node(1, "call", R"("v": 0.5)", R"("function": "f0")") +
                                               ", " + store(2, "0", link(1, "r")))},
                              launch("k"));
  return text.substr(0, text.size() - 1) + R"(, "functions": [)" + join(functions) + "]}";
}

// What `loom check` does to a document: load and validate it (which lowers every kernel),
// then lower each kernel again for the pipeline and once more for the porting warnings.
uint64_t steps_to_check(const std::string& text) {
  uint64_t start = ir::work_count();
  graph::Document doc = graph::load_document(text, "<hostile>");
  graph::validate_document(doc);
  for (const graph::KernelDecl& k : doc.kernels) {
    passes::porting_warnings(*graph::lower_kernel(doc, k));
    std::unique_ptr<ir::Kernel> kernel = graph::lower_kernel(doc, k);
    kernel->private_copies = 8;  // as for a CPU of 8 threads
    passes::run_pipeline(*kernel, {});
  }
  return ir::work_count() - start;
}

struct Shape {
  const char* name;
  std::function<std::string(int)> make;
  int n;
};

TEST(LinearWork, HostileDocumentsTakeStepsInProportionToTheirSize) {
  const Shape shapes[] = {
      {"stores", stores, 1000},
      {"laid_out", laid_out, 1000},
      {"loop_stores", loop_stores, 250},
      {"load_chain", load_chain, 1000},
      {"dag", dag, 5},  // 2^20 paths at 4n: one step per path shows at once
      {"ifs", ifs, 300},
      {"reductions", reductions, 150},
      {"names", names, 2000},
      {"sum", sum, 5000},
      {"kernels", kernels, 200},
      {"params_and_fields", params_and_fields, 300},
      {"scatters", scatters, 200},
      {"call_chain", call_chain, 16},  // 4n = 64, the deepest nesting allowed
  };
  for (const Shape& s : shapes) {
    uint64_t small = steps_to_check(s.make(s.n));
    uint64_t big = steps_to_check(s.make(4 * s.n));
    double ratio = static_cast<double>(big) / static_cast<double>(small);
    // Linear work gives 4 (a little less where a fixed part counts), quadratic 16.
    EXPECT_LT(ratio, 5.0) << s.name << ": " << small << " steps for n = " << s.n << ", " << big
                          << " for 4n";
    EXPECT_GT(big, small) << s.name;
  }
}

// A chain of calls too deep to inline is refused (CallLimits) after steps in proportion to its
// length, however long it is.
TEST(LinearWork, ACallChainTooDeepToInlineIsRefusedInStepsInProportionToItsLength) {
  auto steps_to_refuse = [](int n) {
    uint64_t start = ir::work_count();
    graph::Document doc = graph::load_document(call_chain(n), "<hostile>");
    EXPECT_THROW(graph::validate_document(doc), Error) << n;
    return ir::work_count() - start;
  };
  uint64_t small = steps_to_refuse(1250), big = steps_to_refuse(5000);
  double ratio = static_cast<double>(big) / static_cast<double>(small);
  EXPECT_LT(ratio, 5.0) << small << " steps for 1250 nested calls, " << big << " for 5000";
  EXPECT_GT(big, small);
}

// The counter counts what it claims: a search through a block is as long as the block.
TEST(LinearWork, ASearchOfABlockCountsItsPositions) {
  ir::Block block;
  for (int i = 0; i < 100; ++i)
    block.append(std::make_unique<ir::Inst>(ir::Op::Const, Scalar::I32));
  uint64_t start = ir::work_count();
  block.index_of(block.insts.back().get());
  EXPECT_EQ(ir::work_count() - start, 100u);
}

}  // namespace
}  // namespace loom
