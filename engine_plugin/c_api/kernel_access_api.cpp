// What a kernel reads and writes (loom_kernel_get_resource_access), from the resource access
// the compiler recorded in the kernel's ABI.
#include <algorithm>
#include <cstdint>
#include <string>

#include "engine_plugin/c_api/c_api_error.h"
#include "engine_plugin/c_api/handles.h"
#include "engine_plugin/c_api/info_structs.h"

using namespace loom;
using loom::capi::ApiError;
using loom::capi::guard;
using loom::capi::KernelObject;
using loom::capi::need;
using loom::capi::resolve;

namespace {

LoomResourceAccess entry_of(const KernelABI& abi, const ResourceAccess& a) {
  const ResourceDesc& r = abi.resources.at(static_cast<size_t>(a.slot));
  LoomResourceAccess out{};
  out.name = a.name.c_str();
  out.access = a.access;
  switch (r.kind) {
    case ResourceKind::Field: out.kind = LOOM_ITEM_FIELD; break;
    case ResourceKind::Ndarray: out.kind = LOOM_ITEM_NDARRAY; break;
    case ResourceKind::Texture: out.kind = LOOM_ITEM_TEXTURE; break;
  }
  if (r.kind == ResourceKind::Field) {
    out.source = LOOM_RESOURCE_FIELD;
    out.param = UINT32_MAX;
    return out;
  }
  out.source = r.param_offset >= 0 ? LOOM_RESOURCE_PACK_MEMBER : LOOM_RESOURCE_PARAM;
  out.param = static_cast<uint32_t>(r.param);
  return out;
}

}  // namespace

extern "C" {

LoomResult loom_kernel_get_resource_access(LoomKernel kernel, uint32_t* count,
                                           LoomResourceAccess* accesses) {
  return guard("loom_kernel_get_resource_access", LOOM_ERROR_INVALID_ARGUMENT, [&] {
    KernelObject& k = resolve(kernel, "loom_kernel_get_resource_access: kernel");
    uint32_t& n = need(count, "loom_kernel_get_resource_access: count");
    const KernelABI& abi = k.module->loaded->kernel_info(k.index).abi;
    // A kernel with no resources touches none, whenever its module was written.
    if (!abi.resource_access_known && !abi.resources.empty())
      throw ApiError(LOOM_ERROR_NOT_SUPPORTED, Place{k.module->what, k.name},
                     "loom_kernel_get_resource_access: the module was written before Loom "
                     "recorded which resources kernels read and write; compile it again with "
                     "this Loom (loom compile)");
    // Not a debug adjoint's shadows: the module binds them, the host never sees them.
    const size_t given = aot::launch_param_count(k.module->loaded->kernel_info(k.index));
    std::vector<const ResourceAccess*> list;  // the module's entries: names outlive the call
    for (const ResourceAccess& a : abi.resource_access) {
      int param = abi.resources.at(static_cast<size_t>(a.slot)).param;
      if (param < 0 || static_cast<size_t>(param) < given) list.push_back(&a);
    }
    if (!accesses) {
      n = static_cast<uint32_t>(list.size());
      return;
    }
    uint32_t written = std::min<uint32_t>(n, static_cast<uint32_t>(list.size()));
    if (written) capi::check_out(accesses, "loom_kernel_get_resource_access: accesses[0]");
    for (uint32_t i = 0; i < written; ++i) {
      LoomResourceAccess* slot = capi::element(accesses, i);
      slot->struct_size = accesses->struct_size;
      capi::write_out(slot, entry_of(abi, *list[i]));
    }
    n = written;
  });
}

}  // extern "C"
