/* select.c - CPU kernels of Unique (11) and NonZero (9/13): ops whose output
 * shape is the data itself.
 *
 * Their input is a shape input, so its value is known at prepare (a graph
 * input is snapshotted and the session re-plans when it changes); prepare
 * computes the result size, run recomputes the result into the planned
 * outputs and refuses a size that no longer matches. */
#include "cpu/kernel_util.h"

/* Three-way compare of elements a and b of one tensor; NaN sorts last and
 * equals NaN, as numpy's unique does. */
static int sel_cmp_elem(const nn_value *x, int64_t a, int64_t b) {
  if (ku_is_real(x->dtype)) {
    double va = ku_ldd(x->data, x->dtype, a), vb = ku_ldd(x->data, x->dtype, b);
    bool na = va != va, nb = vb != vb;
    if (na || nb)
      return na == nb ? 0 : na ? 1 : -1;
    return va < vb ? -1 : va > vb;
  }
  if (x->dtype == NN_DTYPE_UINT64) {
    uint64_t va = ((const uint64_t *)x->data)[a], vb = ((const uint64_t *)x->data)[b];
    return va < vb ? -1 : va > vb;
  }
  int64_t va = nn_value_get_int(x, a), vb = nn_value_get_int(x, b);
  return va < vb ? -1 : va > vb;
}

/* ---- Unique --------------------------------------------------------------------
 * The input is viewed as K slices (outer, K, inner) along the axis (K =
 * numel without an axis).  Slices are sorted by value then position, equal
 * neighbours form the groups. */

typedef struct uniq_params {
  bool sorted;
  int64_t outer, K, inner;
  int64_t U;            /* unique slices, planned at prepare */
} uniq_params;

static int uniq_cmp_slice(const uniq_params *p, const nn_value *x, int64_t a, int64_t b) {
  for (int64_t o = 0; o < p->outer; o++)
    for (int64_t i = 0; i < p->inner; i++) {
      int r = sel_cmp_elem(x, (o * p->K + a) * p->inner + i, (o * p->K + b) * p->inner + i);
      if (r)
        return r;
    }
  return 0;
}

/* perm sorted by slice value, then index (heap sort: in place, no allocation) */
static bool uniq_before(const uniq_params *p, const nn_value *x, int64_t a, int64_t b) {
  int r = uniq_cmp_slice(p, x, a, b);
  return r < 0 || (r == 0 && a < b);
}

static void uniq_sift(const uniq_params *p, const nn_value *x, int64_t *v, int64_t r, int64_t n,
                      const int64_t *key) {
  for (;;) {
    int64_t ch = 2 * r + 1;
    if (ch >= n)
      break;
    /* key != NULL: order by key[] (first occurrences), else by slice value */
    bool right = ch + 1 < n && (key ? key[v[ch]] < key[v[ch + 1]]
                                    : uniq_before(p, x, v[ch], v[ch + 1]));
    if (right)
      ch++;
    bool less = key ? key[v[r]] < key[v[ch]] : uniq_before(p, x, v[r], v[ch]);
    if (!less)
      break;
    int64_t t = v[r];
    v[r] = v[ch];
    v[ch] = t;
    r = ch;
  }
}

static void uniq_sort(const uniq_params *p, const nn_value *x, int64_t *v, int64_t n,
                      const int64_t *key) {
  for (int64_t i = n / 2 - 1; i >= 0; i--)
    uniq_sift(p, x, v, i, n, key);
  for (int64_t end = n - 1; end > 0; end--) {
    int64_t t = v[0];
    v[0] = v[end];
    v[end] = t;
    uniq_sift(p, x, v, 0, end, key);
  }
}

/* Work arrays of 4K int64: perm, group of each slice, first index and count
 * of each group.  Returns the group count; fills the outputs when given. */
static int64_t uniq_compute(const uniq_params *p, const nn_value *x, int64_t *w, nn_node *n) {
  int64_t K = p->K;
  int64_t *perm = w, *grp = w + K, *first = w + 2 * K, *count = w + 3 * K;
  for (int64_t k = 0; k < K; k++)
    perm[k] = k;
  uniq_sort(p, x, perm, K, NULL);
  int64_t U = 0;
  for (int64_t j = 0; j < K; j++) {
    if (j == 0 || uniq_cmp_slice(p, x, perm[j - 1], perm[j]) != 0) {
      first[U] = perm[j];
      count[U++] = 0;
    }
    grp[perm[j]] = U - 1;
    count[U - 1]++;
  }
  if (!n)
    return U;
  /* order[u]: the group shown at output position u (perm is free again);
   * unsorted output lists groups by first occurrence */
  int64_t *order = perm;
  for (int64_t u = 0; u < U; u++)
    order[u] = u;
  if (!p->sorted)
    uniq_sort(p, x, order, U, first);
  nn_value *Y = n->y[0], *I = ku_out(n, 1), *INV = ku_out(n, 2), *C = ku_out(n, 3);
  size_t es = nn_dtype_size(x->dtype);
  for (int64_t u = 0; u < U; u++) {
    int64_t g = order[u], k = first[g];
    for (int64_t o = 0; o < p->outer; o++)
      memcpy((char *)Y->data + (size_t)((o * U + u) * p->inner) * es,
             (const char *)x->data + (size_t)((o * K + k) * p->inner) * es,
             (size_t)p->inner * es);
    if (I)
      ((int64_t *)I->data)[u] = k;
    if (C)
      ((int64_t *)C->data)[u] = count[g];
  }
  if (INV) {
    /* group -> output position, in `count` now that the counts are written */
    for (int64_t u = 0; u < U; u++)
      count[order[u]] = u;
    for (int64_t k = 0; k < K; k++)
      ((int64_t *)INV->data)[k] = count[grp[k]];
  }
  return U;
}

