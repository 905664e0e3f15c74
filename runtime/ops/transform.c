/* transform.c - the element-moving ops' parameters (transform.h). */
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

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_transform[] = {
  {.name = "Transpose", .versions = {1}},
  {.name = "Concat", .versions = {1, 4, 11}},
  {.name = "Split", .versions = {1, 2, 11, 13, 18}, .shape_inputs = 1u << 1},
  {.name = "Slice", .versions = {1, 10}, .shape_inputs = 0x1eu},
  {.name = "Pad", .versions = {1, 2, 11, 18, 19}, .shape_inputs = (1u << 1) | (1u << 3)},
  {.name = "Tile", .versions = {6}, .shape_inputs = 1u << 1},
  {.name = "Expand", .versions = {8}, .shape_inputs = 1u << 1},
  {.name = "DepthToSpace", .versions = {1, 11}},
  {.name = "SpaceToDepth", .versions = {1}},
  {.name = "Trilu", .versions = {14}, .flags = NN_OP_ELEMENTWISE},
  {.name = "CenterCropPad", .versions = {18}, .shape_inputs = 1u << 1},
  {.name = "Compress", .versions = {9, 11}, .shape_inputs = 1u << 1},
  {.name = "ReverseSequence", .versions = {10}},
  {0},
};
