// The fields of KernelABI, KernelRecord and SpirvKernel, listed once, in the order their
// stored forms hold them. Two forms walk these lists, each with a writer and a reader:
// the binary records (abi_binary.h: offline cache entries, serialized SPIR-V kernels) and
// AOT module metadata (runtime/aot/module.cpp: metadata.json). A field added here is
// written, read and checked by all four.
//
// A visitor `v` gets each field's key (its JSON key, and its name in errors) and a reference
// to it (const when writing). Readers check what each call declares and fail naming the
// field's path ("resources[2].param is out of range [-1, 3]"):
//   v.text(key, s)                          a string
//   v.integer(key, i, lo, hi)               a whole number in [lo, hi]; binary: the width of i's
//   type v.flag(key, b)                          a bool v.choice(key, e, last, name_of)         an
//   enum in [0, last]; binary: its u8 value, JSON: name_of(e) v.type(key, t, void_ok) a ValueType;
//   "void" (no type) only where void_ok v.extents(key, shape)                   kMaxDims extents in
//   [0, INT32_MAX] v.list(key, items, max[, each])         at most max items, each walked by its
//   visit_fields
//                                           (or by each(item_visitor, item))
//   v.types / v.byte_list / v.texts         lists of value types, of small numbers, of strings
//   v.bound_pairs(kb, begin, ke, end, max)  the begin and end bounds of the same dimensions
//   v.spirv_code(key, words)                binary: the words; JSON: the name of the blob holding
//   them v.object_code(key, bytes)               binary only: the code of a KernelRecord
//   v.optional_list(key, present, items, max, each)  a list that older writers did not have:
//                                           binary: a flag, then the list when present; JSON:
//                                           the key only when present, absent reads as not
//   v.require(ok, why)                      a rule across fields; a reader fails with `why`
// V::kForm says which form walks, for the few fields that one form keeps elsewhere.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/kernel_abi.h"
#include "runtime/common/spirv_kernel.h"

