#include "editor/model/edits.h"

#include <algorithm>

#include "compiler/graph/document_json.h"
#include "compiler/graph/node_library.h"
#include "editor/model/graph_access.h"

namespace loom::editor {

using graph::Document;
using graph::Node;

namespace {

size_t clamp_index(size_t index, size_t size) { return std::min(index, size); }

// ---------------------------------------------------------------- nodes

class NodePresence : public Command {
 public:
  NodePresence(GraphRef g, RegionRef r, size_t index, Node node, bool insert)
      : g_(std::move(g)),
        r_(std::move(r)),
        index_(index),
        node_(std::move(node)),
        insert_(insert) {}
  void apply(Document& doc) override { insert_ ? put(doc) : take(doc); }
  void revert(Document& doc) override { insert_ ? take(doc) : put(doc); }

 private:
  void put(Document& doc) {
    created_region_ = !r_.top() && !region_nodes(doc, g_, r_);
    std::vector<Node>* list = region_nodes(doc, g_, r_, /*create=*/true);
    if (!list) return;
    list->insert(list->begin() + static_cast<std::ptrdiff_t>(clamp_index(index_, list->size())),
                 node_);
  }
  void take(Document& doc) {
    std::vector<Node>* list = region_nodes(doc, g_, r_, false);
    if (!list) return;
    auto it =
        std::find_if(list->begin(), list->end(), [&](const Node& n) { return n.id == node_.id; });
    if (it == list->end()) return;
    node_ = *it;  // what redo puts back, should anything have changed inside since
    list->erase(it);
    if (!created_region_) return;
    if (auto owner = find_node_slot(doc, g_, r_.node)) {
      auto& regions = owner->node().regions;
      regions.erase(std::remove_if(regions.begin(), regions.end(),
                                   [&](const graph::Region& x) {
                                     return x.name == r_.region && x.nodes.empty();
                                   }),
                    regions.end());
    }
  }

  GraphRef g_;
  RegionRef r_;
  size_t index_;
  Node node_;
  bool insert_;
  bool created_region_ = false;
};

// ---------------------------------------------------------------- inputs and params

// Where a new entry goes among the existing ones: in the order the node type lists them
// (inputs "a" before "b"), at the end when the type does not list it.
template <typename Entries, typename NameOf>
size_t ordered_slot(const Entries& entries, const std::vector<std::string>& order,
                    const std::string& name, NameOf name_of) {
  auto rank = [&](const std::string& n) {
    auto it = std::find(order.begin(), order.end(), n);
    return it == order.end() ? order.size() : static_cast<size_t>(it - order.begin());
  };
  size_t mine = rank(name);
  if (mine == order.size()) return entries.size();
  size_t at = 0;
  for (size_t i = 0; i < entries.size(); ++i)
    if (rank(name_of(entries[i])) < mine) at = i + 1;
  return at;
}

// One named entry of a vector (inputs by pin, params by name): set, replaced or removed.
template <typename Entry, typename Access>
class NamedEntry : public Command {
 public:
  NamedEntry(GraphRef g, int node, std::string name, std::optional<Entry> before,
             size_t before_index, std::optional<Entry> after, size_t insert_index,
             bool logic = true)
      : g_(std::move(g)),
        node_(node),
        name_(std::move(name)),
        before_(std::move(before)),
        before_index_(before_index),
        after_(std::move(after)),
        insert_index_(insert_index),
        logic_(logic) {}

  void apply(Document& doc) override { set(doc, after_, before_ ? before_index_ : insert_index_); }
  void revert(Document& doc) override { set(doc, before_, before_index_); }
  bool logic() const override { return logic_; }

 private:
  void set(Document& doc, const std::optional<Entry>& value, size_t index) {
    auto slot = find_node_slot(doc, g_, node_);
    if (!slot) return;
    auto& entries = Access::entries(slot->node());
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const auto& e) { return Access::name(e) == name_; });
    if (!value) {
      if (it != entries.end()) entries.erase(it);
      return;
    }
    if (it != entries.end()) {
      *it = Access::make(name_, *value);
      return;
    }
    entries.insert(
        entries.begin() + static_cast<std::ptrdiff_t>(clamp_index(index, entries.size())),
        Access::make(name_, *value));
  }

  GraphRef g_;
  int node_;
  std::string name_;
  std::optional<Entry> before_;
  size_t before_index_;
  std::optional<Entry> after_;
  size_t insert_index_;
  bool logic_;
};

