#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs, as root on Debian 12, whatever is missing to build and test leash.
# Only packages that are not installed yet are asked for; apt-get update runs
# only when something must be installed. Usage: tools/install-deps.sh [build|test]
set -euo pipefail

build_pkgs=(gcc make autoconf automake pkg-config libcgroup-dev libseccomp-dev libcap-dev
        libinih-dev libjson-c-dev)
test_pkgs=(python3 procps util-linux clang clang-format libclang-rt-14-dev)

want=("${build_pkgs[@]}")
[ "${1:-build}" = test ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
        echo "install-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
        exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
