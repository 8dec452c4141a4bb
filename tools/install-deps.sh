#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs, as root on Debian 12, whatever is missing to build and test leash.
# Only packages that are not installed yet are asked for; apt-get update runs
# only when something must be installed. Usage:
#   tools/install-deps.sh [build|test|slurm|packaging|optional|chromium]
# (optional: what some tests use where it is there and skip without: the
# headless browser of tests/report/chromium.sh, ~300 MB, and scikit-learn for
# the pynisher drop-in's sklearn fit over its limit
# (test_pynisher_compat.py); run-tests.sh asks for them as root unless
# --hide-optional; chromium: the same, by its old name).
# Installs are serialized with other users of this machine's package manager
# through flock on /tmp/leash-apt.lock (LEASH_APT_LOCK_HELD=1: the caller
# holds it). Exit 1 with the list of what is missing where it cannot install
# (not root, no registry): the caller decides whether that is a failure.
set -euo pipefail

build_pkgs=(gcc make autoconf automake pkg-config libcgroup-dev libseccomp-dev libcap-dev
        libinih-dev libjson-c-dev libsystemd-dev)
test_pkgs=(python3 procps util-linux clang clang-format libclang-rt-14-dev strace)
# the slurm tier (tests/slurm) and spank_leash.so: a single-node Slurm cluster; slurmdbd
# and mariadb-server for the systemd VM's node, whose OOM job sacct must call OUT_OF_MEMORY
slurm_pkgs=(slurm-wlm slurmd slurmctld slurm-client munge libslurm-dev iproute2 slurmdbd mariadb-server)
# the packaging tier (tests/packaging/packages.sh)
packaging_pkgs=(debhelper dpkg-dev fakeroot lintian rpm bash-completion man-db libslurm-dev binutils dh-python python3-dev)
# the Python package (issue 13): its headers to build, pytest to test, setuptools
# and pip for the `pip install --no-build-isolation` test, wheel and venv for
# the wheel-into-a-venv test (issue 42), psutil for bench/;
# dask.distributed for leash.dask (tests/python/test_dask.py, issue 42);
# pytest-timeout bounds each test (tests/python/run.sh: a hang fails the run)
test_pkgs+=(python3-dev python3-pytest python3-psutil python3-setuptools python3-pip python3-wheel python3-venv
        python3-distributed python3-pytest-timeout)

want=("${build_pkgs[@]}")
[ "${1:-build}" = test ] && want+=("${test_pkgs[@]}" "${slurm_pkgs[@]}")
[ "${1:-build}" = slurm ] && want+=("${slurm_pkgs[@]}")
[ "${1:-build}" = packaging ] && want+=("${packaging_pkgs[@]}")
case ${1:-build} in optional | chromium) want=(chromium python3-sklearn) ;; esac

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
if [ "${LEASH_APT_LOCK_HELD:-0}" != 1 ] && command -v flock >/dev/null; then
        exec 9>>/tmp/leash-apt.lock && flock 9
fi
apt-get update -qq || { echo "install-deps: apt-get update failed: cannot install ${missing[*]}" >&2; exit 1; }
# Installing slurmd/slurmctld/munge must not start the system's own daemons
# (the slurm tier starts private ones, by pid): without a policy-rc.d of the
# machine's, one that refuses every start is in place during the install.
policy=/usr/sbin/policy-rc.d
own_policy=false
if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=true
fi
rc=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
if $own_policy; then rm -f "$policy"; fi
exit $rc
