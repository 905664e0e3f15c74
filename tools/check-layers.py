#!/usr/bin/env python3
"""check-layers.py - the runtime's layering, checked on what was built.

Usage: check-layers.py SOURCE_ROOT LIB.a [LIB.a ...]

Layers, lowest first (ARCHITECTURE.md):
  core     alloc error attr file dtype shape_util threadpool knobs
  ops      runtime/ops/
  ir       onnx/ (loader + generated protobuf), graph passes qdq plan
  seam     backend.h, partition.c (the interface the backends implement)
  cpu      runtime/cpu/        } backends: siblings, neither may reach the other
  vulkan   runtime/vulkan/     }
  top      session.c, tool.c, image/   (the public and tool-facing API)

Two checks, each fails the test with the offending pair named:
  symbols   every undefined symbol of an object must be defined in its own
            layer or a lower one (nm over the static libraries' members), so
            the libraries link only downward and no cycle exists between them;
  includes  a runtime source includes only headers of its own layer or a
            lower one; nothing outside cpu/ includes a cpu/ header, nothing
            outside vulkan/ a vulkan/ header; session.c has no NN_HAVE_VULKAN
            and no file name under runtime/ starts with misc.
"""
import os
import re
import subprocess
import sys

RANK = {"core": 0, "ops": 1, "ir": 2, "seam": 3, "cpu": 4, "vulkan": 4, "top": 5}
IR = {"graph", "passes", "qdq", "plan"}
SEAM = {"partition", "backend"}


def layer_of_path(rel):
    """Layer of a runtime source or header path relative to runtime/."""
    parts = rel.split("/")
    if parts[0] in ("cpu", "vulkan", "ops"):
        return parts[0]
    if parts[0] == "onnx":
        return "ir"
    if parts[0] in ("image", "include"):
        return "top" if parts[0] == "image" else "core"
    stem = os.path.splitext(parts[-1])[0]
    if stem in SEAM:
        return "seam"
    if stem in IR:
        return "ir"
    if stem in ("session", "tool"):
        return "top"
    return "core"


def layer_of_member(name):
    """Layer of an archive member (meson flattens the path: cpu_conv.c.o)."""
    base = os.path.basename(name)
    if "nn_vk_spirv" in base:
        return "vulkan"
    if "onnx-subset" in base:
        return "ir"
    for prefix, layer in (("cpu_", "cpu"), ("vulkan_", "vulkan"), ("ops_", "ops"),
                          ("onnx_", "ir"), ("image_", "top")):
        if base.startswith(prefix):
            return layer
    stem = base.split(".")[0]
    if stem in SEAM:
        return "seam"
    if stem in IR:
        return "ir"
    if stem in ("session", "tool"):
        return "top"
    return "core"


def may_use(user, provider):
    if user == provider:
        return True
    if {user, provider} == {"cpu", "vulkan"}:
        return False
    return RANK[provider] < RANK[user]


def check_symbols(libs):
    members = []
    for lib in libs:
        out = subprocess.run(["ar", "t", lib], check=True, capture_output=True, text=True).stdout
        for m in out.split():
            if not os.path.isabs(m) and not os.path.exists(m):
                m = os.path.join(os.path.dirname(lib), m)
            members.append(m)
    defined = {}
    undefined = {}
    for m in members:
        out = subprocess.run(["nm", m], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == "U":
                undefined.setdefault(m, set()).add(f[1])
            elif len(f) == 3 and f[1] in "TDBRC":
                defined[f[2]] = m
    bad = []
    for m, syms in undefined.items():
        lu = layer_of_member(m)
        for s in sorted(syms):
            d = defined.get(s)
            if d is None:
                continue  # libc, protobuf-c, Vulkan loader
            ld = layer_of_member(d)
            if not may_use(lu, ld):
                bad.append(f"symbols: {os.path.basename(m)} ({lu}) uses {s} from "
                           f"{os.path.basename(d)} ({ld})")
    return bad, len(members)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def check_includes(root):
    rt = os.path.join(root, "runtime")
    bad = []
    n = 0
    for d, _, files in os.walk(rt):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, rt)
            if f.startswith("misc"):
                bad.append(f"files: runtime/{rel}: a misc* file")
            n += 1
            text = open(path, encoding="utf-8", errors="replace").read()
            lu = layer_of_path(rel)
            folder = rel.split("/")[0] if "/" in rel else ""
            if rel == "session.c" and "NN_HAVE_VULKAN" in text:
                bad.append("includes: runtime/session.c names NN_HAVE_VULKAN")
            for inc in INCLUDE.findall(text):
                top = inc.split("/")[0] if "/" in inc else ""
                if top in ("cpu", "vulkan") and folder != top:
                    bad.append(f"includes: runtime/{rel} includes {inc}")
                    continue
                # resolve: relative to runtime/ or to the including folder
                cand = inc if os.path.exists(os.path.join(rt, inc)) else os.path.join(folder, inc)
                if not os.path.exists(os.path.join(rt, cand)):
                    continue  # generated (protobuf, SPIR-V table, families.h)
                li = layer_of_path(cand)
                if not may_use(lu, li):
                    bad.append(f"includes: runtime/{rel} ({lu}) includes {inc} ({li})")
    return bad, n


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root, libs = sys.argv[1], sys.argv[2:]
    bad_s, n_obj = check_symbols(libs)
    bad_i, n_src = check_includes(root)
    for b in bad_s + bad_i:
        print(b)
    print(f"check-layers: {n_obj} objects, {n_src} sources, "
          f"{len(bad_s)} symbol and {len(bad_i)} include violations")
    return 1 if bad_s or bad_i else 0


if __name__ == "__main__":
    sys.exit(main())
