#!/usr/bin/python3
"""Generate runtime/ops/schema_table.h: per operator since-version, how many
inputs and outputs it takes, which of them must not be empty, and the exact
set of attributes it defines with their types -- from the ONNX operator
schemas.

Why: kernels read n->x[0], n->y[0] and their other required slots without a
check, and read attributes through typed getters, trusting what the ONNX
checker guarantees for a valid model.  A hostile model can omit any slot or
give any attribute another type, or an attribute the version does not have
(ReduceSum-13 with `axes`, which moved to an input at 13, would otherwise
reduce over every axis in silence).  One table checked at load
(nn_op_check_schema in runtime/ops/schema.c) settles it for every kernel at once, with
the checker's own rules.

The schemas come from the `onnx` Python package (/usr/bin/python3, Debian's
python3-onnx, which knows opsets up to 17).  Operators or versions newer than
that are written by hand below (HAND) from the ONNX operator documentation
(docs/Changelog.md), attributes included.

  build/tools/nn-run --list-ops > /tmp/ops.tsv
  /usr/bin/python3 tools/gen-op-schema.py /tmp/ops.tsv > runtime/ops/schema_table.h

Rerun it whenever a kernel or a kernel version is added: it stops when an
implemented version newer than opset 17 has no hand entry.
"""
import sys

import onnx.defs as D

SINGLE, OPTIONAL, VARIADIC = 0, 1, 2
INF = -1

# (name, since, inputs, outputs, attributes): one letter per slot, 'r'
# required, 'o' optional, 'R' variadic (every entry required), 'O' variadic
# optional; the attributes as "name:type ..." (types as in the operator
# documentation), exactly the set of that version: an attribute not listed is
# refused at load (ReduceX-18 took axes as an input, not an attribute).  From
# docs/Changelog.md of the ONNX repository.
HAND = [
    ("Gelu", 20, "r", "r", "approximate:string"),
    ("Mish", 18, "r", "r", ""),
    ("Swish", 24, "r", "r", "alpha:float"),
    ("BitwiseNot", 18, "r", "r", ""),
    ("BitwiseAnd", 18, "rr", "r", ""),
    ("BitwiseOr", 18, "rr", "r", ""),
    ("BitwiseXor", 18, "rr", "r", ""),
    ("DeformConv", 19, "rrroo", "r", "dilations:ints group:int kernel_shape:ints offset_group:int pads:ints "
                                     "strides:ints"),
    ("GroupNormalization", 18, "rrr", "r", "epsilon:float num_groups:int"),
    ("GroupNormalization", 21, "rrr", "r", "epsilon:float num_groups:int stash_type:int"),
    ("RMSNormalization", 23, "rr", "r", "axis:int epsilon:float stash_type:int"),
    ("CumProd", 26, "rr", "r", "exclusive:int reverse:int"),
    ("CenterCropPad", 18, "rr", "r", "axes:ints"),
    ("Attention", 23, "rrrooo", "rooo", "is_causal:int kv_num_heads:int q_num_heads:int qk_matmul_output_mode:int "
                                        "scale:float softcap:float softmax_precision:int"),
    ("Attention", 24, "rrroooo", "rooo", "is_causal:int kv_num_heads:int q_num_heads:int qk_matmul_output_mode:int "
                                         "scale:float softcap:float softmax_precision:int"),
    ("RotaryEmbedding", 23, "rrro", "r", "interleaved:int num_heads:int rotary_embedding_dim:int"),
    ("LinearAttention", 27, "rrroooo", "ro", "chunk_size:int kv_num_heads:int q_num_heads:int scale:float "
                                             "update_rule:string"),
    ("CausalConvWithState", 27, "rroo", "ro", "activation:string"),
    ("SwiGLU", 28, "rr", "r", "alpha:float"),
    ("AffineGrid", 20, "rr", "r", "align_corners:int"),
    ("Col2Im", 18, "rrr", "r", "dilations:ints pads:ints strides:ints"),
    ("AveragePool", 19, "r", "r", "auto_pad:string ceil_mode:int count_include_pad:int dilations:ints "
                                  "kernel_shape:ints pads:ints strides:ints"),
    ("LpPool", 18, "r", "r", "auto_pad:string ceil_mode:int dilations:ints kernel_shape:ints p:int pads:ints "
                             "strides:ints"),
    ("Split", 18, "ro", "R", "axis:int num_outputs:int"),
    ("Pad", 18, "rroo", "r", "mode:string"),
    ("Pad", 19, "rroo", "r", "mode:string"),
    ("ScatterElements", 18, "rrr", "r", "axis:int reduction:string"),
    ("ScatterND", 18, "rrr", "r", "reduction:string"),
    ("Resize", 18, "rooo", "r", "antialias:int axes:ints coordinate_transformation_mode:string cubic_coeff_a:float "
                                "exclude_outside:int extrapolation_value:float keep_aspect_ratio_policy:string "
                                "mode:string nearest_mode:string"),
    ("Resize", 19, "rooo", "r", "antialias:int axes:ints coordinate_transformation_mode:string cubic_coeff_a:float "
                                "exclude_outside:int extrapolation_value:float keep_aspect_ratio_policy:string "
                                "mode:string nearest_mode:string"),
    ("GridSample", 20, "rr", "r", "align_corners:int mode:string padding_mode:string"),
    ("DFT", 20, "roo", "r", "inverse:int onesided:int"),
] + [(f"Reduce{r}", 18, "ro", "r", "keepdims:int noop_with_empty_axes:int") for r in
     ("Mean", "Max", "Min", "Prod", "L1", "L2", "LogSum", "LogSumExp", "SumSquare")] + [
    ("QuantizeLinear", 19, "rro", "r", "axis:int saturate:int"),
    ("QuantizeLinear", 21, "rro", "r", "axis:int block_size:int output_dtype:int saturate:int"),
    ("QuantizeLinear", 23, "rro", "r", "axis:int block_size:int output_dtype:int precision:int saturate:int"),
    ("QuantizeLinear", 25, "rro", "r", "axis:int block_size:int output_dtype:int precision:int saturate:int"),
    ("DequantizeLinear", 19, "rro", "r", "axis:int"),
    ("DequantizeLinear", 21, "rro", "r", "axis:int block_size:int"),
    ("DequantizeLinear", 23, "rro", "r", "axis:int block_size:int output_dtype:int"),
    ("DequantizeLinear", 25, "rro", "r", "axis:int block_size:int output_dtype:int"),
]

