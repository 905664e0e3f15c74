/* gemm.c - the gemm family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_gemm[], collected by ops/registry.c),
 * Gemm's attributes and shapes and MatMul's batched shapes (gemm.h). */
#include <string.h>

#include "ops/gemm.h"

nn_status nn_gemm_params_init(nn_ctx *c, const nn_node *n, nn_gemm_params *p) {
  memset(p, 0, sizeof *p);
  if (n->n_in < 2 || !n->x[0] || !n->x[1])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs inputs A and B");
  const nn_value *a = n->x[0], *b = n->x[1];
  const nn_value *cv = n->n_in >= 3 ? n->x[2] : NULL;
  if (a->rank != 2 || b->rank != 2)
    return nn_fail(c, NN_ERR_SHAPE, "A and B must be 2-D (got rank %d and %d)", a->rank,
                   b->rank);
  p->ta = nn_attr_int(n, "transA", 0) != 0;
  p->tb = nn_attr_int(n, "transB", 0) != 0;
  p->alpha = nn_attr_float(n, "alpha", 1.0f);
  p->beta = nn_attr_float(n, "beta", 1.0f);
  p->M = p->ta ? a->dims[1] : a->dims[0];
  p->K = p->ta ? a->dims[0] : a->dims[1];
  int64_t kb = p->tb ? b->dims[1] : b->dims[0];
  p->N = p->tb ? b->dims[0] : b->dims[1];
  if (kb != p->K)
    return nn_fail(c, NN_ERR_SHAPE,
                   "inner dimensions differ: op(A) is %lldx%lld, op(B) is %lldx%lld",
                   (long long)p->M, (long long)p->K, (long long)kb, (long long)p->N);
  if (!cv)
    return NN_OK;
  p->c_no_broadcast = n->version < 7 && nn_attr_int(n, "broadcast", 1) == 0;
  /* Gemm-1/6 "broadcast" is the only way C may differ from M x N there; the
   * unidirectional broadcast of Gemm-7+ covers both. */
  if (cv->rank > 2)
    return nn_fail(c, NN_ERR_SHAPE, "C must have rank <= 2 (got %d)", cv->rank);
  int64_t yd[2] = {p->M, p->N};
  for (int i = 0; i < cv->rank; i++) {
    int64_t d = cv->dims[i], want = yd[2 - cv->rank + i];
    if (d != 1 && d != want)
      return nn_fail(c, NN_ERR_SHAPE, "C does not broadcast to %lldx%lld (dim %d is %lld)",
                     (long long)p->M, (long long)p->N, i, (long long)d);
  }
  p->has_c = true;
  nn_broadcast_strides(cv->rank, cv->dims, 2, yd, p->cs);
  return NN_OK;
}

nn_status nn_matmul_shape_init(nn_ctx *c, const nn_value *a, const nn_value *b,
                               nn_matmul_shape *s) {
  memset(s, 0, sizeof *s);
  if (a->rank < 1 || b->rank < 1)
    return nn_fail(c, NN_ERR_SHAPE, "MatMul operands must have rank >= 1 (got %d and %d)",
                   a->rank, b->rank);
  bool a1 = a->rank == 1, b1 = b->rank == 1;
  int64_t ka, kb;
  s->M = a1 ? 1 : a->dims[a->rank - 2];
  ka = a->dims[a->rank - 1];
  kb = b1 ? b->dims[0] : b->dims[b->rank - 2];
  s->N = b1 ? 1 : b->dims[b->rank - 1];
  if (ka != kb)
    return nn_fail(c, NN_ERR_SHAPE,
                   "inner dimensions differ: A has K=%lld, B has K=%lld", (long long)ka,
                   (long long)kb);
  s->K = ka;
  int ra = a1 ? 0 : a->rank - 2, rb = b1 ? 0 : b->rank - 2;
  if (nn_broadcast_shape(ra, a->dims, rb, b->dims, &s->brank, s->bdims) != NN_OK)
    return nn_fail(c, NN_ERR_SHAPE, "batch dimensions of A and B do not broadcast");
  nn_broadcast_strides(ra, a->dims, s->brank, s->bdims, s->sa);
  nn_broadcast_strides(rb, b->dims, s->brank, s->bdims, s->sb);
  s->nb = nn_dims_numel(s->brank, s->bdims);
  int yr = s->brank + !a1 + !b1;
  if (yr > NN_MAX_RANK)
    return nn_fail(c, NN_ERR_LIMIT, "result rank %d exceeds %d", yr, NN_MAX_RANK);
  int r = 0;
  for (int i = 0; i < s->brank; i++)
    s->ydims[r++] = s->bdims[i];
  if (!a1)
    s->ydims[r++] = s->M;
  if (!b1)
    s->ydims[r++] = s->N;
  s->yrank = r;
  return NN_OK;
}

/* ---- shape and dtype inference ------------------------------------------------ */

static nn_status matmul_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || !n->x[0] || !n->x[1] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "MatMul needs inputs A, B and output Y");
  const nn_value *a = n->x[0], *b = n->x[1];
  if (a->dtype != b->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "A is %s but B is %s", nn_dtype_name(a->dtype),
                   nn_dtype_name(b->dtype));
  nn_matmul_shape s;
  nn_status st = nn_matmul_shape_init(c, a, b, &s);
  return st ? st : nn_set_output(c, n->y[0], a->dtype, s.yrank, s.ydims);
}

