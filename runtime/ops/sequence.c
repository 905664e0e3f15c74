/* sequence.c - the sequence family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_sequence[], collected by ops/registry.c).
 *
 * A sequence is planned like a tensor: its length and every item's shape are
 * fixed when the node is prepared (positions must then be known); infer
 * describes a boxed output in the node's boxes (ops/box.h). */
#include <string.h>

#include "nn_limits.h"
#include "ops/box.h"
#include "ops/sequence.h"

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

nn_status nn_seq_position(nn_ctx *c, const nn_node *n, const nn_box *s, int64_t *pos) {
  nn_status st;
  if (strcmp(n->op_type, "SequenceInsert") == 0) {
    *pos = s->n;
    if (n->n_in > 2 && n->x[2]) {
      if ((st = scalar_pos(c, n->x[2], pos)) != NN_OK)
        return st;
      if (*pos < -(int64_t)s->n || *pos > s->n)
        return nn_fail(c, NN_ERR_INVALID_MODEL, "position %lld is out of [-%d, %d]",
                       (long long)*pos, s->n, s->n);
      if (*pos < 0)
        *pos += s->n;
    }
    return NN_OK;
  }
  /* SequenceErase (default: the last item) and SequenceAt */
  *pos = s->n - 1;
  if (n->n_in > 1 && n->x[1]) {
    if ((st = scalar_pos(c, n->x[1], pos)) != NN_OK)
      return st;
    if (*pos < 0)
      *pos += s->n;
  }
  if (*pos < 0 || *pos >= s->n)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "position is out of the sequence's %d items", s->n);
  return NN_OK;
}

/* A new sequence box of `items` items of dtype dt in the node's boxes. */
static nn_box *new_seq(nn_ctx *c, nn_node *n, int items, nn_dtype dt) {
  nn_box *b = NULL;
  if (nn_node_boxes(c, n, 1, &items, &b) != NN_OK)
    return NULL;
  b->vtype = NN_VT_SEQUENCE;
  b->elem_dtype = dt;
  return b;
}

