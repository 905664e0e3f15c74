#!/usr/bin/python3
"""Generate runtime/cpu/op_schema.h: per operator since-version, how many
inputs and outputs it takes, which of them must not be empty, and the type of
each attribute it defines -- from the ONNX operator schemas.

Why: kernels read n->x[0], n->y[0] and their other required slots without a
check, and read attributes through typed getters, trusting what the ONNX
checker guarantees for a valid model.  A hostile model can omit any slot or
give any attribute another type.  One table checked at load
(nn_op_check_schema in registry.c) settles it for every kernel at once, with
the checker's own rules.

The schemas come from the `onnx` Python package (/usr/bin/python3, Debian's
python3-onnx, which knows opsets up to 17).  Operators or versions newer than
that are written by hand below (HAND) from the ONNX operator documentation;
their attribute types are those of the newest known version of the same
operator (ONNX never changes an existing attribute's type in place).

  build/tools/nn-run --list-ops > /tmp/ops.tsv
  /usr/bin/python3 tools/gen-op-schema.py /tmp/ops.tsv > runtime/cpu/op_schema.h

Rerun it whenever a kernel or a kernel version is added: it stops when an
implemented version newer than opset 17 has no hand entry.
"""
import sys

import onnx.defs as D

SINGLE, OPTIONAL, VARIADIC = 0, 1, 2
INF = -1

# (name, since, inputs, outputs): one letter per slot, 'r' required, 'o'
# optional, 'R' variadic (every entry required), 'O' variadic optional.
HAND = [
    ("Gelu", 20, "r", "r"),
    ("Mish", 18, "r", "r"),
    ("Swish", 24, "r", "r"),
    ("BitwiseNot", 18, "r", "r"),
    ("BitwiseAnd", 18, "rr", "r"),
    ("BitwiseOr", 18, "rr", "r"),
    ("BitwiseXor", 18, "rr", "r"),
    ("DeformConv", 19, "rrroo", "r"),
    ("GroupNormalization", 18, "rrr", "r"),
    ("GroupNormalization", 21, "rrr", "r"),
    ("RMSNormalization", 23, "rr", "r"),
    ("CumProd", 26, "rr", "r"),
    ("CenterCropPad", 18, "rr", "r"),
    ("Attention", 23, "rrrooo", "rooo"),
    ("Attention", 24, "rrroooo", "rooo"),
    ("RotaryEmbedding", 23, "rrro", "r"),
    ("LinearAttention", 27, "rrroooo", "ro"),
    ("CausalConvWithState", 27, "rroo", "ro"),
    ("SwiGLU", 28, "rr", "r"),
    ("AffineGrid", 20, "rr", "r"),
    ("Col2Im", 18, "rrr", "r"),
    ("AveragePool", 19, "r", "r"),
    ("LpPool", 18, "r", "r"),
    ("Split", 18, "ro", "R"),
    ("Pad", 18, "rroo", "r"),
    ("Pad", 19, "rroo", "r"),
    ("ScatterElements", 18, "rrr", "r"),
    ("ScatterND", 18, "rrr", "r"),
    ("Resize", 18, "rooo", "r"),
    ("Resize", 19, "rooo", "r"),
    ("GridSample", 20, "rr", "r"),
    ("DFT", 20, "roo", "r"),
] + [(f"Reduce{r}", 18, "ro", "r") for r in
     ("Mean", "Max", "Min", "Prod", "L1", "L2", "LogSum", "LogSumExp", "SumSquare")] + [
    (q, v, "rro", "r") for q in ("QuantizeLinear", "DequantizeLinear") for v in (19, 21, 23, 25)]


def from_spec(spec):
    """(min, max, required mask, first variadic-required slot) of a HAND spec."""
    mn, mx, mask, var_from = 0, len(spec), 0, 1000
    for i, ch in enumerate(spec):
        if ch in "rR":
            mn = i + 1
            if i < 32:
                mask |= 1 << i
        if ch in "RO":
            mx = INF
            if ch == "R":
                var_from = i
    return mn, mx, mask, var_from


def from_schema(params, min_arity, max_arity):
    mask, var_from = 0, 1000
    for i, p in enumerate(params):
        if p.option == SINGLE and i < 32:
            mask |= 1 << i
        if p.option == VARIADIC:
            var_from = i  # kernels read every entry of a variadic list: none may be empty
    mx = INF if max_arity > 1000 else max_arity
    return min_arity, mx, mask, var_from


def c_ident(s):
    return "".join(ch if ch.isalnum() else "_" for ch in s)


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(2)
    ops = []
    for line in open(sys.argv[1]):
        dom, name, vers = line.rstrip("\n").split("\t")
        ops.append((dom, name, [int(v) for v in vers.split()]))
    rows = {}     # (name, since) -> (inputs, outputs, attrs)
    for dom, name, vers in ops:
        seen = set()
        for opset in range(1, 18):
            try:
                s = D.get_schema(name, opset, dom)
            except Exception:
                continue
            if s.since_version in seen:
                continue
            seen.add(s.since_version)
            attrs = sorted((a, int(s.attributes[a].type)) for a in s.attributes)
            rows[(name, s.since_version)] = (
                from_schema(s.inputs, s.min_input, s.max_input),
                from_schema(s.outputs, s.min_output, s.max_output), attrs)
        for n, v, i, o in HAND:
            if n != name:
                continue
            older = [k for k in rows if k[0] == name and k[1] < v]
            attrs = rows[max(older)][2] if older else None
            rows[(name, v)] = (from_spec(i), from_spec(o), attrs)
        if not any(k[0] == name for k in rows):
            sys.exit(f"gen-op-schema: no schema and no hand entry for {name}")
        if max(vers) > 17 and not any(k[0] == name and k[1] == max(vers) for k in rows):
            sys.exit(f"gen-op-schema: {name} is implemented at version {max(vers)}: add a hand entry")
    out = sys.stdout
    out.write("/* op_schema.h - generated by tools/gen-op-schema.py from the ONNX operator\n"
              " * schemas (and hand entries for opsets newer than the onnx package knows).\n"
              " * Do not edit: rerun the generator.  Included only from registry.c. */\n\n")
    for key in sorted(rows):
        attrs = rows[key][2]
        if attrs:
            out.write(f"static const nn_attr_spec attrs_{c_ident(key[0])}_{key[1]}[] = {{")
            out.write(", ".join(f'{{"{a}", {t}}}' for a, t in attrs))
            out.write(", {NULL, 0}};\n")
    out.write("\nstatic const nn_op_schema op_schema_table[] = {\n")
    for key in sorted(rows):
        (imn, imx, imask, ivar), (omn, omx, omask, ovar), attrs = rows[key]
        at = f"attrs_{c_ident(key[0])}_{key[1]}" if attrs else "NULL"
        out.write(f'  {{"{key[0]}", {key[1]}, {imn}, {imx}, {omn}, {omx}, 0x{imask:x}u, 0x{omask:x}u, '
                  f'{ivar}, {ovar}, {at}}},\n')
    out.write("};\n")


if __name__ == "__main__":
    main()
