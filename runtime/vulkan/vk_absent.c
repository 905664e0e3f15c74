/* vk_absent.c - what a build without Vulkan answers (built instead of the
 * backend's sources when meson finds no Vulkan). */
#include "backend.h"

const nn_backend_iface *nn_backend_vulkan(void) {
  return NULL;
}

nn_status nn_vulkan_available(nn_error *err) {
  return nn_error_set(err, NN_ERR_UNSUPPORTED, "this build has no Vulkan backend");
}

uint64_t nn_vulkan_validation_messages(void) {
  return 0;
}
