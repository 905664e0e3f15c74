/* vk_cast.c - Cast on the Vulkan backend: only the same-type Cast, a byte
 * copy (nn_vk_copy_through); converting casts run on the CPU.  The CPU side
 * is cpu/cast.c. */
#include "vk_op_util.h"

/* ---- ops -------------------------------------------------------------------------- */

static bool cast_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  return n->n_in >= 1 && n->x[0] && n->y[0] && n->x[0]->dtype == n->y[0]->dtype &&
         n->x[0]->dtype != NN_DTYPE_STRING && fits(ctx, n->x[0]);
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_cast[] = {
    {"Cast", cast_supports, nn_vk_copy_through},
    {0},
};
