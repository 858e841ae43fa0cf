#!/usr/bin/env python3
"""Runs one case of a hostile-input folder (tests/hostile/README.md) and checks its outcome.

  run_case.py FOLDER CASE --loom PATH --loom-module PATH --work DIR

FOLDER/cases.txt has one case a line: `NAME | COMMAND | EXPECT [| OPTION ...]`.
COMMAND is a `loom` or `loom-module` command line; in it {dir} is FOLDER, {work} a scratch
folder of the case, {fifo} a FIFO made there, {gen:GENERATOR:SIZE} an input generate.py
writes there. EXPECT is `ok: TEXT` (exit status 0) or `error: TEXT` (exit status 1 to 125,
no signal), TEXT a fragment the output must hold (several joined by ` && `; {dir} and
{work} are replaced there too); alternatives joined by ` || ` (a device may give either). OPTIONs: `max_output=N` (the output is at most N bytes), `npy=FILE:VALUE` (every
element of the f32 .npy file FILE the command wrote in {work} is VALUE: a number, inf, nan),
`vulkan` (the case needs a device: skipped, exit 77, where the machine has none, unless
LOOM_REQUIRE_VULKAN=1). A crash or a hang fails: ctest's TIMEOUT bounds each case.
"""
import argparse
import math
import os
import shlex
import shutil
import stat
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

SKIP = 77


def read_case(folder, name):
    with open(os.path.join(folder, "cases.txt")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if parts[0] == name:
                return parts
    sys.exit("no case %s in %s/cases.txt" % (name, folder))


def check_npy(path, want):
    """Every element of the f32 .npy file at `path` is `want` (NaN: is NaN)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        header_len = struct.unpack("<H", data[8:10])[0]
        header = data[10:10 + header_len].decode()
        if "'<f4'" not in header:
            return ["%s: not f32 (%s)" % (path, header.strip())]
        body = data[10 + header_len:]
        values = struct.unpack("<%df" % (len(body) // 4), body)
    except (OSError, struct.error, UnicodeDecodeError) as e:
        return ["%s: %s" % (path, e)]
    wrong = [v for v in values if not (math.isnan(v) if math.isnan(want) else v == want)]
    print("%s: %d value(s), %s" % (path, len(values), ", ".join(repr(v) for v in values[:8])))
    if not values or wrong:
        return ["%s: expected every value %r, found %r" % (path, want, values[:8])]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("case")
    ap.add_argument("--loom", required=True)
    ap.add_argument("--loom-module", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()

    name, command, expect, *options = read_case(a.folder, a.case)
    work = os.path.join(a.work, os.path.basename(a.folder.rstrip("/")), name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def expand(text):
        return text.replace("{dir}", a.folder).replace("{work}", work)

    args = []
    for token in shlex.split(command):
        if token.startswith("{gen:"):
            gen, size = token[5:-1].split(":")
            out = os.path.join(work, "%s_%s" % (gen, size))
            generate.generate(gen, int(size), out, a.folder)
            token = out
        elif "{fifo}" in token:
            fifo = os.path.join(work, "fifo")
            os.mkfifo(fifo)
            assert stat.S_ISFIFO(os.stat(fifo).st_mode)
            token = token.replace("{fifo}", fifo)
        args.append(expand(token))
    args[0] = {"loom": a.loom, "loom-module": a.loom_module}[args[0]]

    print("case %s: %s" % (name, " ".join(args)), flush=True)
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=work)
    out = run.stdout.decode("utf-8", "replace")
    print("exit status %d, %d bytes of output:\n%s" %
          (run.returncode, len(out), out if len(out) < 4000 else out[:2000] + "\n...\n" + out[-2000:]))

    if "vulkan" in options and "no Vulkan device" in out and os.environ.get("LOOM_REQUIRE_VULKAN") != "1":
        print("skipped: no Vulkan device")
        return SKIP

    failures = []
    if run.returncode < 0:
        failures.append("killed by signal %d" % -run.returncode)
    # Alternatives (` || `): the outcome must be one of them.
    misses = []
    for alternative in expect.split(" || "):
        kind, _, fragments = alternative.partition(": ")
        miss = []
        if kind == "ok" and run.returncode != 0:
            miss.append("expected exit status 0")
        if kind == "error" and not 1 <= run.returncode <= 125:
            miss.append("expected an error (exit status 1 to 125)")
        for fragment in fragments.split(" && "):
            if expand(fragment) not in out:
                miss.append("the output lacks: %s" % expand(fragment))
        misses.append(miss)
    if all(misses):
        failures += [m for miss in misses for m in miss]
    for option in options:
        if option.startswith("npy="):
            name, want = option[4:].split(":")
            failures += check_npy(os.path.join(work, name), float(want))
        if option.startswith("max_output="):
            limit = int(option.split("=")[1])
            if len(out) > limit:
                failures.append("%d bytes of output, more than %d" % (len(out), limit))
    for f in failures:
        print("FAILED: " + f)
    if not failures:
        print("passed: " + expect)
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
