#!/usr/bin/env python3
"""Writes assets/meshes/cloth_grid.obj: a subdivided unit square for cloth simulations.

    tools/make_cloth_grid.py [--cells 32] [--out assets/meshes/cloth_grid.obj]

The square spans x, y in [0, 1] at z = 0 and faces +z. Vertex k = j * (cells + 1) + i sits at
(i / cells, j / cells, 0): the vertex order is the order of a (cells + 1) x (cells + 1) field
of positions indexed [j, i], so a simulation's field can move the mesh directly. Each cell is
two triangles, counter-clockwise seen from +z, split along alternating diagonals so the cloth
has no preferred shear direction.
"""
import argparse


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cells", type=int, default=32)
    ap.add_argument("--out", default="assets/meshes/cloth_grid.obj")
    a = ap.parse_args()
    n = a.cells
    lines = [
        "# cloth_grid.obj: %dx%d cells, %d vertices, %d triangles (tools/make_cloth_grid.py)" % (n, n, (n + 1) ** 2, 2 * n * n),
        "# unit square in the xy plane facing +z; vertex j*(%d)+i at (i/%d, j/%d, 0)" % (n + 1, n, n),
        "o cloth_grid",
    ]
    for j in range(n + 1):
        for i in range(n + 1):
            lines.append("v %.6g %.6g 0" % (i / n, j / n))
    for j in range(n + 1):
        for i in range(n + 1):
            lines.append("vt %.6g %.6g" % (i / n, j / n))
    lines.append("vn 0 0 1")
    lines.append("s 1")

    def v(i, j):
        return j * (n + 1) + i + 1  # OBJ indices count from 1

    for j in range(n):
        for i in range(n):
            a_, b, c, d = v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)
            tris = [(a_, b, c), (a_, c, d)] if (i + j) % 2 == 0 else [(a_, b, d), (b, c, d)]
            for t in tris:
                lines.append("f " + " ".join("%d/%d/1" % (k, k) for k in t))
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
