// Atomic adds through private copies (element_ptr with `bits` copies, passes/
// privatize_scatter.h): the sums are those of the atomics, whether a chunk got a copy or not,
// launch after launch, and after a launch that stopped half way.
#include <cstring>
#include <vector>

#include "compiler/ir/private_copies.h"
#include "compiler/passes/pipeline.h"
#include "runtime/common/error.h"
#include "tests/codegen/harness.h"
#include "tests/passes/interpreter.h"

using namespace loom;
using namespace loom::test;

namespace {

// for i in [0, n): [bounds_check i < limit;] grid[i % cells] += i (i32, an atomic add)
// through `copies` private copies. Parameters: n, limit (i32). Tasks in the ABI: the check,
// the scatter, the merge, the reset.
std::unique_ptr<ir::Kernel> scatter(int cells, int copies, bool check = false,
                                    Scalar type = Scalar::I32) {
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "scatter";
  k->abi.params.push_back(value_param("n", {Scalar::I32}));
  k->abi.params.push_back(value_param("limit", {Scalar::I32}));
  int grid = add_field(*k, "grid", type, {cells});
  std::optional<ir::PrivateCopies> layout =
      ir::private_copies_layout(k->abi.resources[0], copies, 0);
  EXPECT_TRUE(layout.has_value());
  k->abi.temps_size = static_cast<uint32_t>(layout->end());
  Builder b(k->body.get());
  Inst* n = b.arg(Scalar::I32, 0);
  Inst* limit = b.arg(Scalar::I32, 1);
  Inst* task = range(b, {b.i32(0), n});
  b.set_insert_end(task->region(0));
  Inst* i = b.loop_index(task, 0);
  if (check) b.make(Op::BoundsCheck, Scalar::Void, {i, limit}, grid, 0);
  Inst* p = elem(b, type, grid, b.binary(Op::Mod, i, b.i32(cells)));
  p->bits = static_cast<uint64_t>(copies);
  p->set_temp_offset(0);
  b.atomic(ir::AtomicOp::Add, p, type == Scalar::I32 ? i : b.cast(type, i));
  return k;
}

struct Launcher {
  std::shared_ptr<cpu::LoadedCpuKernel> kernel;
  host::LaunchFrame frame;
  std::vector<int32_t> grid;
  explicit Launcher(ir::Kernel& k, int cells)
      : kernel(compile_and_load(k)), frame(kernel->abi), grid(static_cast<size_t>(cells), 0) {
    frame.bind(0, ResourceView{reinterpret_cast<uint8_t*>(grid.data()), {cells}});
  }
  void launch(cpu::CpuDevice& device, int32_t n, int32_t limit = 1 << 30) {
    frame.set_value<int32_t>(0, n);
    frame.set_value<int32_t>(1, limit);
    device.launch(*kernel, frame.context());
  }
  const int32_t* flags() { return reinterpret_cast<const int32_t*>(frame.context().temps); }
};

// Kernel integer adds wrap (two's complement), so the reference adds in unsigned arithmetic:
// a signed overflow here would be undefined behaviour (UBSan found one).
std::vector<int32_t> expected(int cells, int32_t n, int launches = 1) {
  std::vector<uint32_t> sums(static_cast<size_t>(cells), 0);
  for (int l = 0; l < launches; ++l)
    for (int32_t i = 0; i < n; ++i)
      sums[static_cast<size_t>(i % cells)] += static_cast<uint32_t>(i);
  return std::vector<int32_t>(sums.begin(), sums.end());
}

}  // namespace

TEST(PrivateCopies, TheTaskComesWithACheckAMergeAndAReset) {
  auto k = scatter(64, 4);
  codegen::CompiledCpuKernel c = codegen::compile_kernel_to_object(*k);
  ASSERT_EQ(c.abi.tasks.size(), 4u);
  EXPECT_EQ(c.abi.tasks[0].symbol, "loom_scatter_task0_private_check");
  EXPECT_EQ(c.abi.tasks[0].kind, 0);
  EXPECT_EQ(c.abi.tasks[1].symbol, "loom_scatter_task0");
  EXPECT_EQ(c.abi.tasks[1].kind, 1);
  EXPECT_EQ(c.abi.tasks[2].symbol, "loom_scatter_task0_private_merge");
  EXPECT_EQ(c.abi.tasks[2].kind, 1);
  EXPECT_EQ(c.abi.tasks[3].symbol, "loom_scatter_task0_private_reset");
  EXPECT_EQ(c.abi.tasks[3].kind, 0);
}

TEST(PrivateCopies, SumsAreThoseOfTheAtomicsLaunchAfterLaunch) {
  const int cells = 64;
  const int32_t n = 300000;
  auto k = scatter(cells, 4);
  Launcher l(*k, cells);
  for (int launch = 1; launch <= 3; ++launch) {
    l.launch(test_device(), n);
    EXPECT_EQ(l.grid, expected(cells, n, launch)) << "launch " << launch;
    for (int c = 0; c < 4; ++c) EXPECT_EQ(l.flags()[c], ir::kCopyFree) << "copy " << c;
  }
}

