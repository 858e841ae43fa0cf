#include "compiler/graph/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "compiler/graph/lower.h"
#include "compiler/graph/lowerer.h"
#include "compiler/graph/node_library.h"
#include "compiler/ir/inst.h"
#include "compiler/ir/work_count.h"
#include "runtime/common/error.h"

namespace loom::graph {

namespace {

// Where a node sits: its region's node list, its position there, the region node around it.
struct NodeInfo {
  const Node* node = nullptr;
  const std::vector<Node>* siblings = nullptr;
  size_t position = 0;
  int parent = -1;  // enclosing region node id, -1 at top level
};

class GraphChecker {
 public:
  GraphChecker(const Document& doc, std::string graph, bool function)
      : doc_(doc), graph_(std::move(graph)), function_(function) {}

  [[noreturn]] void fail(int node, const std::string& pin, const std::string& msg) const {
    throw Error(Place{doc_.path, graph_, node, pin, function_}, msg);
  }

  void check(const std::vector<Node>& nodes) {
    index(nodes, -1);
    for (const auto& [id, info] : nodes_) check_node(info);
    check_links();
    check_cycles();
  }

 private:
  void index(const std::vector<Node>& nodes, int parent) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      if (n.id < 0) fail(n.id, "", "node ids must not be negative");
      if (!nodes_.emplace(n.id, NodeInfo{&n, &nodes, i, parent}).second)
        fail(n.id, "", "node id " + std::to_string(n.id) + " is used by two nodes");
      order_.push_back(n.id);
      for (const Region& r : n.regions) index(r.nodes, n.id);
    }
  }

  void check_node(const NodeInfo& info) const {
    const Node& n = *info.node;
    const NodeSpec* spec = find_node_spec(n.type);
    if (!spec) fail(n.id, "", "unknown node type '" + n.type + "'");
    if (n.version > spec->version)
      fail(n.id, "",
           "node type '" + n.type + "' version " + std::to_string(n.version) +
               " is newer than this Loom knows (" + std::to_string(spec->version) + ")");
    // load_document upgrades older nodes; one still old was built in memory at a version
    // whose pins and parameters may mean something else.
    if (n.version < spec->version)
      fail(n.id, "",
           "node type '" + n.type + "' is at version " + std::to_string(n.version) +
               " but this Loom's is " + std::to_string(spec->version) +
               "; older documents are upgraded by load_document, nodes built in code must use "
               "the current version");
    std::set<std::string> seen;
    for (const Input& in : n.inputs) {
      if (!seen.insert(in.pin).second) fail(n.id, in.pin, "input '" + in.pin + "' is given twice");
      if (!spec->any_inputs && !spec->input(in.pin))
        fail(n.id, in.pin, "node type '" + n.type + "' has no input '" + in.pin + "'");
    }
    for (const PinSpec& p : spec->inputs)
      if (p.required && !seen.count(p.name))
        fail(n.id, p.name,
             "input '" + p.name + "' of this " + n.type + " node needs a link or a value");
    for (const auto& [name, value] : n.params)
      if (!spec->param(name))
        fail(n.id, name, "node type '" + n.type + "' has no parameter '" + name + "'");
    for (const ParamSpec& p : spec->params) {
      bool given = false;
      for (const auto& [name, value] : n.params) given |= name == p.name;
      if (p.required && !given)
        fail(n.id, p.name, "this " + n.type + " node needs the parameter '" + p.name + "'");
    }
    for (const Region& r : n.regions)
      if (std::find(spec->regions.begin(), spec->regions.end(), r.name) == spec->regions.end())
        fail(n.id, r.name, "node type '" + n.type + "' has no region '" + r.name + "'");
  }

  bool effectful(const Node& n) const {
    const NodeSpec* spec = find_node_spec(n.type);
    return spec && spec->effectful;
  }

