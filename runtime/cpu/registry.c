/* registry.c - op lookup over the family tables of ops.h, in the order of
 * ops/families.txt, and the listing of every op for the tools (nn_tool.h).
 * The schema checks and version resolution every backend shares are
 * ops/schema.c. */
#include <string.h>

#include "cpu/ops.h"
#include "include/nn_tool.h"

#define NN_FAMILY_TABLE(name) nn_ops_##name,
static const nn_op_def *const families[] = {NN_FAMILY_LIST(NN_FAMILY_TABLE)};
#undef NN_FAMILY_TABLE

const nn_op_def *nn_op_find(const char *domain, const char *op_type) {
  bool want_default = nn_op_domain_is_default(domain);
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    for (const nn_op_def *op = families[f]; op->name; op++) {
      if (strcmp(op->name, op_type) != 0)
        continue;
      if (want_default ? nn_op_domain_is_default(op->domain)
                       : (op->domain && strcmp(op->domain, domain) == 0))
        return op;
    }
  }
  return NULL;
}

void nn_op_list(nn_op_list_fn fn, void *user) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const nn_op_def *op = families[f]; op->name; op++) {
      int nv = 0;
      while (nv < NN_MAX_VERSIONS && op->versions[nv])
        nv++;
      fn(user, op->domain ? op->domain : "", op->name, op->versions, nv);
    }
}
