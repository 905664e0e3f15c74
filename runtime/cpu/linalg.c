/* linalg.c - CPU kernels of the linear-algebra ops that are not a GEMM:
 * Einsum (12) and Det (11; Det-22 is type-only and needs no entry).
 * MatMul and Gemm are in gemm.c.  The shapes and Einsum's equation are the
 * op layer's (ops/linalg.h, ops/linalg.c). */
#include "cpu/kernel_util.h"
#include "ops/linalg.h"

/* ---- Einsum -------------------------------------------------------------------
 * The labels, their sizes and each operand's strides are ops/linalg.h's; the
 * result is the plain nested sum over the labels that do not reach the
 * output. */

static nn_status einsum_prepare(nn_ctx *c, nn_node *n) {
  nn_dtype dt = n->x[0]->dtype;
  if (!ku_is_real(dt) && dt != NN_DTYPE_INT32 && dt != NN_DTYPE_INT64)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  nn_einsum *p;
  nn_status st = nn_einsum_parse(c, n, &p);
  if (st != NN_OK)
    return st;
  n->priv = p;
  return NN_OK;
}

typedef struct einsum_job {
  const nn_einsum *p;
  nn_node *n;
} einsum_job;

static void einsum_range(void *arg, int64_t begin, int64_t end) {
  einsum_job *job = arg;
  const nn_einsum *p = job->p;
  nn_node *n = job->n;
  nn_dtype dt = n->y[0]->dtype;
  int64_t sum_total = 1;
  for (int s = 0; s < p->n_sum; s++)
    sum_total *= p->dim[p->sum_lab[s]];
  for (int64_t o = begin; o < end; o++) {
    int64_t base[NN_EINSUM_MAX_OPERANDS];
    int64_t rem = o;
    for (int i = 0; i < p->n_in; i++)
      base[i] = 0;
    for (int a = p->n_out - 1; a >= 0; a--) {
      int l = p->out_lab[a];
      int64_t idx = rem % p->dim[l];
      rem /= p->dim[l];
      for (int i = 0; i < p->n_in; i++)
        base[i] += idx * p->stride[(size_t)i * NN_EINSUM_MAX_LABELS + (size_t)l];
    }
    int64_t cnt[NN_EINSUM_MAX_LABELS] = {0};
    int64_t off[NN_EINSUM_MAX_OPERANDS];
    for (int i = 0; i < p->n_in; i++)
      off[i] = base[i];
    double acc = 0.0;
    uint64_t iacc = 0; /* integer einsum wraps like numpy: unsigned, no UB */
    if (dt == NN_DTYPE_FLOAT && p->n_in <= 2 && p->n_sum > 0) {
      /* float fast path: the innermost summed label runs as a tight strided
       * loop, the other summed labels as the odometer below */
      int ll = p->sum_lab[p->n_sum - 1];
      int64_t L = p->dim[ll];
      int64_t s0 = p->stride[(size_t)ll];
      int64_t s1 = p->n_in == 2 ? p->stride[NN_EINSUM_MAX_LABELS + (size_t)ll] : 0;
      const float *a = n->x[0]->data, *b = p->n_in == 2 ? n->x[1]->data : NULL;
      for (int64_t s = 0; s < sum_total; s += L) {
        if (b)
          for (int64_t j = 0; j < L; j++)
            acc += (double)a[off[0] + j * s0] * b[off[1] + j * s1];
        else
          for (int64_t j = 0; j < L; j++)
            acc += a[off[0] + j * s0];
        for (int ax = p->n_sum - 2; ax >= 0; ax--) {
          int l = p->sum_lab[ax];
          for (int i = 0; i < p->n_in; i++)
            off[i] += p->stride[(size_t)i * NN_EINSUM_MAX_LABELS + (size_t)l];
          if (++cnt[ax] < p->dim[l])
            break;
          for (int i = 0; i < p->n_in; i++)
            off[i] -= p->dim[l] * p->stride[(size_t)i * NN_EINSUM_MAX_LABELS + (size_t)l];
          cnt[ax] = 0;
        }
      }
      ((float *)n->y[0]->data)[o] = (float)acc;
      continue;
    }
    for (int64_t s = 0; s < sum_total; s++) {
      if (dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32) {
        uint64_t prod = 1;
        for (int i = 0; i < p->n_in; i++)
          prod *= (uint64_t)nn_value_get_int(n->x[i], off[i]);
        iacc += prod;
      } else {
        double prod = 1.0;
        for (int i = 0; i < p->n_in; i++)
          prod *= ku_ldd(n->x[i]->data, dt, off[i]);
        acc += prod;
      }
      /* odometer over the summed labels, innermost last */
      for (int a = p->n_sum - 1; a >= 0; a--) {
        int l = p->sum_lab[a];
        for (int i = 0; i < p->n_in; i++)
          off[i] += p->stride[(size_t)i * NN_EINSUM_MAX_LABELS + (size_t)l];
        if (++cnt[a] < p->dim[l])
          break;
        for (int i = 0; i < p->n_in; i++)
          off[i] -= p->dim[l] * p->stride[(size_t)i * NN_EINSUM_MAX_LABELS + (size_t)l];
        cnt[a] = 0;
      }
    }
    if (dt == NN_DTYPE_INT64)
      ((int64_t *)n->y[0]->data)[o] = (int64_t)iacc;
    else if (dt == NN_DTYPE_INT32)
      ((int32_t *)n->y[0]->data)[o] = (int32_t)iacc;
    else
      ku_std(n->y[0]->data, dt, o, acc);
  }
}

