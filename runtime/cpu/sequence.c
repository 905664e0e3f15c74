/* sequence.c - CPU kernels of the sequence and optional ops: SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
 * SequenceLength, SplitToSequence, ConcatFromSequence (11), Optional,
 * OptionalHasElement, OptionalGetElement (15/18), and Identity of a boxed
 * value; and the box helpers of box.h.
 *
 * A sequence is planned like a tensor: its length and every item's shape are
 * fixed when the node is prepared (positions must then be known), its items
 * live in its value's bytes (the arena), its header in the node's priv.
 * Sequences that grow in a loop are the Loop's business (control.c): it
 * plans its body again when what it carries changes.
 */
#include <string.h>

#include "cpu/box.h"
#include "cpu/ops.h"
#include "nn_limits.h"

/* ---- box helpers ------------------------------------------------------------- */
size_t nn_box_bytes(const nn_box *box) {
  size_t t = 0;
  for (int i = 0; i < box->n; i++)
    t += nn_align_up(box->items[i].nbytes, NN_ALIGN);
  return t;
}

void nn_box_bind(nn_box *box, void *data) {
  unsigned char *p = data;
  size_t off = 0;
  for (int i = 0; i < box->n; i++) {
    box->items[i].data = p + off;
    off += nn_align_up(box->items[i].nbytes, NN_ALIGN);
  }
}

void nn_box_item_set(nn_tensor *it, nn_dtype dt, int rank, const int64_t *dims) {
  it->dtype = dt;
  it->rank = rank;
  for (int i = 0; i < NN_MAX_RANK; i++)
    it->dims[i] = i < rank ? dims[i] : 0;
  it->nbytes = (size_t)nn_dims_numel(rank, dims) * nn_dtype_size(dt);
  it->data = NULL;
}

bool nn_box_same(const nn_box *a, const nn_box *b) {
  if (a->vtype != b->vtype || a->none != b->none || a->elem_is_seq != b->elem_is_seq || a->n != b->n)
    return false;
  for (int i = 0; i < a->n; i++) {
    const nn_tensor *x = &a->items[i], *y = &b->items[i];
    if (x->dtype != y->dtype || x->rank != y->rank ||
        memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->rank) != 0)
      return false;
  }
  return true;
}

void nn_box_copy_desc(nn_box *dst, const nn_box *src) {
  nn_tensor *items = dst->items;
  *dst = *src;
  dst->items = items;
  for (int i = 0; i < src->n; i++) {
    items[i] = src->items[i];
    items[i].data = NULL;
  }
}

nn_status nn_set_box_output(nn_ctx *c, nn_value *y, nn_box *box) {
  if (!y)
    return NN_OK;
  int64_t max_elems = c->limits && c->limits->max_tensor_elems ? c->limits->max_tensor_elems
                                                               : NN_LIMIT_TENSOR_ELEMS;
  uint64_t total = 0;
  for (int i = 0; i < box->n; i++) {
    nn_tensor *it = &box->items[i];
    int64_t numel = 1;
    for (int d = 0; d < it->rank; d++)
      if (it->dims[d] < 0 || nn_mul_overflow_i64(numel, it->dims[d], &numel))
        return nn_fail(c, NN_ERR_LIMIT, "sequence item %d of '%s' has a bad shape", i, y->name);
    if (numel > max_elems)
      return nn_fail(c, NN_ERR_LIMIT, "sequence item %d of '%s' has %lld elements, more than the "
                     "limit %lld", i, y->name, (long long)numel, (long long)max_elems);
    it->nbytes = (size_t)numel * nn_dtype_size(it->dtype);
    total += nn_align_up(it->nbytes, NN_ALIGN);
  }
  int64_t max_arena = c->limits && c->limits->max_arena_bytes ? c->limits->max_arena_bytes
                                                              : NN_LIMIT_ARENA_BYTES;
  if (total > (uint64_t)max_arena)
    return nn_fail(c, NN_ERR_LIMIT, "sequence '%s' would take %llu bytes, more than the arena limit",
                   y->name, (unsigned long long)total);
  int64_t dims[1] = {(int64_t)total};
  /* the bytes count against the element limit as uint8 */
  nn_limits relaxed;
  const nn_limits *keep = c->limits;
  if (keep) {
    relaxed = *keep;
    if (relaxed.max_tensor_elems < max_arena)
      relaxed.max_tensor_elems = max_arena;
    c->limits = &relaxed;
  }
  nn_status st = nn_set_output(c, y, NN_DTYPE_UINT8, 1, dims);
  c->limits = keep;
  if (st != NN_OK)
    return st;
  y->vtype = box->vtype;
  y->box = box;
  return NN_OK;
}

