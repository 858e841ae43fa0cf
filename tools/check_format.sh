#!/usr/bin/env bash
# Checks that every C and C++ file of the repository is formatted by the repository's
# .clang-format (the `format_check` test runs this in CI). Fix with:
#   tools/check_format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [ -z "$clang_format" ]; then
  echo "check_format: clang-format not found (apt install clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files -- '*.c' '*.cpp' '*.h' | grep -v '^tests/layers/fixture/')
if [ "${1:-}" = "--fix" ]; then
  "$clang_format" -i "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$clang_format" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check_format: not formatted: %s\n' "${bad[@]}"
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from .clang-format; run tools/check_format.sh --fix"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