struct InputAccess {
  static std::vector<graph::Input>& entries(Node& n) { return n.inputs; }
  static const std::string& name(const graph::Input& i) { return i.pin; }
  static graph::Input make(const std::string& pin, graph::Input i) {
    i.pin = pin;
    return i;
  }
};

struct ParamAccess {
  using Pair = std::pair<std::string, graph::Literal>;
  static std::vector<Pair>& entries(Node& n) { return n.params; }
  static const std::string& name(const Pair& p) { return p.first; }
  static Pair make(const std::string& name, graph::Literal l) { return {name, std::move(l)}; }
};

// ---------------------------------------------------------------- layout

// Creates the layout entry of `graph` on apply when there is none, and removes it on revert
// (then it is empty again: later edits were reverted first).
graph::GraphLayout& ensure_layout(Document& doc, const std::string& graph, bool& created) {
  created = false;
  if (graph::GraphLayout* l = find_layout(doc, graph)) return *l;
  created = true;
  doc.layout.push_back(graph::GraphLayout{graph, {}, {}});
  return doc.layout.back();
}

void drop_layout_if_created(Document& doc, const std::string& graph, bool created) {
  if (!created) return;
  auto it = std::find_if(doc.layout.begin(), doc.layout.end(),
                         [&](const graph::GraphLayout& l) { return l.graph == graph; });
  if (it != doc.layout.end() && it->positions.empty() && it->comments.empty() &&
      it->collapsed.empty())
    doc.layout.erase(it);
}

class PositionEdit : public Command {
 public:
  PositionEdit(std::string graph, int node, std::optional<Vec2> before, size_t before_index,
               std::optional<Vec2> after)
      : graph_(std::move(graph)),
        node_(node),
        before_(before),
        before_index_(before_index),
        after_(after) {}
  void apply(Document& doc) override {
    graph::GraphLayout& l = ensure_layout(doc, graph_, created_);
    set(l, after_, before_ ? before_index_ : l.positions.size());
  }
  void revert(Document& doc) override {
    graph::GraphLayout* l = find_layout(doc, graph_);
    if (!l) return;
    set(*l, before_, before_index_);
    drop_layout_if_created(doc, graph_, created_);
  }
  bool logic() const override { return false; }

 private:
  void set(graph::GraphLayout& l, const std::optional<Vec2>& v, size_t index) {
    auto it = std::find_if(l.positions.begin(), l.positions.end(),
                           [&](const graph::NodePosition& p) { return p.node == node_; });
    if (!v) {
      if (it != l.positions.end()) l.positions.erase(it);
      return;
    }
    if (it != l.positions.end()) {
      it->x = v->x;
      it->y = v->y;
      return;
    }
    l.positions.insert(
        l.positions.begin() + static_cast<std::ptrdiff_t>(clamp_index(index, l.positions.size())),
        graph::NodePosition{node_, v->x, v->y});
  }

  std::string graph_;
  int node_;
  std::optional<Vec2> before_;
  size_t before_index_;
  std::optional<Vec2> after_;
  bool created_ = false;
};

// Collapse is a set kept ascending (the saved order), so the index a node goes back to is
// where it sorts: reverting restores the same bytes.
class CollapseEdit : public Command {
 public:
  CollapseEdit(std::string graph, int node, bool collapsed)
      : graph_(std::move(graph)), node_(node), collapsed_(collapsed) {}
  void apply(Document& doc) override {
    graph::GraphLayout& l = ensure_layout(doc, graph_, created_);
    set(l, collapsed_);
  }
  void revert(Document& doc) override {
    graph::GraphLayout* l = find_layout(doc, graph_);
    if (!l) return;
    set(*l, !collapsed_);
    drop_layout_if_created(doc, graph_, created_);
  }
  bool logic() const override { return false; }

 private:
  void set(graph::GraphLayout& l, bool on) {
    auto it = std::lower_bound(l.collapsed.begin(), l.collapsed.end(), node_);
    bool present = it != l.collapsed.end() && *it == node_;
    if (on && !present) l.collapsed.insert(it, node_);
    if (!on && present) l.collapsed.erase(it);
  }

  std::string graph_;
  int node_;
  bool collapsed_;
  bool created_ = false;
};

