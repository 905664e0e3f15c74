/* transform.c - ops that move elements to new positions: Transpose, Concat,
 * Split, Slice, Pad, Tile, Expand, DepthToSpace, SpaceToDepth, Trilu,
 * CenterCropPad, Compress, ReverseSequence.
 *
 * Every kernel works on element size, never on type.  The op layer
 * (ops/transform.c) infers the output shapes; prepare compiles the
 * index arithmetic into n->priv (a shp_copy walk or a shp_map gather, see
 * shp_common.h) so that run is a sequence of memcpy calls over the longest
 * contiguous runs the layouts allow.
 *
 * Negative axes are accepted in every opset: the spec only allows them from
 * opset 11, but older exporters (PyTorch at opset 6-9) emitted them and
 * other runtimes take them. */
#include "cpu/shp_common.h"
#include "ops/transform.h"

/* ---- Transpose ------------------------------------------------------------- */

static nn_status transpose_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int r = x->rank;
  int perm[NN_MAX_RANK];
  nn_status st = nn_transpose_perm(c, n, r, perm);
  if (st != NN_OK)
    return st;
  int64_t istr[NN_MAX_RANK], ss[NN_MAX_RANK];
  shp_strides(r, x->dims, istr);
  for (int i = 0; i < r; i++)
    ss[i] = istr[perm[i]];
  shp_copy *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  shp_copy_plan(p, nn_dtype_size(x->dtype), r, n->y[0]->dims, ss, 0);
  return NN_OK;
}

/* Shared by every op whose priv is one shp_copy from input 0 to output 0. */
static nn_status copy_run(nn_ctx *c, nn_node *n) {
  shp_copy_run(c, n->priv, n->y[0]->data, n->x[0]->data);
  return NN_OK;
}

/* Shared by every op whose priv is one shp_map from input 0 to output 0. */
static nn_status map_run(nn_ctx *c, nn_node *n) {
  shp_map_run(c, n->priv, n->y[0]->data, n->x[0]->data);
  return NN_OK;
}

/* Build and attach a shp_map gather: maps[d] holds odims[d] source indices
 * (or -1 for the constant) for every output dim; a rank-0 tensor is handled
 * as shape [1]. */
static nn_status map_attach(nn_ctx *c, nn_node *n, size_t es, int rank, const int64_t *odims,
                            const int64_t *idims, int64_t *const *maps, const void *cval,
                            shp_map **out) {
  static const int64_t one = 1, zero = 0;
  int64_t *const scalar_map[1] = {(int64_t *)&zero};
  if (rank == 0) {
    rank = 1;
    odims = &one;
    idims = &one;
    maps = scalar_map;
  }
  int64_t nseg = shp_map_count_segs(maps[rank - 1], odims[rank - 1]);
  shp_map *m = nn_malloc(shp_map_bytes(rank, odims, nseg));
  if (!m)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = m;
  shp_map_init(m, es, rank, odims, idims, maps[rank - 1], cval);
  int64_t *mm = shp_map_maps(m);
  for (int d = 0; d + 1 < rank; d++)
    memcpy(mm + m->map_off[d], maps[d], (size_t)odims[d] * sizeof(int64_t));
  if (out)
    *out = m;
  return NN_OK;
}

/* Scratch for the per-dim maps during prepare: one block, freed by the
 * caller.  Called after nn_set_output accepted odims.  An empty output may
 * still have huge other dims ([0, 2^31] from a hostile Tile/Pad/Expand):
 * the maps would then be sized by a dim sum that no element count bounds, so
 * odims is zeroed in place and the caller builds an empty map whose run does
 * nothing.  For a non-empty output every dim is >= 1, hence the sum is at
 * most numel + rank, bounded by max_tensor_elems. */
