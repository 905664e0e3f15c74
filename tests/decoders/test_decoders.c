/* test_decoders.c - unit tests of the nndecode library on known tensors.
 *
 * Every scheme is fed hand-made tensors whose decoding is worked out in the
 * comments: a detection where one was planted, nothing when everything is
 * below the threshold or the tensors are empty, and a clear error (status +
 * message naming the tensor) for wrong rank, dims, dtype or byte size.
 * The drawing helpers are checked pixel by pixel on every format.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"

/* fontconfig (under pango) keeps its configuration for the life of the
 * process; LeakSanitizer builds would report it.  Not our allocation. */
const char *__lsan_default_suppressions (void);
const char *
__lsan_default_suppressions (void)
{
  return "leak:libfontconfig.so\n";
}

#include "check.h"

static nd_tensor tens(const char *name, int dtype, const void *data, size_t size, int n_dims,
                      ...) {
  nd_tensor t;
  memset(&t, 0, sizeof t);
  t.name = name;
  t.dtype = dtype;
  t.data = data;
  t.size = size;
  t.n_dims = n_dims;
  va_list ap;
  va_start(ap, n_dims);
  for (int i = 0; i < n_dims; i++)
    t.dims[i] = va_arg(ap, int);
  va_end(ap);
  return t;
}

static float sigm(float x) {
  return 1.0f / (1.0f + expf(-x));
}

/* ---- anchors ------------------------------------------------------------------ */

static void test_anchors(void) {
  cur_test = "anchors";
  nd_anchor_options o;
  nd_anchor_options_blazeface_front(&o);
  static float a[896 * 4];
  int n = 0;
  nd_error err = {0};
  CHECK(nd_anchors_generate(&o, a, 896, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 896, "n=%d", n);
  /* stride 8: 16x16 cells, 2 anchors per cell, centers (x+0.5)/16 */
  CHECK(NEAR(a[0], 0.5 / 16, 1e-6) && NEAR(a[1], 0.5 / 16, 1e-6), "a0 %f %f", a[0], a[1]);
  CHECK(NEAR(a[4], a[0], 1e-7) && NEAR(a[5], a[1], 1e-7), "second anchor same cell");
  CHECK(NEAR(a[2 * 4], 1.5 / 16, 1e-6), "next cell x %f", a[8]);
  CHECK(NEAR(a[511 * 4], 15.5 / 16, 1e-6) && NEAR(a[511 * 4 + 1], 15.5 / 16, 1e-6), "a511");
  CHECK(a[2] == 1.0f && a[3] == 1.0f, "fixed anchor size");
  /* stride 16: 8x8 cells, 6 anchors per cell (three layers merged) */
  CHECK(NEAR(a[512 * 4], 0.5 / 8, 1e-6) && NEAR(a[517 * 4], 0.5 / 8, 1e-6), "a512..517");
  CHECK(NEAR(a[518 * 4], 1.5 / 8, 1e-6), "a518 %f", a[518 * 4]);
  CHECK(NEAR(a[895 * 4], 7.5 / 8, 1e-6) && NEAR(a[895 * 4 + 1], 7.5 / 8, 1e-6), "a895");

  /* sizes when not fixed: scale(0) = min_scale, interpolated sqrt(s0*s1) */
  o.fixed_anchor_size = 0;
  CHECK(nd_anchors_generate(&o, a, 896, &n, &err) == ND_OK, "%s", err.msg);
  double s0 = 0.1484375, s1 = 0.1484375 + (0.75 - 0.1484375) / 3.0;
  CHECK(NEAR(a[2], s0, 1e-6) && NEAR(a[3], s0, 1e-6), "w0 %f", a[2]);
  CHECK(NEAR(a[6], sqrt(s0 * s1), 1e-6), "w1 %f vs %f", a[6], sqrt(s0 * s1));

  /* too small a buffer: told how many are needed */
  CHECK(nd_anchors_generate(&o, a, 10, &n, &err) == ND_ERR_INVALID_ARG && n == 896, "cap");
  o.num_layers = 0;
  CHECK(nd_anchors_generate(&o, a, 896, &n, &err) == ND_ERR_INVALID_ARG, "bad options");
}

/* ---- BlazeFace ------------------------------------------------------------------ */

typedef struct {
  float s0[512], s1[384];
  float r0[512 * 16], r1[384 * 16];
  nd_tensor t[4];
} bf_tensors;

/* Outputs as the real model names and orders them. */
static void bf_init(bf_tensors *b, float logit) {
  for (int i = 0; i < 512; i++)
    b->s0[i] = logit;
  for (int i = 0; i < 384; i++)
    b->s1[i] = logit;
  memset(b->r0, 0, sizeof b->r0);
  memset(b->r1, 0, sizeof b->r1);
  b->t[0] = tens("Identity:0", ND_DTYPE_FLOAT32, b->s0, sizeof b->s0, 3, 1, 512, 1);
  b->t[1] = tens("Identity_1:0", ND_DTYPE_FLOAT32, b->s1, sizeof b->s1, 3, 1, 384, 1);
  b->t[2] = tens("Identity_2:0", ND_DTYPE_FLOAT32, b->r0, sizeof b->r0, 3, 1, 512, 16);
  b->t[3] = tens("Identity_3:0", ND_DTYPE_FLOAT32, b->r1, sizeof b->r1, 3, 1, 384, 16);
}

/* Plant a face on anchor a (< 512: head 0) with a box w x h (input pixels)
 * offset by (dx, dy) from the anchor center; keypoint k at (k, -k). */
static void bf_plant(bf_tensors *b, int a, float logit, float dx, float dy, float w, float h) {
  float *s = a < 512 ? &b->s0[a] : &b->s1[a - 512];
  float *r = a < 512 ? &b->r0[a * 16] : &b->r1[(a - 512) * 16];
  *s = logit;
  r[0] = dx, r[1] = dy, r[2] = w, r[3] = h;
  for (int k = 0; k < 6; k++)
    r[4 + 2 * k] = dx + (float)k, r[5 + 2 * k] = dy - (float)k;
}

static void test_blazeface(void) {
  cur_test = "blazeface";
  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_BLAZEFACE);
  nd_decoder *dec = NULL;
  nd_error err = {0};
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  int mw = 0, mh = 0;
  nd_decoder_model_size(dec, &mw, &mh);
  CHECK(mw == 128 && mh == 128, "model size %dx%d", mw, mh);

  static bf_tensors b;
  const nd_detection *res = NULL;
  int n = -1;

  /* all below threshold: logit -1 -> 0.27 < 0.5 */
  bf_init(&b, -1.0f);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 0, "below threshold: n=%d", n);

  /* One face on anchor 100 = cell 50 of the 16x16 grid (x=2, y=3), center
   * ((2.5/16)*128, (3.5/16)*128) = (20, 28); box 20x24 -> [10,16]-[30,40]. */
  bf_init(&b, -10.0f);
  bf_plant(&b, 100, 5.0f, 0, 0, 20, 24);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 1, "one face: n=%d", n);
  if (n == 1) {
    CHECK(NEAR(res[0].x0, 10, 1e-3) && NEAR(res[0].y0, 16, 1e-3) && NEAR(res[0].x1, 30, 1e-3) &&
              NEAR(res[0].y1, 40, 1e-3),
          "box %.3f,%.3f %.3f,%.3f", res[0].x0, res[0].y0, res[0].x1, res[0].y1);
    CHECK(NEAR(res[0].score, sigm(5.0f), 1e-6), "score %f", res[0].score);
    CHECK(res[0].n_keypoints == 6 && res[0].class_id == 0, "kp %d", res[0].n_keypoints);
    /* keypoint 2 at center + (2, -2) */
    CHECK(NEAR(res[0].keypoints[2].x, 22, 1e-3) && NEAR(res[0].keypoints[2].y, 26, 1e-3),
          "kp2 %f %f", res[0].keypoints[2].x, res[0].keypoints[2].y);
  }

  /* Weighted NMS: the cell's second anchor (101) sees the same face 2 px to
   * the right with logit 3.  IoU = 18*24/(2*480-18*24) = 0.818 > 0.3: one
   * result, score of the best, box the score-weighted mean. */
  bf_plant(&b, 101, 3.0f, 2, 0, 20, 24);
  /* and a second face on head 1: anchor 512+6*9 = cell 9 of 8x8 (x=1,y=1),
   * center (1.5/8*128) = 24 -> box 16x16 at [16,16]-[32,32], far from... no:
   * overlaps the first? first is [10,16]-[30,40]: IoU = 14*16/(480+256-224)
   * = 0.4375 > 0.3.  Move it: offset +60 px in x -> [76,16]-[92,32]. */
  bf_plant(&b, 512 + 6 * 9, 4.0f, 60, 0, 16, 16);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 2, "two faces: n=%d", n);
  if (n == 2) {
    float w1 = sigm(5.0f), w2 = sigm(3.0f);
    float ex0 = (10 * w1 + 12 * w2) / (w1 + w2);
    CHECK(NEAR(res[0].score, w1, 1e-6), "best first %f", res[0].score);
    CHECK(NEAR(res[0].x0, ex0, 1e-3) && NEAR(res[0].x1, ex0 + 20, 1e-3), "weighted x0 %f vs %f",
          res[0].x0, ex0);
    CHECK(NEAR(res[1].x0, 76, 1e-3) && NEAR(res[1].y0, 16, 1e-3) && NEAR(res[1].x1, 92, 1e-3),
          "head-1 face %f %f %f", res[1].x0, res[1].y0, res[1].x1);
  }

  /* max_detections = 1 keeps the best */
  nd_decoder *dec1 = NULL;
  nd_config c1 = cfg;
  c1.max_detections = 1;
  CHECK(nd_decoder_new(&c1, &dec1, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec1, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "max 1: n=%d", n);
  nd_decoder_free(dec1);

  /* hard NMS variant keeps the best box unchanged */
  nd_config ch = cfg;
  ch.weighted_nms = 0;
  CHECK(nd_decoder_new(&ch, &dec1, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec1, b.t, 4, &res, &n, &err) == ND_OK && n == 2, "hard n=%d", n);
  CHECK(n >= 1 && NEAR(res[0].x0, 10, 1e-3), "hard keeps best x0 %f", n >= 1 ? res[0].x0 : -1);
  nd_decoder_free(dec1);

  /* Output order must not matter (heads found by shape, sorted by size). */
  nd_tensor rev[4] = {b.t[3], b.t[1], b.t[2], b.t[0]};
  CHECK(nd_decoder_decode(dec, rev, 4, &res, &n, &err) == ND_OK && n == 2, "reordered n=%d", n);

  /* Concatenated export ([1,896,1] + [1,896,16]) selected by name. */
  static float cs[896], cr[896 * 16];
  memcpy(cs, b.s0, sizeof b.s0);
  memcpy(cs + 512, b.s1, sizeof b.s1);
  memcpy(cr, b.r0, sizeof b.r0);
  memcpy(cr + 512 * 16, b.r1, sizeof b.r1);
  nd_tensor cat[2] = {tens("regressors", ND_DTYPE_FLOAT32, cr, sizeof cr, 3, 1, 896, 16),
                      tens("classificators", ND_DTYPE_FLOAT32, cs, sizeof cs, 3, 1, 896, 1)};
  nd_config cc = cfg;
  cc.boxes_tensor = "regressors";
  cc.scores_tensor = "classificators";
  CHECK(nd_decoder_new(&cc, &dec1, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec1, cat, 2, &res, &n, &err) == ND_OK && n == 2, "concat n=%d %s", n,
        err.msg);
  /* by shape too */
  nd_decoder_free(dec1);
  CHECK(nd_decoder_decode(dec, cat, 2, &res, &n, &err) == ND_OK && n == 2, "concat shape n=%d",
        n);

  /* NaN logits and boxes: ignored, no crash */
  bf_init(&b, NAN);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 0, "NaN n=%d", n);

  /* ---- malformed ---- */
  bf_init(&b, -10.0f);
  nd_tensor bad[4];
  nd_status st;

  /* scores with 2 values per anchor: no [1,512,1] for the 512 regressors */
  memcpy(bad, b.t, sizeof bad);
  bad[0].dims[2] = 2;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING && n == 0 && strstr(err.msg, "[1,512,1]"), "%s: %s",
        nd_status_str(st), err.msg);

  /* regressors with 15 coords: not a BlazeFace output */
  memcpy(bad, b.t, sizeof bad);
  bad[2].dims[2] = 15;
  bad[3].dims[2] = 15;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING && strstr(err.msg, "[1,N,16]"), "%s: %s", nd_status_str(st),
        err.msg);

  /* wrong anchor count: heads of 500 + 384 */
  memcpy(bad, b.t, sizeof bad);
  bad[0].dims[1] = 500;
  bad[2].dims[1] = 500;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "884") && strstr(err.msg, "896"), "%s: %s",
        nd_status_str(st), err.msg);

  /* dtype int64 */
  memcpy(bad, b.t, sizeof bad);
  bad[2].dtype = ND_DTYPE_INT64 + 100;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st == ND_ERR_DTYPE && strstr(err.msg, "Identity_2:0"), "%s: %s", nd_status_str(st),
        err.msg);

  /* fewer bytes than the dims promise */
  memcpy(bad, b.t, sizeof bad);
  bad[3].size = 100;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st == ND_ERR_SIZE && strstr(err.msg, "Identity_3:0"), "%s: %s", nd_status_str(st),
        err.msg);

  /* NULL data */
  memcpy(bad, b.t, sizeof bad);
  bad[1].data = NULL;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st == ND_ERR_SIZE, "%s: %s", nd_status_str(st), err.msg);

  /* no outputs at all */
  st = nd_decoder_decode(dec, NULL, 0, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING, "%s: %s", nd_status_str(st), err.msg);

  /* named tensor of the wrong rank */
  nd_tensor flat = tens("classificators", ND_DTYPE_FLOAT32, cs, sizeof cs, 1, 896);
  nd_tensor named[2] = {cat[0], flat};
  CHECK(nd_decoder_new(&cc, &dec1, &err) == ND_OK, "%s", err.msg);
  st = nd_decoder_decode(dec1, named, 2, &res, &n, &err);
  CHECK(st == ND_ERR_RANK && strstr(err.msg, "classificators"), "%s: %s", nd_status_str(st),
        err.msg);
  /* named tensor absent */
  st = nd_decoder_decode(dec1, b.t, 4, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING && strstr(err.msg, "regressors"), "%s: %s", nd_status_str(st),
        err.msg);
  nd_decoder_free(dec1);

  /* a negative dimension */
  memcpy(bad, b.t, sizeof bad);
  bad[0].dims[1] = -512;
  bad[2].dims[1] = -512;
  st = nd_decoder_decode(dec, bad, 4, &res, &n, &err);
  CHECK(st != ND_OK, "negative dim accepted");

  /* The decoder works again after errors. */
  bf_plant(&b, 100, 5.0f, 0, 0, 20, 24);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "recovers n=%d", n);

  /* float16 scores read too */
  static uint16_t h0[512], h1[384];
  for (int i = 0; i < 512; i++)
    h0[i] = 0xC900; /* -10 */
  for (int i = 0; i < 384; i++)
    h1[i] = 0xC900;
  h0[100] = 0x4500; /* 5.0 */
  nd_tensor ht[4] = {tens("s0", ND_DTYPE_FLOAT16, h0, sizeof h0, 3, 1, 512, 1),
                     tens("s1", ND_DTYPE_FLOAT16, h1, sizeof h1, 3, 1, 384, 1), b.t[2], b.t[3]};
  CHECK(nd_decoder_decode(dec, ht, 4, &res, &n, &err) == ND_OK && n == 1, "fp16 n=%d %s", n,
        err.msg);
  CHECK(n == 1 && NEAR(res[0].score, sigm(5.0f), 1e-4), "fp16 score");

  nd_decoder_free(dec);

  /* configuration errors */
  nd_config bc = cfg;
  bc.score_threshold = 1.5f;
  CHECK(nd_decoder_new(&bc, &dec, &err) == ND_ERR_INVALID_ARG && dec == NULL, "thr");
  bc = cfg;
  bc.max_detections = 0;
  CHECK(nd_decoder_new(&bc, &dec, &err) == ND_ERR_INVALID_ARG, "max");
  CHECK(strcmp(nd_blazeface_keypoint_name(2), "nose-tip") == 0 &&
            nd_blazeface_keypoint_name(6) == NULL,
        "keypoint names");
}

