/* transform.c - the element-moving ops' parameters (transform.h) and their shape and
 * dtype inference (nn_ops_transform[], collected by ops/registry.c). */
#include <string.h>

#include "ops/inputs.h"
#include "ops/transform.h"

static const nn_value *input(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }

/* ---- Transpose, Concat, Split ----------------------------------------------------------- */

nn_status nn_transpose_perm(nn_ctx *c, const nn_node *n, int rank, int *perm) {
  int cnt = 0;
  const int64_t *pa = nn_attr_ints(n, "perm", &cnt);
  if (!pa) {
    for (int i = 0; i < rank; i++)
      perm[i] = rank - 1 - i;
    return NN_OK;
  }
  if (cnt != rank)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "perm has %d entries for an input of rank %d", cnt,
                   rank);
  bool seen[NN_MAX_RANK] = {false};
  for (int i = 0; i < rank; i++) {
    if (pa[i] < 0 || pa[i] >= rank || seen[pa[i]])
      return nn_fail(c, NN_ERR_INVALID_MODEL, "perm is not a permutation of 0..%d", rank - 1);
    seen[pa[i]] = true;
    perm[i] = (int)pa[i];
  }
  return NN_OK;
}

static nn_status axis_of(nn_ctx *c, const nn_node *n, int rank, int64_t dflt, int *axis) {
  int64_t a = nn_attr_int(n, "axis", dflt);
  if (!nn_norm_axis(a, rank, axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d", (long long)a,
                   rank);
  return NN_OK;
}

nn_status nn_concat_axis(nn_ctx *c, const nn_node *n, int rank, int *axis) {
  if (n->version >= 4 && !nn_attr_get(n, "axis"))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "attribute 'axis' is required");
  return axis_of(c, n, rank, 1, axis);
}

nn_status nn_split_axis(nn_ctx *c, const nn_node *n, int rank, int *axis) {
  return axis_of(c, n, rank, 0, axis);
}

/* Output i's length along the axis: the split input (from opset 13; opset 1
 * also takes it as an optional second input), else the split attribute
 * (before 13), else num_outputs chunks (18, the last one shorter), else
 * equal parts. */
nn_status nn_split_sizes(nn_ctx *c, const nn_node *n, int64_t dim, int64_t *sizes) {
  int no = n->n_out, cnt = 0;
  const nn_value *sv = input(n, 1);
  bool from_input = n->version >= 13 || (n->version < 2 && sv);
  if (from_input && sv) {
    if (!sv->data)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "input 'split' must be known when the model is prepared");
    if (!nn_dtype_is_int(sv->dtype) || sv->rank > 1)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input 'split' must be a 1-D integer tensor");
    if (sv->numel != no)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "split has %lld entries for %d outputs",
                     (long long)sv->numel, no);
    for (int i = 0; i < no; i++)
      sizes[i] = nn_value_get_int(sv, i);
    cnt = no;
  } else if (!from_input) {
    const int64_t *a = nn_attr_ints(n, "split", &cnt);
    if (a) {
      if (cnt != no)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "split has %d entries for %d outputs", cnt, no);
      memcpy(sizes, a, (size_t)cnt * sizeof *sizes);
    }
  }
  if (cnt) {
    int64_t sum = 0;
    for (int i = 0; i < no; i++) {
      if (sizes[i] < 0)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "split[%d] = %lld is negative", i, (long long)sizes[i]);
      sum += sizes[i];
      if (sum > dim)
        break;
    }
    if (sum != dim)
      return nn_fail(c, NN_ERR_SHAPE, "split sizes do not add up to the axis length %lld",
                     (long long)dim);
    return NN_OK;
  }
  const nn_attr *na = n->version >= 18 ? nn_attr_get(n, "num_outputs") : NULL;
  if (na) {
    if (na->i != no)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "num_outputs = %lld but the node has %d outputs",
                     (long long)na->i, no);
    int64_t chunk = (dim + no - 1) / no;
    for (int i = 0; i < no; i++) {
      int64_t left = dim - chunk * i;
      sizes[i] = left < chunk ? left : chunk;
      if (sizes[i] < 0)
        return nn_fail(c, NN_ERR_SHAPE, "cannot split %lld into %d chunks of %lld", (long long)dim,
                       no, (long long)chunk);
    }
    return NN_OK;
  }
  if (dim % no != 0)
    return nn_fail(c, NN_ERR_SHAPE, "axis length %lld does not split evenly into %d outputs",
                   (long long)dim, no);
  for (int i = 0; i < no; i++)
    sizes[i] = dim / no;
  return NN_OK;
}