static int64_t *maps_alloc(nn_ctx *c, int rank, int64_t *odims, int64_t **maps) {
  if (nn_dims_numel(rank, odims) == 0)
    for (int d = 0; d < rank; d++)
      odims[d] = 0;
  int64_t total = 0;
  for (int d = 0; d < rank; d++)
    total += odims[d];
  int64_t *buf = nn_malloc((size_t)(total ? total : 1) * sizeof(int64_t));
  if (!buf) {
    nn_fail(c, NN_ERR_NOMEM, "out of memory");
    return NULL;
  }
  int64_t off = 0;
  for (int d = 0; d < rank; d++) {
    maps[d] = buf + off;
    off += odims[d];
  }
  return buf;
}

/* ---- Concat ---------------------------------------------------------------------- */

typedef struct concat_part {
  size_t off;            /* byte offset inside an output row */
  size_t chunk;          /* bytes per outer row */
} concat_part;

typedef struct concat_priv {
  int64_t outer;
  size_t row;            /* output bytes per outer row */
  int n;
  concat_part part[];
} concat_priv;

static nn_status concat_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *y = n->y[0];
  size_t es = nn_dtype_size(y->dtype);
  int r = y->rank, axis;
  nn_status st = nn_concat_axis(c, n, r, &axis);
  if (st != NN_OK)
    return st;
  concat_priv *p = nn_malloc(sizeof *p + (size_t)n->n_in * sizeof(concat_part));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  int64_t inner = nn_dims_numel(r - axis - 1, y->dims + axis + 1);
  p->outer = nn_dims_numel(axis, y->dims);
  p->row = (size_t)(y->dims[axis] * inner) * es;
  p->n = n->n_in;
  size_t off = 0;
  for (int i = 0; i < n->n_in; i++) {
    p->part[i].off = off;
    p->part[i].chunk = (size_t)(n->x[i]->dims[axis] * inner) * es;
    off += p->part[i].chunk;
  }
  return NN_OK;
}

typedef struct concat_job {
  const concat_priv *p;
  nn_node *n;
  int64_t nblk;        /* blocks per output row */
  size_t blk;          /* bytes per block */
} concat_job;

/* Units are (row, block of the row): a channel concat of one image is a
 * single row of megabytes, which one thread used to copy alone. */
static void concat_range(void *arg, int64_t begin, int64_t end) {
  const concat_job *j = arg;
  const concat_priv *p = j->p;
  unsigned char *y = j->n->y[0]->data;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / j->nblk;
    size_t b0 = (size_t)(u % j->nblk) * j->blk, b1 = b0 + j->blk < p->row ? b0 + j->blk : p->row;
    unsigned char *row = y + (size_t)o * p->row;
    for (int i = 0; i < p->n; i++) {
      size_t ch = p->part[i].chunk, s0 = p->part[i].off, s1 = s0 + ch;
      size_t lo = s0 > b0 ? s0 : b0, hi = s1 < b1 ? s1 : b1;
      const unsigned char *src = (const unsigned char *)j->n->x[i]->data + (size_t)o * ch + (lo - s0);
      /* an input the planner placed in the output (NN_FUSE_CONCAT) is there */
      if (lo < hi && src != row + lo)
        memcpy(row + lo, src, hi - lo);
    }
  }
}

static nn_status concat_run(nn_ctx *c, nn_node *n) {
  const concat_priv *p = n->priv;
  if (p->row == 0 || p->outer == 0)
    return NN_OK;
  if (p->outer == 1) {   /* every input already in place: nothing to copy */
    int i = 0;
    while (i < p->n && (const unsigned char *)n->x[i]->data ==
                           (const unsigned char *)n->y[0]->data + p->part[i].off)
      i++;
    if (i == p->n)
      return NN_OK;
  }
  concat_job j = {p, n, 1, p->row};
  int64_t grain = shp_grain_rows(p->row);
  if (p->outer < 2 * (int64_t)nn_parallel_width(c) && p->row >= 2 * (size_t)SHP_GRAIN_BYTES) {
    j.blk = (size_t)SHP_GRAIN_BYTES;
    j.nblk = (int64_t)((p->row + j.blk - 1) / j.blk);
    grain = 1;
  }
  nn_parallel_for(c, p->outer * j.nblk, grain, concat_range, &j);
  return NN_OK;
}

