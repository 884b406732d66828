#!/usr/bin/env bash
# Installs the Debian packages Motor for Mono needs, only those that are missing.
# Works as root; uses sudo otherwise. Never downloads anything but Debian packages.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  mono-devel libmono-2.0-dev          # mcs, the runtime, mono-2.pc (embedding headers)
  mpich libmpich-dev                  # MPICH 4 (pkg-config mpich, mpiexec.mpich)
  libffi-dev                          # closures for user reduction operators
  clang-14 libclang-rt-14-dev         # libFuzzer build of the serializer's validator
  python3 python3-matplotlib          # bench and sample plots (PNG)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
