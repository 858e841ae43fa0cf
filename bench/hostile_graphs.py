#!/usr/bin/env python3
"""Writes the hostile graph documents of issue 17 for measuring compile-time growth.

usage: hostile_graphs.py SHAPE SIZE OUT.loom.json

Shapes (SIZE is a count of nodes or kernels, or a formula's length in bytes):
  stores N      one serial kernel of N store nodes, x[k] = k
  loop_stores N one range_for whose body stores N elements of a row, x[i, k] = i + k
  chain N       N add nodes, each reading the one before (a dependence chain), one store
  load_chain N  the same inside a range_for, starting from a load of the element it stores
  dag N         in a range_for, N add nodes each reading the one before twice (a DAG of 2^N
                paths), its value the index of a read-modify-write
  ifs N         N variables, then N ifs each setting one of them from a load, then N stores
  reductions N  N variables, each summed over one range_for (N reductions in one loop)
  kernels N     N kernels of one store each, all launched by the step pipeline
  laid_out N    the stores kernel with an editor position for every node (and 2 comments)
  sum BYTES     one expr node: a + a + a + ... of about BYTES characters
  idents BYTES  one expr node over many input pins: a0 + a1 + a2 + ... (each pin a literal)
  nest BYTES    one expr node: ((((a)))) of about BYTES characters (past the nesting limit:
                the document must fail fast with a located error)

bench/README.md ("Compile time of hostile documents") has the figures. Not part of the
product: a measuring aid, like big_graph.cpp.
"""
import json
import sys


def document(kernels, fields):
    return {
        "format": "loom-graph",
        "version": 2,
        "name": "hostile",
        "fields": fields,
        "kernels": kernels,
        "pipelines": [{"name": "step", "launches": [{"kernel": k["name"]} for k in kernels]}],
    }


def stores(n):
    nodes = [{"id": k + 1, "type": "store", "inputs": {"i0": k, "value": float(k)},
              "params": {"field": "x"}} for k in range(n)]
    return document([{"name": "k", "nodes": nodes}],
                    [{"name": "x", "type": "f32", "shape": [n]}])


def loop_stores(n):
    body = []
    for k in range(n):
        body.append({"id": 2 * k + 2, "type": "add", "inputs": {"a": "1.i0", "b": k}})
        body.append({"id": 2 * k + 3, "type": "store",
                     "inputs": {"i0": "1.i0", "i1": k, "value": "%d.out" % (2 * k + 2)},
                     "params": {"field": "x"}})
    loop = {"id": 1, "type": "range_for", "inputs": {"end0": 4}, "regions": {"body": body}}
    return document([{"name": "k", "nodes": [loop]}],
                    [{"name": "x", "type": "i32", "shape": [4, n]}])


def chain(n):
    nodes = [{"id": 1, "type": "add", "inputs": {"a": 0.5, "b": 1.0}}]
    for k in range(2, n + 1):
        nodes.append({"id": k, "type": "add", "inputs": {"a": "%d.out" % (k - 1), "b": 1.0}})
    nodes.append({"id": n + 1, "type": "store", "inputs": {"i0": 0, "value": "%d.out" % n},
                  "params": {"field": "x"}})
    return document([{"name": "k", "nodes": nodes}], [{"name": "x", "type": "f32", "shape": [1]}])


def load_chain(n):
    body = [{"id": 2, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "x"}}]
    for k in range(3, n + 3):
        body.append({"id": k, "type": "add", "inputs": {"a": "%d.out" % (k - 1), "b": 1.0}})
    body.append({"id": n + 3, "type": "store", "inputs": {"i0": "1.i0", "value": "%d.out" % (n + 2)},
                 "params": {"field": "x"}})
    loop = {"id": 1, "type": "range_for", "inputs": {"end0": 64}, "regions": {"body": body}}
    return document([{"name": "k", "nodes": [loop]}], [{"name": "x", "type": "f32", "shape": [64]}])


def dag(n):
    body = [{"id": 2, "type": "add", "inputs": {"a": 1, "b": 2}}]
    for k in range(3, n + 2):
        body.append({"id": k, "type": "add", "inputs": {"a": "%d.out" % (k - 1),
                                                        "b": "%d.out" % (k - 1)}})
    last = "%d.out" % (n + 1)
    body.append({"id": n + 2, "type": "and", "inputs": {"a": last, "b": 63}})
    body.append({"id": n + 3, "type": "load", "inputs": {"i0": "%d.out" % (n + 2)},
                 "params": {"field": "x"}})
    body.append({"id": n + 4, "type": "add", "inputs": {"a": "%d.out" % (n + 3), "b": 1.0}})
    body.append({"id": n + 5, "type": "store",
                 "inputs": {"i0": "%d.out" % (n + 2), "value": "%d.out" % (n + 4)},
                 "params": {"field": "x"}})
    loop = {"id": 1, "type": "range_for", "inputs": {"end0": 64}, "regions": {"body": body}}
    return document([{"name": "k", "nodes": [loop]}], [{"name": "x", "type": "f32", "shape": [64]}])