void *nn_priv_with_boxes(nn_ctx *c, size_t psize, int n_boxes, const int *n_items, nn_box **boxes) {
  size_t total = nn_align_up(psize, 16);
  for (int k = 0; k < n_boxes; k++) {
    if (n_items[k] < 0)
      continue;
    if (n_items[k] > NN_LIMIT_SEQUENCE_ITEMS) {
      nn_fail(c, NN_ERR_LIMIT, "a sequence of %d items is more than the limit %d", n_items[k],
              NN_LIMIT_SEQUENCE_ITEMS);
      return NULL;
    }
    total += nn_align_up(sizeof(nn_box), 16) + (size_t)n_items[k] * sizeof(nn_tensor);
  }
  unsigned char *p = nn_calloc(1, total ? total : 1);
  if (!p) {
    nn_fail(c, NN_ERR_NOMEM, "out of memory");
    return NULL;
  }
  size_t off = nn_align_up(psize, 16);
  for (int k = 0; k < n_boxes; k++) {
    if (n_items[k] < 0) {
      boxes[k] = NULL;
      continue;
    }
    nn_box *b = (nn_box *)(p + off);
    off += nn_align_up(sizeof(nn_box), 16);
    b->items = (nn_tensor *)(p + off);
    b->n = n_items[k];
    off += (size_t)n_items[k] * sizeof(nn_tensor);
    boxes[k] = b;
  }
  return p;
}

/* ---- helpers ------------------------------------------------------------------- */
static const nn_box *in_seq(nn_ctx *c, nn_node *n, int k, nn_status *st) {
  const nn_value *x = n->x[k];
  if (!x || x->vtype != NN_VT_SEQUENCE || !x->box) {
    *st = nn_fail(c, NN_ERR_INVALID_MODEL, "input %d is not a sequence", k);
    return NULL;
  }
  *st = NN_OK;
  return x->box;
}

/* A one-element integer tensor's value; its data must be known. */
static nn_status scalar_pos(nn_ctx *c, const nn_value *p, int64_t *out) {
  if (!nn_dtype_is_int(p->dtype) || p->numel != 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "position '%s' must be one integer", p->name);
  *out = nn_value_get_int(p, 0);
  return NN_OK;
}

/* New sequence box in priv with n items, elem dtype dt. */
static nn_box *new_seq(nn_ctx *c, nn_node *n, int items, nn_dtype dt) {
  nn_box *b = NULL;
  n->priv = nn_priv_with_boxes(c, 0, 1, &items, &b);
  if (!n->priv)
    return NULL;
  b->vtype = NN_VT_SEQUENCE;
  b->elem_dtype = dt;
  return b;
}

/* Copy items of src (already bound) into dst (bound here to y's bytes), dst
 * item j taking src item map[j] (-1: from the tensor t). */
static void copy_items(nn_box *dst, nn_value *y) {
  nn_box_bind(dst, y->data);
}

/* ---- SequenceEmpty / SequenceConstruct --------------------------------------------- */
static nn_status seq_empty_prepare(nn_ctx *c, nn_node *n) {
  nn_dtype dt = (nn_dtype)nn_attr_int(n, "dtype", NN_DTYPE_FLOAT);
  if (nn_dtype_size(dt) == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "dtype %d is not supported", (int)dt);
  nn_box *b = new_seq(c, n, 0, dt);
  if (!b)
    return c->err ? c->err->status : NN_ERR_NOMEM;
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status seq_nothing_run(nn_ctx *c, nn_node *n) {
  (void)c;
  if (n->y[0] && n->y[0]->box)
    nn_box_bind(n->y[0]->box, n->y[0]->data);
  return NN_OK;
}

static nn_status seq_construct_prepare(nn_ctx *c, nn_node *n) {
  if (n->n_in < 1)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs at least one input");
  nn_dtype dt = n->x[0] ? n->x[0]->dtype : NN_DTYPE_UNDEFINED;
  for (int k = 0; k < n->n_in; k++) {
    if (!n->x[k] || n->x[k]->vtype != NN_VT_TENSOR)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "input %d must be a tensor", k);
    if (n->x[k]->dtype != dt)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "inputs have different types");
  }
  nn_box *b = new_seq(c, n, n->n_in, dt);
  if (!b)
    return c->err->status;
  for (int k = 0; k < n->n_in; k++)
    nn_box_item_set(&b->items[k], dt, n->x[k]->rank, n->x[k]->dims);
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status seq_construct_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_box *b = n->y[0]->box;
  copy_items(b, n->y[0]);
  for (int k = 0; k < n->n_in; k++)
    if (b->items[k].nbytes)
      memcpy(b->items[k].data, n->x[k]->data, b->items[k].nbytes);
  return NN_OK;
}

