#include "runtime/cpu/cpu_module.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/common/error.h"
#include "runtime/cpu/elf_loader.h"
#include "runtime/cpu/host_cpu.h"
#include "runtime/cpu/perf_map.h"

namespace loom::cpu {

namespace {

// Written by compiler/codegen_llvm: the "+feature,..." list the code was compiled for.
constexpr const char* kCpuFeaturesSymbol = "loom_cpu_features";
constexpr const char* kAssertMessagesSymbol = "loom_assert_messages";

void check_cpu_features(const ElfImage& image, const Place& place) {
  std::optional<ElfSymbol> symbol = image.find(kCpuFeaturesSymbol);
  if (!symbol) return;  // the object states no requirement
  std::optional<std::string_view> text =
      symbol->data ? image.string_at(symbol->address) : std::nullopt;
  if (!text)
    throw Error(
        place, std::string("object code is corrupt: '") + kCpuFeaturesSymbol + "' is not a string");
  std::vector<std::string> required;
  for (size_t begin = 0; begin <= text->size();) {
    size_t end = std::min(text->find(',', begin), text->size());
    std::string_view name = text->substr(begin, end - begin);
    if (name.starts_with('+')) required.emplace_back(name);
    begin = end + 1;
  }
  std::vector<std::string> missing = missing_cpu_features(required);
  if (missing.empty()) return;
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw Error(place, "the kernel was compiled for CPU features this CPU lacks: " + list +
                         " (recompile it for this CPU or a baseline such as x86-64-v2)");
}

// The null-terminated `const char* loom_assert_messages[]`, every pointer checked.
std::vector<std::string> assert_messages(const ElfImage& image, const Place& place) {
  std::vector<std::string> out;
  std::optional<ElfSymbol> table = image.find(kAssertMessagesSymbol);
  if (!table) return out;
  auto corrupt = [&](const std::string& what) {
    return Error(place,
                 std::string("object code is corrupt: '") + kAssertMessagesSymbol + "' " + what);
  };
  if (!table->data) throw corrupt("is not data");
  for (uint64_t i = 0; i < table->size / sizeof(const char*); ++i) {
    const char* entry = nullptr;
    std::memcpy(&entry, table->address + i * sizeof entry, sizeof entry);
    if (!entry) return out;
    std::optional<std::string_view> text = image.string_at(entry);
    if (!text) throw corrupt("entry " + std::to_string(i) + " points outside the kernel's code");
    out.emplace_back(*text);
  }
  throw corrupt("has no terminating null entry");
}

}  // namespace

CpuModule::CpuModule(ElfLoadOptions options) : options_(std::move(options)) {
  load_vector_math_library();
}

CpuModule::~CpuModule() = default;

std::shared_ptr<LoadedCpuKernel> CpuModule::load(const KernelABI& abi,
                                                 const std::vector<uint8_t>& object) {
  Place place;
  place.kernel = abi.name;
  std::shared_ptr<ElfImage> image = ElfImage::load(object, place, options_);
  check_cpu_features(*image, place);

  auto kernel = std::make_shared<LoadedCpuKernel>();
  kernel->abi = abi;
  auto code = [&](const std::string& symbol) -> uintptr_t {
    std::optional<ElfSymbol> found = image->find(symbol);
    if (!found) throw Error(place, "symbol '" + symbol + "' not found in the kernel's object code");
    if (!found->code)
      throw Error(place, "symbol '" + symbol + "' in the kernel's object code is not code");
    perf_map_add(found->address, found->size, abi.name, symbol);
    return reinterpret_cast<uintptr_t>(found->address);
  };
  for (const TaskDesc& desc : abi.tasks) {
    LoadedTask task;
    task.kind = desc.kind;
    task.dims = desc.dims;
    task.entry = reinterpret_cast<TaskEntry>(code(desc.symbol));
    if (!desc.extent_symbol.empty())
      task.extent = reinterpret_cast<TaskExtent>(code(desc.extent_symbol));
    if (desc.kind != 0 && !task.extent)
      throw Error(place, "parallel task '" + desc.symbol + "' has no extent function");
    kernel->tasks.push_back(task);
  }
  kernel->assert_messages = assert_messages(*image, place);
  kernel->code = std::move(image);
  return kernel;
}

}  // namespace loom::cpu