# Versions newer than opset 17 of implemented operators that have no kernel
# of that version: a model at such an opset runs on the newest older kernel,
# and its nodes are checked against the schema of the model's opset (Cast-19
# added `saturate`, a valid attribute from opset 19 on).  Same format as HAND;
# from docs/Changelog.md of the ONNX repository (opsets up to 28).
NEWER = [
    ("Round", 22, "r", "r", ""),
    ("Elu", 22, "r", "r", "alpha:float"),
    ("Selu", 22, "r", "r", "alpha:float gamma:float"),
    ("Celu", 28, "r", "r", "alpha:float"),
    ("ThresholdedRelu", 22, "r", "r", "alpha:float"),
    ("HardSigmoid", 22, "r", "r", "alpha:float beta:float"),
    ("HardSwish", 22, "r", "r", ""),
    ("Softplus", 22, "r", "r", ""),
    ("Softsign", 22, "r", "r", ""),
    ("Sin", 22, "r", "r", ""),
    ("Cos", 22, "r", "r", ""),
    ("Tan", 22, "r", "r", ""),
    ("Asin", 22, "r", "r", ""),
    ("Acos", 22, "r", "r", ""),
    ("Atan", 22, "r", "r", ""),
    ("Sinh", 22, "r", "r", ""),
    ("Cosh", 22, "r", "r", ""),
    ("Asinh", 22, "r", "r", ""),
    ("Acosh", 22, "r", "r", ""),
    ("Atanh", 22, "r", "r", ""),
    ("IsNaN", 20, "r", "r", ""),
    ("IsInf", 20, "r", "r", "detect_negative:int detect_positive:int"),
    ("Mish", 22, "r", "r", ""),
    ("Equal", 19, "rr", "r", ""),
    ("Cast", 19, "r", "r", "saturate:int to:int"),
    ("Cast", 21, "r", "r", "saturate:int to:int"),
    ("Cast", 23, "r", "r", "saturate:int to:int"),
    ("Cast", 24, "r", "r", "round_mode:string saturate:int to:int"),
    ("Cast", 25, "r", "r", "round_mode:string saturate:int to:int"),
    ("CastLike", 19, "rr", "r", "saturate:int"),
    ("CastLike", 21, "rr", "r", "saturate:int"),
    ("CastLike", 23, "rr", "r", "saturate:int"),
    ("CastLike", 24, "rr", "r", "round_mode:string saturate:int"),
    ("CastLike", 25, "rr", "r", "round_mode:string saturate:int"),
    ("Conv", 22, "rro", "r", "auto_pad:string dilations:ints group:int kernel_shape:ints pads:ints strides:ints"),
    ("ConvTranspose", 22, "rro", "r", "auto_pad:string dilations:ints group:int kernel_shape:ints output_padding:ints "
                                      "output_shape:ints pads:ints strides:ints"),
    ("DeformConv", 22, "rrroo", "r", "dilations:ints group:int kernel_shape:ints offset_group:int pads:ints "
                                     "strides:ints"),
    ("AveragePool", 22, "r", "r", "auto_pad:string ceil_mode:int count_include_pad:int dilations:ints "
                                  "kernel_shape:ints pads:ints strides:ints"),
    ("MaxPool", 22, "r", "ro", "auto_pad:string ceil_mode:int dilations:ints kernel_shape:ints pads:ints "
                               "storage_order:int strides:ints"),
    ("LpPool", 22, "r", "r", "auto_pad:string ceil_mode:int dilations:ints kernel_shape:ints p:int pads:ints "
                             "strides:ints"),
    ("GlobalAveragePool", 22, "r", "r", ""),
    ("GlobalMaxPool", 22, "r", "r", ""),
    ("GlobalLpPool", 22, "r", "r", "p:int"),
    ("MaxUnpool", 22, "rro", "r", "kernel_shape:ints pads:ints strides:ints"),
    ("InstanceNormalization", 22, "rrr", "r", "epsilon:float"),
    ("LpNormalization", 22, "r", "r", "axis:int p:int"),
    ("ReduceMax", 20, "ro", "r", "keepdims:int noop_with_empty_axes:int"),
    ("ReduceMin", 20, "ro", "r", "keepdims:int noop_with_empty_axes:int"),
    ("TopK", 24, "rr", "rr", "axis:int largest:int sorted:int"),
    ("Reshape", 19, "rr", "r", "allowzero:int"),
    ("Reshape", 21, "rr", "r", "allowzero:int"),
    ("Reshape", 23, "rr", "r", "allowzero:int"),
    ("Reshape", 24, "rr", "r", "allowzero:int"),
    ("Reshape", 25, "rr", "r", "allowzero:int"),
    ("Flatten", 21, "r", "r", "axis:int"),
    ("Flatten", 23, "r", "r", "axis:int"),
    ("Flatten", 24, "r", "r", "axis:int"),
    ("Flatten", 25, "r", "r", "axis:int"),
    ("Squeeze", 21, "ro", "r", ""),
    ("Squeeze", 23, "ro", "r", ""),
    ("Squeeze", 24, "ro", "r", ""),
    ("Squeeze", 25, "ro", "r", ""),
    ("Unsqueeze", 21, "rr", "r", ""),
    ("Unsqueeze", 23, "rr", "r", ""),
    ("Unsqueeze", 24, "rr", "r", ""),
    ("Unsqueeze", 25, "rr", "r", ""),
    ("Identity", 19, "r", "r", ""),
    ("Identity", 21, "r", "r", ""),
    ("Identity", 23, "r", "r", ""),
    ("Identity", 24, "r", "r", ""),
    ("Identity", 25, "r", "r", ""),
    ("Dropout", 22, "roo", "ro", "seed:int"),
    ("Shape", 19, "r", "r", "end:int start:int"),
    ("Shape", 21, "r", "r", "end:int start:int"),
    ("Shape", 23, "r", "r", "end:int start:int"),
    ("Shape", 24, "r", "r", "end:int start:int"),
    ("Shape", 25, "r", "r", "end:int start:int"),
    ("Size", 19, "r", "r", ""),
    ("Size", 21, "r", "r", ""),
    ("Size", 23, "r", "r", ""),
    ("Size", 24, "r", "r", ""),
    ("Size", 25, "r", "r", ""),
    ("Constant", 19, "", "r", "sparse_value:sparse_tensor value:tensor value_float:float value_floats:floats "
                              "value_int:int value_ints:ints value_string:string value_strings:strings"),
    ("Constant", 21, "", "r", "sparse_value:sparse_tensor value:tensor value_float:float value_floats:floats "
                              "value_int:int value_ints:ints value_string:string value_strings:strings"),
    ("Constant", 23, "", "r", "sparse_value:sparse_tensor value:tensor value_float:float value_floats:floats "
                              "value_int:int value_ints:ints value_string:string value_strings:strings"),
    ("Constant", 24, "", "r", "sparse_value:sparse_tensor value:tensor value_float:float value_floats:floats "
                              "value_int:int value_ints:ints value_string:string value_strings:strings"),
    ("Constant", 25, "", "r", "sparse_value:sparse_tensor value:tensor value_float:float value_floats:floats "
                              "value_int:int value_ints:ints value_string:string value_strings:strings"),
    ("ConstantOfShape", 20, "r", "r", "value:tensor"),
    ("ConstantOfShape", 21, "r", "r", "value:tensor"),
    ("ConstantOfShape", 23, "r", "r", "value:tensor"),
    ("ConstantOfShape", 24, "r", "r", "value:tensor"),
    ("ConstantOfShape", 25, "r", "r", "value:tensor"),
    ("Range", 27, "rrr", "r", "stash_type:int"),
    ("EyeLike", 22, "r", "r", "dtype:int k:int"),
    ("Transpose", 21, "r", "r", "perm:ints"),
    ("Transpose", 23, "r", "r", "perm:ints"),
    ("Transpose", 24, "r", "r", "perm:ints"),
    ("Transpose", 25, "r", "r", "perm:ints"),
    ("Pad", 21, "rroo", "r", "mode:string"),
    ("Pad", 23, "rroo", "r", "mode:string"),
    ("Pad", 24, "rroo", "r", "mode:string"),
    ("Pad", 25, "rroo", "r", "mode:string"),
    ("Attention", 25, "rrroooo", "rooo", "is_causal:int kv_num_heads:int left_window_size:int q_num_heads:int "
                                         "qk_matmul_output_mode:int right_window_size:int scale:float softcap:float "
                                         "softmax_precision:int"),
    ("RNN", 22, "rrrooo", "oo", "activation_alpha:floats activation_beta:floats activations:strings clip:float "
                                "direction:string hidden_size:int layout:int"),
    ("GRU", 22, "rrrooo", "oo", "activation_alpha:floats activation_beta:floats activations:strings clip:float "
                                "direction:string hidden_size:int layout:int linear_before_reset:int"),
    ("LSTM", 22, "rrrooooo", "ooo", "activation_alpha:floats activation_beta:floats activations:strings clip:float "
                                    "direction:string hidden_size:int input_forget:int layout:int"),
    ("NegativeLogLikelihoodLoss", 22, "rro", "r", "ignore_index:int reduction:string"),
    ("Det", 22, "r", "r", ""),
    ("DequantizeLinear", 24, "rro", "r", "axis:int block_size:int output_dtype:int"),
    ("QuantizeLinear", 24, "rro", "r", "axis:int block_size:int output_dtype:int precision:int saturate:int"),
    ("GridSample", 22, "rr", "r", "align_corners:int mode:string padding_mode:string"),
    ("RoiAlign", 22, "rrr", "r", "coordinate_transformation_mode:string mode:string output_height:int "
                                 "output_width:int sampling_ratio:int spatial_scale:float"),
    ("QLinearMatMul", 21, "rrrrrrrr", "r", ""),
    ("BitCast", 26, "r", "r", "to:int"),
    ("TensorScatter", 24, "rro", "r", "axis:int mode:string"),
    ("StringConcat", 20, "rr", "r", ""),
    ("StringSplit", 20, "r", "rr", "delimiter:string maxsplit:int"),
    ("RegexFullMatch", 20, "r", "r", "pattern:string"),
    ("OptionalHasElement", 18, "o", "r", ""),
    ("OptionalGetElement", 18, "r", "r", ""),
    # ai.onnx.ml
    ("TreeEnsemble", 5, "r", "r", "aggregate_function:int leaf_targetids:ints leaf_weights:tensor "
                                  "membership_values:tensor n_targets:int nodes_falseleafs:ints "
                                  "nodes_falsenodeids:ints nodes_featureids:ints nodes_hitrates:tensor "
                                  "nodes_missing_value_tracks_true:ints nodes_modes:tensor "
                                  "nodes_splits:tensor nodes_trueleafs:ints nodes_truenodeids:ints "
                                  "post_transform:int tree_roots:ints"),
]