class LayoutChangeCommand : public Command {
 public:
  LayoutChangeCommand(LayoutChange before, LayoutChange after)
      : before_(std::move(before)), after_(std::move(after)) {}
  void apply(Document& doc) override { set(doc, after_); }
  void revert(Document& doc) override { set(doc, before_); }
  bool logic() const override { return false; }
  bool merge(const Command& next) override {
    const auto* n = dynamic_cast<const LayoutChangeCommand*>(&next);
    if (!n || n->after_.graph != after_.graph || n->after_.nodes.size() != after_.nodes.size() ||
        n->after_.comments.size() != after_.comments.size())
      return false;
    for (size_t i = 0; i < after_.nodes.size(); ++i)
      if (n->after_.nodes[i].first != after_.nodes[i].first) return false;
    for (size_t i = 0; i < after_.comments.size(); ++i)
      if (n->after_.comments[i].first != after_.comments[i].first) return false;
    after_ = n->after_;
    return true;
  }

 private:
  static void set(Document& doc, const LayoutChange& c) {
    graph::GraphLayout* l = find_layout(doc, c.graph);
    if (!l) return;
    for (const auto& [id, v] : c.nodes)
      for (graph::NodePosition& p : l->positions)
        if (p.node == id) {
          p.x = v.x;
          p.y = v.y;
        }
    for (const auto& [index, frame] : c.comments)
      if (index < l->comments.size()) l->comments[index] = frame;
  }

  LayoutChange before_, after_;
};

class CommentPresence : public Command {
 public:
  CommentPresence(std::string graph, size_t index, graph::CommentFrame frame, bool insert)
      : graph_(std::move(graph)), index_(index), frame_(std::move(frame)), insert_(insert) {}
  void apply(Document& doc) override { insert_ ? put(doc) : take(doc); }
  void revert(Document& doc) override { insert_ ? take(doc) : put(doc); }
  bool logic() const override { return false; }

 private:
  void put(Document& doc) {
    graph::GraphLayout& l = ensure_layout(doc, graph_, created_);
    l.comments.insert(
        l.comments.begin() + static_cast<std::ptrdiff_t>(clamp_index(index_, l.comments.size())),
        frame_);
  }
  void take(Document& doc) {
    graph::GraphLayout* l = find_layout(doc, graph_);
    if (!l || index_ >= l->comments.size()) return;
    frame_ = l->comments[index_];
    l->comments.erase(l->comments.begin() + static_cast<std::ptrdiff_t>(index_));
    drop_layout_if_created(doc, graph_, created_);
  }

  std::string graph_;
  size_t index_;
  graph::CommentFrame frame_;
  bool insert_;
  bool created_ = false;
};

class LayoutPresence : public Command {
 public:
  LayoutPresence(size_t index, graph::GraphLayout entry)
      : index_(index), entry_(std::move(entry)) {}
  void apply(Document& doc) override {
    auto it = std::find_if(doc.layout.begin(), doc.layout.end(),
                           [&](const graph::GraphLayout& l) { return l.graph == entry_.graph; });
    if (it == doc.layout.end()) return;
    entry_ = *it;
    doc.layout.erase(it);
  }
  void revert(Document& doc) override {
    doc.layout.insert(
        doc.layout.begin() + static_cast<std::ptrdiff_t>(clamp_index(index_, doc.layout.size())),
        entry_);
  }
  bool logic() const override { return false; }

 private:
  size_t index_;
  graph::GraphLayout entry_;
};

// Keeps both versions. A logic change only when the program differs (a view or layout
// change is not); successive swaps in one group (a value dragged) merge into one step.
class DocumentSwap : public Command {
 public:
  DocumentSwap(Document before, Document after)
      : before_(std::move(before)), after_(std::move(after)) {
    logic_ = graph::program_key(before_) != graph::program_key(after_);
  }
  void apply(Document& doc) override { doc = after_; }
  void revert(Document& doc) override { doc = before_; }
  bool logic() const override { return logic_; }
  bool merge(const Command& next) override {
    const auto* swap = dynamic_cast<const DocumentSwap*>(&next);
    if (!swap) return false;
    after_ = swap->after_;
    logic_ = graph::program_key(before_) != graph::program_key(after_);
    return true;
  }

 private:
  Document before_, after_;
  bool logic_ = true;
};

// ---------------------------------------------------------------- functions

