/* test_vk_kernels.c - every compute kernel against a plain C reference on
 * random data, under the validation layer (synchronization validation
 * included).  Each case records its dispatches, runs them, and compares;
 * a final case chains conv -> relu (in place) -> pool -> gemm -> softmax in
 * one recording and replays it, which exercises the derived barriers. */
#include "vk_test_util.h"
#include "vk_kernels.h"

static nn_vk_ctx *ctx;
static nn_vk_mem *mem;
static nn_vk_exec *ex;
static int cases;

#define RTOL 1e-4f
#define ATOL 1e-5f

static void begin(void) { VT_OK(nn_vk_exec_begin(ex, err)); }
static void end_run(void) {
  VT_OK(nn_vk_exec_end(ex, err));
  VT_OK(nn_vk_exec_run(ex, err));
}

/* upload host data into a new device tensor */
static vt_buf dev_from(const float *data, int64_t n) {
  vt_buf b;
  vt_buf_alloc(mem, &b, n);
  if (data)
    vt_buf_upload(ex, mem, &b, data);
  return b;
}

static void check_buf(const char *what, vt_buf *b, const float *want, float rtol, float atol) {
  float *got = malloc((size_t)(b->n > 0 ? b->n : 1) * sizeof *got);
  vt_buf_download(ex, mem, b, got);
  if (vt_compare(what, got, want, b->n, rtol, atol))
    vt_failures++;
  free(got);
  cases++;
}

static void free_buf(vt_buf *b) { nn_vk_mem_free(mem, &b->buf); }

