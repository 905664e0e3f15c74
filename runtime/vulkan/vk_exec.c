/* vk_exec.c - per-session execution: pipelines, descriptor sets, command
 * buffers recorded once and replayed.
 *
 * The per-run path is nn_vk_exec_run(): a queue submit and a fence wait per
 * segment (one segment unless CPU fallback nodes split the recording),
 * nothing else.  Everything it needs (pipelines, descriptor sets, command
 * buffers, the fence) is created while recording and kept: re-recording
 * (new input shapes) resets and reuses the descriptor pools and command
 * buffers, and pipelines stay cached for the life of the session (a
 * pipeline is keyed by shader and specialization constants).
 *
 * Barriers are derived, not written by hand: the recorder remembers which
 * buffer ranges were read and written since the last barrier and puts one
 * in front of any command that would otherwise race (read-after-write,
 * write-after-read, write-after-write).  It is a global VkMemoryBarrier
 * rather than per-buffer barriers: all of a session's tensors live in a few
 * VkBuffers, so a buffer barrier would cover the same memory, and global
 * barriers are what the vendors recommend (buffer ranges buy nothing on
 * current hardware).  Independent commands (e.g. the branches of an
 * Inception block) get no barrier between them.
 */
#include <string.h>

#include "vk_backend.h"
#include "vulkan/nn_vk_spirv.h"

#define SETS_PER_POOL 256

typedef struct pipe {
  int shader;
  int n_spec;
  uint32_t spec[NN_VK_MAX_SPEC];
  VkPipeline pipeline;
} pipe;

typedef struct segment {
  VkCommandBuffer cb;
  nn_vk_host_fn fn;       /* host step after this segment, or NULL */
  void *arg;
  int n_cmds;
} segment;

typedef struct span {
  VkBuffer buffer;
  VkDeviceSize begin, end;
} span;

typedef struct span_list {
  int n, cap;
  span *v;
} span_list;

struct nn_vk_exec {
  nn_vk_ctx *ctx;                                   /* borrowed */
  VkShaderModule modules[NN_VK_SHADER_COUNT];
  VkDescriptorSetLayout dsl[NN_VK_MAX_BINDINGS + 1];
  VkPipelineLayout layouts[NN_VK_MAX_BINDINGS + 1];
  int n_pipes, cap_pipes;
  pipe *pipes;
  int n_pools, cap_pools, cur_pool;
  VkDescriptorPool *pools;
  VkCommandPool cmd_pool;
  int n_segs, cap_segs;                             /* used / allocated */
  segment *segs;
  VkCommandBuffer oneshot;
  VkFence fence;
  bool recording, recorded;
  VkPipeline bound;                                 /* in the current segment */
  span_list reads, writes;                          /* since the last barrier */
  nn_vk_exec_stats stats;
};

/* ---- objects created on demand ------------------------------------------- */

static nn_status get_layout(nn_vk_exec *e, int n, nn_error *err) {
  if (e->layouts[n])
    return NN_OK;
  VkDevice dev = e->ctx->device;
  VkDescriptorSetLayoutBinding b[NN_VK_MAX_BINDINGS];
  for (int i = 0; i < n; i++)
    b[i] = (VkDescriptorSetLayoutBinding){
        .binding = (uint32_t)i,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
    };
  VkDescriptorSetLayoutCreateInfo dci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = (uint32_t)n,
      .pBindings = b,
  };
  VkResult r = vkCreateDescriptorSetLayout(dev, &dci, NULL, &e->dsl[n]);
  if (r != VK_SUCCESS) {
    e->dsl[n] = VK_NULL_HANDLE;
    return nn_vk_fail(err, r, "vkCreateDescriptorSetLayout");
  }
  /* Every kernel gets the full 128 bytes of push constants: one layout per
   * binding count serves all shaders. */
  VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, NN_VK_PUSH_WORDS * 4};
  VkPipelineLayoutCreateInfo pci = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &e->dsl[n],
      .pushConstantRangeCount = 1,
      .pPushConstantRanges = &pcr,
  };
  r = vkCreatePipelineLayout(dev, &pci, NULL, &e->layouts[n]);
  if (r != VK_SUCCESS) {
    e->layouts[n] = VK_NULL_HANDLE;
    vkDestroyDescriptorSetLayout(dev, e->dsl[n], NULL);
    e->dsl[n] = VK_NULL_HANDLE;
    return nn_vk_fail(err, r, "vkCreatePipelineLayout");
  }
  return NN_OK;
}

