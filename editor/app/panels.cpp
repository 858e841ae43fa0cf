#include "editor/app/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "compiler/graph/document_json.h"
#include "runtime/common/argpack_layout.h"

namespace loom::editor {

std::vector<double> literal_components(const graph::Literal& l) {
  std::vector<double> out;
  switch (l.kind) {
    case graph::Literal::Kind::Bool: out.push_back(l.b ? 1 : 0); break;
    case graph::Literal::Kind::Int:
    case graph::Literal::Kind::Float: out.push_back(l.as_double()); break;
    case graph::Literal::Kind::List:
      for (const graph::Literal& item : l.list) {
        std::vector<double> inner = literal_components(item);
        out.insert(out.end(), inner.begin(), inner.end());
      }
      break;
    default: break;
  }
  return out;
}

namespace {

graph::Literal number_literal(Scalar s, double v) {
  if (s == Scalar::Bool) return graph::Literal::boolean(v != 0);
  if (is_int(s)) return graph::Literal::integer(static_cast<int64_t>(std::llround(v)));
  return graph::Literal::real(v);
}

Arg literal_arg(const graph::Literal& l) {
  switch (l.kind) {
    case graph::Literal::Kind::Bool: return Arg(l.b);
    case graph::Literal::Kind::Int: return Arg(static_cast<int64_t>(l.i));
    case graph::Literal::Kind::Float: return Arg(l.f);
    case graph::Literal::Kind::String: return Arg(l.s);
    case graph::Literal::Kind::List: return Arg(literal_components(l));
    case graph::Literal::Kind::None: break;
  }
  return Arg(0);
}

const graph::KernelParam* param_of(const graph::Document& doc, const std::string& kernel,
                                   const std::string& name) {
  const graph::KernelDecl* k = doc.kernel(kernel);
  if (!k) return nullptr;
  for (const graph::KernelParam& p : k->params)
    if (p.name == name) return &p;
  return nullptr;
}

void struct_members(const graph::Document& doc, int type, const std::string& prefix,
                    const std::string& pack, std::vector<MemberValue>* out) {
  if (type < 0 || static_cast<size_t>(type) >= doc.argpack_types.size()) return;
  for (const ArgpackMember& m : doc.argpack_types[static_cast<size_t>(type)].members) {
    std::string path = prefix.empty() ? m.name : prefix + "." + m.name;
    if (m.kind == MemberKind::Value) out->push_back({pack, path, m.type});
    if (m.kind == MemberKind::Struct) struct_members(doc, m.nested, path, pack, out);
    // Nested packs are argpacks of their own (bound by reference): listed under their name.
  }
}

void text_disabled_wrapped(const std::string& s) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", s.c_str());
  ImGui::PopStyleColor();
}

}  // namespace

std::vector<LaunchValue> launch_values(const graph::Document& doc) {
  std::vector<LaunchValue> out;
  for (const graph::Pipeline& p : doc.pipelines)
    for (size_t l = 0; l < p.launches.size(); ++l)
      for (const auto& [name, value] : p.launches[l].args) {
        const graph::KernelParam* param = param_of(doc, p.launches[l].kernel, name);
        if (!param || param->kind != graph::ParamKind::Value) continue;
        auto type = parse_value_type(param->type);
        if (!type) continue;
        LaunchValue v{p.name, l, p.launches[l].kernel, name, *type, literal_components(value)};
        if (static_cast<int>(v.components.size()) == 1 && type->components() > 1)
          v.components.assign(static_cast<size_t>(type->components()), v.components[0]);  // a splat
        out.push_back(std::move(v));
      }
  return out;
}

graph::Document with_launch_value(const graph::Document& doc, const LaunchValue& value) {
  graph::Document out = doc;
  for (graph::Pipeline& p : out.pipelines) {
    if (p.name != value.pipeline || value.launch >= p.launches.size()) continue;
    for (auto& [name, literal] : p.launches[value.launch].args) {
      if (name != value.param) continue;
      if (value.type.components() == 1) {
        literal = number_literal(value.type.scalar, value.components.at(0));
        continue;
      }
      std::vector<graph::Literal> columns;
      for (int c = 0; c < value.type.cols; ++c) {
        std::vector<graph::Literal> column;
        column.reserve(static_cast<size_t>(value.type.rows));
        for (int r = 0; r < value.type.rows; ++r)
          column.push_back(
              number_literal(value.type.scalar,
                             value.components.at(static_cast<size_t>(c) * value.type.rows + r)));
        columns.push_back(graph::Literal::list_of(std::move(column)));
      }
      literal = value.type.cols == 1 ? std::move(columns.front())
                                     : graph::Literal::list_of(std::move(columns));
    }
  }
  return out;
}

