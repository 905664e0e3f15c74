/* test_kernels.c - Conv, ConvTranspose, MatMul and Gemm through a session,
 * against naive double-accumulating references, on shapes chosen to reach
 * every path of conv.c and gemm.c: implicit and explicit im2col, 1x1,
 * depthwise (with a depth multiplier), grouped, 1-D and 3-D, dilations,
 * asymmetric pads, fused activations (a Relu / Clip node after the Conv,
 * fused by the planner), ConvTranspose with groups and strides, MatMul and
 * Gemm with constant (pre-packed) and variable right operands, one row
 * (transposed product) and many, every form of Gemm's C, and the row
 * normalizations' vector statistics.  Each model runs at 1 and 2 threads
 * and, on x86, on every SIMD path the CPU has (NN_CPU).
 * The light conformance cases hold constant weights, so they cannot catch a
 * misplaced weight; these tests use random ones.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_builder.h"
#include "nn.h"

static int g_failed, g_passed;

/* ---- random data ------------------------------------------------------------------ */
static uint64_t g_rng = 0x243F6A8885A308D3ull;
static float rndf(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (float)((double)(uint32_t)(g_rng >> 32) / 2147483648.0 - 1.0);
}
static float *rnd_vec(int64_t n) {
  float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  for (int64_t i = 0; i < n; i++)
    v[i] = rndf();
  return v;
}

/* ---- model building helpers (attributes the shared builder lacks) ---------------- */
static OnnxSubset__AttributeProto *attr_new(mb *m, OnnxSubset__NodeProto *n, const char *name) {
  OnnxSubset__AttributeProto *a = &m->attrs[m->n_attrs];
  m->attr_ptrs[m->n_attrs++] = a;
  onnx_subset__attribute_proto__init(a);
  a->name = mb_str(m, name);
  a->has_type = 1;
  if (!n->attribute)
    n->attribute = &m->attr_ptrs[m->n_attrs - 1];
  n->n_attribute++;
  return a;
}
static void attr_ints(mb *m, OnnxSubset__NodeProto *n, const char *name, int cnt, const int64_t *v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name);
  a->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  int64_t *d = malloc(sizeof(int64_t) * (size_t)(cnt > 0 ? cnt : 1));
  memcpy(d, v, sizeof(int64_t) * (size_t)cnt);
  m->blobs[m->n_blobs++] = d;
  a->ints = d;
  a->n_ints = (size_t)cnt;
}
static void attr_float(mb *m, OnnxSubset__NodeProto *n, const char *name, float v) {
  OnnxSubset__AttributeProto *a = attr_new(m, n, name);
  a->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  a->has_f = 1;
  a->f = v;
}

/* Build, run at `threads` and return the first output (malloc'd copy);
 * inputs[i] fills graph input i. */
static float *run_model(mb *m, int threads, int n_in, float *const *inputs, int64_t *out_numel) {
  size_t len;
  uint8_t *buf = mb_pack(m, &len);
  nn_options o;
  nn_options_init(&o);
  o.threads = threads;
  nn_session *s = NULL;
  nn_error err;
  nn_status st = nn_session_create_from_memory(buf, len, &o, &s, &err);
  free(buf);
  if (st != NN_OK) {
    fprintf(stderr, "  create: %s\n", err.msg);
    return NULL;
  }
  for (int i = 0; i < n_in; i++) {
    nn_tensor *t;
    if (nn_session_input_tensor(s, i, &t) != NN_OK) {
      nn_session_free(s);
      return NULL;
    }
    memcpy(t->data, inputs[i], t->nbytes);
  }
  float *res = NULL;
  if (nn_session_run(s) != NN_OK) {
    fprintf(stderr, "  run: %s\n", nn_session_last_error(s));
  } else {
    const nn_tensor *out;
    nn_session_output_tensor(s, 0, &out);
    res = malloc(out->nbytes + 4);
    memcpy(res, out->data, out->nbytes);
    *out_numel = (int64_t)(out->nbytes / sizeof(float));
  }
  nn_session_free(s);
  return res;
}

/* |got - want| <= tol * (1 + |want|) everywhere; tol grows with the depth
 * of the sums (float accumulation against double). */
static bool compare(const char *what, const float *got, const double *want, int64_t n, double tol) {
  double worst = 0;
  int64_t wi = -1;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)got[i] - want[i]) / (1.0 + fabs(want[i]));
    if (!(e <= worst)) {
      worst = e;
      wi = i;
    }
  }
  if (wi >= 0 && !(worst <= tol)) {
    fprintf(stderr, "  %s: element %lld is %.7g, want %.7g (rel err %.3g > %.3g)\n", what,
            (long long)wi, got[wi], want[wi], worst, tol);
    return false;
  }
  return true;
}

/* Run the model at 1 and 2 threads; each result must have yn elements and
 * match want within tol. */
static bool run_threads(mb *m, const char *name, int n_in, float *const *inputs,
                        const double *want, int64_t yn, double tol) {
  bool ok = true;
  for (int threads = 1; threads <= 2; threads++) {
    int64_t got_n = 0;
    float *got = run_model(m, threads, n_in, inputs, &got_n);
    char what[128];
    snprintf(what, sizeof what, "%s threads=%d", name, threads);
    if (!got || got_n != yn) {
      fprintf(stderr, "  %s: no result or %lld elements, want %lld\n", what, (long long)got_n,
              (long long)yn);
      ok = false;
    } else if (!compare(what, got, want, yn, tol)) {
      ok = false;
    }
    free(got);
  }
  return ok;
}

/* ---- Conv ---------------------------------------------------------------------------- */
typedef struct conv_case {
  const char *name;
  int nsp;                       /* spatial dims 1..3 */
  int64_t n, c, m, group;
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3];
  bool bias;
  const char *act;               /* NULL, "Relu", "Clip" (0..6), "Sigmoid" */
  bool transpose;                /* ConvTranspose */
  int64_t opad[3];               /* ConvTranspose output_padding */
} conv_case;

static int64_t prod3(const int64_t *v, int nsp) {
  int64_t p = 1;
  for (int i = 0; i < nsp; i++)
    p *= v[i];
  return p;
}

static double act_ref(const char *act, double v) {
  if (!act)
    return v;
  if (strcmp(act, "Relu") == 0)
    return v < 0 ? 0 : v;
  if (strcmp(act, "Sigmoid") == 0)
    return 1.0 / (1.0 + exp(-v));
  return v < 0 ? 0 : v > 6 ? 6 : v;
}

/* Naive Conv / ConvTranspose over 3 normalized spatial dims (leading ones 1). */
static double *conv_ref(const conv_case *t, const int64_t *out, const float *x, const float *w,
                        const float *b) {
  int64_t I[3] = {1, 1, 1}, O[3] = {1, 1, 1}, K[3] = {1, 1, 1}, S[3] = {1, 1, 1}, D[3] = {1, 1, 1},
          P[3] = {0, 0, 0};
  int off = 3 - t->nsp;
  for (int i = 0; i < t->nsp; i++) {
    I[off + i] = t->in[i];
    O[off + i] = out[i];
    K[off + i] = t->k[i];
    S[off + i] = t->s[i];
    D[off + i] = t->d[i];
    P[off + i] = t->pb[i];
  }
  int64_t cg = t->c / t->group, mg = t->m / t->group;
  int64_t isz = I[0] * I[1] * I[2], osz = O[0] * O[1] * O[2], ksz = K[0] * K[1] * K[2];
  double *y = calloc((size_t)(t->n * t->m * osz), sizeof(double));
  for (int64_t bi = 0; bi < t->n; bi++)
    for (int64_t g = 0; g < t->group; g++)
      for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t mi = 0; mi < mg; mi++) {
          int64_t cc = g * cg + ci, mm = g * mg + mi;
          /* Conv W: (M, Cg, k); ConvTranspose W: (C, Mg, k) */
          const float *wk = t->transpose ? w + (cc * mg + mi) * ksz : w + (mm * cg + ci) * ksz;
          const float *xc = x + (bi * t->c + cc) * isz;
          double *ym = y + (bi * t->m + mm) * osz;
          for (int64_t kd = 0; kd < K[0]; kd++)
            for (int64_t kh = 0; kh < K[1]; kh++)
              for (int64_t kw = 0; kw < K[2]; kw++) {
                double wv = wk[(kd * K[1] + kh) * K[2] + kw];
                if (!t->transpose) {
                  for (int64_t od = 0; od < O[0]; od++)
                    for (int64_t oh = 0; oh < O[1]; oh++)
                      for (int64_t ow = 0; ow < O[2]; ow++) {
                        int64_t id = od * S[0] - P[0] + kd * D[0], ih = oh * S[1] - P[1] + kh * D[1],
                                iw = ow * S[2] - P[2] + kw * D[2];
                        if (id < 0 || id >= I[0] || ih < 0 || ih >= I[1] || iw < 0 || iw >= I[2])
                          continue;
                        ym[(od * O[1] + oh) * O[2] + ow] += wv * xc[(id * I[1] + ih) * I[2] + iw];
                      }
                } else {
                  for (int64_t id = 0; id < I[0]; id++)
                    for (int64_t ih = 0; ih < I[1]; ih++)
                      for (int64_t iw = 0; iw < I[2]; iw++) {
                        int64_t od = id * S[0] - P[0] + kd * D[0], oh = ih * S[1] - P[1] + kh * D[1],
                                ow = iw * S[2] - P[2] + kw * D[2];
                        if (od < 0 || od >= O[0] || oh < 0 || oh >= O[1] || ow < 0 || ow >= O[2])
                          continue;
                        ym[(od * O[1] + oh) * O[2] + ow] += wv * xc[(id * I[1] + ih) * I[2] + iw];
                      }
                }
              }
        }
  for (int64_t bi = 0; bi < t->n; bi++)
    for (int64_t mm = 0; mm < t->m; mm++)
      for (int64_t o = 0; o < osz; o++) {
        double *v = &y[(bi * t->m + mm) * osz + o];
        *v = act_ref(t->act, *v + (b ? b[mm] : 0.0));
      }
  return y;
}