static nn_status uniq_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (!ku_dtype_storable(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (!x->data)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "the input value decides the output shape but is not "
                   "known when planning");
  uniq_params p;
  memset(&p, 0, sizeof p);
  int64_t so = nn_attr_int(n, "sorted", 1);
  if (so != 0 && so != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported sorted %lld", (long long)so);
  p.sorted = so;
  const nn_attr *axa = nn_attr_get(n, "axis");
  int ax = -1;
  if (axa) {
    if (!nn_norm_axis(nn_attr_int(n, "axis", 0), x->rank, &ax))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "axis out of range for rank %d", x->rank);
    p.outer = nn_dims_numel(ax, x->dims);
    p.K = x->dims[ax];
    p.inner = nn_dims_numel(x->rank - ax - 1, x->dims + ax + 1);
  } else {
    p.outer = p.inner = 1;
    p.K = x->numel;
  }
  size_t ws;
  if (nn_mul_overflow_size((size_t)p.K, 4 * sizeof(int64_t), &ws))
    return nn_fail(c, NN_ERR_LIMIT, "input too large");
  int64_t *w = nn_malloc(ws ? ws : 1);
  if (!w)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  /* empty slices (inner or outer 0) all compare equal: one group */
  p.U = uniq_compute(&p, x, w, NULL);
  nn_free(w);
  n->ws_bytes = ws;
  int64_t yd[NN_MAX_RANK];
  nn_status st;
  if (ax >= 0) {
    memcpy(yd, x->dims, sizeof(int64_t) * (size_t)x->rank);
    yd[ax] = p.U;
    st = nn_set_output(c, n->y[0], x->dtype, x->rank, yd);
  } else {
    st = nn_set_output(c, n->y[0], x->dtype, 1, &p.U);
  }
  if (st == NN_OK && ku_out(n, 1))
    st = nn_set_output(c, n->y[1], NN_DTYPE_INT64, 1, &p.U);
  if (st == NN_OK && ku_out(n, 2))
    st = nn_set_output(c, n->y[2], NN_DTYPE_INT64, 1, &p.K);
  if (st == NN_OK && ku_out(n, 3))
    st = nn_set_output(c, n->y[3], NN_DTYPE_INT64, 1, &p.U);
  if (st != NN_OK)
    return st;
  uniq_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static nn_status uniq_run(nn_ctx *c, nn_node *n) {
  const uniq_params *p = n->priv;
  int64_t U = uniq_compute(p, n->x[0], n->ws, NULL);
  if (U != p->U)
    return nn_fail(c, NN_ERR_RUNTIME, "%lld unique values but the plan holds %lld: the input "
                   "changed since prepare", (long long)U, (long long)p->U);
  uniq_compute(p, n->x[0], n->ws, n);
  return NN_OK;
}

/* ---- NonZero ---------------------------------------------------------------------- */

static int64_t nz_count(const nn_value *x) {
  int64_t cnt = 0;
  for (int64_t i = 0; i < x->numel; i++)
    cnt += ku_ldd(x->data, x->dtype, i) != 0.0;
  return cnt;
}

static nn_status nz_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  if (!ku_dtype_storable(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (!x->data)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "the input value decides the output shape but is not "
                   "known when planning");
  /* a scalar counts as a 1-D tensor of one element (numpy's nonzero) */
  int64_t od[2] = {x->rank > 0 ? x->rank : 1, nz_count(x)};
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 2, od);
}

static nn_status nz_run(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *y = n->y[0];
  int64_t cnt = y->dims[1], rank = y->dims[0], k = 0;
  if (nz_count(x) != cnt)
    return nn_fail(c, NN_ERR_RUNTIME, "the input changed since prepare");
  int64_t *out = y->data;
  for (int64_t i = 0; i < x->numel; i++) {
    if (ku_ldd(x->data, x->dtype, i) == 0.0)
      continue;
    int64_t rem = i;
    for (int64_t a = rank - 1; a >= 0; a--) {
      int64_t d = x->rank > 0 ? x->dims[a] : 1;
      out[a * cnt + k] = rem % d;
      rem /= d;
    }
    k++;
  }
  return NN_OK;
}

const nn_kernel nn_kernels_select[] = {
  {.name = "Unique", .prepare = uniq_prepare, .run = uniq_run},
  {.name = "NonZero", .prepare = nz_prepare, .run = nz_run},
  {0},
};
