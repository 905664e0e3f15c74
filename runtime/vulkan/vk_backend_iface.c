/* vk_backend_iface.c - the Vulkan backend behind backend.h: a thin adapter
 * over nn_vk_graph (vk_graph.c), which records the plan for the device, host
 * steps included. */
#include "backend.h"
#include "vulkan/vk_backend.h"

static nn_status vkb_create(void **state, nn_error *err) {
  nn_vk_graph *vg = NULL;
  nn_status st = nn_vk_graph_create(&vg, err);
  *state = vg;
  return st;
}

static bool vkb_is_software(const void *state) {
  return nn_vk_graph_on_cpu_device(state);
}

static bool vkb_supports_node(const void *state, const nn_node *n) {
  return nn_vk_graph_supports(state, n);
}

static nn_status vkb_build(void *state, nn_graph *g, nn_plan *plan, const bool *on_device,
                           nn_ctx *ctx, nn_error *err) {
  return nn_vk_graph_build(state, g, plan, on_device, ctx, err);
}

static nn_status vkb_run(void *state, nn_ctx *ctx, nn_error *err) {
  (void)ctx; /* the graph keeps the context it was built with */
  return nn_vk_graph_run(state, err);
}

static void vkb_stats(const void *state, nn_backend_stats *st) {
  nn_vk_graph_stats vs;
  nn_vk_graph_get_stats(state, &vs);
  *st = (nn_backend_stats){0};
  st->nodes_host = vs.nodes_cpu;
  st->nodes_device = vs.nodes_vulkan;
  st->device_bytes = vs.device_bytes;
  st->staging_bytes = vs.staging_bytes;
}

static void vkb_destroy(void *state) {
  nn_vk_graph_destroy(state);
}

static const nn_backend_iface vk_iface = {
  .name = "vulkan",
  .kind = NN_BACKEND_VULKAN,
  .create = vkb_create,
  .is_software = vkb_is_software,
  .supports_node = vkb_supports_node,
  .before_plan = NULL,
  .build = vkb_build,
  .run = vkb_run,
  .stats = vkb_stats,
  .destroy = vkb_destroy,
};

const nn_backend_iface *nn_backend_vulkan(void) {
  return &vk_iface;
}
