#!/usr/bin/env python3
"""ONNX conformance runner.

Runs every case of the ONNX backend test data (node, light-cases, simple,
pytorch-converted, pytorch-operator) through `nn-run --check` on one backend,
prints pass/fail/unsupported per case and the totals, and compares with the
checked-in list of expected passes (tests/expected/<backend>.txt): a case on
that list that does not pass is a failure (exit 1).  The list only grows:
--update adds the new passes and never removes a line.

    conformance.py --nn-run build/tools/nn-run [--backend cpu] [--jobs N]
                   [--filter REGEX] [--exclude REGEX] [--skip-list SUITE:FILE] [--update] [--results FILE]

The test data location is ONNX_TESTS (default ../shared/onnx-tests next to the
repository).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

SUITES = ["node", "light-cases", "simple", "pytorch-converted", "pytorch-operator"]
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def default_tests_dir():
    env = os.environ.get("ONNX_TESTS")
    if env:
        return env
    return os.path.normpath(os.path.join(REPO, "..", "shared", "onnx-tests"))


def list_cases(root):
    cases = []
    for suite in SUITES:
        d = os.path.join(root, suite)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, name, "model.onnx")):
                cases.append(f"{suite}/{name}")
    return cases


def run_case(nn_run, root, case, backend, rtol, atol, timeout):
    cmd = [nn_run, "--check", os.path.join(root, case), "--backend", backend,
           "--rtol", str(rtol), "--atol", str(atol)]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return case, "fail", f"timeout after {timeout}s", time.monotonic() - t0
    out = p.stdout.strip().splitlines()
    if p.returncode == 0:
        status = "pass"
    elif p.returncode == 1:
        status = "fail"
    elif p.returncode == 2:
        status = "unsupported"
    else:
        status = "fail"  # a crash (signal) or anything unexpected
    reason = ""
    m = re.search(r"nodes_vulkan=(\d+) nodes_cpu=(\d+)", p.stdout)
    if status == "pass" and m:
        reason = f"nodes_vulkan={m.group(1)} nodes_cpu={m.group(2)}"
    if status != "pass":
        keep = [l for l in out if l and not l.startswith("PASS")]
        reason = (keep[-1] if keep else f"exit {p.returncode}")[:300]
        if p.returncode < 0:
            reason = f"crashed with signal {-p.returncode}: " + reason
    return case, status, reason, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nn-run", default=os.path.join(REPO, "build", "tools", "nn-run"))
    ap.add_argument("--backend", default="cpu", choices=["cpu", "vulkan"])
    ap.add_argument("--tests", default=default_tests_dir())
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--filter", default=None, help="only cases matching this regex")
    ap.add_argument("--exclude", default=None, help="leave out cases matching this regex")
    ap.add_argument("--skip-list", action="append", default=[], metavar="SUITE:FILE",
                    help="leave out the cases of SUITE named in FILE (one per line, # comments): "
                         "cases another test already runs")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--expected", default=None, help="expected-pass list (default tests/expected/<backend>.txt)")
    ap.add_argument("--update", action="store_true", help="add new passes to the expected list")
    ap.add_argument("--results", default=None, help="write 'case status reason' lines here")
    ap.add_argument("--quiet", action="store_true", help="print only failures and totals")
    args = ap.parse_args()

    if not os.path.isdir(args.tests):
        print(f"conformance: test data not found at {args.tests} (set ONNX_TESTS)")
        print("0 passed, 0 failed, 1 skipped")
        return 77
    expected_path = args.expected or os.path.join(HERE, "expected", f"{args.backend}.txt")
    expected = set()
    if os.path.exists(expected_path):
        with open(expected_path) as f:
            expected = {l.strip() for l in f if l.strip() and not l.startswith("#")}

    cases = list_cases(args.tests)
    if args.filter:
        rx = re.compile(args.filter)
        cases = [c for c in cases if rx.search(c)]
    if args.exclude:
        rx = re.compile(args.exclude)
        cases = [c for c in cases if not rx.search(c)]
    for spec in args.skip_list:
        suite, _, path = spec.partition(":")
        with open(path) as f:
            names = {l.split("#")[0].strip() for l in f}
        cases = [c for c in cases if not (c.startswith(suite + "/") and c[len(suite) + 1:] in names)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = [ex.submit(run_case, args.nn_run, args.tests, c, args.backend, args.rtol, args.atol,
                          args.timeout) for c in cases]
        for fut in concurrent.futures.as_completed(futs):
            case, status, reason, secs = fut.result()
            results[case] = (status, reason)

    regressions = []
    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    per_suite = {}
    for case in cases:
        status, reason = results[case]
        counts[status] += 1
        suite = case.split("/")[0]
        per_suite.setdefault(suite, {"pass": 0, "fail": 0, "unsupported": 0})[status] += 1
        regress = case in expected and status != "pass"
        if regress:
            regressions.append(case)
        if not args.quiet or regress:
            mark = " REGRESSION" if regress else ""
            print(f"{status.upper():11s} {case}{mark}{(' -- ' + reason) if reason else ''}")
        if status == "pass" and reason.endswith(" nodes_cpu=0") and not reason.startswith("nodes_vulkan=0 "):
            per_suite[suite]["all_device"] = per_suite[suite].get("all_device", 0) + 1
    if args.results:
        with open(args.results, "w") as f:
            for case in cases:
                status, reason = results[case]
                f.write(f"{case} {status} {reason}\n")

    print()
    for suite, c in per_suite.items():
        extra = f"  ({c.get('all_device', 0)} of the passes with every node on {args.backend})" \
            if args.backend != "cpu" else ""
        print(f"{suite:18s} {c['pass']:5d} pass {c['fail']:5d} fail {c['unsupported']:5d} unsupported{extra}")
    print(f"{'total':18s} {counts['pass']:5d} pass {counts['fail']:5d} fail {counts['unsupported']:5d} unsupported"
          f"  ({len(cases)} cases, backend {args.backend})")
    new = sorted(c for c in cases if results[c][0] == "pass" and c not in expected)
    if args.update and new:
        os.makedirs(os.path.dirname(expected_path), exist_ok=True)
        merged = sorted(expected | set(new))
        with open(expected_path, "w") as f:
            f.write(f"# cases expected to pass on the {args.backend} backend; this list only grows\n")
            f.write("\n".join(merged) + "\n")
        print(f"expected list: added {len(new)} cases -> {len(merged)}")
    elif new:
        print(f"{len(new)} cases pass that are not on the expected list (run with --update)")
    if regressions:
        print(f"{len(regressions)} expected passes regressed: {' '.join(regressions[:20])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
