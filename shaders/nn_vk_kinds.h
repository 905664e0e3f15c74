/* nn_vk_kinds.h - enumerations shared by the GLSL compute shaders and the C
 * side of the Vulkan backend.  Plain #defines only: this file is #included by
 * both glslc (GL_GOOGLE_include_directive) and the C compiler, so the two can
 * never disagree on what "activation 3" means. */
#ifndef NN_VK_KINDS_H
#define NN_VK_KINDS_H

/* The runtime's fused-activation vocabulary (nn_node.act): relative to this
 * file for both compilers. */
#include "../runtime/ops/act_kinds.h"
#include "../runtime/ops/pad_kinds.h"

/* Activations: the unary kernel applies one, and binary/conv/gemm/affine
 * kernels fuse one into their epilogue.  a/b are the float parameters.
 * The kinds a plan fuses are the op layer's codes (ops/act_kinds.h), so a
 * node's nn_act reaches the shaders as it is; the unary kernel's other
 * activations are numbered around them. */
#define NN_VK_ACT_NONE NN_ACT_NONE             /* identity (also: plain copy) */
#define NN_VK_ACT_RELU NN_ACT_RELU
#define NN_VK_ACT_LEAKY_RELU NN_ACT_LEAKY_RELU /* a = alpha */
#define NN_VK_ACT_CLIP NN_ACT_CLIP             /* a = min, b = max */
#define NN_VK_ACT_SIGMOID NN_ACT_SIGMOID
#define NN_VK_ACT_HARD_SIGMOID 5               /* a = alpha, b = beta; never fused */
#define NN_VK_ACT_HARD_SWISH NN_ACT_HARD_SWISH
#define NN_VK_ACT_TANH 7
#define NN_VK_ACT_ELU 8           /* a = alpha */
#define NN_VK_ACT_SELU 9          /* a = alpha, b = gamma */
#define NN_VK_ACT_SOFTPLUS 10
#define NN_VK_ACT_SOFTSIGN 11
#define NN_VK_ACT_EXP 12
#define NN_VK_ACT_LOG 13
#define NN_VK_ACT_ABS 14
#define NN_VK_ACT_NEG 15
#define NN_VK_ACT_SQRT 16
#define NN_VK_ACT_RECIPROCAL 17
#define NN_VK_ACT_FLOOR 18
#define NN_VK_ACT_CEIL 19
#define NN_VK_ACT_ERF 20
#define NN_VK_ACT_GELU NN_ACT_GELU  /* 21: exact (erf) form; fusable */
#define NN_VK_ACT_SIN 22
#define NN_VK_ACT_COS 23
#define NN_VK_ACT_TAN 24
#define NN_VK_ACT_ROUND 25        /* half to even, as ONNX Round */
#define NN_VK_ACT_SIGN 26
#define NN_VK_ACT_MISH 27
#define NN_VK_ACT_THRESHOLDED_RELU 28 /* a = alpha */
#define NN_VK_ACT_CELU 29         /* a = alpha */
#define NN_VK_ACT_SHRINK 30       /* a = bias, b = lambd */
#define NN_VK_ACT_ASIN 31
#define NN_VK_ACT_ACOS 32
#define NN_VK_ACT_ATAN 33
#define NN_VK_ACT_SINH 34
#define NN_VK_ACT_COSH 35
#define NN_VK_ACT_ASINH 36
#define NN_VK_ACT_ACOSH 37
#define NN_VK_ACT_ATANH 38
#define NN_VK_ACT_GELU_TANH 39    /* tanh approximation */
#define NN_VK_ACT_SILU NN_ACT_SILU    /* 40: fused Mul(x, Sigmoid(x)) */
#define NN_VK_ACT_COUNT 41

/* Binary element-wise operations (binary.comp). */
#define NN_VK_BIN_ADD 0
#define NN_VK_BIN_SUB 1
#define NN_VK_BIN_MUL 2
#define NN_VK_BIN_DIV 3
#define NN_VK_BIN_MAX 4
#define NN_VK_BIN_MIN 5
#define NN_VK_BIN_POW 6
#define NN_VK_BIN_PRELU 7         /* a >= 0 ? a : a * b */
#define NN_VK_BIN_FMOD 8          /* C fmod: sign of the dividend */
#define NN_VK_BIN_COUNT 9