static nn_status get_pipeline(nn_vk_exec *e, const nn_vk_dispatch *d, VkPipeline *out,
                              nn_error *err) {
  for (int i = 0; i < e->n_pipes; i++) {
    const pipe *p = &e->pipes[i];
    if (p->shader == d->shader && p->n_spec == d->n_spec &&
        memcmp(p->spec, d->spec, (size_t)d->n_spec * sizeof d->spec[0]) == 0) {
      *out = p->pipeline;
      return NN_OK;
    }
  }
  VkDevice dev = e->ctx->device;
  const nn_vk_spirv *spv = &nn_vk_spirv_table[d->shader];
  nn_status st = get_layout(e, spv->n_bindings, err);
  if (st != NN_OK)
    return st;
  if (!e->modules[d->shader]) {
    VkShaderModuleCreateInfo smci = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = spv->size,
        .pCode = spv->code,
    };
    VkResult r = vkCreateShaderModule(dev, &smci, NULL, &e->modules[d->shader]);
    if (r != VK_SUCCESS) {
      e->modules[d->shader] = VK_NULL_HANDLE;
      return nn_vk_fail(err, r, "vkCreateShaderModule");
    }
  }
  if (e->n_pipes == e->cap_pipes) {
    int cap = e->cap_pipes ? e->cap_pipes * 2 : 16;
    pipe *np = nn_realloc(e->pipes, (size_t)cap * sizeof *np);
    if (!np)
      return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
    e->pipes = np;
    e->cap_pipes = cap;
  }
  VkSpecializationMapEntry map[NN_VK_MAX_SPEC];
  for (int i = 0; i < d->n_spec; i++)
    map[i] = (VkSpecializationMapEntry){(uint32_t)i, (uint32_t)(4 * i), 4};
  VkSpecializationInfo si = {
      .mapEntryCount = (uint32_t)d->n_spec,
      .pMapEntries = map,
      .dataSize = (size_t)d->n_spec * 4,
      .pData = d->spec,
  };
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage =
          {
              .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
              .module = e->modules[d->shader],
              .pName = "main",
              .pSpecializationInfo = d->n_spec ? &si : NULL,
          },
      .layout = e->layouts[spv->n_bindings],
  };
  VkPipeline pl;
  VkResult r = vkCreateComputePipelines(dev, e->ctx->pipeline_cache, 1, &cpci, NULL, &pl);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkCreateComputePipelines");
  pipe *p = &e->pipes[e->n_pipes++];
  p->shader = d->shader;
  p->n_spec = d->n_spec;
  memcpy(p->spec, d->spec, sizeof p->spec);
  p->pipeline = pl;
  e->stats.pipelines = e->n_pipes;
  *out = pl;
  return NN_OK;
}

static nn_status alloc_set(nn_vk_exec *e, int n_bindings, VkDescriptorSet *out, nn_error *err) {
  VkDevice dev = e->ctx->device;
  for (;;) {
    if (e->cur_pool < e->n_pools) {
      VkDescriptorSetAllocateInfo ai = {
          .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
          .descriptorPool = e->pools[e->cur_pool],
          .descriptorSetCount = 1,
          .pSetLayouts = &e->dsl[n_bindings],
      };
      VkResult r = vkAllocateDescriptorSets(dev, &ai, out);
      if (r == VK_SUCCESS) {
        e->stats.descriptor_sets++;
        return NN_OK;
      }
      if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
        return nn_vk_fail(err, r, "vkAllocateDescriptorSets");
      e->cur_pool++;
      continue;
    }
    if (e->n_pools == e->cap_pools) {
      int cap = e->cap_pools ? e->cap_pools * 2 : 4;
      VkDescriptorPool *np = nn_realloc(e->pools, (size_t)cap * sizeof *np);
      if (!np)
        return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
      e->pools = np;
      e->cap_pools = cap;
    }
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               SETS_PER_POOL * NN_VK_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo pci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = SETS_PER_POOL,
        .poolSizeCount = 1,
        .pPoolSizes = &ps,
    };
    VkResult r = vkCreateDescriptorPool(dev, &pci, NULL, &e->pools[e->n_pools]);
    if (r != VK_SUCCESS)
      return nn_vk_fail(err, r, "vkCreateDescriptorPool");
    e->cur_pool = e->n_pools++;
  }
}

