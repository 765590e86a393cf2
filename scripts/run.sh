#!/usr/bin/env bash
# The main job on the built-in default config (the ExaNeSt 8x4x4 machine):
# generate RTL, constraints and Vivado script into out/, then lint every top
# with `verilator --lint-only -Wall` (non-zero exit on any warning).
# Extra arguments go to both commands, e.g. `scripts/run.sh -P router.vcs_per_class=3`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-tools.sh
echo "run.sh: building exanet (release); the first build takes several minutes" >&2
cargo build --release -p exanet-gen
./target/release/exanet generate --out out "$@"
./target/release/exanet lint --out out
