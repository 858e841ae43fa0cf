#include "runtime/host/launch_frame.h"

#include <algorithm>

#include "runtime/common/error.h"
#include "runtime/host/argpack.h"
#include "runtime/host/extent_check.h"
#include "runtime/host/field.h"
#include "runtime/host/ndarray.h"
#include "runtime/host/texture.h"

namespace loom::host {

LaunchFrame::LaunchFrame(KernelABI abi) : abi_(std::move(abi)) {
  params_.assign(abi_.params.size(), nullptr);
  value_storage_.resize(abi_.params.size());
  packs_.assign(abi_.params.size(), nullptr);
  for (size_t i = 0; i < abi_.params.size(); ++i) {
    const ParamDesc& p = abi_.params[i];
    if (p.kind != ParamKind::Value) continue;
    size_t size = std::max<size_t>(
        {size_t{p.size},
         static_cast<size_t>(size_of(p.type.scalar)) * static_cast<size_t>(p.type.components()),
         size_t{8}});
    value_storage_[i] = AlignedBuffer(size);
    params_[i] = value_storage_[i].data();
  }
  views_.assign(abi_.resources.size(), ResourceView{});
  for (size_t s = 0; s < abi_.resources.size(); ++s)
    for (int d = 0; d < kMaxDims; ++d)
      views_[s].shape[d] = abi_.resources[s].shape[static_cast<size_t>(d)];
  uint32_t return_size = 0;
  return_offsets_ = return_offsets(abi_, &return_size);
  returns_ = AlignedBuffer(std::max<uint32_t>(return_size, 8));
  temps_ = AlignedBuffer(std::max<uint32_t>(abi_.temps_size, 8));
  ctx_.params = params_.data();
  ctx_.resources = views_.data();
  ctx_.returns = returns_.data();
  ctx_.temps = temps_.data();
  ctx_.error = &error_;
  ctx_.seed = 0;
}

const ParamDesc& LaunchFrame::param(int index, ParamKind kind) const {
  if (index < 0 || static_cast<size_t>(index) >= abi_.params.size())
    throw Error("kernel '" + abi_.name + "' has no parameter " + std::to_string(index));
  const ParamDesc& p = abi_.params[static_cast<size_t>(index)];
  if (p.kind != kind) {
    Place place;
    place.kernel = abi_.name;
    place.pin = p.name;
    throw Error(place, std::string("parameter is a ") + param_kind_name(p.kind) + ", given a " +
                           param_kind_name(kind));
  }
  return p;
}

void LaunchFrame::write_value(int index, Scalar s, int components, const void* bytes, size_t size) {
  const ParamDesc& p = param(index, ParamKind::Value);
  if (p.type.scalar != s || p.type.components() != components) {
    Place place;
    place.kernel = abi_.name;
    place.pin = p.name;
    throw Error(place, "parameter is " + value_type_name(p.type) + ", given " +
                           std::to_string(components) + " x " + std::string(scalar_name(s)));
  }
  std::memcpy(params_[static_cast<size_t>(index)], bytes, size);
}

void LaunchFrame::set_argpack(int index, Argpack& pack) {
  param(index, ParamKind::Argpack);
  packs_[static_cast<size_t>(index)] = &pack;
  params_[static_cast<size_t>(index)] = pack.data();
}

void LaunchFrame::set_ndarray(int index, const Ndarray& array) {
  const ParamDesc& p = param(index, ParamKind::Ndarray);
  if ((p.type.scalar != Scalar::Void && p.type.scalar != array.dtype()) ||
      p.type.components() != array.components() || (p.ndim > 0 && p.ndim != array.ndim())) {
    Place place;
    place.kernel = abi_.name;
    place.pin = p.name;
    throw Error(place, "ndarray of " + value_type_name(p.type) + " with " + std::to_string(p.ndim) +
                           " dimensions expected, given " +
                           std::string(scalar_name(array.dtype())) + " x " +
                           std::to_string(array.components()) + " with " +
                           std::to_string(array.ndim()));
  }
  for (size_t s = 0; s < abi_.resources.size(); ++s)
    if (abi_.resources[s].param == index && abi_.resources[s].param_offset < 0)
      views_[s] = array.view();
}

void LaunchFrame::set_texture(int index, const Texture& texture) {
  const ParamDesc& p = param(index, ParamKind::Texture);
  for (size_t s = 0; s < abi_.resources.size(); ++s) {
    if (abi_.resources[s].param != index || abi_.resources[s].param_offset >= 0) continue;
    if (abi_.resources[s].format != texture.format()) {
      Place place;
      place.kernel = abi_.name;
      place.pin = p.name;
      throw Error(place, std::string("texture of format ") +
                             texture_format_name(abi_.resources[s].format) + " expected, given " +
                             texture_format_name(texture.format()));
    }
    views_[s] = texture.view();
  }
}

void LaunchFrame::bind_field(const std::string& name, const Field& field) {
  bool bound = false;
  for (size_t s = 0; s < abi_.resources.size(); ++s) {
    const ResourceDesc& r = abi_.resources[s];
    if (r.kind != ResourceKind::Field || r.field != name) continue;
    // The kernel's code has the field's shape and element type built in.
    bool same = r.dtype == field.desc().elem.scalar && r.components == field.components() &&
                r.ndim == static_cast<int>(field.desc().shape.size()) &&
                r.layout == field.desc().layout;
    for (int d = 0; same && d < r.ndim; ++d)
      same = r.shape[static_cast<size_t>(d)] == field.desc().shape[static_cast<size_t>(d)];
    if (!same) {
      Place place;
      place.kernel = abi_.name;
      place.pin = name;
      throw Error(
          place,
          "field '" + name +
              "' does not match the shape, element type or layout the kernel was compiled for");
    }
    views_[s] = field.view();
    bound = true;
  }
  if (!bound) throw Error("kernel '" + abi_.name + "' uses no field '" + name + "'");
}

void LaunchFrame::bind(int slot, ResourceView view) {
  if (slot < 0 || static_cast<size_t>(slot) >= views_.size())
    throw Error("kernel '" + abi_.name + "' has no resource slot " + std::to_string(slot));
  views_[static_cast<size_t>(slot)] = view;
}

LaunchContext& LaunchFrame::context() {
  for (Argpack* pack : packs_)
    if (pack) pack->sync();  // nested packs changed since they were bound are copied in
  for (size_t s = 0; s < abi_.resources.size(); ++s) {
    const ResourceDesc& r = abi_.resources[s];
    if (r.param < 0 || r.param_offset < 0) continue;
    const Argpack* pack = packs_.at(static_cast<size_t>(r.param));
    if (!pack)
      throw Error("kernel '" + abi_.name + "': argpack parameter " + std::to_string(r.param) +
                  " is not set");
    views_[s] = pack->resource_view_at(static_cast<uint32_t>(r.param_offset));
  }
  // Before anything runs: arguments shorter than the loops indexing them are refused.
  check_extent_assumptions(abi_, ctx_);
  error_ = LaunchError{};
  // A launch that reaches no return gives zeros, never the previous launch's values.
  std::memset(returns_.data(), 0, returns_.size());
  return ctx_;
}

}  // namespace loom::host
