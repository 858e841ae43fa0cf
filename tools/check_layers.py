#!/usr/bin/env python3
"""Holds every #include edge of the repository against the layer table.

The table is the ```layers block of docs/ARCHITECTURE.md: one line per layer,
`folder: what it may include`, where what it may include is a list of repository
folders (a header of folder F is any "F/..." include) and external libraries in
brackets ([llvm], [vulkan], [imgui], [glfw], [spirv-tools], [loom.h]). A file
belongs to the longest folder of the table that contains it; a file under no
folder of the table (tests, benches) is not checked. Within its own folder a
file may include anything.

Run: tools/check_layers.py [REPO_ROOT]; exit status 1 and one line per forbidden
edge (file:line: what it includes, and what its layer may include) when any
exists. A CI test (tests/CMakeLists.txt: layer_check) runs it.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cpp", ".def", ".inc")

# External libraries: the include prefixes that mean "this library".
EXTERNALS = {
    "llvm": ("llvm/", "llvm-c/"),
    "vulkan": ("vulkan/",),
    "imgui": ("imgui", "backends/imgui"),
    "glfw": ("GLFW/",),
    "spirv-tools": ("spirv-tools/", "spirv/"),
    "loom.h": ("loom/loom.h",),
    "benchmark": ("benchmark/",),
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_table(architecture_path):
    text = open(architecture_path, encoding="utf-8").read()
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    if not block:
        sys.exit(f"{architecture_path}: no ```layers block (the table this check reads)")
    table = {}
    for number, line in enumerate(block.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        folder, sep, allowed = line.partition(":")
        if not sep:
            sys.exit(f"{architecture_path}: layers line {number}: expected 'folder: allowed...'")
        folders, externals = [], []
        for item in allowed.split():
            if item.startswith("[") and item.endswith("]"):
                name = item[1:-1]
                if name not in EXTERNALS:
                    sys.exit(f"{architecture_path}: layers line {number}: unknown library {item}")
                externals.append(name)
            else:
                folders.append(item.rstrip("/"))
        table[folder.strip().rstrip("/")] = (folders, externals)
    return table


def layer_of(path, table):
    best = None
    for folder in table:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def external_of(include):
    for name, prefixes in EXTERNALS.items():
        if include.startswith(prefixes):
            return name
    return None


def check(root):
    table = read_table(os.path.join(root, "docs", "ARCHITECTURE.md"))
    problems = []
    checked = 0
    for folder in sorted(table):
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                layer = layer_of(path, table)
                if layer != folder:
                    continue  # belongs to a nested layer, checked there
                checked += 1
                problems += check_file(root, path, layer, table)
    return checked, problems


def check_file(root, path, layer, table):
    folders, externals = table[layer]
    problems = []
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as source:
        for number, line in enumerate(source, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quoted, include = match.group(1) == '"', match.group(2)
            target = layer_of(include, table) if quoted else None
            if target is not None:
                if target == layer or target in folders:
                    continue
                problems.append(f"{path}:{number}: includes {include} (layer {target}); "
                                f"{layer} may include {allowed_text(folders, externals)}")
                continue
            library = external_of(include)
            if library is not None and library not in externals:
                problems.append(f"{path}:{number}: includes {include} ([{library}]); "
                                f"{layer} may include {allowed_text(folders, externals)}")
    return problems


def allowed_text(folders, externals):
    items = folders + [f"[{name}]" for name in externals]
    return " ".join(items) if items else "only its own folder and the standard library"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    checked, problems = check(os.path.abspath(root))
    for problem in problems:
        print(problem)
    print(f"check_layers: {checked} files, {len(problems)} forbidden include(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
