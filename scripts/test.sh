#!/usr/bin/env bash
# Every test of the workspace, with the tools they need installed first.
# Co-simulation tests need Verilator; they would skip with a visible reason
# without it, so this script installs it and they always run here and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-tools.sh --tests
# A whole-suite run (CI: from a clean clone) gains nothing from incremental
# caches but their cost; CARGO_INCREMENTAL=1 keeps them for edit-test loops.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
# Emitted designs are kept between the suite's processes (keyed by a
# fingerprint of the sources: exanet_hdl::emit::memoized); rust-hdl takes
# seconds of CPU per router emission and dozens of processes ask for one.
export EXANET_EMIT_CACHE="${EXANET_EMIT_CACHE:-$PWD/target/exanet-cache/emit}"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -q -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
cargo test --workspace --no-fail-fast