/* ---- reference activations (double precision) ------------------------------ */
static double ref_act(double x, int kind, double a, double b) {
  switch (kind) {
  case NN_VK_ACT_NONE: return x;
  case NN_VK_ACT_RELU: return x < 0 ? 0 : x;
  case NN_VK_ACT_LEAKY_RELU: return x < 0 ? a * x : x;
  case NN_VK_ACT_CLIP: return x < a ? a : x > b ? b : x;
  case NN_VK_ACT_SIGMOID: return 1 / (1 + exp(-x));
  case NN_VK_ACT_SILU: return x / (1 + exp(-x));
  case NN_VK_ACT_HARD_SIGMOID: return fmax(0, fmin(1, a * x + b));
  case NN_VK_ACT_HARD_SWISH: return x * fmax(0, fmin(1, x / 6 + 0.5));
  case NN_VK_ACT_TANH: return tanh(x);
  case NN_VK_ACT_ELU: return x < 0 ? a * (exp(x) - 1) : x;
  case NN_VK_ACT_SELU: return x <= 0 ? b * (a * exp(x) - a) : b * x;
  case NN_VK_ACT_SOFTPLUS: return log1p(exp(x));
  case NN_VK_ACT_SOFTSIGN: return x / (1 + fabs(x));
  case NN_VK_ACT_EXP: return exp(x);
  case NN_VK_ACT_LOG: return log(x);
  case NN_VK_ACT_ABS: return fabs(x);
  case NN_VK_ACT_NEG: return -x;
  case NN_VK_ACT_SQRT: return sqrt(x);
  case NN_VK_ACT_RECIPROCAL: return 1 / x;
  case NN_VK_ACT_FLOOR: return floor(x);
  case NN_VK_ACT_CEIL: return ceil(x);
  case NN_VK_ACT_ERF: return erf(x);
  case NN_VK_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  case NN_VK_ACT_SIN: return sin(x);
  case NN_VK_ACT_COS: return cos(x);
  case NN_VK_ACT_TAN: return tan(x);
  case NN_VK_ACT_ROUND: return nearbyint(x);
  case NN_VK_ACT_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
  case NN_VK_ACT_MISH: return x * tanh(log1p(exp(x)));
  case NN_VK_ACT_THRESHOLDED_RELU: return x > a ? x : 0;
  case NN_VK_ACT_CELU: return fmax(0, x) + fmin(0, a * (exp(x / a) - 1));
  case NN_VK_ACT_SHRINK: return x < -b ? x + a : x > b ? x - a : 0;
  case NN_VK_ACT_ASIN: return asin(x);
  case NN_VK_ACT_ACOS: return acos(x);
  case NN_VK_ACT_ATAN: return atan(x);
  case NN_VK_ACT_SINH: return sinh(x);
  case NN_VK_ACT_COSH: return cosh(x);
  case NN_VK_ACT_ASINH: return asinh(x);
  case NN_VK_ACT_ACOSH: return acosh(x);
  case NN_VK_ACT_ATANH: return atanh(x);
  case NN_VK_ACT_GELU_TANH:
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

/* ---- unary: all activations in ONE recording (independent dispatches) --- */
static void test_unary(void) {
  enum { N = 3001 };
  vt_buf xs[NN_VK_ACT_COUNT], ys[NN_VK_ACT_COUNT];
  float *want[NN_VK_ACT_COUNT];
  nn_vk_act acts[NN_VK_ACT_COUNT];
  for (int k = 0; k < NN_VK_ACT_COUNT; k++) {
    float lo = -4, hi = 4;
    if (k == NN_VK_ACT_LOG || k == NN_VK_ACT_SQRT) lo = 0.01f;
    if (k == NN_VK_ACT_ASIN || k == NN_VK_ACT_ACOS || k == NN_VK_ACT_ATANH) lo = -0.95f, hi = 0.95f;
    if (k == NN_VK_ACT_ACOSH) lo = 1.01f, hi = 8;
    if (k == NN_VK_ACT_TAN) lo = -1.3f, hi = 1.3f;
    float *x = vt_rand_array(N, lo, hi);
    if (k == NN_VK_ACT_ROUND)
      for (int i = 0; i < 64; i++)
        x[i] = (float)(i - 32) * 0.5f;   /* exact halves: ties to even */
    if (k == NN_VK_ACT_RECIPROCAL)
      for (int i = 0; i < N; i++)
        x[i] = fabsf(x[i]) < 0.05f ? 0.5f : x[i];
    acts[k] = (nn_vk_act){k, 0.3f, 0.7f};
    if (k == NN_VK_ACT_CLIP) acts[k] = (nn_vk_act){k, -1.5f, 2.0f};
    if (k == NN_VK_ACT_HARD_SIGMOID) acts[k] = (nn_vk_act){k, 0.2f, 0.5f};
    if (k == NN_VK_ACT_SELU) acts[k] = (nn_vk_act){k, 1.67326f, 1.0507f};
    if (k == NN_VK_ACT_CELU || k == NN_VK_ACT_ELU) acts[k] = (nn_vk_act){k, 1.3f, 0};
    if (k == NN_VK_ACT_SHRINK) acts[k] = (nn_vk_act){k, 0.5f, 1.0f};
    want[k] = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++)
      want[k][i] = (float)ref_act(x[i], k, acts[k].a, acts[k].b);
    xs[k] = dev_from(x, N);
    ys[k] = dev_from(NULL, N);
    free(x);
  }
  begin();
  for (int k = 0; k < NN_VK_ACT_COUNT; k++)
    VT_OK(nn_vk_k_unary(ex, acts[k], N, &xs[k].t, &ys[k].t, err));
  end_run();
  nn_vk_exec_stats st;
  nn_vk_exec_get_stats(ex, &st);
  VT_CHECK(st.dispatches == NN_VK_ACT_COUNT);
  VT_CHECK(st.barriers == 0);   /* nothing depends on anything */
  for (int k = 0; k < NN_VK_ACT_COUNT; k++) {
    char what[32];
    snprintf(what, sizeof what, "unary act %d", k);
    check_buf(what, &ys[k], want[k], 2e-4f, 2e-5f);
    free_buf(&xs[k]);
    free_buf(&ys[k]);
    free(want[k]);
  }
  /* in place (y aliases x), with an operation that shows if any element
   * is visited twice */
  float *x = vt_rand_array(N, -2, 2), *w = malloc(N * sizeof *w);
  for (int i = 0; i < N; i++)
    w[i] = -x[i];
  vt_buf b = dev_from(x, N);
  begin();
  VT_OK(nn_vk_k_unary(ex, (nn_vk_act){NN_VK_ACT_NEG, 0, 0}, N, &b.t, &b.t, err));
  end_run();
  check_buf("unary in place", &b, w, 0, 0);
  free_buf(&b);
  free(x);
  free(w);
}

/* ---- binary ------------------------------------------------------------------- */
static double ref_bin(int op, double u, double v) {
  switch (op) {
  case NN_VK_BIN_ADD: return u + v;
  case NN_VK_BIN_SUB: return u - v;
  case NN_VK_BIN_MUL: return u * v;
  case NN_VK_BIN_DIV: return u / v;
  case NN_VK_BIN_MAX: return fmax(u, v);
  case NN_VK_BIN_MIN: return fmin(u, v);
  case NN_VK_BIN_POW: return pow(u, v);
  case NN_VK_BIN_PRELU: return u < 0 ? u * v : u;
  case NN_VK_BIN_FMOD: return fmod(u, v);
  }
  return 0;
}

static void bin_case(int op, nn_vk_act act, int ra, const int64_t *da, int rb, const int64_t *db) {
  int r;
  int64_t dy[NN_MAX_RANK], sa[NN_MAX_RANK], sb[NN_MAX_RANK];
  VT_CHECK(nn_broadcast_shape(ra, da, rb, db, &r, dy) == NN_OK);
  nn_broadcast_strides(ra, da, r, dy, sa);
  nn_broadcast_strides(rb, db, r, dy, sb);
  int64_t na = nn_dims_numel(ra, da), nb = nn_dims_numel(rb, db), ny = nn_dims_numel(r, dy);
  float lo = op == NN_VK_BIN_POW ? 0.1f : -3, hi = 3;
  float *a = vt_rand_array(na, lo, hi), *b = vt_rand_array(nb, -3, 3);
  if (op == NN_VK_BIN_DIV || op == NN_VK_BIN_FMOD)
    for (int64_t i = 0; i < nb; i++)
      b[i] = fabsf(b[i]) < 0.2f ? 1.5f : b[i];
  if (op == NN_VK_BIN_POW) {
    /* negative bases with integer exponents too */
    for (int64_t i = 0; i < nb; i++)
      b[i] = (i % 3 == 0) ? (float)((int)b[i]) : b[i] * 0.7f;
    for (int64_t i = 0; i < na; i += 4)
      a[i] = -a[i];
  }
  float *want = malloc((size_t)ny * sizeof *want);
  for (int64_t i = 0; i < ny; i++) {
    int64_t rem = i, ia = 0, ib = 0;
    for (int k = r - 1; k >= 0; k--) {
      int64_t c = rem % dy[k];
      rem /= dy[k];
      ia += c * sa[k];
      ib += c * sb[k];
    }
    want[i] = (float)ref_act(ref_bin(op, a[ia], b[ib]), act.kind, act.a, act.b);
  }
  vt_buf A = dev_from(a, na), B = dev_from(b, nb), Y = dev_from(NULL, ny);
  begin();
  VT_OK(nn_vk_k_binary(ex, op, act, r, dy, sa, sb, &A.t, &B.t, &Y.t, err));
  end_run();
  char what[64];
  snprintf(what, sizeof what, "binary op %d act %d rank %d", op, act.kind, r);
  check_buf(what, &Y, want, 1e-5f, 1e-6f);
  free_buf(&A);
  free_buf(&B);
  free_buf(&Y);
  free(a);
  free(b);
  free(want);
}

static void test_binary(void) {
  const int64_t s4[] = {2, 3, 4, 5}, c3[] = {3, 1, 1}, x1[] = {1, 3, 1, 5}, x2[] = {2, 1, 4, 1};
  const int64_t sc[] = {1}, r6a[] = {2, 1, 3, 2, 1, 3}, r6b[] = {1, 2, 3, 1, 2, 1};
  for (int op = 0; op < NN_VK_BIN_COUNT; op++) {
    nn_vk_act none = {NN_VK_ACT_NONE, 0, 0};
    bin_case(op, none, 4, s4, 4, s4);
    bin_case(op, none, 4, s4, 3, c3);
    bin_case(op, none, 4, x1, 4, x2);
    bin_case(op, none, 4, s4, 0, sc);
    bin_case(op, none, 6, r6a, 6, r6b);
  }
  bin_case(NN_VK_BIN_ADD, (nn_vk_act){NN_VK_ACT_RELU, 0, 0}, 4, s4, 3, c3);
  bin_case(NN_VK_BIN_MUL, (nn_vk_act){NN_VK_ACT_CLIP, -1, 1}, 4, x1, 4, x2);
  bin_case(NN_VK_BIN_SUB, (nn_vk_act){NN_VK_ACT_SIGMOID, 0, 0}, 1, sc, 4, s4);
}

/* ---- conv2d ------------------------------------------------------------------- */
typedef struct conv_cfg {
  int64_t N, C, H, W, M;
  int KH, KW, SH, SW, DH, DW, PT, PL, PB, PR, group;
  bool bias;
  int act;
} conv_cfg;

static void conv_case(const conv_cfg *c) {
  nn_vk_conv2d p = {
      .N = c->N, .C = c->C, .H = c->H, .W = c->W, .M = c->M,
      .KH = c->KH, .KW = c->KW, .SH = c->SH, .SW = c->SW, .DH = c->DH, .DW = c->DW,
      .PT = c->PT, .PL = c->PL, .group = c->group, .act = {c->act, 0.1f, 0.6f},
  };
  p.OH = (c->H + c->PT + c->PB - c->DH * (c->KH - 1) - 1) / c->SH + 1;
  p.OW = (c->W + c->PL + c->PR - c->DW * (c->KW - 1) - 1) / c->SW + 1;
  int64_t Cg = c->C / c->group, Mg = c->M / c->group;
  int64_t nx = c->N * c->C * c->H * c->W, nw = c->M * Cg * c->KH * c->KW;
  int64_t ny = c->N * c->M * p.OH * p.OW;
  float *x = vt_rand_array(nx, -1, 1), *w = vt_rand_array(nw, -1, 1);
  float *bias = vt_rand_array(c->M, -1, 1), *want = malloc((size_t)ny * sizeof *want);
  for (int64_t n = 0; n < c->N; n++)
    for (int64_t m = 0; m < c->M; m++)
      for (int64_t oh = 0; oh < p.OH; oh++)
        for (int64_t ow = 0; ow < p.OW; ow++) {
          int64_t g = m / Mg;
          double s = c->bias ? bias[m] : 0;
          for (int64_t ci = 0; ci < Cg; ci++)
            for (int kh = 0; kh < c->KH; kh++)
              for (int kw = 0; kw < c->KW; kw++) {
                int64_t ih = oh * c->SH - c->PT + kh * c->DH, iw = ow * c->SW - c->PL + kw * c->DW;
                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W)
                  continue;
                s += (double)x[((n * c->C + g * Cg + ci) * c->H + ih) * c->W + iw] *
                     w[((m * Cg + ci) * c->KH + kh) * c->KW + kw];
              }
          want[((n * c->M + m) * p.OH + oh) * p.OW + ow] = (float)ref_act(s, c->act, 0.1, 0.6);
        }
  vt_buf X = dev_from(x, nx), Wt = dev_from(w, nw), B = dev_from(bias, c->M), Y = dev_from(NULL, ny);
  begin();
  VT_OK(nn_vk_k_conv2d(ex, &p, &X.t, &Wt.t, c->bias ? &B.t : NULL, &Y.t, err));
  end_run();
  char what[128];
  snprintf(what, sizeof what, "conv %lldx%lldx%lldx%lld->%lld k%dx%d s%d d%d g%d", (long long)c->N,
           (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->M, c->KH, c->KW, c->SH,
           c->DH, c->group);
  check_buf(what, &Y, want, 1e-4f, 1e-4f);
  free_buf(&X);
  free_buf(&Wt);
  free_buf(&B);
  free_buf(&Y);
  free(x);
  free(w);
  free(bias);
  free(want);
}

static void test_conv(void) {
  const conv_cfg cfgs[] = {
      /* N  C   H   W   M  KH KW SH SW DH DW PT PL PB PR  g  bias act */
      {1, 3, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, NN_VK_ACT_NONE},
      {2, 16, 12, 12, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, NN_VK_ACT_RELU},  /* 1x1 fast */
      {1, 8, 13, 13, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, true, NN_VK_ACT_RELU},    /* depthwise */
      {1, 32, 10, 10, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, false, NN_VK_ACT_NONE},/* dw x2 */
      {1, 6, 15, 15, 12, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, true, NN_VK_ACT_CLIP},   /* groups+dil */
      {1, 3, 7, 7, 5, 5, 5, 1, 1, 1, 1, 2, 1, 0, 3, 1, false, NN_VK_ACT_NONE},     /* asym pads */
      {1, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, NN_VK_ACT_RELU},  /* big tile */
      {1, 1, 5, 5, 1, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, NN_VK_ACT_NONE},      /* direct */
      {1, 4, 6, 6, 70, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, NN_VK_ACT_NONE},     /* 1x1 s2 */
      {3, 8, 1, 1, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, NN_VK_ACT_HARD_SWISH},
      {2, 12, 9, 7, 6, 3, 2, 1, 2, 1, 1, 0, 1, 1, 0, 3, true, NN_VK_ACT_SIGMOID},  /* rect */
      {1, 3, 32, 32, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, true, NN_VK_ACT_RELU},   /* stem */
  };
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
    conv_case(&cfgs[i]);
}

/* ---- gemm ------------------------------------------------------------------------- */
typedef struct gemm_cfg {
  int64_t b1, b2, M, N, K;
  bool ta, tb, bcast_b;
  int cmode;   /* 0 none, 1 full MxN, 2 row (N), 3 column (M,1), 4 scalar */
  float alpha, beta;
  int act;
} gemm_cfg;

static void gemm_case(const gemm_cfg *c) {
  int64_t batch = c->b1 * c->b2;
  int64_t na = batch * c->M * c->K, nb = (c->bcast_b ? 1 : batch) * c->K * c->N;
  int64_t ny = batch * c->M * c->N;
  float *a = vt_rand_array(na, -1, 1), *b = vt_rand_array(nb, -1, 1);
  float *cc = vt_rand_array(c->M * c->N, -1, 1), *want = malloc((size_t)ny * sizeof *want);
  nn_vk_gemm p = {.M = c->M, .N = c->N, .K = c->K, .batch1 = c->b1, .batch2 = c->b2,
                  .alpha = c->alpha, .beta = c->beta, .act = {c->act, 0, 0}};
  /* A stored [batch][M][K] or transposed [batch][K][M] */
  p.sam = c->ta ? 1 : c->K;
  p.sak = c->ta ? c->M : 1;
  p.sbk = c->tb ? 1 : c->N;
  p.sbn = c->tb ? c->K : 1;
  p.sa2 = c->M * c->K;
  p.sa1 = c->b2 * p.sa2;
  p.sb2 = c->bcast_b ? 0 : c->K * c->N;
  p.sb1 = c->bcast_b ? 0 : c->b2 * p.sb2;
  switch (c->cmode) {
  case 1: p.scm = c->N, p.scn = 1; break;
  case 2: p.scm = 0, p.scn = 1; break;
  case 3: p.scm = 1, p.scn = 0; break;
  default: p.scm = p.scn = 0; break;
  }
  for (int64_t bt = 0; bt < batch; bt++)
    for (int64_t m = 0; m < c->M; m++)
      for (int64_t n = 0; n < c->N; n++) {
        double s = 0;
        int64_t ab = (bt / c->b2) * p.sa1 + (bt % c->b2) * p.sa2;
        int64_t bb = (bt / c->b2) * p.sb1 + (bt % c->b2) * p.sb2;
        for (int64_t k = 0; k < c->K; k++)
          s += (double)a[ab + m * p.sam + k * p.sak] * b[bb + k * p.sbk + n * p.sbn];
        s *= c->alpha;
        if (c->cmode)
          s += (double)c->beta * cc[m * p.scm + n * p.scn];
        want[(bt * c->M + m) * c->N + n] = (float)ref_act(s, c->act, 0, 0);
      }
  /* Y starts as garbage: every element must be written (K == 0 included) */
  float *junk = malloc((size_t)(ny > 0 ? ny : 1) * sizeof *junk);
  for (int64_t i = 0; i < ny; i++)
    junk[i] = 7777.0f;
  vt_buf A = dev_from(na ? a : NULL, na), B = dev_from(nb ? b : NULL, nb), C = dev_from(cc, c->M * c->N),
         Y = dev_from(junk, ny);
  free(junk);
  /* an empty A or B is a view of 0 bytes, as the graph gives a [M,0] tensor */
  if (na == 0)
    A.t.size = 0;
  if (nb == 0)
    B.t.size = 0;
  begin();
  VT_OK(nn_vk_k_gemm(ex, &p, &A.t, &B.t, c->cmode ? &C.t : NULL, &Y.t, err));
  end_run();
  char what[128];
  snprintf(what, sizeof what, "gemm b%lldx%lld %lldx%lldx%lld ta%d tb%d c%d", (long long)c->b1,
           (long long)c->b2, (long long)c->M, (long long)c->N, (long long)c->K, c->ta, c->tb,
           c->cmode);
  check_buf(what, &Y, want, 1e-4f, 1e-4f);
  free_buf(&A);
  free_buf(&B);
  free_buf(&C);
  free_buf(&Y);
  free(a);
  free(b);
  free(cc);
  free(want);
}

static void test_gemm(void) {
  const gemm_cfg cfgs[] = {
      /* b1 b2  M     N     K   ta     tb     bcast  c  alpha beta act */
      {1, 1, 1, 1000, 1024, false, true, false, 2, 1, 1, NN_VK_ACT_NONE},     /* FC: gemv */
      {1, 1, 64, 64, 64, false, false, false, 1, 1, 1, NN_VK_ACT_NONE},
      {1, 1, 65, 33, 17, false, false, false, 0, 1, 0, NN_VK_ACT_NONE},
      {1, 1, 65, 33, 17, true, false, false, 3, 0.5f, 2, NN_VK_ACT_RELU},
      {1, 1, 31, 70, 45, false, true, false, 4, 1, 0.3f, NN_VK_ACT_NONE},
      {1, 1, 20, 9, 130, true, true, false, 1, -1, 1, NN_VK_ACT_NONE},
      {3, 2, 17, 23, 19, false, false, true, 0, 1, 0, NN_VK_ACT_NONE},       /* MatMul bcast */
      {2, 3, 8, 5, 12, false, true, false, 0, 1, 0, NN_VK_ACT_NONE},          /* batched */
      {1, 1, 2, 300, 256, false, true, false, 2, 1, 1, NN_VK_ACT_RELU},      /* gemv M=2 */
      {1, 1, 1, 10, 3, false, false, false, 2, 1, 1, NN_VK_ACT_NONE},
      /* K == 0: MatMul [M,0] x [0,N] is zeros; Gemm gives beta*C; a fused
       * activation still applies (the CPU does the same) */
      {1, 1, 5, 7, 0, false, false, false, 0, 1, 0, NN_VK_ACT_NONE},
      {2, 3, 4, 6, 0, false, false, true, 0, 1, 0, NN_VK_ACT_NONE},
      {1, 1, 65, 33, 0, true, true, false, 1, 1, 0.5f, NN_VK_ACT_RELU},
      {1, 1, 1, 100, 0, false, true, false, 2, 2, 1, NN_VK_ACT_NONE},
  };
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
    gemm_case(&cfgs[i]);
  /* a weight larger than maxStorageBufferRange is bound in column bands:
   * shrink the limit so a 4 MB weight needs several */
  uint32_t saved = ctx->props.limits.maxStorageBufferRange;
  ctx->props.limits.maxStorageBufferRange = 1u << 20;
  const gemm_cfg big = {1, 1, 1, 1000, 1024, false, true, false, 2, 1, 1, NN_VK_ACT_NONE};
  gemm_case(&big);
  nn_vk_exec_stats st;
  nn_vk_exec_get_stats(ex, &st);
  VT_CHECK(st.dispatches > 1);
  ctx->props.limits.maxStorageBufferRange = saved;
}

/* ---- pooling ------------------------------------------------------------------------ */
static void pool_case(const nn_vk_pool2d *p) {
  int64_t nx = p->NC * p->H * p->W, ny = p->NC * p->OH * p->OW;
  float *x = vt_rand_array(nx, -1, 1), *want = malloc((size_t)ny * sizeof *want);
  for (int64_t nc = 0; nc < p->NC; nc++)
    for (int64_t oh = 0; oh < p->OH; oh++)
      for (int64_t ow = 0; ow < p->OW; ow++) {
        double acc = p->kind == NN_VK_POOL_MAX ? -INFINITY : 0;
        int valid = 0, padded = 0;
        for (int kh = 0; kh < p->KH; kh++)
          for (int kw = 0; kw < p->KW; kw++) {
            int64_t ih = oh * p->SH - p->PT + kh * p->DH, iw = ow * p->SW - p->PL + kw * p->DW;
            if (ih >= -p->PT && ih < p->H + p->PB && iw >= -p->PL && iw < p->W + p->PR)
              padded++;
            if (ih < 0 || ih >= p->H || iw < 0 || iw >= p->W)
              continue;
            valid++;
            double v = x[(nc * p->H + ih) * p->W + iw];
            acc = p->kind == NN_VK_POOL_MAX ? fmax(acc, v) : acc + v;
          }
        if (p->kind == NN_VK_POOL_AVG)
          acc /= p->count_include_pad ? padded : valid;
        want[(nc * p->OH + oh) * p->OW + ow] = (float)acc;
      }
  vt_buf X = dev_from(x, nx), Y = dev_from(NULL, ny);
  begin();
  VT_OK(nn_vk_k_pool2d(ex, p, &X.t, &Y.t, err));
  end_run();
  char what[64];
  snprintf(what, sizeof what, "pool kind %d k%dx%d s%d", p->kind, p->KH, p->KW, p->SH);
  check_buf(what, &Y, want, 1e-5f, 1e-6f);
  free_buf(&X);
  free_buf(&Y);
  free(x);
  free(want);
}

static void test_pool(void) {
  /* kind NC H W OH OW KH KW SH SW DH DW PT PL PB PR include_pad */
  const nn_vk_pool2d cfgs[] = {
      {NN_VK_POOL_MAX, 6, 15, 15, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false},
      {NN_VK_POOL_AVG, 6, 15, 15, 15, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true},
      {NN_VK_POOL_AVG, 6, 15, 15, 15, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false},
      /* ceil_mode: the last window runs past the padding */
      {NN_VK_POOL_AVG, 4, 10, 10, 5, 5, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, true},
      {NN_VK_POOL_MAX, 4, 10, 10, 5, 5, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, false},
      {NN_VK_POOL_MAX, 3, 12, 12, 8, 8, 3, 3, 1, 1, 2, 2, 0, 0, 0, 0, false},   /* dilated */
      {NN_VK_POOL_AVG, 2, 7, 7, 1, 1, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, false},     /* global */
  };
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
    pool_case(&cfgs[i]);
}

/* ---- reduce / softmax ------------------------------------------------------------------ */
static void reduce_case(int kind, int64_t outer, int64_t r, int64_t inner) {
  int64_t nx = outer * r * inner, ny = outer * inner;
  float lo = -2, hi = 2;
  if (kind == NN_VK_RED_PROD) lo = 0.95f, hi = 1.05f;
  if (kind == NN_VK_RED_LOG_SUM) lo = 0.01f;
  float *x = vt_rand_array(nx, lo, hi), *want = malloc((size_t)ny * sizeof *want);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double acc = kind == NN_VK_RED_MAX ? -INFINITY : kind == NN_VK_RED_MIN ? INFINITY
                   : kind == NN_VK_RED_PROD ? 1 : 0;
      double mx = -INFINITY;
      for (int64_t k = 0; k < r; k++)
        mx = fmax(mx, x[(o * r + k) * inner + i]);
      for (int64_t k = 0; k < r; k++) {
        double v = x[(o * r + k) * inner + i];
        switch (kind) {
        case NN_VK_RED_MAX: acc = fmax(acc, v); break;
        case NN_VK_RED_MIN: acc = fmin(acc, v); break;
        case NN_VK_RED_PROD: acc *= v; break;
        case NN_VK_RED_SUM_SQUARE: case NN_VK_RED_L2: acc += v * v; break;
        case NN_VK_RED_L1: acc += fabs(v); break;
        case NN_VK_RED_LOG_SUM_EXP: acc += exp(v - mx); break;
        default: acc += v; break;
        }
      }
      if (kind == NN_VK_RED_MEAN) acc /= r;
      if (kind == NN_VK_RED_L2) acc = sqrt(acc);
      if (kind == NN_VK_RED_LOG_SUM) acc = log(acc);
      if (kind == NN_VK_RED_LOG_SUM_EXP) acc = mx + log(acc);
      want[o * inner + i] = (float)acc;
    }
  vt_buf X = dev_from(x, nx), Y = dev_from(NULL, ny);
  begin();
  VT_OK(nn_vk_k_reduce(ex, kind, outer, r, inner, &X.t, &Y.t, err));
  end_run();
  char what[64];
  snprintf(what, sizeof what, "reduce kind %d [%lld,%lld,%lld]", kind, (long long)outer,
           (long long)r, (long long)inner);
  check_buf(what, &Y, want, 2e-4f, 1e-4f);
  free_buf(&X);
  free_buf(&Y);
  free(x);
  free(want);
}

