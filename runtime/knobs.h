/* knobs.h - every run-time switch of the runtime, read in one place.
 *
 * The knobs are environment variables: diagnostics and A/B comparisons, never
 * needed in production (the API's nn_options is the configuration).  Library
 * code asks nn_knobs() and never calls getenv() itself; it does so at set-up
 * time only (session creation, planning, device selection, first dispatch),
 * never inside a run, so the environment is read afresh each time (tests
 * change NN_VULKAN_DEVICE between sessions).  README.md ("Debugging") lists
 * them for users; keep the two in step.
 *
 *   NN_CPU=portable|avx2|avx512   lower the CPU kernels' and the pixel
 *                                 conversion's SIMD path (a path the CPU lacks
 *                                 falls back to the best it has)
 *   NN_NO_WINOGRAD=1              3x3 convolutions through im2col+GEMM only
 *   NN_NO_DIRECT=1                no direct convolution kernels: RGB first
 *                                 layers (cpu/conv_smallc.h) and stride-1
 *                                 (and AVX-512 stride-2) ones with up to
 *                                 128 input channels (cpu/conv_direct.h)
 *                                 through im2col+GEMM or Winograd, and
 *                                 8-bit convolutions (cpu/qconv_direct.h)
 *                                 through the integer GEMM
 *   NN_NO_VNNI=1                  the 8-bit kernels (cpu/qgemm.h,
 *                                 cpu/qconv_direct.h) take their AVX2 path on
 *                                 an AVX-512 VNNI CPU, as on AVX-512 parts
 *                                 without VNNI (tests cover that mix)
 *   NN_NO_FUSION=1                no plan-time activation/Add fusion
 *   NN_NO_PACK=1                  weights stay in the ONNX layout (no packed
 *                                 GEMM panels)
 *   NN_PROFILE=1                  the CPU backend times every step but a
 *                                 plan's first and logs (nn_log, info) the
 *                                 time per op type and the 20 slowest nodes
 *                                 when its plan is dropped; NN_PROFILE=N > 1
 *                                 lists the N slowest
 *   NN_THREAD_TUNE=0              every CPU step on the worker pool; by
 *                                 default the first runs of a plan time each
 *                                 step on the pool and alone and keep the
 *                                 faster (cpu/cpu_backend.c)
 *   NN_SPIN_US=N                  how long idle workers spin before sleeping,
 *                                 microseconds, 0-100000
 *   NN_VULKAN_DEVICE=N            use Vulkan physical device N (also makes
 *                                 backend auto accept a software device)
 *   NN_VULKAN_VALIDATION=1        enable VK_LAYER_KHRONOS_validation
 *   NN_VULKAN_UNIFIED=0|1         override the unified-memory detection
 *   NN_VULKAN_CPU_OPS=Op1,Op2     run those op types on the host anyway (tests
 *                                 exercise the device<->host transfers with it)
 */
#ifndef NN_KNOBS_H
#define NN_KNOBS_H

#include <stdbool.h>

typedef struct nn_knobs_t {
  const char *cpu;            /* NN_CPU, NULL when unset or empty */
  bool no_winograd;
  bool no_direct;
  bool no_vnni;
  bool no_fusion;
  bool no_pack;
  int spin_us;                /* -1 when unset */
  int thread_tune;            /* NN_THREAD_TUNE: -1 unset (on), 0 off, 1 on */
  int profile;                /* NN_PROFILE: 0 off, else how many of the slowest
                                 nodes to list (1 = the default 20) */
  const char *vulkan_device;  /* NN_VULKAN_DEVICE, NULL when unset or empty */
  bool vulkan_validation;
  int vulkan_unified;         /* -1 unset, 0, 1 */
  const char *vulkan_cpu_ops; /* NN_VULKAN_CPU_OPS, NULL when unset */
} nn_knobs_t;

/* The knobs now.  The strings point into the environment: use them before
 * anything calls setenv(). */
nn_knobs_t nn_knobs(void);

#endif
