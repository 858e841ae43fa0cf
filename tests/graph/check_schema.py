#!/usr/bin/env python3
"""Validates the repository's graph documents against docs/graph.schema.json.

Current documents must be valid; documents holding older format or node versions (upgraded
on load; their file names say "v1") must not be.
Needs the jsonschema module (Debian package python3-jsonschema, which tools/bootstrap.sh
installs); without it the test fails rather than pass unchecked.
"""
import glob
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (Debian package python3-jsonschema; tools/bootstrap.sh installs it)")
    sys.exit(1)

root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LOOM_SOURCE_DIR", ".")
with open(os.path.join(root, "docs/graph.schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

failures = 0
checked = 0
for path in sorted(glob.glob(os.path.join(root, "**/*.loom.json"), recursive=True)):
    if "/build" in path[len(root):]:
        continue
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    errors = list(validator.iter_errors(doc))
    checked += 1
    if "v1" in os.path.basename(path):
        if not errors:
            print(f"{path}: a document of older versions passes the current schema")
            failures += 1
        continue
    for e in errors[:3]:
        print(f"{path}: {'/'.join(str(p) for p in e.absolute_path)}: {e.message[:200]}")
    failures += bool(errors)

# Things the schema must refuse.
bad = {
    "unknown node type": {"format": "loom-graph", "version": 2,
                          "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "sine"}]}]},
    "format version 1": {"format": "loom-graph", "version": 1},
    "stale clamp": {"format": "loom-graph", "version": 2,
                    "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "clamp"}]}]},
    "huge extent": {"format": "loom-graph", "version": 2,
                    "fields": [{"name": "f", "type": "f32", "shape": [3000000000]}]},
    "empty comment": {"format": "loom-graph", "version": 2,
                      "kernels": [{"name": "k", "nodes": []}],
                      "layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, 0, 10]}]}]},
    "comment colour name": {"format": "loom-graph", "version": 2,
                            "kernels": [{"name": "k", "nodes": []}],
                            "layout": [{"graph": "k", "comments": [{"title": "t", "rect": [0, 0, 5, 10], "color": "red"}]}]},
    "reroute at version 2": {"format": "loom-graph", "version": 2,
                                       "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "reroute", "version": 2}]}]},
    "a view shown as dots": {"format": "loom-graph", "version": 2, "view": {"show": "f", "as": "dots"}},
    "a block_local name that is no string": {"format": "loom-graph", "version": 2,
                                             "kernels": [{"name": "k", "block_local": [3], "nodes": []}]},
    "a block_local name given twice": {"format": "loom-graph", "version": 2,
                                       "kernels": [{"name": "k", "block_local": ["f", "f"], "nodes": []}]},
}
good = {
    "comment frame and reroute": {"format": "loom-graph", "version": 2,
                                  "kernels": [{"name": "k", "nodes": [{"id": 1, "type": "const", "params": {"value": 1}},
                                                                      {"id": 2, "type": "reroute", "inputs": {"in": "1"}}]}],
                                  "layout": [{"graph": "k", "positions": {"1": [0, 0]},
                                              "comments": [{"title": "Setup", "rect": [-20, -40, 300, 200], "color": "#3a6ea5"}]}]},
    "block_local list": {"format": "loom-graph", "version": 2,
                         "fields": [{"name": "t", "type": "f32", "shape": [64, 64]}],
                         "kernels": [{"name": "k", "workgroup_size": 64, "block_local": ["t"], "nodes": []}]},
}
for what, doc in good.items():
    for e in list(validator.iter_errors(doc))[:3]:
        print(f"the schema refuses a {what}: {e.message[:200]}")
        failures += 1
for what, doc in bad.items():
    if validator.is_valid(doc):
        print(f"the schema accepts a document with {what}")
        failures += 1

print(f"{checked} documents checked, {failures} problems")
sys.exit(1 if failures else 0)
