/* registry.c - op lookup over the op layer's family tables, in the order of
 * ops/families.txt, and the listing of every op for the tools (nn_tool.h).
 * Each family file ops/<name>.c defines one 0-terminated (name == NULL)
 * table nn_ops_<name>: the ops, their versions, flags and shape inference.
 * The schema checks and version resolution are ops/schema.c. */
#include <string.h>

#include "include/nn_tool.h"
#include "nn_internal.h"
#include "ops/families.h"

#define NN_FAMILY_EXTERN(name) extern const nn_op_def nn_ops_##name[];
NN_FAMILY_LIST(NN_FAMILY_EXTERN)
#undef NN_FAMILY_EXTERN

#define NN_FAMILY_TABLE(name) nn_ops_##name,
static const nn_op_def *const families[] = {NN_FAMILY_LIST(NN_FAMILY_TABLE)};
#undef NN_FAMILY_TABLE

bool nn_op_domain_matches(const char *entry_domain, const char *domain) {
  if (nn_op_domain_is_default(domain))
    return nn_op_domain_is_default(entry_domain);
  return entry_domain && strcmp(entry_domain, domain) == 0;
}

const nn_op_def *nn_op_find(const char *domain, const char *op_type) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const nn_op_def *op = families[f]; op->name; op++)
      if (strcmp(op->name, op_type) == 0 && nn_op_domain_matches(op->domain, domain))
        return op;
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
