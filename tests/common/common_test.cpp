// Scalar types, argpack layout, .npy files, compiled-kernel records and SPIR-V kernel blobs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/common/abi_serialize.h"
#include "runtime/common/argpack_layout.h"
#include "runtime/common/error.h"
#include "runtime/common/npy.h"
#include "runtime/common/scalar.h"
#include "runtime/common/spirv_kernel.h"
#include "tests/common/abi_samples.h"

using namespace loom;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("loom_common_test_" + name)).string();
}

// The bytes of tests/common/data/`name`; with LOOM_UPDATE_GOLDEN=1, `current` is written there
// first (after a deliberate format change: a new record version).
std::vector<uint8_t> golden_bytes(const std::string& name, const std::vector<uint8_t>& current) {
  std::string path = std::string(LOOM_SOURCE_DIR) + "/tests/common/data/" + name;
  if (const char* update = std::getenv("LOOM_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(current.data()),
               static_cast<std::streamsize>(current.size()));
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The message of the Error that reading `bytes` throws, "" if it reads.
template <typename Read>
std::string read_error(const std::vector<uint8_t>& bytes, Read&& read) {
  try {
    read(bytes, "edited");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// `record` with the byte at `at` set to `value` and its checksum made valid again, so that
// the reader gets past the envelope to the fields.
std::vector<uint8_t> with_byte(std::vector<uint8_t> record, size_t at, uint8_t value) {
  record[at] = value;
  uint64_t sum = fnv1a64(record.data(), record.size() - 8);
  std::memcpy(record.data() + record.size() - 8, &sum, 8);
  return record;
}
}  // namespace

TEST(Scalar, ParsesValueTypes) {
  EXPECT_EQ(parse_value_type("f32"), (ValueType{Scalar::F32, 1, 1}));
  EXPECT_EQ(parse_value_type("i32x3"), (ValueType{Scalar::I32, 3, 1}));
  EXPECT_EQ(parse_value_type("f64x3x2"), (ValueType{Scalar::F64, 3, 2}));
  EXPECT_FALSE(parse_value_type("f32x5"));
  EXPECT_FALSE(parse_value_type("f32x1"));
  EXPECT_FALSE(parse_value_type("float"));
  EXPECT_FALSE(parse_value_type("void"));
  EXPECT_EQ(value_type_name({Scalar::U8, 4, 4}), "u8x4x4");
}

TEST(ArgpackLayout, FollowsStd140) {
  // Taichi's struct-in-pack case: pack { element: struct { a: i32, c: f32 }, d: f32 }
  std::vector<ArgpackType> types(2);
  types[0].name = "Element";
  types[0].is_pack = false;
  types[0].members = {{"a", MemberKind::Value, {Scalar::I32}},
                      {"c", MemberKind::Value, {Scalar::F32}}};
  types[1].name = "Pack";
  types[1].members = {{"element", MemberKind::Struct, {}, 0, 0},
                      {"d", MemberKind::Value, {Scalar::F32}},
                      {"v", MemberKind::Value, {Scalar::F32, 3, 1}},
                      {"b", MemberKind::Value, {Scalar::Bool}},
                      {"m", MemberKind::Value, {Scalar::F32, 2, 2}},
                      {"arr", MemberKind::Ndarray, {Scalar::F32}, 1}};
  layout_argpack_types(types);
  EXPECT_EQ(types[0].size, 16u);
  uint32_t off = 0;
  ASSERT_TRUE(find_member(types, 1, "element.c", &off));
  EXPECT_EQ(off, 4u);
  ASSERT_TRUE(find_member(types, 1, "d", &off));
  EXPECT_EQ(off, 16u);
  ASSERT_TRUE(find_member(types, 1, "v", &off));
  EXPECT_EQ(off, 32u);  // vec3 aligned to 16
  ASSERT_TRUE(find_member(types, 1, "b", &off));
  EXPECT_EQ(off, 44u);  // a scalar may fill the vec3's tail
  ASSERT_TRUE(find_member(types, 1, "m", &off));
  EXPECT_EQ(off, 48u);  // matrix columns have a 16-byte stride
  EXPECT_EQ(std140_component_offset({Scalar::F32, 2, 2}, 1, 1), 20u);
  ASSERT_TRUE(find_member(types, 1, "arr", &off));
  EXPECT_EQ(off, 80u);
  EXPECT_EQ(types[1].size, 112u);
  EXPECT_FALSE(find_member(types, 1, "element.zz", &off));
}

TEST(ArgpackLayout, RejectsSelfContainingTypes) {
  std::vector<ArgpackType> types(1);
  types[0].name = "Loop";
  types[0].members = {{"again", MemberKind::Pack, {}, 0, 0}};
  try {
    layout_argpack_types(types);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'Loop' contains itself"), std::string::npos);
  }
}

TEST(Npy, RoundTripsAndRejectsCorruptFiles) {
  NpyArray a;
  a.dtype = Scalar::I32;
  a.shape = {3, 2};
  a.data.resize(24);
  for (int i = 0; i < 6; ++i) std::memcpy(a.data.data() + 4 * i, &i, 4);
  std::string path = temp_path("a.npy");
  write_npy(path, a);
  NpyArray b = read_npy(path);
  EXPECT_EQ(b.dtype, Scalar::I32);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.data, a.data);
  // header is padded to a multiple of 64 bytes, as NumPy requires
  EXPECT_EQ(std::filesystem::file_size(path) % 64, 24u % 64);

  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  try {
    read_npy(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  std::ofstream(path) << "not numpy";
  EXPECT_THROW(read_npy(path), Error);
  EXPECT_THROW(read_npy(temp_path("missing.npy")), Error);
}

TEST(KernelRecord, RoundTripsAndDetectsCorruption) {
  KernelRecord r;
  r.abi.name = "k";
  r.abi.params.push_back({"a", ParamKind::Value, {Scalar::F32, 3, 1}, 0, -1, 12});
  ResourceDesc res;
  res.kind = ResourceKind::Field;
  res.field = "x";
  res.shape = {4, 5, 0, 0};
  res.ndim = 2;
  r.abi.resources.push_back(res);
  r.abi.returns.push_back({Scalar::I32});
  r.abi.tasks.push_back({1, "k_t0", "k_t0_extent"});
  r.abi.temps_size = 16;
  r.code = {1, 2, 3, 4, 5};
  auto bytes = serialize_kernel_record(r);
  KernelRecord back = deserialize_kernel_record(bytes, "mem");
  EXPECT_EQ(back.abi.name, "k");
  EXPECT_EQ(back.abi.params[0].type, (ValueType{Scalar::F32, 3, 1}));
  EXPECT_EQ(back.abi.resources[0].shape[1], 5);
  EXPECT_EQ(back.abi.tasks[0].extent_symbol, "k_t0_extent");
  EXPECT_EQ(back.abi.temps_size, 16u);
  EXPECT_EQ(back.code, r.code);

  for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    EXPECT_THROW(deserialize_kernel_record(truncated, "cut"), Error) << cut;
  }
  auto flipped = bytes;
  flipped[20] ^= 0x40;
  try {
    deserialize_kernel_record(flipped, "cache/x.lkr");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cache/x.lkr"), std::string::npos);
  }
}

// tests/common/data holds the records the hand-written serializers wrote before the field
// lists (abi_fields.h) replaced them: the bytes must not change, or cache entries already on
// disk would stop loading. Record versions changed them on purpose (LOOM_UPDATE_GOLDEN=1
// rewrites them): 4, the version word and one byte (resource access not recorded) before the
// code; 5, the extent assumptions; 6, four bytes more per range bound (RangeBound::plus) and
// one per SPIR-V task (SpirvTask::direct), nothing else.
TEST(KernelRecord, BytesMatchWhatEarlierBuildsWrote) {
  std::vector<uint8_t> golden =
      golden_bytes("kernel_record.bin", serialize_kernel_record(test::sample_kernel_record()));
  ASSERT_FALSE(golden.empty());
  EXPECT_TRUE(serialize_kernel_record(test::sample_kernel_record()) == golden);
  EXPECT_TRUE(serialize_kernel_record(deserialize_kernel_record(golden, "golden")) == golden);
}

TEST(SpirvKernelBlob, BytesMatchWhatEarlierBuildsWrote) {
  std::vector<uint8_t> golden =
      golden_bytes("spirv_kernel.bin", serialize_spirv_kernel(test::sample_spirv_kernel()));
  ASSERT_FALSE(golden.empty());
  EXPECT_TRUE(serialize_spirv_kernel(test::sample_spirv_kernel()) == golden);
  EXPECT_TRUE(serialize_spirv_kernel(deserialize_spirv_kernel(golden, "golden")) == golden);
}

// Property: every field of the lists survives the binary form (the serialized form holds
// every field, so equal bytes after a round trip mean equal values).
TEST(KernelRecord, RandomRecordsRoundTrip) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    test::RandomAbi random(seed);
    KernelRecord r{random.kernel_abi(), {1, 2, 3}};
    std::vector<uint8_t> bytes = serialize_kernel_record(r);
    KernelRecord back = deserialize_kernel_record(bytes, "random");
    ASSERT_TRUE(serialize_kernel_record(back) == bytes) << "seed " << seed;
    ASSERT_EQ(back.abi.resources.size(), r.abi.resources.size()) << seed;
    for (size_t i = 0; i < r.abi.resources.size(); ++i)
      EXPECT_EQ(back.abi.resources[i].shape, r.abi.resources[i].shape);

    SpirvKernel k = random.spirv_kernel(r.abi.tasks.size());
    std::vector<uint8_t> blob = serialize_spirv_kernel(k);
    ASSERT_TRUE(serialize_spirv_kernel(deserialize_spirv_kernel(blob, "random")) == blob)
        << "seed " << seed;
  }
}

// The launch reads an extent assumption's bounds without further checks, so a reader refuses
// a bound naming anything but a value parameter's bytes or a resource dimension.
TEST(KernelRecord, ExtentAssumptionBoundsNameWhatALaunchCanRead) {
  KernelRecord r = test::sample_kernel_record();
  r.abi.extent_assumptions_known = true;
  ExtentAssumption e;
  e.slot = 1;
  e.name = "grid";
  e.begin = {{RangeBound::Kind::Const, 0, 0}};
  e.end = {{RangeBound::Kind::Arg, 0, 8}};  // `scale` is 12 bytes: its last f32
  e.loop = 0;
  e.high = 1;
  e.bound_name = "scale";
  r.abi.extent_assumptions.push_back(e);
  std::vector<uint8_t> bytes = serialize_kernel_record(r);
  KernelRecord back = deserialize_kernel_record(bytes, "record");
  ASSERT_EQ(back.abi.extent_assumptions.size(), 1u);
  EXPECT_EQ(back.abi.extent_assumptions[0].bound_name, "scale");
  EXPECT_TRUE(serialize_kernel_record(back) == bytes);
  auto read = [](const std::vector<uint8_t>& b, const std::string& what) {
    deserialize_kernel_record(b, what);
  };
  for (RangeBound bad : {RangeBound{RangeBound::Kind::Arg, 1, 0},    // an ndarray parameter
                         RangeBound{RangeBound::Kind::Arg, 0, 12},   // past `scale`
                         RangeBound{RangeBound::Kind::Shape, 9, 0},  // no slot 9
                         RangeBound{RangeBound::Kind::Shape, 1, 4}}) {
    r.abi.extent_assumptions[0].end = {bad};
    std::string e2 = read_error(serialize_kernel_record(r), read);
    EXPECT_NE(e2.find("extent_assumptions[0] has a range bound naming no value parameter"),
              std::string::npos)
        << e2;
  }
}

// A value out of its field's range is an error naming the field.
TEST(KernelRecord, CorruptFieldsAreNamed) {
  KernelRecord r = test::sample_kernel_record();
  std::vector<uint8_t> bytes = serialize_kernel_record(r);
  auto read = [](const std::vector<uint8_t>& b, const std::string& what) {
    deserialize_kernel_record(b, what);
  };
  // magic, version, name, the parameter count, then the first parameter's name: its kind.
  size_t kind_at = 8 + 4 + 4 + r.abi.name.size() + 4 + 4 + r.abi.params[0].name.size();
  std::string msg = read_error(with_byte(bytes, kind_at, 9), read);
  EXPECT_NE(msg.find("corrupt compiled kernel record: params[0].kind has an unknown value 9"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("edited"), std::string::npos) << msg;
  // The scalar of the first parameter's type: a value parameter needs a value type.
  msg = read_error(with_byte(bytes, kind_at + 1, 0), read);
  EXPECT_NE(msg.find("params[0].type is not a value type"), std::string::npos) << msg;
  // A parameter count beyond the cap.
  msg = read_error(with_byte(bytes, 8 + 4 + 4 + r.abi.name.size() + 3, 0x7f), read);
  EXPECT_NE(msg.find("params has an implausible count"), std::string::npos) << msg;
  // A count under the cap whose items cannot fit in the record (4000 = 0x0fa0): refused
  // before anything is allocated for them.
  size_t count_at = 8 + 4 + 4 + r.abi.name.size();
  msg = read_error(with_byte(with_byte(bytes, count_at, 0xa0), count_at + 1, 0x0f), read);
  EXPECT_NE(msg.find("params has a count of 4000 that does not fit in the"), std::string::npos)
      << msg;
  // The code cut off (its size stays): what is left is the checksum's 8 bytes.
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 8 - static_cast<long>(r.code.size()));
  cut.resize(cut.size() + 8);
  msg = read_error(with_byte(cut, 0, cut[0]), read);
  EXPECT_NE(msg.find("code is truncated"), std::string::npos) << msg;
}

TEST(SpirvKernelBlob, CorruptFieldsAreNamed) {
  SpirvKernel k = test::sample_spirv_kernel();
  std::vector<uint8_t> bytes = serialize_spirv_kernel(k);
  auto read = [](const std::vector<uint8_t>& b, const std::string& what) {
    deserialize_spirv_kernel(b, what);
  };
  // magic, version, the binding count, then the second binding's kind.
  size_t kind_at = 8 + 4 + 4 + 10 + 4;
  std::string msg = read_error(with_byte(bytes, kind_at, 77), read);
  EXPECT_NE(msg.find("corrupt SPIR-V kernel: bindings[1].kind has an unknown value 77"),
            std::string::npos)
      << msg;
  // The first task's workgroup size, just after its kind.
  size_t task_at = 8 + 4 + 4 + 10 * k.bindings.size() + 1 + 4 + 1;
  msg = read_error(with_byte(bytes, task_at, 0), read);
  EXPECT_NE(msg.find("tasks[0].workgroup_size is out of range [1, 4096]"), std::string::npos)
      << msg;
}
