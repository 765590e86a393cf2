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
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "install-tools: installing ${need[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-tools: need root or sudo to install ${need[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for t in verilator yosys iverilog; do
  command -v "$t" >/dev/null 2>&1 || { echo "install-tools: $t still missing after install" >&2; exit 1; }
done
echo "install-tools: $(verilator --version | head -1); $(yosys -V | head -1)"
