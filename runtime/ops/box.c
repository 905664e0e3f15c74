/* box.c - the box helpers of box.h. */
#include <string.h>

#include "nn_limits.h"
#include "ops/box.h"

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

nn_status nn_node_boxes(nn_ctx *c, nn_node *n, int n_boxes, const int *n_items, nn_box **boxes) {
  void *p = nn_priv_with_boxes(c, 0, n_boxes, n_items, boxes);
  if (!p)
    return c->err ? c->err->status : NN_ERR_NOMEM;
  nn_free(n->boxes);
  n->boxes = p;
  return NN_OK;
}
