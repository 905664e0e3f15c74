#!/usr/bin/python3
"""Run nn-run on every hostile model (make_hostile.py) and check that each
ends as expected: exit 2 with exactly one line "nn-run: NN_ERR_...: reason"
matching the case's regex (or exit 0 for the odd-but-valid ones), never a
signal, never a hang (per-model timeout), and nothing opened outside the
model's directory (an LD_PRELOAD open() logger, open_guard.c).  Cases run
as `nn-run --check DIR` ("check") are judged by their verdict on stdout:
PASS for exit 0, the first UNSUPPORTED line matching the regex for exit 2.

  run_hostile.py --nn-run PATH --guard LIBOPEN_GUARD.so --out DIR [--shared DIR]
                 [--timeout S] [--filter SUBSTRING] [-v]

Prints one line per failing case and "hostile: N cases: A exit 0, B exit 2,
0 failed"; exit status 0 when every case behaved, 1 otherwise.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# what a process may open besides its model directory: the dynamic loader's
# and the sanitizers' own files (nn-run opens nothing else)
SYSTEM_OK = ("/proc/", "/sys/", "/dev/null", "/dev/urandom", "/etc/ld.so", "/lib/", "/lib64/", "/usr/lib/",
             "/usr/lib64/", "/usr/local/lib/")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nn-run", required=True)
    ap.add_argument("--guard", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shared", default=None)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--filter", default="")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()

    import make_hostile
    sys.argv = ["make_hostile.py", a.out] + ([a.shared] if a.shared else [])
    make_hostile.main()
    cases = json.load(open(os.path.join(a.out, "cases.json")))
    secret = os.path.realpath(os.path.join(a.out, "secret"))

    env = dict(os.environ)
    env["LD_PRELOAD"] = os.path.abspath(a.guard) + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    # the guard is not instrumented: let ASan accept it ahead of its runtime
    env["ASAN_OPTIONS"] = "verify_asan_link_order=0:" + env.get("ASAN_OPTIONS", "")
    failed, counts = [], {0: 0, 2: 0}
    logged_any = False
    for c in cases:
        if a.filter and a.filter not in c["name"]:
            continue
        d = os.path.join(a.out, c["name"])
        log = os.path.join(d, "opens.log")
        if os.path.exists(log):
            os.unlink(log)
        env["NN_OPEN_LOG"] = log
        args = [x.replace("{dir}", d) for x in c["args"]]
        if c.get("check"):
            # a whole case through --check: its verdict and reasons are on stdout
            cmd = [a.nn_run, "--check", d] + args
        else:
            cmd = [a.nn_run, os.path.join(d, c.get("model", "model.onnx")).replace("{dir}", d)] + args
        why = None
        try:
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            failed.append(f"{c['name']}: HANG (no exit within {a.timeout:g} s)")
            continue
        err = p.stderr.decode("utf-8", "replace")
        lines = [l for l in err.splitlines() if l.strip()]
        out = p.stdout.decode("utf-8", "replace")
        if p.returncode < 0:
            why = f"killed by signal {signal.Signals(-p.returncode).name}"
        elif p.returncode not in c["expect"]:
            why = f"exit {p.returncode}, expected {' or '.join(map(str, c['expect']))}"
        elif c.get("check"):
            verdict = [l for l in out.splitlines() if l.startswith(("PASS", "FAIL", "UNSUPPORTED", "ERROR"))]
            if p.returncode == 0 and verdict[-1:] != ["PASS"]:
                why = "exit 0 without a PASS line"
            elif p.returncode == 2 and not (verdict and c["msg"] and re.search(c["msg"], verdict[0])):
                why = f"no UNSUPPORTED line on stdout matching /{c['msg']}/"
        elif p.returncode == 2:
            if len(lines) != 1 or not lines[0].startswith("nn-run: "):
                why = f"{len(lines)} stderr lines, expected one 'nn-run: ...' line"
            elif c["msg"] and not re.search(c["msg"], lines[0]):
                why = f"message does not match /{c['msg']}/"
        elif p.returncode == 0 and lines and any("ERROR" in l or "runtime error" in l for l in lines):
            why = "exit 0 but a sanitizer or error report on stderr"
        # sanitizer reports end with exit codes of their own; catch them by text too
        if why is None and ("Sanitizer" in err or "runtime error:" in err):
            why = "sanitizer report"
        # nothing opened outside the case directory
        if why is None and os.path.exists(log):
            for path in open(log, encoding="utf-8", errors="replace").read().splitlines():
                rp = os.path.realpath(path)
                inside = rp == os.path.realpath(d) or rp.startswith(os.path.realpath(d) + "/")
                # a file named on the command line (--input /dev/zero) may be opened to be refused
                allowed = rp in c.get("allow", ())
                if rp.startswith(secret) or not (inside or allowed or rp.startswith(SYSTEM_OK) or
                                                 path.startswith(SYSTEM_OK)):
                    why = f"opened '{path}' outside the model directory"
                    break
        # a case refused before opening anything logs nothing; the guard is
        # checked to work on the run as a whole (below)
        logged_any = logged_any or os.path.exists(log)
        if p.returncode in counts:
            counts[p.returncode] += 1
        if why:
            failed.append(f"{c['name']}: {why}\n    {' '.join(cmd)}\n    stderr: {err.strip()[:600]}"
                          + (f"\n    stdout: {out.strip()[-600:]}" if c.get("check") else ""))
        elif a.v:
            print(f"ok {c['name']}: exit {p.returncode} {lines[0] if lines else ''}")
    if not logged_any and any(a.filter in c["name"] for c in cases):
        failed.append("the open() guard logged nothing in any case: is it preloaded?")
    for f in failed:
        print("FAIL " + f)
    print(f"hostile: {sum(1 for c in cases if a.filter in c['name'])} cases: {counts[0]} exit 0, {counts[2]} exit 2, "
          f"{len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