/* ---- Slice ------------------------------------------------------------------------------ */

/* Clamp one axis the way ONNX defines it; the element count. */
static int64_t slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  uint64_t span, ustep;
  if (step > 0) {
    start = start < 0 ? 0 : start > dim ? dim : start;
    end = end < 0 ? 0 : end > dim ? dim : end;
    *first = start;
    if (end <= start)
      return 0;
    span = (uint64_t)(end - start);
    ustep = (uint64_t)step;
  } else {
    start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
    end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
    *first = start;
    if (start <= end)
      return 0;
    span = (uint64_t)(start - end);
    ustep = (uint64_t)0 - (uint64_t)step;
  }
  return (int64_t)(span / ustep + (span % ustep != 0));
}

nn_status nn_slice_params_init(nn_ctx *c, const nn_node *n, nn_slice_params *p) {
  const nn_value *x = input(n, 0);
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 is missing");
  int r = x->rank;
  int64_t starts[NN_MAX_RANK], ends[NN_MAX_RANK], axes[NN_MAX_RANK], steps[NN_MAX_RANK];
  int ns = 0, ne = 0, na = -1, nst = -1;
  nn_status st;
  if (n->version < 10) {
    const int64_t *a = nn_attr_ints(n, "starts", &ns);
    const int64_t *b = nn_attr_ints(n, "ends", &ne);
    if (ns > NN_MAX_RANK || ne > NN_MAX_RANK)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "starts/ends have more entries than the rank");
    if (a)
      memcpy(starts, a, (size_t)ns * sizeof *a);
    if (b)
      memcpy(ends, b, (size_t)ne * sizeof *b);
    int cnt;
    const int64_t *ax = nn_attr_ints(n, "axes", &cnt);
    if (ax) {
      if (cnt > NN_MAX_RANK)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "too many axes");
      memcpy(axes, ax, (size_t)cnt * sizeof *ax);
      na = cnt;
    }
  } else {
    if ((st = nn_op_ints(c, input(n, 1), "starts", starts, NN_MAX_RANK, &ns)) != NN_OK ||
        (st = nn_op_ints(c, input(n, 2), "ends", ends, NN_MAX_RANK, &ne)) != NN_OK)
      return st;
    if (input(n, 3) && (st = nn_op_ints(c, input(n, 3), "axes", axes, NN_MAX_RANK, &na)) != NN_OK)
      return st;
    if (input(n, 4) && (st = nn_op_ints(c, input(n, 4), "steps", steps, NN_MAX_RANK, &nst)) != NN_OK)
      return st;
  }
  if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "starts, ends, axes and steps differ in length");
  if (ns > r)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "%d slice entries for an input of rank %d", ns, r);
  int ax[NN_MAX_RANK];
  if (na < 0) {
    for (int i = 0; i < ns; i++)
      ax[i] = i;
  } else if ((st = nn_op_norm_axes(c, axes, ns, r, ax, "axes")) != NN_OK) {
    return st;
  }
  int64_t b[NN_MAX_RANK], e[NN_MAX_RANK];
  p->rank = r;
  for (int d = 0; d < r; d++) {
    b[d] = 0;
    e[d] = x->dims[d];
    p->step[d] = 1;
  }
  for (int i = 0; i < ns; i++) {
    int64_t step = nst >= 0 ? steps[i] : 1;
    if (step == 0)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "step of axis %d is 0", ax[i]);
    b[ax[i]] = starts[i];
    e[ax[i]] = ends[i];
    p->step[ax[i]] = step;
  }
  for (int d = 0; d < r; d++)
    p->count[d] = slice_axis(x->dims[d], b[d], e[d], p->step[d], &p->first[d]);
  return NN_OK;
}

