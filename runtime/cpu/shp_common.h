/* shp_common.h - helpers private to the byte-moving op families (shape.c,
 * transform.c, gather.c, resize.c).
 *
 * These ops never look at element values (except a few index inputs), so
 * everything here works on element size: any dtype the runtime can hold moves
 * through the same code.  Two copy engines cover almost every layout change:
 *
 *   shp_copy   a strided walk: dst is contiguous, src is addressed by
 *              per-dimension byte strides (negative for reversed slices, 0
 *              for broadcast).  Dimensions are coalesced first, so the inner
 *              loop is one memcpy whenever the layouts allow it; a transpose
 *              of the two innermost source/destination axes goes through
 *              cache-sized tiles.
 *   shp_map    a gather by per-dimension index maps (source index, or -1
 *              for "constant"): Pad in every mode, Tile, Expand,
 *              CenterCropPad and nearest Resize are all such maps.  The last
 *              dimension is precompiled into runs (memcpy / fill /
 *              strided), and a row identical to the previous one is copied
 *              from the output instead of being gathered again.
 *
 * Both are planned in prepare into a caller-provided struct (usually inside
 * node->priv) and run without allocating.
 */
#ifndef NN_CPU_SHP_COMMON_H
#define NN_CPU_SHP_COMMON_H

#include <math.h>
#include <string.h>

#include "cpu/ops.h"
#include "cpu/vmath.h"
#include "ops/inputs.h"

/* Rows per parallel chunk are sized to move about this many bytes. */
#define SHP_GRAIN_BYTES ((int64_t)1 << 16)

static inline int64_t shp_grain_rows(size_t row_bytes) {
  if (row_bytes == 0)
    return 1 << 20;
  int64_t g = SHP_GRAIN_BYTES / (int64_t)row_bytes;
  return g < 1 ? 1 : g;
}

/* Row-major element strides. */
static inline void shp_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

static inline bool shp_is_index_dtype(nn_dtype dt) {
  return dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32;
}

static inline int64_t shp_index_at(const nn_value *v, int64_t i) {
  return v->dtype == NN_DTYPE_INT64 ? ((const int64_t *)v->data)[i]
                                    : ((const int32_t *)v->data)[i];
}

/* Read a 1-D (or scalar) integer tensor known at prepare into out[max].
 * Returns the count, or -1 when it is not an integer tensor of at most
 * `max` elements (the caller reports). */
static inline int shp_read_ints(const nn_value *v, int64_t *out, int max) {
  if (!v || !v->data || !nn_dtype_is_int(v->dtype) || v->rank > 1 || v->numel > max)
    return -1;
  for (int64_t i = 0; i < v->numel; i++)
    out[i] = nn_value_get_int(v, i);
  return (int)v->numel;
}

/* Read an integer list input (1-D or scalar) whose values are needed at
 * prepare, reporting why it cannot be used (the op layer's reader). */
static inline nn_status shp_get_ints(nn_ctx *c, const nn_value *v, const char *what,
                                     int64_t *out, int max, int *count) {
  return nn_op_ints(c, v, what, out, max, count);
}

/* Normalize a list of axes against `rank`; duplicates are refused. */
static inline nn_status shp_norm_axes(nn_ctx *c, const int64_t *axes, int n, int rank,
                                      int *out, const char *what) {
  return nn_op_norm_axes(c, axes, n, rank, out, what);
}

/* Input i of the node, NULL when omitted (empty name) or absent. */
static inline nn_value *shp_in(const nn_node *n, int i) {
  return i < n->n_in ? n->x[i] : NULL;
}

static inline nn_value *shp_out(const nn_node *n, int i) {
  return i < n->n_out ? n->y[i] : NULL;
}

/* Element size of a value, failing for dtypes the runtime cannot hold. */
static inline nn_status shp_elem_size(nn_ctx *c, const nn_value *v, size_t *es) {
  *es = nn_dtype_size(v->dtype);
  if (*es == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(v->dtype));
  return NN_OK;
}

/* Store a double into one element of dtype dt (saturating for integers,
 * NaN -> 0), so fill values such as Resize's extrapolation_value work for
 * every dtype. */
