// Module metadata with every section filled, for the tests that hold metadata.json to the
// text older builds wrote (tests/aot/data).
#pragma once

#include <string>

#include "runtime/aot/module.h"
#include "tests/common/abi_samples.h"

namespace loom::test {

inline aot::ModuleMetadata sample_metadata(aot::Arch arch) {
  aot::ModuleMetadata m;
  m.name = "sample";
  m.arch = arch;
  m.producer = "loom test";
  if (arch == aot::Arch::Vulkan) {
    m.needs.vulkan_features = kNeedInt64 | kNeedFloat64;
    m.needs.workgroup_size = 128;
    m.needs.push_constant_bytes = 96;
  } else {
    m.needs.cpu_levels = {{"skylake", {"+avx2", "+fma"}}};
  }
  m.fields.push_back({"velocity", {Scalar::F32, 2, 1}, {640, 480}, Layout::SoA});
  m.ndarrays.push_back({"grid", {Scalar::I64, 1, 1}, {3, 5}});
  m.textures.push_back({"image", TextureFormat::RGBA8, {16, 8, 4}});

  ArgpackType inner;
  inner.name = "Inner";
  inner.is_pack = false;
  inner.members.push_back({"a", MemberKind::Value, {Scalar::F32, 3, 1}});
  ArgpackType pack;
  pack.name = "Pack";
  pack.members.push_back({"inner", MemberKind::Struct, {}, 0, 0});
  ArgpackMember arr{"arr", MemberKind::Ndarray, {Scalar::U16, 1, 1}, 4};
  pack.members.push_back(arr);
  ArgpackMember tex{"tex", MemberKind::Texture, {}, 2};
  tex.format = TextureFormat::R32F;
  pack.members.push_back(tex);
  m.argpack_types = {inner, pack};
  layout_argpack_types(m.argpack_types);

  aot::Value big;
  big.i = -1;
  big.above_int64 = true;
  aot::Value list;
  list.kind = aot::Value::Kind::List;
  list.list = {1.0, -0.5, 1e-300};
  aot::Value res;
  res.kind = aot::Value::Kind::Resource;
  res.resource = "grid";
  m.argpacks.push_back({"pack0", 1, {{"inner.a", list}, {"arr", res}}});

  aot::KernelInfo k;
  k.name = "sample";
  aot::TemplateArgument field_arg{"f", aot::TemplateArgument::Kind::Field, "velocity"};
  aot::TemplateArgument ndarray_arg{"grid", aot::TemplateArgument::Kind::Ndarray};
  ndarray_arg.elem = {Scalar::I64, 1, 1};
  ndarray_arg.i = 2;
  aot::TemplateArgument float_arg{"x", aot::TemplateArgument::Kind::Float};
  float_arg.f = 0.1;
  k.template_args = {field_arg, ndarray_arg, float_arg};
  k.abi = sample_kernel_abi();
  k.return_names = {"r0", "r1", "r2"};
  if (arch == aot::Arch::Cpu) {
    k.objects = {"sample.o"};
  } else {
    k.spirv = sample_spirv_kernel();
    for (SpirvTask& t : k.spirv.tasks) t.spirv.clear();
    k.spirv_blobs = {"sample_t0.spv", "sample_t1.spv", "sample_t2.spv"};
  }
  m.kernels.push_back(k);

  aot::Value three;
  three.i = 3;
  aot::Value yes;
  yes.kind = aot::Value::Kind::Bool;
  yes.b = true;
  aot::Value half;
  half.kind = aot::Value::Kind::Float;
  half.f = 2;
  m.pipelines.push_back(
      {"step", {{0, {{"scale", half}, {"n", three}, {"flag", yes}, {"big", big}}}}});
  m.blobs.push_back({"sample.o", 10, "00112233445566778899aabbccddeeff"});
  return m;
}

}  // namespace loom::test