# AttributeProto.AttributeType, by the names the operator documentation uses
ATTR_TYPES = {"float": 1, "int": 2, "string": 3, "tensor": 4, "graph": 5, "floats": 6, "ints": 7, "strings": 8,
              "tensors": 9, "graphs": 10, "sparse_tensor": 11, "sparse_tensors": 12, "type_proto": 13,
              "type_protos": 14}


def from_attr_spec(spec):
    return sorted((a, ATTR_TYPES[t]) for a, t in (x.split(":") for x in spec.split()))


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
        for n, v, i, o, a in HAND + NEWER:
            if n != name:
                continue
            rows[(name, v)] = (from_spec(i), from_spec(o), from_attr_spec(a))
        if not any(k[0] == name for k in rows):
            sys.exit(f"gen-op-schema: no schema and no hand entry for {name}")
        if max(vers) > 17 and not any(k[0] == name and k[1] == max(vers) for k in rows):
            sys.exit(f"gen-op-schema: {name} is implemented at version {max(vers)}: add a hand entry")
    out = sys.stdout
    out.write("/* schema_table.h - generated by tools/gen-op-schema.py from the ONNX operator\n"
              " * schemas (and hand entries for opsets newer than the onnx package knows).\n"
              " * Do not edit: rerun the generator.  Included only from ops/schema.c. */\n\n")
    # every version gets a list, the empty one (attrs_none) included: an
    # attribute the list lacks is refused, so "no attributes" must not read
    # as "unknown" (NULL)
    out.write("static const nn_attr_spec attrs_none[] = {{NULL, 0}};\n")
    for key in sorted(rows):
        attrs = rows[key][2]
        if attrs:
            out.write(f"static const nn_attr_spec attrs_{c_ident(key[0])}_{key[1]}[] = {{")
            out.write("".join(f'{{"{a}", {t}}}, ' for a, t in attrs))
            out.write("{NULL, 0}};\n")
    out.write("\nstatic const nn_op_schema op_schema_table[] = {\n")
    for key in sorted(rows):
        (imn, imx, imask, ivar), (omn, omx, omask, ovar), attrs = rows[key]
        at = f"attrs_{c_ident(key[0])}_{key[1]}" if attrs else "attrs_none"
        out.write(f'  {{"{key[0]}", {key[1]}, {imn}, {imx}, {omn}, {omx}, 0x{imask:x}u, 0x{omask:x}u, '
                  f'{ivar}, {ovar}, {at}}},\n')
    out.write("};\n")


if __name__ == "__main__":
    main()
