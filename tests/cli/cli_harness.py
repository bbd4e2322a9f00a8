"""Helpers shared by the command-line tests: building small ONNX models with the onnx package,
writing files, and checking that a dlc command fails cleanly — a non-zero exit (never a signal),
exactly one stderr line `error: …` naming the culprit, no output left behind, and files that
must survive a failure unchanged."""
import os
import subprocess

from onnx import helper


def make_model(path, nodes, inputs, outputs, initializers=(), opset=13):
    """Writes an ONNX model; `inputs`/`outputs` are (name, element type, shape) triples."""
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def run_dlc(dlc, args, timeout=300):
    return subprocess.run([dlc] + args, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)


class CaseResults:
    """The named cases of one command-line test that failed; `summary` says "all WHAT cases
    {PASSED}" when none did."""
    PASSED = "pass"

    def __init__(self, dlc, verbose=False):
        self.dlc = dlc
        self.verbose = verbose
        self.failures = []

    def fail(self, name, problem):
        self.failures.append(name)
        print(f"FAIL {name}: {problem}")

    def summary(self, what):
        """Prints the result; returns the exit status of the test."""
        if self.failures:
            print(f"{len(self.failures)} {what} case(s) failed: {' '.join(self.failures)}")
            return 1
        print(f"all {what} cases {self.PASSED}")
        return 0


class FailureChecker(CaseResults):
    """Runs dlc commands that must fail cleanly and collects the cases that did not."""
    PASSED = "fail cleanly"

    def check(self, name, args, must_name, out_dir=None, must_not_exist=(), unchanged=()):
        """Runs dlc with `args`; the failure must be clean and its message must contain `must_name`.
        `out_dir` must stay empty or absent, the paths in `must_not_exist` absent, and the files in
        `unchanged` keep their bytes."""
        before = {path: open(path, "rb").read() for path in unchanged}
        proc = run_dlc(self.dlc, args)
        stderr = proc.stderr.decode(errors="replace")
        lines = stderr.splitlines()
        problems = []
        if proc.returncode < 0:
            problems.append(f"killed by signal {-proc.returncode}")
        elif proc.returncode == 0:
            problems.append("exited 0")
        elif proc.returncode != 1:
            problems.append(f"exit status {proc.returncode} (sanitizer report or crash?)")
        if len(lines) != 1 or not lines[0].startswith("error: "):
            problems.append(f"stderr is not one 'error: ' line: {stderr!r}")
        elif must_name not in lines[0]:
            problems.append(f"message does not name {must_name!r}: {lines[0]!r}")
        if out_dir is not None and os.path.isdir(out_dir) and os.listdir(out_dir):
            problems.append(f"left files behind in {out_dir}: {sorted(os.listdir(out_dir))}")
        problems += [f"wrote {path}" for path in must_not_exist if os.path.exists(path)]
        problems += [f"changed {path}" for path, data in before.items()
                     if not os.path.exists(path) or open(path, "rb").read() != data]
        if problems:
            self.fail(name, f"{'; '.join(problems)}\n     command: dlc {' '.join(args)}")
        elif self.verbose:
            print(f"ok   {name}: {lines[0]}")


class Checks(CaseResults):
    """Named expectations about dlc runs that must succeed; collects the ones that fail."""

    def expect(self, name, ok, detail=""):
        if not ok:
            self.fail(name, detail)
        elif self.verbose:
            print(f"ok   {name}")
        return ok

    def run(self, name, args):
        """Runs dlc; returns the process when it exits 0, else records the failure and returns None."""
        proc = run_dlc(self.dlc, args)
        if proc.returncode != 0:
            self.expect(name, False, f"exit {proc.returncode}: {proc.stderr.decode(errors='replace')}\n"
                                     f"     command: dlc {' '.join(args)}")
            return None
        return proc
