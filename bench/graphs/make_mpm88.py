#!/usr/bin/env python3
"""Writes the benchmark sizes of the mpm88 sample (assets/graphs/mpm88.loom.json): the same
four kernels and the same 10-substep `step` pipeline, with the particle count, the grid and
the time step as parameters.

  mpm88_8k.loom.json    8,192 particles on a 128x128 grid, dt 2e-4: Taichi's mpm88 example
  mpm88_256k.loom.json  262,144 particles on a 512x512 grid, dt 5e-5 (dt scaled with dx)

Particles start on a regular lattice filling [0.2, 0.6]^2 (the sample's seed; Taichi's example
draws them at random), so Loom, Taichi (bench/taichi_peer.py) and the hand-written C++
(bench/handwritten.cpp) start from the same state. Run from the repository root:

  python3 bench/graphs/make_mpm88.py && build/tools/loom/loom fmt bench/graphs/mpm88_8k.loom.json \
      && build/tools/loom/loom fmt bench/graphs/mpm88_256k.loom.json
"""
import decimal
import json
import os


def num(x):
    """A decimal literal without an exponent (the formula language reads plain decimals)."""
    text = format(decimal.Decimal(repr(x)), "f")
    return text if "." in text else text + ".0"


def document(n, grid, dt, name):
    cols = 64
    while n // cols > 2 * cols:
        cols *= 2
    rows = n // cols
    assert cols * rows == n
    dx = 1.0 / grid
    p_vol = (dx * 0.5) ** 2
    inv_dx2 = float(grid * grid)
    g, hi = num(float(grid)), grid - 3
    f = {"dx": num(dx), "pv": num(p_vol), "dt": num(dt), "g": g, "idx2": num(inv_dx2)}
    weights = ("(i == 0 ? 0.5 * (1.5 - f.x) * (1.5 - f.x) : (i == 1 ? 0.75 - (f.x - 1.0) * (f.x - 1.0)"
               " : 0.5 * (f.x - 0.5) * (f.x - 0.5))) * (j == 0 ? 0.5 * (1.5 - f.y) * (1.5 - f.y) :"
               " (j == 1 ? 0.75 - (f.y - 1.0) * (f.y - 1.0) : 0.5 * (f.y - 0.5) * (f.y - 0.5)))")

    def node(id, type, inputs=None, params=None, regions=None):
        out = {"id": id, "type": type}
        if inputs is not None:
            out["inputs"] = inputs
        if params is not None:
            out["params"] = params
        if regions is not None:
            out["regions"] = regions
        return out

    def expr(id, inputs, text):
        return node(id, "expr", inputs, {"expr": text})

    def base_and_fx():
        return [
            node(2, "load", {"i0": "1.i0"}, {"field": "x"}),
            expr(3, {"a": "2"}, f"a * {g} - 0.5"),
            node(4, "cast", {"a": "3"}, {"type": "i32"}),
            node(5, "cast", {"a": "4"}, {"type": "f32"}),
            expr(6, {"a": "2", "b": "5"}, f"a * {g} - b"),
        ]

    # i / cols in f32 is exact (cols is a power of two, i < 2^24), so floor() is the row.
    seed = [node(1, "range_for", {"end0": n}, regions={"body": [
        expr(2, {"i": "1.i0"},
             f"vec2(0.2 + (i % {cols} + 0.5) * {num(0.4 / cols)},"
             f" 0.2 + (floor(i / {num(float(cols))}) + 0.5) * {num(0.4 / rows)})"),
        node(3, "store", {"i0": "1.i0", "value": "2"}, {"field": "x"}),
        node(4, "store", {"i0": "1.i0", "value": [0.0, -1.0]}, {"field": "v"}),
        node(5, "store", {"i0": "1.i0", "value": 1.0}, {"field": "J"}),
        node(6, "store", {"i0": "1.i0", "value": [[0.0, 0.0], [0.0, 0.0]]}, {"field": "C"}),
    ]})]
    clear_grid = [node(1, "range_for", {"end0": grid, "end1": grid}, regions={"body": [
        node(2, "store", {"i0": "1.i0", "i1": "1.i1", "value": [0.0, 0.0]}, {"field": "grid_v"}),
        node(3, "store", {"i0": "1.i0", "i1": "1.i1", "value": 0.0}, {"field": "grid_m"}),
    ]})]
    p2g = [node(1, "range_for", {"end0": n}, regions={"body": base_and_fx() + [
        node(7, "load", {"i0": "1.i0"}, {"field": "J"}),
        node(8, "load", {"i0": "1.i0"}, {"field": "C"}),
        node(9, "load", {"i0": "1.i0"}, {"field": "v"}),
        expr(10, {"j": "7"}, f"-{f['dt']} * 4.0 * 400.0 * {f['pv']} * (j - 1.0) * {f['idx2']}"),
        node(11, "vec2", {"x": "10", "y": 0.0}),
        node(12, "vec2", {"x": 0.0, "y": "10"}),
        node(13, "mat2", {"c0": "11", "c1": "12"}),
        expr(14, {"s": "13", "c": "8"}, f"s + c * {f['pv']}"),
        node(15, "unroll", params={"count": 3}, regions={"body": [
            node(16, "unroll", params={"count": 3}, regions={"body": [
                expr(17, {"f": "6", "i": "15.i", "j": "16.i"}, weights),
                expr(18, {"f": "6", "i": "15.i", "j": "16.i"}, f"(vec2(i, j) - f) * {f['dx']}"),
                expr(19, {"w": "17", "v": "9", "a": "14", "d": "18"}, f"w * (v * {f['pv']} + matmul(a, d))"),
                expr(20, {"b": "4", "i": "15.i"}, "b.x + i"),
                expr(21, {"b": "4", "j": "16.i"}, "b.y + j"),
                node(22, "atomic_add", {"i0": "20", "i1": "21", "value": "19"}, {"field": "grid_v"}),
                expr(23, {"w": "17"}, f"w * {f['pv']}"),
                node(24, "atomic_add", {"i0": "20", "i1": "21", "value": "23"}, {"field": "grid_m"}),
            ]}),
        ]}),
    ]})]
    grid_update = [node(1, "range_for", {"end0": grid, "end1": grid}, regions={"body": [
        node(2, "load", {"i0": "1.i0", "i1": "1.i1"}, {"field": "grid_m"}),
        node(3, "load", {"i0": "1.i0", "i1": "1.i1"}, {"field": "grid_v"}),
        expr(4, {"g": "3", "m": "2"}, "m > 0.0 ? g / m : g"),
        expr(5, {"v": "4"}, f"v - vec2(0.0, {f['dt']} * 9.8)"),
        expr(6, {"v": "5", "i": "1.i0", "j": "1.i1"},
             f"vec2((i < 3 && v.x < 0.0) || (i > {hi} && v.x > 0.0) ? 0.0 : v.x,"
             f" (j < 3 && v.y < 0.0) || (j > {hi} && v.y > 0.0) ? 0.0 : v.y)"),
        node(7, "store", {"i0": "1.i0", "i1": "1.i1", "value": "6"}, {"field": "grid_v"}),
    ]})]
    g2p = [node(1, "range_for", {"end0": n}, regions={"body": base_and_fx() + [
        node(7, "var", {"init": [0.0, 0.0]}, {"type": "f32x2"}),
        node(8, "var", {"init": [[0.0, 0.0], [0.0, 0.0]]}, {"type": "f32x2x2"}),
        node(9, "unroll", params={"count": 3}, regions={"body": [
            node(10, "unroll", params={"count": 3}, regions={"body": [
                expr(11, {"f": "6", "i": "9.i", "j": "10.i"}, weights),
                expr(12, {"f": "6", "i": "9.i", "j": "10.i"}, f"(vec2(i, j) - f) * {f['dx']}"),
                expr(13, {"b": "4", "i": "9.i"}, "b.x + i"),
                expr(14, {"b": "4", "j": "10.i"}, "b.y + j"),
                node(15, "load", {"i0": "13", "i1": "14"}, {"field": "grid_v"}),
                node(16, "get", {"var": "7.ref"}),
                expr(17, {"nv": "16", "w": "11", "g": "15"}, "nv + w * g"),
                node(18, "set", {"var": "7.ref", "value": "17"}),
                expr(19, {"w": "11", "g": "15", "d": "12"}, f"g * d.x * (4.0 * {f['idx2']} * w)"),
                expr(20, {"w": "11", "g": "15", "d": "12"}, f"g * d.y * (4.0 * {f['idx2']} * w)"),
                node(21, "mat2", {"c0": "19", "c1": "20"}),
                node(22, "get", {"var": "8.ref"}),
                node(23, "add", {"a": "22", "b": "21"}),
                node(24, "set", {"var": "8.ref", "value": "23"}),
            ]}),
        ]}),
        node(25, "get", {"var": "7.ref"}),
        node(26, "get", {"var": "8.ref"}),
        node(27, "store", {"i0": "1.i0", "value": "25"}, {"field": "v"}),
        expr(28, {"p": "2", "v": "25"}, f"p + v * {f['dt']}"),
        node(29, "store", {"i0": "1.i0", "value": "28"}, {"field": "x"}),
        node(30, "split", {"v": "26"}),
        node(31, "load", {"i0": "1.i0"}, {"field": "J"}),
        expr(32, {"j": "31", "a": "30.c0", "b": "30.c1"}, f"j * (1.0 + {f['dt']} * (a.x + b.y))"),
        node(33, "store", {"i0": "1.i0", "value": "32"}, {"field": "J"}),
        node(34, "store", {"i0": "1.i0", "value": "26"}, {"field": "C"}),
    ]})]
    substep = ["clear_grid", "p2g", "grid_update", "g2p"]
    return {
        "format": "loom-graph",
        "version": 2,
        "name": name,
        "fields": [
            {"name": "x", "type": "f32x2", "shape": [n]},
            {"name": "v", "type": "f32x2", "shape": [n]},
            {"name": "C", "type": "f32x2x2", "shape": [n]},
            {"name": "J", "type": "f32", "shape": [n]},
            {"name": "grid_v", "type": "f32x2", "shape": [grid, grid]},
            {"name": "grid_m", "type": "f32", "shape": [grid, grid]},
        ],
        "kernels": [
            {"name": "seed", "nodes": seed},
            {"name": "clear_grid", "nodes": clear_grid},
            {"name": "p2g", "nodes": p2g},
            {"name": "grid_update", "nodes": grid_update},
            {"name": "g2p", "nodes": g2p},
        ],
        "pipelines": [
            {"name": "init", "launches": [{"kernel": "seed"}]},
            {"name": "step", "launches": [{"kernel": k} for _ in range(10) for k in substep]},
        ],
        "view": {"show": "x", "as": "points", "color_by": "v", "point_size": 2},
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for file, n, grid, dt in (("mpm88_8k.loom.json", 8192, 128, 2e-4),
                              ("mpm88_256k.loom.json", 262144, 512, 5e-5)):
        doc = document(n, grid, dt, file.split(".")[0])
        with open(os.path.join(here, file), "w") as out:
            out.write(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