std::vector<MemberValue> argpack_values(const graph::Document& doc) {
  std::vector<MemberValue> out;
  for (const graph::ArgpackDecl& a : doc.argpacks)
    struct_members(doc, doc.argpack_type(a.type), "", a.name, &out);
  return out;
}

Args first_launch_args(const graph::Document& doc, const std::string& kernel) {
  for (const graph::Pipeline& p : doc.pipelines)
    for (const graph::Launch& l : p.launches)
      if (l.kernel == kernel) {
        Args args;
        for (const auto& [name, value] : l.args) args.emplace_back(name, literal_arg(value));
        return args;
      }
  return {};
}

// ------------------------------------------------------------------------------ panels

namespace {

// One row of the parameters table: the name, then a drag field per component that moves by
// about half a percent of the value per pixel (0.3 and 30000 both drag usefully).
bool value_row(const std::string& id, const std::string& name, const std::string& tooltip,
               ValueType type, std::vector<double>& values) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(name.c_str());
  if (ImGui::IsItemHovered() && !tooltip.empty()) ImGui::SetTooltip("%s", tooltip.c_str());
  ImGui::TableNextColumn();
  ImGui::SetNextItemWidth(-1);
  ImGui::PushID(id.c_str());
  int n = type.components();
  double largest = 0;
  for (double v : values) largest = std::max(largest, std::fabs(v));
  bool changed = false;
  if (is_float(type.scalar)) {
    std::vector<float> f(values.begin(), values.end());
    float speed = static_cast<float>(std::max(largest * 0.005, 1e-4));
    changed = ImGui::DragScalarN("##v", ImGuiDataType_Float, f.data(), n, speed, nullptr, nullptr,
                                 "%.6g");
    if (changed) std::copy(f.begin(), f.end(), values.begin());
  } else {
    std::vector<int> i(values.begin(), values.end());
    changed = ImGui::DragScalarN("##v", ImGuiDataType_S32, i.data(), n,
                                 static_cast<float>(std::max(largest * 0.005, 0.1)));
    if (changed) std::copy(i.begin(), i.end(), values.begin());
  }
  ImGui::PopID();
  return changed;
}

bool begin_value_table(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_Resizable)) return false;
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 0.45f);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 0.55f);
  return true;
}

}  // namespace

