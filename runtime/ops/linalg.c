/* linalg.c - the linalg family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_linalg[], collected by ops/registry.c),
 * and Einsum's equation (linalg.h). */
#include <string.h>

#include "ops/linalg.h"

/* ---- Einsum ------------------------------------------------------------------- */

size_t nn_einsum_size(int n_in) {
  return sizeof(nn_einsum) + sizeof(int64_t) * (size_t)n_in * NN_EINSUM_MAX_LABELS;
}

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

nn_status nn_einsum_parse(nn_ctx *c, const nn_node *n, nn_einsum **out) {
  *out = NULL;
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
  if (n->n_in < 1 || n->n_in > NN_EINSUM_MAX_OPERANDS)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "Einsum with %d operands (1..%d supported)", n->n_in,
                   NN_EINSUM_MAX_OPERANDS);
  for (int i = 0; i < n->n_in; i++)
    if (!n->x[i])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is missing", i);
  for (int i = 0; i < n->n_in; i++) {
    if (n->x[i]->dtype != n->x[0]->dtype)
      return nn_fail(c, NN_ERR_DTYPE, "all inputs must have the same type");
  }

  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : L;
  nn_einsum *p = nn_calloc(1, nn_einsum_size(n->n_in));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->n_in = n->n_in;
  for (int l = 0; l < NN_EINSUM_MAX_LABELS; l++)
    p->dim[l] = -1;
  int count[NN_EINSUM_MAX_LABELS] = {0};
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
        p->stride[(size_t)i * NN_EINSUM_MAX_LABELS + (size_t)l] += strides[a];
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
  bool in_out[NN_EINSUM_MAX_LABELS] = {false};
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
  for (int l = 0; l < NN_EINSUM_MAX_LABELS; l++)
    if (p->dim[l] >= 0 && !in_out[l])
      p->sum_lab[p->n_sum++] = l;

  *out = p;
  return NN_OK;
fail:
  nn_free(p);
  return st;
}

static nn_status einsum_infer(nn_ctx *c, nn_node *n) {
  nn_einsum *p;
  nn_status st = nn_einsum_parse(c, n, &p);
  if (st != NN_OK)
    return st;
  int64_t od[NN_MAX_RANK];
  for (int i = 0; i < p->n_out; i++)
    od[i] = p->dim[p->out_lab[i]];
  st = nn_set_output(c, n->y[0], n->x[0]->dtype, p->n_out, od);
  nn_free(p);
  return st;
}

/* ---- Det ------------------------------------------------------------------------- */

/* The determinants of the trailing (M, M) matrices: the batch dims. */
static nn_status det_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (!nn_dtype_is_float(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(x->dtype));
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return nn_fail(c, NN_ERR_SHAPE, "input must be (..., M, M)");
  return nn_set_output(c, n->y[0], x->dtype, x->rank - 2, x->dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; cpu/linalg.c has the kernels. */
const nn_op_def nn_ops_linalg[] = {
  {.name = "Einsum", .versions = {12}, .infer = einsum_infer},
  {.name = "Det", .versions = {11}, .infer = det_infer},
  {0},
};
