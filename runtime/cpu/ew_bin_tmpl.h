/* ew_bin_tmpl.h - private to binary.c: the binary operators on one compute
 * domain (see ew_conv.h).  Included once per domain with
 *   BT     the domain type (float, double, int64_t, uint64_t)
 *   BKIND  1 float, 2 signed integer, 3 unsigned integer
 *   BM(f)  the libm function for BT (BM(pow) is powf for float)
 *   BFN    the name of the kernel to define
 * and BIN_LOOP / the bin_op enum from binary.c in scope.  No include guard:
 * it is meant to be included several times.
 *
 * Integer semantics are total: signed overflow wraps (computed on the
 * unsigned type), division and modulo by zero give 0, shifts by the width or
 * more give 0.  ONNX leaves these cases undefined; a fixed answer is better
 * than undefined behaviour in the runtime.
 */

#define BIN_CAT_(a, b) a##b
#define BIN_CAT(a, b) BIN_CAT_(a, b)
#define BIN_MOD BIN_CAT(BFN, _mod)
#define BIN_POW BIN_CAT(BFN, _pow)

#if BKIND == 1
#define BIN_ADD(u, v) ((u) + (v))
#define BIN_SUB(u, v) ((u) - (v))
#define BIN_MUL(u, v) ((u) * (v))
#define BIN_DIV(u, v) ((u) / (v))
/* NaN in either operand gives NaN, as numpy's maximum/minimum. */
#define BIN_MAX(u, v) (((u) > (v) || (u) != (u)) ? (u) : (v))
#define BIN_MIN(u, v) (((u) < (v) || (u) != (u)) ? (u) : (v))
#define BIN_NEG(u) ((u) < 0)
#elif BKIND == 2
#define BIN_ADD(u, v) ((BT)((uint64_t)(u) + (uint64_t)(v)))
#define BIN_SUB(u, v) ((BT)((uint64_t)(u) - (uint64_t)(v)))
#define BIN_MUL(u, v) ((BT)((uint64_t)(u) * (uint64_t)(v)))
#define BIN_DIV(u, v) ((v) == 0 ? 0 : (v) == -1 ? (BT)(0 - (uint64_t)(u)) : (u) / (v))
#define BIN_MAX(u, v) ((u) > (v) ? (u) : (v))
#define BIN_MIN(u, v) ((u) < (v) ? (u) : (v))
#define BIN_NEG(u) ((u) < 0)
#else
#define BIN_ADD(u, v) ((u) + (v))
#define BIN_SUB(u, v) ((u) - (v))
#define BIN_MUL(u, v) ((u) * (v))
#define BIN_DIV(u, v) ((v) == 0 ? 0 : (u) / (v))
#define BIN_MAX(u, v) ((u) > (v) ? (u) : (v))
#define BIN_MIN(u, v) ((u) < (v) ? (u) : (v))
#define BIN_NEG(u) ((void)(u), 0)
#endif

/* fmod != 0: C's remainder (sign of the dividend); else Python's (sign of
 * the divisor). */
static inline BT BIN_MOD(BT u, BT v, int fmod_) {
#if BKIND == 1
  BT r = BM(fmod)(u, v);
  if (!fmod_ && r != 0 && ((r < 0) != (v < 0)))
    r += v;
  return r;
#elif BKIND == 2
  if (v == 0 || v == -1)
    return 0;
  BT r = u % v;
  if (!fmod_ && r != 0 && ((r < 0) != (v < 0)))
    r += v;
  return r;
#else
  (void)fmod_;
  return v == 0 ? 0 : u % v;
#endif
}

static inline BT BIN_POW(BT u, BT v) {
#if BKIND == 1
  return BM(pow)(u, v);
#else
#if BKIND == 2
  /* Negative exponents: the integer part of 1/u^-v. */
  if (v < 0)
    return u == 1 ? 1 : u == -1 ? ((v & 1) ? -1 : 1) : 0;
#endif
  uint64_t r = 1, x = (uint64_t)u, e = (uint64_t)v;
  while (e) {
    if (e & 1)
      r *= x;
    x *= x;
    e >>= 1;
  }
  return (BT)r;
#endif
}

static void BFN(int op, const bin_args *p, const void *pa, int sa, const void *pb, int sb,
                void *y, int64_t n) {
  const BT *a = pa;
  const BT *b = pb;
  switch (op) {
  case BIN_OP_ADD: BIN_LOOP(BT, BIN_ADD(u, v)); break;
  case BIN_OP_SUB: BIN_LOOP(BT, BIN_SUB(u, v)); break;
  case BIN_OP_MUL: BIN_LOOP(BT, BIN_MUL(u, v)); break;
  case BIN_OP_DIV: BIN_LOOP(BT, BIN_DIV(u, v)); break;
  case BIN_OP_MOD: BIN_LOOP(BT, BIN_MOD(u, v, p->fmod)); break;
  case BIN_OP_POW:
#if BKIND == 1
    /* x^2 and x^3 are the common exponents (variance, GELU expansions):
     * products are much faster than pow and as accurate (x*x is exactly
     * pow's correctly rounded result, x*x*x within an ulp). */
    if (!sb && b[0] == 2) {
      BIN_LOOP(BT, u * u);
      break;
    }
    if (!sb && b[0] == 3) {
      BIN_LOOP(BT, u * u * u);
      break;
    }
#endif
    BIN_LOOP(BT, BIN_POW(u, v));
    break;
  case BIN_OP_MAX: BIN_LOOP(BT, BIN_MAX(u, v)); break;
  case BIN_OP_MIN: BIN_LOOP(BT, BIN_MIN(u, v)); break;
  case BIN_OP_PRELU: BIN_LOOP(BT, BIN_NEG(u) ? BIN_MUL(u, v) : u); break;
  case BIN_OP_EQ: BIN_LOOP(uint8_t, u == v); break;
  case BIN_OP_LT: BIN_LOOP(uint8_t, u < v); break;
  case BIN_OP_GT: BIN_LOOP(uint8_t, u > v); break;
  case BIN_OP_LE: BIN_LOOP(uint8_t, u <= v); break;
  case BIN_OP_GE: BIN_LOOP(uint8_t, u >= v); break;
  case BIN_OP_AND: BIN_LOOP(uint8_t, (u != 0) & (v != 0)); break;
  case BIN_OP_OR: BIN_LOOP(uint8_t, (u != 0) | (v != 0)); break;
  case BIN_OP_XOR: BIN_LOOP(uint8_t, (u != 0) ^ (v != 0)); break;
#if BKIND != 1
  case BIN_OP_BAND: BIN_LOOP(BT, u & v); break;
  case BIN_OP_BOR: BIN_LOOP(BT, u | v); break;
  case BIN_OP_BXOR: BIN_LOOP(BT, u ^ v); break;
  case BIN_OP_SHL: BIN_LOOP(BT, (uint64_t)v >= 64 ? 0 : (BT)((uint64_t)u << v)); break;
  case BIN_OP_SHR: BIN_LOOP(BT, (uint64_t)v >= 64 ? 0 : (BT)((uint64_t)u >> v)); break;
#endif
  default: break;
  }
}

#undef BIN_ADD
#undef BIN_SUB
#undef BIN_MUL
#undef BIN_DIV
#undef BIN_MAX
#undef BIN_MIN
#undef BIN_NEG
#undef BIN_MOD
#undef BIN_POW
#undef BIN_CAT
#undef BIN_CAT_