/* ---- Pad -------------------------------------------------------------------------------- */

nn_status nn_pad_params_init(nn_ctx *c, const nn_node *n, nn_pad_params *p) {
  const nn_value *x = input(n, 0);
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 is missing");
  memset(p, 0, sizeof *p);
  int r = x->rank;
  p->rank = r;
  const char *ms = nn_attr_string(n, "mode", "constant");
  if (strcmp(ms, "constant") == 0)
    p->mode = NN_PAD_CONSTANT;
  else if (strcmp(ms, "reflect") == 0)
    p->mode = NN_PAD_REFLECT;
  else if (strcmp(ms, "edge") == 0)
    p->mode = NN_PAD_EDGE;
  else if (strcmp(ms, "wrap") == 0)
    p->mode = NN_PAD_WRAP;
  else
    return nn_fail(c, NN_ERR_UNSUPPORTED, "mode '%s' is not supported", ms);

  int64_t raw[2 * NN_MAX_RANK], axes_v[NN_MAX_RANK];
  int np = 0, na = -1;
  nn_status st;
  if (n->version < 11) {
    const int64_t *a = nn_attr_ints(n, n->version < 2 ? "paddings" : "pads", &np);
    if (!a && n->version < 2)
      a = nn_attr_ints(n, "pads", &np);
    if (np > 2 * NN_MAX_RANK)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "too many pads");
    if (a)
      memcpy(raw, a, (size_t)np * sizeof *a);
    p->value = nn_attr_float(n, "value", 0.0f);
  } else {
    if ((st = nn_op_ints(c, input(n, 1), "pads", raw, 2 * NN_MAX_RANK, &np)) != NN_OK)
      return st;
    if (n->version >= 18 && input(n, 3) &&
        (st = nn_op_ints(c, input(n, 3), "axes", axes_v, NN_MAX_RANK, &na)) != NN_OK)
      return st;
    const nn_value *cv = input(n, 2);
    if (cv && cv->dtype != x->dtype)
      return nn_fail(c, NN_ERR_DTYPE, "constant_value is %s, data is %s", nn_dtype_name(cv->dtype),
                     nn_dtype_name(x->dtype));
    if (cv && cv->numel > 1)
      return nn_fail(c, NN_ERR_SHAPE, "constant_value must be a scalar");
    p->value_input = cv != NULL;
  }
  int ax[NN_MAX_RANK], nax = na >= 0 ? na : r;
  if (na >= 0) {
    if ((st = nn_op_norm_axes(c, axes_v, na, r, ax, "axes")) != NN_OK)
      return st;
  } else {
    for (int i = 0; i < r; i++)
      ax[i] = i;
  }
  if (np != 2 * nax)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "pads has %d values, expected %d", np, 2 * nax);
  for (int i = 0; i < nax; i++) {
    p->begin[ax[i]] = raw[i];
    p->end[ax[i]] = raw[i + nax];
  }
  for (int d = 0; d < r; d++) {
    int64_t t;
    if (__builtin_add_overflow(x->dims[d], p->begin[d], &t) ||
        __builtin_add_overflow(t, p->end[d], &p->out[d]) || p->out[d] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "pads of axis %d give a negative or huge size", d);
    if (p->mode != NN_PAD_CONSTANT && x->dims[d] == 0 && p->out[d] > 0)
      return nn_fail(c, NN_ERR_SHAPE, "cannot pad the empty axis %d in mode '%s'", d, ms);
  }
  return NN_OK;
}

/* ---- DepthToSpace / SpaceToDepth -------------------------------------------------------- */