/* Reductions (reduce.comp); the global pools are reductions over H*W. */
#define NN_VK_RED_SUM 0
#define NN_VK_RED_MEAN 1
#define NN_VK_RED_MAX 2
#define NN_VK_RED_MIN 3
#define NN_VK_RED_PROD 4
#define NN_VK_RED_SUM_SQUARE 5
#define NN_VK_RED_L1 6
#define NN_VK_RED_L2 7
#define NN_VK_RED_LOG_SUM 8
#define NN_VK_RED_LOG_SUM_EXP 9
#define NN_VK_RED_COUNT 10

/* Pooling (pool2d.comp). */
#define NN_VK_POOL_MAX 0
#define NN_VK_POOL_AVG 1

/* Pad modes (transform_pad.comp): the op layer's (ops/pad_kinds.h). */
#define NN_VK_PAD_CONSTANT NN_PAD_CONSTANT
#define NN_VK_PAD_REFLECT NN_PAD_REFLECT
#define NN_VK_PAD_EDGE NN_PAD_EDGE
#define NN_VK_PAD_WRAP NN_PAD_WRAP

/* Resize (resize.comp). */
#define NN_VK_RESIZE_NEAREST 0
#define NN_VK_RESIZE_LINEAR 1
#define NN_VK_RESIZE_CUBIC 2
#define NN_VK_COORD_HALF_PIXEL 0
#define NN_VK_COORD_ASYMMETRIC 1
#define NN_VK_COORD_ALIGN_CORNERS 2
#define NN_VK_COORD_PYTORCH_HALF_PIXEL 3
#define NN_VK_COORD_HALF_PIXEL_SYMMETRIC 4
#define NN_VK_NEAREST_ROUND_PREFER_FLOOR 0
#define NN_VK_NEAREST_ROUND_PREFER_CEIL 1
#define NN_VK_NEAREST_FLOOR 2
#define NN_VK_NEAREST_CEIL 3

/* Element types of the typed kernels (binary_compare, binary_where, cast):
 * tensors of any of these are read and written as 32-bit words (1- and
 * 2-byte elements packed, 8-byte ones as word pairs, little-endian). */
#define NN_VK_ET_F32 0
#define NN_VK_ET_BOOL 1
#define NN_VK_ET_I8 2
#define NN_VK_ET_U8 3
#define NN_VK_ET_I16 4
#define NN_VK_ET_U16 5
#define NN_VK_ET_I32 6
#define NN_VK_ET_U32 7
#define NN_VK_ET_I64 8
#define NN_VK_ET_U64 9
#define NN_VK_ET_F16 10
#define NN_VK_ET_BF16 11
#define NN_VK_ET_F64 12
#define NN_VK_ET_COUNT 13

/* Comparisons and logic (binary_compare.comp): bool outputs. */
#define NN_VK_CMP_EQ 0
#define NN_VK_CMP_LT 1
#define NN_VK_CMP_GT 2
#define NN_VK_CMP_LE 3
#define NN_VK_CMP_GE 4
#define NN_VK_CMP_AND 5
#define NN_VK_CMP_OR 6
#define NN_VK_CMP_XOR 7
#define NN_VK_CMP_NOT 8           /* unary: b is not read */
#define NN_VK_CMP_COUNT 9

/* Where (binary_where.comp) takes up to this rank after collapsing: four
 * operands' strides share the push-constant block. */
#define NN_VK_WHERE_MAX_RANK 6

/* Row normalizations (norm_rows.comp). */
#define NN_VK_ROWNORM_LAYER 0     /* (x - mean) / sqrt(var + eps) */
#define NN_VK_ROWNORM_RMS 1       /* x / sqrt(mean(x^2) + eps) */

/* Largest tensor rank the strided kernels (binary, copy, pad) take: their
 * dims and strides travel in the 128-byte push-constant block. */
#define NN_VK_MAX_RANK 8

#endif