/* ---- create / destroy ---------------------------------------------------- */

nn_status nn_vk_exec_create(nn_vk_ctx *ctx, nn_vk_exec **out, nn_error *err) {
  if (!ctx || !out)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: NULL argument");
  *out = NULL;
  nn_status st = NN_OK;
  VkResult r;
  nn_vk_exec *e = nn_calloc(1, sizeof *e);
  if (!e)
    return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  e->ctx = ctx;
  VkCommandPoolCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = ctx->queue_family,
  };
  r = vkCreateCommandPool(ctx->device, &cpci, NULL, &e->cmd_pool);
  if (r != VK_SUCCESS) {
    e->cmd_pool = VK_NULL_HANDLE;
    st = nn_vk_fail(err, r, "vkCreateCommandPool");
    goto out_exec;
  }
  VkCommandBufferAllocateInfo cai = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = e->cmd_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  r = vkAllocateCommandBuffers(ctx->device, &cai, &e->oneshot);
  if (r != VK_SUCCESS) {
    st = nn_vk_fail(err, r, "vkAllocateCommandBuffers");
    goto out_exec;
  }
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = vkCreateFence(ctx->device, &fci, NULL, &e->fence);
  if (r != VK_SUCCESS) {
    e->fence = VK_NULL_HANDLE;
    st = nn_vk_fail(err, r, "vkCreateFence");
    goto out_exec;
  }
  *out = e;
  return NN_OK;

out_exec:
  nn_vk_exec_destroy(e);
  return st;
}

void nn_vk_exec_destroy(nn_vk_exec *e) {
  if (!e)
    return;
  VkDevice dev = e->ctx->device;
  for (int i = 0; i < e->n_pipes; i++)
    vkDestroyPipeline(dev, e->pipes[i].pipeline, NULL);
  for (int i = 0; i <= NN_VK_MAX_BINDINGS; i++) {
    if (e->layouts[i])
      vkDestroyPipelineLayout(dev, e->layouts[i], NULL);
    if (e->dsl[i])
      vkDestroyDescriptorSetLayout(dev, e->dsl[i], NULL);
  }
  for (int i = 0; i < NN_VK_SHADER_COUNT; i++)
    if (e->modules[i])
      vkDestroyShaderModule(dev, e->modules[i], NULL);
  for (int i = 0; i < e->n_pools; i++)
    vkDestroyDescriptorPool(dev, e->pools[i], NULL);
  /* Destroying the pool frees its command buffers. */
  if (e->cmd_pool)
    vkDestroyCommandPool(dev, e->cmd_pool, NULL);
  if (e->fence)
    vkDestroyFence(dev, e->fence, NULL);
  nn_free(e->pipes);
  nn_free(e->pools);
  nn_free(e->segs);
  nn_free(e->reads.v);
  nn_free(e->writes.v);
  nn_free(e);
}

nn_vk_ctx *nn_vk_exec_ctx(const nn_vk_exec *e) { return e->ctx; }

void nn_vk_exec_get_stats(const nn_vk_exec *e, nn_vk_exec_stats *st) { *st = e->stats; }

/* ---- recording ------------------------------------------------------------ */

static nn_status begin_segment(nn_vk_exec *e, nn_error *err) {
  if (e->n_segs == e->cap_segs) {
    int cap = e->cap_segs ? e->cap_segs * 2 : 2;
    segment *ns = nn_realloc(e->segs, (size_t)cap * sizeof *ns);
    if (!ns)
      return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
    e->segs = ns;
    for (int i = e->cap_segs; i < cap; i++)
      ns[i] = (segment){0};
    e->cap_segs = cap;
  }
  segment *s = &e->segs[e->n_segs];
  if (!s->cb) {
    VkCommandBufferAllocateInfo cai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = e->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkResult r = vkAllocateCommandBuffers(e->ctx->device, &cai, &s->cb);
    if (r != VK_SUCCESS) {
      s->cb = VK_NULL_HANDLE;
      return nn_vk_fail(err, r, "vkAllocateCommandBuffers");
    }
  }
  s->fn = NULL;
  s->arg = NULL;
  s->n_cmds = 0;
  /* Begin implicitly resets (the pool has RESET_COMMAND_BUFFER). */
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkResult r = vkBeginCommandBuffer(s->cb, &bi);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkBeginCommandBuffer");
  e->n_segs++;
  e->bound = VK_NULL_HANDLE;
  e->reads.n = e->writes.n = 0;
  return NN_OK;
}

