#!/usr/bin/env bash
# Install the external tools exanet drives (Debian packages): Verilator for
# co-simulation and lint, Yosys for resource estimates, Icarus Verilog for
# netlist checks, a C++ compiler for Verilated models, and tclsh for the
# Vivado-script checks.
# Does nothing when they are all present. Needs root (or sudo) otherwise.
set -euo pipefail
need=()
command -v verilator >/dev/null 2>&1 || need+=(verilator)
command -v yosys >/dev/null 2>&1 || need+=(yosys)
command -v iverilog >/dev/null 2>&1 || need+=(iverilog)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
# tclsh runs the generated Vivado scripts against command stubs (tests).
command -v tclsh >/dev/null 2>&1 || need+=(tcl)
# Python tools the tests use on the generated files (skipped visibly when
# absent): systemrdl-compiler (register map), fusesoc (core file lint).
if command -v python3 >/dev/null 2>&1; then
  if ! python3 -c "import systemrdl" >/dev/null 2>&1 || ! command -v fusesoc >/dev/null 2>&1; then
    echo "install-tools: installing systemrdl-compiler and fusesoc (pip)"
    python3 -m pip install --quiet systemrdl-compiler fusesoc ||
      echo "install-tools: pip install failed; the SystemRDL and FuseSoC checks will be skipped" >&2
  fi
fi
# Tools only some tests use, which skip with a visible reason without them
# (and fail under CI): a single-node Slurm with munge (generators/tests/slurm.rs
# runs a sweep's sbatch array) and headless Chromium (generators/tests/browser.rs
# opens a sweep report). About 40 s of apt on a fresh machine.
# Only with `--tests` (scripts/test.sh): the main job (scripts/run.sh) needs none.
optional=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
if [ "${1:-}" = "--tests" ]; then
  have slurmctld && have slurmd && have sbatch || optional+=(slurm-wlm)
  have munged || optional+=(munge)
  have chromium || optional+=(chromium)
fi
if [ ${#need[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"
  elif [ ${#need[@]} -eq 0 ]; then
    echo "install-tools: not root and no sudo: ${optional[*]} not installed; the real-Slurm and browser tests will say they are skipped" >&2
    exit 0
  else
    echo "install-tools: need root or sudo to install ${need[*]} ${optional[*]}" >&2; exit 1
  fi
fi
echo "install-tools: installing ${need[*]} ${optional[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ${#optional[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${optional[@]}" >/dev/null ||
    echo "install-tools: apt-get install ${optional[*]} failed; the tests that need them will say so" >&2
fi
for t in verilator yosys iverilog; do
  command -v "$t" >/dev/null 2>&1 || { echo "install-tools: $t still missing after install" >&2; exit 1; }
done
echo "install-tools: $(verilator --version | head -1); $(yosys -V | head -1)"