  // A node may use nodes of its own region or of enclosing regions; effectful ones only when
  // they run before it.
  void check_links() {
    for (int id : order_) {
      const NodeInfo& user = nodes_.at(id);
      for (const Input& in : user.node->inputs) {
        if (!in.linked) continue;
        auto it = nodes_.find(in.from_node);
        if (it == nodes_.end())
          fail(id, in.pin,
               "link to node " + std::to_string(in.from_node) + ", which does not exist");
        const NodeInfo& src = it->second;
        // Walk out from the user: its region chain (position of the chain member at each level).
        int level_node = id;
        bool visible = false;
        while (true) {
          const NodeInfo& at = nodes_.at(level_node);
          if (at.parent == in.from_node) {  // the enclosing region node itself: loop indices etc.
            visible = true;
            break;
          }
          if (at.siblings == src.siblings) {
            if (effectful(*src.node) && src.position >= at.position)
              fail(id, in.pin,
                   "node " + std::to_string(in.from_node) + " (" + src.node->type +
                       ") runs after this node; move it earlier in its region");
            visible = true;
            break;
          }
          if (at.parent < 0) break;
          level_node = at.parent;
        }
        if (!visible)
          fail(id, in.pin,
               "node " + std::to_string(in.from_node) +
                   " is inside another region and cannot be used here");
      }
    }
  }

  // Edges: a node depends on its link sources and a region node on everything inside it.
  void check_cycles() {
    std::unordered_map<int, std::vector<int>> deps;
    for (int id : order_) {
      const NodeInfo& info = nodes_.at(id);
      for (const Input& in : info.node->inputs) {
        if (!in.linked) continue;
        bool enclosing = false;
        for (int p = info.parent; p >= 0; p = nodes_.at(p).parent) enclosing |= p == in.from_node;
        if (!enclosing) deps[id].push_back(in.from_node);
      }
      if (info.parent >= 0) deps[info.parent].push_back(id);
    }
    std::unordered_map<int, int> state;  // 1 on the path, 2 done
    // Iterative depth-first search: graphs may hold long chains of nodes.
    std::vector<std::pair<int, size_t>> path;  // node, next dependency to look at
    for (int root : order_) {
      if (state[root]) continue;
      state[root] = 1;
      path.emplace_back(root, 0);
      while (!path.empty()) {
        auto& [id, next] = path.back();
        const std::vector<int>& ds = deps[id];
        if (next == ds.size()) {
          state[id] = 2;
          path.pop_back();
          continue;
        }
        int d = ds[next++];
        if (state[d] == 2) continue;
        if (state[d] == 1) {
          std::string text;
          auto from =
              std::find_if(path.begin(), path.end(), [&](const auto& p) { return p.first == d; });
          for (auto it = from; it != path.end(); ++it) text += std::to_string(it->first) + " -> ";
          text += std::to_string(d);
          fail(d, "", "the links form a cycle: " + text);
        }
        state[d] = 1;
        path.emplace_back(d, 0);
      }
    }
  }

  const Document& doc_;
  std::string graph_;
  bool function_;
  std::unordered_map<int, NodeInfo> nodes_;
  std::vector<int> order_;
};

void collect_calls(const std::vector<Node>& nodes, std::vector<std::pair<std::string, int>>& out) {
  for (const Node& n : nodes) {
    if (n.type == "call")
      for (const auto& [name, v] : n.params)
        if (name == "function" && v.kind == Literal::Kind::String) out.emplace_back(v.s, n.id);
    for (const Region& r : n.regions) collect_calls(r.nodes, out);
  }
}

