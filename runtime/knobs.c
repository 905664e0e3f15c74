/* knobs.c - the runtime's one reader of the environment (knobs.h). */
#include <stdlib.h>
#include <string.h>

#include "knobs.h"

static const char *env_str(const char *name) {
  const char *v = getenv(name);
  return v && v[0] ? v : NULL;
}

/* Set and not "0". */
static bool env_flag(const char *name) {
  const char *v = getenv(name);
  return v && v[0] && strcmp(v, "0") != 0;
}

/* -1 when unset; otherwise clamped to [lo, hi]. */
static int env_int(const char *name, int lo, int hi) {
  const char *v = getenv(name);
  if (!v || !v[0])
    return -1;
  long x = strtol(v, NULL, 10);
  return x < lo ? lo : x > hi ? hi : (int)x;
}

nn_knobs_t nn_knobs(void) {
  nn_knobs_t k;
  k.cpu = env_str("NN_CPU");
  /* presence is what these always meant (NN_NO_PACK=0 included) */
  k.no_winograd = getenv("NN_NO_WINOGRAD") != NULL;
  k.no_direct = getenv("NN_NO_DIRECT") != NULL;
  k.no_vnni = getenv("NN_NO_VNNI") != NULL;
  k.no_fusion = getenv("NN_NO_FUSION") != NULL;
  k.no_pack = getenv("NN_NO_PACK") != NULL;
  k.spin_us = env_int("NN_SPIN_US", 0, 100000);
  k.thread_tune = env_int("NN_THREAD_TUNE", 0, 1);
  k.profile = env_flag("NN_PROFILE") ? env_int("NN_PROFILE", 1, 1 << 20) : 0;
  k.vulkan_device = env_str("NN_VULKAN_DEVICE");
  k.vulkan_validation = env_flag("NN_VULKAN_VALIDATION");
  k.vulkan_unified = env_int("NN_VULKAN_UNIFIED", 0, 1);
  k.vulkan_cpu_ops = env_str("NN_VULKAN_CPU_OPS");
  return k;
}
