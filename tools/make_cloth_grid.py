#!/usr/bin/env python3
"""Writes assets/meshes/cloth_grid.obj: a subdivided square for cloth simulations.

    tools/make_cloth_grid.py [--points 32] [--height 0.6] [--out assets/meshes/cloth_grid.obj]

The mesh is the rest pose of assets/graphs/cloth.loom.json: a points x points grid lying in
the plane y = height, x and z in [-0.5, 0.5], facing up (+y). Vertex k = i * points + j sits at
(i / (points - 1) - 0.5, height, j / (points - 1) - 0.5), which is where that sample's `init`
kernel puts x[i, j]: the vertex order is the row-major order of a [points, points] field, so
the simulated field moves the mesh directly. Each cell is two triangles, counter-clockwise
seen from +y, split along alternating diagonals so the cloth has no preferred shear direction.
"""
import argparse


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=32, help="vertices per side")
    ap.add_argument("--height", type=float, default=0.6)
    ap.add_argument("--out", default="assets/meshes/cloth_grid.obj")
    a = ap.parse_args()
    n = a.points
    if n < 2:
        ap.error("--points must be at least 2")
    s = n - 1
    lines = [
        "# cloth_grid.obj: %dx%d vertices, %d triangles (tools/make_cloth_grid.py)" % (n, n, 2 * s * s),
        "# rest pose of assets/graphs/cloth.loom.json: vertex i*%d+j at (i/%d - 0.5, %g, j/%d - 0.5), facing +y"
        % (n, s, a.height, s),
        "o cloth_grid",
    ]
    for i in range(n):
        for j in range(n):
            lines.append("v %.6g %.6g %.6g" % (i / s - 0.5, a.height, j / s - 0.5))
    for i in range(n):
        for j in range(n):
            lines.append("vt %.6g %.6g" % (i / s, j / s))
    lines.append("vn 0 1 0")
    lines.append("s 1")

    def v(i, j):
        return i * n + j + 1  # OBJ indices count from 1

    for i in range(s):
        for j in range(s):
            # (i, j) -> (i, j + 1) -> (i + 1, j + 1) turns counter-clockwise seen from +y
            # (x right, z towards the viewer looking down).
            a_, b, c, d = v(i, j), v(i, j + 1), v(i + 1, j + 1), v(i + 1, j)
            tris = [(a_, b, c), (a_, c, d)] if (i + j) % 2 == 0 else [(a_, b, d), (b, c, d)]
            for t in tris:
                lines.append("f " + " ".join("%d/%d/1" % (k, k) for k in t))
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