static void softmax_case(bool log_, int64_t outer, int64_t r, int64_t inner) {
  int64_t n = outer * r * inner;
  float *x = vt_rand_array(n, -5, 5), *want = malloc((size_t)n * sizeof *want);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double mx = -INFINITY, s = 0;
      for (int64_t k = 0; k < r; k++)
        mx = fmax(mx, x[(o * r + k) * inner + i]);
      for (int64_t k = 0; k < r; k++)
        s += exp(x[(o * r + k) * inner + i] - mx);
      for (int64_t k = 0; k < r; k++) {
        double v = x[(o * r + k) * inner + i] - mx;
        want[(o * r + k) * inner + i] = (float)(log_ ? v - log(s) : exp(v) / s);
      }
    }
  vt_buf X = dev_from(x, n), Y = dev_from(NULL, n);
  begin();
  VT_OK(nn_vk_k_softmax(ex, log_, outer, r, inner, &X.t, &Y.t, err));
  end_run();
  check_buf(log_ ? "logsoftmax" : "softmax", &Y, want, 1e-4f, 1e-6f);
  free_buf(&X);
  free_buf(&Y);
  free(x);
  free(want);
}

static void test_reduce_softmax(void) {
  for (int kind = 0; kind < NN_VK_RED_COUNT; kind++) {
    reduce_case(kind, 3, 500, 1);     /* wide rows: workgroup per output */
    reduce_case(kind, 4, 7, 5);       /* narrow: invocation per output */
    reduce_case(kind, 2, 49, 300);
  }
  reduce_case(NN_VK_RED_MEAN, 2048, 49, 1);   /* global average pool shape */
  softmax_case(false, 4, 1000, 1);
  softmax_case(false, 2, 5, 7);
  softmax_case(true, 3, 300, 2);
}