/* ---- Split ------------------------------------------------------------------------- */

typedef struct split_priv {
  int64_t outer;
  size_t row;            /* input bytes per outer row */
  int n;
  concat_part part[];
} split_priv;

static nn_status split_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  size_t es = nn_dtype_size(x->dtype);
  int r = x->rank, axis, no = n->n_out;
  nn_status st = nn_split_axis(c, n, r, &axis);
  if (st != NN_OK)
    return st;
  split_priv *p = nn_malloc(sizeof *p + (size_t)no * sizeof(concat_part));
  int64_t *sizes = nn_malloc((size_t)no * sizeof *sizes);
  if (!p || !sizes) {
    nn_free(p);
    nn_free(sizes);
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  }
  n->priv = p;
  /* an omitted output has no shape to read its length from */
  st = nn_split_sizes(c, n, x->dims[axis], sizes);
  int64_t inner = nn_dims_numel(r - axis - 1, x->dims + axis + 1);
  p->outer = nn_dims_numel(axis, x->dims);
  p->row = (size_t)(x->dims[axis] * inner) * es;
  p->n = no;
  size_t off = 0;
  for (int i = 0; i < no && st == NN_OK; i++) {
    p->part[i].off = off;
    p->part[i].chunk = (size_t)(sizes[i] * inner) * es;
    off += p->part[i].chunk;
  }
  nn_free(sizes);
  return st;
}

typedef struct split_job {
  const split_priv *p;
  nn_node *n;
} split_job;

static void split_range(void *arg, int64_t begin, int64_t end) {
  const split_job *j = arg;
  const split_priv *p = j->p;
  const unsigned char *x = j->n->x[0]->data;
  for (int64_t o = begin; o < end; o++) {
    const unsigned char *row = x + (size_t)o * p->row;
    for (int i = 0; i < p->n; i++) {
      size_t ch = p->part[i].chunk;
      nn_value *y = j->n->y[i];
      if (ch && y)
        memcpy((unsigned char *)y->data + (size_t)o * ch, row + p->part[i].off, ch);
    }
  }
}

static nn_status split_run(nn_ctx *c, nn_node *n) {
  const split_priv *p = n->priv;
  if (p->row == 0 || p->outer == 0)
    return NN_OK;
  split_job j = {p, n};
  nn_parallel_for(c, p->outer, shp_grain_rows(p->row), split_range, &j);
  return NN_OK;
}

/* ---- Slice ---------------------------------------------------------------------------- */

static nn_status slice_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  nn_slice_params sp;
  nn_status st = nn_slice_params_init(c, n, &sp);
  if (st != NN_OK)
    return st;
  int r = x->rank;
  int64_t istr[NN_MAX_RANK], ss[NN_MAX_RANK], off = 0;
  shp_strides(r, x->dims, istr);
  bool empty = false;
  for (int d = 0; d < r; d++) {
    empty = empty || sp.count[d] == 0;
    /* the stride of a one-element axis is never used: keep it in range */
    ss[d] = sp.count[d] > 1 ? istr[d] * sp.step[d] : istr[d];
    off += sp.first[d] * istr[d];
  }
  shp_copy *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  shp_copy_plan(p, nn_dtype_size(x->dtype), r, sp.count, ss, empty ? 0 : off);
  return NN_OK;
}

/* ---- Pad ------------------------------------------------------------------------------- */

/* Source index of virtual coordinate v (v = output index - begin pad). */
static int64_t pad_src(int mode, int64_t v, int64_t d) {
  if (v >= 0 && v < d)
    return v;
  switch (mode) {
  case NN_PAD_EDGE:
    return v < 0 ? 0 : d - 1;
  case NN_PAD_WRAP: {
    int64_t m = v % d;
    return m < 0 ? m + d : m;
  }
  case NN_PAD_REFLECT: {
    if (d == 1)
      return 0;
    int64_t period = 2 * (d - 1);
    int64_t m = v % period;
    if (m < 0)
      m += period;
    return m < d ? m : period - m;
  }
  default:
    return -1;
  }
}

