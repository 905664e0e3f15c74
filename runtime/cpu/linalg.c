/* linalg.c - CPU kernels of the linear-algebra ops that are not a GEMM:
 * Einsum (12) and Det (11; Det-22 is type-only and needs no entry).
 * MatMul and Gemm are in gemm.c. */
#include "cpu/kernel_util.h"

/* ---- Einsum -------------------------------------------------------------------
 * Every distinct label (letter, or one broadcast dimension of the ellipsis)
 * becomes a loop index.  Each operand gets an element stride per label (the
 * sum of its strides for a repeated label, which walks the diagonal; 0 where
 * the label is absent or broadcast), and the result is the plain nested sum
 * over the labels that do not reach the output. */

#define EINSUM_MAX_LABELS (52 + NN_MAX_RANK)
#define EINSUM_MAX_OPERANDS 64

typedef struct einsum_params {
  int n_in;
  int n_out, n_sum;
  int64_t dim[EINSUM_MAX_LABELS];
  int out_lab[NN_MAX_RANK];
  int sum_lab[EINSUM_MAX_LABELS];
  int64_t stride[]; /* n_in * EINSUM_MAX_LABELS */
} einsum_params;

static int einsum_letter(char ch) {
  if (ch >= 'a' && ch <= 'z')
    return ch - 'a';
  if (ch >= 'A' && ch <= 'Z')
    return 26 + ch - 'A';
  return -1;
}

/* Parse one term against its operand's rank: letters become labels 0..51,
 * each ellipsis dim a -1 placeholder (the caller maps it once the broadcast
 * ellipsis rank of all terms is known).  Returns the label count, -1 when
 * the term is malformed or does not match the rank. */
static int einsum_term(const char *s, size_t len, int rank, int *lab, int *ell_rank) {
  int letters = 0, dots = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || dots)
        return -1;
      dots = 1;
      i += 2;
    } else if (einsum_letter(s[i]) >= 0) {
      letters++;
    } else {
      return -1;
    }
  }
  int e = dots ? rank - letters : 0;
  if (rank >= 0 && (e < 0 || (!dots && letters != rank)))
    return -1;
  if (letters + e > NN_MAX_RANK)
    return -1;
  *ell_rank = e;
  int k = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.') {
      for (int j = 0; j < e; j++)
        lab[k++] = -1; /* resolved by the caller, which knows the broadcast rank */
      i += 2;
    } else {
      lab[k++] = einsum_letter(s[i]);
    }
  }
  return k;
}

