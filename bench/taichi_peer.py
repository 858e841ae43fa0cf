#!/usr/bin/env python3
"""Taichi, the peer Loom measures against: the same kernels as bench/loom_bench.cpp on
Taichi's CPU backend, same sizes and thread count. Not part of the product or the tests.

    python3 -m venv /tmp/ti && /tmp/ti/bin/pip install taichi numpy
    /tmp/ti/bin/python bench/taichi_peer.py [--quick] [--threads N]
"""
import argparse
import os
import statistics
import time


def median_seconds(reps, fn):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()

    import numpy as np
    import taichi as ti

    ti.init(arch=ti.cpu, cpu_max_num_threads=args.threads, offline_cache=False, log_level=ti.WARN)
    n = (1 << 20) if args.quick else (1 << 24)
    side = 1024 if args.quick else 4096
    reps = 5 if args.quick else 15

    t0 = time.perf_counter()

    @ti.kernel
    def saxpy(a: ti.f32, x: ti.types.ndarray(ti.f32, ndim=1), y: ti.types.ndarray(ti.f32, ndim=1)):
        for i in x:
            y[i] = a * x[i] + y[i]

    @ti.kernel
    def stencil(k: ti.f32, src: ti.types.ndarray(ti.f32, ndim=2), dst: ti.types.ndarray(ti.f32, ndim=2)):
        for i, j in ti.ndrange((1, src.shape[0] - 1), (1, src.shape[1] - 1)):
            c = src[i, j]
            dst[i, j] = c + k * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1] - 4.0 * c)

    @ti.kernel
    def empty():
        pass

    x = ti.ndarray(ti.f32, shape=n)
    y = ti.ndarray(ti.f32, shape=n)
    x.from_numpy(np.full(n, 1.5, np.float32))
    y.from_numpy(np.full(n, 0.25, np.float32))
    ga = ti.ndarray(ti.f32, shape=(side, side))
    gb = ti.ndarray(ti.f32, shape=(side, side))
    ga.from_numpy((np.arange(side * side, dtype=np.float32) % 97 * 0.01).reshape(side, side))

    cold = {}
    for name, fn in (("saxpy", lambda: saxpy(0.5, x, y)), ("stencil", lambda: stencil(0.1, ga, gb)),
                     ("empty", empty)):
        t = time.perf_counter()
        fn()
        ti.sync()
        cold[name] = (time.perf_counter() - t) * 1e3

    def run_sync(fn):
        def go():
            fn()
            ti.sync()
        return go

    t_saxpy = median_seconds(reps, run_sync(lambda: saxpy(0.5, x, y)))
    t_stencil = median_seconds(reps, run_sync(lambda: stencil(0.1, ga, gb)))
    launches = 2000 if args.quick else 20000
    t_empty = median_seconds(5, lambda: [empty() for _ in range(launches)] and ti.sync()) / launches
    sx = ti.ndarray(ti.f32, shape=1024)
    sy = ti.ndarray(ti.f32, shape=1024)
    t_small = median_seconds(5, lambda: [saxpy(0.5, sx, sy) for _ in range(launches)] and ti.sync()) / launches

    print(f"taichi {ti.__version__} cpu, {args.threads} threads, {n} elements, {side}x{side} grid, median of {reps}")
    print(f"  saxpy        {3 * 4 * n / t_saxpy / 1e9:10.3f} GB/s")
    print(f"  stencil      {2 * 4 * side * side / t_stencil / 1e9:10.3f} GB/s")
    print(f"  empty kernel {t_empty * 1e6:10.3f} us per launch")
    print(f"  saxpy 1k     {t_small * 1e6:10.3f} us per launch")
    for name, ms in cold.items():
        print(f"  first launch of {name} (compile + run): {ms:.2f} ms")
    print(f"  total script time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