// Calls between functions: each callee exists, no function reaches itself, and no chain of
// calls nests more than detail::kMaxCallDepth functions (what a kernel may inline). A depth-first
// walk with its own stack: documents choose how deep calls go, and validation runs on editors'
// and engines' threads, whose stacks may be small.
void check_calls(const Document& doc, const detail::FunctionIndex& fns) {
  enum class State { New, Open, Done };
  struct Visit {
    State state = State::New;
    int height = 1;                         // functions nested from here, itself included
    const FunctionDecl* deepest = nullptr;  // the callee on the longest chain
  };
  std::unordered_map<const FunctionDecl*, Visit> seen;
  struct Frame {
    const FunctionDecl* f;
    std::vector<std::pair<std::string, int>> calls;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto open = [&](const FunctionDecl& f) {
    seen[&f].state = State::Open;
    Frame frame{&f, {}, 0};
    collect_calls(f.nodes, frame.calls);
    stack.push_back(std::move(frame));
  };
  for (const FunctionDecl& root : doc.functions) {
    if (seen[&root].state != State::New) continue;
    open(root);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.calls.size()) {
        seen[top.f].state = State::Done;
        stack.pop_back();
        continue;
      }
      const auto& [callee, node] = top.calls[top.next];
      ir::count_work();  // each call is looked at twice at most: the walk is linear
      const FunctionDecl& f = *top.f;
      auto it = fns.find(callee);
      if (it == fns.end())
        throw Error(Place{doc.path, f.name, node, "function", true},
                    "unknown function '" + callee + "'");
      const FunctionDecl* g = it->second;
      Visit& v = seen[g];
      if (v.state == State::Open) {
        std::vector<std::string> chain;
        auto from =
            std::find_if(stack.begin(), stack.end(), [&](const Frame& fr) { return fr.f == g; });
        for (auto p = from; p != stack.end(); ++p) chain.push_back(p->f->name);
        chain.push_back(callee);
        throw Error(Place{doc.path, f.name, node, "function", true},
                    "function '" + callee + "' calls itself (" + detail::call_chain_text(chain) +
                        "); recursion is not supported");
      }
      if (v.state == State::New) {
        open(*g);  // this call is looked at again once g is done
        continue;
      }
      ++top.next;
      Visit& mine = seen[&f];
      if (v.height + 1 > mine.height) {
        mine.height = v.height + 1;
        mine.deepest = g;
      }
      if (mine.height > detail::kMaxCallDepth) {
        std::vector<std::string> chain;
        for (const FunctionDecl* p = &f; p; p = seen[p].deepest) chain.push_back(p->name);
        throw Error(Place{doc.path, f.name, node, "function", true},
                    "calls nest more than " + std::to_string(detail::kMaxCallDepth) +
                        " functions deep from this call (" + detail::call_chain_text(chain) +
                        "); a kernel inlines every call, and deeper nesting is refused");
      }
    }
  }
}

std::string literal_kind(const Literal& l) {
  switch (l.kind) {
    case Literal::Kind::None: return "nothing";
    case Literal::Kind::Bool: return "a bool";
    case Literal::Kind::Int: return "a whole number";
    case Literal::Kind::Float: return "a number";
    case Literal::Kind::String: return "the name '" + l.s + "'";
    case Literal::Kind::List: return "a list of " + std::to_string(l.list.size());
  }
  return "?";
}

