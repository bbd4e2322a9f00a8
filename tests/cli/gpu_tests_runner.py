#!/usr/bin/env python3
"""scripts/gpu_tests.py (the GPU check's suite-by-suite test runner) on a fake GoogleTest binary:
suite A passes one test, dies of SIGSEGV in the second and fails the third (its end line naming
the parameter, as gtest's do); B hangs; C dies between its two tests; D passes and then dies at
exit. The runner must record passed, crashed, failed and crashed-at-the-time-limit (3 s a
process), rerun A from its third test in a fresh process, report C's and D's process errors, and
exit 1.

usage: gpu_tests_runner.py WORK_DIR
"""
import json
import os
import subprocess
import sys

COUNTS = ("total", "passed", "failed", "crashed", "skipped", "not_run", "process_errors")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE = r"""#!/bin/bash
case "$1" in
--gtest_list_tests) printf 'Running main() from x\nA.\n  one\n  two  # GetParam() = 2\n  three\nB.\n  hangs\nC.\n  one\n  two\nD.\n  one\n';;
--gtest_filter=A.\*)
  echo "[ RUN      ] A.one"; echo "[       OK ] A.one (3 ms)"
  echo "[ RUN      ] A.two"; echo "illegal address"; kill -SEGV $$;;
--gtest_filter=A.three)
  echo "[ RUN      ] A.three"; echo "expected 1, got 2"; echo "[  FAILED  ] A.three, where GetParam() = 3 (1 ms)"; exit 1;;
--gtest_filter=B.\*) echo "[ RUN      ] B.hangs"; exec sleep 30;;
--gtest_filter=C.\*) echo "[ RUN      ] C.one"; echo "[       OK ] C.one (1 ms)"; kill -SEGV $$;;
--gtest_filter=D.\*) echo "[ RUN      ] D.one"; echo "[       OK ] D.one (1 ms)"; echo "exit crash"; exit 134;;
*) echo "unexpected arguments: $*"; exit 3;;
esac
"""


def main() -> int:
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    fake = os.path.join(work, "fake_gtest.sh")
    with open(fake, "w") as f:
        f.write(FAKE)
    os.chmod(fake, 0o755)
    report, log = os.path.join(work, "tests.json"), os.path.join(work, "tests.log")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gpu_tests.py"), fake, "--json", report,
                        "--log", log, "--seconds", "8", "--process-seconds", "3"], capture_output=True, text=True, timeout=60)
    got = json.load(open(report))
    statuses = {c["name"]: c["status"] for c in got["cases"]}
    messages = {f["name"]: f["message"] for f in got["failures"]}
    checks = [
        (r.returncode == 1, f"exit status {r.returncode}, expected 1"),
        (statuses == {"A.one": "passed", "A.two": "crashed", "A.three": "failed", "B.hangs": "crashed",
                      "C.one": "passed", "C.two": "crashed", "D.one": "passed"}, f"statuses {statuses}"),
        ([got[k] for k in COUNTS] == [7, 3, 1, 3, 0, 0, 2], "counts " + str({k: got[k] for k in COUNTS})),
        ("exit status -11 outside a test" in messages.get("C.* (process)", ""),
         f"C's process error {messages.get('C.* (process)')!r}"),
        ("exit crash" in messages.get("D.* (process)", ""), f"D's process error {messages.get('D.* (process)')!r}"),
        ("illegal address" in messages.get("A.two", "") and "exit status -11" in messages.get("A.two", ""),
         f"A.two's message {messages.get('A.two')!r}"),
        (messages.get("A.three") == "expected 1, got 2", f"A.three's message {messages.get('A.three')!r}"),
        ("time limit" in messages.get("B.hangs", ""), f"B.hangs's message {messages.get('B.hangs')!r}"),
        ("unexpected arguments" not in open(log).read(), "the runner passed a filter the fake does not know"),
    ]
    failed = [why for ok, why in checks if not ok]
    for why in failed:
        print(f"FAIL: {why}")
    print(f"{len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