static nn_status pad_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  size_t es = nn_dtype_size(x->dtype);
  nn_pad_params pp;
  nn_status st = nn_pad_params_init(c, n, &pp);
  if (st != NN_OK)
    return st;
  int r = x->rank;
  /* the constant input (opset 11+) is read at every run (pad_run) */
  unsigned char cval[16] = {0};
  if (!pp.value_input)
    shp_store_double(x->dtype, pp.value, cval);
  int64_t *maps[NN_MAX_RANK];
  int64_t *buf = maps_alloc(c, r, pp.out, maps);
  if (!buf)
    return NN_ERR_NOMEM;
  for (int d = 0; d < r; d++)
    for (int64_t j = 0; j < pp.out[d]; j++)
      maps[d][j] = pad_src(pp.mode, j - pp.begin[d], x->dims[d]);
  st = map_attach(c, n, es, r, pp.out, x->dims, maps, cval, NULL);
  nn_free(buf);
  return st;
}

static nn_status pad_run(nn_ctx *c, nn_node *n) {
  shp_map *m = n->priv;
  nn_value *cv = n->version >= 11 ? shp_in(n, 2) : NULL;
  if (cv && cv->numel == 1)
    memcpy(m->cval, cv->data, m->es);
  shp_map_run(c, m, n->y[0]->data, n->x[0]->data);
  return NN_OK;
}

/* ---- Tile ------------------------------------------------------------------------------- */

static nn_status tile_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int r = x->rank;
  int64_t od[NN_MAX_RANK];
  memcpy(od, n->y[0]->dims, sizeof od);
  int64_t *maps[NN_MAX_RANK];
  int64_t *buf = maps_alloc(c, r, od, maps);
  if (!buf)
    return NN_ERR_NOMEM;
  for (int d = 0; d < r; d++)
    for (int64_t j = 0; j < od[d]; j++)
      maps[d][j] = j % x->dims[d];
  nn_status st = map_attach(c, n, nn_dtype_size(x->dtype), r, od, x->dims, maps, NULL, NULL);
  nn_free(buf);
  return st;
}

/* ---- Expand ------------------------------------------------------------------------------ */

static nn_status expand_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int r = n->y[0]->rank;
  int64_t od[NN_MAX_RANK], id[NN_MAX_RANK];
  memcpy(od, n->y[0]->dims, sizeof od);
  for (int d = 0; d < r; d++) {
    int k = d - (r - x->rank);
    id[d] = k >= 0 ? x->dims[k] : 1;
  }
  int64_t *maps[NN_MAX_RANK];
  int64_t *buf = maps_alloc(c, r, od, maps);
  if (!buf)
    return NN_ERR_NOMEM;
  for (int d = 0; d < r; d++)
    for (int64_t j = 0; j < od[d]; j++)
      maps[d][j] = id[d] == 1 ? 0 : j;
  nn_status st = map_attach(c, n, nn_dtype_size(x->dtype), r, od, id, maps, NULL, NULL);
  nn_free(buf);
  return st;
}

/* ---- DepthToSpace / SpaceToDepth ------------------------------------------------------------ */

/* DepthToSpace and SpaceToDepth: one 6-D strided copy (ops/transform.h). */
static nn_status d2s_prepare(nn_ctx *c, nn_node *n) {
  nn_d2s_params dp;
  nn_status st = nn_d2s_params_init(c, n, &dp);
  if (st != NN_OK)
    return st;
  shp_copy *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  shp_copy_plan(p, nn_dtype_size(n->x[0]->dtype), 6, dp.d6, dp.s6, 0);
  return NN_OK;
}

/* ---- Trilu -------------------------------------------------------------------------------------- */

