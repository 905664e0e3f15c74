/* vk_registry.c - op lookup over the Vulkan family tables.
 *
 * Each vk_<family>.c exports a 0-terminated nn_vk_ops_<family>[] (the
 * families of the CPU backend, runtime/cpu/registry.c; gather has no Vulkan
 * op yet).  An op type appears in one table only, so the order below does
 * not matter.  Adding a family: its file vk_<family>.c (meson finds it and
 * generates vulkan/vk_families.h from ops/families.txt). */
#include <string.h>

#include "vk_op_util.h"

#define NN_VK_FAMILY_ENTRY(f) nn_vk_ops_##f,
static const nn_vk_op *const families[] = {NN_VK_FAMILY_LIST(NN_VK_FAMILY_ENTRY)};
#undef NN_VK_FAMILY_ENTRY

const nn_vk_op *nn_vk_op_find(const nn_node *n) {
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
    return NULL;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const nn_vk_op *op = families[f]; op->name; op++)
      if (strcmp(op->name, n->op_type) == 0)
        return op;
  return NULL;
}

bool nn_vk_op_supported(const nn_vk_ctx *ctx, const nn_node *n) {
  const nn_vk_op *op = nn_vk_op_find(n);
  return op && op->supports(ctx, n);
}