class FunctionPresence : public Command {
 public:
  FunctionPresence(size_t index, graph::FunctionDecl f, bool insert)
      : index_(index), f_(std::move(f)), insert_(insert) {}
  void apply(Document& doc) override { insert_ ? put(doc) : take(doc); }
  void revert(Document& doc) override { insert_ ? take(doc) : put(doc); }

 private:
  void put(Document& doc) {
    doc.functions.insert(doc.functions.begin() +
                             static_cast<std::ptrdiff_t>(clamp_index(index_, doc.functions.size())),
                         f_);
  }
  void take(Document& doc) {
    auto it = std::find_if(doc.functions.begin(), doc.functions.end(),
                           [&](const graph::FunctionDecl& f) { return f.name == f_.name; });
    if (it == doc.functions.end()) return;
    f_ = *it;
    doc.functions.erase(it);
  }

  size_t index_;
  graph::FunctionDecl f_;
  bool insert_;
};

class Rename : public Command {
 public:
  Rename(std::string from, std::string to, bool layout)
      : from_(std::move(from)), to_(std::move(to)), layout_(layout) {}
  void apply(Document& doc) override { rename(doc, from_, to_); }
  void revert(Document& doc) override { rename(doc, to_, from_); }
  bool logic() const override { return !layout_; }

 private:
  void rename(Document& doc, const std::string& a, const std::string& b) const {
    if (layout_) {
      if (graph::GraphLayout* l = find_layout(doc, a)) l->graph = b;
      return;
    }
    for (graph::FunctionDecl& f : doc.functions)
      if (f.name == a) f.name = b;
  }

  std::string from_, to_;
  bool layout_;
};

class FunctionPorts : public Command {
 public:
  using Ports = std::vector<graph::FunctionPort>;
  FunctionPorts(std::string name, Ports in0, Ports out0, Ports in1, Ports out1)
      : name_(std::move(name)),
        in0_(std::move(in0)),
        out0_(std::move(out0)),
        in1_(std::move(in1)),
        out1_(std::move(out1)) {}
  void apply(Document& doc) override { set(doc, in1_, out1_); }
  void revert(Document& doc) override { set(doc, in0_, out0_); }

 private:
  void set(Document& doc, const Ports& in, const Ports& out) const {
    for (graph::FunctionDecl& f : doc.functions)
      if (f.name == name_) {
        f.inputs = in;
        f.outputs = out;
      }
  }
  std::string name_;
  Ports in0_, out0_, in1_, out1_;
};

}  // namespace

std::unique_ptr<Command> insert_node(const GraphRef& g, const RegionRef& r, size_t index,
                                     Node node) {
  return std::make_unique<NodePresence>(g, r, index, std::move(node), true);
}

std::unique_ptr<Command> erase_node(const Document& doc, const GraphRef& g, int id) {
  auto slot = find_node_slot(const_cast<Document&>(doc), g, id);
  if (!slot) return nullptr;
  return std::make_unique<NodePresence>(g, slot->region, slot->index, slot->node(), false);
}

std::unique_ptr<Command> set_input(const Document& doc, const GraphRef& g, int node,
                                   const std::string& pin, std::optional<graph::Input> value) {
  const Node* n = find_node(doc, g, node);
  if (!n) return nullptr;
  std::optional<graph::Input> before;
  size_t before_index = 0;
  for (size_t i = 0; i < n->inputs.size(); ++i)
    if (n->inputs[i].pin == pin) {
      before = n->inputs[i];
      before_index = i;
    }
  std::vector<std::string> order;
  if (const graph::NodeSpec* spec = graph::find_node_spec(n->type))
    for (const graph::PinSpec& p : spec->inputs) order.push_back(p.name);
  size_t insert_index =
      ordered_slot(n->inputs, order, pin, [](const graph::Input& i) { return i.pin; });
  return std::make_unique<NamedEntry<graph::Input, InputAccess>>(g, node, pin, before, before_index,
                                                                 std::move(value), insert_index);
}

std::unique_ptr<Command> set_param(const Document& doc, const GraphRef& g, int node,
                                   const std::string& name, std::optional<graph::Literal> value) {
  const Node* n = find_node(doc, g, node);
  if (!n) return nullptr;
  std::optional<graph::Literal> before;
  size_t before_index = 0;
  for (size_t i = 0; i < n->params.size(); ++i)
    if (n->params[i].first == name) {
      before = n->params[i].second;
      before_index = i;
    }
  std::vector<std::string> order;
  if (const graph::NodeSpec* spec = graph::find_node_spec(n->type))
    for (const graph::ParamSpec& p : spec->params) order.push_back(p.name);
  size_t insert_index =
      ordered_slot(n->params, order, name, [](const ParamAccess::Pair& p) { return p.first; });
  return std::make_unique<NamedEntry<graph::Literal, ParamAccess>>(
      g, node, name, before, before_index, std::move(value), insert_index);
}