/* BlazeFace back (256x256): same outputs as the front model, anchors at
 * strides 16 and 32, regressors in pixels of 256, threshold 0.65.  Which
 * one is decoded comes from the model input size only. */
static void test_blazeface_back(void) {
  cur_test = "blazeface-back";
  nd_anchor_options o;
  nd_anchor_options_blazeface_back(&o);
  static float a[896 * 4];
  int n = 0;
  nd_error err = {0};
  CHECK(o.input_width == 256 && o.strides[0] == 16 && o.strides[1] == 32 && o.strides[3] == 32,
        "back options %d %d %d", o.input_width, o.strides[0], o.strides[1]);
  CHECK(nd_anchors_generate(&o, a, 896, &n, &err) == ND_OK && n == 896, "n=%d %s", n, err.msg);
  /* stride 16 on 256: 16x16 cells x 2; stride 32: 8x8 x 6 */
  CHECK(NEAR(a[0], 0.5 / 16, 1e-6) && NEAR(a[4], 0.5 / 16, 1e-6), "a0 %f", a[0]);
  CHECK(NEAR(a[511 * 4], 15.5 / 16, 1e-6) && NEAR(a[512 * 4], 0.5 / 8, 1e-6), "a511 a512");
  CHECK(NEAR(a[518 * 4], 1.5 / 8, 1e-6) && a[2] == 1.0f && a[3] == 1.0f, "a518 %f", a[518 * 4]);

  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_BLAZEFACE);
  CHECK(cfg.score_threshold == ND_SCORE_DEFAULT, "default threshold %f", cfg.score_threshold);
  nd_decoder *dec = NULL;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(dec && strcmp(nd_decoder_variant(dec), "front") == 0, "front by default");

  /* Anchor 100 (cell x=2, y=3 of 16x16): center (2.5/16, 3.5/16) * 256 =
   * (40, 56); box 40x48 -> [20,32]-[60,80]; keypoint 2 at (42, 54). */
  static bf_tensors b;
  const nd_detection *res = NULL;
  bf_init(&b, -10.0f);
  bf_plant(&b, 100, 5.0f, 0, 0, 40, 48);
  CHECK(nd_decoder_set_model_size(dec, 256, 256, &err) == ND_OK, "%s", err.msg);
  int mw = 0, mh = 0;
  nd_decoder_model_size(dec, &mw, &mh);
  CHECK(mw == 256 && mh == 256 && strcmp(nd_decoder_variant(dec), "back") == 0, "back %dx%d %s",
        mw, mh, nd_decoder_variant(dec));
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "back n=%d %s", n,
        err.msg);
  if (n == 1) {
    CHECK(NEAR(res[0].x0, 20, 1e-3) && NEAR(res[0].y0, 32, 1e-3) && NEAR(res[0].x1, 60, 1e-3) &&
              NEAR(res[0].y1, 80, 1e-3),
          "back box %.3f,%.3f %.3f,%.3f", res[0].x0, res[0].y0, res[0].x1, res[0].y1);
    CHECK(NEAR(res[0].keypoints[2].x, 42, 1e-3) && NEAR(res[0].keypoints[2].y, 54, 1e-3),
          "back kp2 %f %f", res[0].keypoints[2].x, res[0].keypoints[2].y);
  }
  /* Read as the front model the same box is twice as large relative to
   * the input: [0,4]-[40,52] of 128 (center (20, 28)). */
  CHECK(nd_decoder_set_model_size(dec, 0, 0, &err) == ND_OK, "%s", err.msg);
  CHECK(strcmp(nd_decoder_variant(dec), "front") == 0, "back to the configured size");
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "front n=%d", n);
  CHECK(n == 1 && NEAR(res[0].x0, 0, 1e-3) && NEAR(res[0].x1, 40, 1e-3) &&
            NEAR(res[0].y0, 4, 1e-3) && NEAR(res[0].y1, 52, 1e-3),
        "front box %.3f,%.3f %.3f,%.3f", n ? res[0].x0 : -1, n ? res[0].y0 : -1,
        n ? res[0].x1 : -1, n ? res[0].y1 : -1);

  /* Thresholds: logit 0.5 -> 0.622: kept by the front model (0.5), not by
   * the back model (0.65) unless score_threshold is set. */
  bf_init(&b, -10.0f);
  bf_plant(&b, 100, 0.5f, 0, 0, 40, 48);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "front 0.62 n=%d", n);
  CHECK(nd_decoder_set_model_size(dec, 256, 256, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 0, "back 0.62 n=%d", n);
  nd_decoder_free(dec);
  nd_config c6 = cfg;
  c6.score_threshold = 0.6f;
  c6.model_width = 256; /* one side: square */
  CHECK(nd_decoder_new(&c6, &dec, &err) == ND_OK, "%s", err.msg);
  nd_decoder_model_size(dec, &mw, &mh);
  CHECK(mw == 256 && mh == 256 && strcmp(nd_decoder_variant(dec), "back") == 0,
        "configured back %dx%d", mw, mh);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "thr 0.6 n=%d", n);

  /* ---- refused: sizes and layouts no configuration accounts for ---- */
  nd_status st = nd_decoder_set_model_size(dec, 300, 300, &err);
  CHECK(st == ND_ERR_UNSUPPORTED && strstr(err.msg, "300x300") && strstr(err.msg, "128x128") &&
            strstr(err.msg, "256x256"),
        "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_model_size(dec, &mw, &mh);
  CHECK(mw == 256 && mh == 256, "size kept after a refusal: %dx%d", mw, mh);
  CHECK(nd_decoder_decode(dec, b.t, 4, &res, &n, &err) == ND_OK && n == 1, "still decodes");
  st = nd_decoder_set_model_size(dec, 256, 128, &err);
  CHECK(st == ND_ERR_UNSUPPORTED && strstr(err.msg, "256x128"), "%s: %s", nd_status_str(st),
        err.msg);
  nd_decoder_free(dec);
  nd_config c192 = cfg;
  c192.model_width = 192;
  c192.model_height = 192;
  dec = (nd_decoder *)1;
  st = nd_decoder_new(&c192, &dec, &err);
  CHECK(st == ND_ERR_UNSUPPORTED && dec == NULL && strstr(err.msg, "192x192"), "%s: %s",
        nd_status_str(st), err.msg);

  /* The front strides applied to a 256 input would need 32x32x2 + 16x16x6 =
   * 3584 anchors: outputs of that size are not the back model. */
  CHECK(nd_decoder_new(&c6, &dec, &err) == ND_OK, "%s", err.msg);
  static float s0[2048], s1[1536], r0[2048 * 16], r1[1536 * 16];
  nd_tensor big[4] = {tens("s0", ND_DTYPE_FLOAT32, s0, sizeof s0, 3, 1, 2048, 1),
                      tens("s1", ND_DTYPE_FLOAT32, s1, sizeof s1, 3, 1, 1536, 1),
                      tens("r0", ND_DTYPE_FLOAT32, r0, sizeof r0, 3, 1, 2048, 16),
                      tens("r1", ND_DTYPE_FLOAT32, r1, sizeof r1, 3, 1, 1536, 16)};
  st = nd_decoder_decode(dec, big, 4, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && n == 0 && strstr(err.msg, "3584") && strstr(err.msg, "896") &&
            strstr(err.msg, "256x256 back") && strstr(err.msg, "512 at stride 16"),
        "%s: %s", nd_status_str(st), err.msg);
  /* 896 anchors, but heads of 448 + 448: not where the stride-16 anchors
   * end (512), so anchors and outputs would be paired wrongly */
  nd_tensor half[4];
  memcpy(half, big, sizeof half);
  half[0].dims[1] = half[2].dims[1] = 448;
  half[1].dims[1] = half[3].dims[1] = 448;
  st = nd_decoder_decode(dec, half, 4, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "448") && strstr(err.msg, "stride"), "%s: %s",
        nd_status_str(st), err.msg);
  nd_decoder_free(dec);

  /* other schemes: no variant, any size */
  nd_config cy;
  nd_config_init(&cy, ND_SCHEME_YOLOV8);
  CHECK(nd_decoder_new(&cy, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_variant(dec) == NULL, "yolo variant");
  CHECK(nd_decoder_set_model_size(dec, 320, 192, &err) == ND_OK, "%s", err.msg);
  nd_decoder_model_size(dec, &mw, &mh);
  CHECK(mw == 320 && mh == 192, "yolo size %dx%d", mw, mh);
  CHECK(nd_decoder_set_model_size(dec, 0, 0, &err) == ND_OK, "%s", err.msg);
  nd_decoder_model_size(dec, &mw, &mh);
  CHECK(mw == 640 && mh == 640, "yolo default %dx%d", mw, mh);
  CHECK(nd_decoder_set_model_size(dec, -1, 0, &err) == ND_ERR_INVALID_ARG, "negative size");
  CHECK(nd_decoder_config(dec)->score_threshold == 0.25f, "yolo threshold");
  nd_decoder_free(dec);
  /* ND_SCORE_DEFAULT resolves to the scheme's value elsewhere */
  cy.score_threshold = ND_SCORE_DEFAULT;
  CHECK(nd_decoder_new(&cy, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_config(dec)->score_threshold == 0.25f, "resolved %f",
        nd_decoder_config(dec)->score_threshold);
  nd_decoder_free(dec);
  cy.score_threshold = -0.5f;
  CHECK(nd_decoder_new(&cy, &dec, &err) == ND_ERR_INVALID_ARG, "-0.5 refused");
}

/* ---- SSD ---------------------------------------------------------------------------- */

static void test_ssd(void) {
  cur_test = "ssd";
  nd_error err = {0};
  const nd_detection *res;
  int n;
  nd_status st;

  /* Four priors (cx, cy, w, h), normalized. */
  static const float priors[4 * 4] = {
      0.25f, 0.25f, 0.2f, 0.2f,  /* 0 */
      0.27f, 0.25f, 0.2f, 0.2f,  /* 1: overlaps 0 */
      0.75f, 0.75f, 0.3f, 0.2f,  /* 2 */
      0.50f, 0.50f, 0.1f, 0.1f,  /* 3 */
  };
  /* Encoded offsets (cx, cy, w, h): 0 and 1 exactly their prior; 2 moved by
   * dx = 1 -> cx += 1 * 0.1 * 0.3 = 0.03 and dw = ln(2)/0.2 -> w doubled. */
  float loc[4 * 4] = {0};
  loc[2 * 4 + 0] = 1.0f;
  loc[2 * 4 + 2] = logf(2.0f) / 0.2f;
  /* Logits over 3 classes, 0 = background, softmax:
   *   0: class 1 (p ~ 0.98)  1: class 1 (p ~ 0.87)  2: class 2  3: background */
  float conf[4 * 3] = {0, 4, 0, 0, 2, 0, 0, 0, 5, 6, 0, 0};
  nd_tensor t[2] = {tens("boxes", ND_DTYPE_FLOAT32, loc, sizeof loc, 3, 1, 4, 4),
                    tens("scores", ND_DTYPE_FLOAT32, conf, sizeof conf, 3, 1, 4, 3)};
  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_SSD);
  cfg.priors = priors;
  cfg.n_priors = 4;
  cfg.box_format = ND_BOX_CXCYWH;
  cfg.activation = ND_ACT_SOFTMAX;
  cfg.background_class = 0;
  cfg.model_width = 300;
  cfg.model_height = 300;
  nd_decoder *dec = NULL;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, t, 2, &res, &n, &err) == ND_OK, "%s", err.msg);
  /* IoU(0,1) = (0.18*0.2)/(0.04+0.04-0.036) = 0.82 > 0.45: 1 suppressed. */
  CHECK(n == 2, "n=%d", n);
  if (n == 2) {
    double p0 = exp(4) / (exp(4) + 2), p2 = exp(5) / (exp(5) + 2);
    /* best first: prior 2 (p 0.987) then prior 0 (p 0.965) */
    CHECK(res[0].class_id == 2 && NEAR(res[0].score, p2, 1e-5), "r0 cls %d score %f",
          res[0].class_id, res[0].score);
    /* cx 0.78, w 0.6 -> x 0.48..1.08 (not clipped here: clipping is the
     * transform's job), y 0.65..0.85, in 300 px */
    CHECK(NEAR(res[0].x0, 0.48 * 300, 1e-2) && NEAR(res[0].x1, 1.08 * 300, 1e-2) &&
              NEAR(res[0].y0, 0.65 * 300, 1e-2) && NEAR(res[0].y1, 0.85 * 300, 1e-2),
          "r0 box %f %f %f %f", res[0].x0, res[0].y0, res[0].x1, res[0].y1);
    CHECK(res[1].class_id == 1 && NEAR(res[1].score, p0, 1e-5), "r1 %d %f", res[1].class_id,
          res[1].score);
    CHECK(NEAR(res[1].x0, 0.15 * 300, 1e-2) && NEAR(res[1].y1, 0.35 * 300, 1e-2), "r1 box");
  }

  /* all below threshold */
  nd_config c2 = cfg;
  c2.score_threshold = 0.99f;
  nd_decoder *d2 = NULL;
  CHECK(nd_decoder_new(&c2, &d2, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(d2, t, 2, &res, &n, &err) == ND_OK && n == 0, "0.99: n=%d", n);
  nd_decoder_free(d2);

  /* priors count mismatch */
  nd_tensor t3[2] = {tens("boxes", ND_DTYPE_FLOAT32, loc, sizeof loc, 3, 1, 3, 4),
                     tens("scores", ND_DTYPE_FLOAT32, conf, sizeof conf, 3, 1, 3, 3)};
  st = nd_decoder_decode(dec, t3, 2, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "priors"), "%s: %s", nd_status_str(st), err.msg);

  /* scores for another number of boxes */
  nd_tensor t4[2] = {t[0], tens("scores", ND_DTYPE_FLOAT32, conf, sizeof conf, 3, 1, 3, 4)};
  st = nd_decoder_decode(dec, t4, 2, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING && strstr(err.msg, "[1,4,C]"), "%s: %s", nd_status_str(st),
        err.msg);
  /* boxes of rank 4 */
  nd_tensor t5[2] = {tens("boxes", ND_DTYPE_FLOAT32, loc, sizeof loc, 4, 1, 1, 4, 4), t[1]};
  nd_config cn = cfg;
  cn.boxes_tensor = "boxes";
  CHECK(nd_decoder_new(&cn, &d2, &err) == ND_OK, "%s", err.msg);
  st = nd_decoder_decode(d2, t5, 2, &res, &n, &err);
  CHECK(st == ND_ERR_RANK && strstr(err.msg, "[1,1,4,4]"), "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(d2);
  /* wrong dtype */
  nd_tensor t6[2] = {t[0], t[1]};
  t6[1].dtype = 8; /* string */
  st = nd_decoder_decode(dec, t6, 2, &res, &n, &err);
  CHECK(st == ND_ERR_DTYPE, "%s: %s", nd_status_str(st), err.msg);
  /* num-classes mismatch */
  nd_config c7 = cfg;
  c7.num_classes = 91;
  CHECK(nd_decoder_new(&c7, &d2, &err) == ND_OK, "%s", err.msg);
  st = nd_decoder_decode(d2, t, 2, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "91"), "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(d2);

  /* empty: zero boxes -> zero results, no error */
  nd_config ce = cfg;
  ce.priors = NULL;
  ce.n_priors = 0;
  CHECK(nd_decoder_new(&ce, &d2, &err) == ND_OK, "%s", err.msg);
  nd_tensor te[2] = {tens("boxes", ND_DTYPE_FLOAT32, loc, 0, 3, 1, 0, 4),
                     tens("scores", ND_DTYPE_FLOAT32, conf, 0, 3, 1, 0, 3)};
  CHECK(nd_decoder_decode(d2, te, 2, &res, &n, &err) == ND_OK && n == 0, "empty: n=%d %s", n,
        err.msg);
  nd_decoder_free(d2);
  nd_decoder_free(dec);

  /* absolute corners, sigmoid scores, no background: [ymin,xmin,ymax,xmax] */
  float yx[2 * 4] = {0.1f, 0.2f, 0.5f, 0.6f, 0.1f, 0.2f, 0.5f, 0.6f};
  float sl[2 * 2] = {3.0f, -3.0f, -3.0f, 1.0f};
  nd_tensor ta[2] = {tens("raw_boxes", ND_DTYPE_FLOAT32, yx, sizeof yx, 3, 1, 2, 4),
                     tens("raw_scores", ND_DTYPE_FLOAT32, sl, sizeof sl, 3, 1, 2, 2)};
  nd_config_init(&cfg, ND_SCHEME_SSD);
  cfg.model_width = 200;
  cfg.model_height = 100;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, ta, 2, &res, &n, &err) == ND_OK, "%s", err.msg);
  /* same box, different classes: both kept (per-class NMS) */
  CHECK(n == 2, "abs n=%d", n);
  if (n == 2) {
    CHECK(res[0].class_id == 0 && NEAR(res[0].score, sigm(3), 1e-6), "abs r0");
    CHECK(NEAR(res[0].x0, 40, 1e-3) && NEAR(res[0].y0, 10, 1e-3) && NEAR(res[0].x1, 120, 1e-3) &&
              NEAR(res[0].y1, 50, 1e-3),
          "abs box %f %f %f %f", res[0].x0, res[0].y0, res[0].x1, res[0].y1);
    CHECK(res[1].class_id == 1 && NEAR(res[1].score, sigm(1), 1e-6), "abs r1");
  }
  nd_decoder_free(dec);

  /* post-processed (TF OD API): boxes [1,3,4], scores [1,3], classes [1,3],
   * num_detections [1] = 2 -> the third row is padding and ignored. */
  float pb[3 * 4] = {0.1f, 0.1f, 0.3f, 0.3f, 0.5f, 0.5f, 0.9f, 0.7f, 0, 0, 1, 1};
  float ps[3] = {0.9f, 0.6f, 0.99f};
  float pc[3] = {1.0f, 18.0f, 3.0f};
  float pn[1] = {2.0f};
  nd_tensor tp[4] = {tens("detection_boxes", ND_DTYPE_FLOAT32, pb, sizeof pb, 3, 1, 3, 4),
                     tens("detection_classes", ND_DTYPE_FLOAT32, pc, sizeof pc, 2, 1, 3),
                     tens("detection_scores", ND_DTYPE_FLOAT32, ps, sizeof ps, 2, 1, 3),
                     tens("num_detections", ND_DTYPE_FLOAT32, pn, sizeof pn, 1, 1)};
  nd_config_init(&cfg, ND_SCHEME_SSD);
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, tp, 4, &res, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 2, "post n=%d", n);
  if (n == 2) {
    CHECK(res[0].class_id == 1 && NEAR(res[0].score, 0.9, 1e-6), "post r0");
    CHECK(res[1].class_id == 18 && NEAR(res[1].x0, 0.5 * 300, 1e-3) &&
              NEAR(res[1].y1, 0.9 * 300, 1e-3),
          "post r1 %d %f %f", res[1].class_id, res[1].x0, res[1].y1);
  }
  /* two [1,K] tensors without telling names: told what to set */
  nd_tensor tq[3] = {tp[0], tens("a", ND_DTYPE_FLOAT32, pc, sizeof pc, 2, 1, 3),
                     tens("b", ND_DTYPE_FLOAT32, ps, sizeof ps, 2, 1, 3)};
  st = nd_decoder_decode(dec, tq, 3, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING && strstr(err.msg, "score"), "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(dec);

  /* priors with corner boxes is a configuration error */
  nd_config_init(&cfg, ND_SCHEME_SSD);
  cfg.priors = priors;
  cfg.n_priors = 4;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_ERR_INVALID_ARG, "priors+corners");
}

