/* vk_context.c - the process-wide Vulkan context: instance, device, compute
 * queue, pipeline cache, and the validation messenger.
 *
 * One context serves every session of the process: creating a VkInstance
 * and VkDevice costs milliseconds to seconds (driver and layer loading), and
 * a device shared by sessions lets them share the pipeline cache.  The
 * context is refcounted under one process-wide mutex and destroyed with its
 * last reference, so a process that disposes its last session holds no
 * Vulkan object at all (memory rule 7).
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "vk_backend.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static nn_vk_ctx *g_ctx;               /* guarded by g_lock */
static atomic_uint_fast64_t g_messages;         /* validation + performance */
static atomic_uint_fast64_t g_general_messages; /* loader and layer chatter */
static atomic_uint_fast64_t g_generation;

static const char k_validation_layer[] = "VK_LAYER_KHRONOS_validation";

uint64_t nn_vk_validation_messages(void) { return atomic_load(&g_messages); }
uint64_t nn_vulkan_validation_messages(void) { return atomic_load(&g_messages); }
uint64_t nn_vk_general_messages(void) { return atomic_load(&g_general_messages); }
uint64_t nn_vk_ctx_generation(void) { return atomic_load(&g_generation); }

bool nn_vk_ctx_alive(void) {
  pthread_mutex_lock(&g_lock);
  bool alive = g_ctx != NULL;
  pthread_mutex_unlock(&g_lock);
  return alive;
}

const char *nn_vk_result_str(VkResult r) {
  switch (r) {
#define C(x) case x: return #x
  C(VK_SUCCESS);
  C(VK_NOT_READY);
  C(VK_TIMEOUT);
  C(VK_INCOMPLETE);
  C(VK_ERROR_OUT_OF_HOST_MEMORY);
  C(VK_ERROR_OUT_OF_DEVICE_MEMORY);
  C(VK_ERROR_INITIALIZATION_FAILED);
  C(VK_ERROR_DEVICE_LOST);
  C(VK_ERROR_MEMORY_MAP_FAILED);
  C(VK_ERROR_LAYER_NOT_PRESENT);
  C(VK_ERROR_EXTENSION_NOT_PRESENT);
  C(VK_ERROR_FEATURE_NOT_PRESENT);
  C(VK_ERROR_INCOMPATIBLE_DRIVER);
  C(VK_ERROR_TOO_MANY_OBJECTS);
  C(VK_ERROR_FORMAT_NOT_SUPPORTED);
  C(VK_ERROR_FRAGMENTED_POOL);
  C(VK_ERROR_OUT_OF_POOL_MEMORY);
  C(VK_ERROR_FRAGMENTATION);
#undef C
  default: return "VK_ERROR_(unknown)";
  }
}

nn_status nn_vk_fail(nn_error *err, VkResult r, const char *what) {
  nn_status st = (r == VK_ERROR_OUT_OF_HOST_MEMORY) ? NN_ERR_NOMEM : NN_ERR_BACKEND;
  return nn_error_set(err, st, "vulkan: %s failed: %s (%d)", what, nn_vk_result_str(r), (int)r);
}

/* Every validation warning or error is printed and counted: the tests
 * require the count to stay 0, so a message is a failure, not noise. */