/* ---- copies ------------------------------------------------------------------------------- */
static void copy_case(const char *what, int rank, const int64_t *dims, const int64_t *xs,
                      int64_t x_off, int64_t nx, const int64_t *ys, int64_t y_off, int64_t ny,
                      bool fresh) {
  float *x = vt_rand_array(nx, -1, 1), *want = vt_rand_array(ny, 5, 6);
  vt_buf X = dev_from(x, nx), Y = dev_from(want, ny);
  int64_t n = nn_dims_numel(rank, dims);
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, ix = x_off, iy = y_off;
    for (int k = rank - 1; k >= 0; k--) {
      int64_t c = rem % dims[k];
      rem /= dims[k];
      ix += c * xs[k];
      iy += c * ys[k];
    }
    want[iy] = x[ix];
  }
  if (fresh)
    begin();
  VT_OK(nn_vk_k_copy(ex, rank, dims, xs, x_off, ys, y_off, &X.t, &Y.t, err));
  end_run();
  check_buf(what, &Y, want, 0, 0);
  free_buf(&X);
  free_buf(&Y);
  free(x);
  free(want);
}

/* concat along axis 1 of [n,3,4] and [n,5,4] into [n,8,4]: one copy per
 * part.  With n == 1 the parts are disjoint ranges and need no barrier
 * between them; with n == 2 they interleave (a barrier is conservative but
 * correct). */
