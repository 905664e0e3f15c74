/* vk_shape.c - the view ops of the shape family on the Vulkan backend
 * (Reshape, Flatten, (Un)Squeeze, Identity, Dropout at inference): the bytes
 * of x, usually shared with y by the planner, else one transfer
 * (nn_vk_copy_through).  No kernel.  The CPU side is cpu/shape.c. */
#include "vk_op_util.h"

/* ---- ops -------------------------------------------------------------------------- */

/* Reshape, Flatten, (Un)Squeeze, Identity (any dtype), Dropout at
 * inference: the bytes of x.  The planner usually lets y share x's bytes,
 * then there is nothing to do. */
static bool view_supports(const nn_vk_ctx *ctx, const nn_node *n) {
  (void)ctx;
  if (n->n_in < 1 || !n->x[0] || n->n_out < 1 || !n->y[0] || n->x[0]->nbytes != n->y[0]->nbytes)
    return false;
  if (n->x[0]->dtype == NN_DTYPE_STRING)
    return false;
  for (int k = 1; k < n->n_out; k++)
    if (n->y[k])
      return false;   /* Dropout's mask */
  /* Dropout before opset 7: an identity at inference whatever is_test
   * says, as on the CPU (cpu/shape.c) */
  /* Dropout 12: training_mode input must be absent or false */
  if (op_is(n, "Dropout") && n->n_in > 2 && n->x[2]) {
    if (!known_value(n->x[2]) || ((const unsigned char *)n->x[2]->data)[0] != 0)
      return false;
  }
  return true;
}

/* ---- the table -------------------------------------------------------------------- */

const nn_vk_op nn_vk_ops_shape[] = {
    {"Reshape", view_supports, nn_vk_copy_through},
    {"Flatten", view_supports, nn_vk_copy_through},
    {"Squeeze", view_supports, nn_vk_copy_through},
    {"Unsqueeze", view_supports, nn_vk_copy_through},
    {"Identity", view_supports, nn_vk_copy_through},
    {"Dropout", view_supports, nn_vk_copy_through},
    {0},
};