static nn_status einsum_prepare(nn_ctx *c, nn_node *n) {
  const char *eq_raw = nn_attr_string(n, "equation", NULL);
  if (!eq_raw)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "equation attribute is required");
  char eq[512];
  size_t L = 0;
  for (const char *s = eq_raw; *s; s++) {
    if (*s == ' ' || *s == '\t')
      continue;
    if (L + 1 >= sizeof eq)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "equation too long");
    eq[L++] = *s;
  }
  eq[L] = '\0';
  if (n->n_in < 1 || n->n_in > EINSUM_MAX_OPERANDS)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "Einsum with %d operands (1..%d supported)", n->n_in,
                   EINSUM_MAX_OPERANDS);
  for (int i = 0; i < n->n_in; i++)
    if (!n->x[i])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is missing", i);
  nn_dtype dt = n->x[0]->dtype;
  if (!ku_is_real(dt) && dt != NN_DTYPE_INT32 && dt != NN_DTYPE_INT64)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  for (int i = 0; i < n->n_in; i++) {
    if (n->x[i]->dtype != dt)
      return nn_fail(c, NN_ERR_DTYPE, "all inputs must have the same type");
  }

  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : L;
  size_t sz = sizeof(einsum_params) + sizeof(int64_t) * (size_t)n->n_in * EINSUM_MAX_LABELS;
  einsum_params *p = nn_calloc(1, sz);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->n_in = n->n_in;
  for (int l = 0; l < EINSUM_MAX_LABELS; l++)
    p->dim[l] = -1;
  int count[EINSUM_MAX_LABELS] = {0};
  int ell_max = 0;
  nn_status st = NN_OK;

  /* pass 1: per-term labels, dims, ellipsis rank */
  size_t pos = 0;
  for (int i = 0; i < n->n_in; i++) {
    size_t end = pos;
    while (end < lhs_len && eq[end] != ',')
      end++;
    if ((i < n->n_in - 1) != (end < lhs_len)) {
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "equation '%s' has a different number of terms than "
                   "the %d inputs", eq_raw, n->n_in);
      goto fail;
    }
    const nn_value *x = n->x[i];
    int lab[NN_MAX_RANK], e;
    int k = einsum_term(eq + pos, end - pos, x->rank, lab, &e);
    if (k < 0) {
      st = nn_fail(c, NN_ERR_INVALID_MODEL, "term %d of '%s' does not match input rank %d", i,
                   eq_raw, x->rank);
      goto fail;
    }
    if (e > ell_max)
      ell_max = e;
    pos = end + 1;
  }
  /* pass 2: strides; ellipsis dim j of a term of ellipsis rank e is broadcast
   * dim (ell_max - e + j), label 52 + that */
  pos = 0;
  for (int i = 0; i < n->n_in; i++) {
    size_t end = pos;
    while (end < lhs_len && eq[end] != ',')
      end++;
    const nn_value *x = n->x[i];
    int lab[NN_MAX_RANK], e;
    int k = einsum_term(eq + pos, end - pos, x->rank, lab, &e);
    int j = 0;
    int64_t stride = 1;
    int64_t strides[NN_MAX_RANK];
    for (int a = x->rank - 1; a >= 0; a--) {
      strides[a] = stride;
      stride *= x->dims[a];
    }
    for (int a = 0; a < k; a++) {
      int l = lab[a];
      if (l < 0)
        l = 52 + (ell_max - e) + j++;
      int64_t d = x->dims[a];
      if (d != 1) {
        if (p->dim[l] >= 0 && p->dim[l] != 1 && p->dim[l] != d) {
          st = nn_fail(c, NN_ERR_SHAPE, "label '%c' has sizes %lld and %lld",
                       l < 26 ? 'a' + l : l < 52 ? 'A' + l - 26 : '.', (long long)p->dim[l],
                       (long long)d);
          goto fail;
        }
        p->stride[(size_t)i * EINSUM_MAX_LABELS + (size_t)l] += strides[a];
        p->dim[l] = d;
      } else if (p->dim[l] < 0) {
        p->dim[l] = 1;
      }
      /* implicit mode sums a label repeated within a term too (trace) */
      count[l]++;
    }
    pos = end + 1;
  }
  /* a label of size 1 in one operand and size d in another broadcasts: the
   * size-1 operand has no stride for it, which the += above already gives */

  /* output labels */
  bool in_out[EINSUM_MAX_LABELS] = {false};
  if (arrow) {
    const char *o = arrow + 2;
    size_t olen = strlen(o);
    bool dots = false;
    for (size_t i = 0; i < olen; i++) {
      if (o[i] == '.') {
        if (i + 2 >= olen || o[i + 1] != '.' || o[i + 2] != '.' || dots) {
          st = nn_fail(c, NN_ERR_INVALID_MODEL, "malformed output in '%s'", eq_raw);
          goto fail;
        }
        dots = true;
        i += 2;
        for (int j = 0; j < ell_max; j++) {
          if (p->n_out >= NN_MAX_RANK) {
            st = nn_fail(c, NN_ERR_LIMIT, "output rank too large");
            goto fail;
          }
          p->out_lab[p->n_out++] = 52 + j;
          in_out[52 + j] = true;
        }
      } else {
        int l = einsum_letter(o[i]);
        if (l < 0 || p->dim[l] < 0 || in_out[l] || p->n_out >= NN_MAX_RANK) {
          st = nn_fail(c, NN_ERR_INVALID_MODEL, "bad output label '%c' in '%s'", o[i], eq_raw);
          goto fail;
        }
        p->out_lab[p->n_out++] = l;
        in_out[l] = true;
      }
    }
  } else {
    for (int j = 0; j < ell_max; j++) {
      p->out_lab[p->n_out++] = 52 + j;
      in_out[52 + j] = true;
    }
    /* implicit mode: labels seen exactly once, in ASCII order (upper first) */
    for (int pass = 0; pass < 2; pass++)
      for (int l = pass == 0 ? 26 : 0; l < (pass == 0 ? 52 : 26); l++)
        if (count[l] == 1) {
          if (p->n_out >= NN_MAX_RANK) {
            st = nn_fail(c, NN_ERR_LIMIT, "output rank too large");
            goto fail;
          }
          p->out_lab[p->n_out++] = l;
          in_out[l] = true;
        }
  }
  for (int l = 0; l < EINSUM_MAX_LABELS; l++)
    if (p->dim[l] >= 0 && !in_out[l])
      p->sum_lab[p->n_sum++] = l;

  int64_t od[NN_MAX_RANK];
  for (int i = 0; i < p->n_out; i++)
    od[i] = p->dim[p->out_lab[i]];
  if ((st = nn_set_output(c, n->y[0], dt, p->n_out, od)) != NN_OK)
    goto fail;
  n->priv = p;
  return NN_OK;
