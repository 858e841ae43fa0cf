#!/usr/bin/env python3
"""Taichi, the peer, on a GPU: the kernels of bench/vulkan_bench.cpp (saxpy on 16M elements,
the 5-point stencil on 4096x4096, a scatter of 1M particles into a 256x256 grid with 27 float
atomic adds each, a 16M-element f32 sum) in the form that runs fastest in Taichi 1.7.4
(ndarrays, `for i in range(n)` / `ti.ndrange`; the sum as a kernel returning the total), timed
like loom_vulkan_bench: a batch of launches then `ti.sync()`, the median of several batches.
Not part of the product or the tests.

    python3 bench/taichi_gpu_peer.py --arch cuda      # or vulkan; --quick: the small sizes

It prints one line per kernel: the time per launch and the bytes moved per second, so the
figures sit beside loom_vulkan_bench's on the same device.
"""
import argparse
import statistics
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="cuda", choices=["cuda", "vulkan"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    import numpy as np
    import taichi as ti

    ti.init(arch=getattr(ti, args.arch), offline_cache=False, log_level=ti.WARN)
    n = (1 << 20) if args.quick else (1 << 24)
    side = 1024 if args.quick else 4096
    particles = (1 << 16) if args.quick else (1 << 20)
    grid = 128 if args.quick else 256
    batch = 4 if args.quick else 10

    @ti.kernel
    def saxpy(a: ti.f32, x: ti.types.ndarray(ti.f32, ndim=1), y: ti.types.ndarray(ti.f32, ndim=1)):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    @ti.kernel
    def stencil(k: ti.f32, src: ti.types.ndarray(ti.f32, ndim=2), dst: ti.types.ndarray(ti.f32, ndim=2)):
        for i, j in ti.ndrange((1, src.shape[0] - 1), (1, src.shape[1] - 1)):
            c = src[i, j]
            dst[i, j] = c + k * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1] - 4.0 * c)

    @ti.kernel
    def scatter(g: ti.f32, x: ti.types.ndarray(ti.math.vec2, ndim=1), v: ti.types.ndarray(ti.math.vec2, ndim=1),
                gm: ti.types.ndarray(ti.f32, ndim=2), gv: ti.types.ndarray(ti.math.vec2, ndim=2)):
        for p in range(x.shape[0]):
            xp = x[p] * g
            base = ti.cast(xp - 0.5, ti.i32)
            f = xp - ti.cast(base, ti.f32)
            w = [0.5 * (1.5 - f) ** 2, 0.75 - (f - 1.0) ** 2, 0.5 * (f - 0.5) ** 2]
            vel = v[p]
            for i, j in ti.static(ti.ndrange(3, 3)):
                weight = w[i][0] * w[j][1]
                gm[base[0] + i, base[1] + j] += weight
                gv[base[0] + i, base[1] + j] += weight * vel

    @ti.kernel
    def sum_f32(x: ti.types.ndarray(ti.f32, ndim=1)) -> ti.f32:
        total = 0.0
        for i in range(x.shape[0]):
            total += x[i]
        return total

    rng = np.random.default_rng(1)

    def array(dtype, shape, values):
        a = ti.ndarray(dtype, shape)
        a.from_numpy(values)
        return a

    x = array(ti.f32, n, rng.random(n, dtype=np.float32))
    y = array(ti.f32, n, rng.random(n, dtype=np.float32))
    src = array(ti.f32, (side, side), rng.random((side, side), dtype=np.float32))
    dst = array(ti.f32, (side, side), np.zeros((side, side), np.float32))
    px = ti.ndarray(ti.math.vec2, particles)
    px.from_numpy(rng.uniform(0.1, 0.9, (particles, 2)).astype(np.float32))
    pv = ti.ndarray(ti.math.vec2, particles)
    pv.from_numpy(rng.uniform(-1, 1, (particles, 2)).astype(np.float32))
    gm = array(ti.f32, (grid, grid), np.zeros((grid, grid), np.float32))
    gv = ti.ndarray(ti.math.vec2, (grid, grid))
    gv.from_numpy(np.zeros((grid, grid, 2), np.float32))

    def per_launch_us(launch):
        launch()  # compiles
        ti.sync()
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            for _ in range(batch):
                launch()
            ti.sync()
            times.append((time.perf_counter() - t0) / batch)
        return statistics.median(times) * 1e6

    rows = [
        ("saxpy", lambda: saxpy(2.0, x, y), 12.0 * n),
        ("stencil", lambda: stencil(0.1, src, dst), 8.0 * (side - 2) ** 2),
        ("scatter", lambda: scatter(float(grid), px, pv, gm, gv), 0.0),
        ("sum", lambda: sum_f32(x), 4.0 * n),
    ]
    print(f"taichi {ti.__version__} {args.arch}: median of {args.runs} batches of {batch} launches then a sync")
    for name, launch, bytes_moved in rows:
        us = per_launch_us(launch)
        bandwidth = f"{bytes_moved / us / 1e3:8.1f} GB/s" if bytes_moved else ""
        print(f"  {name:8s} {us:10.1f} us per launch {bandwidth}")


if __name__ == "__main__":
    main()