/* ---- SequenceInsert / SequenceErase ---------------------------------------------- */
typedef struct seq_edit {
  int64_t pos;     /* inserted at / erased at */
} seq_edit;

static nn_status seq_insert_prepare(nn_ctx *c, nn_node *n) {
  nn_status st;
  const nn_box *s = in_seq(c, n, 0, &st);
  if (!s)
    return st;
  const nn_value *t = n->x[1];
  if (!t || t->vtype != NN_VT_TENSOR)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input 1 must be a tensor");
  if (s->elem_dtype != NN_DTYPE_UNDEFINED && s->n > 0 && s->elem_dtype != t->dtype)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "inserting %s into a sequence of %s",
                   nn_dtype_name(t->dtype), nn_dtype_name(s->elem_dtype));
  int64_t pos = s->n;
  if (n->n_in > 2 && n->x[2]) {
    if ((st = scalar_pos(c, n->x[2], &pos)) != NN_OK)
      return st;
    if (pos < -(int64_t)s->n || pos > s->n)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "position %lld is out of [-%d, %d]", (long long)pos, s->n,
                     s->n);
    if (pos < 0)
      pos += s->n;
  }
  nn_box *b = NULL;
  int items = s->n + 1;
  n->priv = nn_priv_with_boxes(c, sizeof(seq_edit), 1, &items, &b);
  if (!n->priv)
    return c->err->status;
  ((seq_edit *)n->priv)->pos = pos;
  b->vtype = NN_VT_SEQUENCE;
  b->elem_dtype = t->dtype;
  for (int i = 0, j = 0; i < items; i++) {
    if (i == pos)
      nn_box_item_set(&b->items[i], t->dtype, t->rank, t->dims);
    else
      b->items[i] = s->items[j++];
  }
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status seq_insert_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_box *s = n->x[0]->box;
  nn_box *b = n->y[0]->box;
  int64_t pos = ((const seq_edit *)n->priv)->pos;
  copy_items(b, n->y[0]);
  for (int i = 0, j = 0; i < b->n; i++) {
    const void *src = i == pos ? n->x[1]->data : s->items[j++].data;
    if (b->items[i].nbytes)
      memmove(b->items[i].data, src, b->items[i].nbytes);
  }
  return NN_OK;
}

static nn_status seq_erase_prepare(nn_ctx *c, nn_node *n) {
  nn_status st;
  const nn_box *s = in_seq(c, n, 0, &st);
  if (!s)
    return st;
  int64_t pos = s->n - 1;
  if (n->n_in > 1 && n->x[1]) {
    if ((st = scalar_pos(c, n->x[1], &pos)) != NN_OK)
      return st;
    if (pos < 0)
      pos += s->n;
  }
  if (pos < 0 || pos >= s->n)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "position is out of the sequence's %d items", s->n);
  nn_box *b = NULL;
  int items = s->n - 1;
  n->priv = nn_priv_with_boxes(c, sizeof(seq_edit), 1, &items, &b);
  if (!n->priv)
    return c->err->status;
  ((seq_edit *)n->priv)->pos = pos;
  b->vtype = NN_VT_SEQUENCE;
  b->elem_dtype = s->elem_dtype;
  for (int i = 0, j = 0; i < s->n; i++)
    if (i != pos)
      b->items[j++] = s->items[i];
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status seq_erase_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_box *s = n->x[0]->box;
  nn_box *b = n->y[0]->box;
  int64_t pos = ((const seq_edit *)n->priv)->pos;
  copy_items(b, n->y[0]);
  for (int i = 0, j = 0; i < s->n; i++)
    if (i != pos) {
      if (b->items[j].nbytes)
        memmove(b->items[j].data, s->items[i].data, b->items[j].nbytes);
      j++;
    }
  return NN_OK;
}