static inline void shp_store_double(nn_dtype dt, double v, void *dst) {
  if (nn_dtype_is_int(dt) || dt == NN_DTYPE_BOOL) {
    if (v != v)
      v = 0;
  }
  switch (dt) {
  case NN_DTYPE_FLOAT: { float f = (float)v; memcpy(dst, &f, 4); break; }
  case NN_DTYPE_DOUBLE: memcpy(dst, &v, 8); break;
  case NN_DTYPE_FLOAT16: { uint16_t h = nn_f32_to_f16((float)v); memcpy(dst, &h, 2); break; }
  case NN_DTYPE_BFLOAT16: { uint16_t h = nn_f32_to_bf16((float)v); memcpy(dst, &h, 2); break; }
  case NN_DTYPE_BOOL: { uint8_t b = v != 0; memcpy(dst, &b, 1); break; }
#define SHP_SAT(T, LO, HI)                                                        \
  {                                                                               \
    T t = v <= (double)(LO) ? (T)(LO) : v >= (double)(HI) ? (T)(HI) : (T)v;       \
    memcpy(dst, &t, sizeof t);                                                    \
    break;                                                                        \
  }
  case NN_DTYPE_UINT8: SHP_SAT(uint8_t, 0, UINT8_MAX)
  case NN_DTYPE_INT8: SHP_SAT(int8_t, INT8_MIN, INT8_MAX)
  case NN_DTYPE_UINT16: SHP_SAT(uint16_t, 0, UINT16_MAX)
  case NN_DTYPE_INT16: SHP_SAT(int16_t, INT16_MIN, INT16_MAX)
  case NN_DTYPE_UINT32: SHP_SAT(uint32_t, 0, UINT32_MAX)
  case NN_DTYPE_INT32: SHP_SAT(int32_t, INT32_MIN, INT32_MAX)
  case NN_DTYPE_UINT64: SHP_SAT(uint64_t, 0, UINT64_MAX)
  case NN_DTYPE_INT64: SHP_SAT(int64_t, INT64_MIN, INT64_MAX)
#undef SHP_SAT
  default: break;
  }
}

/* Fill n elements of size es with the element at `val`. */
static inline void shp_fill(void *dst, const void *val, size_t es, int64_t n) {
  if (n <= 0)
    return;
  unsigned char *d = dst;
  bool zero = true;
  for (size_t b = 0; b < es; b++)
    zero = zero && ((const unsigned char *)val)[b] == 0;
  if (zero) {
    memset(d, 0, (size_t)n * es);
    return;
  }
  switch (es) {
  case 1: memset(d, *(const unsigned char *)val, (size_t)n); return;
  case 2: { uint16_t v; memcpy(&v, val, 2); for (int64_t i = 0; i < n; i++) memcpy(d + 2 * i, &v, 2); return; }
  case 4: { uint32_t v; memcpy(&v, val, 4); for (int64_t i = 0; i < n; i++) memcpy(d + 4 * i, &v, 4); return; }
  case 8: { uint64_t v; memcpy(&v, val, 8); for (int64_t i = 0; i < n; i++) memcpy(d + 8 * i, &v, 8); return; }
  default:
    /* doubling copies: log(n) memcpy calls */
    memcpy(d, val, es);
    for (int64_t done = 1; done < n;) {
      int64_t k = done < n - done ? done : n - done;
      memcpy(d + (size_t)done * es, d, (size_t)k * es);
      done += k;
    }
  }
}

/* Copy n elements of size es from src with a byte stride to contiguous dst. */
static inline void shp_gather_strided(unsigned char *dst, const unsigned char *src,
                                      int64_t sstride, size_t es, int64_t n) {
  switch (es) {
  case 1: for (int64_t i = 0; i < n; i++) dst[i] = src[i * sstride]; return;
  case 2: for (int64_t i = 0; i < n; i++) memcpy(dst + 2 * i, src + i * sstride, 2); return;
  case 4: for (int64_t i = 0; i < n; i++) memcpy(dst + 4 * i, src + i * sstride, 4); return;
  case 8: for (int64_t i = 0; i < n; i++) memcpy(dst + 8 * i, src + i * sstride, 8); return;
  default: for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, src + i * sstride, es);
  }
}

