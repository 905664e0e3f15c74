/* select.c - the select family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_select[], collected by ops/registry.c),
 * and the selections that size their outputs (select.h). */
#include <string.h>

#include "ops/inputs.h"
#include "ops/select.h"

static nn_value *out(const nn_node *n, int i) { return nn_op_out(n, i); }

/* Every numeric dtype and bool: what nn_value_get_double reads. */
static bool readable(nn_dtype dt) {
  return nn_dtype_is_int(dt) || nn_dtype_is_float(dt) || dt == NN_DTYPE_BOOL;
}

/* Three-way compare of elements a and b of one tensor; NaN sorts last and
 * equals NaN, as numpy's unique does. */
static int sel_cmp_elem(const nn_value *x, int64_t a, int64_t b) {
  if (nn_dtype_is_float(x->dtype)) {
    double va = nn_value_get_double(x, a), vb = nn_value_get_double(x, b);
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

/* ---- Unique -------------------------------------------------------------------- */

static int uniq_cmp_slice(const nn_unique_params *p, const nn_value *x, int64_t a, int64_t b) {
  for (int64_t o = 0; o < p->outer; o++)
    for (int64_t i = 0; i < p->inner; i++) {
      int r = sel_cmp_elem(x, (o * p->K + a) * p->inner + i, (o * p->K + b) * p->inner + i);
      if (r)
        return r;
    }
  return 0;
}

/* perm sorted by slice value, then index (heap sort: in place, no allocation) */
static bool uniq_before(const nn_unique_params *p, const nn_value *x, int64_t a, int64_t b) {
  int r = uniq_cmp_slice(p, x, a, b);
  return r < 0 || (r == 0 && a < b);
}

static void uniq_sift(const nn_unique_params *p, const nn_value *x, int64_t *v, int64_t r,
                      int64_t n, const int64_t *key) {
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

static void uniq_sort(const nn_unique_params *p, const nn_value *x, int64_t *v, int64_t n,
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

int64_t nn_unique_compute(const nn_unique_params *p, const nn_value *x, int64_t *w, nn_node *n) {
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
  nn_value *Y = n->y[0], *I = out(n, 1), *INV = out(n, 2), *C = out(n, 3);
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

nn_status nn_unique_params_init(nn_ctx *c, const nn_node *n, nn_unique_params *p) {
  const nn_value *x = n->x[0];
  memset(p, 0, sizeof *p);
  int64_t so = nn_attr_int(n, "sorted", 1);
  if (so != 0 && so != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported sorted %lld", (long long)so);
  p->sorted = so;
  p->axis = -1;
  if (nn_attr_get(n, "axis")) {
    if (!nn_norm_axis(nn_attr_int(n, "axis", 0), x->rank, &p->axis))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "axis out of range for rank %d", x->rank);
    p->outer = nn_dims_numel(p->axis, x->dims);
    p->K = x->dims[p->axis];
    p->inner = nn_dims_numel(x->rank - p->axis - 1, x->dims + p->axis + 1);
  } else {
    p->outer = p->inner = 1;
    p->K = x->numel;
  }
  return NN_OK;
}

/* The input's value decides the output shape: it is a shape input, known
 * here unless an unknown-valued input slipped through. */
static nn_status select_input(nn_ctx *c, const nn_value *x) {
  if (!readable(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (!x->data)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "the input value decides the output shape but is not "
                   "known when planning");
  return NN_OK;
}

static nn_status uniq_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = select_input(c, x);
  if (st != NN_OK)
    return st;
  nn_unique_params p;
  if ((st = nn_unique_params_init(c, n, &p)) != NN_OK)
    return st;
  size_t ws;
  if (nn_mul_overflow_size((size_t)p.K, 4 * sizeof(int64_t), &ws))
    return nn_fail(c, NN_ERR_LIMIT, "input too large");
  int64_t *w = nn_malloc(ws ? ws : 1);
  if (!w)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  /* empty slices (inner or outer 0) all compare equal: one group */
  int64_t U = nn_unique_compute(&p, x, w, NULL);
  nn_free(w);
  int64_t yd[NN_MAX_RANK];
  if (p.axis >= 0) {
    memcpy(yd, x->dims, sizeof(int64_t) * (size_t)x->rank);
    yd[p.axis] = U;
    st = nn_set_output(c, n->y[0], x->dtype, x->rank, yd);
  } else {
    st = nn_set_output(c, n->y[0], x->dtype, 1, &U);
  }
  /* indices, inverse_indices, counts */
  if (st == NN_OK)
    st = nn_set_output(c, out(n, 1), NN_DTYPE_INT64, 1, &U);
  if (st == NN_OK)
    st = nn_set_output(c, out(n, 2), NN_DTYPE_INT64, 1, &p.K);
  if (st == NN_OK)
    st = nn_set_output(c, out(n, 3), NN_DTYPE_INT64, 1, &U);
  return st;
}

/* ---- NonZero ---------------------------------------------------------------------- */

int64_t nn_nonzero_count(const nn_value *x) {
  int64_t cnt = 0;
  for (int64_t i = 0; i < x->numel; i++)
    cnt += nn_value_get_double(x, i) != 0.0;
  return cnt;
}

static nn_status nz_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = select_input(c, x);
  if (st != NN_OK)
    return st;
  /* a scalar counts as a 1-D tensor of one element (numpy's nonzero) */
  int64_t od[2] = {x->rank > 0 ? x->rank : 1, nn_nonzero_count(x)};
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 2, od);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference: the selection itself, run on the known input. */
const nn_op_def nn_ops_select[] = {
  {.name = "Unique", .versions = {11}, .shape_inputs = 1u << 0, .infer = uniq_infer},
  {.name = "NonZero", .versions = {9, 13}, .shape_inputs = 1u << 0, .infer = nz_infer},
  {0},
};