/* ---- SequenceAt / SequenceLength --------------------------------------------------- */
static nn_status seq_at_prepare(nn_ctx *c, nn_node *n) {
  nn_status st;
  const nn_box *s = in_seq(c, n, 0, &st);
  if (!s)
    return st;
  int64_t pos = 0;
  if ((st = scalar_pos(c, n->x[1], &pos)) != NN_OK)
    return st;
  if (pos < 0)
    pos += s->n;
  if (pos < 0 || pos >= s->n)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "position is out of the sequence's %d items", s->n);
  seq_edit *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->pos = pos;
  n->priv = p;
  const nn_tensor *it = &s->items[pos];
  return nn_set_output(c, n->y[0], it->dtype, it->rank, it->dims);
}

static nn_status seq_at_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_box *s = n->x[0]->box;
  int64_t pos = ((const seq_edit *)n->priv)->pos;
  if (n->y[0]->nbytes)
    memcpy(n->y[0]->data, s->items[pos].data, n->y[0]->nbytes);
  return NN_OK;
}

static nn_status seq_length_prepare(nn_ctx *c, nn_node *n) {
  nn_status st;
  if (!in_seq(c, n, 0, &st))
    return st;
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 0, NULL);
}

static nn_status seq_length_run(nn_ctx *c, nn_node *n) {
  (void)c;
  *(int64_t *)n->y[0]->data = n->x[0]->box->n;
  return NN_OK;
}

/* ---- SplitToSequence / ConcatFromSequence ------------------------------------------ */
typedef struct split_seq {
  int axis;
  int64_t outer, inner;  /* elements before axis, element bytes after it */
  int64_t len;           /* the input's length along axis */
} split_seq;

static nn_status split_seq_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  int axis;
  if (!nn_norm_axis(nn_attr_int(n, "axis", 0), x->rank, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis is out of range");
  int64_t len = x->dims[axis];
  const nn_value *sp = n->n_in > 1 ? n->x[1] : NULL;
  int64_t count;
  bool keep = true;
  int64_t chunk = 1;
  if (!sp) {
    count = len;
    keep = nn_attr_int(n, "keepdims", 1) != 0;
  } else if (sp->rank == 0) {
    chunk = nn_value_get_int(sp, 0);
    if (chunk <= 0)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "split must be positive");
    count = (len + chunk - 1) / chunk;
  } else {
    count = sp->numel;
    int64_t sum = 0;
    for (int64_t i = 0; i < count; i++) {
      int64_t v = nn_value_get_int(sp, i);
      if (v < 0)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "split sizes must not be negative");
      /* checked before the sum so a hostile size cannot overflow it: sum stays <= 2 * len */
      if (v > len - sum)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "split sizes exceed the axis length %lld",
                       (long long)len);
      sum += v;
    }
    if (sum != len)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "split sizes sum to %lld, the axis is %lld", (long long)sum,
                     (long long)len);
  }
  if (count > NN_LIMIT_SEQUENCE_ITEMS)
    return nn_fail(c, NN_ERR_LIMIT, "%lld items, more than the limit %d", (long long)count,
                   NN_LIMIT_SEQUENCE_ITEMS);
  nn_box *b = NULL;
  int items = (int)count;
  n->priv = nn_priv_with_boxes(c, sizeof(split_seq), 1, &items, &b);
  if (!n->priv)
    return c->err->status;
  split_seq *p = n->priv;
  p->axis = axis;
  p->len = len;
  p->outer = 1;
  for (int d = 0; d < axis; d++)
    p->outer *= x->dims[d];
  p->inner = (int64_t)nn_dtype_size(x->dtype);
  for (int d = axis + 1; d < x->rank; d++)
    p->inner *= x->dims[d];
  b->vtype = NN_VT_SEQUENCE;
  b->elem_dtype = x->dtype;
  for (int64_t i = 0, at = 0; i < count; i++) {
    int64_t sz = !sp ? 1 : sp->rank == 0 ? (at + chunk <= len ? chunk : len - at) : nn_value_get_int(sp, i);
    at += sz;
    int64_t dims[NN_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
      if (d == axis) {
        if (keep)
          dims[r++] = sz;
      } else {
        dims[r++] = x->dims[d];
      }
    }
    nn_box_item_set(&b->items[i], x->dtype, r, dims);
  }
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status split_seq_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const split_seq *p = n->priv;
  nn_box *b = n->y[0]->box;
  copy_items(b, n->y[0]);
  const unsigned char *src = n->x[0]->data;
  int64_t at = 0;
  for (int i = 0; i < b->n; i++) {
    int64_t outer = p->outer ? p->outer : 1;
    int64_t sz = p->outer ? (int64_t)(b->items[i].nbytes / (size_t)p->inner / (size_t)outer) : 0;
    if (p->inner == 0 || p->outer == 0) {
      at += 0;
      continue;
    }
    unsigned char *dst = b->items[i].data;
    for (int64_t o = 0; o < p->outer; o++)
      memcpy(dst + o * sz * p->inner, src + (o * p->len + at) * p->inner, (size_t)(sz * p->inner));
    at += sz;
  }
  return NN_OK;
}

