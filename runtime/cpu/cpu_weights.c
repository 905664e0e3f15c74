/* cpu_weights.c - packing of the CPU kernels' weights (cpu_weights.h). */
#include <string.h>

#include "cpu/cpu_weights.h"
#include "cpu/sgemm.h"
#include "knobs.h"

static int vidx(const nn_graph *g, const nn_value *v) {
  if (v < g->values || v >= g->values + g->n_values)
    return -1;
  return (int)(v - g->values);
}

size_t nn_plan_packed_a_group_bytes(int64_t rows, int64_t cols) {
  return nn_align_up(nn_sgemm_pack_a_size(rows, cols), 64);
}

/* Geometry of a constant as `groups` row blocks: rows per group and columns;
 * false when it does not split that way. */
static bool packed_a_geometry(const nn_value *v, int64_t groups, int64_t *rows, int64_t *cols,
                              size_t *group_bytes, size_t *total) {
  if (groups <= 0 || v->rank < 1 || v->dims[0] <= 0 || v->dims[0] % groups != 0 ||
      v->dtype != NN_DTYPE_FLOAT)
    return false;
  *rows = v->dims[0] / groups;
  *cols = v->numel / v->dims[0];
  *group_bytes = nn_plan_packed_a_group_bytes(*rows, *cols);
  return !nn_mul_overflow_size((size_t)groups, *group_bytes, total);
}

/* Back to the ONNX layout, before anything of a new plan reads the weights. */
nn_status nn_cpu_weights_restore(nn_graph *g, nn_error *err) {
  for (int v = 0; v < g->n_values; v++) {
    nn_value *val = &g->values[v];
    if (val->packed_a_groups <= 0)
      continue;
    int64_t rows, cols;
    size_t gb, total;
    if (!packed_a_geometry(val, val->packed_a_groups, &rows, &cols, &gb, &total))
      return nn_error_set(err, NN_ERR_RUNTIME, "constant '%s': bad packed layout", val->name);
    float *raw = nn_aligned_alloc(val->nbytes ? val->nbytes : 1);
    if (!raw)
      return nn_error_set(err, NN_ERR_NOMEM, "out of memory restoring '%s' (%zu bytes)", val->name,
                          val->nbytes);
    for (int64_t gi = 0; gi < val->packed_a_groups; gi++)
      if (nn_sgemm_unpack_a((const char *)val->const_data + (size_t)gi * gb, rows, cols,
                            raw + gi * rows * cols) != NN_OK) {
        nn_aligned_free(raw);
        return nn_error_set(err, NN_ERR_RUNTIME, "constant '%s': bad packed layout", val->name);
      }
    g->weights_bytes -= total;
    g->weights_bytes += val->nbytes;
    nn_aligned_free(val->const_data);
    val->const_data = raw;
    val->data = raw;
    val->packed_a_groups = 0;
  }
  return NN_OK;
}

/* A weight qualifies when this Conv alone reads it:
 * an initializer (unpacked again before a re-plan), a value folded for this
 * plan, or a copy a fusion pass made for this Conv (both rebuilt by every
 * plan).  uses[v] counts every reader of v, folded and fused nodes
 * included, and graph outputs. */
nn_status nn_cpu_weights_pack(nn_graph *g, nn_plan *plan, nn_error *err) {
  nn_status st = NN_OK;
  if (nn_knobs().no_pack)
    return NN_OK;
  int *uses = nn_calloc((size_t)g->n_values + 1, sizeof(int));
  if (!uses)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int i = 0; i < g->n_nodes; i++) {
    const nn_node *n = &g->nodes[i];
    if (n->removed)
      continue;
    /* in[] as loaded (a fusion may have given the node one more input,
     * a plan-owned value, through x[] only) */
    for (int k = 0; k < n->n_in_model; k++)
      if (n->in[k] >= 0)
        uses[n->in[k]]++;
  }
  for (int s = 0; s < plan->n_steps; s++) {
    nn_node *n = &g->nodes[plan->steps[s]];
    if (!n->kern->const_a_groups || n->n_in < 2 || !n->x[1])
      continue;
    nn_value *w = n->x[1];
    int v = vidx(g, w);
    bool plan_owned = w->fold_data && w->data == w->fold_data;
    bool exclusive = v < 0 || (uses[v] == 1 && !w->is_graph_output && !w->has_default);
    bool initializer = v >= 0 && w->kind == NN_VAL_CONST && w->const_data &&
                       w->data == w->const_data;
    if (w->packed_a_groups || !exclusive || !(plan_owned || initializer))
      continue;
    int64_t groups = n->kern->const_a_groups(n), rows, cols;
    size_t gb, total;
    if (groups <= 0 || !packed_a_geometry(w, groups, &rows, &cols, &gb, &total))
      continue;
    void *block = nn_aligned_alloc(total);
    if (!block) {
      st = nn_error_set(err, NN_ERR_NOMEM, "out of memory packing '%s' (%zu bytes)", w->name, total);
      goto out_free_uses;
    }
    for (int64_t gi = 0; gi < groups; gi++)
      nn_sgemm_pack_a(0, rows, cols, (const float *)w->data + gi * rows * cols, cols,
                      (char *)block + (size_t)gi * gb);
    /* one weight at a time: the original goes before the next is packed */
    if (plan_owned) {
      nn_aligned_free(w->fold_data);
      w->fold_data = block;
      plan->folded_bytes += total - w->nbytes;
    } else {
      nn_aligned_free(w->const_data);
      w->const_data = block;
      g->weights_bytes += total - w->nbytes;
    }
    w->data = block;
    w->packed_a_groups = groups;
  }
out_free_uses:
  nn_free(uses);
  return st;
}

