#include "compiler/codegen_llvm/cpu_codegen.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_set>

#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/SubtargetFeature.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
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

// How big a function is for the size limits of CpuCodegenOptions.
struct FunctionSize {
  size_t instructions = 0;
  size_t loop_accesses = 0;  // loads and stores of its busiest innermost loop
};

FunctionSize measure(llvm::Function& f) {
  FunctionSize size;
  for (llvm::BasicBlock& block : f) size.instructions += block.size();
  llvm::DominatorTree dominators(f);
  llvm::LoopInfo loops(dominators);
  for (llvm::Loop* top : loops)
    for (llvm::Loop* loop : llvm::depth_first(top)) {
      if (!loop->isInnermost()) continue;
      size_t accesses = 0;
      // Variables (allocas) become registers before the loop passes run: not counted.
      for (llvm::BasicBlock* block : loop->blocks())
        for (llvm::Instruction& inst : *block)
          if (const llvm::Value* p = llvm::getLoadStorePointerOperand(&inst))
            accesses += !llvm::isa<llvm::AllocaInst>(p);
      size.loop_accesses = std::max(size.loop_accesses, accesses);
    }
  return size;
}

// LLVM's instruction selection puts each floating-point constant an instruction uses in the
// function's constant pool, and the pool looks for an equal entry by comparing with every entry
// it has (MachineConstantPool::getConstantPoolIndex): quadratic in the distinct constants, 26 s
// for a function storing 100,000 of them. In a function left unoptimised, each use instead
// reads an integer immediate through a bitcast instruction, so no constant reaches the pool.
// Done after the optimisation pipeline, whose module passes (constant propagation) would fold
// the bitcasts back.
void materialize_float_constants(llvm::Function& f) {
  for (llvm::BasicBlock& block : f)
    for (llvm::Instruction& inst : block) {
      auto* call = llvm::dyn_cast<llvm::CallBase>(&inst);
      for (unsigned i = 0; i < inst.getNumOperands(); ++i) {
        auto* c = llvm::dyn_cast<llvm::ConstantFP>(inst.getOperand(i));
        if (!c || (call && i < call->arg_size() && call->paramHasAttr(i, llvm::Attribute::ImmArg)))
          continue;
        llvm::Type* bits =
            llvm::IntegerType::get(f.getContext(), c->getType()->getPrimitiveSizeInBits());
        llvm::Instruction* at = &inst;
        if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&inst))
          at = phi->getIncomingBlock(i)->getTerminator();
        inst.setOperand(i, new llvm::BitCastInst(
                               llvm::ConstantInt::get(bits, c->getValueAPF().bitcastToAPInt()),
                               c->getType(), "", at));
      }
    }
}

// What the size limits leave out, function by function.
struct SizeLimits {
  std::unordered_set<const llvm::Function*> no_loop_dependences;  // no LoopVectorize, LLE
  std::vector<std::string> unoptimized;                           // made optnone, by name
  std::vector<std::string> notes;
};

// "task 2 (node 7)" for a task's function (or its extent function), else "function NAME".
std::string function_place(const llvm::Function& f, const ir::Kernel& kernel,
                           const std::vector<TaskDesc>& tasks) {
  std::string name = f.getName().str();
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].symbol != name && tasks[t].extent_symbol != name) continue;
    std::string place = "task " + std::to_string(t);
    if (t < kernel.task_notes.size() && kernel.task_notes[t].node >= 0)
      place += " (node " + std::to_string(kernel.task_notes[t].node) + ")";
    return tasks[t].extent_symbol == name ? place + "'s extent function" : place;
  }
  return "function " + name;
}

// Applies CpuCodegenOptions' size limits before optimisation: a function over the instruction
// limit becomes `optnone` (every optimisation pass and the backend's optimisations skip it),
// one with a loop over the access limit is listed for the pass callback in optimize().
SizeLimits apply_size_limits(llvm::Module& module, const ir::Kernel& kernel,
                             const std::vector<TaskDesc>& tasks, const CpuCodegenOptions& o) {
  SizeLimits limits;
  if (o.opt_level <= 0) return limits;
  for (llvm::Function& f : module) {
    if (f.isDeclaration() || f.hasOptNone()) continue;
    FunctionSize size = measure(f);
    if (o.max_optimized_instructions && size.instructions > o.max_optimized_instructions) {
      f.addFnAttr(llvm::Attribute::OptimizeNone);
      f.addFnAttr(llvm::Attribute::NoInline);
      f.removeFnAttr(llvm::Attribute::AlwaysInline);
      limits.unoptimized.push_back(f.getName().str());
      limits.notes.push_back(
          function_place(f, kernel, tasks) + ": " + std::to_string(size.instructions) +
          " LLVM instructions, more than " + std::to_string(o.max_optimized_instructions) +
          ": compiled without LLVM's optimisations, whose time grows faster than the code "
          "(Loom's own passes ran)");
      continue;
    }
    if (o.max_loop_accesses && size.loop_accesses > o.max_loop_accesses) {
      limits.no_loop_dependences.insert(&f);
      limits.notes.push_back(function_place(f, kernel, tasks) + ": a loop with " +
                             std::to_string(size.loop_accesses) + " loads and stores, more than " +
                             std::to_string(o.max_loop_accesses) +
                             ": not vectorised by LLVM, whose dependence analysis compares "
                             "every pair of a loop's accesses");
    }
  }
  return limits;
}

void optimize(llvm::Module& module, llvm::TargetMachine& tm, const CpuCodegenOptions& options,
              const SizeLimits& limits) {
  int opt_level = options.opt_level;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  // Optional passes skip `optnone` functions (the new pass manager leaves that to this
  // instrumentation), and those running loop dependence analysis skip the functions listed.
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::OptNoneInstrumentation optnone(false);
  optnone.registerCallbacks(callbacks);
  callbacks.registerShouldRunOptionalPassCallback([&](llvm::StringRef pass, llvm::Any ir) {
    if (pass != "LoopVectorizePass" && pass != "LoopLoadEliminationPass") return true;
    const auto* f = llvm::any_cast<const llvm::Function*>(&ir);
    return !f || !limits.no_loop_dependences.count(*f);
  });
  llvm::PassBuilder pb(&tm, tuning, llvm::None, &callbacks);
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
  std::vector<std::string> notes;  // what the size limits changed
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
    SizeLimits limits = apply_size_limits(*out.module, kernel, out.tasks, options);
    out.notes = std::move(limits.notes);
    optimize(*out.module, *out.tm, options, limits);
    for (const std::string& name : limits.unoptimized)
      if (llvm::Function* f = out.module->getFunction(name)) materialize_float_constants(*f);
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
  out.notes = std::move(l.notes);
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
