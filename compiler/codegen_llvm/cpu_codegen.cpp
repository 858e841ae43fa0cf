#include "compiler/codegen_llvm/cpu_codegen.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "compiler/codegen_llvm/emit_llvm.h"
#include "compiler/ir/inst.h"
#include "runtime/common/error.h"

namespace loom::codegen {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string host_features() {
  llvm::StringMap<bool> map;
  llvm::SubtargetFeatures features;
  if (llvm::sys::getHostCPUFeatures(map))
    for (auto& kv : map) features.AddFeature(kv.first(), kv.second);
  return features.getString();
}

const llvm::Target& native_target(const std::string& triple) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string problem;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, problem);
  if (!target) throw Error("codegen: no LLVM target for " + triple + ": " + problem);
  return *target;
}

// LLVM only warns about a CPU name it does not know and then compiles for a generic CPU
// (or aborts: a 32-bit subtarget for 64-bit code), so the name is checked first.
void check_cpu_name(const llvm::Target& target, const std::string& triple, const std::string& cpu) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(triple, "", ""));
  if (sti && sti->isCPUStringValid(cpu)) return;
  throw Error("codegen: '" + cpu + "' is not a CPU LLVM knows for " + triple +
              " (try x86-64-v2, x86-64-v3, x86-64-v4, skylake, znver3, or host)");
}

std::unique_ptr<llvm::TargetMachine> target_machine(const CpuCodegenOptions& o) {
  int opt_level = o.opt_level;
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target* target = &native_target(triple);
  if (!o.cpu.empty()) check_cpu_name(*target, triple, o.cpu);
  llvm::CodeGenOpt::Level level = opt_level <= 0   ? llvm::CodeGenOpt::None
                                  : opt_level == 1 ? llvm::CodeGenOpt::Less
                                  : opt_level == 2 ? llvm::CodeGenOpt::Default
                                                   : llvm::CodeGenOpt::Aggressive;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, o.cpu.empty() ? llvm::sys::getHostCPUName() : llvm::StringRef(o.cpu),
      o.cpu.empty() ? host_features() : o.features, options, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, level));
  if (!tm) throw Error("codegen: cannot create a target machine for CPU '" + o.cpu + "'");
  return tm;
}

// The CPU features the object may use, "+name,..." in getHostCPUFeatures' spelling: those
// the host detector reports on (instruction-set features, not tuning flags) that the target
// has. The runtime refuses the object on a CPU lacking one (runtime/cpu/host_cpu.h).
std::string required_features(const llvm::TargetMachine& tm) {
  llvm::StringMap<bool> host;
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  if (!sti || !llvm::sys::getHostCPUFeatures(host)) return "";
  std::vector<std::string> names;
  for (const auto& kv : host) {
    std::string feature = "+" + kv.first().str();
    if (sti->checkFeatures(feature)) names.push_back(feature);
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// Kernels never throw, so LLVM infers `nounwind` and would emit no unwind table for them;
// asynchronous unwind tables (CFI only: the code is the same) let runtime/cpu register an
// .eh_frame, so backtrace(), debuggers and profilers' stack walks go through kernel frames.
// Set on every definition just before emission, after the passes that may add functions,
// and left out of the IR dump.
void keep_unwind_tables(llvm::Module& module) {
  for (llvm::Function& f : module)
    if (!f.isDeclaration()) f.setUWTableKind(llvm::UWTableKind::Async);
}

// `const char loom_cpu_features[]`, read by runtime/cpu/cpu_module.cpp.
void record_features(llvm::Module& module, const std::string& features) {
  auto* text = llvm::ConstantDataArray::getString(module.getContext(), features);
  new llvm::GlobalVariable(module, text->getType(), true, llvm::GlobalValue::ExternalLinkage, text,
                           "loom_cpu_features");
}

}  // namespace

CpuTarget describe_cpu_target(const CpuCodegenOptions& options,
                              const std::vector<std::string>& candidates) {
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(options);
  const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
  CpuTarget t;
  t.cpu = tm->getTargetCPU().str();
  for (const std::string& f : candidates)
    if (sti->checkFeatures("+" + f)) t.features.push_back(f);
  std::sort(t.features.begin(), t.features.end());
  return t;
}

std::string default_module_cpu() {
  return llvm::Triple(llvm::sys::getProcessTriple()).getArch() == llvm::Triple::x86_64 ? "x86-64-v2"
                                                                                       : "";
}

namespace {

// libmvec's 8-wide entry points need AVX2; on other targets keep the scalar libm calls.
bool use_libmvec(llvm::TargetMachine& tm, const CpuCodegenOptions& options) {
  if (!options.vector_math || !tm.getTargetTriple().isX86() || !tm.getTargetTriple().isOSLinux())
    return false;
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  return sti && sti->checkFeatures("+avx2,+fma");
}

void optimize(llvm::Module& module, llvm::TargetMachine& tm, const CpuCodegenOptions& options) {
  int opt_level = options.opt_level;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  llvm::Triple triple(module.getTargetTriple());
  llvm::TargetLibraryInfoImpl library(triple);
  if (use_libmvec(tm, options))
    library.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      opt_level <= 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

struct Lowered {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::unique_ptr<llvm::Module> module;
  std::vector<TaskDesc> tasks;
};

Lowered lower(const ir::Kernel& kernel, const CpuCodegenOptions& options, bool optimized,
              CodegenTimings* timings) {
  Lowered out;
  out.context = std::make_unique<llvm::LLVMContext>();
  out.tm = target_machine(options);
  EmitOptions emit;
  emit.fast_math = options.fast_math && kernel.fast_math;
  emit.cancel_checks = options.cancel_checks;
  emit.cpu = out.tm->getTargetCPU().str();
  emit.features = out.tm->getTargetFeatureString().str();
  emit.triple = out.tm->getTargetTriple().str();
  emit.data_layout = out.tm->createDataLayout().getStringRepresentation();
  auto start = Clock::now();
  out.module = emit_kernel_module(kernel, *out.context, emit, &out.tasks);
  if (timings) timings->emit_ms = ms_since(start);
  if (optimized) {
    start = Clock::now();
    optimize(*out.module, *out.tm, options);
    if (timings) timings->optimize_ms = ms_since(start);
  }
  return out;
}

}  // namespace

CompiledCpuKernel compile_kernel_to_object(const ir::Kernel& kernel,
                                           const CpuCodegenOptions& options,
                                           CodegenTimings* timings) {
  Lowered l = lower(kernel, options, true, timings);
  record_features(*l.module, required_features(*l.tm));
  keep_unwind_tables(*l.module);
  auto start = Clock::now();
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (l.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    throw Error("codegen: the host target cannot emit object files");
  pm.run(*l.module);
  if (timings) timings->object_ms = ms_since(start);

  CompiledCpuKernel out;
  out.abi = kernel.abi;
  out.abi.tasks = l.tasks;
  out.object.assign(buffer.begin(), buffer.end());
  return out;
}

std::string dump_llvm_ir(const ir::Kernel& kernel, const CpuCodegenOptions& options,
                         bool optimized) {
  Lowered l = lower(kernel, options, optimized, nullptr);
  std::string text;
  llvm::raw_string_ostream os(text);
  l.module->print(os, nullptr);
  return os.str();
}

}  // namespace loom::codegen