static void concat_case(int64_t nb) {
  float *a = vt_rand_array(nb * 12, -1, 1), *b = vt_rand_array(nb * 20, -1, 1);
  float *want = malloc((size_t)nb * 32 * sizeof *want);
  for (int64_t n = 0; n < nb; n++) {
    memcpy(want + n * 32, a + n * 12, 12 * sizeof(float));
    memcpy(want + n * 32 + 12, b + n * 20, 20 * sizeof(float));
  }
  vt_buf A = dev_from(a, nb * 12), B = dev_from(b, nb * 20), Y = dev_from(NULL, nb * 32);
  const int64_t ad[] = {nb, 12}, axs[] = {12, 1}, ays[] = {32, 1};
  const int64_t bd[] = {nb, 20}, bxs[] = {20, 1}, bys[] = {32, 1};
  begin();
  VT_OK(nn_vk_k_copy(ex, 2, ad, axs, 0, ays, 0, &A.t, &Y.t, err));
  VT_OK(nn_vk_k_copy(ex, 2, bd, bxs, 0, bys, 12, &B.t, &Y.t, err));
  end_run();
  nn_vk_exec_stats st;
  nn_vk_exec_get_stats(ex, &st);
  if (nb == 1)
    VT_CHECK(st.barriers == 0);
  check_buf("concat", &Y, want, 0, 0);
  free_buf(&A);
  free_buf(&B);
  free_buf(&Y);
  free(a);
  free(b);
  free(want);
}

