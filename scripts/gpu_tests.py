#!/usr/bin/env python3
"""Runs a GoogleTest binary suite by suite, one process per suite, so that a crash or a sticky
CUDA error (an illegal address poisons the whole context) costs one suite, not the run. When a
process dies inside a test (a signal, or the time limit), that test is recorded as crashed and
the suite goes on in a fresh process from the next test; a process that dies outside a test
(start-up, between tests, at exit) is a process error, and the tests it did not reach crashed.
One process runs at most --process-seconds (120), all together --seconds (240).

    gpu_tests.py BINARY --json TESTS.json --log TESTS.log [--seconds 240]

TESTS.json: {"exit_code", "seconds", "total", "passed", "failed", "crashed", "skipped",
"not_run", "process_errors", "failures": [{"name", "message"}], "cases": [{"name", "status",
"seconds"}]}; the status of a case is passed, failed, skipped, crashed or not_run (the time ran
out first). The log holds every process's full output. Exit status 0 when every test ran, none
failed or crashed, and no process died outside a test.
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "bench"))
from report_json import write_report  # noqa: E402

RUN = re.compile(r"^\[ RUN      \] (\S+)")
# A parameterized test's end line names its parameter: "[  FAILED  ] P/T.x/f16, where GetParam() = f16 (21 ms)".
END = re.compile(r"^\[ +(OK|FAILED|SKIPPED) +\] ([^\s,]+)(?:, where .*)? \((\d+) ms\)")
STATUS = {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}


def list_tests(binary: str) -> dict:
    """{"Suite.": ["Suite.test", …]} in the binary's order."""
    out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    suites, suite = {}, None
    for line in out.splitlines():
        name = line.split("#")[0].rstrip()
        if not name or line.startswith("Running main()"):
            continue
        if not line.startswith(" "):
            suite = name
            suites[suite] = []
        elif suite:
            suites[suite].append(suite + name.strip())
    return suites


def parse_log(text: str) -> tuple:
    """([(name, status, seconds, output)] of the tests that ended, (name, output) of one that
    started and did not end, or None)."""
    ended, current, lines = [], None, []
    for line in text.splitlines():
        m = RUN.match(line)
        if m:
            current, lines = m.group(1), []
            continue
        m = END.match(line)
        if m and current == m.group(2):
            ended.append((current, STATUS[m.group(1)], int(m.group(3)) / 1000, "\n".join(lines)))
            current = None
            continue
        if current:
            lines.append(line)
    return ended, ((current, "\n".join(lines)) if current else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--json", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--seconds", type=float, default=240, help="time for all the suites together")
    parser.add_argument("--process-seconds", type=float, default=120, help="the most one process may run")
    args = parser.parse_args()
    t0 = time.monotonic()
    cases, failures, exit_code, process_errors = [], [], 0, 0
    with open(args.log, "w") as log:
        for suite, names in list_tests(args.binary).items():
            pending = list(names)
            while pending:
                left = args.seconds - (time.monotonic() - t0)
                if left <= 1:
                    cases += [{"name": n, "status": "not_run", "seconds": 0.0} for n in pending]
                    break
                # The whole suite first; after a crash, the tests still to run, by name.
                pattern = f"{suite}*" if pending == names else ":".join(pending)
                log.write(f"=== {args.binary} --gtest_filter={pattern}\n")
                log.flush()
                try:
                    r = subprocess.run([args.binary, f"--gtest_filter={pattern}"], stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, errors="replace",
                                       timeout=min(left, args.process_seconds))
                    output, rc, why = r.stdout, r.returncode, f"exit status {r.returncode}"
                except subprocess.TimeoutExpired as e:
                    output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                    rc, why = -9, f"killed at the time limit ({e.timeout:.0f} s)"
                log.write(output + f"\n=== {why}\n")
                log.flush()
                exit_code = exit_code or (rc if rc != 0 else 0)
                ended, unfinished = parse_log(output)
                for name, status, seconds, text in ended:
                    cases.append({"name": name, "status": status, "seconds": seconds})
                    if status == "failed":
                        failures.append({"name": name, "message": text[-2000:]})
                done = {name for name, *_ in ended}
                if unfinished and unfinished[0] in pending:  # died inside a test: go on after it
                    name, text = unfinished
                    cases.append({"name": name, "status": "crashed", "seconds": 0.0})
                    failures.append({"name": name, "message": f"{why}; output:\n{text[-2000:]}"})
                    pending = [n for n in pending if n not in done and n != name]
                    continue
                pending = [n for n in pending if n not in done]
                if rc != 0 and not any(status == "failed" for _, status, *_ in ended):
                    # Died outside a test (start-up, between tests, at exit): the tests it did not
                    # reach count as crashed, and the process error is reported either way.
                    process_errors += 1
                    cases += [{"name": n, "status": "crashed", "seconds": 0.0} for n in pending]
                    failures.append({"name": f"{suite}* (process)", "message": f"{why} outside a test; output:\n"
                                     f"{output[-2000:]}"})
                else:  # a test not listed as ended would be a parse miss: record it, don't loop
                    cases += [{"name": n, "status": "not_run", "seconds": 0.0} for n in pending]
                break
    count = {s: sum(1 for c in cases if c["status"] == s)
             for s in ("passed", "failed", "crashed", "skipped", "not_run")}
    report = {"exit_code": exit_code, "seconds": round(time.monotonic() - t0, 1), "total": len(cases), **count,
              "process_errors": process_errors, "failures": failures, "cases": cases}
    write_report(report, args.json)
    print(f"gpu_tests: {count['passed']} passed, {count['failed']} failed, {count['crashed']} crashed, "
          f"{count['skipped']} skipped, {count['not_run']} not run of {len(cases)}", file=sys.stderr)
    return 0 if count["failed"] == count["crashed"] == count["not_run"] == process_errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
