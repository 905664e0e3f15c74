/* vk_memory.c - per-session sub-allocator over a few large VkDeviceMemory
 * blocks.
 *
 * Drivers cap the number of live VkDeviceMemory objects (maxMemoryAllocation-
 * Count, 4096 on many) and each allocation is slow, so a session takes a few
 * large blocks and carves its buffers out of them.  Every block carries ONE
 * VkBuffer spanning all of it: a sub-allocation is (that buffer, offset), so
 * a session holds a handful of VkBuffers in total and descriptor bindings
 * are plain buffer ranges.
 *
 * Free space of a block is a sorted array of ranges; allocation is best fit
 * with alignment, freeing merges with the neighbours.  A block whose last
 * sub-allocation is freed is released at once, so device_bytes/staging_bytes
 * always describe live memory and reach 0 when the session lets go of
 * everything.
 */
#include <string.h>

#include "vk_backend.h"

/* Default block sizes; larger requests get a block of their own. */
#define BLOCK_DEVICE ((VkDeviceSize)16 << 20)
#define BLOCK_HOST ((VkDeviceSize)4 << 20)
#define DEDICATED_ROUND ((VkDeviceSize)64 << 10)

typedef struct range {
  VkDeviceSize off, size;
} range;

struct nn_vk_block {
  VkDeviceMemory memory;
  VkBuffer buffer;
  VkDeviceSize size;
  VkDeviceSize align;      /* sub-allocation alignment in this block */
  unsigned char *mapped;   /* persistent mapping of the whole block, or NULL */
  bool coherent;
  nn_vk_mem_kind kind;
  int n_free, cap_free;
  range *free;             /* sorted by offset, never adjacent */
  int n_allocs;
  VkDeviceSize used;
};

struct nn_vk_mem {
  nn_vk_ctx *ctx;          /* borrowed: the session holds the reference */
  int n_blocks, cap_blocks;
  nn_vk_block **blocks;
  size_t held[NN_VK_MEM_KINDS];
  size_t used[NN_VK_MEM_KINDS];
  int allocs;
};

static VkDeviceSize align_up(VkDeviceSize x, VkDeviceSize a) { return (x + a - 1) / a * a; }
static VkDeviceSize max_sz(VkDeviceSize a, VkDeviceSize b) { return a > b ? a : b; }

/* Score memory types for a kind; -1 = unusable.  Device: device-local,
 * host-visible on unified memory (so the host can write weights and I/O in
 * place), otherwise NOT host-visible (the BAR heap is small and precious).
 * Host: host-visible, coherent and cached preferred, not device-local on a
 * discrete GPU (BAR reads are uncached). */
static int score_type(const nn_vk_ctx *c, nn_vk_mem_kind kind, VkMemoryPropertyFlags f) {
  const VkMemoryPropertyFlags dl = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                              hc = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                              ca = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  if (f & (VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT))
    return -1;
  int s = 0;
  if (kind == NN_VK_MEM_DEVICE) {
    if (f & dl)
      s += 100;
    if (c->unified_memory) {
      if (!((f & dl) && (f & hv)))
        return -1;
      s += (f & hc) ? 10 : 0;
      s += (f & ca) ? 5 : 0;
    } else if (!(f & hv)) {
      s += 10;
    }
  } else {
    if (!(f & hv))
      return -1;
    s += (f & hc) ? 20 : 0;
    s += (f & ca) ? 10 : 0;
    if (!c->unified_memory && !(f & dl))
      s += 5;
  }
  return s;
}

static bool pick_type(const nn_vk_ctx *c, nn_vk_mem_kind kind, uint32_t bits, uint32_t *out) {
  int best = -1;
  for (uint32_t i = 0; i < c->mem_props.memoryTypeCount; i++) {
    if (!(bits & (1u << i)))
      continue;
    int s = score_type(c, kind, c->mem_props.memoryTypes[i].propertyFlags);
    if (s > best) {
      best = s;
      *out = i;
    }
  }
  return best >= 0;
}

static void block_destroy(nn_vk_mem *m, nn_vk_block *b) {
  VkDevice dev = m->ctx->device;
  if (b->mapped)
    vkUnmapMemory(dev, b->memory);
  if (b->buffer)
    vkDestroyBuffer(dev, b->buffer, NULL);
  if (b->memory)
    vkFreeMemory(dev, b->memory, NULL);
  m->held[b->kind] -= (size_t)b->size;
  nn_free(b->free);
  nn_free(b);
}