/* Device writes -> host: at the end of every segment, so host steps and
 * the caller read finished results after the fence wait. */
static nn_status end_segment(nn_vk_exec *e, nn_error *err) {
  segment *s = &e->segs[e->n_segs - 1];
  if (s->n_cmds > 0) {
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT,
    };
    vkCmdPipelineBarrier(s->cb,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  }
  VkResult r = vkEndCommandBuffer(s->cb);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkEndCommandBuffer");
  return NN_OK;
}

nn_status nn_vk_exec_begin(nn_vk_exec *e, nn_error *err) {
  if (e->recording) {
    /* An abandoned recording (error mid-way): close it so it can be reset. */
    vkEndCommandBuffer(e->segs[e->n_segs - 1].cb);
    e->recording = false;
  }
  e->recorded = false;
  for (int i = 0; i < e->n_pools; i++)
    vkResetDescriptorPool(e->ctx->device, e->pools[i], 0);
  e->cur_pool = 0;
  e->n_segs = 0;
  uint64_t runs = e->stats.runs;
  int pipelines = e->stats.pipelines;
  memset(&e->stats, 0, sizeof e->stats);
  e->stats.runs = runs;
  e->stats.pipelines = pipelines;
  nn_status st = begin_segment(e, err);
  if (st != NN_OK)
    return st;
  e->recording = true;
  return NN_OK;
}

void nn_vk_dispatch_init(nn_vk_dispatch *d, int shader) {
  memset(d, 0, sizeof *d);
  d->shader = shader;
  d->groups[0] = d->groups[1] = d->groups[2] = 1;
}

uint32_t nn_vk_dispatch_bind(const nn_vk_exec *e, nn_vk_dispatch *d, int slot,
                             const nn_vk_tensor *t, bool write) {
  VkDeviceSize a = e->ctx->props.limits.minStorageBufferOffsetAlignment;
  if (a == 0)
    a = 1;
  VkDeviceSize base = t->offset / a * a;
  d->bind[slot] = (nn_vk_tensor){t->buffer, base, t->offset - base + t->size};
  d->write[slot] = write;
  if (slot >= d->n_bindings)
    d->n_bindings = slot + 1;
  return (uint32_t)((t->offset - base) / 4);
}

static bool overlaps(const span_list *l, const span *s) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].buffer == s->buffer && l->v[i].begin < s->end && s->begin < l->v[i].end)
      return true;
  return false;
}

static bool span_push(span_list *l, const span *s) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 16;
    span *nv = nn_realloc(l->v, (size_t)cap * sizeof *nv);
    if (!nv)
      return false;
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = *s;
  return true;
}

/* Barrier in front of a command touching `n` ranges, when it conflicts with
 * what ran since the last barrier; then remember its ranges. */
static nn_status track(nn_vk_exec *e, int n, const span *s, const bool *write, nn_error *err) {
  bool hazard = false;
  for (int i = 0; i < n && !hazard; i++)
    hazard = overlaps(&e->writes, &s[i]) || (write[i] && overlaps(&e->reads, &s[i]));
  if (hazard) {
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
    };
    VkPipelineStageFlags stages =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(e->segs[e->n_segs - 1].cb, stages, stages, 0, 1, &mb, 0, NULL, 0,
                         NULL);
    e->reads.n = e->writes.n = 0;
    e->stats.barriers++;
  }
  for (int i = 0; i < n; i++)
    if (!span_push(write[i] ? &e->writes : &e->reads, &s[i]))
      return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  return NN_OK;
}

static nn_status submit_wait(nn_vk_exec *e, VkCommandBuffer cb, nn_error *err);

/* End the one-shot command buffer with its writes (src_stage / src_access)
 * ordered before any later shader, transfer or host access, submit it and
 * wait. */
static nn_status oneshot_finish(nn_vk_exec *e, VkPipelineStageFlags src_stage,
                                VkAccessFlags src_access, nn_error *err) {
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = src_access,
      .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                       VK_ACCESS_HOST_READ_BIT,
  };
  vkCmdPipelineBarrier(e->oneshot, src_stage,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                           VK_PIPELINE_STAGE_HOST_BIT,
                       0, 1, &mb, 0, NULL, 0, NULL);
  VkResult r = vkEndCommandBuffer(e->oneshot);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkEndCommandBuffer");
  return submit_wait(e, e->oneshot, err);
}

