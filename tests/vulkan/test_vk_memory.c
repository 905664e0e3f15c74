/* test_vk_memory.c - the per-session sub-allocator: alignment, no overlap,
 * block reuse and release, dedicated blocks, byte counters back to 0,
 * upload/download through the mapping and through staging.  Runs twice:
 * with the device's own memory model (unified on lavapipe) and with
 * NN_VULKAN_UNIFIED=0, which forces the discrete-GPU staging paths. */
#include "vk_test_util.h"

#define LIVE 64
#define ROUNDS 2000

typedef struct live {
  nn_vk_buf b;
  uint32_t tag;
} live;

static void fill_tag(const nn_vk_buf *b, uint32_t tag) {
  if (b->host)
    for (VkDeviceSize i = 0; i + 4 <= b->size; i += 4)
      memcpy((unsigned char *)b->host + i, &tag, 4);
}

static bool check_tag(const nn_vk_buf *b, uint32_t tag) {
  if (!b->host)
    return true;
  for (VkDeviceSize i = 0; i + 4 <= b->size; i += 4) {
    uint32_t v;
    memcpy(&v, (unsigned char *)b->host + i, 4);
    if (v != tag)
      return false;
  }
  return true;
}

static void run_mode(const char *mode) {
  nn_vk_ctx *ctx = NULL;
  nn_vk_mem *m = NULL;
  nn_vk_exec *e = NULL;
  VT_OK(nn_vk_ctx_acquire(&ctx, err));
  vt_check_validation(ctx);
  VT_OK(nn_vk_mem_create(ctx, &m, err));
  VT_OK(nn_vk_exec_create(ctx, &e, err));
  VkDeviceSize align = ctx->props.limits.minStorageBufferOffsetAlignment;
  printf("[%s] unified %d, minStorageBufferOffsetAlignment %llu, nonCoherentAtomSize %llu\n",
         mode, ctx->unified_memory, (unsigned long long)align,
         (unsigned long long)ctx->props.limits.nonCoherentAtomSize);

  /* random alloc/free churn with a bounded live set */
  live lv[LIVE];
  memset(lv, 0, sizeof lv);
  uint32_t tag = 1;
  size_t peak_dev = 0, peak_stage = 0;
  for (int round = 0; round < ROUNDS; round++) {
    int slot = (int)vt_randf(0, LIVE - 0.001f);
    if (lv[slot].b.block) {
      VT_CHECK(check_tag(&lv[slot].b, lv[slot].tag));
      nn_vk_mem_free(m, &lv[slot].b);
      VT_CHECK(lv[slot].b.block == NULL);
      continue;
    }
    nn_vk_mem_kind kind = vt_randf(0, 1) < 0.5f ? NN_VK_MEM_DEVICE : NN_VK_MEM_HOST;
    /* mostly small, sometimes big enough for a block of its own */
    VkDeviceSize size = (VkDeviceSize)vt_randf(1, 256 * 1024);
    if (round % 97 == 0)
      size = (VkDeviceSize)12 << 20;
    VT_OK(nn_vk_mem_alloc(m, kind, size, &lv[slot].b, err));
    nn_vk_buf *b = &lv[slot].b;
    VT_CHECK(b->size == size);
    VT_CHECK(b->offset % align == 0 && b->offset % 64 == 0);
    VT_CHECK(kind == NN_VK_MEM_HOST ? b->host != NULL
                                    : (b->host != NULL) == ctx->unified_memory);
    for (int j = 0; j < LIVE; j++) {
      const nn_vk_buf *o = &lv[j].b;
      if (j != slot && o->block && o->buffer == b->buffer)
        VT_CHECK(o->offset + o->size <= b->offset || b->offset + b->size <= o->offset);
    }
    lv[slot].tag = tag++;
    fill_tag(b, lv[slot].tag);
    nn_vk_mem_stats st;
    nn_vk_mem_get_stats(m, &st);
    peak_dev = st.device_bytes > peak_dev ? st.device_bytes : peak_dev;
    peak_stage = st.staging_bytes > peak_stage ? st.staging_bytes : peak_stage;
    VT_CHECK(st.device_used <= st.device_bytes && st.staging_used <= st.staging_bytes);
  }
  nn_vk_mem_stats st;
  nn_vk_mem_get_stats(m, &st);
  printf("[%s] churn: %d live allocs in %d blocks, device %zu / staging %zu bytes held "
         "(peaks %zu / %zu)\n",
         mode, st.allocs, st.blocks, st.device_bytes, st.staging_bytes, peak_dev, peak_stage);
  for (int i = 0; i < LIVE; i++) {
    VT_CHECK(check_tag(&lv[i].b, lv[i].tag));
    nn_vk_mem_free(m, &lv[i].b);
  }
  nn_vk_mem_get_stats(m, &st);
  VT_CHECK(st.device_bytes == 0 && st.staging_bytes == 0 && st.device_used == 0 &&
           st.staging_used == 0 && st.blocks == 0 && st.allocs == 0);

  /* small allocations share a block; a large one gets its own */
  nn_vk_buf s1, s2, big;
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, 1000, &s1, err));
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, 1000, &s2, err));
  VT_CHECK(s1.buffer == s2.buffer);
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, (VkDeviceSize)40 << 20, &big, err));
  VT_CHECK(big.buffer != s1.buffer);
  nn_vk_mem_get_stats(m, &st);
  VT_CHECK(st.blocks == 2 && st.device_bytes >= ((size_t)40 << 20) + 2000);
  nn_vk_mem_free(m, &big);
  nn_vk_mem_get_stats(m, &st);
  VT_CHECK(st.blocks == 1);

  /* upload/download round trip: through the mapping where there is one,
   * and always once through staging (a view without the host pointer) */
  enum { N = 300000 };
  float *src = vt_rand_array(N, -1, 1), *dst = calloc(N, sizeof *dst);
  nn_vk_buf dev;
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, N * 4, &dev, err));
  VT_OK(nn_vk_exec_upload(e, m, &dev, 0, src, N * 4, err));
  VT_OK(nn_vk_exec_download(e, m, &dev, 0, dst, N * 4, err));
  VT_CHECK(memcmp(src, dst, N * 4) == 0);
  nn_vk_buf nomap = dev;
  nomap.host = NULL;
  for (int i = 0; i < N; i++)
    src[i] = -src[i];
  VT_OK(nn_vk_exec_upload(e, m, &nomap, 4, src + 1, (N - 2) * 4, err));
  memset(dst, 0, N * 4);
  VT_OK(nn_vk_exec_download(e, m, &nomap, 0, dst, N * 4, err));
  VT_CHECK(memcmp(src + 1, dst + 1, (N - 2) * 4) == 0);
  VT_CHECK(dst[0] == -src[0] && dst[N - 1] == -src[N - 1]);   /* untouched ends */
  /* staging came and went */
  nn_vk_mem_get_stats(m, &st);
  VT_CHECK(st.staging_bytes == 0);
  nn_vk_mem_free(m, &dev);
  free(src);
  free(dst);

  /* destroy with live allocations: the allocator frees them */
  nn_vk_mem_free(m, &s1);
  nn_vk_mem_free(m, &s1);   /* a zeroed buf is a no-op */
  nn_vk_exec_destroy(e);
  nn_vk_mem_destroy(m);
  nn_vk_ctx_release(ctx);
}

int main(void) {
  vt_install_allocator();
  size_t heap0 = vt_heap_current();
  run_mode("native");
  VT_CHECK(vt_heap_current() == heap0);
  setenv("NN_VULKAN_UNIFIED", "0", 1);
  run_mode("staging");
  unsetenv("NN_VULKAN_UNIFIED");
  VT_CHECK(vt_heap_current() == heap0);
  return vt_finish("test_vk_memory");
}
