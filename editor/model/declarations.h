// The program's declarations as the program panel edits them: resources (fields, ndarrays,
// textures, argpack instances), argpack types, kernels and their signatures, functions'
// ports, pipelines and their launches, the viewport's view. Each call is one undo step (a
// whole-document swap) and is checked as it is made: a bad name, a taken name, a shape that
// does not fit, an unknown type, a delete of something still used are refused with the
// reason and change nothing. Renames carry every reference along (nodes, launches, argpack
// values, the view, layout); launches follow a kernel's parameters (a new parameter gets a
// default argument, a removed one loses its argument). What a change does to nodes (a field
// retyped under a store) is not refused: it shows on those nodes, as any graph problem does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/document.h"
#include "editor/model/editor_document.h"
#include "editor/model/operations.h"

namespace loom::editor {

enum class DeclKind : uint8_t {
  Field,
  Ndarray,
  Texture,
  Argpack,      // an argpack instance
  ArgpackType,  // a pack or struct type
  Kernel,
  Function,
  Pipeline
};
const char* decl_kind_name(DeclKind kind);  // "field", "argpack type", ...

// Names: identifiers (a letter or '_', then letters, digits, '_'). Resources share one
// namespace (launch arguments name them by string), kernels and functions another (layout
// is by graph name); argpack types and pipelines have their own.
std::string name_problem(const graph::Document& doc, DeclKind kind, const std::string& name);
// `base`, or `base2`, `base3`... whichever is free.
std::string free_name(const graph::Document& doc, DeclKind kind, const std::string& base);

// ---- any kind
// A new declaration with usable defaults (a 128x128 f32 field, a kernel with no nodes, a
// pipeline with no launches...) named `name` or, when empty, a free name; `*made` gets it.
EditResult add_declaration(EditorDocument& d, DeclKind kind, const std::string& name = "",
                           std::string* made = nullptr);
EditResult rename_declaration(EditorDocument& d, DeclKind kind, const std::string& from,
                              const std::string& to);
// Refused while something uses it (the message names one user). A kernel takes its launches
// with it; a resource the view shows leaves the view to the editor's default.
EditResult delete_declaration(EditorDocument& d, DeclKind kind, const std::string& name);
// Moves it `delta` places in its list (clamped).
EditResult move_declaration(EditorDocument& d, DeclKind kind, const std::string& name, int delta);

// ---- resources (the name inside the argument picks the one to change)
EditResult set_field(EditorDocument& d, const FieldDesc& field);
EditResult set_ndarray(EditorDocument& d, const graph::NdarrayDecl& ndarray);
EditResult set_texture(EditorDocument& d, const graph::TextureDecl& texture);
EditResult set_argpack_type(EditorDocument& d, const ArgpackType& type);
// An argpack instance: its type and member values (dotted paths). Values are checked
// against the type as a document load checks them.
EditResult set_argpack(EditorDocument& d, const graph::ArgpackDecl& pack);

// Parses "128x128", "64, 64" or "256" as extents, and "", "()" or "[]" as the empty shape
// (a 0-d field); false with `*why` set when it is not that.
bool parse_shape(const std::string& text, std::vector<int64_t>* shape, std::string* why);
std::string shape_text(const std::vector<int64_t>& shape);  // "128x128"; "()" when empty

// ---- kernels
// A parameter added at the end: every launch of the kernel gets a default argument (zero
// for values, the first resource that fits for ndarrays, textures and argpacks).
EditResult add_kernel_param(EditorDocument& d, const std::string& kernel, graph::KernelParam p);
// Parameter `index` replaced: a new name renames its uses in the kernel's nodes and its
// launches' arguments; a new kind or type resets launch arguments that no longer fit.
EditResult set_kernel_param(EditorDocument& d, const std::string& kernel, size_t index,
                            graph::KernelParam p);
EditResult remove_kernel_param(EditorDocument& d, const std::string& kernel, size_t index);
EditResult move_kernel_param(EditorDocument& d, const std::string& kernel, size_t index, int delta);
EditResult set_kernel_returns(EditorDocument& d, const std::string& kernel,
                              std::vector<std::string> returns);
// 0: the program's default; else 1 to 1024.
EditResult set_kernel_workgroup(EditorDocument& d, const std::string& kernel, int size);
// Fields or ndarray parameters of the kernel to stage in GPU workgroup memory (the document's
// `block_local`); a name that is neither, or one given twice, is refused. Renames of those
// fields and parameters carry the list; deleting one removes it from the list.
EditResult set_kernel_block_local(EditorDocument& d, const std::string& kernel,
                                  std::vector<std::string> names);

// ---- functions' ports (a rename carries the function's input/output nodes and every call)
EditResult add_function_port(EditorDocument& d, const std::string& function, bool output,
                             graph::FunctionPort port);
EditResult set_function_port(EditorDocument& d, const std::string& function, bool output,
                             size_t index, graph::FunctionPort port);
EditResult remove_function_port(EditorDocument& d, const std::string& function, bool output,
                                size_t index);

// ---- pipelines
// A launch of `kernel`, "K.grad" or "K.dual" (launch_params.h) at the end, with an argument
// for every parameter of K (as add_kernel_param); twins are left to their defaults.
EditResult add_launch(EditorDocument& d, const std::string& pipeline, const std::string& kernel);
EditResult remove_launch(EditorDocument& d, const std::string& pipeline, size_t index);
EditResult move_launch(EditorDocument& d, const std::string& pipeline, size_t index, int delta);
// One argument of a launch, a twin's too (checked against the parameter as a document load
// checks it).
EditResult set_launch_arg(EditorDocument& d, const std::string& pipeline, size_t index,
                          const std::string& param, const graph::Literal& value);
// Leaves a derived launch's twin to its default (the companion of what its parameter is
// given); refused for a parameter that needs an argument.
EditResult clear_launch_arg(EditorDocument& d, const std::string& pipeline, size_t index,
                            const std::string& param);

// ---- the view (editor-only: never recompiles). Checked like a document's `view`.
EditResult set_view(EditorDocument& d, const graph::ViewSettings& view);

// ---- declarations dropped on a graph
// The nodes a declaration dragged onto a graph can make: a field's or ndarray's "load",
// "store", "atomic_add"; a texture's "tex_load", "tex_sample", "tex_store"; a function's
// "call"; none for the rest.
std::vector<std::string> declaration_node_types(DeclKind kind);
// A `type` node for declaration `name` in `region` of graph `g`, at `at`, one undo step
// (result.nodes[0] is its id). In a kernel, an ndarray or texture is reached through a
// parameter: one bound to it in every launch of the kernel, else a new one named after it
// and bound in those launches.
EditResult add_declaration_node(EditorDocument& d, const GraphRef& g, const RegionRef& region,
                                Vec2 at, DeclKind kind, const std::string& name,
                                const std::string& type);

// A default argument for a parameter of `kind`/`type` in `doc` (None when nothing fits).
graph::Literal default_argument(const graph::Document& doc, const graph::KernelParam& p);

}  // namespace loom::editor