/* Run a new pipeline once, with all-zero push constants: every kernel then
 * loops over nothing and writes nothing.  Only for CPU implementations
 * (ctx->warm_pipelines): lavapipe (Mesa 22.3) leaks about half a megabyte
 * per pipeline that is bound in a command buffer but destroyed without ever
 * having executed, which is what a session created and disposed without a
 * run does.  It also moves the JIT compilation out of the first run. */
static nn_status warm_pipeline(nn_vk_exec *e, VkPipeline pl, VkPipelineLayout layout,
                               VkDescriptorSet set, nn_error *err) {
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  VkResult r = vkBeginCommandBuffer(e->oneshot, &bi);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkBeginCommandBuffer");
  uint32_t zeros[NN_VK_PUSH_WORDS] = {0};
  vkCmdBindPipeline(e->oneshot, VK_PIPELINE_BIND_POINT_COMPUTE, pl);
  vkCmdBindDescriptorSets(e->oneshot, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  vkCmdPushConstants(e->oneshot, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof zeros, zeros);
  vkCmdDispatch(e->oneshot, 1, 1, 1);
  /* the bound ranges count as accessed: order them before later work */
  return oneshot_finish(e, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, err);
}

nn_status nn_vk_exec_dispatch(nn_vk_exec *e, const nn_vk_dispatch *d, nn_error *err) {
  if (!e->recording)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: dispatch outside begin/end");
  if (d->shader < 0 || d->shader >= NN_VK_SHADER_COUNT || d->n_spec > NN_VK_MAX_SPEC)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: bad dispatch");
  const nn_vk_spirv *spv = &nn_vk_spirv_table[d->shader];
  if (d->n_bindings != spv->n_bindings)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: shader %s takes %d bindings, got %d",
                        spv->name, spv->n_bindings, d->n_bindings);
  if (d->groups[0] == 0 || d->groups[1] == 0 || d->groups[2] == 0)
    return NN_OK;
  const VkPhysicalDeviceLimits *lim = &e->ctx->props.limits;
  for (int i = 0; i < 3; i++)
    if (d->groups[i] > lim->maxComputeWorkGroupCount[i])
      return nn_error_set(err, NN_ERR_UNSUPPORTED, "vulkan: %s: %u workgroups exceed the limit",
                          spv->name, d->groups[i]);
  span s[NN_VK_MAX_BINDINGS];
  for (int i = 0; i < d->n_bindings; i++) {
    if (d->bind[i].buffer == VK_NULL_HANDLE || d->bind[i].size == 0)
      return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: %s: binding %d is empty",
                          spv->name, i);
    if (d->bind[i].size > lim->maxStorageBufferRange)
      return nn_error_set(err, NN_ERR_UNSUPPORTED,
                          "vulkan: %s: binding of %llu bytes exceeds maxStorageBufferRange",
                          spv->name, (unsigned long long)d->bind[i].size);
    s[i] = (span){d->bind[i].buffer, d->bind[i].offset, d->bind[i].offset + d->bind[i].size};
  }

  VkPipeline pl = VK_NULL_HANDLE;
  int n_pipes = e->n_pipes;
  nn_status st = get_pipeline(e, d, &pl, err);
  if (st != NN_OK)
    return st;
  bool fresh = e->n_pipes > n_pipes;
  VkDescriptorSet set;
  st = alloc_set(e, d->n_bindings, &set, err);
  if (st != NN_OK)
    return st;
  VkDescriptorBufferInfo bi[NN_VK_MAX_BINDINGS];
  VkWriteDescriptorSet w[NN_VK_MAX_BINDINGS];
  for (int i = 0; i < d->n_bindings; i++) {
    bi[i] = (VkDescriptorBufferInfo){d->bind[i].buffer, d->bind[i].offset, d->bind[i].size};
    w[i] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = set,
        .dstBinding = (uint32_t)i,
        .descriptorCount = 1,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &bi[i],
    };
  }
  vkUpdateDescriptorSets(e->ctx->device, (uint32_t)d->n_bindings, w, 0, NULL);
  if (fresh && e->ctx->warm_pipelines) {
    st = warm_pipeline(e, pl, e->layouts[spv->n_bindings], set, err);
    if (st != NN_OK)
      return st;
  }

  st = track(e, d->n_bindings, s, d->write, err);
  if (st != NN_OK)
    return st;
  segment *seg = &e->segs[e->n_segs - 1];
  VkPipelineLayout layout = e->layouts[spv->n_bindings];
  if (e->bound != pl) {
    vkCmdBindPipeline(seg->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl);
    e->bound = pl;
  }
  vkCmdBindDescriptorSets(seg->cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
  vkCmdPushConstants(seg->cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, NN_VK_PUSH_WORDS * 4,
                     d->push);
  vkCmdDispatch(seg->cb, d->groups[0], d->groups[1], d->groups[2]);
  seg->n_cmds++;
  e->stats.dispatches++;
  return NN_OK;
}

