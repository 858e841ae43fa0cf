#include "tests/runtime/assemble.h"

#include <memory>
#include <mutex>
#include <stdexcept>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/Triple.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCObjectWriter.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

namespace loom::test {

std::vector<uint8_t> assemble_x86_64(const std::string& source) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmParser();
  });
  const std::string name = "x86_64-pc-linux-gnu";
  llvm::Triple triple(name);
  std::string problem;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(name, problem);
  if (!target) throw std::runtime_error("assemble: " + problem);
  llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> registers(target->createMCRegInfo(name));
  std::unique_ptr<llvm::MCAsmInfo> asm_info(target->createMCAsmInfo(*registers, name, options));
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(name, "x86-64", ""));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target->createMCInstrInfo());

  llvm::SourceMgr sources;
  std::string diagnostics;
  llvm::raw_string_ostream diag_stream(diagnostics);
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic& d, void* out) {
        d.print("asm", *static_cast<llvm::raw_string_ostream*>(out));
      },
      &diag_stream);
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "test.s"), llvm::SMLoc());
  llvm::MCContext context(triple, asm_info.get(), registers.get(), subtarget.get(), &sources,
                          &options);
  std::unique_ptr<llvm::MCObjectFileInfo> file_info(
      target->createMCObjectFileInfo(context, /*PIC=*/true));
  context.setObjectFileInfo(file_info.get());

  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  {
    std::unique_ptr<llvm::MCAsmBackend> backend(
        target->createMCAsmBackend(*subtarget, *registers, options));
    std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(os);
    std::unique_ptr<llvm::MCCodeEmitter> emitter(
        target->createMCCodeEmitter(*instructions, context));
    std::unique_ptr<llvm::MCStreamer> streamer(
        target->createMCObjectStreamer(triple, context, std::move(backend), std::move(writer),
                                       std::move(emitter), *subtarget, false, false, false));
    std::unique_ptr<llvm::MCAsmParser> parser(
        llvm::createMCAsmParser(sources, context, *streamer, *asm_info));
    std::unique_ptr<llvm::MCTargetAsmParser> target_parser(
        target->createMCAsmParser(*subtarget, *parser, *instructions, options));
    if (!target_parser) throw std::runtime_error("assemble: no x86-64 assembly parser");
    parser->setTargetParser(*target_parser);
    if (parser->Run(false)) throw std::runtime_error("assemble: " + diag_stream.str());
  }
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

}  // namespace loom::test
