/* vmath.h - float32 transcendental functions over arrays, vectorized:
 * exp, sigmoid, SiLU (x * sigmoid(x)), tanh, erf and the exact (erf) GELU,
 * for the elementwise operators (unary.c), and whole Softmax rows.
 *
 * glibc's scalar expf / erff / tanhf cost 4-10 ns an element behind the
 * operators' branches: EfficientNet-B0's 49 Sigmoids took 68% of its time
 * and a ViT's GELU Erf 28% (Zen 4), where ONNX Runtime's MLAS runs vector
 * approximations.  These are approximations of the same kind, within a few
 * float32 ulps:
 *   exp      Cephes' range reduction and degree-6 polynomial, rel err ~1e-7
 *   sigmoid  1 / (1 + exp(-x)), rel err ~2e-7
 *   tanh     x + x^3 P(x^2) below 0.625, 1 - 2 / (exp(2|x|) + 1) above;
 *            rel err < 2e-7
 *   erf      x P(x^2) below 0.9, 1 - exp(-x^2 + Q(|x|)) up to 3.95, 1 above;
 *            abs err < 1.5e-7, rel err < 2e-7 (P, Q least-squares fits made
 *            for this file)
 * NaN in gives NaN out; +-inf give the limits.
 *
 * Only the AVX2 and AVX-512 paths have a vector form: on the portable path
 * (NN_CPU=portable, other CPUs) nn_vmath_f32 returns false and the caller
 * runs its libm loop, so tests compare the two.
 */
#ifndef NN_CPU_VMATH_H
#define NN_CPU_VMATH_H

#include <stdbool.h>
#include <stdint.h>

typedef enum nn_vmath_fn {
  NN_VM_EXP = 0,
  NN_VM_SIGMOID,
  NN_VM_SILU,   /* x * sigmoid(x) (ONNX Swish with alpha 1) */
  NN_VM_TANH,
  NN_VM_ERF,
  NN_VM_GELU,   /* 0.5 x (1 + erf(x / sqrt(2))) */
  NN_VM_COUNT
} nn_vmath_fn;

/* y[i] = f(x[i]) for 0 <= i < n on the dispatched path (nn_cpu_isa_get);
 * y may be x.  Returns false, writing nothing, when the path has no vector
 * form of f (the caller computes it). */
bool nn_vmath_f32(nn_vmath_fn f, const float *x, float *y, int64_t n);

/* One Softmax row: y[i] = exp(x[i] - max x) / sum_j exp(x[j] - max x),
 * 0 <= i < n, on the dispatched path; y may be x.  A NaN in x makes every
 * output NaN.  Returns false, writing nothing, on a path without a vector
 * form (the caller computes it). */
bool nn_vmath_softmax_row_f32(const float *x, float *y, int64_t n);

/* A block transposed: dst[i * ldd + j] = src[j * lds + i] for i < rows,
 * j < cols (strides in floats), 8x8 blocks in registers on AVX2 and up.
 * Transpose's tiles (NCHW <-> NHWC in ConvNeXt, Swin, ViT's patch
 * embedding) moved an element at a time.  Three rows read from pixels of
 * three channels (lds 3: an RGB image to planes) go by blends instead.  Returns false, writing nothing,
 * on a path without a vector form. */
bool nn_vmath_transpose_f32(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t rows,
                            int64_t cols);

/* QuantizeLinear to 8 bits: y[i] = clamp(rint(x[i] / s) + z, lo, hi) with
 * the quotient rounded in float (half to even) and NaN taken as 0, as the
 * reference; y is uint8 when u8, else int8.  Vector blocks only: returns
 * how many leading elements it wrote (a multiple of 8; 0 on a path without
 * a vector form), the caller computes the rest. */
/* y[i] = float(acc[i] + off[i]) * mult[i] + bias[i] for i < n, in float32,
 * the int32 sum wrapping, multiply then add (two roundings, never an fma);
 * off and bias may be NULL (0).  MatMulIntegerToFloat's store. */
void nn_vmath_scale_i32(const int32_t *acc, const int32_t *off, const float *mult, const float *bias,
                        float *y, int64_t n);

/* *mn, *mx: the smallest and largest of 0 and x[0 .. n), NaNs skipped
 * (DynamicQuantizeLinear's range); vectors where the CPU has them. */
void nn_vmath_range_f32(const float *x, int64_t n, float *mn, float *mx);

int64_t nn_vmath_quantize_f32(const float *x, float s, float z, float lo, float hi, bool u8, void *y,
                           int64_t n);

/* An integer convolution's requantization to 8 bits, as ONNX Runtime's
 * (MLAS) does it: v = float(a[i] + bias) * mult in float32 (the int32 sum
 * wrapping), clamped to the type's range less zp (NaN to its low end),
 * rounded half to even, plus zp.  a[i] from af (floats holding exact
 * integers) or, when af is NULL, ai.  Vector blocks only, as
 * nn_vmath_quantize_f32: the count written. */
int64_t nn_vmath_requant_8(const float *af, const int32_t *ai, int32_t bias, float mult, int32_t zp,
                           bool u8, void *y, int64_t n);

/* One element of nn_vmath_requant_8: float(acc + bias) * mult (the int32
 * sum wrapping) in float32, clamped to the type's range less zp (NaN to
 * its low end), rounded half to even, plus zp, stored to *y (uint8 when
 * u8, else int8).  The vector paths' scalar twin, value for value. */
void nn_vmath_requant_1(int32_t acc, int32_t bias, float mult, int32_t zp, bool u8, void *y);

/* dst[j * ldd + i] = src[i * lds + j] ^ flip for i < rows, j < cols (bytes):
 * 16 x 16 blocks of SSE2 unpacks where both sides reach 16 (an edge block
 * overlapping the one before it), element by element otherwise. */
void nn_vmath_transpose_u8(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds, int64_t rows,
                           int64_t cols, uint8_t flip);

#endif /* NN_CPU_VMATH_H */
