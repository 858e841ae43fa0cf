#!/usr/bin/env python3
"""Taichi, the peer Loom measures against: the same kernels as bench/loom_bench.cpp on
Taichi's CPU backend, same sizes and thread count. Not part of the product or the tests.

    python3 -m venv /tmp/ti && /tmp/ti/bin/pip install taichi==1.7.4 numpy
    /tmp/ti/bin/python bench/taichi_peer.py [--quick] [--threads N]

With --serve it runs the whole samples of bench/sim_bench.cpp instead (mpm88 at 8k and 256k
particles, n-body, cloth: the programs of bench/graphs/mpm88_*.loom.json and
assets/graphs/{nbody,cloth}.loom.json), one command per line on stdin, so that
`loom_sim_bench --taichi /tmp/ti/bin/python` interleaves Taichi's runs with Loom's:

    setup NAME   builds NAME in both forms, fields and ndarrays (each kernel taking its arrays as
                 arguments: `ti.template()` fields or `ti.types.ndarray`, loops over `range` /
                 `ti.ndrange` either way), times a few runs of each and keeps the faster;
                 replies "ok FORM MS_FIELDS MS_NDARRAYS"
    run          one run of NAME (mpm88: 10 substeps; n-body: 1 step; cloth: 5 substeps),
                 synchronised; replies its seconds
    quit

(`for i in ndarray` loops are not used: on Taichi 1.7.4's CPU backend they run about 7x slower
than `range`.) Each Taichi program is one kernel per substep holding its loops, as Taichi's own
examples write them; Loom's documents launch one kernel per loop.
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


# ---- whole samples (--serve)

def mpm88_program(ti, form, n, grid, dt):
    """Taichi's mpm88 example with Loom's seed (a lattice): returns (init, run)."""
    dx = 1.0 / grid
    inv_dx = float(grid)
    p_vol = (dx * 0.5) ** 2
    p_mass = p_vol
    E = 400.0
    bound = 3
    cols = 64
    while n // cols > 2 * cols:
        cols *= 2
    sx, sy = 0.4 / cols, 0.4 / (n // cols)
    vec2, mat2 = ti.math.vec2, ti.math.mat2
    if form == "fields":
        x, v = ti.Vector.field(2, ti.f32, n), ti.Vector.field(2, ti.f32, n)
        C, J = ti.Matrix.field(2, 2, ti.f32, n), ti.field(ti.f32, n)
        grid_v, grid_m = ti.Vector.field(2, ti.f32, (grid, grid)), ti.field(ti.f32, (grid, grid))
        A1v = A1m = A1 = A2v = A2 = ti.template()
    else:
        x, v = ti.ndarray(vec2, n), ti.ndarray(vec2, n)
        C, J = ti.ndarray(mat2, n), ti.ndarray(ti.f32, n)
        grid_v, grid_m = ti.ndarray(vec2, (grid, grid)), ti.ndarray(ti.f32, (grid, grid))
        A1v = ti.types.ndarray(dtype=vec2, ndim=1)
        A1m = ti.types.ndarray(dtype=mat2, ndim=1)
        A1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
        A2v = ti.types.ndarray(dtype=vec2, ndim=2)
        A2 = ti.types.ndarray(dtype=ti.f32, ndim=2)

    @ti.kernel
    def seed(x: A1v, v: A1v, C: A1m, J: A1):
        for i in range(n):
            x[i] = [0.2 + (i % cols + 0.5) * sx, 0.2 + (i // cols + 0.5) * sy]
            v[i] = [0.0, -1.0]
            J[i] = 1.0
            C[i] = mat2(0.0)

    @ti.kernel
    def substep(x: A1v, v: A1v, C: A1m, J: A1, grid_v: A2v, grid_m: A2):
        for i, j in ti.ndrange(grid, grid):
            grid_v[i, j] = [0.0, 0.0]
            grid_m[i, j] = 0.0
        for p in range(n):
            Xp = x[p] * inv_dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            stress = -dt * 4.0 * E * p_vol * (J[p] - 1.0) * inv_dx * inv_dx
            affine = mat2([[stress, 0.0], [0.0, stress]]) + p_mass * C[p]
            for i, j in ti.static(ti.ndrange(3, 3)):
                offset = ti.Vector([i, j])
                dpos = (offset - fx) * dx
                weight = w[i].x * w[j].y
                grid_v[base + offset] += weight * (p_mass * v[p] + affine @ dpos)
                grid_m[base + offset] += weight * p_mass
        for i, j in ti.ndrange(grid, grid):
            if grid_m[i, j] > 0:
                grid_v[i, j] /= grid_m[i, j]
            grid_v[i, j].y -= dt * 9.8
            if i < bound and grid_v[i, j].x < 0:
                grid_v[i, j].x = 0.0
            if i > grid - bound and grid_v[i, j].x > 0:
                grid_v[i, j].x = 0.0
            if j < bound and grid_v[i, j].y < 0:
                grid_v[i, j].y = 0.0
            if j > grid - bound and grid_v[i, j].y > 0:
                grid_v[i, j].y = 0.0
        for p in range(n):
            Xp = x[p] * inv_dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = vec2(0.0)
            new_C = mat2(0.0)
            for i, j in ti.static(ti.ndrange(3, 3)):
                offset = ti.Vector([i, j])
                dpos = (offset - fx) * dx
                weight = w[i].x * w[j].y
                g_v = grid_v[base + offset]
                new_v += weight * g_v
                new_C += 4.0 * weight * g_v.outer_product(dpos) * inv_dx * inv_dx
            v[p] = new_v
            x[p] += dt * new_v
            J[p] *= 1.0 + dt * new_C.trace()
            C[p] = new_C

    def run():
        for _ in range(10):
            substep(x, v, C, J, grid_v, grid_m)

    return (lambda: seed(x, v, C, J)), run


def nbody_program(ti, form):
    """assets/graphs/nbody.loom.json: 256 bodies, a step is accelerate then integrate."""
    n, dt, mass = 256, 0.001, 0.00390625
    vec3 = ti.math.vec3
    if form == "fields":
        pos, vel = ti.Vector.field(3, ti.f32, n), ti.Vector.field(3, ti.f32, n)
        A = ti.template()
    else:
        pos, vel = ti.ndarray(vec3, n), ti.ndarray(vec3, n)
        A = ti.types.ndarray(dtype=vec3, ndim=1)

    @ti.kernel
    def seed(pos: A, vel: A):
        for i in range(n):
            f = ti.cast(i, ti.f32)
            r = 1.0 + f / 256.0
            pos[i] = [ti.cos(f * 0.37) * r, ti.sin(f * 0.37) * r, (f % 7.0) * 0.05 - 0.15]
            vel[i] = vec3(-ti.sin(f * 0.37), ti.cos(f * 0.37), 0.0) * 0.3

    @ti.kernel
    def step(pos: A, vel: A):
        for i in range(n):
            q = pos[i]
            a = vec3(0.0)
            for j in range(n):
                d = pos[j] - q
                a += d / ti.pow(d.dot(d) + 0.01, 1.5)
            vel[i] += a * (mass * dt)
        for i in range(n):
            pos[i] += vel[i] * dt

    return (lambda: seed(pos, vel)), (lambda: step(pos, vel))


def cloth_program(ti, form):
    """assets/graphs/cloth.loom.json: a 32x32 cloth on a sphere, 5 substeps a step."""
    n, dt, k = 32, 0.001, 30000.0
    vec3 = ti.math.vec3
    if form == "fields":
        x, v = ti.Vector.field(3, ti.f32, (n, n)), ti.Vector.field(3, ti.f32, (n, n))
        A = ti.template()
    else:
        x, v = ti.ndarray(vec3, (n, n)), ti.ndarray(vec3, (n, n))
        A = ti.types.ndarray(dtype=vec3, ndim=2)

    @ti.kernel
    def seed(x: A, v: A):
        for i, j in ti.ndrange(n, n):
            x[i, j] = [i / 31.0 - 0.5, 0.6, j / 31.0 - 0.5]
            v[i, j] = vec3(0.0)

    @ti.kernel
    def substep(x: A, v: A):
        for i, j in ti.ndrange(n, n):
            p = x[i, j]
            f = vec3(0.0, -9.8, 0.0)
            for a, b in ti.static(ti.ndrange(3, 3)):
                ni = ti.math.clamp(i + a - 1, 0, 31)
                nj = ti.math.clamp(j + b - 1, 0, 31)
                q = x[ni, nj]
                if ni == i + a - 1 and nj == j + b - 1 and not (a == 1 and b == 1):
                    rest = ti.sqrt((a - 1) * (a - 1) + (b - 1) * (b - 1)) / 31.0
                    f += k * ((q - p).norm() - rest) / ti.max((q - p).norm(), 0.000001) * (q - p)
            w = (v[i, j] + dt * f) * 0.9995
            if p.norm() < 0.31:
                u = p / p.norm()
                w = (w - ti.min(w.dot(u), 0.0) * u) * 0.9
            v[i, j] = w
        for i, j in ti.ndrange(n, n):
            p = x[i, j] + dt * v[i, j]
            if p.norm() < 0.3:
                p = p * (0.3 / ti.max(p.norm(), 0.000001))
            x[i, j] = p

    def run():
        for _ in range(5):
            substep(x, v)

    return (lambda: seed(x, v)), run


def make_sample(ti, name, form):
    if name == "mpm88_8k":
        return mpm88_program(ti, form, 8192, 128, 2e-4)
    if name == "mpm88_256k":
        return mpm88_program(ti, form, 262144, 512, 5e-5)
    if name == "nbody":
        return nbody_program(ti, form)
    if name == "cloth":
        return cloth_program(ti, form)
    raise ValueError(f"no sample '{name}'")


def serve(args):
    import sys

    # Replies go to the original stdout; whatever Taichi prints (its banner) goes to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def reply(text):
        out.write(text + "\n")
        out.flush()

    import taichi as ti

    ti.init(arch=ti.cpu, cpu_max_num_threads=args.threads, offline_cache=False, log_level=ti.WARN)
    run = None
    for line in sys.stdin:
        words = line.split()
        try:
            if not words:
                continue
            if words[0] == "quit":
                break
            if words[0] == "setup":
                forms = {}
                for form in ("fields", "ndarrays"):
                    init, go = make_sample(ti, words[1], form)
                    init()
                    go()  # compiles
                    ti.sync()
                    forms[form] = (median_seconds(5, lambda: (go(), ti.sync())), go)
                best = min(forms, key=lambda f: forms[f][0])
                run = forms[best][1]
                reply(f"ok {best} {forms['fields'][0] * 1e3:.4f} {forms['ndarrays'][0] * 1e3:.4f}")
            elif words[0] == "run":
                t0 = time.perf_counter()
                run()
                ti.sync()
                reply(f"{time.perf_counter() - t0:.9f}")
            else:
                reply(f"error: unknown command '{words[0]}'")
        except Exception as e:  # the parent reads one line per command
            reply(f"error: {type(e).__name__}: {e}".replace("\n", " "))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return

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