/* ---- YOLO ------------------------------------------------------------------------- */

/* Row of a v5 head: cx, cy, w, h (pixels), obj, 3 class probabilities. */
static void y5row(float *r, float cx, float cy, float w, float h, float obj, float c0, float c1,
                  float c2) {
  r[0] = cx, r[1] = cy, r[2] = w, r[3] = h, r[4] = obj, r[5] = c0, r[6] = c1, r[7] = c2;
}

static void test_yolo(void) {
  cur_test = "yolo";
  nd_error err = {0};
  const nd_detection *res;
  int n;
  nd_status st;
  enum { N = 16, K5 = 8, K8 = 7 };
  static float v5[N * K5];
  memset(v5, 0, sizeof v5);
  /* 0: person-ish class 0 at (100,100) 50x80, obj .9 * cls .8 = .72
   * 1: same place 4 px right, class 0, .8*.7 = .56 -> suppressed (IoU .85)
   * 2: same place, class 2, .9*.6 = .54 -> kept (other class)
   * 3: obj .2 -> below .25 whatever the class
   * 4: far away, class 1, .5*.9 = .45 */
  y5row(v5 + 0 * K5, 100, 100, 50, 80, 0.9f, 0.8f, 0.1f, 0.1f);
  y5row(v5 + 1 * K5, 104, 100, 50, 80, 0.8f, 0.7f, 0.1f, 0.2f);
  y5row(v5 + 2 * K5, 100, 100, 50, 80, 0.9f, 0.1f, 0.3f, 0.6f);
  y5row(v5 + 3 * K5, 300, 300, 50, 50, 0.2f, 1.0f, 0.0f, 0.0f);
  y5row(v5 + 4 * K5, 500, 400, 60, 40, 0.5f, 0.0f, 0.9f, 0.1f);
  nd_tensor t5 = tens("output0", ND_DTYPE_FLOAT32, v5, sizeof v5, 3, 1, N, K5);

  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_YOLOV5);
  nd_decoder *dec = NULL;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t5, 1, &res, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 3, "v5 n=%d", n);
  if (n == 3) {
    CHECK(res[0].class_id == 0 && NEAR(res[0].score, 0.72, 1e-5), "v5 r0 %d %f", res[0].class_id,
          res[0].score);
    CHECK(NEAR(res[0].x0, 75, 1e-3) && NEAR(res[0].y0, 60, 1e-3) && NEAR(res[0].x1, 125, 1e-3) &&
              NEAR(res[0].y1, 140, 1e-3),
          "v5 box");
    CHECK(res[1].class_id == 2 && NEAR(res[1].score, 0.54, 1e-5), "v5 r1 %d", res[1].class_id);
    CHECK(res[2].class_id == 1 && NEAR(res[2].score, 0.45, 1e-5), "v5 r2 %d", res[2].class_id);
  }
  nd_decoder_free(dec);

  /* class-agnostic NMS merges the class-2 box into the class-0 one */
  cfg.class_agnostic_nms = 1;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t5, 1, &res, &n, &err) == ND_OK && n == 2, "agnostic n=%d", n);
  nd_decoder_free(dec);
  cfg.class_agnostic_nms = 0;

  /* all below threshold */
  cfg.score_threshold = 0.9f;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t5, 1, &res, &n, &err) == ND_OK && n == 0, "0.9 n=%d", n);
  nd_decoder_free(dec);
  cfg.score_threshold = 0.25f;

  /* max detections */
  cfg.max_detections = 2;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t5, 1, &res, &n, &err) == ND_OK && n == 2, "max2 n=%d", n);
  nd_decoder_free(dec);
  nd_config_init(&cfg, ND_SCHEME_YOLOV5);

  /* raw logits with activation sigmoid: logit(0.9)... use obj logit 2.2 */
  static float v5l[N * K5];
  memset(v5l, 0, sizeof v5l);
  for (int i = 0; i < N; i++)
    for (int k = 4; k < K5; k++)
      v5l[i * K5 + k] = -20.0f;
  y5row(v5l, 64, 64, 32, 32, 2.2f, 3.0f, -3.0f, -3.0f);
  nd_tensor t5l = tens("output0", ND_DTYPE_FLOAT32, v5l, sizeof v5l, 3, 1, N, K5);
  cfg.activation = ND_ACT_SIGMOID;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t5l, 1, &res, &n, &err) == ND_OK && n == 1, "logits n=%d", n);
  CHECK(n == 1 && NEAR(res[0].score, sigm(2.2f) * sigm(3.0f), 1e-5), "logit score");
  nd_decoder_free(dec);
  nd_config_init(&cfg, ND_SCHEME_YOLOV5);

  /* malformed: rank 4, too few channels, batch 2, class count */
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  nd_tensor b1 = tens("output0", ND_DTYPE_FLOAT32, v5, sizeof v5, 4, 1, 1, N, K5);
  st = nd_decoder_decode(dec, &b1, 1, &res, &n, &err);
  CHECK(st == ND_ERR_RANK && strstr(err.msg, "output0"), "%s: %s", nd_status_str(st), err.msg);
  nd_tensor b2 = tens("output0", ND_DTYPE_FLOAT32, v5, sizeof v5, 3, 1, 32, 4);
  st = nd_decoder_decode(dec, &b2, 1, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "channels"), "%s: %s", nd_status_str(st), err.msg);
  nd_tensor b3 = tens("output0", ND_DTYPE_FLOAT32, v5, sizeof v5, 3, 2, 8, K5);
  st = nd_decoder_decode(dec, &b3, 1, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "batch"), "%s: %s", nd_status_str(st), err.msg);
  nd_tensor b4 = tens("output0", ND_DTYPE_FLOAT32, v5, sizeof v5 / 2, 3, 1, N, K5);
  st = nd_decoder_decode(dec, &b4, 1, &res, &n, &err);
  CHECK(st == ND_ERR_SIZE, "%s: %s", nd_status_str(st), err.msg);
  nd_tensor b5 = t5;
  b5.dtype = 9; /* bool */
  st = nd_decoder_decode(dec, &b5, 1, &res, &n, &err);
  CHECK(st == ND_ERR_DTYPE, "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(dec);
  cfg.num_classes = 80;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  st = nd_decoder_decode(dec, &t5, 1, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "80"), "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(dec);

  /* YOLOv8: the same rows without objectness, transposed to [1,4+C,N].
   * Scores: 0 -> .8, 1 -> .7 (suppressed), 2 -> class 2 .6, 3 -> 1.0 (no
   * objectness any more: kept), 4 -> .9 */
  static float v8[K8 * N];
  memset(v8, 0, sizeof v8);
  for (int i = 0; i < N; i++)
    for (int k = 0; k < K8; k++)
      v8[k * N + i] = v5[i * K5 + (k < 4 ? k : k + 1)];
  nd_tensor t8 = tens("output0", ND_DTYPE_FLOAT32, v8, sizeof v8, 3, 1, K8, N);
  nd_config_init(&cfg, ND_SCHEME_YOLOV8);
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t8, 1, &res, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 4, "v8 n=%d", n);
  if (n == 4) {
    CHECK(res[0].class_id == 0 && NEAR(res[0].score, 1.0, 1e-6) && NEAR(res[0].x0, 275, 1e-3),
          "v8 r0 %d %f %f", res[0].class_id, res[0].score, res[0].x0);
    CHECK(res[1].class_id == 1 && NEAR(res[1].score, 0.9, 1e-6), "v8 r1");
    CHECK(res[2].class_id == 0 && NEAR(res[2].score, 0.8, 1e-6) && NEAR(res[2].x0, 75, 1e-3),
          "v8 r2");
    CHECK(res[3].class_id == 2 && NEAR(res[3].score, 0.6, 1e-6), "v8 r3");
  }
  /* explicit channels-last layout on the v8 data: [1,N,4+C] */
  static float v8t[N * K8];
  for (int i = 0; i < N; i++)
    for (int k = 0; k < K8; k++)
      v8t[i * K8 + k] = v8[k * N + i];
  nd_tensor t8t = tens("output0", ND_DTYPE_FLOAT32, v8t, sizeof v8t, 3, 1, N, K8);
  const nd_detection *res2;
  int n2;
  nd_decoder *dec2 = NULL;
  nd_config c8 = cfg;
  c8.layout = ND_LAYOUT_CHANNELS_LAST;
  CHECK(nd_decoder_new(&c8, &dec2, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec2, &t8t, 1, &res2, &n2, &err) == ND_OK && n2 == 4, "v8t n=%d", n2);
  int same = n2 == 4 && n == 4;
  for (int i = 0; same && i < 4; i++)
    same = res[i].x0 == res2[i].x0 && res[i].y1 == res2[i].y1 && res[i].score == res2[i].score &&
           res[i].class_id == res2[i].class_id;
  CHECK(same, "same as transposed");
  nd_decoder_free(dec2);
  /* normalized boxes */
  c8 = cfg;
  c8.box_normalized = 1;
  c8.model_width = 320;
  c8.model_height = 320;
  static float v8n[K8 * N];
  memcpy(v8n, v8, sizeof v8);
  for (int i = 0; i < N; i++)
    for (int k = 0; k < 4; k++)
      v8n[k * N + i] /= 640.0f;
  nd_tensor t8n = tens("output0", ND_DTYPE_FLOAT32, v8n, sizeof v8n, 3, 1, K8, N);
  CHECK(nd_decoder_new(&c8, &dec2, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec2, &t8n, 1, &res2, &n2, &err) == ND_OK && n2 == 4, "v8n n=%d", n2);
  CHECK(n2 == 4 && NEAR(res2[2].x0, 75 / 2.0, 1e-3), "normalized x0 %f", n2 ? res2[2].x0 : -1);
  nd_decoder_free(dec2);

  /* empty candidates: N = 0 */
  nd_tensor t0 = tens("output0", ND_DTYPE_FLOAT32, v8, 0, 3, 1, K8, 0);
  CHECK(nd_decoder_decode(dec, &t0, 1, &res, &n, &err) == ND_OK && n == 0, "empty n=%d %s", n,
        err.msg);
  /* output chosen by name, absent */
  nd_decoder_free(dec);
  cfg.output_tensor = "output1";
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  st = nd_decoder_decode(dec, &t8, 1, &res, &n, &err);
  CHECK(st == ND_ERR_MISSING && strstr(err.msg, "output1") && strstr(err.msg, "[1,7,16]"),
        "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(dec);
}

