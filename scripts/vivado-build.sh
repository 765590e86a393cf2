#!/usr/bin/env bash
# Build a bitstream and .xsa from a folder written by `exanet generate`:
#   scripts/vivado-build.sh OUT          the node flow (OUT/vivado/node.tcl)
#   scripts/vivado-build.sh OUT --ooc    per-block out-of-context synthesis
# Needs `vivado` on PATH (source Vivado's settings64.sh first); checks its
# version, and writes OUT/reports/node/summary.json (utilization, WNS, WHS).
# Without Vivado it says so and builds nothing. Same as `exanet build --out OUT`.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUT [--ooc]" >&2
  exit 2
fi
out=$1
shift
here=$(cd "$(dirname "$0")/.." && pwd)
if command -v exanet >/dev/null 2>&1; then
  exec exanet build --out "$out" "$@"
fi
exec cargo run --quiet --release --manifest-path "$here/Cargo.toml" -p exanet-gen -- build --out "$out" "$@"
