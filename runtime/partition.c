/* partition.c - which plan steps a backend takes (backend.h).
 *
 * Generic: the backend is asked node by node, as prepared for the current
 * plan; what it refuses runs on the host through the reference kernels.
 * One greedy pass in execution order: the backend groups consecutive host
 * steps into one segment itself.
 */
#include <string.h>

#include "backend.h"
#include "knobs.h"

/* Is op in the comma-separated list? */
static bool op_listed(const char *list, const char *op) {
  if (!list)
    return false;
  size_t len = strlen(op);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, op, len) == 0)
      return true;
    p += n + (end ? 1 : 0);
  }
  return false;
}

/* Sequences and optionals (boxed values) live on the host: a step that
 * reads or writes one runs there. */
static bool step_boxed(const nn_node *n) {
  for (int k = 0; k < n->n_in; k++)
    if (n->x[k] && n->x[k]->vtype != NN_VT_TENSOR)
      return true;
  for (int k = 0; k < n->n_out; k++)
    if (n->y[k] && n->y[k]->vtype != NN_VT_TENSOR)
      return true;
  return false;
}

/* Strings stay on the host: their elements are views on host memory
 * (nn_strings.h), which no device kernel can follow. */
static bool step_strings(const nn_node *n) {
  for (int k = 0; k < n->n_in; k++)
    if (n->x[k] && n->x[k]->dtype == NN_DTYPE_STRING)
      return true;
  for (int k = 0; k < n->n_out; k++)
    if (n->y[k] && n->y[k]->dtype == NN_DTYPE_STRING)
      return true;
  return false;
}

int nn_partition_steps(const nn_backend_iface *b, const void *state, const nn_graph *g,
                       const nn_plan *plan, bool *on_device) {
  const char *force_host = nn_knobs().vulkan_cpu_ops;
  int n_dev = 0;
  for (int k = 0; k < plan->n_steps; k++) {
    const nn_node *n = &g->nodes[plan->steps[k]];
    on_device[k] = (!b->supports_node || b->supports_node(state, n)) &&
                   !op_listed(force_host, n->op_type) && !step_boxed(n) &&
                   !step_strings(n);
    n_dev += on_device[k];
  }
  return n_dev;
}