// Checks one launch argument against its parameter; fills the template argument if any.
void check_argument(const Document& doc, const Pipeline& pipe, const KernelDecl& k,
                    const KernelParam& p, const Literal& arg, TemplateArgs& targs) {
  Place place{doc.path, k.name, -1, p.name};
  auto bad = [&](const std::string& want) {
    throw Error(place, "pipeline '" + pipe.name + "': argument '" + p.name + "' of kernel '" +
                           k.name + "' must be " + want + ", got " + literal_kind(arg));
  };
  switch (p.kind) {
    case ParamKind::Value: {
      auto t = parse_value_type(p.type);
      if (!t) return;
      if (t->is_scalar()) {
        if (t->scalar == Scalar::Bool ? arg.kind != Literal::Kind::Bool : !arg.is_number())
          bad(value_type_name(*t) == "bool" ? "a bool" : "a number (" + value_type_name(*t) + ")");
        if (is_int(t->scalar) && arg.kind == Literal::Kind::Float)
          bad("a whole number (" + value_type_name(*t) + ")");
        return;
      }
      size_t n = static_cast<size_t>(t->components());
      size_t have = 0;
      if (arg.kind == Literal::Kind::List)
        for (const Literal& x : arg.list) have += x.kind == Literal::Kind::List ? x.list.size() : 1;
      if (have != n)
        bad("a list of " + std::to_string(n) + " numbers (" + value_type_name(*t) + ")");
      return;
    }
    case ParamKind::Ndarray: {
      if (arg.kind != Literal::Kind::String) bad("the name of an ndarray");
      const NdarrayDecl* nd = nullptr;
      for (const NdarrayDecl& d : doc.ndarrays)
        if (d.name == arg.s || (d.needs_grad && arg.s == d.name + ".grad") ||
            (d.needs_dual && arg.s == d.name + ".dual"))
          nd = &d;  // an ndarray, or the adjoint or tangent of one (same type and shape)
      if (!nd) bad("the name of an ndarray");
      if (p.type.empty()) {  // open element type: the bound ndarray decides, per instantiation
        TemplateArg a;
        a.kind = TemplateArg::Kind::Ndarray;
        a.field = value_type_name(nd->elem);
        a.i = static_cast<int64_t>(nd->shape.size());
        targs.set(p.name, a);
        return;
      }
      auto t = parse_value_type(p.type);
      if ((t && nd->elem != *t) || static_cast<int>(nd->shape.size()) != p.ndim)
        throw Error(place, "pipeline '" + pipe.name + "': ndarray '" + arg.s + "' holds " +
                               value_type_name(nd->elem) + " in " +
                               std::to_string(nd->shape.size()) + " dimension(s) but parameter '" +
                               p.name + "' wants " + p.type + " in " + std::to_string(p.ndim));
      return;
    }
    case ParamKind::Texture: {
      if (arg.kind != Literal::Kind::String) bad("the name of a texture");
      const TextureDecl* tx = nullptr;
      for (const TextureDecl& d : doc.textures)
        if (d.name == arg.s) tx = &d;
      if (!tx) bad("the name of a texture");
      if (static_cast<int>(tx->size.size()) != p.ndim)
        throw Error(place, "pipeline '" + pipe.name + "': texture '" + arg.s + "' has " +
                               std::to_string(tx->size.size()) + " dimensions but parameter '" +
                               p.name + "' wants " + std::to_string(p.ndim));
      return;
    }
    case ParamKind::Argpack: {
      if (arg.kind != Literal::Kind::String) bad("the name of an argpack of type '" + p.type + "'");
      const ArgpackDecl* pack = nullptr;
      for (const ArgpackDecl& d : doc.argpacks)
        if (d.name == arg.s) pack = &d;
      if (!pack) bad("the name of an argpack of type '" + p.type + "'");
      if (pack->type != p.type)
        throw Error(place, "pipeline '" + pipe.name + "': argpack '" + arg.s + "' is of type '" +
                               pack->type + "' but parameter '" + p.name + "' wants '" + p.type +
                               "'");
      return;
    }
    case ParamKind::Template: {
      TemplateArg a;
      if (arg.kind == Literal::Kind::String) {
        bool field = false;
        for (const FieldDesc& f : doc.fields) field |= f.name == arg.s;
        if (!field) bad("a field name or a constant");
        a.kind = TemplateArg::Kind::Field;
        a.field = arg.s;
      } else if (arg.kind == Literal::Kind::Int) {
        a.kind = TemplateArg::Kind::Int;
        a.i = arg.i;
      } else if (arg.kind == Literal::Kind::Float) {
        a.kind = TemplateArg::Kind::Float;
        a.f = arg.f;
      } else if (arg.kind == Literal::Kind::Bool) {
        a.kind = TemplateArg::Kind::Bool;
        a.b = arg.b;
      } else {
        bad("a field name or a constant");
      }
      targs.set(p.name, a);
      return;
    }
  }
}

using NameSet = std::unordered_set<std::string_view>;

std::string block_local_problem(const KernelDecl& k, const NameSet& fields) {
  NameSet ndarray_params, seen;
  for (const KernelParam& p : k.params)
    if (p.kind == ParamKind::Ndarray) ndarray_params.insert(p.name);
  for (const std::string& name : k.block_local) {
    if (!fields.count(name) && !ndarray_params.count(name))
      return "block_local names '" + name +
             "', which is neither a field nor an ndarray parameter of the kernel";
    if (!seen.insert(name).second) return "block_local names '" + name + "' twice";
  }
  return "";
}

NameSet field_names(const Document& doc) {
  NameSet names;
  for (const FieldDesc& f : doc.fields) names.insert(f.name);
  return names;
}

}  // namespace

