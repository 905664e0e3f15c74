/* ew_un_tmpl.h - private to unary.c: the unary operators on one floating
 * point domain.  Included once per domain with
 *   UT     float or double
 *   UM(f)  the libm function for UT (UM(exp) is expf for float)
 *   UFN    the name of the kernel to define
 * and UN_LOOP / the un_kind enum / un_args from unary.c in scope.  No include
 * guard: it is meant to be included several times.
 *
 * NaN inputs give NaN outputs (comparisons are written so that a NaN falls
 * through unchanged), as numpy and ONNX Runtime do.
 */

#define UN_CAT_(a, b) a##b
#define UN_CAT(a, b) UN_CAT_(a, b)
#define UN_SIGMOID UN_CAT(UFN, _sigmoid)
#define UN_SOFTPLUS UN_CAT(UFN, _softplus)

/* Two branches so that exp never overflows. */
static inline UT UN_SIGMOID(UT v) {
  if (v >= 0)
    return (UT)1 / ((UT)1 + UM(exp)(-v));
  UT e = UM(exp)(v);
  return e / ((UT)1 + e);
}

/* log(1 + e^v) without overflow for large v. */
static inline UT UN_SOFTPLUS(UT v) {
  return v > 0 ? v + UM(log1p)(UM(exp)(-v)) : UM(log1p)(UM(exp)(v));
}

static void UFN(int kind, const un_args *p, const void *xv, void *yv, int64_t n) {
  const UT *x = xv;
  UT *y = yv;
  uint8_t *yb = yv;
  const UT al = (UT)p->u.alpha, be = (UT)p->u.beta, ga = (UT)p->u.gamma;
  switch (kind) {
  case UN_ABS: UN_LOOP(UM(fabs)(v)); break;
  case UN_NEG: UN_LOOP(-v); break;
  case UN_CEIL: UN_LOOP(UM(ceil)(v)); break;
  case UN_FLOOR: UN_LOOP(UM(floor)(v)); break;
  /* Halves to even, as ONNX specifies; the default rounding mode does it. */
  case UN_ROUND: UN_LOOP(UM(nearbyint)(v)); break;
  case UN_SQRT: UN_LOOP(UM(sqrt)(v)); break;
  case UN_EXP: UN_LOOP(UM(exp)(v)); break;
  case UN_LOG: UN_LOOP(UM(log)(v)); break;
  case UN_RECIPROCAL: UN_LOOP((UT)1 / v); break;
  case UN_SIGN: UN_LOOP(v > 0 ? (UT)1 : v < 0 ? (UT)-1 : v); break;
  case UN_SIGMOID_K: UN_LOOP(UN_SIGMOID(v)); break;
  case UN_TANH: UN_LOOP(UM(tanh)(v)); break;
  case UN_ERF: UN_LOOP(UM(erf)(v)); break;
  case UN_RELU: UN_LOOP(v < 0 ? (UT)0 : v); break;
  case UN_LEAKYRELU: UN_LOOP(v < 0 ? al * v : v); break;
  case UN_ELU: UN_LOOP(v < 0 ? al * UM(expm1)(v) : v); break;
  case UN_SELU: UN_LOOP(v > 0 ? ga * v : ga * (al * UM(exp)(v) - al)); break;
  /* max(0,x) + min(0, a*(exp(x/a)-1)) reduces to this for every a != 0,
   * without the inf*0 the literal form hits for large x. */
  case UN_CELU: UN_LOOP(v > 0 ? v : al * UM(expm1)(v / al)); break;
  case UN_THRESHOLDEDRELU: UN_LOOP(v > al ? v : (UT)0); break;
  case UN_HARDSIGMOID: UN_LOOP(UN_CLAMP01(al * v + be)); break;
  case UN_HARDSWISH: UN_LOOP(v * UN_CLAMP01(v * (UT)(1.0 / 6.0) + (UT)0.5)); break;
  case UN_SOFTPLUS_K: UN_LOOP(UN_SOFTPLUS(v)); break;
  case UN_SOFTSIGN: UN_LOOP(v / ((UT)1 + UM(fabs)(v))); break;
  case UN_SHRINK: {
    const UT lam = (UT)p->u.lambd, bias = (UT)p->u.bias;
    UN_LOOP(v < -lam ? v + bias : v > lam ? v - bias : (UT)0);
    break;
  }
  case UN_SIN: UN_LOOP(UM(sin)(v)); break;
  case UN_COS: UN_LOOP(UM(cos)(v)); break;
  case UN_TAN: UN_LOOP(UM(tan)(v)); break;
  case UN_ASIN: UN_LOOP(UM(asin)(v)); break;
  case UN_ACOS: UN_LOOP(UM(acos)(v)); break;
  case UN_ATAN: UN_LOOP(UM(atan)(v)); break;
  case UN_SINH: UN_LOOP(UM(sinh)(v)); break;
  case UN_COSH: UN_LOOP(UM(cosh)(v)); break;
  case UN_ASINH: UN_LOOP(UM(asinh)(v)); break;
  case UN_ACOSH: UN_LOOP(UM(acosh)(v)); break;
  case UN_ATANH: UN_LOOP(UM(atanh)(v)); break;
  case UN_GELU:
    UN_LOOP((UT)0.5 * v * ((UT)1 + UM(erf)(v * (UT)UN_SQRT1_2)));
    break;
  case UN_GELU_TANH:
    UN_LOOP((UT)0.5 * v *
            ((UT)1 + UM(tanh)((UT)UN_SQRT_2_PI * (v + (UT)0.044715 * v * v * v))));
    break;
  case UN_MISH: UN_LOOP(v * UM(tanh)(UN_SOFTPLUS(v))); break;
  case UN_SWISH: UN_LOOP(v * UN_SIGMOID(al * v)); break;
  case UN_CLIP: {
    const UT lo = (UT)p->lo_f, hi = (UT)p->hi_f;
    UN_LOOP(UN_CLAMP(v, lo, hi));
    break;
  }
  case UN_ISNAN:
    for (int64_t i = 0; i < n; i++)
      yb[i] = x[i] != x[i];
    break;
  case UN_ISINF: {
    const bool pos = p->u.detect_pos, neg = p->u.detect_neg;
    for (int64_t i = 0; i < n; i++) {
      UT v = x[i];
      yb[i] = (pos && v == (UT)INFINITY) || (neg && v == -(UT)INFINITY);
    }
    break;
  }
  default:
    break;
  }
}

#undef UN_SIGMOID
#undef UN_SOFTPLUS
#undef UN_CAT
#undef UN_CAT_
