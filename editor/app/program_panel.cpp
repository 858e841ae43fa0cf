#include "editor/app/program_panel.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "editor/model/launch_params.h"
#include "editor/model/literal_text.h"
#include "runtime/common/argpack_layout.h"

namespace loom::editor {

namespace {

// " +grad", " +dual", " +grad +dual" or "": what the data list says of a resource's
// derivatives (docs/autodiff.md).
std::string derivative_marks(bool needs_grad, bool needs_dual) {
  return std::string(needs_grad ? " +grad" : "") + (needs_dual ? " +dual" : "");
}

const ImVec4 kErrorColor(1.0f, 0.45f, 0.4f, 1.0f);
const ImVec4 kNoteColor(1.0f, 0.85f, 0.4f, 1.0f);

// The value types offered in type menus (any other can be typed into the field).
const std::vector<std::string>& value_type_choices() {
  static const std::vector<std::string> choices = [] {
    std::vector<std::string> out = {"f32", "i32", "u32", "bool", "f64", "i64",
                                    "u64", "i8",  "i16", "u8",   "u16"};
    for (const char* s : {"f32", "i32", "u32", "f64"})
      for (int n = 2; n <= 4; ++n) out.push_back(std::string(s) + "x" + std::to_string(n));
    for (int n = 2; n <= 4; ++n)
      out.push_back("f32x" + std::to_string(n) + "x" + std::to_string(n));
    return out;
  }();
  return choices;
}

// A combo over `choices`; true with `*value` changed when another was picked.
// What a derived launch's optional twin shows when the launch binds its default.
constexpr const char* kDefaultArgument = "(default)";

// A combo of `choices`; with `state`, each open choice is the control "CONTROL=CHOICE".
bool choice(const char* label, std::string* value, const std::vector<std::string>& choices,
            PanelState* state = nullptr, const std::string& control = "") {
  bool changed = false;
  if (ImGui::BeginCombo(label, value->c_str())) {
    for (const std::string& c : choices) {
      if (ImGui::Selectable(c.c_str(), c == *value) && c != *value) {
        *value = c;
        changed = true;
      }
      if (state) state->controls[control + "=" + c] = ControlRect::last_item();
    }
    ImGui::EndCombo();
  }
  return changed;
}

// A line of help in the inspector, wrapped to the panel.
void hint(const char* text) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", text);
  ImGui::PopTextWrapPos();
}

void label(const char* text) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(text);
  ImGui::SameLine(96);
}

const char* param_kind_label(graph::ParamKind k) {
  switch (k) {
    case graph::ParamKind::Value: return "value";
    case graph::ParamKind::Ndarray: return "ndarray";
    case graph::ParamKind::Texture: return "texture";
    case graph::ParamKind::Argpack: return "argpack";
    case graph::ParamKind::Template: return "template";
  }
  return "";
}

std::vector<std::string> resource_names(const graph::Document& doc, bool fields, bool arrays,
                                        bool textures) {
  std::vector<std::string> out;
  if (fields)
    for (const FieldDesc& f : doc.fields) out.push_back(f.name);
  if (arrays)
    for (const graph::NdarrayDecl& n : doc.ndarrays) out.push_back(n.name);
  if (textures)
    for (const graph::TextureDecl& t : doc.textures) out.push_back(t.name);
  return out;
}

std::string member_kind_label(const ArgpackMember& m) {
  switch (m.kind) {
    case MemberKind::Value: return "value";
    case MemberKind::Struct: return "struct";
    case MemberKind::Pack: return "pack";
    case MemberKind::Ndarray: return "ndarray";
    case MemberKind::Texture: return "texture";
  }
  return "";
}

// Value members of an argpack type, by dotted path, with nested structs and packs.
void value_paths(const graph::Document& doc, int type, const std::string& prefix,
                 std::vector<std::pair<std::string, ValueType>>* out, int depth = 0) {
  if (type < 0 || static_cast<size_t>(type) >= doc.argpack_types.size() || depth > 8) return;
  for (const ArgpackMember& m : doc.argpack_types[static_cast<size_t>(type)].members) {
    std::string path = prefix.empty() ? m.name : prefix + "." + m.name;
    if (m.kind == MemberKind::Value) out->emplace_back(path, m.type);
    if (m.kind == MemberKind::Struct || m.kind == MemberKind::Pack)
      value_paths(doc, m.nested, path, out, depth + 1);
  }
}

// "a, b c" -> {"a", "b", "c"}: a list typed into one text field.
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> list;
  std::string item;
  for (char c : text + ",") {
    if (c == ',' || c == ' ') {
      if (!item.empty()) list.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  return list;
}

// The list's sections in order: Data, Kernels, Functions, Pipelines (then View).
int section_index(DeclKind add_kind) {
  switch (add_kind) {
    case DeclKind::Kernel: return 1;
    case DeclKind::Function: return 2;
    case DeclKind::Pipeline: return 3;
    default: return 0;
  }
}

}  // namespace

// ------------------------------------------------------------------ helpers

