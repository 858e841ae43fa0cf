#!/usr/bin/env python3
"""Taichi, the peer, on the reductions of bench/reduction_bench.cpp: a 16M-element f32 sum
and i32 max over ndarrays, on Taichi's CPU backend with the same thread count, in the form
that runs fastest there (`for i in range(n)` over an ndarray; a kernel returning the total,
which Taichi turns into a parallel reduction). Not part of the product or the tests.

    python3 -m venv /tmp/ti && /tmp/ti/bin/pip install taichi numpy
    /tmp/ti/bin/python bench/taichi_reduction_peer.py [--threads N] [--runs R]
"""
import argparse
import os
import statistics
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument("--n", type=int, default=1 << 24)
    args = parser.parse_args()

    import numpy as np
    import taichi as ti

    ti.init(arch=ti.cpu, cpu_max_num_threads=args.threads, offline_cache=True, log_level=ti.WARN)

    @ti.kernel
    def sum_f32(x: ti.types.ndarray(ti.f32, ndim=1)) -> ti.f32:
        total = 0.0
        for i in range(x.shape[0]):
            total += x[i]
        return total

    @ti.kernel
    def max_i32(x: ti.types.ndarray(ti.i32, ndim=1)) -> ti.i32:
        best = -2147483648
        for i in range(x.shape[0]):
            ti.atomic_max(best, x[i])
        return best

    n = args.n
    rng = np.random.default_rng(1)
    xf = ti.ndarray(ti.f32, n)
    xf.from_numpy(rng.random(n, dtype=np.float32))
    xi = ti.ndarray(ti.i32, n)
    xi.from_numpy(rng.integers(-1000000, 1000000, n, dtype=np.int32))

    def median_ms(fn):
        fn()
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e3

    t_sum = median_ms(lambda: sum_f32(xf))
    t_max = median_ms(lambda: max_i32(xi))
    print(f"taichi {ti.__version__} cpu, {args.threads} threads, {n} elements, median of {args.runs}")
    print(f"  f32 sum {t_sum:8.3f} ms  {4 * n / t_sum / 1e6:6.1f} GB/s")
    print(f"  i32 max {t_max:8.3f} ms  {4 * n / t_max / 1e6:6.1f} GB/s")


if __name__ == "__main__":
    main()
