/* inputs.c - integer-list inputs, axis lists, held dtypes and mode attributes at
 * prepare (inputs.h). */
#include <string.h>

#include "ops/inputs.h"

nn_status nn_op_ints(nn_ctx *c, const nn_value *v, const char *what, int64_t *out, int max,
                     int *count) {
  *count = 0;
  if (!v || !v->data)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "input '%s' must be known when the model is prepared",
                   what);
  if (!nn_dtype_is_int(v->dtype))
    return nn_fail(c, NN_ERR_DTYPE, "input '%s' must be an integer tensor, got %s", what,
                   nn_dtype_name(v->dtype));
  if (v->rank > 1)
    return nn_fail(c, NN_ERR_SHAPE, "input '%s' must be 1-D, got rank %d", what, v->rank);
  if (v->numel > max)
    return nn_fail(c, NN_ERR_LIMIT, "input '%s' has %lld values, at most %d are allowed", what,
                   (long long)v->numel, max);
  for (int64_t i = 0; i < v->numel; i++)
    out[i] = nn_value_get_int(v, i);
  *count = (int)v->numel;
  return NN_OK;
}

nn_status nn_op_norm_axes(nn_ctx *c, const int64_t *axes, int n, int rank, int *out,
                          const char *what) {
  for (int i = 0; i < n; i++) {
    if (!nn_norm_axis(axes[i], rank, &out[i]))
      return nn_fail(c, NN_ERR_INVALID_MODEL, "%s value %lld is out of range for rank %d", what,
                     (long long)axes[i], rank);
    for (int j = 0; j < i; j++)
      if (out[j] == out[i])
        return nn_fail(c, NN_ERR_INVALID_MODEL, "%s repeats axis %d", what, out[i]);
  }
  return NN_OK;
}

nn_status nn_op_attr_choice(nn_ctx *c, const nn_node *n, const char *name, const char *def,
                            const char *const *choices, int *out) {
  const char *v = nn_attr_string(n, name, def);
  for (int i = 0; choices[i]; i++) {
    if (strcmp(v, choices[i]) == 0) {
      *out = i;
      return NN_OK;
    }
  }
  return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported %s '%s'", name, v);
}

nn_status nn_op_held(nn_ctx *c, const nn_value *v) {
  if (nn_dtype_size(v->dtype) == 0)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "data type %s is not supported", nn_dtype_name(v->dtype));
  return NN_OK;
}