bool ProgramPanel::text_field(PanelState& state, const char* id, const std::string& value,
                              std::string* out, float width) {
  ImGuiID gid = ImGui::GetID(id);
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s", text_id_ == gid ? text_.c_str() : value.c_str());
  ImGui::SetNextItemWidth(width);
  ImGui::InputText(id, buf, sizeof buf);
  state.controls[std::string("inspector.") + (id[0] == '#' && id[1] == '#' ? id + 2 : id)] =
      ControlRect::last_item();
  if (ImGui::IsItemActive()) {
    text_id_ = gid;
    text_ = buf;
  }
  bool commit = ImGui::IsItemDeactivatedAfterEdit() && value != buf;
  if (!ImGui::IsItemActive() && text_id_ == gid) text_id_ = 0;
  if (commit) *out = buf;
  return commit;
}

void ProgramPanel::apply(const EditResult& r) {
  error_ = r.ok ? "" : r.message;
  note_ = r.ok && r.message != "unchanged" ? r.message : "";
}

// ------------------------------------------------------------------ the panel

void ProgramPanel::draw(EditorDocument& doc, LiveSession& session, PanelState& state) {
  (void)session;
  ImGui::Begin("Program", nullptr, state.window_flags);
  // The list as tall as its entries, up to 60% of the panel (it scrolls then). Counted from
  // the document before drawing, so the inspector under it never jumps a frame late.
  const graph::Document& d = doc.doc();
  size_t counts[] = {d.fields.size() + d.ndarrays.size() + d.textures.size() +
                         d.argpack_types.size() + d.argpacks.size(),
                     d.kernels.size(), d.functions.size(), d.pipelines.size(), 1};
  const ImGuiStyle& style = ImGui::GetStyle();
  float want = style.WindowPadding.y;
  for (size_t i = 0; i < std::size(counts); ++i)
    want +=
        ImGui::GetFrameHeight() + style.ItemSpacing.y +
        (open_[i] ? static_cast<float>(counts[i]) * ImGui::GetTextLineHeightWithSpacing() : 0.0f);
  float avail = ImGui::GetContentRegionAvail().y;
  float list_height =
      std::clamp(want, std::min(80.0f, avail * 0.6f), std::max(avail * 0.6f, 80.0f));
  ImGui::BeginChild("declarations", ImVec2(0, list_height), false);
  list(doc, state);
  ImGui::EndChild();
  ImGui::Separator();
  ImGui::BeginChild("inspector", ImVec2(0, 0), false);
  inspector(doc, state);
  ImGui::EndChild();
  ImGui::End();
}

void ProgramPanel::section(EditorDocument& doc, PanelState& state, const char* title,
                           DeclKind add_kind,
                           const std::vector<std::pair<DeclKind, std::string>>& entries,
                           const std::vector<std::string>& details) {
  ImGui::PushID(title);
  bool& open = open_[static_cast<size_t>(section_index(add_kind))];
  ImGui::SetNextItemOpen(open);
  open = ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_AllowItemOverlap);
  // "+" at the right of the header: data offers every kind of resource, others add one.
  ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::GetFrameHeight());
  bool data = add_kind == DeclKind::Field;
  if (ImGui::SmallButton("+")) {
    if (data) {
      ImGui::OpenPopup("add data");
    } else {
      std::string made;
      EditResult r = add_declaration(doc, add_kind, "", &made);
      apply(r);
      if (r.ok) {
        select(add_kind, made);
        bool graph = add_kind == DeclKind::Kernel || add_kind == DeclKind::Function;
        if (graph && state.show_graph) state.show_graph(made, add_kind == DeclKind::Function);
      }
    }
  }
  state.controls[std::string("add.") + decl_kind_name(add_kind)] = ControlRect::last_item();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Add a %s",
                      data ? "field, ndarray, texture or argpack" : decl_kind_name(add_kind));
  if (ImGui::BeginPopup("add data")) {
    for (DeclKind k : {DeclKind::Field, DeclKind::Ndarray, DeclKind::Texture, DeclKind::ArgpackType,
                       DeclKind::Argpack}) {
      if (ImGui::MenuItem(decl_kind_name(k))) {
        std::string made;
        EditResult r = add_declaration(doc, k, "", &made);
        apply(r);
        if (r.ok) select(k, made);
      }
      state.controls[std::string("add.data.") + decl_kind_name(k)] = ControlRect::last_item();
    }
    ImGui::EndPopup();
  }
  if (open) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& [kind, name] = entries[i];
      ImGui::PushID(static_cast<int>(i));
      bool graph = kind == DeclKind::Kernel || kind == DeclKind::Function;
      bool shown = graph && state.shown_graph == name &&
                   state.shown_function == (kind == DeclKind::Function);
      bool selected = !selected_.view && selected_.kind == kind && selected_.name == name;
      if (ImGui::Selectable(name.c_str(), selected || shown)) {
        select(kind, name);
        error_.clear();
        note_.clear();
        if (kind == DeclKind::Kernel) state.selected_kernel = name;
        if (graph && state.show_graph) state.show_graph(name, kind == DeclKind::Function);
      }
      state.controls[std::string(decl_kind_name(kind)) + "." + name] = ControlRect::last_item();
      if (kind != DeclKind::Kernel && kind != DeclKind::Pipeline && kind != DeclKind::ArgpackType &&
          ImGui::BeginDragDropSource(ImGuiDragDropFlags_None)) {
        std::string payload =
            std::string(kind == DeclKind::Function ? "function" : decl_kind_name(kind)) + ":" +
            name;
        ImGui::SetDragDropPayload(kDeclarationPayload, payload.c_str(), payload.size() + 1);
        ImGui::Text("%s %s: drop on the graph", decl_kind_name(kind), name.c_str());
        ImGui::EndDragDropSource();
      }
      if (ImGui::BeginPopupContextItem("entry menu")) {
        if (ImGui::MenuItem("Move up")) apply(move_declaration(doc, kind, name, -1));
        if (ImGui::MenuItem("Move down")) apply(move_declaration(doc, kind, name, 1));
        ImGui::Separator();
        if (ImGui::MenuItem("Delete")) {
          EditResult r = delete_declaration(doc, kind, name);
          apply(r);
          if (r.ok && selected) selected_.name.clear();
        }
        ImGui::EndPopup();
      }
      if (i < details.size() && !details[i].empty()) {
        ImGui::SameLine();
        ImGui::TextDisabled("%s", details[i].c_str());
      }
      ImGui::PopID();
    }
  }
  ImGui::PopID();
}

