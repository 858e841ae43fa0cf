#include "runtime/cpu/cpu_module.h"

#include <atomic>
#include <mutex>
#include <string>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "runtime/common/error.h"

namespace loom::cpu {

struct CpuModule::Jit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::mutex mutex;  // ORC sessions are thread-safe; this orders our JITDylib bookkeeping
  uint64_t next_id = 0;
};

namespace {

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

// Removes one kernel's JITDylib when the last LoadedCpuKernel sharing it goes.
struct DylibHandle {
  std::shared_ptr<void> jit;
  llvm::orc::LLJIT* lljit = nullptr;
  llvm::orc::JITDylib* dylib = nullptr;
  ~DylibHandle() {
    if (lljit && dylib) llvm::consumeError(lljit->getExecutionSession().removeJITDylib(*dylib));
  }
};

}  // namespace

CpuModule::CpuModule() : jit_(std::make_shared<Jit>()) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Vectorised math (_ZGVdN8v_sinf, ...) that objects may call; absent on non-glibc systems.
    llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  });
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) throw Error("cpu runtime: cannot create the object loader: " + message(jit.takeError()));
  jit_->jit = std::move(*jit);
}

CpuModule::~CpuModule() = default;

std::shared_ptr<LoadedCpuKernel> CpuModule::load(const KernelABI& abi,
                                                 const std::vector<uint8_t>& object) {
  Place place;
  place.kernel = abi.name;
  llvm::orc::LLJIT& jit = *jit_->jit;
  std::string name;
  {
    std::lock_guard<std::mutex> lock(jit_->mutex);
    name = "loom." + abi.name + "." + std::to_string(jit_->next_id++);
  }
  auto dylib = jit.createJITDylib(name);
  if (!dylib) throw Error(place, "cannot create a JITDylib: " + message(dylib.takeError()));
  auto handle = std::make_shared<DylibHandle>();
  handle->jit = jit_;
  handle->lljit = &jit;
  handle->dylib = &*dylib;

  auto search = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit.getDataLayout().getGlobalPrefix());
  if (!search) throw Error(place, "cannot search the process for symbols: " + message(search.takeError()));
  dylib->addGenerator(std::move(*search));

  llvm::StringRef bytes(reinterpret_cast<const char*>(object.data()), object.size());
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(bytes, name);
  if (llvm::Error e = jit.addObjectFile(*dylib, std::move(buffer)))
    throw Error(place, "cannot load the kernel's object code: " + message(std::move(e)));

  auto kernel = std::make_shared<LoadedCpuKernel>();
  kernel->abi = abi;
  kernel->code = handle;
  auto find = [&](const std::string& symbol) -> uint64_t {
    auto addr = jit.lookup(*dylib, symbol);
    if (!addr) throw Error(place, "symbol '" + symbol + "' not found: " + message(addr.takeError()));
    return addr->getValue();
  };
  for (const TaskDesc& desc : abi.tasks) {
    LoadedTask task;
    task.kind = desc.kind;
    task.dims = desc.dims;
    task.entry = reinterpret_cast<TaskEntry>(find(desc.symbol));
    if (!desc.extent_symbol.empty()) task.extent = reinterpret_cast<TaskExtent>(find(desc.extent_symbol));
    if (desc.kind != 0 && !task.extent) throw Error(place, "parallel task '" + desc.symbol + "' has no extent function");
    kernel->tasks.push_back(task);
  }
  // Optional: objects from the LLVM backend carry their assertion messages.
  if (auto table = jit.lookup(*dylib, "loom_assert_messages")) {
    for (auto* entry = reinterpret_cast<const char* const*>(table->getValue()); *entry; ++entry)
      kernel->assert_messages.emplace_back(*entry);
  } else {
    llvm::consumeError(table.takeError());
  }
  return kernel;
}

}  // namespace loom::cpu
