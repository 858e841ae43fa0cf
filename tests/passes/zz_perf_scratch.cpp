#include <chrono>
#include <random>
#include "compiler/passes/pipeline.h"
#include "tests/passes/pass_test_util.h"
using namespace loom; using namespace loom::ir; using namespace loom::passes; using namespace loom::passes::testing;
TEST(Scratch, Big) {
  auto k = new_kernel("big");
  add_value_param(*k, "a", Scalar::F32);
  int x = add_ndarray(*k, "x", Scalar::F32, 2);
  Builder b(k->body.get());
  Inst* a = b.arg(Scalar::F32, 0);
  Inst* loop = b.range_for({b.i32(0), b.i32(64), b.i32(0), b.i32(64)});
  b.set_insert_end(loop->region(0));
  Inst* i = b.loop_index(loop, 0);
  Inst* j = b.loop_index(loop, 1);
  std::mt19937 rng(1);
  std::vector<Inst*> vals{a, b.global_load(b.global_ptr(Scalar::F32, x, {i, j}))};
  Inst* v = b.alloca_(Scalar::F32);
  for (int n = 0; n < 20000; ++n) {
    Inst* p = vals[rng() % vals.size()];
    Inst* q = vals[rng() % vals.size()];
    Inst* r;
    switch (rng() % 5) {
      case 0: r = b.binary(Op::Add, p, q); break;
      case 1: r = b.binary(Op::Mul, p, b.i32(static_cast<int>(rng() % 4))); break;  // needs conversion
      case 2: b.local_store(v, p); r = b.local_load(v); break;
      case 3: r = b.global_load(b.global_ptr(Scalar::F32, x, {i, b.binary(Op::Add, j, b.i32(static_cast<int>(rng() % 3)))})); break;
      default: r = b.binary(Op::Sub, p, q); break;
    }
    vals.push_back(r);
  }
  b.global_store(b.global_ptr(Scalar::F32, x, {i, j}), vals.back());
  std::vector<PassTiming> t;
  auto s = std::chrono::steady_clock::now();
  run_pipeline(*k, {.debug = true}, {}, &t);
  auto e = std::chrono::steady_clock::now();
  for (auto& p : t) printf("%s %.1f ms\n", p.pass.c_str(), p.ms);
  { std::string ir = print_kernel(*k); printf("%s\n", ir.substr(0, 3000).c_str()); printf("chars %zu\n", ir.size()); }
  printf("total %.1f ms\n", std::chrono::duration<double, std::milli>(e - s).count());
}