nn_status nn_d2s_params_init(nn_ctx *c, const nn_node *n, nn_d2s_params *p) {
  const nn_value *x = input(n, 0);
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 0 is missing");
  memset(p, 0, sizeof *p);
  if (x->rank != 4)
    return nn_fail(c, NN_ERR_SHAPE, "input must be 4-D, got rank %d", x->rank);
  int64_t b = nn_attr_int(n, "blocksize", 0);
  if (b <= 0 || b > INT32_MAX)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "blocksize must be positive");
  p->block = b;
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  if (strcmp(n->op_type, "DepthToSpace") == 0) {
    const char *mode = n->version >= 11 ? nn_attr_string(n, "mode", "DCR") : "DCR";
    p->crd = strcmp(mode, "CRD") == 0;
    if (!p->crd && strcmp(mode, "DCR") != 0)
      return nn_fail(c, NN_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    if (C % (b * b) != 0)
      return nn_fail(c, NN_ERR_SHAPE, "channels (%lld) are not a multiple of blocksize^2",
                     (long long)C);
    int64_t Cp = C / (b * b);
    int64_t out[4] = {N, Cp, H * b, W * b};
    /* the output viewed as [N, C', H, b1, W, b2] */
    int64_t d6[6] = {N, Cp, H, b, W, b};
    /* the input viewed as [N, C', b1, b2, H, W] (CRD) or [N, b1, b2, C', H, W] (DCR) */
    int64_t crd[6] = {C * H * W, b * b * H * W, W, b * H * W, 1, H * W};
    int64_t dcr[6] = {C * H * W, H * W, W, b * Cp * H * W, 1, Cp * H * W};
    memcpy(p->out, out, sizeof out);
    memcpy(p->d6, d6, sizeof d6);
    memcpy(p->s6, p->crd ? crd : dcr, sizeof crd);
    return NN_OK;
  }
  if (H % b != 0 || W % b != 0)
    return nn_fail(c, NN_ERR_SHAPE, "height and width must be multiples of blocksize %lld",
                   (long long)b);
  int64_t Co;
  if (nn_mul_overflow_i64(b, b, &Co) || nn_mul_overflow_i64(C, Co, &Co))
    return nn_fail(c, NN_ERR_LIMIT, "output channels overflow");
  int64_t out[4] = {N, Co, H / b, W / b};
  /* the input viewed as [N, C, H', b1, W', b2]; the output as [N, b1, b2, C, H', W'] */
  int64_t d6[6] = {N, b, b, C, H / b, W / b};
  int64_t s6[6] = {C * H * W, W, 1, H * W, b * W, b};
  memcpy(p->out, out, sizeof out);
  memcpy(p->d6, d6, sizeof d6);
  memcpy(p->s6, s6, sizeof s6);
  return NN_OK;
}

/* ---- shape and dtype inference ------------------------------------------------------------ */

static nn_status transpose_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  int r = x->rank;
  int perm[NN_MAX_RANK];
  if ((st = nn_transpose_perm(c, n, r, perm)) != NN_OK)
    return st;
  int64_t od[NN_MAX_RANK];
  for (int i = 0; i < r; i++)
    od[i] = x->dims[perm[i]];
  return nn_set_output(c, n->y[0], x->dtype, r, od);
}

static nn_status concat_infer(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1 || !n->x[0])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs at least one input");
  nn_value *x0 = n->x[0];
  nn_status st = nn_op_held(c, x0);
  if (st != NN_OK)
    return st;
  int r = x0->rank, axis;
  if (r == 0)
    return nn_fail(c, NN_ERR_SHAPE, "cannot concatenate scalars");
  if ((st = nn_concat_axis(c, n, r, &axis)) != NN_OK)
    return st;
  int64_t od[NN_MAX_RANK];
  memcpy(od, x0->dims, sizeof od);
  od[axis] = 0;
  for (int i = 0; i < n->n_in; i++) {
    nn_value *xi = n->x[i];
    if (!xi)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is missing", i);
    if (xi->dtype != x0->dtype)
      return nn_fail(c, NN_ERR_DTYPE, "input %d is %s, input 0 is %s", i, nn_dtype_name(xi->dtype),
                     nn_dtype_name(x0->dtype));
    if (xi->rank != r)
      return nn_fail(c, NN_ERR_SHAPE, "input %d has rank %d, input 0 has rank %d", i, xi->rank, r);
    for (int d = 0; d < r; d++)
      if (d != axis && xi->dims[d] != x0->dims[d])
        return nn_fail(c, NN_ERR_SHAPE, "input %d has dim %d = %lld, input 0 has %lld", i, d,
                       (long long)xi->dims[d], (long long)x0->dims[d]);
    od[axis] += xi->dims[axis];
  }
  return nn_set_output(c, n->y[0], x0->dtype, r, od);
}