nn_status nn_vk_exec_copy(nn_vk_exec *e, const nn_vk_tensor *src, const nn_vk_tensor *dst,
                          nn_error *err) {
  if (!e->recording)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: copy outside begin/end");
  if (src->size != dst->size)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: copy of %llu bytes into %llu",
                        (unsigned long long)src->size, (unsigned long long)dst->size);
  if (src->size == 0)
    return NN_OK;
  span s[2] = {{src->buffer, src->offset, src->offset + src->size},
               {dst->buffer, dst->offset, dst->offset + dst->size}};
  bool wr[2] = {false, true};
  nn_status st = track(e, 2, s, wr, err);
  if (st != NN_OK)
    return st;
  VkBufferCopy region = {src->offset, dst->offset, src->size};
  segment *seg = &e->segs[e->n_segs - 1];
  vkCmdCopyBuffer(seg->cb, src->buffer, dst->buffer, 1, &region);
  seg->n_cmds++;
  e->stats.copies++;
  return NN_OK;
}

nn_status nn_vk_exec_fill(nn_vk_exec *e, const nn_vk_tensor *dst, uint32_t word, nn_error *err) {
  if (!e->recording)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: fill outside begin/end");
  if ((dst->offset | dst->size) & 3)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: fill range not 4-byte aligned");
  if (dst->size == 0)
    return NN_OK;
  span s = {dst->buffer, dst->offset, dst->offset + dst->size};
  bool wr = true;
  nn_status st = track(e, 1, &s, &wr, err);
  if (st != NN_OK)
    return st;
  segment *seg = &e->segs[e->n_segs - 1];
  vkCmdFillBuffer(seg->cb, dst->buffer, dst->offset, dst->size, word);
  seg->n_cmds++;
  e->stats.copies++;
  return NN_OK;
}

nn_status nn_vk_exec_host_step(nn_vk_exec *e, nn_vk_host_fn fn, void *arg, nn_error *err) {
  if (!e->recording || !fn)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: host step outside begin/end");
  nn_status st = end_segment(e, err);
  if (st != NN_OK)
    return st;
  segment *s = &e->segs[e->n_segs - 1];
  s->fn = fn;
  s->arg = arg;
  e->stats.host_steps++;
  /* On failure the recording is left closed; begin() starts over. */
  e->recording = false;
  st = begin_segment(e, err);
  if (st != NN_OK)
    return st;
  e->recording = true;
  return NN_OK;
}

nn_status nn_vk_exec_end(nn_vk_exec *e, nn_error *err) {
  if (!e->recording)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: end without begin");
  e->recording = false;
  nn_status st = end_segment(e, err);
  if (st != NN_OK)
    return st;
  int submits = 0;
  for (int i = 0; i < e->n_segs; i++)
    submits += e->segs[i].n_cmds > 0;
  e->stats.segments = submits;
  e->recorded = true;
  return NN_OK;
}

/* ---- running -------------------------------------------------------------- */

static nn_status submit_wait(nn_vk_exec *e, VkCommandBuffer cb, nn_error *err) {
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &cb,
  };
  pthread_mutex_lock(&e->ctx->queue_lock);
  VkResult r = vkQueueSubmit(e->ctx->queue, 1, &si, e->fence);
  pthread_mutex_unlock(&e->ctx->queue_lock);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkQueueSubmit");
  r = vkWaitForFences(e->ctx->device, 1, &e->fence, VK_TRUE, UINT64_MAX);
  /* Reset even after a failed wait so the next run can submit again. */
  VkResult r2 = vkResetFences(e->ctx->device, 1, &e->fence);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkWaitForFences");
  if (r2 != VK_SUCCESS)
    return nn_vk_fail(err, r2, "vkResetFences");
  return NN_OK;
}

