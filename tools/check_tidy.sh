#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over every product source file (compiler,
# runtime, engine_plugin, editor, tools) of a configured build's compile_commands.json, one
# file per core, and fails on any finding. Headers are checked through the files that include
# them; a finding in a header counts once.
#   tools/check_tidy.sh [build-dir] [folder...]   (default: build, every product folder)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
folders=("$@")
[ ${#folders[@]} -eq 0 ] && folders=(compiler runtime engine_plugin editor tools)

clang_tidy=${CLANG_TIDY:-$(command -v clang-tidy-14 || command -v clang-tidy || true)}
if [ -z "$clang_tidy" ]; then
  echo "check_tidy: clang-tidy not found (apt install clang-tidy)" >&2
  exit 1
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check_tidy: $build/compile_commands.json missing; configure the build first" >&2
  exit 1
fi

mapfile -t files < <(python3 - "$build/compile_commands.json" "$PWD" "${folders[@]}" <<'PY'
import json, os, sys
commands, root, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
files = {os.path.normpath(os.path.join(entry["directory"], entry["file"]))
         for entry in json.load(open(commands))}
for path in sorted(files):
    relative = os.path.relpath(path, root)
    if relative.split(os.sep)[0] in folders:
        print(path)
PY
)
if [ ${#files[@]} -eq 0 ]; then
  echo "check_tidy: no source file of ${folders[*]} in $build/compile_commands.json" >&2
  exit 1
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$SECONDS
# gcc's compile commands: clang ignores the warning flags it does not know.
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$(nproc)" sh -c '
  log="$3/$(printf %s "$4" | tr / _).log"
  "$1" -p "$2" --quiet --warnings-as-errors="*" --extra-arg=-Wno-unknown-warning-option "$4" \
    >"$log" 2>&1 || echo "$4" >>"$log.failed"' _ "$clang_tidy" "$build" "$logs" || true

mapfile -t findings < <(cat "$logs"/*.log | grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' | sort -u)
failed=$(find "$logs" -name '*.failed' | wc -l)
elapsed=$((SECONDS - start))
if [ ${#findings[@]} -gt 0 ] || [ "$failed" -gt 0 ]; then
  printf '%s\n' "${findings[@]}"
  echo "check_tidy: ${#findings[@]} findings; $failed of ${#files[@]} files with findings or errors (${elapsed}s)"
  exit 1
fi
echo "check_tidy: ${#files[@]} files, 0 findings (${elapsed}s)"