static void test_copy(void) {
  /* transpose [2,3,4,5] -> perm (0,2,3,1): iterate the output dims */
  const int64_t td[] = {2, 4, 5, 3}, txs[] = {60, 5, 1, 20}, tys[] = {60, 15, 3, 1};
  copy_case("transpose", 4, td, txs, 0, 120, tys, 0, 120, true);
  /* slice x[1:, ::-2, 1:4] of [3, 7, 6] */
  const int64_t sd[] = {2, 4, 3}, sxs[] = {42, -12, 1}, sys_[] = {12, 3, 1};
  copy_case("slice", 3, sd, sxs, 42 + 6 * 6 + 1, 126, sys_, 0, 24, true);
  /* expand [3,1] -> [2,3,4] */
  const int64_t ed[] = {2, 3, 4}, exs[] = {0, 1, 0}, eys[] = {12, 4, 1};
  copy_case("expand", 3, ed, exs, 0, 3, eys, 0, 24, true);
  /* contiguous: a transfer command */
  const int64_t cd[] = {1000}, one[] = {1};
  copy_case("contiguous", 1, cd, one, 7, 1010, one, 3, 1005, true);

  concat_case(1);
  concat_case(2);
}

static void pad_case(int mode, int rank, const int64_t *id, const int64_t *pb, const int64_t *pe) {
  int64_t od[NN_MAX_RANK], nx = nn_dims_numel(rank, id);
  for (int k = 0; k < rank; k++)
    od[k] = id[k] + pb[k] + pe[k];
  int64_t ny = nn_dims_numel(rank, od);
  float *x = vt_rand_array(nx, -1, 1), *want = malloc((size_t)ny * sizeof *want);
  const float value = 2.5f;
  for (int64_t i = 0; i < ny; i++) {
    int64_t rem = i, ix = 0, stride = 1;
    bool inside = true;
    for (int k = rank - 1; k >= 0; k--) {
      int64_t c = rem % od[k] - pb[k], d = id[k];
      rem /= od[k];
      if (c < 0 || c >= d) {
        if (mode == NN_VK_PAD_CONSTANT) inside = false;
        else if (mode == NN_VK_PAD_EDGE) c = c < 0 ? 0 : d - 1;
        else if (mode == NN_VK_PAD_WRAP) c = ((c % d) + d) % d;
        else c = c < 0 ? -c : 2 * (d - 1) - c;
      }
      ix += c * stride;
      stride *= d;
    }
    want[i] = inside ? x[ix] : value;
  }
  uint32_t bits;
  memcpy(&bits, &value, 4);
  vt_buf X = dev_from(x, nx), Y = dev_from(NULL, ny);
  begin();
  VT_OK(nn_vk_k_pad(ex, mode, bits, rank, id, od, pb, &X.t, &Y.t, err));
  end_run();
  char what[32];
  snprintf(what, sizeof what, "pad mode %d", mode);
  check_buf(what, &Y, want, 0, 0);
  free_buf(&X);
  free_buf(&Y);
  free(x);
  free(want);
}

static void test_pad(void) {
  const int64_t id[] = {2, 3, 4, 5}, pb[] = {0, 1, 2, 1}, pe[] = {1, 0, 2, 3};
  for (int mode = NN_VK_PAD_CONSTANT; mode <= NN_VK_PAD_WRAP; mode++)
    pad_case(mode, 4, id, pb, pe);
  const int64_t cb[] = {0, -1, 1, -2}, ce[] = {0, 1, -1, 0};   /* negative pads crop */
  pad_case(NN_VK_PAD_CONSTANT, 4, id, cb, ce);
  pad_case(NN_VK_PAD_EDGE, 4, id, cb, ce);
}

/* ---- resize ------------------------------------------------------------------------------ */
static double src_coord(int coord, int64_t o, int64_t in, int64_t out, double scale) {
  switch (coord) {
  case NN_VK_COORD_ASYMMETRIC: return o / scale;
  /* ONNX: the resized length is input * scale (before rounding) */
  case NN_VK_COORD_ALIGN_CORNERS: {
    double len = (double)(float)(in * (float)scale);
    return len == 1 ? 0 : (double)o * (in - 1) / (len - 1);
  }
  case NN_VK_COORD_PYTORCH_HALF_PIXEL: return in * scale > 1 ? (o + 0.5) / scale - 0.5 : 0;
  case NN_VK_COORD_HALF_PIXEL_SYMMETRIC: {
    double adj = out / (scale * in), center = in / 2.0;
    return center * (1 - adj) + (o + 0.5) / scale - 0.5;
  }
  }
  return (o + 0.5) / scale - 0.5;
}