/* ---- classification ------------------------------------------------------------------ */

static void test_classify(void) {
  cur_test = "classify";
  nd_error err = {0};
  const nd_detection *res;
  int n;
  float logits[5] = {1.0f, 3.0f, -1.0f, 2.0f, 0.5f};
  nd_tensor t = tens("logits", ND_DTYPE_FLOAT32, logits, sizeof logits, 2, 1, 5);
  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_CLASSIFY);
  cfg.top_k = 3;
  nd_decoder *dec = NULL;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &t, 1, &res, &n, &err) == ND_OK && n == 3, "n=%d", n);
  double den = 0;
  for (int i = 0; i < 5; i++)
    den += exp(logits[i]);
  if (n == 3) {
    CHECK(res[0].class_id == 1 && res[1].class_id == 3 && res[2].class_id == 0, "order %d %d %d",
          res[0].class_id, res[1].class_id, res[2].class_id);
    CHECK(NEAR(res[0].score, exp(3) / den, 1e-6), "softmax %f", res[0].score);
  }
  /* probabilities (sum 1) are taken as they are */
  float probs[4] = {0.1f, 0.2f, 0.6f, 0.1f};
  nd_tensor tp = tens("prob", ND_DTYPE_FLOAT32, probs, sizeof probs, 4, 1, 4, 1, 1);
  CHECK(nd_decoder_decode(dec, &tp, 1, &res, &n, &err) == ND_OK && n == 3, "probs n=%d", n);
  CHECK(n >= 1 && res[0].class_id == 2 && NEAR(res[0].score, 0.6, 1e-6), "probs top");
  nd_decoder_free(dec);

  /* threshold cuts below top-k; all below -> empty */
  cfg.score_threshold = 0.15f;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &tp, 1, &res, &n, &err) == ND_OK && n == 2, "thr n=%d", n);
  nd_decoder_free(dec);
  cfg.score_threshold = 0.9f;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &tp, 1, &res, &n, &err) == ND_OK && n == 0, "all below n=%d", n);
  /* malformed: two long axes, scalar, too few bytes */
  nd_tensor b1 = tens("x", ND_DTYPE_FLOAT32, logits, sizeof logits, 2, 2, 2);
  nd_status st = nd_decoder_decode(dec, &b1, 1, &res, &n, &err);
  CHECK(st == ND_ERR_DIMS && strstr(err.msg, "[2,2]"), "%s: %s", nd_status_str(st), err.msg);
  nd_tensor b2 = tens("x", ND_DTYPE_FLOAT32, logits, sizeof logits, 0);
  st = nd_decoder_decode(dec, &b2, 1, &res, &n, &err);
  CHECK(st == ND_ERR_RANK, "%s: %s", nd_status_str(st), err.msg);
  nd_tensor b3 = tens("x", ND_DTYPE_FLOAT32, logits, 8, 2, 1, 5);
  st = nd_decoder_decode(dec, &b3, 1, &res, &n, &err);
  CHECK(st == ND_ERR_SIZE, "%s: %s", nd_status_str(st), err.msg);
  nd_decoder_free(dec);

  /* top-k larger than the classes; sigmoid; uint8 */
  uint8_t q[3] = {10, 200, 100};
  nd_tensor tq = tens("q", ND_DTYPE_UINT8, q, sizeof q, 1, 3);
  nd_config_init(&cfg, ND_SCHEME_CLASSIFY);
  cfg.top_k = 10;
  cfg.max_detections = 10;
  cfg.activation = ND_ACT_NONE;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, &tq, 1, &res, &n, &err) == ND_OK && n == 3, "k>C n=%d", n);
  CHECK(n == 3 && res[0].class_id == 1 && res[2].class_id == 0, "uint8 order");
  nd_decoder_free(dec);
}