/* ---- strided copy ---------------------------------------------------------- */

typedef struct shp_copy {
  size_t es;
  int rank;                         /* outer dims, after coalescing */
  int64_t dims[NN_MAX_RANK];
  int64_t sstr[NN_MAX_RANK];        /* bytes */
  int64_t dstr[NN_MAX_RANK];        /* bytes */
  int64_t rows;                     /* product of dims */
  int64_t inner_n;                  /* elements of the innermost dim */
  int64_t inner_sstr;               /* bytes; == es: one memcpy per row */
  int64_t src_off;                  /* bytes from src base to element 0 */
  /* tiled transpose: outer dim `tile_dim` is the one contiguous in src; the
   * walk then covers the other outer dims and each step moves a
   * dims[tile_dim] x inner_n block through tiles. */
  int tile_dim;                     /* -1: none */
  int64_t walk_rows;                /* rows / dims[tile_dim] when tiling */
} shp_copy;

/* Plan dst[i] = src[src_off + sum idx_k * sstr_k] over `dims`, dst
 * contiguous row-major.  Strides in elements. */
static inline void shp_copy_plan(shp_copy *p, size_t es, int rank, const int64_t *dims,
                                 const int64_t *sstr, int64_t src_off) {
  int64_t d[NN_MAX_RANK], s[NN_MAX_RANK], t[NN_MAX_RANK];
  int64_t dst_str[NN_MAX_RANK];
  shp_strides(rank, dims, dst_str);
  int r = 0;
  memset(p, 0, sizeof *p);
  p->es = es;
  p->src_off = src_off * (int64_t)es;
  p->tile_dim = -1;
  int64_t numel = nn_dims_numel(rank, dims);
  if (numel == 0) {
    p->rows = 0;
    return;
  }
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 1)
      continue;
    if (r > 0 && s[r - 1] == sstr[i] * dims[i] && t[r - 1] == dst_str[i] * dims[i]) {
      d[r - 1] *= dims[i];
      s[r - 1] = sstr[i];
      t[r - 1] = dst_str[i];
      continue;
    }
    d[r] = dims[i];
    s[r] = sstr[i];
    t[r] = dst_str[i];
    r++;
  }
  if (r == 0) {
    p->inner_n = 1;
    p->inner_sstr = (int64_t)es;
  } else {
    r--;
    p->inner_n = d[r];
    p->inner_sstr = s[r] * (int64_t)es;
  }
  p->rank = r;
  p->rows = 1;
  for (int i = 0; i < r; i++) {
    p->dims[i] = d[i];
    p->sstr[i] = s[i] * (int64_t)es;
    p->dstr[i] = t[i] * (int64_t)es;
    p->rows *= d[i];
  }
  /* A strided inner loop with some outer dim contiguous in src is a
   * transpose: tile it when the blocks are big enough to matter, or when
   * that dim is a few interleaved channels (NHWC -> NCHW of an RGB image:
   * TensorFlow exports' first node), whose rows each gathered alone read
   * the whole input once per channel. */
  if (p->inner_sstr != (int64_t)es && p->inner_sstr != 0 && p->inner_n >= 8) {
    for (int i = r - 1; i >= 0; i--) {
      if (p->sstr[i] == (int64_t)es &&
          (p->dims[i] >= 8 || (p->dims[i] >= 2 && p->inner_sstr == p->dims[i] * (int64_t)es))) {
        p->tile_dim = i;
        p->walk_rows = p->rows / p->dims[i];
        break;
      }
    }
  }
}

typedef struct shp_copy_job {
  const shp_copy *p;
  unsigned char *dst;
  const unsigned char *src;
} shp_copy_job;

/* Long runs along the src-contiguous dim, few strided rows: measured best
 * for power-of-two strides, where taller tiles thrash L1 sets. */
#define SHP_TILE_A 64
#define SHP_TILE_B 8

