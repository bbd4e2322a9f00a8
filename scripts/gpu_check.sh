#!/usr/bin/env bash
# The GPU check: one command, on a machine with an NVIDIA GPU (an H200 in mind, under 8 minutes),
# that builds the CUDA tests for sm_90 (Release, warnings as errors), runs them — NVRTC
# compilation of every generated kernel, and every kernel against the CPU reference — and writes
# one JSON report (format: docs/benchmarks.md, "GPU check").
#
#   scripts/gpu_check.sh [REPORT.json]     default: $OUT/gpu_check.json, else ./gpu_check.json
# BUILD_DIR (default build-gpu) and JOBS (default: all cores) as in scripts/build.sh.
# Exit status 0 only when the build succeeded, a GPU was used and every test passed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
report=${1:-${OUT:-.}/gpu_check.json}
build=${BUILD_DIR:-build-gpu}
jobs=${JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)

# GPU and driver, as nvidia-smi reports them ("" where it is missing).
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader \
  > "$work/gpu.csv" 2> /dev/null || true

t0=$(date +%s)
build_ok=1
{
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLC_WERROR=ON -DDLC_BUILD_BENCHMARKS=OFF &&
    timeout 420 cmake --build "$build" -j "$jobs" --target dlc_cuda_tests
} > "$work/build.log" 2>&1 || build_ok=0
t1=$(date +%s)

tests_rc=-1
if [ "$build_ok" = 1 ]; then
  timeout 240 "$build/tests/dlc_cuda_tests" --gtest_output="json:$work/gtest.json" > "$work/tests.log" 2>&1
  tests_rc=$?
fi
t2=$(date +%s)

/usr/bin/python3 - "$report" "$work" "$started" "$commit" "$build_ok" "$((t1 - t0))" "$tests_rc" "$((t2 - t1))" <<'PY'
import json, os, sys

report, work, started, commit, build_ok, build_s, tests_rc, tests_s = sys.argv[1:]
def read(name):
    path = os.path.join(work, name)
    return open(path, errors="replace").read() if os.path.exists(path) else ""

gpu = [f.strip() for f in read("gpu.csv").splitlines()[0].split(",")] if read("gpu.csv").strip() else []
out = {
    "schema": "dlc-gpu-check/1",
    "started": started,
    "commit": commit,
    "gpu": dict(zip(["name", "driver", "compute_capability", "memory"], gpu)) if gpu else None,
    "build": {"ok": build_ok == "1", "seconds": int(build_s), "target": "dlc_cuda_tests",
              "log_tail": read("build.log")[-4000:] if build_ok != "1" else ""},
    "tests": None,
}
cases, failures = [], []
g = json.loads(read("gtest.json")) if read("gtest.json") else None
if g:
    for suite in g.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = f"{suite['name']}.{t['name']}"
            status = "skipped" if t.get("result") == "SKIPPED" else ("failed" if t.get("failures") else "passed")
            cases.append({"name": name, "status": status, "seconds": float(str(t.get("time", "0s")).rstrip("s"))})
            for f in t.get("failures", []):
                failures.append({"name": name, "message": f.get("failure", "")[:2000]})
    count = lambda s: sum(1 for c in cases if c["status"] == s)
    out["tests"] = {"exit_code": int(tests_rc), "seconds": int(tests_s), "total": len(cases), "passed": count("passed"),
                    "failed": count("failed"), "skipped": count("skipped"), "failures": failures, "cases": cases}
elif build_ok == "1":
    out["tests"] = {"exit_code": int(tests_rc), "seconds": int(tests_s), "log_tail": read("tests.log")[-4000:]}
t = out["tests"] or {}
# A GPU run skips nothing: a skip means no device was found (or a reference kernel is missing).
out["ok"] = bool(out["build"]["ok"] and t.get("total") and t.get("failed") == 0 and t.get("skipped") == 0)
os.makedirs(os.path.dirname(os.path.abspath(report)), exist_ok=True)
with open(report, "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
print(f"gpu_check: ok={out['ok']} build={out['build']['ok']} ({build_s}s) tests: "
      + (f"{t.get('passed')}/{t.get('total')} passed, {t.get('failed')} failed, {t.get('skipped')} skipped ({tests_s}s)"
         if t.get("total") is not None else "not run")
      + f" -> {report}")
sys.exit(0 if out["ok"] else 1)
PY