static int64_t nearest(int mode, double c, int64_t len) {
  double r;
  switch (mode) {
  case NN_VK_NEAREST_ROUND_PREFER_CEIL: r = floor(c + 0.5); break;
  case NN_VK_NEAREST_FLOOR: r = floor(c); break;
  case NN_VK_NEAREST_CEIL: r = ceil(c); break;
  default: r = (c - floor(c) == 0.5) ? floor(c) : floor(c + 0.5); break;
  }
  return r < 0 ? 0 : r > len - 1 ? len - 1 : (int64_t)r;
}

static void resize_case(const nn_vk_resize *p) {
  int64_t nx = p->NC * p->H * p->W, ny = p->NC * p->OH * p->OW;
  float *x = vt_rand_array(nx, -1, 1), *want = malloc((size_t)ny * sizeof *want);
  for (int64_t nc = 0; nc < p->NC; nc++)
    for (int64_t oh = 0; oh < p->OH; oh++)
      for (int64_t ow = 0; ow < p->OW; ow++) {
        double ch = src_coord(p->coord, oh, p->H, p->OH, p->scale_h);
        double cw = src_coord(p->coord, ow, p->W, p->OW, p->scale_w);
        const float *xb = x + nc * p->H * p->W;
        double v;
        if (p->mode == NN_VK_RESIZE_NEAREST) {
          v = xb[nearest(p->nearest, ch, p->H) * p->W + nearest(p->nearest, cw, p->W)];
        } else {
          ch = fmin(fmax(ch, 0), p->H - 1);
          cw = fmin(fmax(cw, 0), p->W - 1);
          int64_t h0 = (int64_t)ch, w0 = (int64_t)cw;
          int64_t h1 = h0 + 1 < p->H ? h0 + 1 : h0, w1 = w0 + 1 < p->W ? w0 + 1 : w0;
          double fh = ch - h0, fw = cw - w0;
          v = (1 - fh) * ((1 - fw) * xb[h0 * p->W + w0] + fw * xb[h0 * p->W + w1]) +
              fh * ((1 - fw) * xb[h1 * p->W + w0] + fw * xb[h1 * p->W + w1]);
        }
        want[(nc * p->OH + oh) * p->OW + ow] = (float)v;
      }
  vt_buf X = dev_from(x, nx), Y = dev_from(NULL, ny);
  begin();
  VT_OK(nn_vk_k_resize(ex, p, &X.t, &Y.t, err));
  end_run();
  char what[64];
  snprintf(what, sizeof what, "resize mode %d coord %d nearest %d", p->mode, p->coord, p->nearest);
  check_buf(what, &Y, want, 1e-5f, 1e-5f);
  free_buf(&X);
  free_buf(&Y);
  free(x);
  free(want);
}

static void test_resize(void) {
  for (int coord = 0; coord <= NN_VK_COORD_HALF_PIXEL_SYMMETRIC; coord++) {
    for (int nm = 0; nm <= NN_VK_NEAREST_CEIL; nm++) {
      nn_vk_resize up = {NN_VK_RESIZE_NEAREST, coord, nm, 3, 5, 7, 10, 14, 2.0f, 2.0f};
      resize_case(&up);
    }
    nn_vk_resize lin = {NN_VK_RESIZE_LINEAR, coord, 0, 3, 5, 7, 10, 14, 2.0f, 2.0f};
    resize_case(&lin);
    nn_vk_resize down = {NN_VK_RESIZE_LINEAR, coord, 0, 2, 10, 9, 6, 5, 0.6f, 0.6f};
    resize_case(&down);
    nn_vk_resize odd = {NN_VK_RESIZE_NEAREST, coord, 0, 2, 4, 4, 7, 3, 1.75f, 0.75f};
    resize_case(&odd);
  }
}

/* ---- affine / lrn ------------------------------------------------------------------------- */
static void test_affine_lrn(void) {
  enum { OUTER = 2, C = 7, INNER = 33, N = OUTER * C * INNER };
  float *x = vt_rand_array(N, -2, 2), *s = vt_rand_array(C, -1, 1), *b = vt_rand_array(C, -1, 1);
  float *want = malloc(N * sizeof *want);
  for (int i = 0; i < N; i++) {
    int c = (i / INNER) % C;
    want[i] = (float)ref_act((double)x[i] * s[c] + b[c], NN_VK_ACT_RELU, 0, 0);
  }
  vt_buf X = dev_from(x, N), S = dev_from(s, C), B = dev_from(b, C), Y0 = dev_from(NULL, N);
  begin();
  VT_OK(nn_vk_k_affine(ex, OUTER, C, INNER, (nn_vk_act){NN_VK_ACT_RELU, 0, 0}, &X.t, &S.t, &B.t,
                       &Y0.t, err));
  end_run();
  check_buf("affine", &Y0, want, 1e-5f, 1e-6f);
  free_buf(&Y0);
  begin();
  VT_OK(nn_vk_k_affine(ex, OUTER, C, INNER, (nn_vk_act){NN_VK_ACT_RELU, 0, 0}, &X.t, &S.t, &B.t,
                       &X.t, err));
  end_run();
  check_buf("affine (in place)", &X, want, 1e-5f, 1e-6f);
  free_buf(&X);
  free_buf(&S);
  free_buf(&B);
  free(s);
  free(b);

  const int sizes[] = {5, 3, 4};
  for (int si = 0; si < 3; si++) {
    int size = sizes[si];
    float alpha = 1e-2f, beta = 0.75f, bias = 1.0f;
    for (int i = 0; i < N; i++) {
      int64_t s_ = i % INNER, t = i / INNER, c = t % C, nb = (t / C) * C * INNER + s_;
      double sq = 0;
      for (int64_t k = c - (size - 1) / 2; k <= c + size / 2; k++)
        if (k >= 0 && k < C)
          sq += (double)x[nb + k * INNER] * x[nb + k * INNER];
      want[i] = (float)(x[i] / pow(bias + alpha / size * sq, beta));
    }
    vt_buf X2 = dev_from(x, N), Y = dev_from(NULL, N);
    begin();
    VT_OK(nn_vk_k_lrn(ex, OUTER, C, INNER, size, alpha, beta, bias, &X2.t, &Y.t, err));
    end_run();
    check_buf("lrn", &Y, want, 1e-5f, 1e-6f);
    free_buf(&X2);
    free_buf(&Y);
  }
  free(x);
  free(want);
}