static nn_status einsum_run(nn_ctx *c, nn_node *n) {
  const nn_einsum *p = n->priv;
  einsum_job job = {p, n};
  int64_t work = 1;
  for (int s = 0; s < p->n_sum; s++)
    work *= p->dim[p->sum_lab[s]];
  int64_t grain = work > 4096 ? 1 : 4096 / (work > 0 ? work : 1);
  nn_parallel_for(c, n->y[0]->numel, grain, einsum_range, &job);
  return NN_OK;
}

/* ---- Det: LU with partial pivoting, in double ---------------------------------- */

/* the matrix being factored, in double */
static nn_status det_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int64_t m = x->dims[x->rank - 1];
  size_t ws;
  if (nn_mul_overflow_size((size_t)m * (size_t)(m ? m : 1), sizeof(double), &ws))
    return nn_fail(c, NN_ERR_LIMIT, "matrix too large");
  n->ws_bytes = ws;
  return NN_OK;
}

static nn_status det_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *x = n->x[0], *y = n->y[0];
  int64_t m = x->dims[x->rank - 1];
  double *a = n->ws;
  for (int64_t b = 0; b < y->numel; b++) {
    for (int64_t i = 0; i < m * m; i++)
      a[i] = ku_ldd(x->data, x->dtype, b * m * m + i);
    double det = 1.0;
    for (int64_t k = 0; k < m; k++) {
      int64_t piv = k;
      for (int64_t i = k + 1; i < m; i++)
        if (fabs(a[i * m + k]) > fabs(a[piv * m + k]))
          piv = i;
      if (a[piv * m + k] == 0.0) {
        det = 0.0;
        break;
      }
      if (piv != k) {
        for (int64_t j = 0; j < m; j++) {
          double t = a[k * m + j];
          a[k * m + j] = a[piv * m + j];
          a[piv * m + j] = t;
        }
        det = -det;
      }
      double d = a[k * m + k];
      det *= d;
      for (int64_t i = k + 1; i < m; i++) {
        double f = a[i * m + k] / d;
        for (int64_t j = k + 1; j < m; j++)
          a[i * m + j] -= f * a[k * m + j];
      }
    }
    ku_std(y->data, y->dtype, b, det);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_linalg[] = {
  {.name = "Einsum", .prepare = einsum_prepare, .run = einsum_run},
  {.name = "Det", .prepare = det_prepare, .run = det_run},
  {0},
};
