#!/usr/bin/env bash
# The GPU check: one command, on a machine with an NVIDIA GPU (an H200 in mind, under 8 minutes),
# that runs the CUDA tests — NVRTC compilation of every generated kernel, every kernel against
# the CPU reference, whole training steps CUDA vs CPU, CUDA Graph replay vs eager — then the ONNX
# backend cases' CUDA plans against the suite's expected outputs, and then, in
# the time left, the GPU benchmarks (tools/bench/gpu_train_bench.py: ResNet-50 and the
# GPT-2-small-shaped transformer, dlc against PyTorch eager and torch.compile), writing one JSON
# report (format: docs/benchmarks.md, "GPU check") with the full logs beside it.
#
#   scripts/gpu_check.sh [REPORT.json]     default: $OUT/gpu_check.json, else ./gpu_check.json
#
# The binaries come from .gpu-bundle/bundle.tar.xz when it is there (scripts/gpu_bundle.sh, made
# on a machine with dlc's build dependencies; the lent GPU machine has none of them), else from a
# Release build for sm_90 here (BUILD_DIR, default build-gpu; JOBS as in scripts/build.sh).
# DLC_GPU_CHECK_SECONDS (default 480) is the time the check aims to end within; the benchmarks
# get what the tests leave (none below 60 s); DLC_GPU_BENCH_ARGS adds options to
# gpu_train_bench.py (`--smoke` tries the whole script on a machine without a GPU). Exit status 0 only when the binaries are there, a
# GPU was used and every test passed; the benchmarks' figures and errors are in the report.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
report=${1:-${OUT:-.}/gpu_check.json}
[[ $report = /* ]] || report=$PWD/$report  # relative to where it was called from
build=${BUILD_DIR:-build-gpu}
jobs=${JOBS:-$(nproc)}
budget=${DLC_GPU_CHECK_SECONDS:-480}
bundle=$root/.gpu-bundle/bundle.tar.xz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root" || exit 1
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)
t0=$(date +%s)

# GPU and driver, as nvidia-smi reports them ("" where it is missing).
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader \
  > "$work/gpu.csv" 2> /dev/null || true

# Folders holding the CUDA libraries the bundle leaves to this machine: the toolkit's, the
# system's, and those of pip's nvidia-* wheels (PyTorch's cuDNN and cuBLAS).
cuda_library_dirs() {
  local dirs=() d p
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    [ -d "$d" ] && dirs+=("$d")
  done
  for p in $(python3 -c 'import nvidia; print(" ".join(nvidia.__path__))' 2> /dev/null); do
    for d in "$p"/*/lib "$p"/*/lib64; do [ -d "$d" ] && dirs+=("$d"); done
  done
  (IFS=:; echo "${dirs[*]}")
}

build_ok=1
conformance=()  # the conformance command, where there is one
if [ -f "$bundle" ]; then
  mode=bundle
  mkdir -p "$work/bundle"
  if tar -C "$work/bundle" -xJf "$bundle" > "$work/build.log" 2>&1; then
    # The bundle's libraries (Debian 12's libstdc++, protobuf, …) for its two binaries only, through
    # wrappers: PyTorch and onnx in the benchmark's python3 keep this machine's own.
    library_path="$work/bundle/lib:$(cuda_library_dirs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for b in dlc dlc_cuda_tests onnx_conformance; do
      printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$library_path" "$work/bundle/bin/$b" > "$work/$b"
      chmod +x "$work/$b"
    done
    export DLC_SOURCE_DIR=$root  # the tests' data files: this checkout, not the bundle's build folder
    cat "$work/bundle/MANIFEST" >> "$work/build.log"
    missing=$(LD_LIBRARY_PATH=$library_path ldd "$work/bundle/bin/dlc" "$work/bundle/bin/dlc_cuda_tests" \
      "$work/bundle/bin/onnx_conformance" |
      awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
    if [ -n "$missing" ]; then
      echo "shared libraries not found here: $missing(LD_LIBRARY_PATH=$library_path)" >> "$work/build.log"
      build_ok=0
    fi
  else
    build_ok=0
  fi
  tests_bin=$work/dlc_cuda_tests dlc_bin=$work/dlc
  conformance=("$work/onnx_conformance" --data "$work/bundle/conformance" --precompiled)
else
  mode=build
  {
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLC_WERROR=ON -DDLC_BUILD_BENCHMARKS=OFF &&
      timeout 420 cmake --build "$build" -j "$jobs" --target dlc_cuda_tests dlc onnx_conformance
  } > "$work/build.log" 2>&1 || build_ok=0
  tests_bin=$build/tests/dlc_cuda_tests dlc_bin=$build/tools/dlc
  testdata=${DLC_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
  conformance=()  # only where the test data is (the lent GPU machine has none: use a bundle)
  [ -d "$testdata/node" ] && conformance=("$build/tests/conformance/onnx_conformance" --data "$testdata")
fi
# NVRTC finds cuda_fp16.h through DLC_CUDA_INCLUDE_DIR where the toolkit is not where it was at
# build time.
if [ -z "${DLC_CUDA_INCLUDE_DIR:-}" ]; then
  for d in /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include \
    "$(dirname "$(command -v nvcc || echo /nonexistent/bin/nvcc)")/../include"; do
    if [ -f "$d/cuda_fp16.h" ]; then export DLC_CUDA_INCLUDE_DIR=$d; break; fi
  done
fi
t1=$(date +%s)

# Suite by suite, one process each (scripts/gpu_tests.py), so that a crash or a sticky CUDA error
# costs one suite and the report still lists every test.
if [ "$build_ok" = 1 ]; then
  python3 scripts/gpu_tests.py "$tests_bin" --json "$work/tests.json" --log "$work/tests.log" --seconds 240 \
    2>> "$work/tests.log"
fi
# The ONNX backend cases that compile for CUDA, run on the GPU and compared with the suite's
# expected outputs (tests/conformance/onnx_conformance.cc; bundle: the plans gpu_bundle.sh saved).
if [ "$build_ok" = 1 ] && [ ${#conformance[@]} -gt 0 ]; then
  timeout 240 "${conformance[@]}" --device cuda --known-failures tests/conformance/known_failures \
    > "$work/conformance.log" 2>&1
  echo $? > "$work/conformance.rc"
fi
t2=$(date +%s)

# The benchmarks: with python3 that has torch and onnx (else with one that has onnx: dlc alone).
bench_note=""
left=$((budget - (t2 - t0)))
if [ "$build_ok" != 1 ]; then
  bench_note="no binaries"
elif [ "$left" -le 60 ]; then
  bench_note="skipped: ${left}s of the ${budget}s budget left after the tests"
else
  py=""
  for modules in "onnx, numpy, torch" "onnx, numpy"; do
    for candidate in python3 /usr/bin/python3; do
      if [ -z "$py" ] && "$candidate" -c "import $modules" 2> /dev/null; then py=$candidate; fi
    done
  done
  if [ -z "$py" ]; then
    bench_note="skipped: no python3 with onnx and numpy"
  else
    # Variants start until 60 s before the budget's end; the one running then may finish late.
    # shellcheck disable=SC2086  # DLC_GPU_BENCH_ARGS: more options, split on spaces (e.g. --smoke)
    timeout $((left + 60)) "$py" tools/bench/gpu_train_bench.py --dlc "$dlc_bin" --deadline $((left - 60)) \
      --out "$work/bench" --json "$work/bench.json" ${DLC_GPU_BENCH_ARGS:-} > "$work/bench.log" 2>&1 ||
      bench_note="gpu_train_bench.py exited $? (see log_tail)"
  fi
fi
t3=$(date +%s)

# The full logs beside the report: REPORT.{build,tests,conformance,bench}.log.
mkdir -p "$(dirname "$report")"
for log in build tests conformance bench; do
  [ -f "$work/$log.log" ] && cp "$work/$log.log" "${report%.json}.$log.log"
done

python3 - "$report" "$work" "$started" "$commit" "$mode" "$build_ok" "$((t1 - t0))" "$((t3 - t2))" "$bench_note" \
  << 'PY'
import json, os, re, sys

report, work, started, commit, mode, build_ok, build_s, bench_s, bench_note = sys.argv[1:]
def read(name):
    path = os.path.join(work, name)
    return open(path, errors="replace").read() if os.path.exists(path) else ""

gpu = [f.strip() for f in read("gpu.csv").splitlines()[0].split(",")] if read("gpu.csv").strip() else []
out = {
    "schema": "dlc-gpu-check/2",
    "started": started,
    # The binaries' commit in bundle mode (the machine's copy of the checkout may carry an older
    # .git), else the checkout's.
    "commit": read("bundle/MANIFEST").splitlines()[0].removeprefix("commit ").strip()
    if mode == "bundle" and read("bundle/MANIFEST") else commit,
    "gpu": dict(zip(["name", "driver", "compute_capability", "memory"], gpu)) if gpu else None,
    "build": {"mode": mode, "ok": build_ok == "1", "seconds": int(build_s),
              "manifest": read("bundle/MANIFEST").strip() if mode == "bundle" else None,
              "log_tail": read("build.log")[-4000:] if build_ok != "1" else ""},
    "tests": None,
    "conformance": None,
    "benchmarks": None,
}
if read("tests.json"):
    out["tests"] = json.loads(read("tests.json"))
elif build_ok == "1":
    out["tests"] = {"log_tail": read("tests.log")[-4000:]}
if read("conformance.rc"):
    log = read("conformance.log")
    m = re.search(r"^conformance \(.*?\): (\d+) of (\d+) selected cases pass", log, re.M)
    out["conformance"] = {"exit": int(read("conformance.rc")), "passed": int(m.group(1)) if m else None,
                          "total": int(m.group(2)) if m else None,
                          "failures": re.findall(r"^FAIL (.*)$", log, re.M)[:100],
                          "log_tail": log[-2000:] if not m else ""}
try:
    bench = json.loads(read("bench.json")) if read("bench.json") else None
except json.JSONDecodeError as e:  # cut off while writing (it is rewritten atomically; be safe)
    bench, bench_note = None, f"bench.json unreadable: {e}"
out["benchmarks"] = {"seconds": int(bench_s), "note": bench_note, "report": bench,
                     "log_tail": read("bench.log")[-3000:] if bench_note or not bench else ""}
t = out["tests"] or {}
# A GPU run skips nothing: a skip means no device was found (or a reference kernel is missing).
c = out["conformance"] or {}
# The conformance run counts where it ran (a bundle always has its plans; a build needs the data).
out["ok"] = bool(out["build"]["ok"] and t.get("total") and t.get("passed") == t.get("total")
                 and not t.get("process_errors") and (c.get("exit") == 0 if c or mode == "bundle" else True))
os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
with open(report, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
# What the caller reads first: the failed tests, then the benchmarks' table (their log's end).
for f in t.get("failures", []):
    lines = [line for line in f["message"].splitlines() if line.strip()]
    print(f"FAILED {f['name']}: {' | '.join(lines[:3])[:400]}")
for f in c.get("failures", [])[:20]:
    print(f"FAILED conformance {f[:400]}")
print("\n".join(read("bench.log").splitlines()[-30:]))
runs = [r for m in (bench or {}).get("results", []) for r in m["runs"]]
print(f"gpu_check: ok={out['ok']} binaries={mode} {'ok' if build_ok == '1' else 'FAILED'} ({build_s}s) tests: "
      + (f"{t['passed']}/{t['total']} passed, {t['failed']} failed, {t['crashed']} crashed, {t['skipped']} skipped, "
         f"{t['not_run']} not run ({t['seconds']}s)"
         if t.get("total") is not None else "not run")
      + (f"; conformance: {c['passed']}/{c['total']} passed (exit {c['exit']})" if c.get("total") is not None
         else f"; conformance: {'exit ' + str(c['exit']) if c else 'not run'}")
      + f"; benchmarks: {sum('samples_per_s' in r for r in runs)} of {len(runs)} runs measured ({bench_s}s)"
      + (f" [{bench_note}]" if bench_note else "") + f" -> {report}")
sys.exit(0 if out["ok"] else 1)
PY