void ProgramPanel::list(EditorDocument& doc, PanelState& state) {
  const graph::Document& d = doc.doc();
  std::vector<std::pair<DeclKind, std::string>> entries;
  std::vector<std::string> details;
  for (const FieldDesc& f : d.fields) {
    entries.emplace_back(DeclKind::Field, f.name);
    details.push_back("field " + value_type_name(f.elem) + " " + shape_text(f.shape) +
                      derivative_marks(f.needs_grad, f.needs_dual));
  }
  for (const graph::NdarrayDecl& n : d.ndarrays) {
    entries.emplace_back(DeclKind::Ndarray, n.name);
    details.push_back("ndarray " + value_type_name(n.elem) + " " + shape_text(n.shape) +
                      derivative_marks(n.needs_grad, n.needs_dual));
  }
  for (const graph::TextureDecl& t : d.textures) {
    entries.emplace_back(DeclKind::Texture, t.name);
    details.push_back(std::string("texture ") + texture_format_name(t.format) + " " +
                      shape_text(t.size));
  }
  for (const ArgpackType& t : d.argpack_types) {
    entries.emplace_back(DeclKind::ArgpackType, t.name);
    details.push_back(t.is_pack ? "pack type" : "struct type");
  }
  for (const graph::ArgpackDecl& a : d.argpacks) {
    entries.emplace_back(DeclKind::Argpack, a.name);
    details.push_back("argpack " + a.type);
  }
  section(doc, state, "Data", DeclKind::Field, entries, details);

  entries.clear();
  details.clear();
  for (const graph::KernelDecl& k : d.kernels) {
    entries.emplace_back(DeclKind::Kernel, k.name);
    std::string sig;
    for (const graph::KernelParam& p : k.params) sig += (sig.empty() ? "" : ", ") + p.name;
    details.push_back("(" + sig + ")");
  }
  section(doc, state, "Kernels", DeclKind::Kernel, entries, details);

  entries.clear();
  details.clear();
  for (const graph::FunctionDecl& f : d.functions) {
    entries.emplace_back(DeclKind::Function, f.name);
    std::string in, out;
    for (const graph::FunctionPort& p : f.inputs) in += (in.empty() ? "" : ", ") + p.name;
    for (const graph::FunctionPort& p : f.outputs) out += (out.empty() ? "" : ", ") + p.name;
    details.push_back("(" + in + ") -> (" + out + ")");
  }
  section(doc, state, "Functions", DeclKind::Function, entries, details);

  entries.clear();
  details.clear();
  for (const graph::Pipeline& p : d.pipelines) {
    entries.emplace_back(DeclKind::Pipeline, p.name);
    std::string launches;
    for (const graph::Launch& l : p.launches) launches += (launches.empty() ? "" : ", ") + l.kernel;
    details.push_back(launches.empty() ? "no launch" : launches);
  }
  section(doc, state, "Pipelines", DeclKind::Pipeline, entries, details);

  ImGui::SetNextItemOpen(open_[4]);
  open_[4] = ImGui::CollapsingHeader("View");
  if (open_[4]) {
    std::string what = d.view.empty() ? "chosen by the editor" : d.view.show + " as " + d.view.as;
    if (ImGui::Selectable(("viewport: " + what).c_str(), selected_.view)) {
      select_view();
      error_.clear();
      note_.clear();
    }
    state.controls["view"] = ControlRect::last_item();
  }
}

// ------------------------------------------------------------------ the inspector