static VKAPI_ATTR VkBool32 VKAPI_CALL
debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev, VkDebugUtilsMessageTypeFlagsEXT type,
         const VkDebugUtilsMessengerCallbackDataEXT *data, void *ud) {
  (void)ud;
  if (sev < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
    return VK_FALSE;
  if (type & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
              VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)) {
    atomic_fetch_add(&g_messages, 1);
  } else if (atomic_fetch_add(&g_general_messages, 1) >= 20) {
    /* the loader repeats itself on every failed attempt */
    return VK_FALSE;
  }
  nn_log(sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? NN_LOG_ERROR : NN_LOG_WARNING,
          "vulkan %s [%s%s%s] %s",
          sev >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "ERROR" : "WARNING",
          (type & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT) ? "validation" : "",
          (type & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT) ? "performance" : "",
          (type & VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT) ? "general" : "",
          data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

static bool has_layer(const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkLayerProperties *props = nn_calloc(n, sizeof *props);
  if (!props)
    return false;
  bool found = false;
  if (vkEnumerateInstanceLayerProperties(&n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(props[i].layerName, name) == 0;
  nn_free(props);
  return found;
}

static bool has_instance_ext(const char *layer, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *props = nn_calloc(n, sizeof *props);
  if (!props)
    return false;
  bool found = false;
  if (vkEnumerateInstanceExtensionProperties(layer, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(props[i].extensionName, name) == 0;
  nn_free(props);
  return found;
}

static bool has_device_ext(VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *props = nn_calloc(n, sizeof *props);
  if (!props)
    return false;
  bool found = false;
  if (vkEnumerateDeviceExtensionProperties(pd, NULL, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(props[i].extensionName, name) == 0;
  nn_free(props);
  return found;
}

static const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
  default: return "other";
  }
}

static int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
  default: return 0;
  }
}

/* First queue family with compute.  Every compute family also does
 * transfers (the spec guarantees it), which the staging copies need. */
static bool find_compute_family(VkPhysicalDevice pd, uint32_t *family) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  if (n == 0)
    return false;
  VkQueueFamilyProperties *q = nn_calloc(n, sizeof *q);
  if (!q)
    return false;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
  bool found = false;
  for (uint32_t i = 0; i < n && !found; i++) {
    if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount > 0) {
      *family = i;
      found = true;
    }
  }
  nn_free(q);
  return found;
}

static bool contains_nocase(const char *hay, const char *needle) {
  size_t nl = strlen(needle);
  for (const char *h = hay; *h; h++) {
    size_t i = 0;
    while (i < nl && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == nl)
      return true;
  }
  return nl == 0;
}

/* Pick the physical device: NN_VULKAN_DEVICE (index or name substring) when
 * set, otherwise the best type, ties to the lowest index.  Devices without
 * Vulkan 1.1 or a compute queue are not candidates. */
static nn_status pick_device(VkInstance inst, VkPhysicalDevice *out, uint32_t *out_index,
                             uint32_t *out_family, nn_error *err) {
  nn_status st = NN_OK;
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(inst, &n, NULL);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return nn_error_set(err, NN_ERR_NO_DEVICE, "vulkan: cannot enumerate devices: %s",
                        nn_vk_result_str(r));
  if (n == 0)
    return nn_error_set(err, NN_ERR_NO_DEVICE,
                        "vulkan: no Vulkan device found (is a driver/ICD installed?)");
  VkPhysicalDevice *pds = nn_calloc(n, sizeof *pds);
  if (!pds)
    return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  r = vkEnumeratePhysicalDevices(inst, &n, pds);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    st = nn_error_set(err, NN_ERR_NO_DEVICE, "vulkan: cannot enumerate devices: %s",
                      nn_vk_result_str(r));
    goto out_pds;
  }

  const char *want = nn_knobs().vulkan_device;
  bool want_index = want != NULL;
  for (const char *c = want; c && *c; c++)
    if (!isdigit((unsigned char)*c))
      want_index = false;

  int best = -1, best_rank = -1;
  char seen[256] = "";
  size_t seen_len = 0;
  for (uint32_t i = 0; i < n; i++) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pds[i], &p);
    if (seen_len < sizeof seen - 1)
      seen_len += (size_t)snprintf(seen + seen_len, sizeof seen - seen_len, "%s%u: %s (%s)",
                                   i ? ", " : "", i, p.deviceName, type_name(p.deviceType));
    if (seen_len >= sizeof seen)
      seen_len = sizeof seen - 1;
    uint32_t fam;
    if (p.apiVersion < VK_API_VERSION_1_1 || !find_compute_family(pds[i], &fam))
      continue;
    if (want_index) {
      if ((unsigned long)i == strtoul(want, NULL, 10)) {
        best = (int)i;
        break;
      }
      continue;
    }
    if (want) {
      if (contains_nocase(p.deviceName, want)) {
        best = (int)i;
        break;
      }
      continue;
    }
    if (type_rank(p.deviceType) > best_rank) {
      best_rank = type_rank(p.deviceType);
      best = (int)i;
    }
  }
  if (best < 0) {
    if (want)
      st = nn_error_set(err, NN_ERR_NO_DEVICE,
                        "vulkan: NN_VULKAN_DEVICE='%s' matches no usable device (devices: %s)",
                        want, seen);
    else
      st = nn_error_set(err, NN_ERR_NO_DEVICE,
                        "vulkan: no device with Vulkan 1.1 and a compute queue (devices: %s)",
                        seen);
    goto out_pds;
  }
  *out = pds[best];
  *out_index = (uint32_t)best;
  find_compute_family(pds[best], out_family);
out_pds:
  nn_free(pds);
  return st;
}

/* Unified memory: not a discrete GPU, and every device-local heap has a
 * memory type that is also host-visible (integrated GPUs, lavapipe).  A
 * discrete GPU with resizable BAR also maps device memory, but host reads
 * through the BAR are uncached and slow, so it keeps staging. */