typedef struct trilu_job {
  const unsigned char *x;
  unsigned char *y;
  int64_t rows, cols, k;
  size_t es;
  bool upper;
} trilu_job;

static void trilu_range(void *arg, int64_t begin, int64_t end) {
  const trilu_job *j = arg;
  const size_t es = j->es, row_bytes = (size_t)j->cols * es;
  for (int64_t r = begin; r < end; r++) {
    int64_t i = r % j->rows;
    /* keep columns [lo, hi): upper keeps col - i >= k, lower col - i <= k */
    int64_t lo = 0, hi = j->cols;
    if (j->upper)
      lo = i + j->k < 0 ? 0 : i + j->k > j->cols ? j->cols : i + j->k;
    else
      hi = i + j->k + 1 < 0 ? 0 : i + j->k + 1 > j->cols ? j->cols : i + j->k + 1;
    unsigned char *dy = j->y + (size_t)r * row_bytes;
    const unsigned char *dx = j->x + (size_t)r * row_bytes;
    if (lo > 0)
      memset(dy, 0, (size_t)lo * es);
    if (hi > lo && dy != dx)
      memcpy(dy + (size_t)lo * es, dx + (size_t)lo * es, (size_t)(hi - lo) * es);
    if (hi < j->cols)
      memset(dy + (size_t)hi * es, 0, (size_t)(j->cols - hi) * es);
  }
}

static nn_status trilu_run(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *y = n->y[0], *kv = shp_in(n, 1);
  int64_t k = kv ? nn_value_get_int(kv, 0) : 0;
  /* keep k far from the int64 limits: beyond +-cols/rows nothing changes */
  int64_t lim = x->dims[x->rank - 1] + x->dims[x->rank - 2] + 1;
  k = k > lim ? lim : k < -lim ? -lim : k;
  trilu_job j = {x->data, y->data, x->dims[x->rank - 2], x->dims[x->rank - 1], k,
                 nn_dtype_size(x->dtype), nn_attr_int(n, "upper", 1) != 0};
  if (j.rows == 0 || j.cols == 0 || y->numel == 0)
    return NN_OK;
  nn_parallel_for(c, y->numel / j.cols, shp_grain_rows((size_t)j.cols * j.es), trilu_range, &j);
  return NN_OK;
}

/* ---- CenterCropPad ------------------------------------------------------------------------------ */

static nn_status ccp_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0];
  int r = x->rank;
  int64_t od[NN_MAX_RANK], off[NN_MAX_RANK];
  memcpy(od, n->y[0]->dims, sizeof od);
  /* crop: start (in - out) / 2 into the input; pad: (out - in) / 2 before
   * (0 on the axes the op leaves alone, where out = in) */
  for (int d = 0; d < r; d++)
    off[d] = x->dims[d] >= od[d] ? (x->dims[d] - od[d]) / 2 : -((od[d] - x->dims[d]) / 2);
  int64_t *maps[NN_MAX_RANK];
  int64_t *buf = maps_alloc(c, r, od, maps);
  if (!buf)
    return NN_ERR_NOMEM;
  for (int d = 0; d < r; d++)
    for (int64_t j = 0; j < od[d]; j++) {
      int64_t s = j + off[d];
      maps[d][j] = s >= 0 && s < x->dims[d] ? s : -1;
    }
  nn_status st = map_attach(c, n, nn_dtype_size(x->dtype), r, od, x->dims, maps, NULL, NULL);
  nn_free(buf);
  return st;
}

/* ---- Compress ------------------------------------------------------------------------------------- */

typedef struct compress_priv {
  int64_t outer, len;       /* input axis length */
  size_t inner;             /* bytes per selected slice */
  int64_t nsel;
  int64_t sel[];
} compress_priv;

