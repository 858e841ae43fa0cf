#!/bin/sh
# Runs a command under a private Xvfb server, then stops that server: windowed tests start
# their own display (CI has none). Xvfb picks a free display number itself (-displayfd), so
# parallel runs never collide; -noreset keeps the server up between tests (by default it
# resets when its last client, one test's window, goes, and the next test's connection can
# arrive mid-reset and fail).
#   tests/render/with_xvfb.sh COMMAND [ARGS...]
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "with_xvfb.sh: Xvfb is not installed (Debian package xvfb)" >&2
  exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/loom-xvfb.XXXXXX") || exit 1
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp -noreset 3>"$dir/display" 2>"$dir/xvfb.log" &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM
i=0
while [ ! -s "$dir/display" ] && [ $i -lt 100 ]; do
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
  i=$((i + 1))
done
if [ ! -s "$dir/display" ]; then
  echo "with_xvfb.sh: Xvfb did not start:" >&2
  cat "$dir/xvfb.log" >&2
  exit 1
fi
DISPLAY=":$(head -n 1 "$dir/display")"
export DISPLAY
mkdir -p "$dir/xdg" && chmod 700 "$dir/xdg"
XDG_RUNTIME_DIR="$dir/xdg"
export XDG_RUNTIME_DIR
"$@"
status=$?
exit $status