/* ---- a dependent chain in one recording, replayed ------------------------------------------ */
static void test_chain(void) {
  /* x[1,4,10,10] -conv3x3 p1-> [1,8,10,10] -relu(in place)-> -maxpool2-> [1,8,5,5]
   * -gemm (flatten 200 -> 10, transB)-> [1,10] -softmax-> */
  const int64_t C = 4, H = 10, M = 8, F = 200, O = 10;
  float *x = vt_rand_array(C * H * H, -1, 1), *w = vt_rand_array(M * C * 9, -0.5f, 0.5f);
  float *fw = vt_rand_array(O * F, -0.2f, 0.2f), *fb = vt_rand_array(O, -0.1f, 0.1f);
  float conv[8 * 100], pool[200], logits[10], want[10];
  for (int m = 0; m < M; m++)
    for (int oh = 0; oh < H; oh++)
      for (int ow = 0; ow < H; ow++) {
        double s = 0;
        for (int c = 0; c < C; c++)
          for (int kh = 0; kh < 3; kh++)
            for (int kw = 0; kw < 3; kw++) {
              int ih = oh - 1 + kh, iw = ow - 1 + kw;
              if (ih >= 0 && ih < H && iw >= 0 && iw < H)
                s += (double)x[(c * H + ih) * H + iw] * w[((m * C + c) * 3 + kh) * 3 + kw];
            }
        conv[(m * H + oh) * H + ow] = s < 0 ? 0 : (float)s;
      }
  for (int m = 0; m < M; m++)
    for (int oh = 0; oh < 5; oh++)
      for (int ow = 0; ow < 5; ow++) {
        float v = -INFINITY;
        for (int kh = 0; kh < 2; kh++)
          for (int kw = 0; kw < 2; kw++)
            v = fmaxf(v, conv[(m * H + oh * 2 + kh) * H + ow * 2 + kw]);
        pool[(m * 5 + oh) * 5 + ow] = v;
      }
  double mx = -INFINITY, sum = 0;
  for (int o = 0; o < O; o++) {
    double s = fb[o];
    for (int f = 0; f < F; f++)
      s += (double)pool[f] * fw[o * F + f];
    logits[o] = (float)s;
    mx = fmax(mx, s);
  }
  for (int o = 0; o < O; o++)
    sum += exp(logits[o] - mx);
  for (int o = 0; o < O; o++)
    want[o] = (float)(exp(logits[o] - mx) / sum);

  /* all intermediates in one arena allocation, as the planner lays them out */
  nn_vk_buf arena;
  VT_OK(nn_vk_mem_alloc(mem, NN_VK_MEM_DEVICE, 8192 * 4, &arena, err));
  nn_vk_tensor t_conv = nn_vk_view(&arena, 0, 800 * 4), t_pool = nn_vk_view(&arena, 4096, 200 * 4);
  nn_vk_tensor t_fc = nn_vk_view(&arena, 0, 10 * 4);   /* reuses conv's range */
  vt_buf X = dev_from(x, C * H * H), Wt = dev_from(w, M * C * 9), FW = dev_from(fw, O * F);
  vt_buf FB = dev_from(fb, O), Y = dev_from(NULL, O);
  nn_vk_conv2d cp = {1, C, H, H, M, H, H, 3, 3, 1, 1, 1, 1, 1, 1, 1, {NN_VK_ACT_NONE, 0, 0}};
  nn_vk_pool2d pp = {NN_VK_POOL_MAX, M, H, H, 5, 5, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false};
  nn_vk_gemm gp = {.M = 1, .N = O, .K = F, .sam = F, .sak = 1, .sbk = 1, .sbn = F, .batch1 = 1,
                   .batch2 = 1, .scm = 0, .scn = 1, .alpha = 1, .beta = 1};
  begin();
  VT_OK(nn_vk_k_conv2d(ex, &cp, &X.t, &Wt.t, NULL, &t_conv, err));
  VT_OK(nn_vk_k_unary(ex, (nn_vk_act){NN_VK_ACT_RELU, 0, 0}, 800, &t_conv, &t_conv, err));
  VT_OK(nn_vk_k_pool2d(ex, &pp, &t_conv, &t_pool, err));
  VT_OK(nn_vk_k_gemm(ex, &gp, &t_pool, &FW.t, &FB.t, &t_fc, err));
  VT_OK(nn_vk_k_softmax(ex, false, 1, O, 1, &t_fc, &Y.t, err));
  VT_OK(nn_vk_exec_end(ex, err));
  nn_vk_exec_stats st;
  nn_vk_exec_get_stats(ex, &st);
  VT_CHECK(st.dispatches == 5 && st.barriers == 4 && st.segments == 1);
  long allocs = vt_alloc_count();
  for (int run = 0; run < 3; run++) {
    VT_OK(nn_vk_exec_run(ex, err));
    check_buf("chain", &Y, want, 1e-4f, 1e-6f);
  }
  (void)allocs;
  free_buf(&X);
  free_buf(&Wt);
  free_buf(&FW);
  free_buf(&FB);
  free_buf(&Y);
  nn_vk_mem_free(mem, &arena);
  free(x);
  free(w);
  free(fw);
  free(fb);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  vt_install_allocator();
  size_t heap0 = vt_heap_current();
  VT_OK(nn_vk_ctx_acquire(&ctx, err));
  vt_check_validation(ctx);
  VT_OK(nn_vk_mem_create(ctx, &mem, err));
  VT_OK(nn_vk_exec_create(ctx, &ex, err));

  test_unary();
  test_binary();
  test_conv();
  test_gemm();
  test_pool();
  test_reduce_softmax();
  test_copy();
  test_pad();
  test_resize();
  test_affine_lrn();
  test_chain();

  nn_vk_exec_stats st;
  nn_vk_exec_get_stats(ex, &st);
  nn_vk_mem_stats ms;
  nn_vk_mem_get_stats(mem, &ms);
  printf("%d kernel cases compared, %d pipelines created\n", cases, st.pipelines);
  VT_CHECK(ms.allocs == 0 && ms.device_bytes == 0 && ms.staging_bytes == 0);
  nn_vk_exec_destroy(ex);
  nn_vk_mem_destroy(mem);
  nn_vk_ctx_release(ctx);
  VT_CHECK(vt_heap_current() == heap0);
  return vt_finish("test_vk_kernels");
}
