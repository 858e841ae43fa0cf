#!/usr/bin/env python3
"""Writes assets/meshes/sphere.obj: a unit UV sphere with vertex normals.

    tools/make_sphere.py [--segments 32] [--rings 16] [--out assets/meshes/sphere.obj]

Centred at the origin, radius 1, poles on the y axis; `segments` vertices around, `rings`
bands from pole to pole. Triangles turn counter-clockwise seen from outside. The host
renderer sample (engine_plugin/host_sample) scales it to the `cloth` sample's sphere.
"""
import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=32, help="vertices around the equator")
    ap.add_argument("--rings", type=int, default=16, help="bands from pole to pole")
    ap.add_argument("--out", default="assets/meshes/sphere.obj")
    a = ap.parse_args()
    if a.segments < 3 or a.rings < 2:
        ap.error("--segments must be at least 3 and --rings at least 2")
    seg, rings = a.segments, a.rings
    lines = [
        "# sphere.obj: unit UV sphere, %d segments x %d rings, %d triangles (tools/make_sphere.py)"
        % (seg, rings, 2 * seg * (rings - 1)),
        "o sphere",
    ]
    # Rows of seg vertices from the north pole (row 0) to the south pole (row rings); the
    # poles are one vertex each.
    def vid(row, k):
        if row == 0:
            return 1
        if row == rings:
            return 2 + (rings - 1) * seg
        return 2 + (row - 1) * seg + k % seg

    points = [(0.0, 1.0, 0.0)]
    for row in range(1, rings):
        theta = math.pi * row / rings
        for k in range(seg):
            phi = 2 * math.pi * k / seg
            points.append((math.sin(theta) * math.cos(phi), math.cos(theta), -math.sin(theta) * math.sin(phi)))
    points.append((0.0, -1.0, 0.0))
    for p in points:
        lines.append("v %.6f %.6f %.6f" % p)
    for p in points:
        lines.append("vn %.6f %.6f %.6f" % p)
    lines.append("s 1")
    tris = []
    for k in range(seg):
        tris.append((vid(0, 0), vid(1, k), vid(1, k + 1)))
        tris.append((vid(rings, 0), vid(rings - 1, k + 1), vid(rings - 1, k)))
    for row in range(1, rings - 1):
        for k in range(seg):
            a_, b, c, d = vid(row, k), vid(row + 1, k), vid(row + 1, k + 1), vid(row, k + 1)
            tris += [(a_, b, c), (a_, c, d)]
    for t in tris:
        lines.append("f " + " ".join("%d//%d" % (i, i) for i in t))
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