std::string block_local_problem(const Document& doc, const KernelDecl& kernel) {
  if (kernel.block_local.empty()) return "";
  return block_local_problem(kernel, field_names(doc));
}

void validate_document(const Document& doc) {
  {
    std::set<std::string> names;
    for (const FieldDesc& f : doc.fields) {
      if (!names.insert(f.name).second)
        throw Error(Place{doc.path, "", -1, f.name}, "two fields are named '" + f.name + "'");
      if (f.shape.size() > kMaxDims)
        throw Error(Place{doc.path, "", -1, f.name},
                    "field '" + f.name + "' has more than 4 dimensions (0 to 4; [] is one value)");
      std::string problem =
          shape_problem(f.shape, int64_t{size_of(f.elem.scalar)} * f.elem.components());
      if (!problem.empty())
        throw Error(Place{doc.path, "", -1, f.name}, "field '" + f.name + "': " + problem);
    }
    for (const NdarrayDecl& n : doc.ndarrays) {
      std::string problem =
          shape_problem(n.shape, int64_t{size_of(n.elem.scalar)} * n.elem.components());
      if (!problem.empty())
        throw Error(Place{doc.path, "", -1, n.name}, "ndarray '" + n.name + "': " + problem);
    }
    for (const TextureDecl& t : doc.textures) {
      std::string problem = shape_problem(t.size, 16);
      if (!problem.empty())
        throw Error(Place{doc.path, "", -1, t.name}, "texture '" + t.name + "': " + problem);
    }
  }
  if (!doc.argpack_types.empty()) {
    std::vector<ArgpackType> types = doc.argpack_types;
    try {
      layout_argpack_types(types);
    } catch (const Error& e) {
      throw Error(Place{doc.path, "", -1, ""}, e.message());
    }
  }
  for (const FunctionDecl& f : doc.functions) GraphChecker(doc, f.name, true).check(f.nodes);
  detail::FunctionIndex fns;
  for (const FunctionDecl& f : doc.functions) fns[f.name] = &f;
  check_calls(doc, fns);
  // Types inside every function, called or not: lower a call to it from a scratch kernel
  // whose parameters are the function's inputs.
  for (const FunctionDecl& f : doc.functions) {
    KernelDecl probe = function_probe(f);
    detail::Lowerer probe_lowerer(doc, probe, TemplateArgs{}, /*as_function=*/true);
    probe_lowerer.use_function_index(&fns);
    probe_lowerer.run();
  }
  std::set<std::string> kernels;
  std::optional<NameSet> fields;  // for block_local lists, made once when one is there
  for (const KernelDecl& k : doc.kernels) {
    if (!kernels.insert(k.name).second)
      throw Error(Place{doc.path, k.name, -1, ""}, "two kernels are named '" + k.name + "'");
    if (!k.block_local.empty()) {
      if (!fields) fields = field_names(doc);
      std::string why = block_local_problem(k, *fields);
      if (!why.empty()) throw Error(Place{doc.path, k.name}, why);
    }
    GraphChecker(doc, k.name, false).check(k.nodes);
  }
  // Types: lower every kernel; template kernels once per distinct launch.
  std::set<std::string> lowered;
  std::unordered_map<std::string_view, const KernelDecl*> kernel_named;
  for (const KernelDecl& d : doc.kernels) kernel_named[d.name] = &d;
  for (const Pipeline& pipe : doc.pipelines) {
    for (const Launch& launch : pipe.launches) {
      auto named = kernel_named.find(launch.kernel);
      const KernelDecl* k = named == kernel_named.end() ? nullptr : named->second;
      // "K.grad" / "K.dual": kernel K's adjoint or tangent kernel (docs/autodiff.md), which also
      // take PARAM.grad / PARAM.dual arguments (ndarrays; for .dual float values too).
      std::string twin;
      for (const char* suffix : {".grad", ".dual"}) {
        std::string_view name = launch.kernel, s = suffix;
        if (k || name.size() <= s.size() || name.substr(name.size() - s.size()) != s) continue;
        auto base = kernel_named.find(name.substr(0, name.size() - s.size()));
        if (base == kernel_named.end()) continue;
        k = base->second;
        twin = suffix;
      }
      if (!k)
        throw Error(Place{doc.path, launch.kernel, -1, ""},
                    "pipeline '" + pipe.name + "' launches unknown kernel '" + launch.kernel + "'");
      TemplateArgs targs;
      // By name, both ways: a launch gives every parameter, so this is linear in the launch.
      std::unordered_map<std::string_view, const KernelParam*> param_named;
      for (const KernelParam& kp : k->params) param_named[kp.name] = &kp;  // the last, as before
      std::unordered_set<std::string_view> given;
      for (const auto& [name, arg] : launch.args) {
        given.insert(name);
        auto named_param = param_named.find(name);
        const KernelParam* p = named_param == param_named.end() ? nullptr : named_param->second;
        if (!p && !twin.empty() && name.size() > twin.size() &&
            name.compare(name.size() - twin.size(), twin.size(), twin) == 0) {
          std::string_view of = std::string_view(name).substr(0, name.size() - twin.size());
          auto base = param_named.find(of);
          // PARAM.PATH.grad / .dual: the twin of a float ndarray inside argpack PARAM.
          const ArgpackMember* member = nullptr;
          if (size_t dot = of.find('.'); base == param_named.end() && dot != std::string::npos) {
            auto pack = param_named.find(of.substr(0, dot));
            if (pack != param_named.end() && pack->second->kind == ParamKind::Argpack) {
              int type = doc.argpack_type(pack->second->type);
              member = type < 0 ? nullptr
                                : find_member(doc.argpack_types, type,
                                              std::string(of.substr(dot + 1)), nullptr);
              if (!member || member->kind != MemberKind::Ndarray || !is_float(member->type.scalar))
                throw Error(Place{doc.path, k->name, -1, name},
                            "pipeline '" + pipe.name + "': argpack parameter '" +
                                pack->second->name + "' of kernel '" + k->name +
                                "' has no float ndarray member '" +
                                std::string(of.substr(dot + 1)) + "' to have a '" + twin.substr(1) +
                                "' twin");
            }
          }
          if (base != param_named.end() || member) {
            ParamKind kind = member ? ParamKind::Ndarray : base->second->kind;
            bool value = kind == ParamKind::Value;
            bool pack = kind == ParamKind::Argpack;
            if (kind != ParamKind::Ndarray && !((value || pack) && twin == ".dual"))
              throw Error(Place{doc.path, k->name, -1, name},
                          "pipeline '" + pipe.name + "': parameter '" + base->second->name +
                              "' of kernel '" + k->name + "' has no '" + twin.substr(1) +
                              "' twin (ndarrays have one, and float values and argpacks in "
                              "forward mode)");
            if (value ? !arg.is_number() : arg.kind != Literal::Kind::String)
              throw Error(Place{doc.path, k->name, -1, name},
                          "pipeline '" + pipe.name + "': argument '" + name + "' of '" +
                              launch.kernel + "' must be " +
                              (value  ? "a number"
                               : pack ? "the name of an argpack"
                                      : "the name of an ndarray") +
                              ", got " + literal_kind(arg));
            Place at{doc.path, k->name, -1, name};
            if (pack) {
              const ArgpackDecl* a = doc.argpack(arg.s);
              if (!a || a->type != base->second->type)
                throw Error(at, "pipeline '" + pipe.name + "': argument '" + name + "' of '" +
                                    launch.kernel + "' must be an argpack of type '" +
                                    base->second->type + "'; '" + arg.s + "' is not one");
            } else if (!value) {
              // An ndarray or the companion NAME.grad / NAME.dual of one that has it, of the
              // element type and dimensions of what it twins.
              const NdarrayDecl* nd = doc.ndarray(arg.s);
              for (const char* c : {".grad", ".dual"}) {
                std::string_view given = arg.s, suffix = c;
                if (nd || !given.ends_with(suffix)) continue;
                const NdarrayDecl* b =
                    doc.ndarray(std::string(given.substr(0, given.size() - suffix.size())));
                if (b && (suffix == ".grad" ? b->needs_grad : b->needs_dual)) nd = b;
              }
              if (!nd)
                throw Error(at, "pipeline '" + pipe.name + "': argument '" + name + "' of '" +
                                    launch.kernel + "' must name an ndarray; '" + arg.s +
                                    "' is none of the program's");
              std::string want_type = member ? value_type_name(member->type) : base->second->type;
              int want_ndim = member ? member->ndim : base->second->ndim;
              if ((!want_type.empty() && value_type_name(nd->elem) != want_type) ||
                  (want_ndim != 0 && static_cast<int>(nd->shape.size()) != want_ndim))
                throw Error(at, "pipeline '" + pipe.name + "': argument '" + name + "' of '" +
                                    launch.kernel + "' takes an ndarray of " +
                                    (want_type.empty() ? std::string("any type") : want_type) +
                                    " with " + std::to_string(want_ndim) + " dimensions; '" +
                                    arg.s + "' has " + value_type_name(nd->elem) + " with " +
                                    std::to_string(nd->shape.size()));
            }
            continue;
          }
        }
        if (!p)
          throw Error(Place{doc.path, k->name, -1, name}, "pipeline '" + pipe.name + "': kernel '" +
                                                              k->name + "' has no parameter '" +
                                                              name + "'");
        check_argument(doc, pipe, *k, *p, arg, targs);
      }
      for (const KernelParam& p : k->params) {
        if (!given.count(p.name))
          throw Error(Place{doc.path, k->name, -1, p.name},
                      "pipeline '" + pipe.name + "' launches kernel '" + k->name +
                          "' without argument '" + p.name + "'");
      }
      if (lowered.insert(k->name + "|" + targs.signature()).second) lower_kernel(doc, *k, targs);
    }
  }
  std::set<std::string> laid_out;
  GraphNodeIds ids;
  if (!doc.layout.empty()) ids = graph_node_ids(doc);
  for (const GraphLayout& g : doc.layout) {
    auto nodes = ids.find(g.graph);
    if (nodes == ids.end())
      throw Error(Place{doc.path},
                  "layout of '" + g.graph + "', but no kernel or function has that name");
    if (!laid_out.insert(g.graph).second)
      throw Error(Place{doc.path, g.graph, -1, "", !doc.kernel(g.graph)},
                  "a second layout entry for '" + g.graph + "'");
    for (const NodePosition& p : g.positions)
      if (!nodes->second.count(p.node))
        throw Error(Place{doc.path, g.graph, p.node, "", !doc.kernel(g.graph)},
                    "layout: position of node " + std::to_string(p.node) + ", but '" + g.graph +
                        "' has no node " + std::to_string(p.node));
    for (size_t i = 0; i < g.comments.size(); ++i) {
      const CommentFrame& c = g.comments[i];
      Place place{doc.path, g.graph, -1, "", !doc.kernel(g.graph)};
      std::string which = "layout: comment " + std::to_string(i) + " ('" + c.title + "')";
      if (!(c.w > 0) || !(c.h > 0) || !std::isfinite(c.x) || !std::isfinite(c.y) ||
          !std::isfinite(c.w) || !std::isfinite(c.h))
        throw Error(place, which + " needs a finite position and a positive width and height");
      bool color_ok = c.color.empty() || (c.color.size() == 7 && c.color[0] == '#');
      for (size_t k = 1; color_ok && k < c.color.size(); ++k)
        color_ok = std::isxdigit(static_cast<unsigned char>(c.color[k])) != 0;
      if (!color_ok) throw Error(place, which + ": colour '" + c.color + "' is not \"#rrggbb\"");
    }
  }
  if (!doc.view.empty()) {
    std::string key;
    std::string why = view_problem(doc, doc.view, &key);
    if (!why.empty()) throw Error(Place{doc.path}, "view." + key + ": " + why);
  }
  for (const KernelDecl& k : doc.kernels) {
    bool is_template = false;
    for (const KernelParam& p : k.params)
      is_template |=
          p.kind == ParamKind::Template || (p.kind == ParamKind::Ndarray && p.type.empty());
    if (is_template) continue;  // checked per launch above
    if (lowered.insert(k.name + "|").second) lower_kernel(doc, k);
  }
}

}  // namespace loom::graph