static bool detect_unified(const nn_vk_ctx *c) {
  if (c->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
    return false;
  const VkPhysicalDeviceMemoryProperties *mp = &c->mem_props;
  bool any = false;
  for (uint32_t h = 0; h < mp->memoryHeapCount; h++) {
    if (!(mp->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT))
      continue;
    bool mappable = false;
    for (uint32_t t = 0; t < mp->memoryTypeCount; t++) {
      VkMemoryPropertyFlags f = mp->memoryTypes[t].propertyFlags;
      if (mp->memoryTypes[t].heapIndex == h && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
          (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        mappable = true;
    }
    if (!mappable)
      return false;
    any = true;
  }
  return any;
}

static void ctx_destroy(nn_vk_ctx *c) {
  if (c->device) {
    vkDeviceWaitIdle(c->device);
    if (c->pipeline_cache)
      vkDestroyPipelineCache(c->device, c->pipeline_cache, NULL);
    vkDestroyDevice(c->device, NULL);
  }
  if (c->messenger) {
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            c->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (destroy_messenger)
      destroy_messenger(c->instance, c->messenger, NULL);
  }
  if (c->instance)
    vkDestroyInstance(c->instance, NULL);
  pthread_mutex_destroy(&c->queue_lock);
  nn_free(c);
  nn_alloc_unpin();
}

static nn_status ctx_create(nn_vk_ctx **out, nn_error *err) {
  nn_status st = NN_OK;
  VkResult r;
  nn_vk_ctx *c = nn_calloc(1, sizeof *c);
  if (!c)
    return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  /* The allocator hooks must not change while blocks from them are live. */
  nn_alloc_pin();
  if (pthread_mutex_init(&c->queue_lock, NULL) != 0) {
    nn_free(c);
    nn_alloc_unpin();
    return nn_error_set(err, NN_ERR_BACKEND, "vulkan: cannot create a mutex");
  }

  uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS ||
      loader_version < VK_API_VERSION_1_1) {
    st = nn_error_set(err, NN_ERR_NO_DEVICE,
                      "vulkan: the Vulkan loader supports only 1.0; 1.1 is required");
    goto out_ctx;
  }

  bool want_validation = nn_knobs().vulkan_validation;
  bool validation = false;
  if (want_validation) {
    if (has_layer(k_validation_layer) &&
        has_instance_ext(k_validation_layer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
      validation = true;
    else
      nn_log(NN_LOG_WARNING, "vulkan: NN_VULKAN_VALIDATION is set but %s (with %s) is not "
                             "installed; running without validation",
              k_validation_layer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  /* MoltenVK and other portability drivers are only listed when asked. */
  bool portability = has_instance_ext(NULL, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);

  const char *exts[3];
  uint32_t n_exts = 0;
  if (validation)
    exts[n_exts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  if (portability)
    exts[n_exts++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
  const char *layers[1] = {k_validation_layer};

  VkDebugUtilsMessengerCreateInfoEXT dbg = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = debug_cb,
  };
  /* Synchronization validation checks the barriers vk_exec.c derives. */
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {
      .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
      .enabledValidationFeatureCount = 1,
      .pEnabledValidationFeatures = enables,
  };
  /* Chained into the instance create info, the messenger also reports what
   * happens inside vkCreateInstance/vkDestroyInstance (leaked objects). */
  dbg.pNext = &features;

  uint32_t api = loader_version < VK_API_VERSION_1_3 ? loader_version : VK_API_VERSION_1_3;
  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "onnxinfer",
      .pEngineName = "onnxinfer",
      .engineVersion = 1,
      .apiVersion = api,
  };
  VkInstanceCreateInfo ici = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = validation ? &dbg : NULL,
      .flags = portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
      .pApplicationInfo = &app,
      .enabledLayerCount = validation ? 1 : 0,
      .ppEnabledLayerNames = layers,
      .enabledExtensionCount = n_exts,
      .ppEnabledExtensionNames = exts,
  };
  r = vkCreateInstance(&ici, NULL, &c->instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED ||
      r == VK_ERROR_LAYER_NOT_PRESENT || r == VK_ERROR_EXTENSION_NOT_PRESENT) {
    c->instance = VK_NULL_HANDLE;
    st = nn_error_set(err, NN_ERR_NO_DEVICE,
                      "vulkan: cannot create an instance (%s): no usable Vulkan driver/ICD",
                      nn_vk_result_str(r));
    goto out_ctx;
  }
  if (r != VK_SUCCESS) {
    c->instance = VK_NULL_HANDLE;
    st = nn_vk_fail(err, r, "vkCreateInstance");
    goto out_ctx;
  }
  if (validation) {
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            c->instance, "vkCreateDebugUtilsMessengerEXT");
    dbg.pNext = NULL;
    if (!create_messenger ||
        (r = create_messenger(c->instance, &dbg, NULL, &c->messenger)) != VK_SUCCESS) {
      c->messenger = VK_NULL_HANDLE;
      st = nn_error_set(err, NN_ERR_BACKEND, "vulkan: cannot create the debug messenger");
      goto out_ctx;
    }
    c->validation = true;
  }

  st = pick_device(c->instance, &c->phys, &c->device_index, &c->queue_family, err);
  if (st != NN_OK)
    goto out_ctx;
  vkGetPhysicalDeviceProperties(c->phys, &c->props);
  vkGetPhysicalDeviceMemoryProperties(c->phys, &c->mem_props);
  c->api_version = c->props.apiVersion < api ? c->props.apiVersion : api;

  VkPhysicalDeviceSubgroupProperties sg = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                        .pNext = &sg};
  vkGetPhysicalDeviceProperties2(c->phys, &props2);
  c->subgroup_size = sg.subgroupSize;

  /* 16-bit storage is free to enable where present (fp16 weights later). */
  VkPhysicalDevice16BitStorageFeatures f16 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                     .pNext = &f16};
  vkGetPhysicalDeviceFeatures2(c->phys, &feats);
  VkPhysicalDevice16BitStorageFeatures f16_on = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
      .storageBuffer16BitAccess = f16.storageBuffer16BitAccess,
  };
  c->storage16 = f16.storageBuffer16BitAccess == VK_TRUE;

  const char *dev_exts[1];
  uint32_t n_dev_exts = 0;
  /* Required by the spec on portability (MoltenVK) devices. */
  if (has_device_ext(c->phys, "VK_KHR_portability_subset"))
    dev_exts[n_dev_exts++] = "VK_KHR_portability_subset";

  float prio = 1.0f;
  VkDeviceQueueCreateInfo qci = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = c->queue_family,
      .queueCount = 1,
      .pQueuePriorities = &prio,
  };
  VkDeviceCreateInfo dci = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &f16_on,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &qci,
      .enabledExtensionCount = n_dev_exts,
      .ppEnabledExtensionNames = dev_exts,
  };
  r = vkCreateDevice(c->phys, &dci, NULL, &c->device);
  if (r != VK_SUCCESS) {
    c->device = VK_NULL_HANDLE;
    st = nn_vk_fail(err, r, "vkCreateDevice");
    goto out_ctx;
  }
  vkGetDeviceQueue(c->device, c->queue_family, 0, &c->queue);

  VkPipelineCacheCreateInfo pcci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  r = vkCreatePipelineCache(c->device, &pcci, NULL, &c->pipeline_cache);
  if (r != VK_SUCCESS) {
    c->pipeline_cache = VK_NULL_HANDLE;
    st = nn_vk_fail(err, r, "vkCreatePipelineCache");
    goto out_ctx;
  }
  /* NN_VULKAN_UNIFIED=0 forces the staging paths of a discrete GPU, so
   * they are tested on integrated GPUs and lavapipe too. */
  c->unified_memory = detect_unified(c) && nn_knobs().vulkan_unified != 0;
  c->warm_pipelines = c->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  c->refs = 1;
  atomic_fetch_add(&g_generation, 1);
  *out = c;
  return NN_OK;