static nn_status block_create(nn_vk_mem *m, nn_vk_mem_kind kind, VkDeviceSize size,
                              nn_vk_block **out, nn_error *err) {
  nn_vk_ctx *c = m->ctx;
  nn_status st = NN_OK;
  VkResult r;
  nn_vk_block *b = nn_calloc(1, sizeof *b);
  if (!b)
    return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  b->kind = kind;
  b->free = nn_malloc(4 * sizeof *b->free);
  if (!b->free) {
    st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
    goto out_block;
  }
  b->cap_free = 4;

  VkBufferCreateInfo bci = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  r = vkCreateBuffer(c->device, &bci, NULL, &b->buffer);
  if (r != VK_SUCCESS) {
    b->buffer = VK_NULL_HANDLE;
    st = nn_vk_fail(err, r, "vkCreateBuffer");
    goto out_block;
  }
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(c->device, b->buffer, &req);
  uint32_t type = 0;
  if (!pick_type(c, kind, req.memoryTypeBits, &type)) {
    st = nn_error_set(err, NN_ERR_BACKEND, "vulkan: no memory type for %s memory",
                      kind == NN_VK_MEM_DEVICE ? "device" : "host");
    goto out_block;
  }
  VkMemoryPropertyFlags flags = c->mem_props.memoryTypes[type].propertyFlags;
  VkMemoryAllocateInfo mai = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
      .allocationSize = req.size,
      .memoryTypeIndex = type,
  };
  r = vkAllocateMemory(c->device, &mai, NULL, &b->memory);
  if (r != VK_SUCCESS) {
    b->memory = VK_NULL_HANDLE;
    st = (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
             ? nn_error_set(err, NN_ERR_NOMEM,
                            "vulkan: out of %s memory allocating %llu bytes",
                            kind == NN_VK_MEM_DEVICE ? "device" : "host",
                            (unsigned long long)req.size)
             : nn_vk_fail(err, r, "vkAllocateMemory");
    goto out_block;
  }
  r = vkBindBufferMemory(c->device, b->buffer, b->memory, 0);
  if (r != VK_SUCCESS) {
    st = nn_vk_fail(err, r, "vkBindBufferMemory");
    goto out_block;
  }
  b->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  /* Device memory is mapped only where memory is unified: elsewhere the
   * host reaches it through staging, even when a type happens to be
   * host-visible (the BAR window). */
  if ((flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
      (kind == NN_VK_MEM_HOST || c->unified_memory)) {
    void *p = NULL;
    r = vkMapMemory(c->device, b->memory, 0, VK_WHOLE_SIZE, 0, &p);
    if (r != VK_SUCCESS) {
      st = nn_vk_fail(err, r, "vkMapMemory");
      goto out_block;
    }
    b->mapped = p;
  }
  /* Sub-allocations become descriptor offsets (minStorageBufferOffset-
   * Alignment) and, on non-coherent memory, flush ranges (nonCoherentAtom-
   * Size); 64 bytes at least keeps float4 loads and cache lines happy. */
  b->align = max_sz(64, max_sz(req.alignment, c->props.limits.minStorageBufferOffsetAlignment));
  if (b->mapped && !b->coherent)
    b->align = max_sz(b->align, c->props.limits.nonCoherentAtomSize);
  b->size = size;
  b->free[0] = (range){0, size};
  b->n_free = 1;
  m->held[kind] += (size_t)size;
  *out = b;
  return NN_OK;

out_block:
  /* held[] was not increased yet: undo by hand instead of block_destroy. */
  if (b->buffer)
    vkDestroyBuffer(c->device, b->buffer, NULL);
  if (b->memory)
    vkFreeMemory(c->device, b->memory, NULL);
  nn_free(b->free);
  nn_free(b);
  return st;
}

/* Best-fit carve of `size` bytes from a block; false when nothing fits. */
static bool block_carve(nn_vk_block *b, VkDeviceSize size, VkDeviceSize *off_out) {
  int best = -1;
  VkDeviceSize best_waste = 0, best_start = 0;
  for (int i = 0; i < b->n_free; i++) {
    VkDeviceSize start = align_up(b->free[i].off, b->align);
    VkDeviceSize end = b->free[i].off + b->free[i].size;
    if (start > end || end - start < size)
      continue;
    VkDeviceSize waste = end - start - size;
    if (best < 0 || waste < best_waste) {
      best = i;
      best_waste = waste;
      best_start = start;
    }
  }
  if (best < 0)
    return false;
  range r = b->free[best];
  VkDeviceSize end = r.off + r.size;
  bool front = best_start > r.off, back = best_start + size < end;
  if (front && back) {
    /* One range becomes two (room ensured by block_reserve_slot). */
    memmove(&b->free[best + 2], &b->free[best + 1],
            (size_t)(b->n_free - best - 1) * sizeof *b->free);
    b->free[best] = (range){r.off, best_start - r.off};
    b->free[best + 1] = (range){best_start + size, end - best_start - size};
    b->n_free++;
  } else if (front) {
    b->free[best].size = best_start - r.off;
  } else if (back) {
    b->free[best] = (range){best_start + size, end - best_start - size};
  } else {
    memmove(&b->free[best], &b->free[best + 1], (size_t)(b->n_free - best - 1) * sizeof *b->free);
    b->n_free--;
  }
  *off_out = best_start;
  return true;
}

/* Free ranges are separated by allocations, so there are at most
 * n_allocs + 1 of them.  Keeping room for n_allocs + 2 before each carve
 * means neither the carve (which may split a range) nor any later free
 * (which may insert one) needs to grow the array: freeing cannot fail. */
static bool block_reserve_slot(nn_vk_block *b) {
  if (b->n_allocs + 2 <= b->cap_free)
    return true;
  int cap = b->cap_free * 2;
  while (cap < b->n_allocs + 2)
    cap *= 2;
  range *nf = nn_realloc(b->free, (size_t)cap * sizeof *nf);
  if (!nf)
    return false;
  b->free = nf;
  b->cap_free = cap;
  return true;
}

static void block_release(nn_vk_block *b, VkDeviceSize off, VkDeviceSize size) {
  int i = 0;
  while (i < b->n_free && b->free[i].off < off)
    i++;
  bool merge_prev = i > 0 && b->free[i - 1].off + b->free[i - 1].size == off;
  bool merge_next = i < b->n_free && off + size == b->free[i].off;
  if (merge_prev && merge_next) {
    b->free[i - 1].size += size + b->free[i].size;
    memmove(&b->free[i], &b->free[i + 1], (size_t)(b->n_free - i - 1) * sizeof *b->free);
    b->n_free--;
  } else if (merge_prev) {
    b->free[i - 1].size += size;
  } else if (merge_next) {
    b->free[i].off = off;
    b->free[i].size += size;
  } else {
    /* room ensured by block_reserve_slot, see there */
    memmove(&b->free[i + 1], &b->free[i], (size_t)(b->n_free - i) * sizeof *b->free);
    b->free[i] = (range){off, size};
    b->n_free++;
  }
}

nn_status nn_vk_mem_create(nn_vk_ctx *ctx, nn_vk_mem **out, nn_error *err) {
  if (!ctx || !out)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: NULL argument");
  nn_vk_mem *m = nn_calloc(1, sizeof *m);
  if (!m)
    return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
  m->ctx = ctx;
  *out = m;
  return NN_OK;
}

void nn_vk_mem_destroy(nn_vk_mem *m) {
  if (!m)
    return;
  for (int i = 0; i < m->n_blocks; i++)
    block_destroy(m, m->blocks[i]);
  nn_free(m->blocks);
  nn_free(m);
}

static void remove_block(nn_vk_mem *m, nn_vk_block *b) {
  for (int i = 0; i < m->n_blocks; i++) {
    if (m->blocks[i] == b) {
      m->blocks[i] = m->blocks[--m->n_blocks];
      break;
    }
  }
  block_destroy(m, b);
}

nn_status nn_vk_mem_alloc(nn_vk_mem *m, nn_vk_mem_kind kind, VkDeviceSize size,
                          nn_vk_buf *out, nn_error *err) {
  if (!m || !out || size == 0 || kind < 0 || kind >= NN_VK_MEM_KINDS)
    return nn_error_set(err, NN_ERR_INVALID_ARG, "vulkan: bad allocation request");
  memset(out, 0, sizeof *out);
  nn_status st = NN_OK;
  nn_vk_block *b = NULL;
  VkDeviceSize off = 0, reserved = 0;
  for (int i = 0; i < m->n_blocks && !b; i++) {
    nn_vk_block *cand = m->blocks[i];
    if (cand->kind != kind)
      continue;
    reserved = align_up(size, cand->align);
    if (!block_reserve_slot(cand))
      return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
    if (block_carve(cand, reserved, &off))
      b = cand;
  }
  if (!b) {
    VkDeviceSize def = kind == NN_VK_MEM_DEVICE ? BLOCK_DEVICE : BLOCK_HOST;
    /* Alignment of the new block is not known before it exists: 4 KiB of
     * slack covers any realistic one. */
    VkDeviceSize bsize = size > def / 2 ? align_up(size + 4096, DEDICATED_ROUND) : def;
    if (m->n_blocks == m->cap_blocks) {
      int cap = m->cap_blocks ? m->cap_blocks * 2 : 4;
      nn_vk_block **nb = nn_realloc(m->blocks, (size_t)cap * sizeof *nb);
      if (!nb)
        return nn_error_set(err, NN_ERR_NOMEM, "vulkan: out of memory");
      m->blocks = nb;
      m->cap_blocks = cap;
    }
    st = block_create(m, kind, bsize, &b, err);
    if (st != NN_OK)
      return st;
    m->blocks[m->n_blocks++] = b;
    reserved = align_up(size, b->align);
    if (!block_reserve_slot(b) || !block_carve(b, reserved, &off)) {
      st = nn_error_set(err, NN_ERR_NOMEM, "vulkan: cannot place %llu bytes in a new block",
                        (unsigned long long)size);
      goto out_block;
    }
  }
  b->n_allocs++;
  b->used += reserved;
  m->used[kind] += (size_t)reserved;
  m->allocs++;
  out->buffer = b->buffer;
  out->offset = off;
  out->size = size;
  out->host = b->mapped ? b->mapped + off : NULL;
  out->block = b;
  out->kind = kind;
  return NN_OK;

out_block:
  if (b->n_allocs == 0)
    remove_block(m, b);
  return st;
}

void nn_vk_mem_free(nn_vk_mem *m, nn_vk_buf *buf) {
  if (!m || !buf || !buf->block)
    return;
  nn_vk_block *b = buf->block;
  VkDeviceSize reserved = align_up(buf->size, b->align);
  block_release(b, buf->offset, reserved);
  b->n_allocs--;
  b->used -= reserved;
  m->used[b->kind] -= (size_t)reserved;
  m->allocs--;
  if (b->n_allocs == 0)
    remove_block(m, b);
  memset(buf, 0, sizeof *buf);
}

/* Non-coherent ranges must start and end on nonCoherentAtomSize (or end at
 * the end of the memory object). */
static void atom_range(const nn_vk_mem *m, const nn_vk_buf *b, VkDeviceSize off,
                       VkDeviceSize size, VkMappedMemoryRange *r) {
  VkDeviceSize atom = m->ctx->props.limits.nonCoherentAtomSize;
  if (atom == 0)
    atom = 1;
  VkDeviceSize start = (b->offset + off) / atom * atom;
  VkDeviceSize end = align_up(b->offset + off + size, atom);
  *r = (VkMappedMemoryRange){
      .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
      .memory = b->block->memory,
      .offset = start,
      .size = end >= b->block->size ? VK_WHOLE_SIZE : end - start,
  };
}

nn_status nn_vk_mem_flush(nn_vk_mem *m, const nn_vk_buf *b, VkDeviceSize off,
                          VkDeviceSize size, nn_error *err) {
  if (!b->block || !b->block->mapped || b->block->coherent || size == 0)
    return NN_OK;
  VkMappedMemoryRange r;
  atom_range(m, b, off, size, &r);
  VkResult vr = vkFlushMappedMemoryRanges(m->ctx->device, 1, &r);
  return vr == VK_SUCCESS ? NN_OK : nn_vk_fail(err, vr, "vkFlushMappedMemoryRanges");
}

nn_status nn_vk_mem_invalidate(nn_vk_mem *m, const nn_vk_buf *b, VkDeviceSize off,
                               VkDeviceSize size, nn_error *err) {
  if (!b->block || !b->block->mapped || b->block->coherent || size == 0)
    return NN_OK;
  VkMappedMemoryRange r;
  atom_range(m, b, off, size, &r);
  VkResult vr = vkInvalidateMappedMemoryRanges(m->ctx->device, 1, &r);
  return vr == VK_SUCCESS ? NN_OK : nn_vk_fail(err, vr, "vkInvalidateMappedMemoryRanges");
}

void nn_vk_mem_get_stats(const nn_vk_mem *m, nn_vk_mem_stats *st) {
  memset(st, 0, sizeof *st);
  if (!m)
    return;
  st->device_bytes = m->held[NN_VK_MEM_DEVICE];
  st->staging_bytes = m->held[NN_VK_MEM_HOST];
  st->device_used = m->used[NN_VK_MEM_DEVICE];
  st->staging_used = m->used[NN_VK_MEM_HOST];
  st->blocks = m->n_blocks;
  st->allocs = m->allocs;
}