/* ---- NMS, transform, labels, priors -------------------------------------------------- */

static nd_detection box(float x0, float y0, float x1, float y1, float s, int c) {
  nd_detection d;
  memset(&d, 0, sizeof d);
  d.x0 = x0, d.y0 = y0, d.x1 = x1, d.y1 = y1, d.score = s, d.class_id = c;
  return d;
}

static void test_nms(void) {
  cur_test = "nms";
  nd_detection a = box(0, 0, 10, 10, 1, 0), b = box(5, 0, 15, 10, 1, 0);
  CHECK(NEAR(nd_iou(&a, &b), 50.0 / 150.0, 1e-6), "iou %f", nd_iou(&a, &b));
  nd_detection e = box(5, 5, 5, 9, 1, 0);
  CHECK(nd_iou(&a, &e) == 0.0f, "empty box iou");
  nd_detection d[5] = {box(0, 0, 10, 10, 0.5f, 0), box(1, 0, 11, 10, 0.9f, 0),
                       box(50, 50, 60, 60, 0.7f, 0), box(0, 0, 10, 10, 0.8f, 1),
                       box(2, 0, 12, 10, 0.6f, 0)};
  int order[5];
  int k = nd_nms(d, 5, order, 0.5f, 10, 0, ND_NMS_HARD);
  /* class 0: .9 keeps, .6 and .5 overlap it (IoU .67/.82), .7 far; class 1 .8 */
  CHECK(k == 3, "k=%d", k);
  CHECK(k == 3 && NEAR(d[0].score, 0.9, 1e-6) && NEAR(d[1].score, 0.8, 1e-6) &&
            NEAR(d[2].score, 0.7, 1e-6),
        "order");
  CHECK(nd_nms(d, 0, order, 0.5f, 10, 0, ND_NMS_HARD) == 0, "n=0");
  /* weighted: two equal-score boxes average */
  nd_detection w[2] = {box(0, 0, 10, 10, 0.5f, 0), box(2, 0, 12, 10, 0.5f, 0)};
  k = nd_nms(w, 2, order, 0.3f, 10, 1, ND_NMS_WEIGHTED);
  CHECK(k == 1 && NEAR(w[0].x0, 1, 1e-5) && NEAR(w[0].x1, 11, 1e-5), "weighted %f", w[0].x0);
}

static void test_transform(void) {
  cur_test = "transform";
  nd_transform t;
  nd_error err = {0};
  float x, y;
  CHECK(nd_transform_init(&t, 128, 128, 640, 480, ND_SCALE_STRETCH, &err) == ND_OK, "%s",
        err.msg);
  x = 64, y = 32;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 320, 1e-4) && NEAR(y, 120, 1e-4), "stretch %f %f", x, y);

  /* Megamind 720x528 letterboxed into 128x128 as videoscale does it:
   * content 128 x floor(128*528/720) = 128x93, top border 35/2 = 17. */
  CHECK(nd_transform_init(&t, 128, 128, 720, 528, ND_SCALE_LETTERBOX, &err) == ND_OK, "%s",
        err.msg);
  x = 0, y = 17;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 0, 1e-4) && NEAR(y, 0, 1e-4), "lb top-left %f %f", x, y);
  x = 128, y = 17 + 93;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 720, 1e-3) && NEAR(y, 528, 1e-3), "lb bottom-right %f %f", x, y);
  /* portrait frame: borders left and right */
  CHECK(nd_transform_init(&t, 640, 640, 480, 640, ND_SCALE_LETTERBOX, &err) == ND_OK, "%s",
        err.msg);
  x = 80, y = 0;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 0, 1e-3) && NEAR(y, 0, 1e-3), "portrait %f %f", x, y);
  /* crop: 640x480 cropped to 480x480 at x=80, then scaled to 128 */
  CHECK(nd_transform_init(&t, 128, 128, 640, 480, ND_SCALE_CROP, &err) == ND_OK, "%s", err.msg);
  x = 0, y = 128;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 80, 1e-3) && NEAR(y, 480, 1e-3), "crop %f %f", x, y);

  /* detections are clipped to the frame, keypoints mapped */
  CHECK(nd_transform_init(&t, 100, 100, 200, 200, ND_SCALE_STRETCH, &err) == ND_OK, "%s",
        err.msg);
  nd_detection d = box(-10, 10, 120, 50, 1, 0);
  d.n_keypoints = 1;
  d.keypoints[0].x = 5, d.keypoints[0].y = 6;
  nd_transform_detection(&t, &d);
  CHECK(d.x0 == 0 && d.x1 == 200 && NEAR(d.y0, 20, 1e-4) && NEAR(d.keypoints[0].x, 10, 1e-4),
        "clip %f %f %f", d.x0, d.x1, d.y0);
  CHECK(nd_transform_init(&t, 0, 100, 200, 200, ND_SCALE_STRETCH, &err) == ND_ERR_INVALID_ARG,
        "zero size");
  CHECK(nd_transform_init(&t, 100, 100, 200, 200, (nd_scale_mode)9, &err) == ND_ERR_INVALID_ARG,
        "bad mode");
}

