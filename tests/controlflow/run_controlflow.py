#!/usr/bin/python3
"""Control-flow models (make_controlflow.py) through nn-run --check on every
backend this build has, against ONNX Runtime when the dev-only
onnxruntime-node is installed (tools/ort; otherwise against the numpy
references, and says so), and through test-controlflow (no allocation in
steady state, nothing left after dispose).

  run_controlflow.py --nn-run NN_RUN --test BIN --out DIR [--ort-dir tools/ort] [--sanitized]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def ort_available(ort_dir):
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        return None, "node is not installed"
    if not os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node")):
        return None, f"onnxruntime-node is not installed in {ort_dir} (tools/ort/install.sh)"
    return node, ""


def check(nn_run, case, backend, sanitized):
    env = dict(os.environ)
    if sanitized and backend != "cpu":
        # as tests/vulkan does under ASan: the loader unloads the driver before
        # exit, so what it keeps shows as leaks of '<unknown module>'
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
    p = subprocess.run([nn_run, "--check", case, "--backend", backend, "--rtol", "1e-3", "--atol", "1e-4"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, env=env)
    return p.returncode, p.stdout.strip().splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nn-run", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ort-dir", default=os.path.join(REPO, "tools", "ort"))
    ap.add_argument("--sanitized", action="store_true", help="a sanitizer build (no leak checks on Vulkan)")
    args = ap.parse_args()
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    gen = subprocess.run([py, os.path.join(HERE, "make_controlflow.py"), args.out])
    if gen.returncode != 0:
        print("FAIL: make_controlflow.py failed")
        return 1
    cases = json.load(open(os.path.join(args.out, "cases.json")))
    node, why = ort_available(args.ort_dir)
    if not node:
        print(f"NOTE: no ONNX Runtime comparison ({why}); checking against the numpy references")
    failed = 0
    dirs = []
    for c in cases:
        d = os.path.join(args.out, c["name"])
        dirs.append(d)
        targets = [("numpy", d)]
        if node:
            od = os.path.join(args.out, "ort", c["name"])
            ins = [f"--input={n}={d}/test_data_set_0/input_{k}.pb" for k, n in enumerate(c["inputs"])]
            cmd = [node, os.path.join(args.ort_dir, "ort-run.js"), "--make-case", os.path.join(d, "model.onnx"), od]
            for i in ins:
                cmd += ["--input", i.split("=", 1)[1]]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            if p.returncode != 0:
                print(f"FAIL {c['name']}: ONNX Runtime could not make the case:\n{p.stdout[-2000:]}")
                failed += 1
                continue
            targets.append(("ort", od))
        for ref, td in targets:
            for be in ("cpu", "vulkan", "auto"):
                rc, out = check(args.nn_run, td, be, args.sanitized)
                last = out[-1] if out else ""
                if be != "cpu" and rc == 2 and ("no Vulkan" in " ".join(out) or "vulkan" in last.lower()):
                    print(f"SKIP {c['name']} [{be}]: {last}")
                    continue
                ok = rc == 0 and last == "PASS"
                print(f"{'PASS' if ok else 'FAIL'} {c['name']} [{be}, vs {ref}]" + ("" if ok else ":\n  " + "\n  ".join(out[-6:])))
                failed += 0 if ok else 1
    p = subprocess.run([args.test] + dirs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    print(p.stdout.strip())
    if p.returncode != 0:
        failed += 1
    print(f"{'PASS' if not failed else 'FAIL'}: {len(cases)} control-flow cases, {failed} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