/* ---- SequenceEmpty / SequenceConstruct --------------------------------------------- */
static nn_status seq_empty_infer(nn_ctx *c, nn_node *n) {
  nn_dtype dt = (nn_dtype)nn_attr_int(n, "dtype", NN_DTYPE_FLOAT);
  if (nn_dtype_size(dt) == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "dtype %d is not supported", (int)dt);
  nn_box *b = new_seq(c, n, 0, dt);
  if (!b)
    return c->err ? c->err->status : NN_ERR_NOMEM;
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status seq_construct_infer(nn_ctx *c, nn_node *n) {
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

/* ---- SequenceInsert / SequenceErase ---------------------------------------------- */
static nn_status seq_insert_infer(nn_ctx *c, nn_node *n) {
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
  int64_t pos;
  if ((st = nn_seq_position(c, n, s, &pos)) != NN_OK)
    return st;
  nn_box *b = new_seq(c, n, s->n + 1, t->dtype);
  if (!b)
    return c->err->status;
  for (int i = 0, j = 0; i < b->n; i++) {
    if (i == pos)
      nn_box_item_set(&b->items[i], t->dtype, t->rank, t->dims);
    else
      b->items[i] = s->items[j++];
  }
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status seq_erase_infer(nn_ctx *c, nn_node *n) {
  nn_status st;
  const nn_box *s = in_seq(c, n, 0, &st);
  if (!s)
    return st;
  int64_t pos;
  if ((st = nn_seq_position(c, n, s, &pos)) != NN_OK)
    return st;
  nn_box *b = new_seq(c, n, s->n - 1, s->elem_dtype);
  if (!b)
    return c->err->status;
  for (int i = 0, j = 0; i < s->n; i++)
    if (i != pos)
      b->items[j++] = s->items[i];
  return nn_set_box_output(c, n->y[0], b);
}

/* ---- SequenceAt / SequenceLength --------------------------------------------------- */
static nn_status seq_at_infer(nn_ctx *c, nn_node *n) {
  nn_status st;
  const nn_box *s = in_seq(c, n, 0, &st);
  if (!s)
    return st;
  int64_t pos;
  if ((st = nn_seq_position(c, n, s, &pos)) != NN_OK)
    return st;
  const nn_tensor *it = &s->items[pos];
  return nn_set_output(c, n->y[0], it->dtype, it->rank, it->dims);
}

static nn_status seq_length_infer(nn_ctx *c, nn_node *n) {
  nn_status st;
  if (!in_seq(c, n, 0, &st))
    return st;
  return nn_set_output(c, n->y[0], NN_DTYPE_INT64, 0, NULL);
}

/* ---- SplitToSequence / ConcatFromSequence ------------------------------------------ */
static nn_status split_seq_infer(nn_ctx *c, nn_node *n) {
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
  nn_box *b = new_seq(c, n, (int)count, x->dtype);
  if (!b)
    return c->err->status;
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

static nn_status concat_seq_infer(nn_ctx *c, nn_node *n) {
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
  return nn_set_output(c, n->y[0], t0->dtype, r, dims);
}

/* ---- Optional* ------------------------------------------------------------------------ */
/* An output box with the layout of in (a box), in the node's boxes. */
static nn_status box_like_infer(nn_ctx *c, nn_node *n, const nn_box *in, nn_vtype vt) {
  nn_box *b = NULL;
  int items = in->n;
  nn_status st = nn_node_boxes(c, n, 1, &items, &b);
  if (st != NN_OK)
    return st;
  nn_box_copy_desc(b, in);
  b->vtype = vt;
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status box_identity_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (x->vtype == NN_VT_TENSOR)
    return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
  return box_like_infer(c, n, x->box, x->vtype);
}

static nn_status optional_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  nn_box *b = NULL;
  int items;
  nn_status st;
  if (!x) {
    items = 0;
    if ((st = nn_node_boxes(c, n, 1, &items, &b)) != NN_OK)
      return st;
    b->vtype = NN_VT_OPTIONAL;
    b->none = true;
    return nn_set_box_output(c, n->y[0], b);
  }
  if (x->vtype == NN_VT_SEQUENCE) {
    st = box_like_infer(c, n, x->box, NN_VT_OPTIONAL);
    if (st == NN_OK)
      n->y[0]->box->elem_is_seq = true;
    return st;
  }
  if (x->vtype != NN_VT_TENSOR)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "an optional of an optional");
  items = 1;
  if ((st = nn_node_boxes(c, n, 1, &items, &b)) != NN_OK)
    return st;
  b->vtype = NN_VT_OPTIONAL;
  b->elem_dtype = x->dtype;
  nn_box_item_set(&b->items[0], x->dtype, x->rank, x->dims);
  return nn_set_box_output(c, n->y[0], b);
}

static nn_status has_element_infer(nn_ctx *c, nn_node *n) {
  return nn_set_output(c, n->y[0], NN_DTYPE_BOOL, 0, NULL);
}

static nn_status get_element_infer(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  if (!x)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "needs an input");
  if (x->vtype == NN_VT_TENSOR)
    return nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
  if (x->vtype == NN_VT_SEQUENCE)
    return box_like_infer(c, n, x->box, NN_VT_SEQUENCE);
  if (x->box->none)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "the optional input holds no element");
  if (x->box->elem_is_seq) {
    nn_status st = box_like_infer(c, n, x->box, NN_VT_SEQUENCE);
    if (st == NN_OK)
      n->y[0]->box->elem_is_seq = false;
    return st;
  }
  const nn_tensor *it = &x->box->items[0];
  return nn_set_output(c, n->y[0], it->dtype, it->rank, it->dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference: a sequence or optional output is described in full (item
 * count, item shapes) in the node's boxes. */
const nn_op_def nn_ops_sequence[] = {
  {.name = "SequenceEmpty", .versions = {11}, .flags = NN_OP_BOXES, .infer = seq_empty_infer},
  {.name = "SequenceConstruct", .versions = {11}, .flags = NN_OP_BOXES,
   .infer = seq_construct_infer},
  {.name = "SequenceInsert", .versions = {11}, .shape_inputs = 1u << 2, .flags = NN_OP_BOXES,
   .infer = seq_insert_infer},
  {.name = "SequenceErase", .versions = {11}, .shape_inputs = 1u << 1, .flags = NN_OP_BOXES,
   .infer = seq_erase_infer},
  {.name = "SequenceAt", .versions = {11}, .shape_inputs = 1u << 1, .flags = NN_OP_BOXES,
   .infer = seq_at_infer},
  {.name = "SequenceLength", .versions = {11}, .flags = NN_OP_BOXES, .infer = seq_length_infer},
  {.name = "SplitToSequence", .versions = {11}, .shape_inputs = 1u << 1, .flags = NN_OP_BOXES,
   .infer = split_seq_infer},
  {.name = "ConcatFromSequence", .versions = {11}, .flags = NN_OP_BOXES,
   .infer = concat_seq_infer},
  {.name = "Optional", .versions = {15}, .flags = NN_OP_BOXES, .infer = optional_infer},
  {.name = "OptionalHasElement", .versions = {15, 18}, .flags = NN_OP_BOXES,
   .infer = has_element_infer},
  {.name = "OptionalGetElement", .versions = {15, 18}, .flags = NN_OP_BOXES,
   .infer = get_element_infer},
  /* Identity of a boxed value (nn_node.box_op, resolved at finalize) */
  {.name = "Identity", .domain = "nn.box", .versions = {1}, .flags = NN_OP_BOXES,
   .infer = box_identity_infer},
  {0},
};
