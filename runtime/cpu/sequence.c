/* sequence.c - CPU kernels of the sequence and optional ops: SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
 * SequenceLength, SplitToSequence, ConcatFromSequence (11), Optional,
 * OptionalHasElement, OptionalGetElement (15/18), and Identity of a boxed
 * value.
 *
 * A sequence is planned like a tensor: the op layer (ops/sequence.c) fixes
 * its length and every item's shape when the node is prepared, its header
 * in the node's boxes; its items live in its value's bytes (the arena), and
 * run binds them there.  Sequences that grow in a loop are the Loop's
 * business (control.c): it plans its body again when what it carries
 * changes.
 */
#include <string.h>

#include "cpu/ops.h"
#include "ops/box.h"
#include "ops/sequence.h"

/* Copy items of src (already bound) into dst (bound here to y's bytes), dst
 * item j taking src item map[j] (-1: from the tensor t). */
static void copy_items(nn_box *dst, nn_value *y) {
  nn_box_bind(dst, y->data);
}

/* ---- SequenceEmpty / SequenceConstruct --------------------------------------------- */
static nn_status seq_nothing_run(nn_ctx *c, nn_node *n) {
  (void)c;
  if (n->y[0] && n->y[0]->box)
    nn_box_bind(n->y[0]->box, n->y[0]->data);
  return NN_OK;
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

/* The position (ops/sequence.h) for run; SequenceAt's too. */
static nn_status seq_edit_prepare(nn_ctx *c, nn_node *n) {
  seq_edit *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  return nn_seq_position(c, n, n->x[0]->box, &p->pos);
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
static nn_status seq_at_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_box *s = n->x[0]->box;
  int64_t pos = ((const seq_edit *)n->priv)->pos;
  if (n->y[0]->nbytes)
    memcpy(n->y[0]->data, s->items[pos].data, n->y[0]->nbytes);
  return NN_OK;
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
  split_seq *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_norm_axis(nn_attr_int(n, "axis", 0), x->rank, &p->axis);
  p->len = x->dims[p->axis];
  p->outer = nn_dims_numel(p->axis, x->dims);
  p->inner = (int64_t)nn_dtype_size(x->dtype) *
             nn_dims_numel(x->rank - p->axis - 1, x->dims + p->axis + 1);
  return NN_OK;
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
  const nn_value *y = n->y[0];
  concat_seq *p = nn_malloc(sizeof *p);
  if (!p)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  n->priv = p;
  nn_norm_axis(nn_attr_int(n, "axis", 0), y->rank, &p->axis);
  p->total = y->dims[p->axis];
  p->outer = nn_dims_numel(p->axis, y->dims);
  p->inner = (int64_t)nn_dtype_size(y->dtype) *
             nn_dims_numel(y->rank - p->axis - 1, y->dims + p->axis + 1);
  return NN_OK;
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

static nn_status has_element_run(nn_ctx *c, nn_node *n) {
  (void)c;
  const nn_value *x = n->n_in > 0 ? n->x[0] : NULL;
  bool has = x && (x->vtype != NN_VT_OPTIONAL || (x->box && !x->box->none));
  *(uint8_t *)n->y[0]->data = has;
  return NN_OK;
}

const nn_kernel nn_kernels_sequence[] = {
  {.name = "SequenceEmpty", .run = seq_nothing_run},
  {.name = "SequenceConstruct", .run = seq_construct_run},
  {.name = "SequenceInsert", .prepare = seq_edit_prepare, .run = seq_insert_run},
  {.name = "SequenceErase", .prepare = seq_edit_prepare, .run = seq_erase_run},
  {.name = "SequenceAt", .prepare = seq_edit_prepare, .run = seq_at_run},
  {.name = "SequenceLength", .run = seq_length_run},
  {.name = "SplitToSequence", .prepare = split_seq_prepare, .run = split_seq_run},
  {.name = "ConcatFromSequence", .prepare = concat_seq_prepare, .run = concat_seq_run},
  {.name = "Optional", .run = optional_run},
  {.name = "OptionalHasElement", .run = has_element_run},
  {.name = "OptionalGetElement", .run = box_copy_run},
  {.name = "Identity", .domain = "nn.box", .run = box_copy_run},
  {0},
};