/* The producer's geometry inverted: exact numbers for each way the model
 * input can be cut from the frame. */
static void test_transform_geometry(void) {
  cur_test = "transform-geometry";
  nd_transform t;
  nd_error err = {0};
  float x, y;
  /* stretch: 640x480 -> 128x128, scale 0.2 x 0.2666 */
  nd_geometry g = {640, 480, 128, 128, 0, 0, 640, 480, 0.2, 128.0 / 480, 0, 0};
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  x = 64, y = 32;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 320, 1e-4) && NEAR(y, 120, 1e-4), "stretch %f %f", x, y);
  CHECK(t.frame_width == 640 && t.frame_height == 480, "clip frame");

  /* letterbox: 640x480 -> content 128x96 at y 16 (scale 0.2 both ways) */
  g = (nd_geometry){640, 480, 128, 128, 0, 0, 640, 480, 0.2, 0.2, 0, 16};
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  x = 64, y = 16;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 320, 1e-4) && NEAR(y, 0, 1e-4), "letterbox top %f %f", x, y);
  x = 128, y = 112;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 640, 1e-4) && NEAR(y, 480, 1e-4), "letterbox bottom-right %f %f", x, y);
  /* a box reaching into the border is clipped to the frame */
  nd_detection d = box(10, 8, 30, 40, 1, 0);
  d.n_keypoints = 1;
  d.keypoints[0].x = 20, d.keypoints[0].y = 26;
  nd_transform_detection(&t, &d);
  CHECK(NEAR(d.x0, 50, 1e-4) && d.y0 == 0 && NEAR(d.x1, 150, 1e-4) && NEAR(d.y1, 120, 1e-4) &&
            NEAR(d.keypoints[0].x, 100, 1e-4) && NEAR(d.keypoints[0].y, 50, 1e-4),
        "letterbox box %f %f %f %f kp %f %f", d.x0, d.y0, d.x1, d.y1, d.keypoints[0].x,
        d.keypoints[0].y);

  /* crop: the centered 480x480 of 640x480 (src_x 80) -> 128x128 */
  g = (nd_geometry){640, 480, 128, 128, 80, 0, 480, 480, 128.0 / 480, 128.0 / 480, 0, 0};
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  x = 0, y = 128;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 80, 1e-3) && NEAR(y, 480, 1e-3), "crop %f %f", x, y);
  x = 128, y = 0;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 560, 1e-3) && NEAR(y, 0, 1e-3), "crop right %f %f", x, y);

  /* region: the ROI (100,50) 200x100 stretched to 128x128 */
  g = (nd_geometry){640, 480, 128, 128, 100, 50, 200, 100, 0.64, 1.28, 0, 0};
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  x = 0, y = 0;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 100, 1e-4) && NEAR(y, 50, 1e-4), "region origin %f %f", x, y);
  x = 64, y = 64;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 200, 1e-4) && NEAR(y, 100, 1e-4), "region center %f %f", x, y);
  /* a region letterboxed: 200x100 -> 128x64 at y 32 of the input */
  g = (nd_geometry){640, 480, 128, 128, 100, 50, 200, 100, 0.64, 0.64, 0, 32};
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  x = 128, y = 96;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 300, 1e-4) && NEAR(y, 150, 1e-4), "region letterbox %f %f", x, y);

  /* the frame was scaled to 320x240 after the model: coordinates halve */
  g = (nd_geometry){640, 480, 128, 128, 0, 0, 640, 480, 0.2, 128.0 / 480, 0, 0};
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 320, 240, &err) == ND_OK, "%s", err.msg);
  x = 64, y = 32;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 160, 1e-4) && NEAR(y, 60, 1e-4) && t.frame_width == 320, "scaled %f %f", x, y);
  /* decoded in 256x256 pixels while the input is 128x128 */
  CHECK(nd_transform_init_geometry(&t, &g, 256, 256, 0, 0, &err) == ND_OK, "%s", err.msg);
  x = 128, y = 64;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 320, 1e-4) && NEAR(y, 120, 1e-4), "model space %f %f", x, y);

  /* composed: the identity geometry of a 128x128 frame, then that frame
   * letterboxed from 720x528 (videoscale add-borders in front of the
   * model) = the plain letterbox transform */
  nd_geometry id = {128, 128, 128, 128, 0, 0, 128, 128, 1, 1, 0, 0};
  nd_transform lb, direct;
  CHECK(nd_transform_init_geometry(&t, &id, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_transform_init(&lb, 128, 128, 720, 528, ND_SCALE_LETTERBOX, &err) == ND_OK, "%s",
        err.msg);
  CHECK(nd_transform_init(&direct, 128, 128, 720, 528, ND_SCALE_LETTERBOX, &err) == ND_OK, "%s",
        err.msg);
  nd_transform_then(&t, &lb);
  CHECK(NEAR(t.scale_x, direct.scale_x, 1e-12) && NEAR(t.shift_y, direct.shift_y, 1e-9) &&
            t.frame_width == 720 && t.frame_height == 528,
        "composed %f %f", t.scale_x, t.shift_y);
  /* region geometry then a 2x upscale */
  g = (nd_geometry){640, 480, 128, 128, 100, 50, 200, 100, 0.64, 1.28, 0, 0};
  nd_transform up;
  CHECK(nd_transform_init_geometry(&t, &g, 0, 0, 0, 0, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_transform_init(&up, 640, 480, 1280, 960, ND_SCALE_STRETCH, &err) == ND_OK, "%s",
        err.msg);
  nd_transform_then(&t, &up);
  x = 64, y = 64;
  nd_transform_point(&t, &x, &y);
  CHECK(NEAR(x, 400, 1e-4) && NEAR(y, 200, 1e-4) && t.frame_width == 1280, "then x2 %f %f", x, y);

  /* malformed geometry */
  nd_geometry bad = g;
  bad.scale_x = 0;
  CHECK(nd_transform_init_geometry(&t, &bad, 0, 0, 0, 0, &err) == ND_ERR_INVALID_ARG &&
            strstr(err.msg, "scale"),
        "zero scale: %s", err.msg);
  bad = g;
  bad.offset_y = NAN;
  CHECK(nd_transform_init_geometry(&t, &bad, 0, 0, 0, 0, &err) == ND_ERR_INVALID_ARG, "NaN");
  bad = g;
  bad.frame_width = 0;
  CHECK(nd_transform_init_geometry(&t, &bad, 0, 0, 0, 0, &err) == ND_ERR_INVALID_ARG, "no frame");
  CHECK(nd_transform_init_geometry(&t, &g, -1, 0, 0, 0, &err) == ND_ERR_INVALID_ARG, "neg");
  CHECK(nd_transform_init_geometry(&t, NULL, 0, 0, 0, 0, &err) == ND_ERR_INVALID_ARG, "NULL");
}

static void test_files(const char *tmpdir) {
  cur_test = "files";
  char path[512];
  nd_error err = {0};
  snprintf(path, sizeof path, "%s/labels.txt", tmpdir);
  FILE *f = fopen(path, "wb");
  fputs("person\r\ncar \n\nbike", f);
  fclose(f);
  nd_labels *l = NULL;
  CHECK(nd_labels_load(path, &l, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_labels_count(l) == 4, "count %d", nd_labels_count(l));
  CHECK(strcmp(nd_labels_get(l, 0), "person") == 0 && strcmp(nd_labels_get(l, 1), "car") == 0 &&
            strcmp(nd_labels_get(l, 2), "") == 0 && strcmp(nd_labels_get(l, 3), "bike") == 0,
        "labels");
  CHECK(nd_labels_get(l, 4) == NULL && nd_labels_get(l, -1) == NULL, "out of range");
  nd_labels_free(l);
  snprintf(path, sizeof path, "%s/does-not-exist.txt", tmpdir);
  CHECK(nd_labels_load(path, &l, &err) == ND_ERR_IO && l == NULL && strstr(err.msg, path),
        "missing: %s", err.msg);
  /* binary is refused */
  snprintf(path, sizeof path, "%s/bin.txt", tmpdir);
  f = fopen(path, "wb");
  fwrite("a\0b\n", 1, 4, f);
  fclose(f);
  CHECK(nd_labels_load(path, &l, &err) == ND_ERR_PARSE, "binary: %s", err.msg);

  snprintf(path, sizeof path, "%s/priors.txt", tmpdir);
  f = fopen(path, "w");
  fputs("# cx cy w h\n0.5 0.5 0.1 0.2\n0.25,0.25,0.3,0.3\n\n", f);
  fclose(f);
  float *p = NULL;
  int np = 0;
  CHECK(nd_priors_load(path, &p, &np, &err) == ND_OK && np == 2, "priors %d %s", np, err.msg);
  CHECK(np == 2 && p[1] == 0.5f && p[3] == 0.2f && p[4] == 0.25f && p[7] == 0.3f, "values");
  free(p);
  f = fopen(path, "w");
  fputs("0.5 0.5 0.1\n", f);
  fclose(f);
  CHECK(nd_priors_load(path, &p, &np, &err) == ND_ERR_PARSE && strstr(err.msg, ":1:"),
        "3 numbers: %s", err.msg);
  f = fopen(path, "w");
  fputs("0.5 0.5 0.1 0.1 7\n", f);
  fclose(f);
  CHECK(nd_priors_load(path, &p, &np, &err) == ND_ERR_PARSE, "5 numbers: %s", err.msg);
}

/* Special files and odd paths as labels and priors files: each refused with
 * a message naming the path and what it is, at once.  A FIFO used to block
 * in fopen() forever, /dev/zero to spin reading NUL bytes as blank priors
 * lines, a directory to read as "no priors"; a loop or an over-long path
 * must not be "does not exist".  alarm() turns a hang into a failure. */
static void test_hostile_files(const char *tmpdir) {
  cur_test = "hostile files";
  char fifo[512], dir[512], loop[512], dangling[512], zeros[512], big[512], lines[512], wide[512];
  char longname[1024];
  snprintf(fifo, sizeof fifo, "%s/nd-fifo.txt", tmpdir);
  snprintf(dir, sizeof dir, "%s/nd-dir.txt", tmpdir);
  snprintf(loop, sizeof loop, "%s/nd-loop.txt", tmpdir);
  snprintf(dangling, sizeof dangling, "%s/nd-dangling.txt", tmpdir);
  snprintf(zeros, sizeof zeros, "%s/nd-zeros.txt", tmpdir);
  snprintf(big, sizeof big, "%s/nd-big.txt", tmpdir);
  snprintf(lines, sizeof lines, "%s/nd-lines.txt", tmpdir);
  snprintf(wide, sizeof wide, "%s/nd-wide.txt", tmpdir);
  snprintf(longname, sizeof longname, "%s/%0300d.txt", tmpdir, 0);
  unlink(fifo);
  rmdir(dir);
  unlink(loop);
  unlink(dangling);
  CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
  CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
  CHECK(symlink("nd-loop.txt", loop) == 0, "symlink %s", loop);
  CHECK(symlink("nd-nowhere.txt", dangling) == 0, "symlink %s", dangling);
  FILE *f = fopen(zeros, "wb");
  static const char nul[4096];
  fwrite(nul, 1, sizeof nul, f);
  fclose(f);
  /* over both caps (labels 16 MiB, priors 64 MiB) by its size alone: sparse,
   * and refused before a byte is read */
  f = fopen(big, "wb");
  CHECK(f && ftruncate(fileno(f), (off_t)65 << 20) == 0, "truncate %s", big);
  fclose(f);
  f = fopen(lines, "wb");
  for (int i = 0; i < 1000001; i++)
    fputs("0.5 0.5 0.1 0.1\n", f);
  fclose(f);
  f = fopen(wide, "wb");
  fputs("0.5 0.5 0.1 0.1\n", f);
  for (int i = 0; i < 5000; i++)
    fputc(' ', f);
  fputs("0.5 0.5 0.1 0.1\n", f);
  fclose(f);

  struct {
    const char *path, *want;
    nd_status st;
  } cases[] = {
      {fifo, "nd-fifo.txt' is a FIFO, not a regular file", ND_ERR_IO},
      {"/dev/zero", "'/dev/zero' is a character device, not a regular file", ND_ERR_IO},
      {dir, "nd-dir.txt' is a directory, not a regular file", ND_ERR_IO},
      {loop, "nd-loop.txt': too many levels of symbolic links", ND_ERR_IO},
      {dangling, "nd-dangling.txt' is a dangling symbolic link", ND_ERR_IO},
      {longname, "is too long (a name in it has more than 255 bytes", ND_ERR_IO},
      {"/nonexistent/dir/labels.txt", "'/nonexistent/dir/labels.txt' does not exist", ND_ERR_IO},
      {big, "nd-big.txt' is 68157440 bytes, more than the limit", ND_ERR_PARSE},
      {zeros, "nd-zeros.txt' is not a text file: NUL byte at line 1 (byte 0)", ND_ERR_PARSE},
      {lines, "nd-lines.txt' has more than 1000000 lines", ND_ERR_PARSE},
  };
  alarm(60);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nd_error err = {0};
    nd_labels *l = (nd_labels *)&err; /* must come back NULL */
    nd_status st = nd_labels_load(cases[i].path, &l, &err);
    CHECK(st == cases[i].st && l == NULL && strncmp(err.msg, "labels file: ", 13) == 0 &&
              strstr(err.msg, cases[i].want),
          "labels %s: %s %s", cases[i].path, nd_status_str(st), err.msg);
    float *p = (float *)&err;
    int np = -1;
    memset(&err, 0, sizeof err);
    st = nd_priors_load(cases[i].path, &p, &np, &err);
    CHECK(st == cases[i].st && p == NULL && np == 0 && strncmp(err.msg, "priors file: ", 13) == 0 &&
              strstr(err.msg, cases[i].want),
          "priors %s: %s %s", cases[i].path, nd_status_str(st), err.msg);
  }
  /* a line over the cap, with its number */
  nd_error err = {0};
  float *p = NULL;
  int np = 0;
  CHECK(nd_priors_load(wide, &p, &np, &err) == ND_ERR_PARSE && strstr(err.msg, "line 2 is longer than 1024 bytes"),
        "wide priors: %s", err.msg);
  nd_labels *l = NULL;
  CHECK(nd_labels_load(wide, &l, &err) == ND_ERR_PARSE && strstr(err.msg, "line 2 is longer than 4096 bytes"),
        "wide labels: %s", err.msg);
  alarm(0);
  unlink(fifo);
  rmdir(dir);
  unlink(loop);
  unlink(dangling);
  unlink(zeros);
  unlink(big);
  unlink(lines);
  unlink(wide);
}

/* ---- drawing ------------------------------------------------------------------------- */

typedef struct {
  nd_pixfmt fmt;
  const char *name;
} fmt_case;

/* Allocate a W x H frame of the format filled with mid gray, with stride
 * padding so row arithmetic errors show. */
static uint8_t *make_frame(nd_frame *f, nd_pixfmt fmt, int w, int h) {
  memset(f, 0, sizeof *f);
  f->format = fmt;
  f->width = w;
  f->height = h;
  int bpp = fmt == ND_FMT_RGB || fmt == ND_FMT_BGR ? 3 : 4;
  size_t total;
  uint8_t *buf;
  if (fmt == ND_FMT_I420 || fmt == ND_FMT_NV12) {
    int cw = (w + 1) / 2, ch = (h + 1) / 2;
    f->strides[0] = w + 8;
    f->strides[1] = fmt == ND_FMT_I420 ? cw + 4 : 2 * cw + 4;
    f->strides[2] = cw + 4;
    size_t s0 = (size_t)f->strides[0] * h, s1 = (size_t)f->strides[1] * ch;
    size_t s2 = fmt == ND_FMT_I420 ? (size_t)f->strides[2] * ch : 0;
    total = s0 + s1 + s2;
    buf = malloc(total);
    memset(buf, 128, total);
    f->planes[0] = buf;
    f->planes[1] = buf + s0;
    f->planes[2] = fmt == ND_FMT_I420 ? buf + s0 + s1 : NULL;
  } else {
    f->strides[0] = w * bpp + 12;
    total = (size_t)f->strides[0] * h;
    buf = malloc(total);
    memset(buf, 128, total);
    f->planes[0] = buf;
  }
  return buf;
}

/* The pixel at (x, y) as R,G,B (packed) or Y,U,V (planar). */
static void get_px(const nd_frame *f, int x, int y, int out[4]) {
  out[3] = -1;
  switch (f->format) {
    case ND_FMT_I420:
      out[0] = f->planes[0][y * f->strides[0] + x];
      out[1] = f->planes[1][(y / 2) * f->strides[1] + x / 2];
      out[2] = f->planes[2][(y / 2) * f->strides[2] + x / 2];
      return;
    case ND_FMT_NV12:
      out[0] = f->planes[0][y * f->strides[0] + x];
      out[1] = f->planes[1][(y / 2) * f->strides[1] + 2 * (x / 2)];
      out[2] = f->planes[1][(y / 2) * f->strides[1] + 2 * (x / 2) + 1];
      return;
    default: {
      int bpp = f->format == ND_FMT_RGB || f->format == ND_FMT_BGR ? 3 : 4;
      const uint8_t *p = f->planes[0] + y * f->strides[0] + x * bpp;
      int bgr = f->format == ND_FMT_BGR || f->format == ND_FMT_BGRA || f->format == ND_FMT_BGRX;
      out[0] = bgr ? p[2] : p[0];
      out[1] = p[1];
      out[2] = bgr ? p[0] : p[2];
      if (f->format == ND_FMT_RGBA || f->format == ND_FMT_BGRA)
        out[3] = p[3];
    }
  }
}

static void test_draw(void) {
  cur_test = "draw";
  const fmt_case fmts[] = {{ND_FMT_RGB, "RGB"},   {ND_FMT_BGR, "BGR"},   {ND_FMT_RGBA, "RGBA"},
                           {ND_FMT_BGRA, "BGRA"}, {ND_FMT_RGBX, "RGBx"}, {ND_FMT_BGRX, "BGRx"},
                           {ND_FMT_I420, "I420"}, {ND_FMT_NV12, "NV12"}};
  nd_text_renderer *tr = NULL;
  nd_error err = {0};
  CHECK(nd_text_renderer_new("Sans 10", 4, &tr, &err) == ND_OK, "%s", err.msg);
  const nd_color red = {255, 0, 0, 255};
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    nd_frame f;
    int W = 97, H = 61; /* odd sizes: chroma rounding */
    uint8_t *buf = make_frame(&f, fmts[i].fmt, W, H);
    int yuv = fmts[i].fmt == ND_FMT_I420 || fmts[i].fmt == ND_FMT_NV12;
    int px[4];
    nd_draw_rect(&f, 10, 10, 41, 31, 2, red);
    get_px(&f, 10, 10, px);
    /* red in BT.601 limited range: Y 82, U 90, V 240 */
    if (yuv)
      CHECK(NEAR(px[0], 82, 2) && NEAR(px[1], 90, 2) && NEAR(px[2], 240, 2),
            "%s corner yuv %d %d %d", fmts[i].name, px[0], px[1], px[2]);
    else
      CHECK(px[0] == 255 && px[1] == 0 && px[2] == 0, "%s corner rgb %d %d %d", fmts[i].name,
            px[0], px[1], px[2]);
    if (px[3] >= 0)
      CHECK(px[3] == 255, "%s alpha %d", fmts[i].name, px[3]);
    get_px(&f, 40, 30, px); /* last pixel of the outline */
    CHECK(yuv ? NEAR(px[0], 82, 2) : px[0] == 255, "%s far corner %d", fmts[i].name, px[0]);
    get_px(&f, 20, 20, px); /* inside: untouched */
    CHECK(px[0] == 128 && px[1] == 128 && px[2] == 128, "%s inside %d %d %d", fmts[i].name, px[0],
          px[1], px[2]);
    get_px(&f, 41, 31, px); /* just outside */
    CHECK(px[0] == 128, "%s outside %d", fmts[i].name, px[0]);

    /* half-transparent fill blends: 128 + (255-128)/2 */
    nd_fill_rect(&f, 60, 40, 70, 50, (nd_color){255, 255, 255, 128});
    get_px(&f, 64, 44, px);
    if (!yuv)
      CHECK(NEAR(px[0], 192, 1), "%s blend %d", fmts[i].name, px[0]);
    else
      CHECK(NEAR(px[0], (235 + 128) / 2, 2), "%s blend Y %d", fmts[i].name, px[0]);

    /* clipped shapes and text off every edge: no write outside the frame
     * (ASan/valgrind would tell) */
    nd_draw_rect(&f, -20, -20, W + 20, H + 20, 3, red);
    nd_draw_point(&f, 0, 0, 5, red);
    nd_draw_point(&f, W - 1, H - 1, 5, red);
    CHECK(nd_draw_text(tr, &f, -10, -5, "edge", red, (nd_color){0, 0, 0, 255}, &err) == ND_OK,
          "%s", err.msg);
    CHECK(nd_draw_text(tr, &f, W - 5, H - 3, "edge", red, (nd_color){0, 0, 0, 255}, &err) ==
              ND_OK,
          "%s", err.msg);

    /* a label on a fresh frame: its background color where there is no
     * glyph, and some pixels of the text color */
    free(buf);
    buf = make_frame(&f, fmts[i].fmt, W, H);
    nd_detection d = box(20, 30, 80, 58, 0.9f, 0);
    d.n_keypoints = 1;
    d.keypoints[0].x = 50, d.keypoints[0].y = 45;
    nd_color green = {0, 200, 0, 255};
    CHECK(nd_draw_detection(tr, &f, &d, "face 0.90", green, 2, &err) == ND_OK, "%s", err.msg);
    int tw = 0, th = 0;
    nd_text_size(tr, "face 0.90", &tw, &th, &err);
    CHECK(tw > 20 && th > 8 && th < 30, "text size %dx%d", tw, th);
    /* label above the box: rows 30-th .. 30; its left column is background */
    get_px(&f, 20, 30 - th + 1, px);
    if (!yuv)
      CHECK(px[0] == 0 && px[1] == 200 && px[2] == 0, "%s label bg %d %d %d", fmts[i].name, px[0],
            px[1], px[2]);
    int glyph = 0;
    for (int y = 30 - th; y < 30; y++)
      for (int x = 20; x < 20 + tw && x < W; x++) {
        get_px(&f, x, y, px);
        /* this green is dark (luma 117 < 140): the text is white; the
         * background has R 0 (Y 117) */
        if (px[0] > 180)
          glyph++;
      }
    CHECK(glyph > 10, "%s glyph pixels %d", fmts[i].name, glyph);
    get_px(&f, 50, 45, px); /* keypoint dot */
    CHECK(yuv ? !NEAR(px[0], 128, 5) : px[1] == 200, "%s keypoint %d", fmts[i].name, px[1]);
    free(buf);
  }
  /* the label was rendered once, then blended from the cache */
  uint64_t renders = 0, hits = 0;
  nd_text_renderer_stats(tr, &renders, &hits);
  /* "edge" and "face 0.90": 2 renders, the other 22 draws are hits */
  CHECK(renders == 2 && hits == 8 * 3 - 2, "cache renders %llu hits %llu",
        (unsigned long long)renders, (unsigned long long)hits);
  /* LRU: more labels than entries evicts, still draws */
  nd_frame f;
  uint8_t *buf = make_frame(&f, ND_FMT_RGB, 64, 64);
  char s[32];
  for (int i = 0; i < 20; i++) {
    snprintf(s, sizeof s, "label %d", i);
    CHECK(nd_draw_text(tr, &f, 0, 0, s, red, (nd_color){0, 0, 0, 255}, &err) == ND_OK, "%s",
          err.msg);
  }
  /* long and non-ASCII text: truncated on a character boundary */
  char longtext[300];
  memset(longtext, 'x', sizeof longtext);
  memcpy(longtext + 90, "\xc3\xa9\xc3\xa9\xc3\xa9", 6);
  longtext[299] = '\0';
  CHECK(nd_draw_text(tr, &f, 0, 0, longtext, red, (nd_color){0, 0, 0, 255}, &err) == ND_OK, "%s",
        err.msg);
  CHECK(nd_draw_text(tr, &f, 0, 0, "", red, red, &err) == ND_OK, "empty text");
  /* a bad frame is an error, not a crash */
  nd_frame bad = f;
  bad.format = (nd_pixfmt)42;
  CHECK(nd_draw_text(tr, &bad, 0, 0, "x", red, red, &err) == ND_ERR_UNSUPPORTED, "bad format");
  nd_draw_rect(&bad, 0, 0, 10, 10, 1, red);
  bad = f;
  bad.planes[0] = NULL;
  nd_fill_rect(&bad, 0, 0, 10, 10, red);
  free(buf);

  /* transparent canvas: drawn pixels become opaque, the rest stays clear */
  buf = make_frame(&f, ND_FMT_BGRA, 32, 32);
  memset(buf, 0, (size_t)f.strides[0] * 32);
  nd_draw_rect(&f, 4, 4, 20, 20, 2, red);
  int px[4];
  get_px(&f, 4, 4, px);
  CHECK(px[3] == 255 && px[0] == 255, "canvas line %d %d", px[3], px[0]);
  get_px(&f, 10, 10, px);
  CHECK(px[3] == 0, "canvas hole %d", px[3]);
  free(buf);
  nd_text_renderer_free(tr);

  nd_color c0 = nd_palette_color(0), c20 = nd_palette_color(20), c1 = nd_palette_color(1);
  CHECK(memcmp(&c0, &c20, sizeof c0) == 0 && memcmp(&c0, &c1, sizeof c0) != 0, "palette");
}

