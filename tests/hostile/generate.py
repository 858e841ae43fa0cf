#!/usr/bin/env python3
"""Writes the hostile inputs too big to keep in the repository (tests/hostile/README.md).

Each generator takes its size and writes one file (or module folder); run_case.py calls them
when a case names `{gen:NAME:SIZE}`. By hand: generate.py NAME SIZE OUT [CORPUS_DIR].
`generate.py modules LOOM tests/hostile/modules` rewrites the committed modules there.
"""
import json
import os
import shutil
import struct
import sys

HEAD = '{"format": "loom-graph", "version": 2, "name": "hostile"'


def one_kernel(fields, nodes, extra=""):
    return (HEAD + ', "fields": [' + fields + ']' + extra + ', "kernels": [{"name": "k", "nodes": [' +
            nodes + ']}], "pipelines": [{"name": "step", "launches": [{"kernel": "k"}]}]}')


def call_chain(n):
    """Functions f0 .. f(n-1), each calling the next; the kernel calls f0 (issue 17: 5,000
    nested calls overflowed the stack in inlining)."""
    fns = []
    for i in range(n):
        head = ('{"name": "f%d", "inputs": [{"name": "v", "type": "f32"}], "outputs": [{"name": '
                '"r", "type": "f32"}], "nodes": [{"id": 1, "type": "input", "params": {"name": "v"}}, ' % i)
        if i + 1 < n:
            body = ('{"id": 2, "type": "call", "inputs": {"v": "1"}, "params": {"function": "f%d"}}, '
                    '{"id": 3, "type": "output", "inputs": {"r": "2.r"}}]}' % (i + 1))
        else:
            body = ('{"id": 2, "type": "add", "inputs": {"a": "1", "b": 1.0}}, '
                    '{"id": 3, "type": "output", "inputs": {"r": "2"}}]}')
        fns.append(head + body)
    return one_kernel(
        '{"name": "out", "type": "f32", "shape": [4]}',
        '{"id": 1, "type": "range_for", "inputs": {"end0": 4}, "regions": {"body": ['
        '{"id": 2, "type": "cast", "inputs": {"a": "1.i0"}, "params": {"type": "f32"}}, '
        '{"id": 4, "type": "call", "inputs": {"v": "2"}, "params": {"function": "f0"}}, '
        '{"id": 5, "type": "store", "inputs": {"i0": "1.i0", "value": "4.r"}, "params": {"field": "out"}}]}}',
        ', "functions": [' + ", ".join(fns) + "]")


