/* test_vk_exec.c - record once, replay many: one submit per run, no heap
 * allocation per run, inputs changed through the mapping between runs, host
 * steps between device segments (the CPU fallback seam), re-recording that
 * reuses pipelines and descriptor pools, and the error paths. */
#include "vk_test_util.h"
#include "vk_kernels.h"
#include "vulkan/nn_vk_spirv.h"

enum { N = 10000 };

typedef struct host_add {
  float *t;            /* mapped host memory of the intermediate */
  int64_t n;
  int calls;
  nn_status result;
} host_add;

/* the "CPU node": t += 1, in place on the mapped buffer */
static nn_status host_add_one(void *arg, nn_error *err) {
  host_add *h = arg;
  h->calls++;
  if (h->result != NN_OK)
    return nn_error_set(err, h->result, "host step failed on purpose");
  for (int64_t i = 0; i < h->n; i++)
    h->t[i] += 1.0f;
  return NN_OK;
}

int main(void) {
  vt_install_allocator();
  size_t heap0 = vt_heap_current();
  nn_vk_ctx *ctx = NULL;
  nn_vk_mem *m = NULL;
  nn_vk_exec *e = NULL;
  VT_OK(nn_vk_ctx_acquire(&ctx, err));
  vt_check_validation(ctx);
  VT_OK(nn_vk_mem_create(ctx, &m, err));
  VT_OK(nn_vk_exec_create(ctx, &e, err));

  /* I/O in host-visible memory, intermediates in device memory */
  nn_vk_buf in, bias, out, mid, hostmid;
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_HOST, N * 4, &in, err));
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_HOST, N * 4, &out, err));
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_HOST, N * 4, &hostmid, err));
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, N * 4, &bias, err));
  VT_OK(nn_vk_mem_alloc(m, NN_VK_MEM_DEVICE, N * 4, &mid, err));
  float *bias_h = vt_rand_array(N, -1, 1);
  VT_OK(nn_vk_exec_upload(e, m, &bias, 0, bias_h, N * 4, err));
  nn_vk_tensor t_in = nn_vk_view(&in, 0, N * 4), t_out = nn_vk_view(&out, 0, N * 4);
  nn_vk_tensor t_bias = nn_vk_view(&bias, 0, N * 4), t_mid = nn_vk_view(&mid, 0, N * 4);
  nn_vk_tensor t_hmid = nn_vk_view(&hostmid, 0, N * 4);
  const int64_t dims[1] = {N}, one[1] = {1};
  const nn_vk_act none = {NN_VK_ACT_NONE, 0, 0}, relu = {NN_VK_ACT_RELU, 0, 0};

  /* error paths */
  nn_error e0 = {0};
  VT_CHECK(nn_vk_exec_run(e, &e0) == NN_ERR_INVALID_ARG);
  VT_CHECK(nn_vk_k_unary(e, relu, N, &t_in, &t_out, &e0) == NN_ERR_INVALID_ARG);
  VT_OK(nn_vk_exec_begin(e, err));
  nn_vk_dispatch bad;
  nn_vk_dispatch_init(&bad, NN_VK_SHADER_UNARY);
  nn_vk_dispatch_bind(e, &bad, 0, &t_in, false);
  VT_CHECK(nn_vk_exec_dispatch(e, &bad, &e0) == NN_ERR_INVALID_ARG);   /* 1 of 2 bindings */
  nn_vk_tensor short_view = nn_vk_view(&in, 0, 16);
  VT_CHECK(nn_vk_k_unary(e, relu, N, &short_view, &t_out, &e0) == NN_ERR_INVALID_ARG);

  /* 1. a dependent chain in one segment: out = relu(in + bias) * 0.5 */
  VT_OK(nn_vk_exec_begin(e, err));
  VT_OK(nn_vk_k_binary(e, NN_VK_BIN_ADD, none, 1, dims, one, one, &t_in, &t_bias, &t_mid, err));
  VT_OK(nn_vk_k_unary(e, relu, N, &t_mid, &t_mid, err));
  VT_OK(nn_vk_k_unary(e, (nn_vk_act){NN_VK_ACT_CLIP, -1e30f, 1e30f}, N, &t_mid, &t_out, err));
  VT_OK(nn_vk_exec_end(e, err));
  nn_vk_exec_stats st;
  nn_vk_exec_get_stats(e, &st);
  VT_CHECK(st.dispatches == 3 && st.barriers == 2 && st.segments == 1 && st.host_steps == 0);
  int pipelines = st.pipelines;

  float *x = in.host, *y = out.host, *want = malloc(N * sizeof *want);
  long allocs0 = vt_alloc_count();
  size_t heap_run = vt_heap_current();
  int bad_runs = 0;
  for (int run = 0; run < 100; run++) {
    for (int i = 0; i < N; i++) {
      x[i] = vt_randf(-2, 2);
      float s = x[i] + bias_h[i];
      want[i] = s < 0 ? 0 : s;
    }
    VT_OK(nn_vk_mem_flush(m, &in, 0, N * 4, err));
    VT_OK(nn_vk_exec_run(e, err));
    VT_OK(nn_vk_mem_invalidate(m, &out, 0, N * 4, err));
    bad_runs += vt_compare("replay", y, want, N, 0, 0) != 0;
  }
  VT_CHECK(bad_runs == 0);
  VT_CHECK(vt_alloc_count() == allocs0);   /* zero heap allocations in 100 runs */
  VT_CHECK(vt_heap_current() == heap_run);
  nn_vk_exec_get_stats(e, &st);
  VT_CHECK(st.runs == 100);
  printf("100 replays: %ld heap allocations, %d dispatches, %d barriers, %d submit(s) per run\n",
         vt_alloc_count() - allocs0, st.dispatches, st.barriers, st.segments);

  /* 2. a host step between two device segments:
   *    hmid = in * 2  |host: hmid += 1|  out = relu(hmid) */
  host_add h = {hostmid.host, N, 0, NN_OK};
  const nn_vk_tensor *two = &t_bias;
  float *twos = malloc(N * sizeof *twos);
  for (int i = 0; i < N; i++)
    twos[i] = 2;
  VT_OK(nn_vk_exec_upload(e, m, &bias, 0, twos, N * 4, err));
  VT_OK(nn_vk_exec_begin(e, err));
  VT_OK(nn_vk_k_binary(e, NN_VK_BIN_MUL, none, 1, dims, one, one, &t_in, two, &t_hmid, err));
  VT_OK(nn_vk_exec_host_step(e, host_add_one, &h, err));
  VT_OK(nn_vk_k_unary(e, relu, N, &t_hmid, &t_out, err));
  VT_OK(nn_vk_exec_end(e, err));
  nn_vk_exec_get_stats(e, &st);
  VT_CHECK(st.segments == 2 && st.host_steps == 1 && st.dispatches == 2);
  VT_CHECK(st.pipelines == pipelines + 1);   /* only the MUL variant is new */
  allocs0 = vt_alloc_count();
  bad_runs = 0;
  for (int run = 0; run < 20; run++) {
    for (int i = 0; i < N; i++) {
      x[i] = vt_randf(-2, 2);
      float s = x[i] * 2 + 1;
      want[i] = s < 0 ? 0 : s;
    }
    VT_OK(nn_vk_exec_run(e, err));
    bad_runs += vt_compare("host step", y, want, N, 0, 0) != 0;
  }
  VT_CHECK(bad_runs == 0 && h.calls == 20);
  VT_CHECK(vt_alloc_count() == allocs0);
  /* a failing host step stops the run with its status */
  h.result = NN_ERR_RUNTIME;
  VT_CHECK(nn_vk_exec_run(e, &e0) == NN_ERR_RUNTIME);
  VT_CHECK(strstr(e0.msg, "on purpose") != NULL);
  h.result = NN_OK;
  VT_OK(nn_vk_exec_run(e, err));   /* and the next run works again */

  /* 3. a long recording (more descriptor sets than one pool holds),
   *    re-recorded: pipelines and pools are reused, not re-created */
  for (int rec = 0; rec < 3; rec++) {
    VT_OK(nn_vk_exec_begin(e, err));
    VT_OK(nn_vk_k_unary(e, none, N, &t_in, &t_mid, err));
    for (int i = 0; i < 600; i++)
      VT_OK(nn_vk_k_binary(e, NN_VK_BIN_ADD, none, 1, dims, one, one, &t_mid, &t_in, &t_mid, err));
    VT_OK(nn_vk_k_unary(e, none, N, &t_mid, &t_out, err));
    VT_OK(nn_vk_exec_end(e, err));
    VT_OK(nn_vk_exec_run(e, err));
    nn_vk_exec_get_stats(e, &st);
    VT_CHECK(st.dispatches == 602 && st.descriptor_sets == 602);
    VT_CHECK(st.pipelines == pipelines + 2);   /* + MUL (above) + identity */
    if (rec == 0)
      allocs0 = vt_alloc_count();
    else
      VT_CHECK(vt_alloc_count() == allocs0);   /* re-recording reuses everything */
  }
  for (int i = 0; i < N; i++)
    want[i] = x[i] * 601;
  if (vt_compare("long chain", y, want, N, 1e-5f, 1e-5f))
    vt_failures++;
  printf("602-dispatch recording: %d barriers, %d pipelines in this session\n", st.barriers,
         st.pipelines);

  /* 4. an abandoned recording is cleaned up by destroy */
  VT_OK(nn_vk_exec_begin(e, err));
  VT_OK(nn_vk_k_unary(e, relu, N, &t_in, &t_out, err));

  nn_vk_exec_destroy(e);
  nn_vk_mem_destroy(m);   /* frees the live buffers too */
  nn_vk_ctx_release(ctx);
  free(bias_h);
  free(twos);
  free(want);
  VT_CHECK(vt_heap_current() == heap0);
  return vt_finish("test_vk_exec");
}