/* Move rows [a0, a1) of a (dims[tile_dim] x inner_n) block: along tile_dim
 * src is contiguous, along the inner dim dst is. */
static inline void shp_copy_tile(const shp_copy *p, unsigned char *dst, const unsigned char *src,
                                 int64_t a0, int64_t a1) {
  const size_t es = p->es;
  const int64_t a_dstr = p->dstr[p->tile_dim];
  const int64_t b_n = p->inner_n;
  const int64_t b_sstr = p->inner_sstr;
  if (es == 4 && a_dstr % 4 == 0 && b_sstr % 4 == 0 &&
      nn_vmath_transpose_f32((float *)(void *)(dst + a0 * a_dstr), a_dstr / 4,
                             (const float *)(const void *)(src + a0 * 4), b_sstr / 4, a1 - a0, b_n))
    return;
  for (int64_t b0 = 0; b0 < b_n; b0 += SHP_TILE_B) {
    int64_t b1 = b0 + SHP_TILE_B < b_n ? b0 + SHP_TILE_B : b_n;
    for (int64_t a = a0; a < a1; a++) {
      unsigned char *drow = dst + a * a_dstr;
      const unsigned char *scol = src + a * (int64_t)es;
      switch (es) {
      case 1: for (int64_t b = b0; b < b1; b++) drow[b] = scol[b * b_sstr]; break;
      case 2: for (int64_t b = b0; b < b1; b++) memcpy(drow + 2 * b, scol + b * b_sstr, 2); break;
      case 4: for (int64_t b = b0; b < b1; b++) memcpy(drow + 4 * b, scol + b * b_sstr, 4); break;
      case 8: for (int64_t b = b0; b < b1; b++) memcpy(drow + 8 * b, scol + b * b_sstr, 8); break;
      default: for (int64_t b = b0; b < b1; b++) memcpy(drow + (size_t)b * es, scol + b * b_sstr, es);
      }
    }
  }
}

/* Byte offsets of walked row `row` (all outer dims but tile_dim). */
static inline void shp_copy_offsets(const shp_copy *p, int64_t row, int64_t *idx, int64_t *so,
                                    int64_t *dof) {
  *so = p->src_off;
  *dof = 0;
  for (int i = p->rank - 1; i >= 0; i--) {
    if (i == p->tile_dim) {
      idx[i] = 0;
      continue;
    }
    idx[i] = row % p->dims[i];
    row /= p->dims[i];
    *so += idx[i] * p->sstr[i];
    *dof += idx[i] * p->dstr[i];
  }
}

/* Tiled transposes: a work unit is one a-tile of one walked row. */
static inline void shp_copy_tiles_range(void *arg, int64_t begin, int64_t end) {
  const shp_copy_job *j = arg;
  const shp_copy *p = j->p;
  const int64_t a_n = p->dims[p->tile_dim];
  const int64_t ntiles = (a_n + SHP_TILE_A - 1) / SHP_TILE_A;
  int64_t idx[NN_MAX_RANK];
  for (int64_t u = begin; u < end; u++) {
    int64_t so, dof, a0 = (u % ntiles) * SHP_TILE_A;
    shp_copy_offsets(p, u / ntiles, idx, &so, &dof);
    shp_copy_tile(p, j->dst + dof, j->src + so, a0, a0 + SHP_TILE_A < a_n ? a0 + SHP_TILE_A : a_n);
  }
}

static inline void shp_copy_range(void *arg, int64_t begin, int64_t end) {
  const shp_copy_job *j = arg;
  const shp_copy *p = j->p;
  const int r = p->rank;
  int64_t idx[NN_MAX_RANK], so, dof;
  shp_copy_offsets(p, begin, idx, &so, &dof);
  const size_t row_bytes = (size_t)p->inner_n * p->es;
  const bool contig = p->inner_sstr == (int64_t)p->es;
  for (int64_t row = begin; row < end; row++) {
    if (contig)
      memcpy(j->dst + dof, j->src + so, row_bytes);
    else
      shp_gather_strided(j->dst + dof, j->src + so, p->inner_sstr, p->es, p->inner_n);
    for (int i = r - 1; i >= 0; i--) {
      if (++idx[i] < p->dims[i]) {
        so += p->sstr[i];
        dof += p->dstr[i];
        break;
      }
      idx[i] = 0;
      so -= (p->dims[i] - 1) * p->sstr[i];
      dof -= (p->dims[i] - 1) * p->dstr[i];
    }
  }
}