void draw_parameters_panel(LiveSession& session, PanelState& state) {
  ImGui::Begin("Parameters", nullptr, state.window_flags);
  const graph::Document& doc = state.document ? *state.document : session.document();
  if (ImGui::CollapsingHeader("Launch values", ImGuiTreeNodeFlags_DefaultOpen)) {
    std::vector<LaunchValue> all = launch_values(doc);
    if (all.empty()) text_disabled_wrapped("No launch passes a value to a kernel.");
    if (!all.empty() && begin_value_table("launch values")) {
      // Grouped by pipeline and launch: a heading row per launch, then its values by name.
      std::string group;
      for (LaunchValue v : all) {
        std::string where = v.pipeline + "[" + std::to_string(v.launch) + "]";
        if (where != group) {
          group = where;
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          ImGui::TextDisabled("%s  %zu. %s", v.pipeline.c_str(), v.launch + 1, v.kernel.c_str());
        }
        std::string id = where + " " + v.kernel + "." + v.param;
        std::string tip = "pipeline " + v.pipeline + ", launch " + std::to_string(v.launch + 1) +
                          " of kernel " + v.kernel + " (" + value_type_name(v.type) + ")";
        bool changed = value_row(id, "  " + v.param, tip, v.type, v.components);
        // A drag is one undo step: the group opens before its first change.
        if (ImGui::IsItemActivated() && state.begin_edit)
          state.begin_edit("Set " + v.kernel + "." + v.param);
        if (changed && state.edit) state.edit(with_launch_value(doc, v));
        if (ImGui::IsItemDeactivated() && state.end_edit) state.end_edit();
      }
      ImGui::EndTable();
    }
  }
  if (ImGui::CollapsingHeader("Argpacks", ImGuiTreeNodeFlags_DefaultOpen)) {
    std::vector<MemberValue> members = argpack_values(doc);
    if (members.empty()) text_disabled_wrapped("No argpack.");
    if (!members.empty() && session.has_program() && begin_value_table("argpack values")) {
      Program& program = session.program();
      for (const MemberValue& m : members) {
        std::string label = m.pack + "." + m.path;
        int n = m.type.components();
        std::vector<double> values(static_cast<size_t>(n));
        try {
          for (int c = 0; c < n; ++c)
            values[static_cast<size_t>(c)] = program.get_argpack(m.pack, m.path, c);
        } catch (const Error&) {
          continue;
        }
        if (!value_row(
                label, label,
                "live: the next launch uploads the pack once (" + value_type_name(m.type) + ")",
                m.type, values))
          continue;
        try {
          if (n == 1)
            program.set_argpack(
                m.pack, m.path,
                is_float(m.type.scalar) ? Arg(values[0]) : Arg(static_cast<int64_t>(values[0])));
          else
            program.set_argpack(m.pack, m.path, Arg(values));
        } catch (const Error& e) {
          session.note(LogEntry::Level::Error, e.what(), e.place());
        }
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

void draw_code_panel(LiveSession& session, PanelState& state) {
  ImGui::Begin("Code", nullptr, state.window_flags);
  const graph::Document& doc = session.document();
  if (state.selected_kernel.empty() && !doc.kernels.empty())
    state.selected_kernel = doc.kernels[0].name;
  if (ImGui::BeginCombo("kernel", state.selected_kernel.c_str())) {
    for (const graph::KernelDecl& k : doc.kernels)
      if (ImGui::Selectable(k.name.c_str(), k.name == state.selected_kernel))
        state.selected_kernel = k.name;
    ImGui::EndCombo();
  }
  ImGui::RadioButton("IR", &state.code_kind, 0);
  ImGui::SameLine();
  ImGui::RadioButton("SPIR-V", &state.code_kind, 1);
  ImGui::SameLine();
  ImGui::RadioButton("LLVM IR", &state.code_kind, 2);
  if (state.code_kind == 0) {
    std::vector<std::string> passes = Program::pass_names();
    if (ImGui::BeginCombo("after",
                          state.ir_pass.empty() ? "the last pass" : state.ir_pass.c_str())) {
      if (ImGui::Selectable("the last pass", state.ir_pass.empty())) state.ir_pass.clear();
      for (const std::string& p : passes)
        if (ImGui::Selectable(p.c_str(), p == state.ir_pass)) state.ir_pass = p;
      ImGui::EndCombo();
    }
  }
  std::string key = std::to_string(state.code_kind) + "\n" + state.selected_kernel + "\n" +
                    state.ir_pass + "\n" + graph::program_key(doc);
  if (key != state.code_key && session.has_program() && doc.kernel(state.selected_kernel)) {
    state.code_key = key;
    try {
      Program& p = session.program();
      Args targs = first_launch_args(doc, state.selected_kernel);
      state.code = state.code_kind == 0   ? p.ir_text(state.selected_kernel, state.ir_pass, targs)
                   : state.code_kind == 1 ? p.spirv_text(state.selected_kernel, targs)
                                          : p.llvm_ir_text(state.selected_kernel, targs);
    } catch (const Error& e) {
      state.code = std::string("; ") + e.what();
    }
  }
  if (!session.has_program() && session.frame_in_flight()) {
    // A frame is running (perhaps stuck): the code shown stays; nothing is compiled meanwhile.
  } else if (!session.has_program()) {
    state.code.clear();
    state.code_key.clear();
    text_disabled_wrapped(
        "No code: the document does not compile yet (the log and the marked node say why).");
  } else if (state.code.empty()) {
    text_disabled_wrapped("Select a kernel to see its code.");
  }
  ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0.07f, 0.07f, 0.09f, 1.0f));
  ImGui::InputTextMultiline("##code", state.code.data(), state.code.size() + 1, ImVec2(-1, -1),
                            ImGuiInputTextFlags_ReadOnly);
  ImGui::PopStyleColor();
  ImGui::End();
}

void draw_log_panel(LiveSession& session, PanelState& state) {
  ImGui::Begin("Log", nullptr, state.window_flags);
  ImGui::Checkbox("errors only", &state.log_errors_only);
  ImGui::Separator();
  ImGui::BeginChild("entries");
  int i = 0;
  for (const LogEntry& e : session.log()) {
    if (state.log_errors_only && e.level != LogEntry::Level::Error) continue;
    ImVec4 color = e.level == LogEntry::Level::Error    ? ImVec4(1.0f, 0.45f, 0.4f, 1)
                   : e.level == LogEntry::Level::Notice ? ImVec4(1.0f, 0.85f, 0.4f, 1)
                                                        : ImGui::GetStyleColorVec4(ImGuiCol_Text);
    std::string where = e.place.node >= 0 ? (e.place.kernel.empty() ? "" : e.place.kernel + " ") +
                                                "node " + std::to_string(e.place.node) + ": "
                                          : "";
    ImGui::PushID(i++);
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    std::string times = e.repeats > 1 ? "  (x" + std::to_string(e.repeats) + ")" : "";
    if (ImGui::Selectable((where + e.message + times).c_str()) && e.place.node >= 0 && state.focus)
      state.focus(e.place);
    ImGui::PopStyleColor();
    if (e.place.node >= 0 && ImGui::IsItemHovered()) ImGui::SetTooltip("click to show the node");
    ImGui::PopID();
  }
  if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY()) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace loom::editor