fail:
  nn_free(p);
  return st;
}

typedef struct einsum_job {
  const einsum_params *p;
  nn_node *n;
} einsum_job;

static void einsum_range(void *arg, int64_t begin, int64_t end) {
  einsum_job *job = arg;
  const einsum_params *p = job->p;
  nn_node *n = job->n;
  nn_dtype dt = n->y[0]->dtype;
  int64_t sum_total = 1;
  for (int s = 0; s < p->n_sum; s++)
    sum_total *= p->dim[p->sum_lab[s]];
  for (int64_t o = begin; o < end; o++) {
    int64_t base[EINSUM_MAX_OPERANDS];
    int64_t rem = o;
    for (int i = 0; i < p->n_in; i++)
      base[i] = 0;
    for (int a = p->n_out - 1; a >= 0; a--) {
      int l = p->out_lab[a];
      int64_t idx = rem % p->dim[l];
      rem /= p->dim[l];
      for (int i = 0; i < p->n_in; i++)
        base[i] += idx * p->stride[(size_t)i * EINSUM_MAX_LABELS + (size_t)l];
    }
    int64_t cnt[EINSUM_MAX_LABELS] = {0};
    int64_t off[EINSUM_MAX_OPERANDS];
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
      int64_t s1 = p->n_in == 2 ? p->stride[EINSUM_MAX_LABELS + (size_t)ll] : 0;
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
            off[i] += p->stride[(size_t)i * EINSUM_MAX_LABELS + (size_t)l];
          if (++cnt[ax] < p->dim[l])
            break;
          for (int i = 0; i < p->n_in; i++)
            off[i] -= p->dim[l] * p->stride[(size_t)i * EINSUM_MAX_LABELS + (size_t)l];
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
          off[i] += p->stride[(size_t)i * EINSUM_MAX_LABELS + (size_t)l];
        if (++cnt[a] < p->dim[l])
          break;
        for (int i = 0; i < p->n_in; i++)
          off[i] -= p->dim[l] * p->stride[(size_t)i * EINSUM_MAX_LABELS + (size_t)l];
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
  const einsum_params *p = n->priv;
  einsum_job job = {p, n};
  int64_t work = 1;
  for (int s = 0; s < p->n_sum; s++)
    work *= p->dim[p->sum_lab[s]];
  int64_t grain = work > 4096 ? 1 : 4096 / (work > 0 ? work : 1);
  nn_parallel_for(c, n->y[0]->numel, grain, einsum_range, &job);
  return NN_OK;
}

/* ---- Det: LU with partial pivoting, in double ---------------------------------- */

static nn_status det_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (!ku_is_real(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return nn_fail(c, NN_ERR_SHAPE, "input must be (..., M, M)");
  int64_t m = x->dims[x->rank - 1];
  size_t ws;
  if (nn_mul_overflow_size((size_t)m * (size_t)(m ? m : 1), sizeof(double), &ws))
    return nn_fail(c, NN_ERR_LIMIT, "matrix too large");
  n->ws_bytes = ws;
  return nn_set_output(c, n->y[0], x->dtype, x->rank - 2, x->dims);
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