def duplicate_member(n):
    """An editor layout of n node positions, one a line, then the first again: the duplicate
    check once scanned every member (quadratic: 100k members took 27 s)."""
    lines = ['"%d": [%d, %d]' % (k + 1, k % 100, k // 100) for k in range(n)] + ['"1": [0, 0]']
    return one_kernel('{"name": "x", "type": "f32", "shape": [1]}',
                      '{"id": 1, "type": "store", "inputs": {"i0": 0, "value": 1.0}, "params": {"field": "x"}}',
                      ', "layout": {"graph": "k", "positions": {\n' + ",\n".join(lines) + "}}")


def stores(n):
    """A serial kernel of n stores (passes and LLVM once searched or inserted per store)."""
    nodes = ", ".join('{"id": %d, "type": "store", "inputs": {"i0": %d, "value": %d.5}, '
                      '"params": {"field": "x"}}' % (k + 1, k, k) for k in range(n))
    return one_kernel('{"name": "x", "type": "f32", "shape": [%d]}' % n, nodes)


def formula_names(nbytes):
    """One formula over `nbytes` of distinct names, each an input pin (233 s to check once)."""
    terms, inputs, size, k = [], [], 0, 0
    while size < nbytes:
        terms.append("a%d" % k)
        inputs.append('"a%d": 1.0' % k)
        size += len(terms[-1]) + 1
        k += 1
    return one_kernel('{"name": "x", "type": "f32", "shape": [1]}',
                      '{"id": 1, "type": "expr", "inputs": {' + ", ".join(inputs) +
                      '}, "params": {"expr": "' + "+".join(terms) + '"}}, '
                      '{"id": 2, "type": "store", "inputs": {"i0": 0, "value": "1"}, "params": {"field": "x"}}')


def long_field_name(nbytes):
    """A store into an unknown field whose name is `nbytes` long: the error once quoted it whole."""
    return one_kernel('{"name": "x", "type": "f32", "shape": [8]}',
                      '{"id": 2, "type": "store", "inputs": {"i0": 0, "value": 1.0}, '
                      '"params": {"field": "' + "n" * nbytes + '"}}')


def long_formula_name(nbytes):
    """A formula naming an unknown identifier `nbytes` long."""
    return one_kernel('{"name": "x", "type": "f32", "shape": [8]}',
                      '{"id": 3, "type": "expr", "inputs": {"a": 1.0}, "params": {"expr": "a + ' +
                      "q" * nbytes + '"}}, '
                      '{"id": 2, "type": "store", "inputs": {"i0": 0, "value": "3"}, "params": {"field": "x"}}')


def metadata_members(n, corpus, duplicate):
    """The module corpus's `fill_cpu` folder with an extra metadata key holding an object of n
    members (a runtime ignores keys it does not know, but reads them as JSON), the first
    repeated at the end when `duplicate`."""
    def make(out):
        shutil.copytree(os.path.join(corpus, "fill_cpu"), out)
        path = os.path.join(out, "metadata.json")
        with open(path) as f:
            text = f.read()
        members = ['"k%d": %d' % (k, k) for k in range(n)] + (['"k0": 7'] if duplicate else [])
        brace = text.rindex("}")
        text = text[:brace].rstrip() + ',\n"hostile_extra": {\n' + ",\n".join(members) + "}\n}\n"
        with open(path, "w") as f:
            f.write(text)
    return make


def hash128_hex(data):
    """The blob hash of module metadata (runtime/common/abi_serialize.cpp: two FNV-1a 64)."""
    def fnv1a64(seed):
        h = seed
        for b in data:
            h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
        return h
    a = fnv1a64(0xcbf29ce484222325)
    return "%016x%016x" % (a, fnv1a64(0x84222325cbf29ce4 ^ a))


def edit_module(src, out, edit_metadata=None, edit_blob=None):
    """A copy of module folder `src` with its metadata text and/or its one blob edited; the
    blob's size and hash are rewritten, so only the edit is hostile."""
    shutil.copytree(src, out)
    meta_path = os.path.join(out, "metadata.json")
    with open(meta_path) as f:
        meta = json.load(f)
    if edit_blob:
        blob = meta["blobs"][0]
        path = os.path.join(out, blob["name"])
        with open(path, "rb") as f:
            data = edit_blob(f.read())
        with open(path, "wb") as f:
            f.write(data)
        blob["size"], blob["hash"] = len(data), hash128_hex(data)
    text = json.dumps(meta, indent=2) + "\n"
    if edit_metadata:
        text = edit_metadata(text)
    with open(meta_path, "w") as f:
        f.write(text)


def entry_point(words):
    """The index of the first OpEntryPoint of a SPIR-V word list."""
    at = 5
    while words[at] & 0xffff != 15:
        at += words[at] >> 16
    return at


def spirv_edit(edit):
    def apply(data):
        words = list(struct.unpack("<%dI" % (len(data) // 4), data))
        words = edit(words)
        return struct.pack("<%dI" % len(words), *words)
    return apply


def rename_entry_point(words):
    words[entry_point(words) + 3] = 0x6e69616f  # "main" -> "oain": crashed lavapipe
    return words


def make_module_corpus(loom, corpus):
    """Writes the committed modules of tests/hostile/modules from fill.loom.json (kept for
    when the module format changes): fill_cpu and fill_vulkan as `loom compile` writes them,
    then the hostile edits of them."""
    import subprocess
    import tempfile
    doc = os.path.join(corpus, "fill.loom.json")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ("cpu", "vulkan"):
            out = os.path.join(corpus, "fill_" + arch)
            shutil.rmtree(out, ignore_errors=True)
            subprocess.run([loom, "compile", doc, "--arch", arch, "--folder", "-o", out,
                            "--cache-dir", tmp], check=True)
        # An adjoint kernel in a pipeline (docs/autodiff.md): descent.loom.json.
        out = os.path.join(corpus, "descent_cpu")
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([loom, "compile", os.path.join(corpus, "descent.loom.json"), "--arch",
                        "cpu", "--folder", "-o", out, "--cache-dir", tmp], check=True)
    cpu, vulkan = os.path.join(corpus, "fill_cpu"), os.path.join(corpus, "fill_vulkan")
    descent = os.path.join(corpus, "descent_cpu")
    value = '"value": 2.5'
    cases = {
        "inf_argument_cpu": (cpu, lambda t: t.replace(value, '"value": "inf"'), None),
        "nan_argument_cpu": (cpu, lambda t: t.replace(value, '"value": "nan"'), None),
        "not_a_number_cpu": (cpu, lambda t: t.replace(value, '"value": "NaN!"'), None),
        "entry_point_oain": (vulkan, None, spirv_edit(rename_entry_point)),
        "spirv_cut_in_entry_point": (vulkan, None,
                                     spirv_edit(lambda w: w[:entry_point(w) + 2])),
        # K.grad's entry names a kernel the module lacks; its twin is bound to the wrong
        # parameter; the pipeline binds the twin to an ndarray of another shape.
        "adjoint_of_missing_kernel": (descent, lambda t: t.replace(
            '"name": "sq.grad"', '"name": "gone.grad"').replace('"of": "sq"', '"of": "gone"'),
            None),
        "twin_of_wrong_param": (descent, lambda t: t.replace('"of": "x"', '"of": "c"'), None),
        "twin_of_another_shape": (descent, lambda t: t.replace('"value": "xs.grad"',
                                                               '"value": "small"'), None),
    }
    for name, (src, meta, blob) in cases.items():
        out = os.path.join(corpus, name)
        shutil.rmtree(out, ignore_errors=True)
        edit_module(src, out, meta, blob)


GENERATORS = {
    "call_chain": lambda n, corpus: call_chain(n),
    "duplicate_member": lambda n, corpus: duplicate_member(n),
    "stores": lambda n, corpus: stores(n),
    "formula_names": lambda n, corpus: formula_names(n),
    "long_field_name": lambda n, corpus: long_field_name(n),
    "long_formula_name": lambda n, corpus: long_formula_name(n),
    "metadata_members": lambda n, corpus: metadata_members(n, corpus, False),
    "metadata_duplicate": lambda n, corpus: metadata_members(n, corpus, True),
}


def generate(name, size, out, corpus):
    """Writes generator `name` of `size` to `out` (a file, or a folder for module makers)."""
    made = GENERATORS[name](size, corpus)
    if callable(made):
        made(out)
        return
    with open(out, "w") as f:
        f.write(made)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "modules":  # generate.py modules LOOM CORPUS_DIR
        make_module_corpus(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    generate(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else ".")