out_ctx:
  ctx_destroy(c);
  return st;
}

nn_status nn_vk_ctx_acquire(nn_vk_ctx **out, nn_error *err) {
  if (!out)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: NULL out");
  *out = NULL;
  nn_status st = NN_OK;
  pthread_mutex_lock(&g_lock);
  if (g_ctx) {
    g_ctx->refs++;
  } else {
    st = ctx_create(&g_ctx, err);
    if (st != NN_OK)
      g_ctx = NULL;
  }
  *out = g_ctx;
  pthread_mutex_unlock(&g_lock);
  return st;
}

void nn_vk_ctx_release(nn_vk_ctx *ctx) {
  if (!ctx)
    return;
  pthread_mutex_lock(&g_lock);
  if (--ctx->refs == 0) {
    if (g_ctx == ctx)
      g_ctx = NULL;
    ctx_destroy(ctx);
  }
  pthread_mutex_unlock(&g_lock);
}

nn_status nn_vulkan_available(nn_error *err) {
  nn_vk_ctx *c = NULL;
  nn_status st = nn_vk_ctx_acquire(&c, err);
  if (st != NN_OK)
    return st;
  nn_error_set(err, NN_OK, "vulkan device %u: %s (%s, Vulkan %u.%u)", c->device_index,
               c->props.deviceName, type_name(c->props.deviceType),
               VK_API_VERSION_MAJOR(c->api_version), VK_API_VERSION_MINOR(c->api_version));
  nn_vk_ctx_release(c);
  return NN_OK;
}