namespace loom {

enum class FieldForm : uint8_t { Binary, Json };

// T is S, or const S when a writer walks it.
template <typename T, typename S>
concept FieldsOf = std::same_as<std::remove_const_t<T>, S>;

// Caps on list lengths: a corrupt count must not become a huge allocation.
constexpr uint32_t kMaxListed = 4096;
constexpr uint32_t kMaxReturns = 64;
constexpr uint32_t kMaxAssertMessages = 1u << 20;
constexpr uint32_t kMaxSpirvWords = 1u << 26;
constexpr int64_t kMaxI32 = INT32_MAX;

template <typename V, FieldsOf<ParamDesc> P>
void visit_fields(V& v, P& p) {
  v.text("name", p.name);
  v.choice("kind", p.kind, ParamKind::Argpack, param_kind_name);
  v.type("type", p.type, /*void_ok=*/p.kind != ParamKind::Value);
  v.integer("ndim", p.ndim, 0, kMaxDims);
  v.integer("argpack_type", p.argpack_type, -1, kMaxI32);
  v.integer("size", p.size, 0, kMaxI32);
}

// `param_count`: the kernel's parameters, which `param` indexes.
template <typename V, FieldsOf<ResourceDesc> R>
void visit_fields(V& v, R& r, size_t param_count) {
  v.choice("kind", r.kind, ResourceKind::Texture, resource_kind_name);
  v.choice("dtype", r.dtype, Scalar::F64, scalar_name);
  v.integer("components", r.components, 1, 16);
  v.integer("ndim", r.ndim, 0, kMaxDims);
  v.extents("shape", r.shape);
  v.choice("layout", r.layout, Layout::SoA, layout_name);
  v.choice("format", r.format, TextureFormat::RGBA8, texture_format_name);
  v.text("field", r.field);
  v.integer("param", r.param, -1, static_cast<int64_t>(param_count) - 1);
  v.integer("param_offset", r.param_offset, -1, kMaxI32);
  v.require(r.kind == ResourceKind::Field || r.param >= 0, "names no parameter");
}

template <typename V, FieldsOf<TaskDesc> T>
void visit_fields(V& v, T& t) {
  v.integer("kind", t.kind, 0, 2);
  v.text("symbol", t.symbol);
  v.text("extent_symbol", t.extent_symbol);
  v.integer("dims", t.dims, 1, kMaxDims);
}

// `resource_count`: the kernel's resource slots, which `slot` indexes.
template <typename V, FieldsOf<ResourceAccess> A>
void visit_fields(V& v, A& a, size_t resource_count) {
  v.integer("slot", a.slot, 0, static_cast<int64_t>(resource_count) - 1);
  v.text("name", a.name);
  v.choice("access", a.access, kAllResourceAccess, resource_access_name);
  v.require(a.access != 0, "records no access");
}

// Slots listed once each, in order.
inline bool in_slot_order(const std::vector<ResourceAccess>& list) {
  for (size_t i = 1; i < list.size(); ++i)
    if (list[i].slot <= list[i - 1].slot) return false;
  return true;
}

// A range bound the launch can evaluate: a value parameter's i32 inside its bytes, or a
// dimension of a resource slot (the launch reads them without further checks).
inline bool bound_in_range(const RangeBound& b, const KernelABI& abi) {
  if (b.kind == RangeBound::Kind::Arg)
    return b.value >= 0 && static_cast<size_t>(b.value) < abi.params.size() &&
           abi.params[static_cast<size_t>(b.value)].kind == ParamKind::Value &&
           uint64_t{b.offset} + 4 <=
               std::max<uint64_t>(abi.params[static_cast<size_t>(b.value)].size, 8);
  if (b.kind == RangeBound::Kind::Shape)
    return b.value >= 0 && static_cast<size_t>(b.value) < abi.resources.size() &&
           b.offset < static_cast<uint32_t>(kMaxDims);
  return true;
}

// `abi`: the kernel, whose parameters and slots the entry and its bounds name.
template <typename V, FieldsOf<ExtentAssumption> E>
void visit_fields(V& v, E& e, const KernelABI& abi) {
  v.integer("slot", e.slot, 0, static_cast<int64_t>(abi.resources.size()) - 1);
  v.integer("dim", e.dim, 0, kMaxDims - 1);
  v.text("name", e.name);
  v.flag("checked", e.checked);
  v.bound_pairs("begin", e.begin, "end", e.end, 64);
  v.integer("loop", e.loop, -1, static_cast<int64_t>(e.end.size()) - 1);
  v.integer("low", e.low, INT32_MIN, INT32_MAX);
  v.integer("high", e.high, e.low, INT32_MAX);
  v.text("bound_name", e.bound_name);
  v.require(e.checked || (e.end.empty() && e.loop < 0), "is unchecked but names loops");
  bool bounds_ok = true;
  for (size_t k = 0; k < e.end.size(); ++k)
    bounds_ok = bounds_ok && bound_in_range(e.begin[k], abi) && bound_in_range(e.end[k], abi);
  v.require(bounds_ok, "has a range bound naming no value parameter or resource dimension");
}

template <typename V, FieldsOf<KernelABI> A>
void visit_fields(V& v, A& abi) {
  // A module keeps the name once, on its kernel (KernelInfo::name).
  if constexpr (V::kForm == FieldForm::Binary) v.text("name", abi.name);
  v.list("params", abi.params, kMaxListed);
  v.list("resources", abi.resources, kMaxListed,
         [&](auto& item, auto& r) { visit_fields(item, r, abi.params.size()); });
  v.types("returns", abi.returns, kMaxReturns, /*void_ok=*/false);
  v.list("tasks", abi.tasks, kMaxListed);
  v.integer("temps_size", abi.temps_size, 0, kMaxI32);
  // Last, and optional: modules written before it read as "not recorded".
  v.optional_list("resource_access", abi.resource_access_known, abi.resource_access, kMaxListed,
                  [&](auto& item, auto& a) { visit_fields(item, a, abi.resources.size()); });
  v.require(in_slot_order(abi.resource_access), "lists a resource slot twice or out of order");
  // Optional as well, after it: what the code assumes about extents, checked at launch.
  v.optional_list("extent_assumptions", abi.extent_assumptions_known, abi.extent_assumptions,
                  kMaxListed, [&](auto& item, auto& e) { visit_fields(item, e, abi); });
}

template <typename V, FieldsOf<KernelRecord> R>
void visit_fields(V& v, R& r) {
  visit_fields(v, r.abi);
  v.object_code("code", r.code);
}

template <typename V, FieldsOf<SpirvBinding> B>
void visit_fields(V& v, B& b) {
  v.integer("binding", b.binding, 0, 4095);
  v.choice("kind", b.kind, BindingKind::Sampler, binding_kind_name);
  v.integer("index", b.index, -1, kMaxI32);
  v.flag("sampled_linearly", b.sampled_linearly);
}

template <typename V, FieldsOf<RangeBound> B>
void visit_fields(V& v, B& b) {
  v.choice("kind", b.kind, RangeBound::Kind::Shape, range_bound_kind_name);
  v.integer("value", b.value, INT64_MIN, INT64_MAX);
  v.integer("offset", b.offset, 0, kMaxI32);
  // Absent from module metadata when 0, so modules written before it read the same.
  v.optional_integer("plus", b.plus, INT32_MIN, INT32_MAX, 0);
  v.require(b.kind != RangeBound::Kind::Const || b.plus == 0, "adds to a constant bound");
}

// `binding_count`: the kernel's bindings, which `access` describes one by one.
template <typename V, FieldsOf<SpirvTask> T>
void visit_fields(V& v, T& t, size_t binding_count) {
  v.integer("kind", t.kind, 0, 2);
  // A module names the task's blob here; the binary form holds the words, last.
  if constexpr (V::kForm == FieldForm::Json) v.spirv_code("spirv", t.spirv);
  v.integer("workgroup_size", t.workgroup_size, 1, 4096);
  v.integer("grid_dims", t.grid_dims, 1, 2);
  v.flag("host_extent", t.host_extent);
  v.bound_pairs("begin", t.begin, "end", t.end, kMaxDims);
  // Absent from module metadata when false (modules written before it read as grid-stride).
  v.optional_flag("direct", t.direct);
  v.require(!t.direct || (t.host_extent && t.kind != 0), "is direct without a host extent");
  // Absent from module metadata when 0 (untiled).
  v.optional_integer("tile_cols", t.tile_cols, 0, 4096, uint32_t{0});
  v.require(t.tile_cols == 0 || (t.direct && t.grid_dims == 2 && t.begin.size() == 2 &&
                                 t.workgroup_size % t.tile_cols == 0),
            "has tiles but is no direct 2-d task whose workgroup they divide");
  v.byte_list("access", t.access, kMaxListed, 0, kAccessRead | kAccessWrite);
  v.require(t.access.size() == binding_count,
            "has an access list that does not match the bindings");
  if constexpr (V::kForm == FieldForm::Binary) v.spirv_code("spirv", t.spirv);
}

template <typename V, FieldsOf<SpirvKernel> K>
void visit_fields(V& v, K& k) {
  v.list("bindings", k.bindings, kMaxListed);
  v.flag("args_in_push_constants", k.args_in_push_constants);
  v.list("tasks", k.tasks, kMaxListed,
         [&](auto& item, auto& t) { visit_fields(item, t, k.bindings.size()); });
  v.texts("assert_messages", k.assert_messages, kMaxAssertMessages);
  v.integer("requirements", k.requirements, 0, kAllSpirvRequirements);
}

}  // namespace loom