TEST(PrivateCopies, FloatSumsAgreeWithinRounding) {
  // Integers below 2^24 added as f32 in any grouping: partial sums stay exact while below
  // 2^24, so each cell's sum is exact here.
  const int cells = 1000;
  const int32_t n = 20000;
  auto k = scatter(cells, 3, false, Scalar::F32);
  codegen::CompiledCpuKernel c = codegen::compile_kernel_to_object(*k);
  auto kernel = test_module().load(c.abi, c.object);
  host::LaunchFrame frame(kernel->abi);
  std::vector<float> grid(cells, 0.0f);
  frame.bind(0, ResourceView{reinterpret_cast<uint8_t*>(grid.data()), {cells}});
  frame.set_value<int32_t>(0, n);
  frame.set_value<int32_t>(1, n);
  test_device().launch(*kernel, frame.context());
  for (int cell = 0; cell < cells; ++cell) {
    double sum = 0;
    for (int32_t i = cell; i < n; i += cells) sum += i;
    ASSERT_EQ(grid[static_cast<size_t>(cell)], static_cast<float>(sum)) << cell;
  }
}

TEST(PrivateCopies, AChunkThatFindsNoCopyFreeUsesTheAtomics) {
  // One thread, one copy, chunks in order: before chunk 1 the observer marks the copy taken
  // (as a chunk running on another thread would hold it), so chunk 1 takes the atomic path;
  // before chunk 2 it gives the copy back as it was (holding chunk 0's sums).
  const int cells = 32;
  const int32_t n = 200000;  // 8 chunks on one thread
  auto k = scatter(cells, 1);
  Launcher l(*k, cells);
  cpu::CpuDevice device(1);
  int chunks = 0;
  int32_t* flag = reinterpret_cast<int32_t*>(l.frame.context().temps);
  int32_t before = -1;
  device.set_chunk_observer([&](size_t task, int64_t, int64_t) {
    if (task != 1) return;
    if (chunks == 1) {
      before = *flag;
      *flag = ir::kCopyTaken;
    } else if (chunks == 2) {
      *flag = before;
    }
    ++chunks;
  });
  l.launch(device, n);
  EXPECT_GE(chunks, 3);
  EXPECT_EQ(before, ir::kCopyHoldsSums);  // chunk 0 added into the copy
  EXPECT_EQ(l.grid, expected(cells, n));
}

TEST(PrivateCopies, TooFewUpdatesForCopiesKeepTheAtomicsAndSkipTheMerge) {
  // 100 updates into 4096 cells: adding a copy into the grid would cost more than the atomics.
  const int cells = 4096;
  auto k = scatter(cells, 4);
  Launcher l(*k, cells);
  cpu::CpuDevice device(2);
  int merge_chunks = 0;
  device.set_chunk_observer([&](size_t task, int64_t, int64_t) { merge_chunks += task == 2; });
  l.launch(device, 100);
  EXPECT_EQ(l.grid, expected(cells, 100));
  EXPECT_EQ(merge_chunks, 0);
  // Enough updates: copies, and a merge.
  l.launch(device, 200000);
  std::vector<int32_t> want = expected(cells, 100);
  std::vector<int32_t> more = expected(cells, 200000);
  for (size_t c = 0; c < want.size(); ++c) want[c] += more[c];
  EXPECT_EQ(l.grid, want);
  EXPECT_GT(merge_chunks, 0);
}

TEST(PrivateCopies, CopiesLeftByALaunchThatStoppedAreCleared) {
  // A bounds check fails part way: chunks before it leave sums in copies, which no merge
  // adds. The next launch must not add them either.
  const int cells = 16;
  const int32_t n = 400000;
  auto k = scatter(cells, 4, /*check=*/true);
  Launcher l(*k, cells);
  cpu::CpuDevice device(1);  // chunks in order: the first ones complete before the failure
  EXPECT_THROW(l.launch(device, n, n / 2), Error);
  bool left = false;
  for (int c = 0; c < 4; ++c) left |= l.flags()[c] != ir::kCopyFree;
  EXPECT_TRUE(left) << "the failed launch should leave a copy in use";
  std::fill(l.grid.begin(), l.grid.end(), 0);
  l.launch(device, n);
  EXPECT_EQ(l.grid, expected(cells, n));
}