static inline void shp_copy_run(nn_ctx *c, const shp_copy *p, void *dst, const void *src) {
  if (p->rows == 0)
    return;
  shp_copy_job j = {p, dst, src};
  if (p->tile_dim >= 0) {
    int64_t a_n = p->dims[p->tile_dim];
    int64_t units = p->walk_rows * ((a_n + SHP_TILE_A - 1) / SHP_TILE_A);
    size_t unit_bytes = (size_t)p->inner_n * p->es * SHP_TILE_A;
    nn_parallel_for(c, units, shp_grain_rows(unit_bytes), shp_copy_tiles_range, &j);
    return;
  }
  nn_parallel_for(c, p->rows, shp_grain_rows((size_t)p->inner_n * p->es), shp_copy_range, &j);
}

/* ---- gather by per-dimension index maps ----------------------------------- */

typedef struct shp_seg {
  int64_t dst;        /* first output element of the run (last dim) */
  int64_t src;        /* source index along the last dim, -1 = constant */
  int64_t len;
  int64_t step;       /* source index step inside the run */
} shp_seg;

typedef struct shp_map {
  size_t es;
  int rank;                          /* >= 1 */
  int64_t odims[NN_MAX_RANK];
  int64_t istr[NN_MAX_RANK];         /* source byte strides */
  int64_t map_off[NN_MAX_RANK];      /* offsets into maps[] of dims 0..rank-2 */
  int64_t nseg;
  int64_t rows;                      /* product of odims[0..rank-2] */
  unsigned char cval[16];            /* constant element */
  /* followed in memory by: int64 maps[sum odims[0..rank-2]], shp_seg segs[nseg] */
} shp_map;

/* Bytes of a shp_map (with its trailing arrays) for output dims `odims` and
 * a last-dim map `last` of odims[rank-1] entries: first pass counts runs. */
static inline int64_t shp_map_count_segs(const int64_t *last, int64_t n) {
  int64_t segs = 0;
  for (int64_t j = 0; j < n;) {
    int64_t k = j + 1;
    if (last[j] < 0) {
      while (k < n && last[k] < 0)
        k++;
    } else if (k < n && last[k] >= 0) {
      int64_t step = last[k] - last[j];
      while (k < n && last[k] >= 0 && last[k] - last[k - 1] == step)
        k++;
    }
    segs++;
    j = k;
  }
  return segs;
}

static inline size_t shp_map_bytes(int rank, const int64_t *odims, int64_t nseg) {
  size_t n = sizeof(shp_map);
  for (int i = 0; i + 1 < rank; i++)
    n += (size_t)odims[i] * sizeof(int64_t);
  n = nn_align_up(n, 8) + (size_t)nseg * sizeof(shp_seg);
  return n;
}

static inline int64_t *shp_map_maps(shp_map *m) { return (int64_t *)(m + 1); }

static inline shp_seg *shp_map_segs(shp_map *m) {
  size_t n = sizeof(shp_map);
  for (int i = 0; i + 1 < m->rank; i++)
    n += (size_t)m->odims[i] * sizeof(int64_t);
  n = nn_align_up(n, 8);
  return (shp_seg *)((unsigned char *)m + n);
}

/* Fill the header and the last-dim runs; the caller then writes the maps of
 * dims 0..rank-2 into shp_map_maps(m) + m->map_off[d]. */