/* ---- random shapes ---------------------------------------------------------------
 * Every scheme gets thousands of random tensor sets: random rank, dims,
 * dtype, byte size (never more than the buffer really holds), names and
 * values including NaN and infinities.  Nothing may crash or read out of
 * bounds (run under ASan/valgrind); every failure must come with a message. */

static uint32_t rng_state = 12345;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

static void test_random_shapes(void) {
  cur_test = "random";
  enum { CAP = 1 << 16 };
  static float pool[CAP];
  for (int i = 0; i < CAP; i++) {
    uint32_t r = rnd() % 100;
    pool[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY
                                                 : ((float)(rnd() % 2000) - 1000.0f) / 100.0f;
  }
  static const int dtypes[] = {ND_DTYPE_FLOAT32, ND_DTYPE_FLOAT32, ND_DTYPE_FLOAT16,
                               ND_DTYPE_FLOAT64, ND_DTYPE_UINT8,   ND_DTYPE_INT64, 8, 0};
  static const char *names[] = {"boxes", "scores", "detection_classes", "num_detections",
                                "output0", NULL, "Identity:0", "regressors"};
  static const int common[] = {0, 1, 2, 4, 5, 7, 8, 16, 84, 384, 512, 896};
  int errors_without_message = 0, ok = 0, failed = 0;
  for (int scheme = ND_SCHEME_BLAZEFACE; scheme <= ND_SCHEME_CLASSIFY; scheme++) {
    nd_config cfg;
    nd_config_init(&cfg, (nd_scheme)scheme);
    cfg.score_threshold = 0.0f; /* as many candidates as possible */
    nd_decoder *dec = NULL;
    nd_error err;
    CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
    for (int it = 0; it < 3000; it++) {
      nd_tensor ts[5];
      int n = (int)(rnd() % 6);
      for (int k = 0; k < n; k++) {
        nd_tensor *t = &ts[k];
        memset(t, 0, sizeof *t);
        t->name = names[rnd() % 8];
        t->dtype = dtypes[rnd() % 8];
        t->n_dims = (int)(rnd() % 5);
        int64_t numel = 1;
        for (int d = 0; d < t->n_dims; d++) {
          t->dims[d] = rnd() % 3 ? common[rnd() % 12] : (int64_t)(rnd() % 40);
          if (rnd() % 50 == 0)
            t->dims[d] = -(int64_t)(rnd() % 5);
          numel *= t->dims[d] > 0 ? t->dims[d] : 1;
        }
        size_t es = t->dtype == ND_DTYPE_FLOAT64 || t->dtype == ND_DTYPE_INT64 ? 8
                    : t->dtype == ND_DTYPE_FLOAT16                          ? 2
                    : t->dtype == ND_DTYPE_UINT8                            ? 1
                                                                            : 4;
        size_t want = (size_t)numel * es;
        size_t have = sizeof pool;
        t->size = want <= have && rnd() % 10 ? want : (size_t)(rnd() % have);
        t->data = rnd() % 40 ? (const void *)pool : NULL;
      }
      /* a third of the time: the scheme's own shapes, so the decoding
       * loops run, with a random dtype and sometimes a short buffer */
      if (rnd() % 3 == 0) {
        static const int64_t tmpl[5][4][3] = {
            {{1, 512, 1}, {1, 384, 1}, {1, 512, 16}, {1, 384, 16}},
            {{1, 300, 4}, {1, 300, 7}, {0}, {0}},
            {{1, 500, 9}, {0}, {0}, {0}},
            {{1, 8, 700}, {0}, {0}, {0}},
            {{1, 1000, 1}, {0}, {0}, {0}},
        };
        n = scheme == ND_SCHEME_BLAZEFACE ? 4 : scheme == ND_SCHEME_SSD ? 2 : 1;
        for (int k = 0; k < n; k++) {
          nd_tensor *t = &ts[k];
          memset(t, 0, sizeof *t);
          t->name = names[k];
          t->dtype = rnd() % 2 ? ND_DTYPE_FLOAT32 : dtypes[rnd() % 8];
          t->n_dims = 3;
          memcpy(t->dims, tmpl[scheme][k], sizeof tmpl[scheme][k]);
          size_t es = t->dtype == ND_DTYPE_FLOAT64 || t->dtype == ND_DTYPE_INT64 ? 8
                      : t->dtype == ND_DTYPE_FLOAT16                          ? 2
                      : t->dtype == ND_DTYPE_UINT8                            ? 1
                                                                              : 4;
          size_t want = (size_t)(t->dims[0] * t->dims[1] * t->dims[2]) * es;
          t->size = rnd() % 8 ? want : want / 2;
          /* a random window of the pool, never past its end */
          size_t off = (size_t)(rnd() % (CAP / 2)) * sizeof(float);
          t->data = (const char *)pool + (want + off <= sizeof pool ? off : 0);
        }
      }
      const nd_detection *res;
      int nr = -1;
      memset(&err, 0, sizeof err);
      nd_status st = nd_decoder_decode(dec, ts, n, &res, &nr, &err);
      if (st == ND_OK) {
        ok++;
        for (int r = 0; r < nr; r++)
          if (!(res[r].score >= 0.0f && res[r].score <= 1.0f + 1e-6f) && scheme != ND_SCHEME_SSD &&
              scheme != ND_SCHEME_CLASSIFY && scheme != ND_SCHEME_YOLOV5 &&
              scheme != ND_SCHEME_YOLOV8)
            CHECK(0, "score %f out of range", res[r].score);
      } else {
        failed++;
        if (err.status != st || err.msg[0] == '\0')
          errors_without_message++;
        if (nr != 0)
          CHECK(0, "n_results %d on error", nr);
      }
    }
    nd_decoder_free(dec);
  }
  CHECK(errors_without_message == 0, "%d errors without a message", errors_without_message);
  CHECK(ok > 0 && failed > 0, "ok %d failed %d", ok, failed);
  printf("random shapes: %d decoded, %d rejected with a message\n", ok, failed);
}

int main(int argc, char **argv) {
  const char *tmp = argc > 1 ? argv[1] : "/tmp";
  test_anchors();
  test_blazeface();
  test_blazeface_back();
  test_ssd();
  test_yolo();
  test_classify();
  test_nms();
  test_transform();
  test_transform_geometry();
  test_files(tmp);
  test_hostile_files(tmp);
  test_draw();
  test_random_shapes();
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