static nn_status gemm_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || !n->x[0] || !n->x[1] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "Gemm needs inputs A, B and output Y");
  const nn_value *a = n->x[0], *b = n->x[1];
  const nn_value *cv = n->n_in >= 3 ? n->x[2] : NULL;
  if (a->dtype != b->dtype || (cv && cv->dtype != a->dtype))
    return nn_fail(c, NN_ERR_DTYPE, "A, B and C must share one type (A is %s)",
                   nn_dtype_name(a->dtype));
  nn_gemm_params p;
  nn_status st = nn_gemm_params_init(c, n, &p);
  if (st)
    return st;
  int64_t yd[2] = {p.M, p.N};
  return nn_set_output(c, n->y[0], a->dtype, 2, yd);
}

static bool mmi_dtype_ok(nn_dtype dt) { return dt == NN_DTYPE_UINT8 || dt == NN_DTYPE_INT8; }

/* MatMulInteger: 8-bit A and B, zero points of their operand's type, an
 * int32 result. */
static nn_status matmulinteger_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 2 || !n->x[0] || !n->x[1] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "MatMulInteger needs inputs A, B and output Y");
  const nn_value *a = n->x[0], *b = n->x[1];
  const nn_value *za = n->n_in > 2 ? n->x[2] : NULL, *zb = n->n_in > 3 ? n->x[3] : NULL;
  if (!mmi_dtype_ok(a->dtype) || !mmi_dtype_ok(b->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "MatMulInteger on %s x %s is not supported",
                   nn_dtype_name(a->dtype), nn_dtype_name(b->dtype));
  if ((za && za->dtype != a->dtype) || (zb && zb->dtype != b->dtype))
    return nn_fail(c, NN_ERR_DTYPE, "zero points must have the type of their operand");
  nn_matmul_shape s;
  nn_status st = nn_matmul_shape_init(c, a, b, &s);
  return st ? st : nn_set_output(c, n->y[0], NN_DTYPE_INT32, s.yrank, s.ydims);
}

/* com.microsoft MatMulIntegerToFloat (ONNX Runtime's contrib op, what its
 * optimizer makes of MatMulInteger -> Cast -> Mul by the two scales, and
 * what ours makes of it: qdq.c): inputs A, B (8-bit), a_scale (one float),
 * b_scale (one, or one per column of B), a_zero_point, b_zero_point (one,
 * or one per column), bias (one float per column); all but A, B and the
 * scales optional.  Y = float((A - a_zp)(B - b_zp)) * (a_scale * b_scale)
 * + bias, float32. */
static nn_status mmif_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 4 || !n->x[0] || !n->x[1] || !n->x[2] || !n->x[3] || n->n_out < 1 || !n->y[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "MatMulIntegerToFloat needs A, B, a_scale, b_scale and Y");
  const nn_value *a = n->x[0], *b = n->x[1], *as = n->x[2], *bs = n->x[3];
  const nn_value *za = n->n_in > 4 ? n->x[4] : NULL, *zb = n->n_in > 5 ? n->x[5] : NULL;
  const nn_value *bias = n->n_in > 6 ? n->x[6] : NULL;
  if (!mmi_dtype_ok(a->dtype) || !mmi_dtype_ok(b->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "MatMulIntegerToFloat on %s x %s is not supported",
                   nn_dtype_name(a->dtype), nn_dtype_name(b->dtype));
  if ((za && za->dtype != a->dtype) || (zb && zb->dtype != b->dtype))
    return nn_fail(c, NN_ERR_DTYPE, "zero points must have the type of their operand");
  if (as->dtype != NN_DTYPE_FLOAT || bs->dtype != NN_DTYPE_FLOAT ||
      (bias && bias->dtype != NN_DTYPE_FLOAT))
    return nn_fail(c, NN_ERR_DTYPE, "scales and bias must be float32");
  nn_matmul_shape s;
  nn_status st = nn_matmul_shape_init(c, a, b, &s);
  if (st)
    return st;
  if (as->numel != 1 || (bs->numel != 1 && bs->numel != s.N) || (za && za->numel != 1) ||
      (zb && zb->numel != 1 && zb->numel != s.N) || (bias && bias->numel != s.N))
    return nn_fail(c, NN_ERR_UNSUPPORTED,
                   "a_scale and a_zero_point must be one value; b_scale, b_zero_point one or N=%lld, "
                   "bias N", (long long)s.N);
  return nn_set_output(c, n->y[0], NN_DTYPE_FLOAT, s.yrank, s.ydims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the kernels' prepare (cpu/gemm.c) refuses the types and
 * scalings they do not compute and packs constant weights. */
const nn_op_def nn_ops_gemm[] = {
  /* MatMul-9/13 only widened the type list */
  {.name = "MatMul", .versions = {1}, .infer = matmul_infer},
  /* 1/6: C required, "broadcast" attribute; 7: unidirectional broadcast;
   * 11: C optional.  Accepting the broadcast form everywhere covers all. */
  {.name = "Gemm", .versions = {1, 6, 7, 11}, .infer = gemm_infer},
  {.name = "MatMulInteger", .versions = {10}, .infer = matmulinteger_infer},
  {.name = "MatMulIntegerToFloat", .domain = "com.microsoft", .versions = {1}, .infer = mmif_infer},
  {0},
};