typedef struct concat_seq {
  int axis;
  int64_t outer, inner;   /* elements before axis; bytes per unit of the axis */
  int64_t total;          /* the output's length along axis */
} concat_seq;

static nn_status concat_seq_prepare(nn_ctx *c, nn_node *n) {
  nn_status st;
  const nn_box *s = in_seq(c, n, 0, &st);
  if (!s)
    return st;
  if (s->n == 0)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the sequence is empty");
  bool new_axis = nn_attr_int(n, "new_axis", 0) != 0;
  const nn_tensor *t0 = &s->items[0];
  int r = t0->rank + (new_axis ? 1 : 0);
  int axis;
  if (!nn_norm_axis(nn_attr_int(n, "axis", 0), r, &axis))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "axis is out of range");
  int64_t dims[NN_MAX_RANK];
  int64_t total = 0;
  for (int i = 0; i < s->n; i++) {
    const nn_tensor *t = &s->items[i];
    if (t->rank != t0->rank || t->dtype != t0->dtype)
      return nn_fail(c, NN_ERR_SHAPE, "sequence items differ in rank or type");
    for (int d = 0; d < t->rank; d++)
      if ((new_axis || d != axis) && t->dims[d] != t0->dims[d])
        return nn_fail(c, NN_ERR_SHAPE, "sequence items differ in shape");
    total += new_axis ? 1 : t->dims[axis];
  }
  for (int d = 0, j = 0; d < r; d++) {
    if (new_axis)
      dims[d] = d == axis ? total : t0->dims[j++];
    else
      dims[d] = d == axis ? total : t0->dims[d];
  }
  concat_seq *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  p->axis = axis;
  p->total = total;
  p->outer = 1;
  for (int d = 0; d < axis; d++)
    p->outer *= dims[d];
  p->inner = (int64_t)nn_dtype_size(t0->dtype);
  for (int d = axis + 1; d < r; d++)
    p->inner *= dims[d];
  n->priv = p;
  return nn_set_output(c, n->y[0], t0->dtype, r, dims);
}

static nn_status concat_seq_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const concat_seq *p = n->priv;
  const nn_box *s = n->x[0]->box;
  unsigned char *dst = n->y[0]->data;
  if (p->inner == 0 || p->outer == 0)
    return NN_OK;
  int64_t at = 0;
  for (int i = 0; i < s->n; i++) {
    int64_t sz = (int64_t)(s->items[i].nbytes / (size_t)p->inner / (size_t)p->outer);
    const unsigned char *src = s->items[i].data;
    for (int64_t o = 0; o < p->outer; o++)
      memcpy(dst + (o * p->total + at) * p->inner, src + o * sz * p->inner, (size_t)(sz * p->inner));
    at += sz;
  }
  return NN_OK;
}

/* ---- Optional* ------------------------------------------------------------------------ */
/* An output box with the layout of in (a box), in priv. */
static nn_status box_like_prepare(nn_ctx *c, nn_node *n, const nn_box *in, nn_vtype vt) {
  nn_box *b = NULL;
  int items = in->n;
  n->priv = nn_priv_with_boxes(c, 0, 1, &items, &b);
  if (!n->priv)
    return c->err->status;
  nn_box_copy_desc(b, in);
  b->vtype = vt;
  return nn_set_box_output(c, n->y[0], b);
}