void ProgramPanel::inspector(EditorDocument& doc, PanelState& state) {
  const graph::Document& d = doc.doc();
  bool exists = selected_.view;
  if (!selected_.view && !selected_.name.empty()) {
    switch (selected_.kind) {
      case DeclKind::Field: exists = d.field(selected_.name); break;
      case DeclKind::Ndarray: exists = d.ndarray(selected_.name); break;
      case DeclKind::Texture: exists = d.texture(selected_.name); break;
      case DeclKind::Argpack: exists = d.argpack(selected_.name); break;
      case DeclKind::ArgpackType: exists = d.argpack_type(selected_.name) >= 0; break;
      case DeclKind::Kernel: exists = d.kernel(selected_.name); break;
      case DeclKind::Function: exists = d.function(selected_.name); break;
      case DeclKind::Pipeline: exists = d.pipeline(selected_.name); break;
    }
  }
  if (!exists) {
    // Undo may have taken it away; the graph on the canvas is the natural default.
    if (!state.shown_graph.empty())
      select(state.shown_function ? DeclKind::Function : DeclKind::Kernel, state.shown_graph);
    else
      selected_.name.clear();
  }
  if (!selected_.view && selected_.name.empty()) {
    hint("Select an entry to edit it; + adds one.");
    return;
  }
  ImGui::PushID("inspector");
  // Fields are the entry's own: text typed for one entry and left by clicking another must
  // never be applied to the other (their fields would share ids).
  ImGui::PushID(selected_.view ? "view" : decl_kind_name(selected_.kind));
  ImGui::PushID(selected_.name.c_str());
  if (selected_.view) {
    inspect_view(doc, state);
  } else {
    ImGui::TextDisabled("%s", decl_kind_name(selected_.kind));
    if (name_row(doc, state)) {
      switch (selected_.kind) {
        case DeclKind::Field: inspect_field(doc, state); break;
        case DeclKind::Ndarray: inspect_ndarray(doc, state); break;
        case DeclKind::Texture: inspect_texture(doc, state); break;
        case DeclKind::ArgpackType: inspect_argpack_type(doc, state); break;
        case DeclKind::Argpack: inspect_argpack(doc, state); break;
        case DeclKind::Kernel: inspect_kernel(doc, state); break;
        case DeclKind::Function: inspect_function(doc, state); break;
        case DeclKind::Pipeline: inspect_pipeline(doc, state); break;
      }
    }
  }
  if (!error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s", error_.c_str());
    ImGui::PopStyleColor();
  } else if (!note_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kNoteColor);
    ImGui::TextWrapped("%s", note_.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::PopID();
  ImGui::PopID();
  ImGui::PopID();
}

bool ProgramPanel::name_row(EditorDocument& doc, PanelState& state) {
  label("name");
  std::string typed;
  if (text_field(state, "##name", selected_.name, &typed)) {
    EditResult r = rename_declaration(doc, selected_.kind, selected_.name, typed);
    apply(r);
    if (r.ok) {
      bool graph = selected_.kind == DeclKind::Kernel || selected_.kind == DeclKind::Function;
      bool shown = graph && state.shown_graph == selected_.name;
      selected_.name = typed;
      if (shown && state.show_graph) state.show_graph(typed, selected_.kind == DeclKind::Function);
      if (selected_.kind == DeclKind::Kernel) state.selected_kernel = typed;
    }
    return false;  // the rest draws next frame, under the new name
  }
  return true;
}

void ProgramPanel::inspect_field(EditorDocument& doc, PanelState& state) {
  FieldDesc f = *doc.doc().field(selected_.name);
  label("type");
  std::string type = value_type_name(f.elem);
  ImGui::SetNextItemWidth(-1);
  if (choice("##type", &type, value_type_choices())) {
    f.elem = *parse_value_type(type);
    apply(set_field(doc, f));
  }
  state.controls["inspector.type"] = ControlRect::last_item();
  label("shape");
  std::string typed, why;
  if (text_field(state, "##shape", shape_text(f.shape), &typed)) {
    if (parse_shape(typed, &f.shape, &why))
      apply(set_field(doc, f));
    else
      apply(EditResult::fail(why));
  }
  label("layout");
  std::string layout = f.layout == Layout::SoA ? "soa" : "aos";
  ImGui::SetNextItemWidth(-1);
  if (choice("##layout", &layout, {"aos", "soa"})) {
    f.layout = layout == "soa" ? Layout::SoA : Layout::AoS;
    apply(set_field(doc, f));
  }
  if (derivative_rows(state, is_float(f.elem.scalar), &f.needs_grad, &f.needs_dual))
    apply(set_field(doc, f));
  hint("Drag it from the list onto the graph: load or store.");
}

// The "gradients" row of a field or ndarray: needs_grad (its adjoint NAME.grad, for K.grad
// launches) and needs_dual (its tangent NAME.dual, for K.dual); float resources only. True
// when either box changed.
bool ProgramPanel::derivative_rows(PanelState& state, bool is_float_type, bool* needs_grad,
                                   bool* needs_dual) {
  label("gradients");
  if (!is_float_type && !*needs_grad && !*needs_dual) {
    ImGui::TextDisabled("float types only");
    return false;
  }
  bool changed = ImGui::Checkbox("grad##needs_grad", needs_grad);
  state.controls["inspector.needs_grad"] = ControlRect::last_item();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("needs_grad: the program holds NAME.grad, which K.grad launches fill");
  ImGui::SameLine();
  changed |= ImGui::Checkbox("dual##needs_dual", needs_dual);
  state.controls["inspector.needs_dual"] = ControlRect::last_item();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("needs_dual: the program holds NAME.dual, for forward mode (K.dual)");
  return changed;
}

void ProgramPanel::inspect_ndarray(EditorDocument& doc, PanelState& state) {
  graph::NdarrayDecl n = *doc.doc().ndarray(selected_.name);
  label("type");
  std::string type = value_type_name(n.elem);
  ImGui::SetNextItemWidth(-1);
  if (choice("##type", &type, value_type_choices())) {
    n.elem = *parse_value_type(type);
    apply(set_ndarray(doc, n));
  }
  label("shape");
  std::string typed, why;
  if (text_field(state, "##shape", shape_text(n.shape), &typed)) {
    if (parse_shape(typed, &n.shape, &why))
      apply(set_ndarray(doc, n));
    else
      apply(EditResult::fail(why));
  }
  if (derivative_rows(state, is_float(n.elem.scalar), &n.needs_grad, &n.needs_dual))
    apply(set_ndarray(doc, n));
  hint("Kernels take it through an ndarray parameter.");
}

void ProgramPanel::inspect_texture(EditorDocument& doc, PanelState& state) {
  graph::TextureDecl t = *doc.doc().texture(selected_.name);
  label("size");
  std::string typed, why;
  if (text_field(state, "##size", shape_text(t.size), &typed)) {
    if (parse_shape(typed, &t.size, &why))
      apply(set_texture(doc, t));
    else
      apply(EditResult::fail(why));
  }
  label("format");
  std::string format = texture_format_name(t.format);
  ImGui::SetNextItemWidth(-1);
  if (choice("##format", &format, {"r32f", "rg32f", "rgba32f", "rgba8"})) {
    parse_texture_format(format, &t.format);
    apply(set_texture(doc, t));
  }
}

void ProgramPanel::inspect_argpack_type(EditorDocument& doc, PanelState& state) {
  const graph::Document& d = doc.doc();
  ArgpackType t = d.argpack_types[static_cast<size_t>(d.argpack_type(selected_.name))];
  label("kind");
  std::string kind = t.is_pack ? "pack" : "struct";
  ImGui::SetNextItemWidth(-1);
  if (choice("##kind", &kind, {"pack", "struct"})) {
    t.is_pack = kind == "pack";
    apply(set_argpack_type(doc, t));
    return;
  }
  ImGui::TextUnformatted("members");
  std::vector<std::string> types;
  for (const ArgpackType& other : d.argpack_types) types.push_back(other.name);
  for (size_t i = 0; i < t.members.size(); ++i) {
    ArgpackMember m = t.members[i];
    ImGui::PushID(static_cast<int>(i));
    std::string typed;
    float w = ImGui::GetContentRegionAvail().x;
    if (text_field(state, "##member", m.name, &typed, w * 0.32f)) {
      t.members[i].name = typed;
      apply(set_argpack_type(doc, t));
      ImGui::PopID();
      return;
    }
    ImGui::SameLine();
    std::string mk = member_kind_label(m);
    ImGui::SetNextItemWidth(w * 0.25f);
    if (choice("##mkind", &mk, {"value", "struct", "pack", "ndarray", "texture"})) {
      ArgpackMember& e = t.members[i];
      e.kind = mk == "value"     ? MemberKind::Value
               : mk == "struct"  ? MemberKind::Struct
               : mk == "pack"    ? MemberKind::Pack
               : mk == "ndarray" ? MemberKind::Ndarray
                                 : MemberKind::Texture;
      e.type = ValueType{Scalar::F32};
      e.ndim = e.kind == MemberKind::Ndarray ? 1 : e.kind == MemberKind::Texture ? 2 : 0;
      e.nested = -1;
      if (e.kind == MemberKind::Struct || e.kind == MemberKind::Pack)
        for (size_t j = 0; j < d.argpack_types.size(); ++j)
          if (d.argpack_types[j].name != t.name &&
              d.argpack_types[j].is_pack == (e.kind == MemberKind::Pack) && e.nested < 0)
            e.nested = static_cast<int>(j);
      apply(set_argpack_type(doc, t));
      ImGui::PopID();
      return;
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(w * 0.3f);
    if (m.kind == MemberKind::Value || m.kind == MemberKind::Ndarray) {
      std::string type = value_type_name(m.type);
      if (choice("##mtype", &type, value_type_choices())) {
        t.members[i].type = *parse_value_type(type);
        apply(set_argpack_type(doc, t));
      }
    } else if (m.kind == MemberKind::Struct || m.kind == MemberKind::Pack) {
      std::string nested = m.nested >= 0 && static_cast<size_t>(m.nested) < types.size()
                               ? types[static_cast<size_t>(m.nested)]
                               : "";
      if (choice("##mtype", &nested, types)) {
        t.members[i].nested = d.argpack_type(nested);
        apply(set_argpack_type(doc, t));
      }
    } else {
      ImGui::TextDisabled("%d-d", m.ndim);
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) {
      t.members.erase(t.members.begin() + static_cast<long>(i));
      apply(set_argpack_type(doc, t));
      ImGui::PopID();
      return;
    }
    ImGui::PopID();
  }
  if (ImGui::Button("+ member")) {
    ArgpackMember m;
    m.type = ValueType{Scalar::F32};
    int n = 1;
    auto taken = [&](const std::string& s) {
      return std::any_of(t.members.begin(), t.members.end(),
                         [&](const ArgpackMember& x) { return x.name == s; });
    };
    do m.name = "m" + std::to_string(n++);
    while (taken(m.name));
    t.members.push_back(m);
    apply(set_argpack_type(doc, t));
  }
  state.controls["inspector.add_member"] = ControlRect::last_item();
}

void ProgramPanel::inspect_argpack(EditorDocument& doc, PanelState& state) {
  const graph::Document& d = doc.doc();
  graph::ArgpackDecl a = *d.argpack(selected_.name);
  label("type");
  std::vector<std::string> packs;
  for (const ArgpackType& t : d.argpack_types)
    if (t.is_pack) packs.push_back(t.name);
  std::string type = a.type;
  ImGui::SetNextItemWidth(-1);
  if (choice("##type", &type, packs)) {
    a.type = type;
    a.values.clear();  // the old type's paths mean nothing in the new one
    apply(set_argpack(doc, a));
    return;
  }
  ImGui::TextUnformatted("initial values");
  std::vector<std::pair<std::string, ValueType>> paths;
  value_paths(d, d.argpack_type(a.type), "", &paths);
  for (const auto& [path, vt] : paths) {
    ImGui::PushID(path.c_str());
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(path.c_str());
    ImGui::SameLine(96);
    std::string current;
    for (const auto& [p, v] : a.values)
      if (p == path) current = literal_text(v);
    std::string typed;
    if (text_field(state, "##value", current, &typed)) {
      std::string why;
      std::optional<graph::Literal> v = parse_literal_text(typed, false, &why);
      // `key`, not `path`: clang 14 cannot capture a structured binding.
      auto it = std::find_if(a.values.begin(), a.values.end(),
                             [&key = path](const auto& x) { return x.first == key; });
      if (!v && !why.empty()) {
        apply(EditResult::fail(path + ": " + why));
      } else {
        if (it != a.values.end() && v)
          it->second = *v;
        else if (it != a.values.end())
          a.values.erase(it);
        else if (v)
          a.values.emplace_back(path, *v);
        apply(set_argpack(doc, a));
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s; empty: zero", value_type_name(vt).c_str());
    ImGui::PopID();
  }
  hint("Live values while playing: the Parameters panel.");
}

void ProgramPanel::inspect_kernel(EditorDocument& doc, PanelState& state) {
  const graph::KernelDecl& k = *doc.doc().kernel(selected_.name);
  std::string kernel = k.name;
  ImGui::TextUnformatted("parameters");
  std::vector<std::string> packs;
  for (const ArgpackType& t : doc.doc().argpack_types)
    if (t.is_pack) packs.push_back(t.name);
  for (size_t i = 0; i < k.params.size(); ++i) {
    graph::KernelParam p = k.params[i];
    ImGui::PushID(static_cast<int>(i));
    float w = ImGui::GetContentRegionAvail().x;
    std::string typed;
    bool renamed = text_field(state, "##param", p.name, &typed, w * 0.28f);
    state.controls["inspector.param." + std::to_string(i)] = ControlRect::last_item();
    if (renamed) {
      p.name = typed;
      apply(set_kernel_param(doc, kernel, i, p));
      ImGui::PopID();
      return;
    }
    ImGui::SameLine();
    std::string kind = param_kind_label(p.kind);
    ImGui::SetNextItemWidth(w * 0.25f);
    if (choice("##kind", &kind, {"value", "ndarray", "texture", "argpack", "template"})) {
      p.kind = kind == "value"     ? graph::ParamKind::Value
               : kind == "ndarray" ? graph::ParamKind::Ndarray
               : kind == "texture" ? graph::ParamKind::Texture
               : kind == "argpack" ? graph::ParamKind::Argpack
                                   : graph::ParamKind::Template;
      p.type = p.kind == graph::ParamKind::Value     ? "f32"
               : p.kind == graph::ParamKind::Ndarray ? "f32"
               : p.kind == graph::ParamKind::Texture ? "rgba32f"
               : p.kind == graph::ParamKind::Argpack ? (packs.empty() ? "" : packs.front())
                                                     : "field";
      p.ndim = p.kind == graph::ParamKind::Ndarray   ? 1
               : p.kind == graph::ParamKind::Texture ? 2
                                                     : 0;
      apply(set_kernel_param(doc, kernel, i, p));
      ImGui::PopID();
      return;
    }
    state.controls["inspector.param_kind." + std::to_string(i)] = ControlRect::last_item();
    ImGui::SameLine();
    ImGui::SetNextItemWidth(w * 0.25f);
    std::vector<std::string> types =
        p.kind == graph::ParamKind::Texture
            ? std::vector<std::string>{"r32f", "rg32f", "rgba32f", "rgba8"}
        : p.kind == graph::ParamKind::Argpack ? packs
        : p.kind == graph::ParamKind::Template
            ? std::vector<std::string>{"field", "i32", "f32", "bool"}
            : value_type_choices();
    if (choice("##type", &p.type, types)) apply(set_kernel_param(doc, kernel, i, p));
    if (p.kind == graph::ParamKind::Ndarray || p.kind == graph::ParamKind::Texture) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(w * 0.08f);
      std::string typed_ndim;
      if (text_field(state, "##ndim", std::to_string(p.ndim), &typed_ndim)) {
        p.ndim = std::atoi(typed_ndim.c_str());
        apply(set_kernel_param(doc, kernel, i, p));
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("dimensions");
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("^")) apply(move_kernel_param(doc, kernel, i, -1));
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) apply(remove_kernel_param(doc, kernel, i));
    state.controls["inspector.param_remove." + std::to_string(i)] = ControlRect::last_item();
    ImGui::PopID();
  }
  if (ImGui::Button("+ parameter")) {
    std::string name = "p";
    for (int n = 1;; ++n) {
      name = "p" + std::to_string(n);
      if (std::none_of(k.params.begin(), k.params.end(),
                       [&](const graph::KernelParam& p) { return p.name == name; }))
        break;
    }
    apply(
        add_kernel_param(doc, kernel, graph::KernelParam{name, graph::ParamKind::Value, "f32", 0}));
  }
  state.controls["inspector.add_param"] = ControlRect::last_item();
  label("returns");
  std::string returns;
  for (const std::string& r : k.returns) returns += (returns.empty() ? "" : ", ") + r;
  std::string typed;
  if (text_field(state, "##returns", returns, &typed))
    apply(set_kernel_returns(doc, kernel, split_names(typed)));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("value or struct types, comma separated; empty: none");
  label("workgroup");
  if (text_field(state, "##workgroup", k.workgroup_size ? std::to_string(k.workgroup_size) : "",
                 &typed)) {
    char* end = nullptr;
    long v = typed.empty() ? 0 : std::strtol(typed.c_str(), &end, 10);
    if (!typed.empty() && (!end || *end))
      apply(EditResult::fail("a workgroup size is a whole number, 1 to 1024"));
    else
      apply(set_kernel_workgroup(doc, kernel, static_cast<int>(std::clamp(v, -1L, 100000L))));
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("GPU invocations per workgroup; empty: the program's default");
  label("block local");
  std::string staged;
  for (const std::string& name : k.block_local) staged += (staged.empty() ? "" : ", ") + name;
  if (text_field(state, "##block_local", staged, &typed))
    apply(set_kernel_block_local(doc, kernel, split_names(typed)));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "fields or ndarray parameters to stage in GPU workgroup memory for stencils; CPU "
        "ignores it");
}

void ProgramPanel::inspect_function(EditorDocument& doc, PanelState& state) {
  const graph::FunctionDecl& f = *doc.doc().function(selected_.name);
  std::string fn = f.name;
  for (bool output : {false, true}) {
    const auto& ports = output ? f.outputs : f.inputs;
    ImGui::TextUnformatted(output ? "outputs" : "inputs");
    for (size_t i = 0; i < ports.size(); ++i) {
      graph::FunctionPort port = ports[i];
      ImGui::PushID(static_cast<int>(i) + (output ? 1000 : 0));
      float w = ImGui::GetContentRegionAvail().x;
      std::string typed;
      bool renamed = text_field(state, "##port", port.name, &typed, w * 0.4f);
      state.controls[std::string("inspector.") + (output ? "output." : "port.") +
                     std::to_string(i)] = ControlRect::last_item();
      if (renamed) {
        port.name = typed;
        apply(set_function_port(doc, fn, output, i, port));
        ImGui::PopID();
        return;
      }
      ImGui::SameLine();
      ImGui::SetNextItemWidth(w * 0.35f);
      if (choice("##type", &port.type, value_type_choices()))
        apply(set_function_port(doc, fn, output, i, port));
      ImGui::SameLine();
      if (ImGui::SmallButton("x")) {
        apply(remove_function_port(doc, fn, output, i));
        ImGui::PopID();
        return;
      }
      ImGui::PopID();
    }
    if (ImGui::Button(output ? "+ output" : "+ input")) {
      std::string base = output ? "out" : "in";
      std::string name;
      for (int n = 1;; ++n) {
        name = base + std::to_string(n);
        if (std::none_of(ports.begin(), ports.end(),
                         [&](const graph::FunctionPort& p) { return p.name == name; }))
          break;
      }
      apply(add_function_port(doc, fn, output, graph::FunctionPort{name, "f32"}));
      return;
    }
    state.controls[output ? "inspector.add_output" : "inspector.add_input"] =
        ControlRect::last_item();
  }
  hint("Drag it from the list onto a graph to call it.");
}

void ProgramPanel::inspect_pipeline(EditorDocument& doc, PanelState& state) {
  const graph::Pipeline& p = *doc.doc().pipeline(selected_.name);
  std::string pipeline = p.name;
  if (pipeline == "init" || pipeline == "step")
    ImGui::TextDisabled(pipeline == "init" ? "runs once, at start and on reset"
                                           : "runs every frame while playing");
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const graph::Launch& l = p.launches[i];
    ImGui::PushID(static_cast<int>(i));
    ImGui::AlignTextToFramePadding();
    ImGui::Text("%zu. %s", i + 1, l.kernel.c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("^")) apply(move_launch(doc, pipeline, i, -1));
    ImGui::SameLine();
    if (ImGui::SmallButton("v")) apply(move_launch(doc, pipeline, i, 1));
    ImGui::SameLine();
    bool remove = ImGui::SmallButton("x");
    state.controls["inspector.remove_launch." + std::to_string(i)] = ControlRect::last_item();
    if (remove) {
      apply(remove_launch(doc, pipeline, i));
      ImGui::PopID();
      return;
    }
    std::vector<LaunchParam> params = launch_params(doc.doc(), l.kernel);
    if (!params.empty()) {
      ImGui::Indent();
      for (const LaunchParam& row : params) {
        const graph::KernelParam& param = row.param;
        ImGui::PushID(param.name.c_str());
        ImGui::AlignTextToFramePadding();
        if (row.twin)
          ImGui::TextDisabled("%s", param.name.c_str());
        else
          ImGui::TextUnformatted(param.name.c_str());
        if (row.twin && ImGui::IsItemHovered())
          ImGui::SetTooltip(
              "optional: by default the companion (.grad / .dual) of what '%s' is "
              "given, or 0 for a value's direction",
              param.name.substr(0, param.name.rfind('.')).c_str());
        // A long twin name ("b.inner.w.grad") puts its value on a line of its own.
        if (ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x < 106) ImGui::SameLine(110);
        std::string current;
        for (const auto& [name, v] : l.args)
          if (name == param.name) current = literal_text(v);
        std::string typed;
        bool by_name = param.kind != graph::ParamKind::Value &&
                       !(param.kind == graph::ParamKind::Template && param.type != "field" &&
                         !param.type.empty());
        if (by_name) {
          std::vector<std::string> names;
          if (row.twin) names.push_back(kDefaultArgument);
          if (param.kind == graph::ParamKind::Ndarray) {
            for (const std::string& n : resource_names(doc.doc(), false, true, false))
              names.push_back(n);
            if (row.twin) {  // the companions of its kind an ndarray twin is usually given
              bool grad = param.name.ends_with(".grad");
              for (const graph::NdarrayDecl& n : doc.doc().ndarrays)
                if (grad ? n.needs_grad : n.needs_dual)
                  names.push_back(n.name + (grad ? ".grad" : ".dual"));
            }
          } else if (param.kind == graph::ParamKind::Texture) {
            names = resource_names(doc.doc(), false, false, true);
          } else if (param.kind == graph::ParamKind::Template) {
            names = resource_names(doc.doc(), true, false, false);
          } else if (param.kind == graph::ParamKind::Argpack) {
            for (const graph::ArgpackDecl& a : doc.doc().argpacks)
              if (a.type == param.type) names.push_back(a.name);
          }
          ImGui::SetNextItemWidth(-1);
          std::string chosen = current.empty() && row.twin ? kDefaultArgument : current;
          if (choice("##arg", &chosen, names, &state,
                     "inspector.arg." + std::to_string(i) + "." + param.name))
            apply(chosen == kDefaultArgument
                      ? clear_launch_arg(doc, pipeline, i, param.name)
                      : set_launch_arg(doc, pipeline, i, param.name, graph::Literal::text(chosen)));
        } else if (text_field(state, "##arg", current, &typed)) {
          std::string why;
          std::optional<graph::Literal> v = parse_literal_text(typed, false, &why);
          if (row.twin && typed.empty())  // cleared: the default again
            apply(clear_launch_arg(doc, pipeline, i, param.name));
          else if (!v)
            apply(EditResult::fail(param.name + ": " + (why.empty() ? "give a value" : why)));
          else
            apply(set_launch_arg(doc, pipeline, i, param.name, *v));
        }
        state.controls["inspector.arg." + std::to_string(i) + "." + param.name] =
            ControlRect::last_item();
        ImGui::PopID();
      }
      ImGui::Unindent();
    }
    ImGui::PopID();
  }
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##launch", "+ launch a kernel", ImGuiComboFlags_HeightLarge)) {
    // The kernels, then their adjoints and tangent kernels (a gradient step in a pipeline).
    for (bool derived : {false, true}) {
      if (derived && !doc.doc().kernels.empty()) {
        ImGui::Separator();
        ImGui::TextDisabled("gradients (docs/autodiff.md)");
      }
      for (const graph::KernelDecl& kd : doc.doc().kernels)
        for (const std::string& k : launch_choices(kd)) {
          if ((k != kd.name) != derived) continue;
          if (ImGui::Selectable(k.c_str())) apply(add_launch(doc, pipeline, k));
          state.controls["inspector.launch." + k] = ControlRect::last_item();
        }
    }
    ImGui::EndCombo();
  }
  state.controls["inspector.add_launch"] = ControlRect::last_item();
}

void ProgramPanel::inspect_view(EditorDocument& doc, PanelState& state) {
  const graph::Document& d = doc.doc();
  graph::ViewSettings v = d.view;
  ImGui::TextDisabled("what the viewport shows when the document opens");
  label("show");
  std::vector<std::string> names = resource_names(d, true, true, true);
  names.insert(names.begin(), "");
  ImGui::SetNextItemWidth(-1);
  if (choice("##show", &v.show, names)) {
    if (v.show.empty())
      v = {};
    else if (v.as.empty())
      v.as = d.texture(v.show) ? "image" : "points";
    EditResult r = set_view(doc, v);
    if (!r.ok && v.as != "image") {  // a scalar field: an image is the way to show it
      v.as = "image";
      r = set_view(doc, v);
    }
    apply(r);
  }
  state.controls["inspector.show"] = ControlRect::last_item();
  if (v.empty()) return;
  label("as");
  ImGui::SetNextItemWidth(-1);
  if (choice("##as", &v.as, {"points", "image", "mesh"})) apply(set_view(doc, v));
  if (v.as == "points") {
    label("color by");
    std::vector<std::string> by = resource_names(d, true, true, false);
    by.insert(by.begin(), "");
    ImGui::SetNextItemWidth(-1);
    if (choice("##color_by", &v.color_by, by)) apply(set_view(doc, v));
    label("point size");
    float size = v.point_size;
    ImGui::SetNextItemWidth(-1);
    ImGui::DragFloat("##point_size", &size, 0.1f, 0.0f, 64.0f, size == 0 ? "auto" : "%.1f px");
    if (ImGui::IsItemDeactivatedAfterEdit()) {
      v.point_size = size;
      apply(set_view(doc, v));
    }
  }
  if (v.as == "mesh") {
    label("mesh");
    std::string typed;
    if (text_field(state, "##mesh", v.mesh, &typed)) {
      v.mesh = typed;
      apply(set_view(doc, v));
    }
  }
}

}  // namespace loom::editor