TEST(PrivateCopies, ThePipelinesKernelComputesWhatTheReferenceInterpreterDoes) {
  // for i in [0, n): d = data[i]; hist[d % 97] += d; hist[(3 * d) % 97] -= 1;
  //   pair[d % 16].y += 1 (an i32x2 field, SoA); total += 1 (0-d).
  // Through the whole pipeline with copies for 8 threads, run on 1, 3, 8 and 12 threads
  // (more threads than copies): integer sums, so every run must give the interpreter's.
  const int n = 100000;
  auto k = std::make_unique<ir::Kernel>();
  k->abi.name = "histogram";
  k->private_copies = 8;
  int data = add_field(*k, "data", Scalar::I32, {n});
  int hist = add_field(*k, "hist", Scalar::I32, {97});
  int pair = add_field(*k, "pair", Scalar::I32, {16});
  k->abi.resources[static_cast<size_t>(pair)].components = 2;
  k->abi.resources[static_cast<size_t>(pair)].layout = Layout::SoA;
  int total = add_field(*k, "total", Scalar::I32, {});
  {
    Builder b(k->body.get());
    Inst* loop = b.range_for({b.i32(0), b.i32(n)});
    b.set_insert_end(loop->region(0));
    Inst* i = b.loop_index(loop, 0);
    Inst* d = b.global_load(b.global_ptr(Scalar::I32, data, {i}));
    b.atomic(ir::AtomicOp::Add, b.global_ptr(Scalar::I32, hist, {b.binary(Op::Mod, d, b.i32(97))}),
             d);
    Inst* d3 = b.binary(Op::Mul, d, b.i32(3));
    b.atomic(ir::AtomicOp::Sub, b.global_ptr(Scalar::I32, hist, {b.binary(Op::Mod, d3, b.i32(97))}),
             b.i32(1));
    Inst* y = b.global_ptr(Scalar::I32, pair, {b.binary(Op::Mod, d, b.i32(16))});
    y->set_component(1);
    b.atomic(ir::AtomicOp::Add, y, b.i32(1));
    b.atomic(ir::AtomicOp::Add, b.global_ptr(Scalar::I32, total, {}), b.i32(1));
  }
  auto value_of = [](int64_t i) { return static_cast<int32_t>((i * 7919 + 13) % 1000); };
  passes::testing::Memory want =
      passes::testing::make_memory(*k, {}, [&](int slot, int64_t i) -> uint64_t {
        return slot == 0 ? static_cast<uint64_t>(static_cast<int64_t>(value_of(i))) : 0;
      });
  passes::testing::Interpreter(*k, want).run();
  ASSERT_EQ(want.errors, 0);

  passes::run_pipeline(*k, {});
  std::string ir = ir::print_kernel(*k);
  for (int slot : {hist, pair, total})
    ASSERT_NE(ir.find("element_ptr $" + std::to_string(slot) + " private 8 "), std::string::npos)
        << ir;
  codegen::CompiledCpuKernel c = codegen::compile_kernel_to_object(*k);
  auto kernel = test_module().load(c.abi, c.object);
  for (int threads : {1, 3, 8, 12}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    cpu::CpuDevice device(threads);
    host::LaunchFrame frame(kernel->abi);
    std::vector<std::vector<int32_t>> memory = {
        std::vector<int32_t>(n), std::vector<int32_t>(97, 0), std::vector<int32_t>(32, 0), {0}};
    for (int i = 0; i < n; ++i) memory[0][static_cast<size_t>(i)] = value_of(i);
    const int64_t shapes[] = {n, 97, 16, 0};
    for (size_t s = 0; s < memory.size(); ++s)
      frame.bind(static_cast<int>(s),
                 ResourceView{reinterpret_cast<uint8_t*>(memory[s].data()), {shapes[s]}});
    device.launch(*kernel, frame.context());
    for (size_t s = 1; s < memory.size(); ++s)
      for (size_t e = 0; e < memory[s].size(); ++e)
        ASSERT_EQ(memory[s][e], static_cast<int32_t>(want.slots[s][e]))
            << kernel->abi.resources[s].field << "[" << e << "]";
  }
}

TEST(PrivateCopies, SizeNotesNameTheIrTask) {
  // The scatter (4 ABI tasks: check, scatter, merge, reset), then a serial task (the 5th): what
  // the size limits say names IR tasks 0 and 1 and, for the tasks copies bring, what they are.
  auto k = scatter(64, 4);
  Builder b(k->body.get());
  Inst* task = serial(b);
  Builder in(task->region(0));
  store(in, 0, in.i32(0), in.i32(7));
  k->task_notes = {{9, true, "parallel"}, {5, false, "serial"}};
  codegen::CpuCodegenOptions limited;
  limited.max_optimized_instructions = 1;  // every function gets a note
  codegen::CompiledCpuKernel c = codegen::compile_kernel_to_object(*k, limited);
  ASSERT_EQ(c.abi.tasks.size(), 5u);
  std::string notes;
  for (const std::string& n : c.notes) notes += n + "\n";
  for (const char* place :
       {"task 0 (node 9)'s private check: ", "task 0 (node 9): ",
        "task 0 (node 9)'s extent function: ", "task 0 (node 9)'s private merge: ",
        "task 0 (node 9)'s private merge's extent function: ", "task 0 (node 9)'s private reset: ",
        "task 1 (node 5): "})
    EXPECT_NE(notes.find(place), std::string::npos) << place << "\n" << notes;
}
