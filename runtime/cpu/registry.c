/* registry.c - op lookup over the family tables of ops.h. */
#include <string.h>

#include "cpu/ops.h"

static const nn_op_def *const families[] = {
  nn_ops_unary, nn_ops_binary, nn_ops_cast, nn_ops_conv, nn_ops_pool,
  nn_ops_norm, nn_ops_gemm, nn_ops_reduce, nn_ops_softmax, nn_ops_shape,
  nn_ops_transform, nn_ops_gather, nn_ops_resize, nn_ops_misc,
};

static bool is_default_domain(const char *d) {
  return d == NULL || d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

const nn_op_def *nn_op_find(const char *domain, const char *op_type) {
  bool want_default = is_default_domain(domain);
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    for (const nn_op_def *op = families[f]; op->name; op++) {
      if (strcmp(op->name, op_type) != 0)
        continue;
      if (want_default ? is_default_domain(op->domain)
                       : (op->domain && strcmp(op->domain, domain) == 0))
        return op;
    }
  }
  return NULL;
}

int nn_op_resolve_version(const nn_op_def *op, int opset) {
  int best = 0;
  for (int i = 0; i < NN_MAX_VERSIONS && op->versions[i]; i++)
    if (op->versions[i] <= opset)
      best = op->versions[i];
  return best;
}
