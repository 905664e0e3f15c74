/* vk_op_util.c - the out-of-line helpers several Vulkan op families share
 * (see vk_op_util.h): the fused activation, the byte copy of view-like ops,
 * and the dim collapsing of the strided kernels. */
#include "ops/activation.h"
#include "vk_op_util.h"

/* The planner's nn_act (ops/activation.h) carries the shaders' own codes
 * (shaders/nn_vk_kinds.h includes ops/act_kinds.h): it passes through. */
bool nn_vk_fused_act(const nn_node *n, nn_vk_act *a) {
  *a = (nn_vk_act){n->act.kind, n->act.a, n->act.b};
  switch (n->act.kind) {
  case NN_ACT_NONE:
  case NN_ACT_RELU:
  case NN_ACT_LEAKY_RELU:
  case NN_ACT_CLIP:
  case NN_ACT_SIGMOID:
  case NN_ACT_SILU:
  case NN_ACT_GELU:
  case NN_ACT_HARD_SWISH: return true;
  default: return false;
  }
}

nn_status nn_vk_copy_through(nn_vk_rec *r, const nn_node *n, nn_error *err) {
  nn_vk_tensor x, y;
  TRY(in_t(r, n, 0, &x, err));
  TRY(out_t(r, n, 0, &y, err));
  if (same_view(&x, &y) || n->y[0]->nbytes == 0)
    return NN_OK;
  x.size = y.size = n->y[0]->nbytes;
  return nn_vk_exec_copy(nn_vk_rec_exec(r), &x, &y, err);
}

int nn_vk_collapse2(int rank, const int64_t *dims, const int64_t *s1, const int64_t *s2,
                    int64_t *od, int64_t *o1, int64_t *o2) {
  int r = 0;
  for (int k = 0; k < rank; k++) {
    if (dims[k] == 1)
      continue;
    if (r > 0 && o1[r - 1] == s1[k] * dims[k] && o2[r - 1] == s2[k] * dims[k]) {
      od[r - 1] *= dims[k];
      o1[r - 1] = s1[k];
      o2[r - 1] = s2[k];
      continue;
    }
    od[r] = dims[k];
    o1[r] = s1[k];
    o2[r] = s2[k];
    r++;
  }
  if (r == 0) {
    od[0] = 1;
    o1[0] = o2[0] = 0;
    r = 1;
  }
  return r;
}
