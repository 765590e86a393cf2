#!/usr/bin/env bash
# Install the external tools exanet drives (Debian packages): Verilator for
# co-simulation and lint, Yosys for resource estimates, Icarus Verilog for
# netlist checks, and a C++ compiler for Verilated models.
# Does nothing when they are all present. Needs root (or sudo) otherwise.
set -euo pipefail
need=()
command -v verilator >/dev/null 2>&1 || need+=(verilator)
command -v yosys >/dev/null 2>&1 || need+=(yosys)
command -v iverilog >/dev/null 2>&1 || need+=(iverilog)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
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
