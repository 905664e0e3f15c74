/* registry.c - CPU kernel lookup over the family tables of ops.h, in the
 * order of ops/families.txt.  What an op is (versions, flags, shape
 * inference) is the op layer's (ops/registry.c); this finds how the CPU
 * computes it. */
#include <string.h>

#include "cpu/ops.h"

#define NN_FAMILY_TABLE(name) nn_kernels_##name,
static const nn_kernel *const families[] = {NN_FAMILY_LIST(NN_FAMILY_TABLE)};
#undef NN_FAMILY_TABLE

const nn_kernel *nn_kernel_find(const char *domain, const char *op_type) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const nn_kernel *k = families[f]; k->name; k++)
      if (strcmp(k->name, op_type) == 0 && nn_op_domain_matches(k->domain, domain))
        return k;
  return NULL;
}
