#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# --devices and --gpus (issue 28): the cgroup device program on the job
# cgroup. The device cgroup check comes before the driver's open, so a node
# the test makes with NVIDIA's major (195) and no driver behind it opens
# with ENXIO when allowed and EPERM when refused: the path does not matter,
# only major:minor. Each refusal has its control: the same open without the
# option. The hostile job: sub-cgroups stay under the program; a job that
# keeps CAP_SYS_ADMIN detaches it (the control), one without cannot; a job
# that keeps uid 0 without --isolate can leave the job cgroup (said in the
# report), with --isolate it cannot.
. "$(dirname "$0")/lib.sh"

unset CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES LEASH_NVML_LIBRARY

# one line on stderr that names the value, exit 125, nothing left behind
refused() { # NAME VALUE-TEXT ARGS...
        local name=$1 text=$2
        shift 2
        run_leash "$@" -- true
        check "$name: exit 125 ($RC)" test "$RC" = 125
        check "$name: one line naming '$text'" bash -c '[ "$(grep -c . <<<"$1")" -le 2 ] && grep -qF -- "$2" <<<"$1"' _ "$ERR" "$text"
        check "$name: no cgroup left" no_leftover_cgroups
}

if [ "$(id -u)" != 0 ]; then
        # a user cannot load a device program: refused, never run unrestricted
        refused "as uid $(id -u), --devices" "--devices 'c 1:5 rw'" --devices 'c 1:5 rw'
        check "as uid $(id -u): the reason says root is needed or no cgroup" \
                bash -c '[[ "$1" == *"needs root"* || "$1" == *"no cgroup"* ]]' _ "$ERR"
        refused "as uid $(id -u), --gpus none" "--gpus none" --gpus none
        "$LEASH" check --cgroup-parent "$PARENT" >"$TMP/check" 2>&1
        check "as uid $(id -u): leash check says the device filter is not available, and why" \
                grep -q '^  device filter (--gpus, --devices): not available: .*needs root' "$TMP/check"
        finish
fi

# only a kernel without device programs skips; any other refusal is a failure
run_leash --devices 'a *:* rwm' -- true
[[ "$RC" != 0 && "$ERR" == *"has no cgroup device programs"* ]] && skip_all "no cgroup device program here: $ERR"
"$LEASH" check --cgroup-parent "$PARENT" >"$TMP/check" 2>&1
check "leash check says the device filter is available" \
        grep -q '^  device filter (--gpus, --devices): available' "$TMP/check"
check "--devices 'a *:* rwm' runs as root ($RC${ERR:+: $ERR})" test "$RC" = 0

NODES=$(mktemp -d /dev/leash-test-devices.XXXXXX) || skip_all "cannot make a directory under /dev"
cleanup_nodes() { rm -rf "$NODES"; }
trap cleanup_nodes EXIT
mknod "$NODES/nvidia0" c 195 0 && mknod "$NODES/nvidia1" c 195 1 && mknod "$NODES/nvidiactl" c 195 255 ||
        skip_all "cannot mknod under $NODES"

# opens NODE... in the job: one line per node, "NODE ok", "NODE EPERM" or "NODE other: MESSAGE"
PROBE='for n; do if msg=$( (: <"$n") 2>&1); then echo "$n ok";
        elif [[ $msg == *"not permitted"* ]]; then echo "$n EPERM"; else echo "$n other"; fi; done'
probe() { run_leash "$@" -- bash -c "$PROBE" probe /dev/null /dev/zero "$NODES/nvidia0" "$NODES/nvidia1" "$NODES/nvidiactl"; }
says() { grep -qx "$1 $2" <<<"$OUT"; } # NODE VERDICT

probe
check "control: /dev/null opens without an option" says /dev/null ok
check "control: /dev/zero opens" says /dev/zero ok
check "control: the fake GPU node is not refused (no driver: ENXIO)" says "$NODES/nvidia0" other
check "control: the second fake GPU node is not refused" says "$NODES/nvidia1" other
run_leash -- sh -c 'echo "${CUDA_VISIBLE_DEVICES-unset}"'
check "control: CUDA_VISIBLE_DEVICES not set" test "$OUT" = unset

probe --devices 'c 1:5 rw' -o "$TMP/d.json"
diag "$OUT"
check "--devices 'c 1:5 rw': /dev/null (c 1:3) refused" says /dev/null EPERM
check "--devices 'c 1:5 rw': /dev/zero allowed" says /dev/zero ok
check "--devices: a GPU node not listed is refused" says "$NODES/nvidia0" EPERM
check "--devices: the report says the cgroup device program enforced it" \
        test "$(jget "$TMP/d.json" limits.devices.enforced_by)" = "cgroup device program"