static bool run_conv_case(const conv_case *t) {
  int64_t out[3];
  for (int i = 0; i < t->nsp; i++) {
    int64_t ek = (t->k[i] - 1) * t->d[i] + 1;
    out[i] = t->transpose ? t->s[i] * (t->in[i] - 1) + t->opad[i] + ek - t->pb[i] - t->pe[i]
                          : (t->in[i] + t->pb[i] + t->pe[i] - ek) / t->s[i] + 1;
  }
  int rank = 2 + t->nsp;
  int64_t xd[5] = {t->n, t->c}, wd[5], yd[5] = {t->n, t->m};
  wd[0] = t->transpose ? t->c : t->m;
  wd[1] = t->transpose ? t->m / t->group : t->c / t->group;
  for (int i = 0; i < t->nsp; i++) {
    xd[2 + i] = t->in[i];
    wd[2 + i] = t->k[i];
    yd[2 + i] = out[i];
  }
  int64_t xn = t->n * t->c * prod3(t->in, t->nsp), wn = wd[0] * wd[1] * prod3(t->k, t->nsp);
  int64_t yn = t->n * t->m * prod3(out, t->nsp);
  float *x = rnd_vec(xn), *w = rnd_vec(wn), *b = t->bias ? rnd_vec(t->m) : NULL;
  double *want = conv_ref(t, out, x, w, b);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, rank, xd);
  mb_init_f32(&m, "w", rank, wd, w);
  if (b)
    mb_init_f32(&m, "b", 1, &t->m, b);
  if (t->act && strcmp(t->act, "Clip") == 0) {
    mb_init_f32(&m, "lo", 0, NULL, (float[]){0.0f});
    mb_init_f32(&m, "hi", 0, NULL, (float[]){6.0f});
  }
  OnnxSubset__NodeProto *n = mb_node(&m, t->transpose ? "ConvTranspose" : "Conv", "conv",
                                     b ? "x,w,b" : "x,w", t->act ? "h" : "y");
  int64_t pads[6];
  for (int i = 0; i < t->nsp; i++) {
    pads[i] = t->pb[i];
    pads[t->nsp + i] = t->pe[i];
  }
  attr_ints(&m, n, "strides", t->nsp, t->s);
  attr_ints(&m, n, "dilations", t->nsp, t->d);
  attr_ints(&m, n, "pads", 2 * t->nsp, pads);
  mb_attr_int(&m, n, "group", t->group);
  if (t->transpose)
    attr_ints(&m, n, "output_padding", t->nsp, t->opad);
  if (t->act)
    mb_node(&m, t->act, "act", strcmp(t->act, "Clip") == 0 ? "h,lo,hi" : "h", "y");
  mb_output(&m, "y");
  double tol = 2e-6 * sqrt((double)(t->c / t->group * prod3(t->k, t->nsp))) + 1e-6;
  bool ok = run_threads(&m, t->name, 1, &x, want, yn, tol);
  (void)yd;
  mb_free(&m);
  free(x);
  free(w);
  free(b);
  free(want);
  return ok;
}