static nn_status split_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  int r = x->rank, axis, no = n->n_out;
  if (no < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs at least one output");
  if ((st = nn_split_axis(c, n, r, &axis)) != NN_OK)
    return st;
  int64_t *sizes = nn_malloc((size_t)no * sizeof *sizes);
  if (!sizes)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  st = nn_split_sizes(c, n, x->dims[axis], sizes);
  for (int i = 0; i < no && st == NN_OK; i++) {
    int64_t od[NN_MAX_RANK];
    memcpy(od, x->dims, sizeof od);
    od[axis] = sizes[i];
    st = nn_set_output(c, n->y[i], x->dtype, r, od);
  }
  nn_free(sizes);
  return st;
}

static nn_status slice_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  nn_slice_params sp;
  if ((st = nn_slice_params_init(c, n, &sp)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, sp.count);
}

static nn_status pad_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  nn_pad_params pp;
  if ((st = nn_pad_params_init(c, n, &pp)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, pp.out);
}

static nn_status tile_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  int r = x->rank, cnt;
  int64_t rep[NN_MAX_RANK], od[NN_MAX_RANK];
  if ((st = nn_op_ints(c, input(n, 1), "repeats", rep, NN_MAX_RANK, &cnt)) != NN_OK)
    return st;
  if (cnt != r)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "repeats has %d values for an input of rank %d", cnt, r);
  for (int d = 0; d < r; d++) {
    if (rep[d] < 0)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "repeats[%d] = %lld is negative", d, (long long)rep[d]);
    if (nn_mul_overflow_i64(x->dims[d], rep[d], &od[d]))
      return nn_fail(c, NN_ERR_LIMIT, "output dimension %d overflows", d);
  }
  return nn_set_output(c, n->y[0], x->dtype, r, od);
}

static nn_status expand_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  int64_t shape[NN_MAX_RANK], od[NN_MAX_RANK];
  int cnt, r;
  if ((st = nn_op_ints(c, input(n, 1), "shape", shape, NN_MAX_RANK, &cnt)) != NN_OK)
    return st;
  for (int i = 0; i < cnt; i++)
    if (shape[i] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "shape[%d] = %lld is negative", i, (long long)shape[i]);
  if (nn_broadcast_shape(x->rank, x->dims, cnt, shape, &r, od) != NN_OK)
    return nn_fail(c, NN_ERR_SHAPE, "input shape does not broadcast to the requested shape");
  return nn_set_output(c, n->y[0], x->dtype, r, od);
}

/* DepthToSpace and SpaceToDepth */
static nn_status d2s_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  nn_d2s_params dp;
  if ((st = nn_d2s_params_init(c, n, &dp)) != NN_OK)
    return st;
  return nn_set_output(c, n->y[0], x->dtype, 4, dp.out);
}

static nn_status trilu_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (x->rank < 2)
    return nn_fail(c, NN_ERR_SHAPE, "input must have rank >= 2, got %d", x->rank);
  const nn_value *k = input(n, 1);
  if (k && (!nn_dtype_is_int(k->dtype) || k->numel != 1))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "k must be an integer scalar");
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

static nn_status ccp_infer(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  int r = x->rank, cnt, na = 0;
  int64_t shape[NN_MAX_RANK];
  if ((st = nn_op_ints(c, input(n, 1), "shape", shape, NN_MAX_RANK, &cnt)) != NN_OK)
    return st;
  const int64_t *axes = nn_attr_ints(n, "axes", &na);
  int ax[NN_MAX_RANK];
  if (axes) {
    if (na > r)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "%d axes for an input of rank %d", na, r);
    if ((st = nn_op_norm_axes(c, axes, na, r, ax, "axes")) != NN_OK)
      return st;
  } else {
    na = r;
    for (int i = 0; i < r; i++)
      ax[i] = i;
  }
  if (cnt != na)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "shape has %d values for %d axes", cnt, na);
  int64_t od[NN_MAX_RANK];
  memcpy(od, x->dims, sizeof od);
  for (int i = 0; i < na; i++) {
    if (shape[i] < 0)
      return nn_fail(c, NN_ERR_SHAPE, "shape[%d] = %lld is negative", i, (long long)shape[i]);
    od[ax[i]] = shape[i];
  }
  return nn_set_output(c, n->y[0], x->dtype, r, od);
}