nn_status nn_vk_exec_run(nn_vk_exec *e, nn_error *err) {
  if (!e->recorded)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: nothing recorded");
  for (int i = 0; i < e->n_segs; i++) {
    const segment *s = &e->segs[i];
    if (s->n_cmds > 0) {
      nn_status st = submit_wait(e, s->cb, err);
      if (st != NN_OK)
        return st;
    }
    if (s->fn) {
      nn_status st = s->fn(s->arg, err);
      if (st != NN_OK)
        return st;
    }
  }
  e->stats.runs++;
  return NN_OK;
}

/* ---- one-shot transfers ----------------------------------------------------- */

#define STAGING_CHUNK ((size_t)8 << 20)

/* Copy `size` bytes between a buffer and staging in the one-shot command
 * buffer; barriers order it against everything submitted before and after
 * on this queue. */
static nn_status oneshot_copy(nn_vk_exec *e, VkBuffer src, VkDeviceSize src_off, VkBuffer dst,
                              VkDeviceSize dst_off, VkDeviceSize size, nn_error *err) {
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  VkResult r = vkBeginCommandBuffer(e->oneshot, &bi);
  if (r != VK_SUCCESS)
    return nn_vk_fail(err, r, "vkBeginCommandBuffer");
  VkMemoryBarrier before = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
  };
  vkCmdPipelineBarrier(e->oneshot,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
  VkBufferCopy region = {src_off, dst_off, size};
  vkCmdCopyBuffer(e->oneshot, src, dst, 1, &region);
  return oneshot_finish(e, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, err);
}

nn_status nn_vk_exec_upload(nn_vk_exec *e, nn_vk_mem *m, const nn_vk_buf *dst,
                            VkDeviceSize dst_off, const void *src, size_t size, nn_error *err) {
  if (dst_off + size > dst->size)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: upload past the end of the buffer");
  if (size == 0)
    return NN_OK;
  if (dst->host) {
    memcpy((unsigned char *)dst->host + dst_off, src, size);
    return nn_vk_mem_flush(m, dst, dst_off, size, err);
  }
  nn_vk_buf stage;
  size_t chunk = size < STAGING_CHUNK ? size : STAGING_CHUNK;
  nn_status st = nn_vk_mem_alloc(m, NN_VK_MEM_HOST, chunk, &stage, err);
  if (st != NN_OK)
    return st;
  for (size_t done = 0; done < size && st == NN_OK; done += chunk) {
    size_t n = size - done < chunk ? size - done : chunk;
    memcpy(stage.host, (const unsigned char *)src + done, n);
    st = nn_vk_mem_flush(m, &stage, 0, n, err);
    if (st == NN_OK)
      st = oneshot_copy(e, stage.buffer, stage.offset, dst->buffer, dst->offset + dst_off + done,
                        n, err);
  }
  nn_vk_mem_free(m, &stage);
  return st;
}

nn_status nn_vk_exec_download(nn_vk_exec *e, nn_vk_mem *m, const nn_vk_buf *src,
                              VkDeviceSize src_off, void *dst, size_t size, nn_error *err) {
  if (src_off + size > src->size)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: download past the end of the buffer");
  if (size == 0)
    return NN_OK;
  if (src->host) {
    nn_status st = nn_vk_mem_invalidate(m, src, src_off, size, err);
    if (st == NN_OK)
      memcpy(dst, (const unsigned char *)src->host + src_off, size);
    return st;
  }
  nn_vk_buf stage;
  size_t chunk = size < STAGING_CHUNK ? size : STAGING_CHUNK;
  nn_status st = nn_vk_mem_alloc(m, NN_VK_MEM_HOST, chunk, &stage, err);
  if (st != NN_OK)
    return st;
  for (size_t done = 0; done < size && st == NN_OK; done += chunk) {
    size_t n = size - done < chunk ? size - done : chunk;
    st = oneshot_copy(e, src->buffer, src->offset + src_off + done, stage.buffer, stage.offset,
                      n, err);
    if (st == NN_OK)
      st = nn_vk_mem_invalidate(m, &stage, 0, n, err);
    if (st == NN_OK)
      memcpy((unsigned char *)dst + done, stage.host, n);
  }
  nn_vk_mem_free(m, &stage);
  return st;
}