static const conv_case conv_cases[] = {
  /* implicit im2col: 3x3 pad 1, few output channels */
  {"conv3x3 implicit", 2, 1, 16, 24, 1, {20, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  /* explicit im2col: many output rows, small map, deep K (more input
   * channels than the direct kernel takes) */
  {"conv3x3 explicit", 2, 1, 144, 160, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  /* 2 images, strided, asymmetric pads, dilation */
  {"conv batch stride pads dil", 2, 2, 8, 12, 1, {15, 13}, {3, 2}, {2, 1}, {2, 3}, {2, 0}, {1, 3}, true, "Clip"},
  {"conv1x1", 2, 1, 48, 40, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
  /* Winograd F(2x2, 3x3): odd outputs, no pads, asymmetric pads, groups,
   * several blocks of tiles */
  {"winograd valid odd", 2, 1, 16, 20, 1, {9, 12}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
  {"winograd asym pads grouped", 2, 2, 32, 32, 2, {11, 10}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {2, 1}, true, "Relu"},
  {"winograd blocks", 2, 1, 64, 64, 1, {50, 46}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, "Clip"},
  /* maps so small that every tile of a row reaches into the padding */
  {"winograd 3x3 map padded", 2, 1, 16, 16, 1, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  {"winograd 2x2 map padded", 2, 2, 16, 24, 1, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"winograd wide left pads", 2, 1, 16, 16, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {2, 3}, {0, 1}, false, NULL},
  /* a costly activation: applied over each written row segment in vectors */
  {"winograd sigmoid odd", 2, 1, 16, 16, 1, {21, 19}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Sigmoid"},
  {"winograd sigmoid blocks", 2, 1, 64, 64, 1, {50, 46}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, "Sigmoid"},
  {"conv1x1 stride2", 2, 1, 32, 36, 1, {10, 9}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false, "Relu"},
  /* many output channels, small map: the right operand packed once */
  {"conv1x1 packed once", 2, 2, 64, 130, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, "Relu"},
  {"conv1x1 stride2 packed once", 2, 1, 48, 100, 1, {13, 14}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true, NULL},
  {"conv3x3 s2 packed once grouped", 2, 1, 64, 256, 2, {9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, true, "Clip"},
  {"conv grouped", 2, 2, 16, 32, 4, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  {"depthwise 3x3 s1", 2, 1, 24, 24, 24, {19, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Clip"},
  {"depthwise 3x3 s2", 2, 2, 16, 16, 16, {20, 20}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  /* AVX2's 3x3 stride-1 kernel (OW >= 24): rows four at a time then the
   * rest (23 = 5 x 4 + 2 + 1), "same" padding with its shifted edge loads,
   * and unpadded with a masked last block (OW 33) */
  {"depthwise 3x3 s1 same rows of 4", 2, 1, 8, 8, 8, {23, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"depthwise 3x3 s1 valid wide", 2, 2, 4, 4, 4, {14, 35}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, "Clip"},
  /* AVX-512's 3x3 stride 2: two vectors a row, the second masked, no left
   * pad (and the left pad above), odd input sizes */
  {"depthwise 3x3 s2 wide", 2, 2, 8, 8, 8, {41, 37}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, true, "Clip"},
  {"depthwise 5x5 mult2", 2, 1, 8, 16, 8, {17, 12}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, true, "Relu"},
  /* rows wide enough for the ring fill's plain loads between its edges */
  {"depthwise 5x5 s1 wide", 2, 1, 8, 8, 8, {9, 45}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, true, "Relu"},
  {"depthwise 3x3 s2 padded wide", 2, 1, 8, 8, 8, {12, 66}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  /* TensorFlow's SAME for stride 2 on an even width: the last output's
   * third tap is the right padding */
  {"depthwise 3x3 s2 same (tf)", 2, 1, 8, 8, 8, {16, 34}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, true, "Clip"},
  {"depthwise dilated", 2, 1, 8, 8, 8, {16, 16}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, NULL},
  /* 7x7 (ConvNeXt): the ring kernel on wide maps (stride 1 and 2), the
   * 8-channel tiles on small ones (a channel tail of 4; stride 2, asymmetric pads) */
  {"depthwise 7x7 s1 wide", 2, 1, 8, 8, 8, {30, 37}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, true, "Relu"},
  {"depthwise 7x7 s2 wide", 2, 2, 8, 8, 8, {33, 40}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, false, NULL},
  {"depthwise 7x7 small map", 2, 1, 20, 20, 20, {14, 14}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, true, "Sigmoid"},
  {"depthwise 7x7 s2 small map", 2, 1, 16, 16, 16, {12, 11}, {7, 7}, {2, 2}, {1, 1}, {3, 2}, {2, 3}, true, "Clip"},
  {"depthwise 7x7 map of 6 pixels", 2, 2, 12, 12, 12, {3, 2}, {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, true, NULL},
  /* mostly padding (CONV_PATH_TAPS): a product per landing tap and output
   * rectangle.  DeepLab's ASPP at rate 6 (rectangles as wide as the map
   * written in place, the others copied); rates 9 and 12 on a map not
   * square, two images; a rate past the map (only the centre tap lands);
   * 5x5 stride 2 with unequal rates and pads, a costly activation */
  {"dilated 3x3 d6 (ASPP)", 2, 1, 64, 40, 1, {32, 32}, {3, 3}, {1, 1}, {6, 6}, {6, 6}, {6, 6}, true, "Relu"},
  {"dilated 3x3 d9x12 batch", 2, 2, 48, 24, 1, {13, 21}, {3, 3}, {1, 1}, {9, 12}, {9, 12}, {9, 12}, true, NULL},
  {"dilated past the map", 2, 1, 32, 20, 1, {9, 9}, {3, 3}, {1, 1}, {12, 12}, {12, 12}, {12, 12}, false, "Clip"},
  {"dilated 5x5 s2 asym", 2, 1, 40, 36, 1, {23, 19}, {5, 5}, {2, 2}, {3, 4}, {6, 7}, {5, 8}, true, "Sigmoid"},
  /* dilated, few channels: the direct kernel with its taps D apart (U2-Net);
   * unequal pads, two images; a 5x5 at rate 2 */
  {"direct 3x3 d2 c16 m20", 2, 1, 16, 20, 1, {23, 37}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, true, "Relu"},
  {"direct 3x3 d3 asym pads batch", 2, 2, 9, 13, 1, {17, 19}, {3, 3}, {1, 1}, {3, 3}, {1, 3}, {5, 2}, true, NULL},
  {"direct 5x5 d2 c8 m24", 2, 1, 8, 24, 1, {20, 26}, {5, 5}, {1, 1}, {2, 2}, {4, 4}, {4, 4}, false, "Clip"},
  {"single input channel", 2, 1, 1, 20, 1, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  /* few input channels: the direct kernel on AVX2 (cpu/conv_smallc.h), with
   * the last blocks of pixels (OW not a multiple of 16) and of channels (M
   * not a multiple of 6) overlapping the previous ones */
  {"rgb 5x5 s2 (BlazeFace)", 2, 1, 3, 24, 1, {37, 40}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, {2, 2}, true, "Relu"},
  {"rgb 3x3 s1 m10 batch", 2, 2, 3, 10, 1, {9, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Clip"},
  {"rgba 7x7 s2 asym pads", 2, 1, 4, 7, 1, {21, 40}, {7, 7}, {2, 2}, {1, 1}, {3, 0}, {2, 3}, false, NULL},
  {"2ch 3x5 s1x2", 2, 1, 2, 6, 1, {6, 36}, {3, 5}, {1, 2}, {1, 1}, {0, 2}, {1, 1}, true, NULL},
  {"rgb 3x3 s2 m16", 2, 1, 3, 16, 1, {30, 41}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"rgb 3x3 s1 m2", 2, 1, 3, 2, 1, {5, 16}, {3, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}, true, NULL},
  /* rows of 32 pixels and more: the AVX-512 block (32 pixels x 12 channels),
   * its last pixel block overlapping and channel tails of M % 12 */
  {"rgb 7x7 s2 m64 wide (ResNet)", 2, 1, 3, 64, 1, {20, 90}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, true, "Relu"},
  {"rgb 3x3 s1 m29 ow32", 2, 2, 3, 29, 1, {6, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Clip"},
  {"rgb 5x5 s2 m24 ow70", 2, 1, 3, 24, 1, {9, 141}, {5, 5}, {2, 2}, {1, 1}, {1, 1}, {2, 2}, false, NULL},
  {"2ch 3x3 s2 m13 ow33", 2, 1, 2, 13, 1, {8, 66}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  /* the row's last 16 pixels or fewer in one masked vector (48 = 32 + 16,
   * 45 above = 32 + 13), more than 16 in a block shifted back (50) */
  {"rgb 3x3 s1 m14 ow48", 2, 1, 3, 14, 1, {5, 48}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"rgb 3x3 s1 m13 ow50", 2, 1, 3, 13, 1, {4, 50}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, "Clip"},
  /* stride 1, up to 128 input channels: the direct kernel on AVX2 and
   * AVX-512 (cpu/conv_direct.h): output pixels numbered in the padded
   * width (AVX2) or the input width (AVX-512, masked loads), so a block of
   * 48, 32 or 16 of them spans rows on small maps, the padding columns
   * dropped at the store; channel tails of M % 14, 8 (6); on 2 threads
   * ranges that split a block's channel panels */
  {"direct 3x3 c8 m29 ow37", 2, 1, 8, 29, 1, {23, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"direct 5x5 c12 m24 batch", 2, 2, 12, 24, 1, {13, 18}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, true, "Clip"},
  {"direct 3x3 c64 m8 7x7", 2, 1, 64, 8, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, NULL},
  {"direct 7x3 asym pads c5 m15", 2, 1, 5, 15, 1, {12, 11}, {7, 3}, {1, 1}, {1, 1}, {3, 0}, {2, 2}, true, NULL},
  {"direct 3x3 valid c6 m3 ow1", 2, 1, 6, 3, 1, {9, 3}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, "Relu"},
  {"direct 1x5 c16 m14 wide", 2, 1, 16, 14, 1, {3, 70}, {1, 5}, {1, 1}, {1, 1}, {0, 2}, {0, 2}, true, "Clip"},
  {"direct 3x3 c20 m27 7x7 narrow", 2, 1, 20, 27, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"direct 3x3 c100 m12 14x14", 2, 1, 100, 12, 1, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  /* padding wider than half the window: OW > IW, the padded copy on
   * AVX-512 too (the masked mode numbers pixels in the input width) */
  {"direct 3x3 pads 2 c9 m17 ow>iw", 2, 1, 9, 17, 1, {10, 12}, {3, 3}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, true, "Relu"},
  /* stride 2 (AVX-512, outputs of 28x28 or more): phase planes, odd and
   * even sizes, rows of more than two vectors, padding on one side only */
  {"direct 3x3 s2 c20 m27 odd", 2, 1, 20, 27, 1, {61, 59}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, "Relu"},
  {"direct 3x3 s2 c16 m40 even", 2, 2, 16, 40, 1, {56, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, NULL},
  {"direct 5x5 s2 c7 m9 pads 2 0", 2, 1, 7, 9, 1, {57, 60}, {5, 5}, {2, 2}, {1, 1}, {2, 0}, {0, 2}, false, "Relu"},
  {"conv1d", 1, 2, 12, 20, 1, {33}, {5}, {2}, {1}, {2}, {1}, true, "Relu"},
  {"conv3d", 3, 1, 6, 10, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {1, 0, 1}, true, NULL},
  {"conv3d depthwise", 3, 1, 4, 4, 4, {4, 5, 6}, {2, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, true, NULL},
  {"convtranspose", 2, 1, 8, 6, 1, {7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, NULL, true, {1, 1}},
  {"convtranspose grouped", 2, 2, 8, 12, 2, {6, 5}, {4, 3}, {2, 1}, {1, 2}, {1, 0}, {2, 1}, true, NULL, true, {0, 0}},
  {"convtranspose 1d", 1, 1, 6, 5, 1, {11}, {4}, {3}, {1}, {0}, {0}, false, NULL, true, {2}},
};

/* ---- MatMul / Gemm -------------------------------------------------------------------- */
typedef struct mm_case {
  const char *name;
  bool gemm;
  int ra, rb;
  int64_t ad[4], bd[4];
  bool b_const;
  /* Gemm */
  int ta, tb;
  float alpha, beta;
  int rc;                        /* rank of C, -1 none */
  int64_t cd[2];
  const char *act;
} mm_case;

static double *mm_ref(const mm_case *t, const float *a, const float *b, const float *c,
                      int64_t *yn) {
  if (t->gemm) {
    int64_t M = t->ta ? t->ad[1] : t->ad[0], K = t->ta ? t->ad[0] : t->ad[1];
    int64_t N = t->tb ? t->bd[0] : t->bd[1];
    double *y = calloc((size_t)(M * N), sizeof(double));
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) {
          double av = t->ta ? a[k * M + i] : a[i * K + k];
          double bv = t->tb ? b[j * K + k] : b[k * N + j];
          s += av * bv;
        }
        s *= t->alpha;
        if (c) {
          int64_t ci = 0;
          if (t->rc == 1)
            ci = t->cd[0] == 1 ? 0 : j;
          else if (t->rc == 2)
            ci = (t->cd[0] == 1 ? 0 : i) * t->cd[1] + (t->cd[1] == 1 ? 0 : j);
          s += t->beta * c[ci];
        }
        y[i * N + j] = act_ref(t->act, s);
      }
    *yn = M * N;
    return y;
  }
  /* MatMul: batch dims broadcast (ranks 2..4 here, both >= 2 or B 2-D) */
  int64_t M = t->ad[t->ra - 2], K = t->ad[t->ra - 1], N = t->bd[t->rb - 1];
  int br = (t->ra > t->rb ? t->ra : t->rb) - 2;
  int64_t bdims[2] = {1, 1}, nb = 1;
  for (int i = 0; i < br; i++) {
    int ia = t->ra - 2 - br + i, ib = t->rb - 2 - br + i;
    int64_t da = ia >= 0 ? t->ad[ia] : 1, db = ib >= 0 ? t->bd[ib] : 1;
    bdims[i] = da > db ? da : db;
    nb *= bdims[i];
  }
  double *y = calloc((size_t)(nb * M * N), sizeof(double));
  for (int64_t bt = 0; bt < nb; bt++) {
    int64_t oa = 0, ob = 0, sa = 1, sb = 1, rem = bt;
    for (int i = br - 1; i >= 0; i--) {
      int64_t q = rem % bdims[i];
      rem /= bdims[i];
      int ia = t->ra - 2 - br + i, ib = t->rb - 2 - br + i;
      int64_t da = ia >= 0 ? t->ad[ia] : 1, db = ib >= 0 ? t->bd[ib] : 1;
      oa += (da == 1 ? 0 : q) * sa;
      ob += (db == 1 ? 0 : q) * sb;
      sa *= da;
      sb *= db;
    }
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double s = 0;
        for (int64_t k = 0; k < K; k++)
          s += (double)a[(oa * M + i) * K + k] * b[(ob * K + k) * N + j];
        y[(bt * M + i) * N + j] = act_ref(t->act, s);
      }
  }
  *yn = nb * M * N;
  return y;
}

static bool run_mm_case(const mm_case *t) {
  int64_t an = 1, bn = 1, cn = 1;
  for (int i = 0; i < t->ra; i++)
    an *= t->ad[i];
  for (int i = 0; i < t->rb; i++)
    bn *= t->bd[i];
  for (int i = 0; i < t->rc; i++)
    cn *= t->cd[i];
  float *a = rnd_vec(an), *b = rnd_vec(bn), *c = t->rc >= 0 ? rnd_vec(cn) : NULL;
  int64_t yn = 0;
  double *want = mm_ref(t, a, b, c, &yn);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "a", NN_DTYPE_FLOAT, t->ra, t->ad);
  if (t->b_const)
    mb_init_f32(&m, "b", t->rb, t->bd, b);
  else
    mb_input(&m, "b", NN_DTYPE_FLOAT, t->rb, t->bd);
  if (c)
    mb_init_f32(&m, "c", t->rc, t->cd, c);
  if (t->act && strcmp(t->act, "Clip") == 0) {
    mb_init_f32(&m, "lo", 0, NULL, (float[]){0.0f});
    mb_init_f32(&m, "hi", 0, NULL, (float[]){6.0f});
  }
  const char *ins = t->gemm ? (c ? "a,b,c" : "a,b") : "a,b";
  OnnxSubset__NodeProto *n = mb_node(&m, t->gemm ? "Gemm" : "MatMul", "mm", ins, t->act ? "h" : "y");
  if (t->gemm) {
    mb_attr_int(&m, n, "transA", t->ta);
    mb_attr_int(&m, n, "transB", t->tb);
    attr_float(&m, n, "alpha", t->alpha);
    attr_float(&m, n, "beta", t->beta);
  }
  if (t->act)
    mb_node(&m, t->act, "act", strcmp(t->act, "Clip") == 0 ? "h,lo,hi" : "h", "y");
  mb_output(&m, "y");
  int64_t K = t->gemm ? (t->ta ? t->ad[0] : t->ad[1]) : t->ad[t->ra - 1];
  double tol = 2e-6 * sqrt((double)K) + 1e-6;
  float *ins_v[2] = {a, b};
  bool ok = run_threads(&m, t->name, t->b_const ? 1 : 2, ins_v, want, yn, tol);
  mb_free(&m);
  free(a);
  free(b);
  free(c);
  free(want);
  return ok;
}

static const mm_case mm_cases[] = {
  {"matmul const B folded rows", false, 3, 2, {2, 5, 64}, {64, 48}, true, 0, 0, 1, 0, -1, {0}, NULL},
  {"matmul const B batched", false, 3, 3, {3, 4, 32}, {3, 32, 24}, true, 0, 0, 1, 0, -1, {0}, "Relu"},
  {"matmul const B broadcast", false, 4, 3, {2, 3, 5, 16}, {3, 16, 9}, true, 0, 0, 1, 0, -1, {0}, NULL},
  {"matmul one row const", false, 2, 2, {1, 70}, {70, 50}, true, 0, 0, 1, 0, -1, {0}, NULL},
  {"matmul variable B", false, 3, 3, {4, 7, 20}, {1, 20, 33}, false, 0, 0, 1, 0, -1, {0}, NULL},
  {"matmul many small", false, 3, 3, {16, 8, 8}, {16, 8, 8}, false, 0, 0, 1, 0, -1, {0}, NULL},
  {"gemm fc one row", true, 2, 2, {1, 300}, {100, 300}, true, 0, 1, 1, 1, 1, {100}, "Relu"},
  {"gemm fc rows", true, 2, 2, {6, 80}, {50, 80}, true, 0, 1, 1, 1, 1, {50}, NULL},
  {"gemm transA alpha", true, 2, 2, {40, 7}, {40, 30}, true, 1, 0, 2.0f, 1, 2, {7, 1}, NULL},
  {"gemm C full beta", true, 2, 2, {9, 20}, {20, 11}, false, 0, 0, 0.5f, 0.5f, 2, {9, 11}, "Clip"},
  {"gemm C scalar", true, 2, 2, {1, 20}, {11, 20}, false, 0, 1, 1, 1, 0, {0}, NULL},
  {"gemm no C one row", true, 2, 2, {1, 33}, {33, 17}, true, 0, 0, 1, 0, -1, {0}, NULL},
  {"gemm transA C row one row", true, 2, 2, {33, 1}, {17, 33}, true, 1, 1, 1, 2.0f, 2, {1, 17}, NULL},
  {"gemm C column", true, 2, 2, {5, 33}, {17, 33}, true, 0, 1, 1, 1, 2, {5, 1}, "Relu"},
};

/* A Conv whose input size changes between runs, in one session: the
 * planner hands the weights to the Conv as packed GEMM panels, restores the
 * ONNX layout before the re-plan, and packs them again; every run must
 * match the reference.  Grouped, with bias and a fused Relu, through the
 * implicit-GEMM path (3x3 stride 2) and the 1x1 one. */
static bool run_replan_case(const conv_case *base) {
  conv_case t = *base;
  const int64_t sizes[3][2] = {{9, 7}, {20, 17}, {9, 7}};
  int64_t wd[4] = {t.m, t.c / t.group, t.k[0], t.k[1]};
  int64_t wn = wd[0] * wd[1] * wd[2] * wd[3];
  float *w = rnd_vec(wn), *b = rnd_vec(t.m);
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]){1, t.c, -1, -1});
  mb_init_f32(&m, "w", 4, wd, w);
  mb_init_f32(&m, "b", 1, &t.m, b);
  OnnxSubset__NodeProto *n = mb_node(&m, "Conv", "conv", "x,w,b", "h");
  attr_ints(&m, n, "strides", 2, t.s);
  attr_ints(&m, n, "dilations", 2, t.d);
  attr_ints(&m, n, "pads", 4, (int64_t[]){t.pb[0], t.pb[1], t.pe[0], t.pe[1]});
  mb_attr_int(&m, n, "group", t.group);
  mb_node(&m, "Relu", "act", "h", "y");
  mb_output(&m, "y");
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  nn_options o;
  nn_options_init(&o);
  o.threads = 2;
  nn_session *s = NULL;
  nn_error err;
  bool ok = nn_session_create_from_memory(buf, len, &o, &s, &err) == NN_OK;
  if (!ok)
    fprintf(stderr, "  %s: create: %s\n", t.name, err.msg);
  for (int r = 0; ok && r < 3; r++) {
    t.in[0] = sizes[r][0];
    t.in[1] = sizes[r][1];
    int64_t out[2], xn = t.c * t.in[0] * t.in[1];
    for (int i = 0; i < 2; i++)
      out[i] = (t.in[i] + t.pb[i] + t.pe[i] - ((t.k[i] - 1) * t.d[i] + 1)) / t.s[i] + 1;
    float *x = rnd_vec(xn);
    double *want = conv_ref(&t, out, x, w, b);
    nn_tensor *in;
    const nn_tensor *y;
    if (nn_session_set_input_shape(s, 0, 4, (int64_t[]){1, t.c, t.in[0], t.in[1]}) != NN_OK ||
        nn_session_input_tensor(s, 0, &in) != NN_OK) {
      fprintf(stderr, "  %s: input: %s\n", t.name, nn_session_last_error(s));
      ok = false;
    } else {
      memcpy(in->data, x, in->nbytes);
      if (nn_session_run(s) != NN_OK || nn_session_output_tensor(s, 0, &y) != NN_OK) {
        fprintf(stderr, "  %s: run %d: %s\n", t.name, r, nn_session_last_error(s));
        ok = false;
      } else if ((int64_t)(y->nbytes / sizeof(float)) != t.m * out[0] * out[1]) {
        fprintf(stderr, "  %s: run %d: %zu bytes out\n", t.name, r, y->nbytes);
        ok = false;
      } else {
        char what[96];
        snprintf(what, sizeof what, "%s run %d (%lldx%lld)", t.name, r, (long long)t.in[0],
                 (long long)t.in[1]);
        ok = compare(what, y->data, want, t.m * out[0] * out[1],
                     2e-6 * sqrt((double)(wd[1] * wd[2] * wd[3])) + 1e-6);
      }
    }
    free(x);
    free(want);
  }
  nn_session_free(s);
  free(buf);
  mb_free(&m);
  free(w);
  free(b);
  return ok;
}

static const conv_case replan_cases[] = {
  {"re-plan implicit grouped", 2, 1, 8, 12, 2, {0}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 0}, true, "Relu", false, {0}},
  {"re-plan 1x1 grouped", 2, 1, 8, 12, 2, {0}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, "Relu", false, {0}},
};

/* ---- Gemm with C in the types the engine does not take ---------------------------
 * A Gemm's third input is its C, not a fused bias: float64 and float16
 * Gemms with a C run (a check meant for MatMul's fused Adds once refused
 * them). */
static bool run_gemm_c_types(void) {
  bool ok = true;
  const int64_t ad[2] = {3, 4}, bd[2] = {4, 5}, cd[1] = {5};
  /* float64: A . B + C against a double reference */
  double a[12], b[20], cc[5], want[15];
  for (int i = 0; i < 12; i++)
    a[i] = rndf();
  for (int i = 0; i < 20; i++)
    b[i] = rndf();
  for (int i = 0; i < 5; i++)
    cc[i] = rndf();
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) {
      double acc = cc[j];
      for (int k = 0; k < 4; k++)
        acc += a[i * 4 + k] * b[k * 5 + j];
      want[i * 5 + j] = acc;
    }
  for (int half = 0; half < 2; half++) {
    nn_dtype dt = half ? NN_DTYPE_FLOAT16 : NN_DTYPE_DOUBLE;
    mb m;
    mb_init(&m, 13);
    mb_input(&m, "a", dt, 2, ad);
    mb_input(&m, "b", dt, 2, bd);
    mb_input(&m, "c", dt, 1, cd);
    mb_node(&m, "Gemm", "gemm", "a,b,c", "y");
    mb_output(&m, "y");
    /* float16: ones times ones plus 2 is 6 everywhere (0x3c00, 0x4000, 0x4600) */
    uint16_t ha[12], hb[20], hc[5];
    for (int i = 0; i < 12; i++)
      ha[i] = 0x3c00;
    for (int i = 0; i < 20; i++)
      hb[i] = 0x3c00;
    for (int i = 0; i < 5; i++)
      hc[i] = 0x4000;
    float *in[3] = {half ? (float *)ha : (float *)a, half ? (float *)hb : (float *)b,
                    half ? (float *)hc : (float *)cc};
    int64_t got_n = 0;
    float *got = run_model(&m, 1, 3, in, &got_n);
    if (!got) {
      fprintf(stderr, "  Gemm %s with C: no result\n", half ? "float16" : "float64");
      ok = false;
    } else if (half) {
      const uint16_t *y = (const uint16_t *)got;
      for (int i = 0; i < 15; i++)
        if (y[i] != 0x4600) {
          fprintf(stderr, "  Gemm float16 with C: y[%d] = 0x%04x, want 0x4600\n", i, y[i]);
          ok = false;
          break;
        }
    } else {
      const double *y = (const double *)got;
      for (int i = 0; i < 15; i++)
        if (!(fabs(y[i] - want[i]) <= 1e-12)) {
          fprintf(stderr, "  Gemm float64 with C: y[%d] = %.17g, want %.17g\n", i, y[i], want[i]);
          ok = false;
          break;
        }
    }
    free(got);
    mb_free(&m);
  }
  return ok;
}

/* ---- row normalizations ----------------------------------------------------------
 * LayerNormalization (rows of an odd length longer than a statistics block,
 * so the vector lanes, the scalar tail and several block totals all count)
 * and InstanceNormalization, on values offset from zero (the variance must
 * come from centred squares), in place or not as the planner decides;
 * against double statistics. */
static bool run_norm_case(bool layer) {
  const int64_t rows = 3, len = 1299;           /* layer: [rows, len] */
  const int64_t xd4[4] = {1, 3, 37, 35}, cd[1] = {3};
  int64_t n = layer ? rows * len : 3 * 37 * 35, rl = layer ? len : 37 * 35;
  float *x = rnd_vec(n), *sc = rnd_vec(layer ? len : 3), *bi = rnd_vec(layer ? len : 3);
  for (int64_t i = 0; i < n; i++)
    x[i] = 8.0f + 2.0f * x[i] + (float)(i / rl);   /* each row its own mean */
  double *want = malloc(sizeof(double) * (size_t)n);
  for (int64_t r = 0; r < n / rl; r++) {
    const float *xr = x + r * rl;
    double m = 0, v = 0;
    for (int64_t i = 0; i < rl; i++)
      m += xr[i];
    m /= (double)rl;
    for (int64_t i = 0; i < rl; i++)
      v += (xr[i] - m) * (xr[i] - m);
    double inv = 1.0 / sqrt(v / (double)rl + 1e-5);
    for (int64_t i = 0; i < rl; i++) {
      int64_t pi = layer ? i : r;
      want[r * rl + i] = (xr[i] - m) * inv * sc[pi] + bi[pi];
    }
  }
  mb m;
  mb_init(&m, 17);
  if (layer) {
    const int64_t xd[2] = {rows, len};
    mb_input(&m, "x", NN_DTYPE_FLOAT, 2, xd);
    mb_init_f32(&m, "s", 1, &len, sc);
    mb_init_f32(&m, "b", 1, &len, bi);
  } else {
    mb_input(&m, "x", NN_DTYPE_FLOAT, 4, xd4);
    mb_init_f32(&m, "s", 1, cd, sc);
    mb_init_f32(&m, "b", 1, cd, bi);
  }
  /* an Abs first (x > 0: the identity): its output is the planner's to
   * place, so the normalization may run in place over it */
  mb_node(&m, "Abs", "abs", "x", "h");
  OnnxSubset__NodeProto *nd = mb_node(&m, layer ? "LayerNormalization" : "InstanceNormalization",
                                      "norm", "h,s,b", "y");
  attr_float(&m, nd, "epsilon", 1e-5f);
  mb_output(&m, "y");
  bool ok = run_threads(&m, layer ? "LayerNormalization" : "InstanceNormalization", 1, &x, want,
                        n, 2e-6);
  mb_free(&m);
  free(x);
  free(sc);
  free(bi);
  free(want);
  return ok;
}

/* ---- RNN, GRU, LSTM (float32: input projection GEMM, packed-R GEMV per step) --- */
typedef struct rnn_case {
  const char *name, *cell;       /* "RNN", "GRU", "LSTM" */
  const char *dir;               /* "forward", "reverse", "bidirectional" */
  int64_t S, B, I, H;
  int layout;                    /* 1: batch first (opset 14) */
  int lbr;                       /* GRU linear_before_reset */
  float clip;                    /* 0: none */
  bool peep, init, seq_lens, input_forget;
  bool r_input;                  /* R a graph input (packed at every run) */
} rnn_case;

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }
static double clipd(const rnn_case *t, double v) {
  return t->clip > 0 ? fmin(fmax(v, -t->clip), t->clip) : v;
}

/* The ONNX definitions in double, straight from the spec's equations. */
static double *rnn_ref(const rnn_case *t, int G, int D, const float *x, const float *w,
                       const float *r, const float *b, const int32_t *sl, const float *h0,
                       const float *c0, const float *P) {
  const int64_t S = t->S, B = t->B, I = t->I, H = t->H, GH = G * H;
  double *y = calloc((size_t)(S * D * B * H), sizeof(double));
  double *h = malloc(sizeof(double) * (size_t)H), *c = malloc(sizeof(double) * (size_t)H);
  double *g = malloc(sizeof(double) * (size_t)GH), *hn = malloc(sizeof(double) * (size_t)H);
  for (int d = 0; d < D; d++) {
    bool rev = strcmp(t->dir, "reverse") == 0 || d == 1;
    const float *wd = w + d * GH * I, *rd = r + d * GH * H, *bd = b + d * 2 * GH;
    for (int64_t bt = 0; bt < B; bt++) {
      int64_t len = sl ? sl[bt] : S;
      int64_t ho = t->layout ? (bt * D + d) * H : (d * B + bt) * H;
      for (int64_t k = 0; k < H; k++) {
        h[k] = h0 ? h0[ho + k] : 0;
        c[k] = c0 ? c0[ho + k] : 0;
      }
      for (int64_t st = 0; st < len; st++) {
        int64_t tt = rev ? len - 1 - st : st;
        const float *xt = x + (t->layout ? bt * S + tt : tt * B + bt) * I;
        for (int64_t j = 0; j < GH; j++) {   /* X W^T + Wb, and H R^T + Rb but GRU's h rows */
          double a = bd[j];
          for (int64_t i = 0; i < I; i++)
            a += (double)xt[i] * wd[j * I + i];
          if (!(G == 3 && j >= 2 * H)) {
            a += bd[GH + j];
            for (int64_t k = 0; k < H; k++)
              a += h[k] * rd[j * H + k];
          }
          g[j] = a;
        }
        for (int64_t k = 0; k < H; k++) {
          if (G == 1) {
            hn[k] = tanh(clipd(t, g[k]));
          } else if (G == 3) {
            double z = sigm(clipd(t, g[k])), rr = sigm(clipd(t, g[H + k])), a = 0;
            for (int64_t m = 0; m < H; m++)
              a += (t->lbr ? h[m] : h[m] * sigm(clipd(t, g[H + m]))) * rd[(2 * H + k) * H + m];
            double hh = t->lbr ? g[2 * H + k] + rr * (a + bd[GH + 2 * H + k])
                               : g[2 * H + k] + a + bd[GH + 2 * H + k];
            hn[k] = (1 - z) * tanh(clipd(t, hh)) + z * h[k];
          } else {
            double pi = P ? P[d * 3 * H + k] : 0, po = P ? P[d * 3 * H + H + k] : 0,
                   pf = P ? P[d * 3 * H + 2 * H + k] : 0;
            double it = sigm(clipd(t, g[k] + pi * c[k]));
            double ft = t->input_forget ? 1 - it : sigm(clipd(t, g[2 * H + k] + pf * c[k]));
            double ct = tanh(clipd(t, g[3 * H + k]));
            c[k] = ft * c[k] + it * ct;
            double ot = sigm(clipd(t, g[H + k] + po * c[k]));
            hn[k] = ot * tanh(c[k]);
          }
        }
        memcpy(h, hn, sizeof(double) * (size_t)H);
        int64_t yo = t->layout ? ((bt * S + tt) * D + d) * H : ((tt * D + d) * B + bt) * H;
        memcpy(y + yo, h, sizeof(double) * (size_t)H);
      }
    }
  }
  free(h);
  free(c);
  free(g);
  free(hn);
  return y;
}

static bool run_rnn_case(const rnn_case *t) {
  const int G = strcmp(t->cell, "LSTM") == 0 ? 4 : strcmp(t->cell, "GRU") == 0 ? 3 : 1;
  const int D = strcmp(t->dir, "bidirectional") == 0 ? 2 : 1;
  const bool lstm = G == 4;
  const int64_t S = t->S, B = t->B, I = t->I, H = t->H;
  int64_t xd[3] = {S, B, I}, wd[3] = {D, G * H, I}, rdm[3] = {D, G * H, H}, bd[2] = {D, 2 * G * H};
  int64_t hd[3] = {D, B, H}, pd[2] = {D, 3 * H};
  if (t->layout) {
    xd[0] = B, xd[1] = S;
    hd[0] = B, hd[1] = D;
  }
  float *x = rnd_vec(S * B * I), *w = rnd_vec(D * G * H * I), *r = rnd_vec(D * G * H * H);
  float *b = rnd_vec(D * 2 * G * H), *h0 = rnd_vec(D * B * H), *c0 = rnd_vec(D * B * H);
  float *P = rnd_vec(D * 3 * H);
  for (int64_t i = 0; i < D * G * H * H; i++)   /* keep the recurrence from saturating */
    r[i] *= 2.0f / sqrtf((float)H);
  for (int64_t i = 0; i < D * G * H * I; i++)
    w[i] *= 2.0f / sqrtf((float)I);
  int32_t sl[8];
  for (int64_t i = 0; i < B; i++)
    sl[i] = (int32_t)(S - (i * 2) % S);   /* S, S - 2, ...: the shorter rows' tails stay 0 */
  double *want = rnn_ref(t, G, D, x, w, r, b, t->seq_lens ? sl : NULL, t->init ? h0 : NULL,
                         t->init && lstm ? c0 : NULL, t->peep ? P : NULL);
  mb m;
  mb_init(&m, t->layout ? 14 : 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 3, xd);
  if (t->r_input)
    mb_input(&m, "r", NN_DTYPE_FLOAT, 3, rdm);
  else
    mb_init_f32(&m, "r", 3, rdm, r);
  mb_init_f32(&m, "w", 3, wd, w);
  mb_init_f32(&m, "b", 2, bd, b);
  if (t->seq_lens) {
    OnnxSubset__TensorProto *st = mb_init_f32(&m, "sl", 1, &t->B, NULL);
    st->data_type = NN_DTYPE_INT32;
    st->int32_data = malloc(sizeof(int32_t) * (size_t)B);
    memcpy(st->int32_data, sl, sizeof(int32_t) * (size_t)B);
    m.blobs[m.n_blobs++] = st->int32_data;
    st->n_int32_data = (size_t)B;
  }
  if (t->init) {
    mb_init_f32(&m, "h0", 3, hd, h0);
    if (lstm)
      mb_init_f32(&m, "c0", 3, hd, c0);
  }
  if (t->peep)
    mb_init_f32(&m, "p", 2, pd, P);
  char ins[64];
  snprintf(ins, sizeof ins, "x,w,r,b,%s,%s%s%s", t->seq_lens ? "sl" : "", t->init ? "h0" : "",
           lstm ? (t->init ? ",c0" : ",") : "", lstm && t->peep ? ",p" : "");
  OnnxSubset__NodeProto *n = mb_node(&m, t->cell, "rnn", ins, "y");
  mb_attr_int(&m, n, "hidden_size", H);
  OnnxSubset__AttributeProto *a = attr_new(&m, n, "direction");
  a->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  a->has_s = 1;
  a->s.data = (uint8_t *)mb_str(&m, t->dir);
  a->s.len = strlen(t->dir);
  if (t->layout)
    mb_attr_int(&m, n, "layout", 1);
  if (t->lbr)
    mb_attr_int(&m, n, "linear_before_reset", 1);
  if (t->input_forget)
    mb_attr_int(&m, n, "input_forget", 1);
  if (t->clip > 0)
    attr_float(&m, n, "clip", t->clip);
  mb_output(&m, "y");
  float *inputs[2] = {x, r};
  bool ok = run_threads(&m, t->name, t->r_input ? 2 : 1, inputs, want, S * D * B * H, 2e-5);
  mb_free(&m);
  free(x);
  free(w);
  free(r);
  free(b);
  free(h0);
  free(c0);
  free(P);
  free(want);
  return ok;
}

/* ---- Transpose: tiles through 8x8 register transposes (vmath) ------------------ */
static bool run_transpose_case(const int64_t *dims, const int64_t *perm) {
  int64_t n = dims[0] * dims[1] * dims[2] * dims[3], od[4], istr[4] = {dims[1] * dims[2] * dims[3],
                                                                       dims[2] * dims[3], dims[3], 1};
  for (int i = 0; i < 4; i++)
    od[i] = dims[perm[i]];
  float *x = rnd_vec(n);
  double *want = malloc(sizeof(double) * (size_t)n);
  int64_t o = 0;
  for (int64_t a = 0; a < od[0]; a++)
    for (int64_t b = 0; b < od[1]; b++)
      for (int64_t c = 0; c < od[2]; c++)
        for (int64_t d = 0; d < od[3]; d++) {
          int64_t idx[4] = {a, b, c, d}, src = 0;
          for (int i = 0; i < 4; i++)
            src += idx[i] * istr[perm[i]];
          want[o++] = x[src];
        }
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 4, dims);
  OnnxSubset__NodeProto *nd = mb_node(&m, "Transpose", "t", "x", "y");
  attr_ints(&m, nd, "perm", 4, perm);
  mb_output(&m, "y");
  char name[96];
  snprintf(name, sizeof name, "transpose %lldx%lldx%lldx%lld perm %lld%lld%lld%lld", (long long)dims[0],
           (long long)dims[1], (long long)dims[2], (long long)dims[3], (long long)perm[0],
           (long long)perm[1], (long long)perm[2], (long long)perm[3]);
  bool ok = run_threads(&m, name, 1, &x, want, n, 0.0);
  printf("%s %s\n", ok ? "ok  " : "FAIL", name);
  mb_free(&m);
  free(x);
  free(want);
  return ok;
}

/* ---- integer convolutions and the 8-bit quantizers ---------------------------------
 * QLinearConv / ConvInteger through the float engine (exact while every
 * partial sum stays below 2^24: input channels cut into chunks) and the
 * vector QuantizeLinear / DequantizeLinear / requantization, against the
 * spec's integer arithmetic here, byte for byte. */
static OnnxSubset__TensorProto *init_typed(mb *m, const char *name, int dt, int rank,
                                           const int64_t *dims, const void *data, size_t es) {
  OnnxSubset__TensorProto *t = mb_init_f32(m, name, rank, dims, NULL);
  t->data_type = dt;
  size_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= (size_t)dims[i];
  t->raw_data.data = malloc(n * es + 1);
  memcpy(t->raw_data.data, data, n * es);
  t->raw_data.len = n * es;
  t->has_raw_data = 1;
  m->blobs[m->n_blobs++] = t->raw_data.data;
  return t;
}

/* Run twice with one input of in_bytes (the second run reads what the
 * first made once: constant weights' float copies); the first output's
 * bytes (malloc'd), NULL unless both runs gave the same bytes. */
static unsigned char *run_raw(mb *m, int threads, const void *in, size_t in_bytes, size_t *out_bytes) {
  size_t len;
  uint8_t *buf = mb_pack(m, &len);
  nn_options o;
  nn_options_init(&o);
  o.threads = threads;
  nn_session *s = NULL;
  nn_error err;
  nn_status st = nn_session_create_from_memory(buf, len, &o, &s, &err);
  free(buf);
  if (st != NN_OK) {
    fprintf(stderr, "  create: %s\n", err.msg);
    return NULL;
  }
  nn_tensor *t;
  unsigned char *res = NULL;
  for (int run = 0; run < 2 && nn_session_input_tensor(s, 0, &t) == NN_OK && t->nbytes == in_bytes;
       run++) {
    memcpy(t->data, in, in_bytes);
    const nn_tensor *out;
    if (nn_session_run(s) != NN_OK || nn_session_output_tensor(s, 0, &out) != NN_OK) {
      fprintf(stderr, "  run: %s\n", nn_session_last_error(s));
      free(res);
      res = NULL;
      break;
    }
    if (run == 0) {
      res = malloc(out->nbytes + 1);
      memcpy(res, out->data, out->nbytes);
      *out_bytes = out->nbytes;
    } else if (out->nbytes != *out_bytes || memcmp(res, out->data, out->nbytes) != 0) {
      fprintf(stderr, "  the second run's output differs from the first's\n");
      free(res);
      res = NULL;
    }
  }
  nn_session_free(s);
  return res;
}

typedef struct qconv_case {
  const char *name;
  bool linear;                  /* QLinearConv (else ConvInteger: int32 out) */
  bool x_u8, w_u8;
  int64_t C, M, group, H, W, k, s, pad;
  int xzp, wrange;              /* the weights uniform in [-wrange, wrange] (+ their zp) */
  bool per_channel;
  bool worst;                   /* x at its maximum (a few one below), w at +wrange: sums far
                                   past 2^24, wrong unless cut into exact chunks */
  int dil, batch;               /* 0 = 1 */
  bool wz0;                     /* per-tensor weight zero point 0 (+128 for uint8) */
  float ys;                     /* y_scale, 0 = 0.05: a tiny one sends products past the int32
                                   range both ways, NaN makes every one NaN (MLAS: the low end) */
} qconv_case;

static bool run_qconv_case(const qconv_case *t) {
  const int64_t Cg = t->C / t->group, Mg = t->M / t->group, K = Cg * t->k * t->k;
  const int64_t D = t->dil ? t->dil : 1, NB = t->batch ? t->batch : 1, ke = D * (t->k - 1) + 1;
  const int64_t OH = (t->H + 2 * t->pad - ke) / t->s + 1, OW = (t->W + 2 * t->pad - ke) / t->s + 1;
  const int64_t xn = NB * t->C * t->H * t->W, wn = t->M * K, yn = NB * t->M * OH * OW;
  unsigned char *x = malloc((size_t)xn), *w = malloc((size_t)wn);
  int32_t *bias = malloc(sizeof(int32_t) * (size_t)t->M), wzp[512];
  float wsc[512];
  for (int64_t i = 0; i < xn; i++)
    x[i] = (unsigned char)(g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull, g_rng >> 56);
  for (int64_t m = 0; m < t->M; m++) {
    wzp[m] = t->per_channel ? (int)(m % 5) - 2 : t->wz0 ? 0 : 1;
    if (t->w_u8)
      wzp[m] += 128;
    wsc[m] = 0.002f + 0.0005f * (float)(m % 7);
    bias[m] = (int32_t)(rndf() * 3000.0f);
  }
  if (t->worst)
    for (int64_t i = 0; i < xn; i++)
      x[i] = (unsigned char)(t->x_u8 ? 255 - (i % 7 == 3) : 127 - (i % 7 == 3));
  for (int64_t i = 0; i < wn; i++) {
    int v = (t->worst ? t->wrange : (int)(rndf() * (float)t->wrange)) + wzp[t->per_channel ? i / K : 0];
    w[i] = (unsigned char)(t->w_u8 ? (v < 0 ? 0 : v > 255 ? 255 : v) : (v < -128 ? -128 : v > 127 ? 127 : v));
  }
  const float xs = 0.02f, ys = t->ys != 0.0f ? t->ys : 0.05f;   /* NaN != 0 */
  const int yzp = t->x_u8 ? 120 : -7;
  /* reference: exact int32 sums, the spec's requantization */
  int64_t *acc = calloc((size_t)yn, sizeof(int64_t));
  for (int64_t bm = 0; bm < NB * t->M; bm++) {
    int64_t m = bm % t->M, bi = bm / t->M, gi = m / Mg;
    int wz = wzp[t->per_channel ? m : 0];
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t a = 0;
        for (int64_t cl = 0; cl < Cg; cl++)
          for (int64_t kh = 0; kh < t->k; kh++)
            for (int64_t kw = 0; kw < t->k; kw++) {
              int64_t ih = oh * t->s - t->pad + kh * D, iw = ow * t->s - t->pad + kw * D;
              if (ih < 0 || ih >= t->H || iw < 0 || iw >= t->W)
                continue;
              unsigned char xb = x[(((bi * t->C) + gi * Cg + cl) * t->H + ih) * t->W + iw];
              unsigned char wb = w[m * K + (cl * t->k + kh) * t->k + kw];
              int xv = t->x_u8 ? (int)xb : (int)(int8_t)xb, wv = t->w_u8 ? (int)wb : (int)(int8_t)wb;
              a += (int64_t)(xv - t->xzp) * (wv - wz);
            }
        acc[(bm * OH + oh) * OW + ow] = a;
      }
  }
  mb m;
  mb_init(&m, 13);
  int64_t xd[4] = {NB, t->C, t->H, t->W}, wd[4] = {t->M, Cg, t->k, t->k}, one = 1, mdim = t->M;
  mb_input(&m, "x", t->x_u8 ? NN_DTYPE_UINT8 : NN_DTYPE_INT8, 4, xd);
  int xdt = t->x_u8 ? NN_DTYPE_UINT8 : NN_DTYPE_INT8, wdt = t->w_u8 ? NN_DTYPE_UINT8 : NN_DTYPE_INT8;
  unsigned char xz = (unsigned char)t->xzp, yz = (unsigned char)yzp, wz8[512];
  for (int64_t i = 0; i < t->M; i++)
    wz8[i] = (unsigned char)wzp[i];
  const int64_t nwz = t->per_channel ? t->M : 1;
  init_typed(&m, "w", wdt, 4, wd, w, 1);
  init_typed(&m, "xz", xdt, 0, &one, &xz, 1);
  init_typed(&m, "wz", wdt, t->per_channel ? 1 : 0, &nwz, wz8, 1);
  int64_t ins_pads[4] = {t->pad, t->pad, t->pad, t->pad}, strides[2] = {t->s, t->s};
  OnnxSubset__NodeProto *nd;
  if (t->linear) {
    mb_init_f32(&m, "xs", 0, NULL, &xs);
    mb_init_f32(&m, "ws", t->per_channel ? 1 : 0, &mdim, wsc);
    mb_init_f32(&m, "ys", 0, NULL, &ys);
    init_typed(&m, "yz", xdt, 0, &one, &yz, 1);
    init_typed(&m, "b", NN_DTYPE_INT32, 1, &mdim, bias, 4);
    nd = mb_node(&m, "QLinearConv", "q", "x,xs,xz,w,ws,wz,ys,yz,b", "y");
  } else {
    nd = mb_node(&m, "ConvInteger", "q", "x,w,xz,wz", "y");
  }
  attr_ints(&m, nd, "pads", 4, ins_pads);
  attr_ints(&m, nd, "strides", 2, strides);
  int64_t dils[2] = {D, D};
  attr_ints(&m, nd, "dilations", 2, dils);
  mb_attr_int(&m, nd, "group", t->group);
  mb_output(&m, "y");
  bool ok = true;
  for (int threads = 1; threads <= 2 && ok; threads++) {
    size_t ob = 0;
    unsigned char *got = run_raw(&m, threads, x, (size_t)xn, &ob);
    if (!got || ob != (size_t)yn * (t->linear ? 1 : 4)) {
      fprintf(stderr, "  %s: no result or %zu bytes\n", t->name, ob);
      ok = false;
    }
    for (int64_t i = 0; ok && i < yn; i++) {
      int64_t mo = i / (OH * OW) % t->M;
      int64_t want, have;
      if (t->linear) {
        /* ONNX Runtime's requantization (MLAS): the wrapped int32 sum times
         * the float32 multiplier, in float32, clamped, rounded half to even */
        float mult = xs * wsc[t->per_channel ? mo : 0] / ys;
        int32_t s32 = (int32_t)((uint32_t)(uint64_t)acc[i] + (uint32_t)bias[mo]);
        double v = nearbyintf((float)s32 * mult) + yzp;
        double lo = t->x_u8 ? 0 : -128, hi = t->x_u8 ? 255 : 127;
        want = (int64_t)(v != v || v < lo ? lo : v > hi ? hi : v);
        have = t->x_u8 ? got[i] : (int8_t)got[i];
      } else {
        want = (int32_t)(uint32_t)(uint64_t)acc[i];
        int32_t h32;
        memcpy(&h32, got + 4 * i, 4);
        have = h32;
      }
      if (want != have) {
        fprintf(stderr, "  %s threads=%d: element %lld is %lld, want %lld\n", t->name, threads,
                (long long)i, (long long)have, (long long)want);
        ok = false;
      }
    }
    free(got);
  }
  mb_free(&m);
  free(x);
  free(w);
  free(bias);
  free(acc);
  return ok;
}

static const qconv_case qconv_cases[] = {
  /* 160 x 9 taps of |w| up to 127 against |x - 128| up to 128: over 2^24,
   * two chunks of input channels */
  {"qlinearconv 3x3 chunked u8", true, true, false, 160, 24, 1, 11, 13, 3, 1, 1, 128, 127, true},
  {"qlinearconv 3x3 s2 one chunk u8", true, true, false, 48, 36, 1, 15, 14, 3, 2, 1, 128, 40, false},
  {"qlinearconv depthwise s2 int8", true, false, false, 24, 24, 24, 17, 19, 3, 2, 1, -3, 127, true},
  {"qlinearconv grouped 1x1 int8 x u8 w", true, false, true, 32, 48, 2, 9, 10, 1, 1, 0, 5, 100, true},
  {"convinteger 3x3 chunked", false, true, false, 200, 20, 1, 8, 9, 3, 1, 1, 0, 127, false},
  {"convinteger 3x3 worst sums", false, true, false, 200, 20, 1, 8, 9, 3, 1, 1, 0, 127, false, true},
  /* the integer GEMM's layouts: wide rows of a padded copy (stride 1), rows
   * gathered (stride 2), the image in place (uint8, no padding: 1x1, and a
   * strided 3x3), an int8 image shifted (in place for a 1x1 only through its
   * copy), several column blocks, batches, dilation, groups, weight zero
   * points 0 (no column sums) */
  {"qlinearconv 3x3 u8 wide blocks batch 2", true, true, false, 40, 70, 1, 37, 41, 3, 1, 1, 131, 127, true, false, 1, 2},
  {"qlinearconv 3x3 int8 dil 2 wz 0", true, false, false, 24, 19, 1, 23, 29, 3, 1, 2, -5, 90, false, false, 2, 1, true},
  {"qlinearconv 3x3 s2 unpadded u8 in place", true, true, true, 17, 33, 1, 21, 18, 3, 2, 0, 7, 127, false, false, 0, 2, true},
  {"qlinearconv 3x3 s1 unpadded u8 copy", true, true, false, 16, 9, 1, 12, 13, 3, 1, 0, 200, 60, true},
  {"qlinearconv 1x1 int8 s1", true, false, false, 96, 40, 1, 17, 30, 1, 1, 0, 3, 127, true, false, 0, 2},
  {"qlinearconv 1x1 u8 wz 0 in place", true, true, true, 64, 33, 1, 24, 24, 1, 1, 0, 0, 127, false, false, 0, 1, true},
  {"qlinearconv 5x5 s2 grouped int8", true, false, true, 24, 36, 3, 19, 22, 5, 2, 2, 11, 127, true},
  {"convinteger 1x1 s2 int8 wz 0", false, false, false, 40, 24, 1, 15, 16, 1, 2, 0, 1, 127, false, false, 0, 2, true},
  /* the direct kernel (cpu/qconv_direct.h: group 1, channels a multiple of
   * 4, weight zero points 0, output channels filling 3/4 of its panels):
   * panels of output channels with a partial last one, runs of pixels that are no multiple of its 6-pixel tile,
   * channels past a multiple of 16, strides, a 7x7 map, wrapping sums */
  {"qlinearconv direct 3x3 u8 M 112 batch 2", true, true, false, 20, 112, 1, 13, 11, 3, 1, 1, 131, 127, false, false, 1, 2, true},
  {"qlinearconv direct 3x3 s2 int8 x u8 w M 176", true, false, true, 36, 176, 1, 17, 20, 3, 2, 1, -7, 127, false, false, 0, 1, true},
  {"qlinearconv direct 3x3 7x7 map", true, true, false, 64, 64, 1, 7, 7, 3, 1, 1, 128, 127, false, false, 0, 1, true},
  {"convinteger direct 3x3 worst sums", false, true, false, 200, 64, 1, 8, 9, 3, 1, 1, 0, 127, false, true, 0, 1, true},
  {"qlinearconv direct 3x3 c12 u8 x u8 w", true, true, true, 12, 60, 1, 9, 8, 3, 1, 1, 100, 127, false, false, 0, 1, true},
  /* depthwise on the direct kernel (AVX-512 VNNI, AVX2, portable): two
   * pixels a step with an odd last one, a partial panel, strides, 5x5,
   * dilation */
  {"qlinearconv direct depthwise 3x3 u8", true, true, false, 100, 100, 100, 13, 11, 3, 1, 1, 131, 127, false, false, 0, 2, true},
  {"qlinearconv direct depthwise 3x3 s2 int8 x u8 w", true, false, true, 64, 64, 64, 15, 17, 3, 2, 1, -7, 127, false, false, 0, 1, true},
  {"qlinearconv direct depthwise 5x5 dil 2 c50", true, true, false, 50, 50, 50, 17, 14, 5, 1, 4, 128, 127, false, false, 2, 1, true},
  {"convinteger direct depthwise 3x3 worst", false, true, false, 64, 64, 64, 9, 9, 3, 1, 1, 0, 127, false, true, 0, 1, true},
  {"qlinearconv direct 5x5 s2 pad 2 int8", true, false, false, 52, 48, 1, 19, 22, 5, 2, 2, 11, 127, false, false, 0, 1, true},
  /* the requantization's clamps (in the kernel's registers): products far
   * past the int32 range both ways, and NaN; group 1 (a partial panel) and
   * depthwise, uint8 and int8 */
  {"qlinearconv direct 3x3 u8 clamps", true, true, false, 64, 80, 1, 9, 10, 3, 1, 1, 128, 127, false, false, 0, 1, true, 1e-9f},
  {"qlinearconv direct 3x3 int8 clamps", true, false, false, 32, 64, 1, 8, 9, 3, 1, 1, 0, 127, false, false, 0, 1, true, 1e-9f},
  {"qlinearconv direct depthwise u8 clamps", true, true, false, 64, 64, 64, 9, 9, 3, 1, 1, 128, 127, false, false, 0, 1, true, 1e-9f},
  {"qlinearconv direct 3x3 u8 NaN scale", true, true, false, 32, 64, 1, 7, 7, 3, 1, 1, 128, 127, false, false, 0, 1, true, NAN},
  {"qlinearconv direct depthwise int8 NaN scale", true, false, false, 64, 64, 64, 7, 7, 3, 1, 1, 0, 127, false, false, 0, 1, true, NAN},
};

/* One QLinearConv of a chain (run_qconv_chain_case): input `in`, output
 * `out`, M x (C / group) x k x k weights in [-100, 100], a bias and one
 * weight scale per output channel (zero points 0); the activations' scales
 * and zero points are the chain's shared initializers (the model builder
 * holds 64 blobs). */
static void chain_qconv(mb *m, const char *in, const char *out, int64_t C, int64_t M, int64_t k,
                        int64_t st, int64_t group) {
  char wn_[48], bn[48], sn[48], zn[48], ins[256];
  snprintf(wn_, sizeof wn_, "%s_w", out);
  snprintf(bn, sizeof bn, "%s_b", out);
  snprintf(sn, sizeof sn, "%s_ws", out);
  snprintf(zn, sizeof zn, "%s_wz", out);
  float wsc[256];
  unsigned char wz[256] = {0};
  for (int64_t i = 0; i < M; i++)   /* a different multiplier in each channel of 4 in a row */
    wsc[i] = 0.002f + 0.0004f * (float)(i % 11);
  mb_init_f32(m, sn, 1, &M, wsc);
  init_typed(m, zn, NN_DTYPE_INT8, 1, &M, wz, 1);
  const int64_t cg = C / group, wn = M * cg * k * k;
  int64_t wd[4] = {M, cg, k, k};
  unsigned char *w = malloc((size_t)wn);
  int32_t *b = malloc(sizeof(int32_t) * (size_t)M);
  for (int64_t i = 0; i < wn; i++)
    w[i] = (unsigned char)(int8_t)(int)(rndf() * 100.0f);
  for (int64_t i = 0; i < M; i++)
    b[i] = (int32_t)(rndf() * 500.0f);
  init_typed(m, wn_, NN_DTYPE_INT8, 4, wd, w, 1);
  init_typed(m, bn, NN_DTYPE_INT32, 1, &M, b, 4);
  snprintf(ins, sizeof ins, "%s,xs,xz,%s,%s,%s,ys,yz,%s", in, wn_, sn, zn, bn);
  OnnxSubset__NodeProto *nd = mb_node(m, "QLinearConv", out, ins, out);
  int64_t pads[4] = {k / 2, k / 2, k / 2, k / 2}, strides[2] = {st, st};
  attr_ints(m, nd, "pads", 4, pads);
  attr_ints(m, nd, "strides", 2, strides);
  mb_attr_int(m, nd, "group", group);
  free(w);
  free(b);
}

/* Direct integer convolutions in a chain (cpu/conv.c's qconv_link): the
 * tensors between them, used once, stay channels-last; the outputs must
 * be the GEMM path's (NN_NO_DIRECT=1, tested against references above)
 * byte for byte.  3x3 -> 1x1 -> depthwise 3x3 s2 -> 1x1 with M channels in
 * the middle (64: whole panels; 112: a last panel of 48, its channels-last
 * rows written up to the next pixel's), and a variant whose middle tensor
 * is also a graph output (not linked: it is compared). */
static bool run_qconv_chain_case(bool s8, bool middle_out, int64_t M) {
  const int64_t C = 16, H = 13, W = 18;
  mb m;
  mb_init(&m, 13);
  int64_t xd[4] = {1, C, H, W};
  const int xdt = s8 ? NN_DTYPE_INT8 : NN_DTYPE_UINT8;
  mb_input(&m, "x", xdt, 4, xd);
  const int64_t one = 1;
  unsigned char z = 0, xz = (unsigned char)(s8 ? -3 : 128), yz = (unsigned char)(s8 ? 5 : 120);
  const float xs = 0.05f, ys = 0.05f;
  (void)z;
  mb_init_f32(&m, "xs", 0, NULL, &xs);
  init_typed(&m, "xz", xdt, 0, &one, &xz, 1);
  mb_init_f32(&m, "ys", 0, NULL, &ys);
  init_typed(&m, "yz", xdt, 0, &one, &yz, 1);
  chain_qconv(&m, "x", "a", C, M, 3, 1, 1);
  chain_qconv(&m, "a", "b", M, M, 1, 1, 1);
  chain_qconv(&m, "b", "c", M, M, 3, 2, M);
  chain_qconv(&m, "c", "d", M, 96, 1, 1, 1);
  if (middle_out)   /* first: run_raw compares output 0 */
    mb_output(&m, "b");
  mb_output(&m, "d");
  static unsigned char x[16 * 13 * 18];
  for (size_t i = 0; i < sizeof x; i++)
    x[i] = (unsigned char)(rndf() * 255.0f);
  bool ok = true;
  for (int threads = 1; threads <= 2 && ok; threads++) {
    size_t nb = 0, rb = 0;
    unsigned char *got = run_raw(&m, threads, x, sizeof x, &nb);
    setenv("NN_NO_DIRECT", "1", 1);
    unsigned char *ref = run_raw(&m, threads, x, sizeof x, &rb);
    unsetenv("NN_NO_DIRECT");
    ok = got && ref && nb == rb && nb == (size_t)(middle_out ? M * H * W : 96 * 7 * 9) &&
         memcmp(got, ref, nb) == 0;
    if (!ok)
      fprintf(stderr, "  qconv chain%s%s M %lld threads=%d: differs from the GEMM path\n",
              s8 ? " int8" : "", middle_out ? " middle out" : "", (long long)M, threads);
    free(got);
    free(ref);
  }
  mb_free(&m);
  return ok;
}

/* QLinearMatMul (uint8 A, int8 B with per-column zero points and scales):
 * random, and at its worst (every product 255 x 127: sums past 2^24, the
 * depth in chunks), against int64 sums and the reference requantization. */
static bool run_qlmm_case(bool worst, bool direct) {
  /* direct: column zero points 0 and 100 columns, cpu/qconv_direct.h's
   * product (37 columns with zero points take the float engine) */
  enum { M = 3, K = 700, NMAX = 100 };
  const int N = direct ? 100 : 37;
  static unsigned char a[M * K], b[K * NMAX];
  unsigned char bz[NMAX], az = 0, yz = 9;
  float bs[NMAX], as = 0.03f, ys = worst ? 100.0f : 0.7f;   /* worst: unsaturated */
  for (int j = 0; j < N; j++) {
    bz[j] = (unsigned char)(int8_t)(direct ? 0 : j % 5 - 2);
    bs[j] = 0.01f + 0.001f * (float)j;
  }
  for (int i = 0; i < M * K; i++)
    a[i] = worst ? (unsigned char)(255 - (i % 11 == 4)) : (unsigned char)(rndf() * 127.0f + 128.0f);
  for (int i = 0; i < K * N; i++) {
    int v = worst ? 127 : (int)(rndf() * 127.0f);
    b[i] = (unsigned char)(int8_t)(worst ? v : v);
  }
  mb m;
  mb_init(&m, 13);
  int64_t ad[2] = {M, K}, bd[2] = {K, N}, nd = N, one = 1;
  mb_input(&m, "a", NN_DTYPE_UINT8, 2, ad);
  mb_init_f32(&m, "as", 0, NULL, &as);
  init_typed(&m, "az", NN_DTYPE_UINT8, 0, &one, &az, 1);
  init_typed(&m, "b", NN_DTYPE_INT8, 2, bd, b, 1);
  mb_init_f32(&m, "bs", 1, &nd, bs);
  init_typed(&m, "bz", NN_DTYPE_INT8, 1, &nd, bz, 1);
  mb_init_f32(&m, "ys", 0, NULL, &ys);
  init_typed(&m, "yz", NN_DTYPE_UINT8, 0, &one, &yz, 1);
  mb_node(&m, "QLinearMatMul", "q", "a,as,az,b,bs,bz,ys,yz", "y");
  mb_output(&m, "y");
  bool ok = true;
  for (int threads = 1; threads <= 2 && ok; threads++) {
    {   /* run_raw's second run reads B's float copy */
      size_t ob = 0;
      unsigned char *got = run_raw(&m, threads, a, sizeof a, &ob);
      ok = got && ob == (size_t)(M * N);
      for (int i = 0; ok && i < M; i++)
        for (int j = 0; ok && j < N; j++) {
          int64_t s = 0;
          for (int k = 0; k < K; k++)
            s += (int64_t)(a[i * K + k] - az) * ((int8_t)b[k * N + j] - (int8_t)bz[j]);
          double v = nearbyintf((float)(int32_t)(uint32_t)(uint64_t)s * (as * bs[j] / ys)) + yz;
          unsigned char want = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
          if (got[i * N + j] != want) {
            fprintf(stderr, "  qlinearmatmul%s%s threads=%d: [%d][%d] is %d, want %d\n", worst ? " worst" : "",
                    direct ? " direct" : "", threads, i, j, got[i * N + j], want);
            ok = false;
          }
        }
      free(got);
    }
  }
  mb_free(&m);
  return ok;
}

/* QuantizeLinear / DequantizeLinear with runs long enough for the vector
 * loops: ties, NaN, +-inf and values far outside the range, per tensor and
 * per axis, both 8-bit types. */
static bool run_quant_case(bool u8, bool axis) {
  enum { A = 3, IN = 12001 };   /* per tensor 36003: three of the workers' chunks */
  const int64_t n = A * IN;
  static float x[A * IN];
  float sc[A] = {0.5f, 0.25f, 3.0f};
  unsigned char zp[A] = {u8 ? 128 : 0, u8 ? 3 : (unsigned char)-5, u8 ? 250 : 100};
  for (int64_t i = 0; i < n; i++)
    x[i] = rndf() * 300.0f;
  x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = 1e30f, x[4] = -1e30f;
  for (int i = 5; i < 40; i++)
    x[i] = (float)(i - 20) * 0.5f * sc[0] + 0.0f;   /* halfway cases of the first scale */
  x[IN + 7] = 0.375f, x[IN + 8] = -0.625f, x[2 * IN + 9] = 4.5f, x[2 * IN + 10] = NAN;
  mb m;
  mb_init(&m, 13);
  int64_t xd[2] = {A, IN}, ad = A;
  mb_input(&m, "x", NN_DTYPE_FLOAT, 2, xd);
  mb_init_f32(&m, "s", axis ? 1 : 0, &ad, sc);
  init_typed(&m, "z", u8 ? NN_DTYPE_UINT8 : NN_DTYPE_INT8, axis ? 1 : 0, &ad, zp, 1);
  OnnxSubset__NodeProto *q = mb_node(&m, "QuantizeLinear", "q", "x,s,z", "q");
  mb_node(&m, "DequantizeLinear", "dq", "q,s,z", "y");
  if (axis) {
    mb_attr_int(&m, q, "axis", 0);
    mb_attr_int(&m, &m.nodes[1], "axis", 0);
  }
  mb_output(&m, "y");
  bool ok = true;
  for (int threads = 1; threads <= 2 && ok; threads++) {
    size_t ob = 0;
    unsigned char *got = run_raw(&m, threads, x, sizeof x, &ob);
    ok = got && ob == sizeof x;
    for (int64_t i = 0; ok && i < n; i++) {
      int a = axis ? (int)(i / IN) : 0;
      float qf = x[i] / sc[a];
      double qv = qf != qf ? 0.0 : nearbyint((double)qf);
      qv = qv < -4e18 ? -4e18 : qv > 4e18 ? 4e18 : qv;
      int z = u8 ? zp[a] : (int8_t)zp[a];
      qv += z;
      double lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
      qv = qv < lo ? lo : qv > hi ? hi : qv;
      float want = (float)((double)qv - z) * sc[a], have;
      memcpy(&have, got + 4 * i, 4);
      if (want != have) {
        fprintf(stderr, "  quantize %s %s: element %lld (x %g) is %g, want %g\n", u8 ? "u8" : "i8",
                axis ? "axis" : "tensor", (long long)i, x[i], have, want);
        ok = false;
      }
    }
    free(got);
  }
  mb_free(&m);
  return ok;
}

static const rnn_case rnn_cases[] = {
  {"lstm bidirectional peepholes seq_lens", "LSTM", "bidirectional", 6, 3, 12, 20, 0, 0, 0, true, true, true, false, false},
  {"lstm batch-first R input", "LSTM", "forward", 5, 2, 9, 33, 1, 0, 0, false, true, false, false, true},
  {"lstm reverse clip input_forget", "LSTM", "reverse", 7, 1, 16, 24, 0, 0, 0.8f, true, false, false, true, false},
  {"gru bidirectional linear_before_reset", "GRU", "bidirectional", 5, 2, 10, 17, 0, 1, 0, false, true, false, false, false},
  {"gru reverse seq_lens", "GRU", "reverse", 6, 3, 8, 40, 0, 0, 0, false, true, true, false, false},
  {"rnn forward clip batch-first", "RNN", "forward", 8, 2, 6, 24, 1, 0, 1.5f, false, true, false, false, false},
};

int main(void) {
  const char *isa = getenv("NN_CPU");
  printf("NN_CPU=%s\n", isa ? isa : "(best)");
  for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
    bool ok = run_conv_case(&conv_cases[i]);
    printf("%s %s\n", ok ? "ok  " : "FAIL", conv_cases[i].name);
    ok ? g_passed++ : g_failed++;
  }
  for (size_t i = 0; i < sizeof mm_cases / sizeof mm_cases[0]; i++) {
    bool ok = run_mm_case(&mm_cases[i]);
    printf("%s %s\n", ok ? "ok  " : "FAIL", mm_cases[i].name);
    ok ? g_passed++ : g_failed++;
  }
  for (size_t i = 0; i < sizeof replan_cases / sizeof replan_cases[0]; i++) {
    bool ok = run_replan_case(&replan_cases[i]);
    printf("%s %s\n", ok ? "ok  " : "FAIL", replan_cases[i].name);
    ok ? g_passed++ : g_failed++;
  }
  {
    bool ok = run_gemm_c_types();
    printf("%s gemm_c_float64_float16\n", ok ? "ok  " : "FAIL");
    ok ? g_passed++ : g_failed++;
  }
  for (int layer = 0; layer < 2; layer++) {
    bool ok = run_norm_case(layer);
    printf("%s %s\n", ok ? "ok  " : "FAIL", layer ? "layernorm_long_rows" : "instancenorm");
    ok ? g_passed++ : g_failed++;
  }
  {
    /* NCHW -> NHWC and back with neither side a multiple of 8, a 5-D-like
     * middle permutation, and the last dim moved first */
    /* the last four: a few interleaved channels to planes (NHWC -> NCHW
     * of RGB / RGBA / two-channel images), 3 through vmath's deinterleave,
     * with a tail of pixels past the last 8 and a batch of two */
    static const int64_t tdims[][4] = {{2, 19, 37, 13}, {1, 96, 14, 14}, {2, 13, 11, 21},
                                       {3, 9, 17, 10},  {1, 37, 29, 3},  {2, 16, 16, 3},
                                       {1, 9, 11, 4},   {1, 5, 7, 2}};
    static const int64_t tperm[][4] = {{0, 2, 3, 1}, {0, 2, 3, 1}, {0, 3, 1, 2}, {3, 1, 2, 0},
                                       {0, 3, 1, 2}, {0, 3, 1, 2}, {0, 3, 1, 2}, {0, 3, 1, 2}};
    for (int i = 0; i < 8; i++)
      run_transpose_case(tdims[i], tperm[i]) ? g_passed++ : g_failed++;
  }
  for (size_t i = 0; i < sizeof qconv_cases / sizeof qconv_cases[0]; i++) {
    bool ok = run_qconv_case(&qconv_cases[i]);
    printf("%s %s\n", ok ? "ok  " : "FAIL", qconv_cases[i].name);
    ok ? g_passed++ : g_failed++;
  }
  for (int k = 0; k < 6; k++) {
    const int64_t M = k < 4 ? 64 : 112;   /* the last two: a partial last panel */
    bool ok = run_qconv_chain_case(k & 1, (k >> 1) & 1, M);
    printf("%s qlinearconv chain %s%s%s\n", ok ? "ok  " : "FAIL", k & 1 ? "int8" : "uint8",
           (k >> 1) & 1 ? ", middle tensor an output" : "", M == 64 ? "" : ", 112 channels");
    ok ? g_passed++ : g_failed++;
  }
  for (int k = 0; k < 4; k++) {
    bool ok = run_qlmm_case(k & 1, k >> 1);
    printf("%s qlinearmatmul %s%s\n", ok ? "ok  " : "FAIL", k & 1 ? "worst sums" : "random",
           k >> 1 ? " direct" : "");
    ok ? g_passed++ : g_failed++;
  }
  for (int k = 0; k < 4; k++) {
    bool ok = run_quant_case(k & 1, k >> 1);
    printf("%s quantize/dequantize %s %s\n", ok ? "ok  " : "FAIL", k & 1 ? "uint8" : "int8",
           k >> 1 ? "per axis" : "per tensor");
    ok ? g_passed++ : g_failed++;
  }
  for (size_t i = 0; i < sizeof rnn_cases / sizeof rnn_cases[0]; i++) {
    bool ok = run_rnn_case(&rnn_cases[i]);
    printf("%s %s\n", ok ? "ok  " : "FAIL", rnn_cases[i].name);
    ok ? g_passed++ : g_failed++;
  }
  printf("%d passed, %d failed, 0 skipped\n", g_passed, g_failed);
  return g_failed ? 1 : 0;
}