static nn_status compress_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *cond = input(n, 1);
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (!cond || !cond->data)
    return nn_fail(c, NN_ERR_UNSUPPORTED,
                   "the output shape depends on 'condition', which is not known when the model is prepared");
  if (cond->rank != 1)
    return nn_fail(c, NN_ERR_SHAPE, "condition must be 1-D");
  if (cond->dtype != NN_DTYPE_BOOL)
    return nn_fail(c, NN_ERR_DTYPE, "condition must be bool, got %s", nn_dtype_name(cond->dtype));
  const nn_attr *aa = nn_attr_get(n, "axis");
  int axis = 0;
  int64_t len = x->numel;
  if (aa) {
    if (!nn_norm_axis(aa->i, x->rank, &axis))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "axis %lld is out of range for rank %d",
                     (long long)aa->i, x->rank);
    len = x->dims[axis];
  }
  int64_t nsel = 0;
  for (int64_t i = 0; i < cond->numel; i++) {
    if (!nn_value_get_int(cond, i))
      continue;
    if (i >= len)
      return nn_fail(c, NN_ERR_SHAPE, "condition selects index %lld beyond the axis length %lld",
                     (long long)i, (long long)len);
    nsel++;
  }
  /* without an axis the input is flattened */
  if (!aa)
    return nn_set_output(c, n->y[0], x->dtype, 1, &nsel);
  int64_t od[NN_MAX_RANK];
  memcpy(od, x->dims, sizeof od);
  od[axis] = nsel;
  return nn_set_output(c, n->y[0], x->dtype, x->rank, od);
}

static nn_status revseq_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0], *lens = input(n, 1);
  nn_status st = nn_op_held(c, x);
  if (st != NN_OK)
    return st;
  if (x->rank < 2)
    return nn_fail(c, NN_ERR_SHAPE, "input must have rank >= 2");
  int64_t ba = nn_attr_int(n, "batch_axis", 1), ta = nn_attr_int(n, "time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "batch_axis and time_axis must be 0 and 1 in some order");
  if (!lens || !(lens->dtype == NN_DTYPE_INT64 || lens->dtype == NN_DTYPE_INT32) ||
      lens->rank != 1 || lens->dims[0] != x->dims[ba])
    return nn_fail(c, NN_ERR_SHAPE, "sequence_lens must be a 1-D integer tensor of the batch size");
  return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the CPU kernels (cpu/transform.c) compile the same parameters
 * into their copy plans. */
const nn_op_def nn_ops_transform[] = {
  {.name = "Transpose", .versions = {1}, .infer = transpose_infer},
  {.name = "Concat", .versions = {1, 4, 11}, .infer = concat_infer},
  {.name = "Split", .versions = {1, 2, 11, 13, 18}, .shape_inputs = 1u << 1, .infer = split_infer},
  {.name = "Slice", .versions = {1, 10}, .shape_inputs = 0x1eu, .infer = slice_infer},
  {.name = "Pad", .versions = {1, 2, 11, 18, 19}, .shape_inputs = (1u << 1) | (1u << 3),
   .infer = pad_infer},
  {.name = "Tile", .versions = {6}, .shape_inputs = 1u << 1, .infer = tile_infer},
  {.name = "Expand", .versions = {8}, .shape_inputs = 1u << 1, .infer = expand_infer},
  {.name = "DepthToSpace", .versions = {1, 11}, .infer = d2s_infer},
  {.name = "SpaceToDepth", .versions = {1}, .infer = d2s_infer},
  {.name = "Trilu", .versions = {14}, .flags = NN_OP_ELEMENTWISE, .infer = trilu_infer},
  {.name = "CenterCropPad", .versions = {18}, .shape_inputs = 1u << 1, .infer = ccp_infer},
  {.name = "Compress", .versions = {9, 11}, .shape_inputs = 1u << 1, .infer = compress_infer},
  {.name = "ReverseSequence", .versions = {10}, .infer = revseq_infer},
  {0},
};