static inline void shp_map_init(shp_map *m, size_t es, int rank, const int64_t *odims,
                                const int64_t *idims, const int64_t *last,
                                const void *cval) {
  memset(m, 0, sizeof *m);
  m->es = es;
  m->rank = rank;
  int64_t istr[NN_MAX_RANK];
  shp_strides(rank, idims, istr);
  int64_t off = 0;
  m->rows = 1;
  for (int i = 0; i < rank; i++) {
    m->odims[i] = odims[i];
    m->istr[i] = istr[i] * (int64_t)es;
    if (i + 1 < rank) {
      m->map_off[i] = off;
      off += odims[i];
      m->rows *= odims[i];
    }
  }
  if (cval)
    memcpy(m->cval, cval, es);
  int64_t n = odims[rank - 1];
  shp_seg *seg = shp_map_segs(m);
  int64_t s = 0;
  for (int64_t j = 0; j < n;) {
    int64_t k = j + 1, step = 0;
    if (last[j] < 0) {
      while (k < n && last[k] < 0)
        k++;
    } else if (k < n && last[k] >= 0) {
      step = last[k] - last[j];
      while (k < n && last[k] >= 0 && last[k] - last[k - 1] == step)
        k++;
    }
    seg[s++] = (shp_seg){j, last[j] < 0 ? -1 : last[j], k - j, step};
    j = k;
  }
  m->nseg = s;
}

typedef struct shp_map_job {
  const shp_map *m;
  unsigned char *dst;
  const unsigned char *src;
} shp_map_job;

static inline void shp_map_range(void *arg, int64_t begin, int64_t end) {
  const shp_map_job *j = arg;
  const shp_map *m = j->m;
  const int r = m->rank - 1;                      /* outer dims */
  const size_t es = m->es;
  const int64_t n = m->odims[r];
  const size_t row_bytes = (size_t)n * es;
  const int64_t *maps = shp_map_maps((shp_map *)m);
  const shp_seg *segs = shp_map_segs((shp_map *)m);
  const int64_t last_str = m->istr[r];
  int64_t idx[NN_MAX_RANK];
  int64_t rem = begin;
  for (int i = r - 1; i >= 0; i--) {
    idx[i] = rem % m->odims[i];
    rem /= m->odims[i];
  }
  int64_t prev_src = -2;     /* source offset of the previous row, -1 = constant row */
  for (int64_t row = begin; row < end; row++) {
    unsigned char *drow = j->dst + (size_t)row * row_bytes;
    int64_t so = 0;
    for (int i = 0; i < r; i++) {
      int64_t s = maps[m->map_off[i] + idx[i]];
      if (s < 0) {
        so = -1;
        break;
      }
      so += s * m->istr[i];
    }
    if (so == prev_src && row > begin) {
      memcpy(drow, drow - row_bytes, row_bytes);
    } else if (so < 0) {
      shp_fill(drow, m->cval, es, n);
    } else {
      const unsigned char *srow = j->src + so;
      for (int64_t k = 0; k < m->nseg; k++) {
        const shp_seg *g = &segs[k];
        unsigned char *d = drow + (size_t)g->dst * es;
        if (g->src < 0)
          shp_fill(d, m->cval, es, g->len);
        else if (g->step == 1 || g->len == 1)
          memcpy(d, srow + g->src * last_str, (size_t)g->len * es);
        else if (g->step == 0)
          shp_fill(d, srow + g->src * last_str, es, g->len);
        else
          shp_gather_strided(d, srow + g->src * last_str, g->step * last_str, es, g->len);
      }
    }
    prev_src = so;
    for (int i = r - 1; i >= 0; i--) {
      if (++idx[i] < m->odims[i])
        break;
      idx[i] = 0;
    }
  }
}

static inline void shp_map_run(nn_ctx *c, const shp_map *m, void *dst, const void *src) {
  if (m->rows == 0 || m->odims[m->rank - 1] == 0)
    return;
  shp_map_job j = {m, dst, src};
  nn_parallel_for(c, m->rows, shp_grain_rows((size_t)m->odims[m->rank - 1] * m->es),
                  shp_map_range, &j);
}

/* Plain copy for view ops when the planner did not alias the buffers. */
static inline nn_status shp_view_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *x = n->x[0], *y = n->y[0];
  if (y->data != x->data && y->nbytes)
    memcpy(y->data, x->data, y->nbytes < x->nbytes ? y->nbytes : x->nbytes);
  return NN_OK;
}

#endif /* NN_CPU_SHP_COMMON_H */