/* Output bytes = input bytes: boxes of one layout. */
static nn_status box_copy_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *y = n->y[0];
  if (y->nbytes && y->data != n->x[0]->data)
    memcpy(y->data, n->x[0]->data, y->nbytes);
  if (y->box)
    nn_box_bind(y->box, y->data);
  return NN_OK;
}

static nn_status box_identity_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (x->vtype == NN_VT_TENSOR)
    return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
  return box_like_prepare(c, n, x->box, x->vtype);
}

static nn_status optional_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  nn_box *b = NULL;
  if (!x) {
    int items = 0;
    n->priv = nn_priv_with_boxes(c, 0, 1, &items, &b);
    if (!n->priv)
      return c->err->status;
    b->vtype = NN_VT_OPTIONAL;
    b->none = true;
    return nn_set_box_output(c, n->y[0], b);
  }
  if (x->vtype == NN_VT_SEQUENCE) {
    nn_status st = box_like_prepare(c, n, x->box, NN_VT_OPTIONAL);
    if (st == NN_OK)
      n->y[0]->box->elem_is_seq = true;
    return st;
  }
  if (x->vtype != NN_VT_TENSOR)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "an optional of an optional");
  int items = 1;
  n->priv = nn_priv_with_boxes(c, 0, 1, &items, &b);
  if (!n->priv)
    return c->err->status;
  b->vtype = NN_VT_OPTIONAL;
  b->elem_dtype = x->dtype;
  nn_box_item_set(&b->items[0], x->dtype, x->rank, x->dims);
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status optional_run(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  if (!x)
    return seq_nothing_run(c, n);
  if (x->vtype != NN_VT_TENSOR)
    return box_copy_run(c, n);
  nn_box_bind(n->y[0]->box, n->y[0]->data); /* a tensor's bytes are its one item's */
  if (x->nbytes)
    memcpy(n->y[0]->data, x->data, x->nbytes);
  return NN_OK;
}

static nn_status has_element_prepare(nn_ctx *c, nn_node *n) {
  return nn_set_output(c, n->y[0], NN_DTYPE_BOOL, 0, NULL);
}

static nn_status has_element_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  bool has = x && (x->vtype != NN_VT_OPTIONAL || (x->box && !x->box->none));
  *(uint8_t *)n->y[0]->data = has;
  return NN_OK;
}

static nn_status get_element_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs an input");
  if (x->vtype == NN_VT_TENSOR)
    return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
  if (x->vtype == NN_VT_SEQUENCE)
    return box_like_prepare(c, n, x->box, NN_VT_SEQUENCE);
  if (x->box->none)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the optional input holds no element");
  if (x->box->elem_is_seq) {
    nn_status st = box_like_prepare(c, n, x->box, NN_VT_SEQUENCE);
    if (st == NN_OK)
      n->y[0]->box->elem_is_seq = false;
    return st;
  }
  const nn_tensor *it = &x->box->items[0];
  return nn_set_output(c, n->y[0], it->dtype, it->rank, it->dims);
}

const nn_kernel nn_kernels_sequence[] = {
  {.name = "SequenceEmpty", .prepare = seq_empty_prepare, .run = seq_nothing_run},
  {.name = "SequenceConstruct", .prepare = seq_construct_prepare, .run = seq_construct_run},
  {.name = "SequenceInsert", .prepare = seq_insert_prepare, .run = seq_insert_run},
  {.name = "SequenceErase", .prepare = seq_erase_prepare, .run = seq_erase_run},
  {.name = "SequenceAt", .prepare = seq_at_prepare, .run = seq_at_run},
  {.name = "SequenceLength", .prepare = seq_length_prepare, .run = seq_length_run},
  {.name = "SplitToSequence", .prepare = split_seq_prepare, .run = split_seq_run},
  {.name = "ConcatFromSequence", .prepare = concat_seq_prepare, .run = concat_seq_run},
  {.name = "Optional", .prepare = optional_prepare, .run = optional_run},
  {.name = "OptionalHasElement", .prepare = has_element_prepare, .run = has_element_run},
  {.name = "OptionalGetElement", .prepare = get_element_prepare, .run = box_copy_run},
  {.name = "Identity", .domain = "nn.box", .prepare = box_identity_prepare, .run = box_copy_run},
  {0},
};
