/* attr.c - node attributes: typed lookups by name and their release.
 *
 * The IR's lowest level after alloc/error: the loader fills nn_attr, the op
 * layer, the passes and every backend read through these getters, so they
 * sit below all of them (no link-level cycle through graph.c). */
#include <string.h>

#include "nn_internal.h"

void nn_attr_free(nn_attr *a) {
  nn_free(a->name);
  nn_free(a->s);
  nn_free(a->floats);
  nn_free(a->ints);
  if (a->strings)
    for (int i = 0; i < a->n; i++)
      nn_free(a->strings[i]);
  nn_free(a->strings);
  nn_aligned_free(a->t.data);
}

const nn_attr *nn_attr_get(const nn_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0)
      return &n->attrs[i];
  return NULL;
}

int64_t nn_attr_int(const nn_node *n, const char *name, int64_t def) {
  const nn_attr *a = nn_attr_get(n, name);
  return a && a->type == NN_ATTR_INT ? a->i : def;
}

float nn_attr_float(const nn_node *n, const char *name, float def) {
  const nn_attr *a = nn_attr_get(n, name);
  if (!a)
    return def;
  if (a->type == NN_ATTR_FLOAT)
    return a->f;
  if (a->type == NN_ATTR_INT)
    return (float)a->i;
  return def;
}

const char *nn_attr_string(const nn_node *n, const char *name, const char *def) {
  const nn_attr *a = nn_attr_get(n, name);
  return a && a->type == NN_ATTR_STRING ? a->s : def;
}

const int64_t *nn_attr_ints(const nn_node *n, const char *name, int *count) {
  const nn_attr *a = nn_attr_get(n, name);
  if (!a || a->type != NN_ATTR_INTS) {
    *count = 0;
    return NULL;
  }
  *count = a->n;
  return a->ints ? a->ints : (const int64_t *)"";
}

const float *nn_attr_floats(const nn_node *n, const char *name, int *count) {
  const nn_attr *a = nn_attr_get(n, name);
  if (!a || a->type != NN_ATTR_FLOATS) {
    *count = 0;
    return NULL;
  }
  *count = a->n;
  return a->floats ? a->floats : (const float *)"";
}

const nn_tensor *nn_attr_tensor(const nn_node *n, const char *name) {
  const nn_attr *a = nn_attr_get(n, name);
  return a && a->type == NN_ATTR_TENSOR ? &a->t : NULL;
}