def ifs(n):
    nodes = [{"id": k + 1, "type": "var", "params": {"type": "f32"}} for k in range(n)]
    next_id = n + 1
    for k in range(n):
        load = {"id": next_id, "type": "load", "inputs": {"i0": k}, "params": {"field": "x"}}
        cond = {"id": next_id + 1, "type": "gt", "inputs": {"a": "%d.out" % next_id, "b": 0.0}}
        branch = {"id": next_id + 2, "type": "if", "inputs": {"cond": "%d.out" % (next_id + 1)},
                  "regions": {"then": [{"id": next_id + 3, "type": "set",
                                        "inputs": {"var": "%d.ref" % (k + 1),
                                                   "value": "%d.out" % next_id}}],
                              "else": []}}
        nodes += [load, cond, branch]
        next_id += 4
    for k in range(n):
        nodes.append({"id": next_id, "type": "get", "inputs": {"var": "%d.ref" % (k + 1)}})
        nodes.append({"id": next_id + 1, "type": "store",
                      "inputs": {"i0": k, "value": "%d.out" % next_id}, "params": {"field": "y"}})
        next_id += 2
    return document([{"name": "k", "nodes": nodes}],
                    [{"name": "x", "type": "f32", "shape": [n]},
                     {"name": "y", "type": "f32", "shape": [n]}])


def reductions(n):
    nodes = [{"id": k + 2, "type": "var", "params": {"type": "f32"}} for k in range(n)]
    body, next_id = [], n + 2
    body.append({"id": next_id, "type": "load", "inputs": {"i0": "1.i0"}, "params": {"field": "x"}})
    value = "%d.out" % next_id
    next_id += 1
    for k in range(n):
        body.append({"id": next_id, "type": "get", "inputs": {"var": "%d.ref" % (k + 2)}})
        body.append({"id": next_id + 1, "type": "add",
                     "inputs": {"a": "%d.out" % next_id, "b": value}})
        body.append({"id": next_id + 2, "type": "set",
                     "inputs": {"var": "%d.ref" % (k + 2), "value": "%d.out" % (next_id + 1)}})
        next_id += 3
    nodes.append({"id": 1, "type": "range_for", "inputs": {"end0": 64}, "regions": {"body": body}})
    for k in range(n):
        nodes.append({"id": next_id, "type": "get", "inputs": {"var": "%d.ref" % (k + 2)}})
        nodes.append({"id": next_id + 1, "type": "store",
                      "inputs": {"i0": k, "value": "%d.out" % next_id}, "params": {"field": "y"}})
        next_id += 2
    return document([{"name": "k", "nodes": nodes}],
                    [{"name": "x", "type": "f32", "shape": [64]},
                     {"name": "y", "type": "f32", "shape": [n]}])


def laid_out(n):
    doc = stores(n)
    positions = {str(k + 1): [40 * (k % 100), 60 * (k // 100)] for k in range(n)}
    doc["layout"] = [{"graph": "k", "positions": positions,
                      "comments": [{"title": "all", "rect": [0, 0, 4000, 60 * n]}]}]
    return doc


def kernels(n):
    ks = [{"name": "k%d" % k, "nodes": [
        {"id": 1, "type": "store", "inputs": {"i0": k % 64, "value": float(k)},
         "params": {"field": "x"}}]} for k in range(n)]
    return document(ks, [{"name": "x", "type": "f32", "shape": [64]}])


def formula_kernel(expr, inputs):
    nodes = [{"id": 1, "type": "expr", "inputs": inputs, "params": {"expr": expr}},
             {"id": 2, "type": "store", "inputs": {"i0": 0, "value": "1.out"},
              "params": {"field": "x"}}]
    return document([{"name": "k", "nodes": nodes}], [{"name": "x", "type": "f32", "shape": [1]}])


def sum_formula(size):
    terms = max(1, (size + 1) // 4)  # "a + " per term
    return formula_kernel(" + ".join(["a"] * terms), {"a": 0.5})


def idents(size):
    names, length = [], 0
    while length < size:
        names.append("a%d" % len(names))
        length += len(names[-1]) + 1
    return formula_kernel("+".join(names), {name: 1.0 for name in names})


def nest(size):
    depth = max(1, (size - 1) // 2)
    return formula_kernel("(" * depth + "a" + ")" * depth, {"a": 0.5})


SHAPES = {"stores": stores, "loop_stores": loop_stores, "chain": chain, "load_chain": load_chain,
          "dag": dag, "ifs": ifs, "reductions": reductions, "kernels": kernels, "laid_out": laid_out,
          "sum": sum_formula, "idents": idents, "nest": nest}


def parse_size(text):
    scale = {"k": 1000, "K": 1024, "M": 1 << 20}
    if text[-1] in scale:
        return int(float(text[:-1]) * scale[text[-1]])
    return int(text)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in SHAPES:
        sys.stderr.write(__doc__)
        return 2
    doc = SHAPES[sys.argv[1]](parse_size(sys.argv[2]))
    with open(sys.argv[3], "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
