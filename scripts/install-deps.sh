#!/usr/bin/env bash
# Installs the Debian packages Motor for Mono needs, only those that are missing.
#   install-deps.sh          what building and running the library and the main job need
#   install-deps.sh --bench  that, plus the benchmarks' tables and plots (matplotlib)
#   install-deps.sh --test   that, plus what the test suite needs (libFuzzer's clang, clang-format)
# Works as root; uses sudo otherwise. Never downloads anything but Debian packages.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  mono-devel libmono-2.0-dev          # mcs, the runtime, mono-2.pc (embedding headers)
  mpich libmpich-dev                  # MPICH 4 (pkg-config mpich, mpiexec.mpich)
  libffi-dev                          # closures for user reduction operators
)
case "${1:-}" in
  --bench|--test)
    PACKAGES+=(python3 python3-matplotlib                      # benchmark tables and plots (PNG)
               iproute2 util-linux                             # hosts as network namespaces (ip, nsenter)
               iptables libnetfilter-queue-dev) ;;             # a link delay between them (netdelay)
esac
if [ "${1:-}" = "--test" ]; then
  PACKAGES+=(clang-14 libclang-rt-14-dev                       # libFuzzer build of the validator
             clang-format-14)                                  # the format test (.clang-format)
fi

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