std::unique_ptr<Command> set_position(const Document& doc, const std::string& graph, int node,
                                      std::optional<Vec2> value) {
  std::optional<Vec2> before;
  size_t before_index = 0;
  if (const graph::GraphLayout* l = find_layout(doc, graph))
    for (size_t i = 0; i < l->positions.size(); ++i)
      if (l->positions[i].node == node) {
        before = Vec2{l->positions[i].x, l->positions[i].y};
        before_index = i;
      }
  return std::make_unique<PositionEdit>(graph, node, before, before_index, value);
}

std::unique_ptr<Command> set_collapsed(const Document& doc, const std::string& graph, int node,
                                       bool collapsed) {
  const graph::GraphLayout* l = find_layout(doc, graph);
  bool now = l && std::binary_search(l->collapsed.begin(), l->collapsed.end(), node);
  if (now == collapsed) return nullptr;
  return std::make_unique<CollapseEdit>(graph, node, collapsed);
}

std::unique_ptr<Command> change_layout(const Document& doc, const LayoutChange& change) {
  LayoutChange before{change.graph, {}, {}};
  LayoutChange after{change.graph, {}, {}};
  const graph::GraphLayout* l = find_layout(doc, change.graph);
  if (!l) return nullptr;
  for (const auto& [id, v] : change.nodes)
    for (const graph::NodePosition& p : l->positions)
      if (p.node == id) {
        before.nodes.emplace_back(id, Vec2{p.x, p.y});
        after.nodes.emplace_back(id, v);
      }
  for (const auto& [index, frame] : change.comments)
    if (index < l->comments.size()) {
      before.comments.emplace_back(index, l->comments[index]);
      after.comments.emplace_back(index, frame);
    }
  return std::make_unique<LayoutChangeCommand>(std::move(before), std::move(after));
}

std::unique_ptr<Command> insert_comment(const std::string& graph, size_t index,
                                        graph::CommentFrame frame) {
  return std::make_unique<CommentPresence>(graph, index, std::move(frame), true);
}

std::unique_ptr<Command> erase_comment(const Document& doc, const std::string& graph,
                                       size_t index) {
  const graph::GraphLayout* l = find_layout(doc, graph);
  if (!l || index >= l->comments.size()) return nullptr;
  return std::make_unique<CommentPresence>(graph, index, l->comments[index], false);
}

std::unique_ptr<Command> swap_document(const Document& current, Document next) {
  return std::make_unique<DocumentSwap>(current, std::move(next));
}

std::unique_ptr<Command> insert_function(size_t index, graph::FunctionDecl f) {
  return std::make_unique<FunctionPresence>(index, std::move(f), true);
}

std::unique_ptr<Command> erase_function(const Document& doc, const std::string& name) {
  for (size_t i = 0; i < doc.functions.size(); ++i)
    if (doc.functions[i].name == name)
      return std::make_unique<FunctionPresence>(i, doc.functions[i], false);
  return nullptr;
}

std::unique_ptr<Command> rename_function(const std::string& from, const std::string& to) {
  return std::make_unique<Rename>(from, to, false);
}

std::unique_ptr<Command> rename_layout(const std::string& from, const std::string& to) {
  return std::make_unique<Rename>(from, to, true);
}

std::unique_ptr<Command> erase_layout(const Document& doc, const std::string& graph) {
  for (size_t i = 0; i < doc.layout.size(); ++i)
    if (doc.layout[i].graph == graph) return std::make_unique<LayoutPresence>(i, doc.layout[i]);
  return nullptr;
}

std::unique_ptr<Command> set_function_ports(const Document& doc, const std::string& name,
                                            std::vector<graph::FunctionPort> inputs,
                                            std::vector<graph::FunctionPort> outputs) {
  const graph::FunctionDecl* f = doc.function(name);
  if (!f) return nullptr;
  return std::make_unique<FunctionPorts>(name, f->inputs, f->outputs, std::move(inputs),
                                         std::move(outputs));
}

}  // namespace loom::editor
