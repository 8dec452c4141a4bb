#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The real-GPU check of issue 28, for a session that has a device machine
# (an NVIDIA GPU, its driver, nvidia-smi). Run once from the repository root
# after building (BUILD defaults to ./build):
#     bash docs/gpu-check.sh [BUILD] 2>&1 | tee docs/gpu-check.out
# and record the output in docs/. No test depends on it.
#
# 1. leash check lists the GPUs (NVML through the static leash's dlopen).
# 2. A CUDA job allocates a known amount (1 GiB) and holds it 3 s under
#    `leash run --sample 100ms`; while it holds, nvidia-smi
#    --query-compute-apps gives the driver's figure for its pid; leash's peak
#    gpu_memory and usage.gpus[] must match it (NVML's per-process figure
#    includes the CUDA context, so both are ~1 GiB + a few hundred MiB).
# 3. --limit gpu_memory=512M ends the same job with reason gpu_memory.
# 4. --gpus none: the job cannot open /dev/nvidia* even when it unsets
#    CUDA_VISIBLE_DEVICES (the hostile job); the control run without --gpus
#    opens it. --gpus 0: GPU 0 opens, CUDA sees one device.
# LEASH (the binary) may be given instead of BUILD: LEASH=path bash docs/gpu-check.sh.
# The job is PyTorch when python3 has torch, else a small C program that
# dlopens libcuda.so.1 (the driver API: cuInit, cuCtxCreate, cuMemAlloc).
set -u
B=${1:-build}
LEASH=${LEASH:-$B/src/cli/leash}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
say() { echo "== $*"; }
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi; }

say "host"
nvidia-smi -L || { echo "no nvidia-smi: not a GPU machine"; exit 1; }
uname -r; ldd --version 2>&1 | head -1
grep cgroup /proc/self/mountinfo | cut -d' ' -f5,9,10; cat /proc/self/cgroup
ls -l /dev/nvidia* 2>&1 | head
nvidia-smi --query-gpu=index,name,uuid,memory.used,memory.total --format=csv
"$LEASH" --version | head -1
file "$LEASH" | sed 's/,.*static/: static/'
"$LEASH" check

# the job: allocate 1 GiB, say so, hold 3 s
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
        JOB=(python3 -c 'import torch, time, sys
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); torch.cuda.synchronize()
print("allocated", flush=True); time.sleep(3)')
        say "job: PyTorch, 1 GiB"
else
        cat >"$T/alloc.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
typedef int (*init_t)(unsigned);
typedef int (*dev_t_)(int *, int);
typedef int (*ctx_t)(void **, unsigned, int);
typedef int (*alloc_t)(unsigned long long *, size_t);
int main(void) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW);
        int dev;
        void *ctx;
        unsigned long long p;
        if (!h) { fprintf(stderr, "no libcuda.so.1\n"); return 2; }
        init_t cuInit = (init_t) dlsym(h, "cuInit");
        dev_t_ cuDeviceGet = (dev_t_) dlsym(h, "cuDeviceGet");
        ctx_t cuCtxCreate = (ctx_t) dlsym(h, "cuCtxCreate_v2");
        alloc_t cuMemAlloc = (alloc_t) dlsym(h, "cuMemAlloc_v2");
        if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, 0, dev) || cuMemAlloc(&p, 1UL << 30)) {
                fprintf(stderr, "CUDA call failed\n");
                return 3;
        }
        printf("allocated\n");
        fflush(stdout);
        sleep(3);
        return 0;
}
C
        cc -O2 -o "$T/alloc" "$T/alloc.c" -ldl || exit 1
        JOB=("$T/alloc")
        say "job: CUDA driver API (libcuda.so.1), 1 GiB"
fi

say "1 GiB under leash run --sample 100ms"
"$LEASH" run --sample 100ms --series "$T/s.csv" -o "$T/r.json" -- "${JOB[@]}" >"$T/out" 2>&1 &
L=$!
for _ in $(seq 200); do grep -q allocated "$T/out" 2>/dev/null && break; sleep 0.1; done
sleep 1
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits | tee "$T/smi"
wait $L
echo "leash exit: $?"
cat "$T/out"
python3 - "$T/r.json" "$T/smi" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("usage.gpus:", json.dumps(r["usage"]["gpus"], indent=1))
print("usage.gpu_accounting:", r["usage"]["gpu_accounting"])
peak = r["sampling"]["peaks"]["gpu_memory_bytes"]["value"]
smi = [l.split(", ") for l in open(sys.argv[2]) if l.strip()]
smi_mib = sum(int(x[2]) for x in smi)  # the only compute app on a lent machine
print(f"leash peak gpu_memory: {peak} bytes = {(peak or 0) / 2**20:.0f} MiB; nvidia-smi: {smi_mib} MiB")
ok = peak is not None and abs(peak / 2**20 - smi_mib) <= max(64, 0.05 * smi_mib) and peak >= 2**30
print("PASS leash's GPU memory matches nvidia-smi within 5 % and covers the 1 GiB" if ok else
      "FAIL leash's GPU memory does not match nvidia-smi")
sys.exit(0 if ok else 1)
PY
[ $? = 0 ] || fail=1

say "--limit gpu_memory=512M ends it"
"$LEASH" run --sample 100ms --limit gpu_memory=512M -o "$T/l.json" -- "${JOB[@]}" >/dev/null 2>&1
check "reason gpu_memory" "[ \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"reason\"])' $T/l.json)\" = gpu_memory ]"

say "--gpus none: the device nodes cannot be opened, CUDA_VISIBLE_DEVICES unset or not"
OPEN='import os, sys
try:
    os.close(os.open("/dev/nvidia0", os.O_RDWR)); print("open /dev/nvidia0: ok")
except OSError as e:
    print("open /dev/nvidia0:", e.strerror); sys.exit(1)'
CUDA='import os, torch; print("CUDA_VISIBLE_DEVICES=%s available=%s count=%d" % (os.environ.get("CUDA_VISIBLE_DEVICES"), torch.cuda.is_available(), torch.cuda.device_count()))'
python3 -c "$OPEN"; check "control: leash's own shell opens /dev/nvidia0" "[ \$? = 0 ]"
"$LEASH" run -- python3 -c "$OPEN"; check "control: a job without --gpus opens /dev/nvidia0" "[ \$? = 0 ]"
"$LEASH" run --gpus none -o "$T/n.json" -- python3 -c "$OPEN"; check "--gpus none: open refused" "[ \$? = 1 ]"
"$LEASH" run --gpus none -- env -u CUDA_VISIBLE_DEVICES python3 -c "$OPEN"; check "--gpus none, the job unsets CUDA_VISIBLE_DEVICES: open still refused" "[ \$? = 1 ]"
"$LEASH" run --gpus none -- env -u CUDA_VISIBLE_DEVICES python3 -c "$CUDA" 2>&1 | tail -2
python3 -c 'import json,sys; print("limits.devices:", json.dumps(json.load(open(sys.argv[1]))["limits"].get("devices"), indent=1))' "$T/n.json"
"$LEASH" run --gpus 0 -- python3 -c "$CUDA" 2>&1 | tee "$T/g0" | tail -2
check "--gpus 0: CUDA sees one device" "grep -q 'available=True count=1' $T/g0"
"$LEASH" run --gpus 0 -- python3 -c "$OPEN"; check "--gpus 0: /dev/nvidia0 opens" "[ \$? = 0 ]"
"$LEASH" run --gpus 0 -- nvidia-smi -L; check "--gpus 0: nvidia-smi runs in the job" "[ \$? = 0 ]"

exit $fail