check "--devices: the report names the value" test "$(jget "$TMP/d.json" limits.devices.value)" = "--devices 'c 1:5 rw'"
run_leash --devices '/dev/zero r' -- bash -c '(: </dev/zero) && echo read-ok; (: >/dev/zero) 2>/dev/null || echo write-refused'
check "--devices '/dev/zero r': a path, read allowed, write refused" test "$OUT" = "read-ok
write-refused"

probe --gpus none
check "--gpus none: the fake GPU node is refused" says "$NODES/nvidia0" EPERM
check "--gpus none: nvidiactl too" says "$NODES/nvidiactl" EPERM
check "--gpus none: other devices stay allowed (/dev/null)" says /dev/null ok
run_leash --gpus none -f text -o "$TMP/t.txt" -- true
check "--gpus none: the text report has the devices line" \
        grep -q '^limit:     devices (--gpus none) by cgroup device program: ' "$TMP/t.txt"
run_leash --gpus none -o "$TMP/g.json" -- true
check "--gpus none: the report lists the variables it set (names only)" \
        test "$(jget "$TMP/g.json" sandbox.environment.set)" = '["CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"]'
run_leash --gpus none -- sh -c 'echo "$CUDA_VISIBLE_DEVICES $ROCR_VISIBLE_DEVICES"'
check "--gpus none: CUDA_VISIBLE_DEVICES=-1 ROCR_VISIBLE_DEVICES=-1" test "$OUT" = "-1 -1"

probe --gpus 0
check "--gpus 0: GPU 0's node is allowed" says "$NODES/nvidia0" other
check "--gpus 0: GPU 1's node is refused" says "$NODES/nvidia1" EPERM
check "--gpus 0: the control node nvidiactl is allowed" says "$NODES/nvidiactl" other
run_leash --gpus 0 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES $ROCR_VISIBLE_DEVICES"'
check "--gpus 0 without NVML: CUDA_VISIBLE_DEVICES=0" test "$OUT" = "0 0"
run_leash --gpus 0 --env CUDA_VISIBLE_DEVICES=7 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"'
check "--env after --gpus wins for the variable" test "$OUT" = 7

probe --gpus 1 --devices 'c 1:5 rw'
check "--gpus 1 --devices: GPU 1 allowed" says "$NODES/nvidia1" other
check "--gpus 1 --devices: GPU 0 refused" says "$NODES/nvidia0" EPERM
check "--gpus 1 --devices: /dev/null refused (not in --devices)" says /dev/null EPERM
check "--gpus 1 --devices: /dev/zero allowed" says /dev/zero ok

STANDIN="$HELPERS/libnvml-standin.so"
if [ -f "$STANDIN" ]; then
        printf 'gpu 0 GPU-0000aaaa-standin StandIn-A\ngpu 1 GPU-1111bbbb-standin StandIn-B\n' >"$TMP/nvml"
        LEASH_NVML_STANDIN="$TMP/nvml" LEASH_NVML_LIBRARY="$STANDIN" \
                run_leash --gpus 1 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES $ROCR_VISIBLE_DEVICES"'
        check "--gpus 1 with NVML: CUDA_VISIBLE_DEVICES is GPU 1's UUID" test "$OUT" = "GPU-1111bbbb-standin 1"
        LEASH_NVML_STANDIN="$TMP/nvml" LEASH_NVML_LIBRARY="$STANDIN" run_leash --gpus 5 -- true
        check "--gpus 5 where NVML lists 2: exit 125 naming the GPU ($RC)" \
                bash -c '[ "$1" = 125 ] && [[ "$2" == *"no GPU 5 (NVML lists 2)"* ]]' _ "$RC" "$ERR"
        # issue 38.11: GPU 0's DRM nodes are those sysfs lists under the PCI
        # address NVML reports, not card0/renderD128 by its index (on a host
        # with a BMC, card0 is the BMC's VGA). GPU 0 at a PCI device of this
        # host that has no DRM nodes: card0 and renderD128 are refused; the
        # control, a driver that gives no address: the index guess allows them
        pcidev=
        for p in /sys/bus/pci/devices/*; do [ -e "$p/drm" ] || { pcidev=${p##*/}; break; }; done
        if [ -n "$pcidev" ] && mknod "$NODES/card0" c 226 0 && mknod "$NODES/renderD128" c 226 128; then
                drm_probe() { LEASH_NVML_STANDIN="$TMP/nvml" LEASH_NVML_LIBRARY="$STANDIN" \
                        run_leash --gpus 0 -- bash -c "$PROBE" probe "$NODES/card0" "$NODES/renderD128"; }
                drm_probe
                check "control: NVML gives no PCI address: GPU 0 is card0 and renderD128 by its index" \
                        bash -c 'grep -qx "$1/card0 other" <<<"$2" && grep -qx "$1/renderD128 other" <<<"$2"' _ "$NODES" "$OUT"
                echo "pci 0 0000${pcidev^^}" >>"$TMP/nvml"
                drm_probe
                check "--gpus 0 at PCI $pcidev (no DRM nodes there): card0 and renderD128 refused" \
                        bash -c 'grep -qx "$1/card0 EPERM" <<<"$2" && grep -qx "$1/renderD128 EPERM" <<<"$2"' _ "$NODES" "$OUT"
        else
                SKIP_WHY="no PCI device without DRM nodes here, or no mknod"
                skip "--gpus by PCI address"
        fi