/* The selected indices (infer checked them against the axis). */
static nn_status compress_prepare(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *cond = n->x[1];
  const nn_attr *aa = nn_attr_get(n, "axis");
  int64_t outer = 1, len = x->numel, inner = 1, nsel = n->y[0]->dims[0];
  if (aa) {
    int axis;
    nn_norm_axis(aa->i, x->rank, &axis);
    outer = nn_dims_numel(axis, x->dims);
    len = x->dims[axis];
    inner = nn_dims_numel(x->rank - axis - 1, x->dims + axis + 1);
    nsel = n->y[0]->dims[axis];
  }
  compress_priv *p = nn_malloc(sizeof *p + (size_t)nsel * sizeof(int64_t));
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  p->outer = outer;
  p->len = len;
  p->inner = (size_t)inner * nn_dtype_size(x->dtype);
  p->nsel = 0;
  for (int64_t i = 0; i < cond->numel && i < len; i++)
    if (nn_value_get_int(cond, i))
      p->sel[p->nsel++] = i;
  return NN_OK;
}

static nn_status compress_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const compress_priv *p = n->priv;
  const unsigned char *x = n->x[0]->data;
  unsigned char *y = n->y[0]->data;
  if (p->inner == 0)
    return NN_OK;
  for (int64_t o = 0; o < p->outer; o++) {
    const unsigned char *xs = x + (size_t)(o * p->len) * p->inner;
    for (int64_t k = 0; k < p->nsel; k++) {
      memcpy(y, xs + (size_t)p->sel[k] * p->inner, p->inner);
      y += p->inner;
    }
  }
  return NN_OK;
}

/* ---- ReverseSequence ------------------------------------------------------------------------------ */

static nn_status revseq_run(nn_ctx *c, nn_node *n) {
  nn_value *x = n->x[0], *lens = n->x[1];
  bool time_major = nn_attr_int(n, "time_axis", 0) == 0;
  int64_t T = x->dims[time_major ? 0 : 1], B = x->dims[time_major ? 1 : 0];
  size_t inner = (size_t)nn_dims_numel(x->rank - 2, x->dims + 2) * nn_dtype_size(x->dtype);
  for (int64_t b = 0; b < B; b++) {
    int64_t l = shp_index_at(lens, b);
    if (l < 0 || l > T)
      return nn_fail(c, NN_ERR_RUNTIME, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                     (long long)b, (long long)l, (long long)T);
  }
  const unsigned char *xs = x->data;
  unsigned char *ys = n->y[0]->data;
  if (inner == 0)
    return NN_OK;
  for (int64_t b = 0; b < B; b++) {
    int64_t l = shp_index_at(lens, b);
    for (int64_t t = 0; t < T; t++) {
      int64_t s = t < l ? l - 1 - t : t;
      size_t od = (size_t)(time_major ? t * B + b : b * T + t) * inner;
      size_t os = (size_t)(time_major ? s * B + b : b * T + s) * inner;
      memcpy(ys + od, xs + os, inner);
    }
  }
  return NN_OK;
}

const nn_kernel nn_kernels_transform[] = {
  {.name = "Transpose", .prepare = transpose_prepare, .run = copy_run},
  {.name = "Concat", .prepare = concat_prepare, .run = concat_run},
  {.name = "Split", .prepare = split_prepare, .run = split_run},
  {.name = "Slice", .prepare = slice_prepare, .run = copy_run},
  {.name = "Pad", .prepare = pad_prepare, .run = pad_run},
  {.name = "Tile", .prepare = tile_prepare, .run = map_run},
  {.name = "Expand", .prepare = expand_prepare, .run = map_run},
  {.name = "DepthToSpace", .prepare = d2s_prepare, .run = copy_run},
  {.name = "SpaceToDepth", .prepare = d2s_prepare, .run = copy_run},
  {.name = "Trilu", .run = trilu_run},
  {.name = "CenterCropPad", .prepare = ccp_prepare, .run = map_run},
  {.name = "Compress", .prepare = compress_prepare, .run = compress_run},
  {.name = "ReverseSequence", .run = revseq_run},
  {0},
};
