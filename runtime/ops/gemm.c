/* gemm.c - Gemm's attributes and shapes (gemm.h). */
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

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_gemm[] = {
  /* MatMul-9/13 only widened the type list */
  {.name = "MatMul", .versions = {1}},
  /* 1/6: C required, "broadcast" attribute; 7: unidirectional broadcast;
   * 11: C optional.  Accepting the broadcast form everywhere covers all. */
  {.name = "Gemm", .versions = {1, 6, 7, 11}},
  {.name = "MatMulInteger", .versions = {10}},
  {0},
};