else
        SKIP_WHY="no stand-in NVML at $STANDIN"
        skip "--gpus with NVML"
fi

# --- the hostile job -----------------------------------------------------------
SUB='cg=$(awk -F: "\$1 == 0 { print \$3 }" /proc/self/cgroup); mkdir "$0$cg/sub" && echo $$ >"$0$cg/sub/cgroup.procs" &&
        grep -q "/sub$" /proc/self/cgroup && { (: </dev/null) 2>/dev/null && echo opened || echo refused; }'
run_leash -- bash -c "$SUB" "$CG2"
check "control: a job moved into its own sub-cgroup opens /dev/null" test "$OUT" = opened
run_leash --devices 'c 1:5 rw' -- bash -c "$SUB" "$CG2"
check "--devices: still refused in the job's own sub-cgroup (inherited)" test "$OUT" = refused

DETACH='cg=$(awk -F: "\$1 == 0 { print \$3 }" /proc/self/cgroup); "$1" "$0$cg"; (: </dev/null) 2>/dev/null && echo opened || echo refused'
run_leash --caps keep --devices 'c 1:5 rw' -o "$TMP/keep.json" -- bash -c "$DETACH" "$CG2" "$HELPERS/lh-devdetach"
diag "$OUT"
check "control: a root job keeping CAP_SYS_ADMIN detaches the program and opens /dev/null" \
        test "$OUT" = "detached 1
opened"
check "control: and the report said so (weakened)" bash -c '[[ "$1" == weakened*CAP_SYS_ADMIN* ]]' _ "$(jget "$TMP/keep.json" limits.devices.note)"
run_leash --devices 'c 1:5 rw' -- bash -c "$DETACH" "$CG2" "$HELPERS/lh-devdetach"
diag "$OUT"
check "a root job with leash's default capabilities cannot detach it" \
        bash -c '[[ "$1" != detached* && "$1" == *refused ]]' _ "$OUT"

LEAVE='echo $$ 2>&- >"$0/cgroup.procs" && echo left || echo stayed; (: </dev/null) 2>/dev/null && echo opened || echo refused'
# the cgroup2 root: the one cgroup with controllers for its children that may hold processes
run_leash --devices 'c 1:5 rw' -o "$TMP/leave.json" -- bash -c "$LEAVE" "$CG2"
diag "without --isolate: $OUT"
check "uid 0 without --isolate leaves the job cgroup and the program (the weakness the report names)" \
        test "$OUT" = "left
opened"
check "the report says the job can leave the program" bash -c '[[ "$1" == weakened*"move itself out"* ]]' _ "$(jget "$TMP/leave.json" limits.devices.note)"
run_leash --isolate --devices 'c 1:5 rw' -- bash -c "$LEAVE" "$CG2"
check "with --isolate the job cannot leave: /dev/null stays refused" test "$OUT" = "stayed
refused"

# --- the profile keys ----------------------------------------------------------
printf '[gpuless]\ngpus = none\ndevices = c 1:5 rw, /dev/null r\n' >"$TMP/p.ini"
run_leash --profile-file "$TMP/p.ini" --profile gpuless -o "$TMP/p.json" -- \
        bash -c "$PROBE" probe /dev/null /dev/zero "$NODES/nvidia0"
check "profile keys gpus and devices: GPU refused, /dev/null read allowed" \
        bash -c 'grep -qx "$1/nvidia0 EPERM" <<<"$2" && grep -qx "/dev/null ok" <<<"$2"' _ "$NODES" "$OUT"
check "profile keys: the report names both" \
        test "$(jget "$TMP/p.json" limits.devices.value)" = "--gpus none --devices 'c 1:5 rw,c 1:3 r'"

# --- bad values ------------------------------------------------------------------
refused "--gpus GPU-abc (a UUID)" "GPU-abc" --gpus GPU-abc
refused "--gpus 64" "'64'" --gpus 64
refused "--gpus 3-1" "3-1" --gpus 3-1
refused "--devices access x" "c 1:3 rwx" --devices 'c 1:3 rwx'
refused "--devices type x" "x 1:3" --devices 'x 1:3 rw'
refused "--devices major out of range" "c 4096:1" --devices 'c 4096:1 rw'
refused "--devices a path that is missing" "/nonexistent/dev" --devices '/nonexistent/dev rw'
refused "--devices a file that is no device node" "/etc/passwd" --devices '/etc/passwd r'
refused "--devices empty entry" "--devices" --devices 'c 1:5 rw,'

finish
