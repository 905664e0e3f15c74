#!/usr/bin/env python3
"""Make a copy of the ONNX Runtime peer that runs its AVX2 kernels on an
AVX-512 machine (dev-only, for tools/bench --peer-isa avx2).

Copies tools/ort/node_modules/onnxruntime-node to tools/ort/capped/ (git-
ignored), replaces every CPUID instruction in the copy's shared libraries with
INT3 NOP, and builds tools/ort/capped/cpuid-cap.so, which answers those traps
with the AVX-512 bits cleared (see cpuid-cap.c).  Prints the two environment
settings ort-run.js needs: LD_PRELOAD and ORT_NODE_MODULE.  Idempotent.

The CPUID sites come from objdump's disassembly of the code sections, not from
a byte search, so no other instruction's bytes are touched.
"""
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "node_modules", "onnxruntime-node")
DST_ROOT = os.path.join(HERE, "capped")
DST = os.path.join(DST_ROOT, "onnxruntime-node")
SHIM = os.path.join(DST_ROOT, "cpuid-cap.so")


def sections(path):
    """(vaddr, offset, size) of each section with code, from the ELF header."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[0x12:0x14] != b"\x3e\x00":
        return []
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        base = shoff + i * shentsize
        _name, _type, flags, addr, off, size = struct.unpack_from("<IIQQQQ", data, base)
        if flags & 0x4:  # SHF_EXECINSTR
            out.append((addr, off, size))
    return out


def cpuid_sites(path):
    """Virtual addresses of CPUID instructions, from objdump."""
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                       capture_output=True, text=True, check=True)
    return [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+cpuid\b", p.stdout, re.M)]


def patch(path):
    secs = sections(path)
    if not secs:
        return 0  # not an x86-64 ELF (the package carries other platforms)
    sites = cpuid_sites(path)
    if not sites:
        return 0
    with open(path, "r+b") as f:
        for va in sites:
            off = next((o + va - a for a, o, s in secs if a <= va < a + s), None)
            if off is None:
                sys.exit(f"cap-isa: {path}: cpuid at {va:#x} outside code sections")
            f.seek(off)
            if f.read(2) != b"\x0f\xa2":
                sys.exit(f"cap-isa: {path}: bytes at {va:#x} are not cpuid")
            f.seek(off)
            f.write(b"\xcc\x90")
    return len(sites)


def main():
    if not os.path.isdir(SRC):
        sys.exit("cap-isa: run tools/ort/install.sh first")
    stamp = os.path.join(DST_ROOT, "done")
    if not os.path.exists(stamp):
        shutil.rmtree(DST_ROOT, ignore_errors=True)
        os.makedirs(DST_ROOT)
        shutil.copytree(SRC, DST, symlinks=True)
        total = 0
        for root, _dirs, files in os.walk(os.path.join(DST, "bin")):
            for fn in files:
                fp = os.path.join(root, fn)
                if not os.path.islink(fp) and (".so" in fn or fn.endswith(".node")):
                    n = patch(fp)
                    if n:
                        print(f"cap-isa: {os.path.relpath(fp, DST)}: {n} cpuid patched", file=sys.stderr)
                    total += n
        if total == 0:
            sys.exit("cap-isa: no cpuid found in the peer's libraries")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", SHIM,
                        os.path.join(HERE, "cpuid-cap.c")], check=True)
        open(stamp, "w").close()
    print(f"LD_PRELOAD={SHIM}")
    print(f"ORT_NODE_MODULE={DST}")


if __name__ == "__main__":
    main()
