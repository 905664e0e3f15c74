/* test_ocr.c - the OCR decoders of nndecode: DBNet text detection and CTC
 * text recognition, on hand-made tensors, and on the stored outputs of the
 * real PP-OCRv4 models.
 *
 *   test-ocr                          hand-made maps and tensors
 *   test-ocr --real SHARED_DIR DICT   the real cases SHARED_DIR/real-cases/
 *                                     ppocr_v4_det and ppocr_v4_rec
 *                                     (output_0.pb as ONNX Runtime computed
 *                                     it), the recogniser's output decoded
 *                                     with DICT (ppocr_keys_v1.txt); exit 77
 *                                     (skip) when a case or DICT is absent.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "include/nn_file.h"
#include "onnx/loader.h"

#include "check.h"

static nd_tensor map_tensor(const float *data, int h, int w) {
  nd_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "sigmoid_0.tmp_0";
  t.dtype = ND_DTYPE_FLOAT32;
  t.n_dims = 4;
  t.dims[0] = 1;
  t.dims[1] = 1;
  t.dims[2] = h;
  t.dims[3] = w;
  t.data = data;
  t.size = (size_t)h * w * sizeof(float);
  return t;
}

static void fill_rect(float *m, int w, int x0, int y0, int x1, int y1, float v) {
  for (int y = y0; y <= y1; y++)
    for (int x = x0; x <= x1; x++)
      m[y * w + x] = v;
}

/* The box a w_px x h_px blob of pixels gives: contour through the pixel
 * centers (w_px-1 x h_px-1), grown by 2 * area * ratio / perimeter. */
static void expected_unclip(double wpx, double hpx, double ratio, double *ew, double *eh) {
  double w = wpx - 1, h = hpx - 1;
  double d = w * h * ratio / (2 * (w + h));
  *ew = w + 2 * d;
  *eh = h + 2 * d;
}

static void test_dbnet(void) {
  enum { H = 128, W = 160 };
  float *m = calloc((size_t)H * W, sizeof *m);
  nd_dbnet_config cfg;
  nd_dbnet_config_init(&cfg);
  nd_dbnet *db = NULL;
  nd_error err = {0};
  const nd_rbox *b = NULL;
  int n = -1;

  cur_test = "dbnet-defaults";
  CHECK(cfg.threshold == 0.3f && cfg.box_threshold == 0.6f && cfg.unclip_ratio == 1.5f &&
            cfg.min_size == 3.0f && cfg.max_candidates == 1000 && cfg.connectivity == 8,
        "defaults");
  CHECK(nd_dbnet_new(&cfg, &db, &err) == ND_OK, "%s", err.msg);
  nd_tensor t = map_tensor(m, H, W);

  cur_test = "dbnet-empty";
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 0, "n=%d %s", n, err.msg);

  cur_test = "dbnet-below-threshold";
  for (int i = 0; i < H * W; i++)
    m[i] = 0.29f;
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 0, "n=%d %s", n, err.msg);
  memset(m, 0, (size_t)H * W * sizeof *m);

  cur_test = "dbnet-rect";
  /* 40 x 20 pixels: x 20..59, y 30..49 */
  fill_rect(m, W, 20, 30, 59, 49, 0.9f);
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 1, "n=%d %s", n, err.msg);
  if (n == 1) {
    double ew, eh;
    expected_unclip(40, 20, 1.5, &ew, &eh);
    CHECK(NEAR(b[0].width, ew, 1.0) && NEAR(b[0].height, eh, 1.0), "size %gx%g, want %gx%g",
          b[0].width, b[0].height, ew, eh);
    CHECK(NEAR(b[0].cx, 39.5, 0.5) && NEAR(b[0].cy, 39.5, 0.5), "center %g,%g", b[0].cx,
          b[0].cy);
    CHECK(NEAR(b[0].angle, 0, 0.5) || NEAR(fabs(b[0].angle), 90, 0.5), "angle %g", b[0].angle);
    CHECK(NEAR(b[0].score, 0.9, 1e-3), "score %g", b[0].score);
    /* top-left, top-right, bottom-right, bottom-left */
    CHECK(b[0].points[0].x < b[0].points[1].x && b[0].points[1].y < b[0].points[2].y &&
              b[0].points[3].x < b[0].points[2].x,
          "corner order (%g,%g) (%g,%g) (%g,%g) (%g,%g)", b[0].points[0].x, b[0].points[0].y,
          b[0].points[1].x, b[0].points[1].y, b[0].points[2].x, b[0].points[2].y,
          b[0].points[3].x, b[0].points[3].y);
    CHECK(NEAR(b[0].points[0].x, 39.5 - ew / 2, 1.0) && NEAR(b[0].points[0].y, 39.5 - eh / 2, 1.0),
          "top-left %g,%g", b[0].points[0].x, b[0].points[0].y);
  }
  /* the same map again: same results, same (reused) array */
  const nd_rbox *b2 = NULL;
  int n2 = 0;
  CHECK(nd_dbnet_decode(db, &t, &b2, &n2, &err) == ND_OK && n2 == n && b2 == b, "reuse");

  cur_test = "dbnet-low-score";
  /* above the binarisation threshold, below the box threshold */
  fill_rect(m, W, 20, 30, 59, 49, 0.5f);
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 0, "n=%d", n);

  cur_test = "dbnet-small";
  memset(m, 0, (size_t)H * W * sizeof *m);
  fill_rect(m, W, 10, 10, 12, 11, 0.95f); /* 3 x 2 pixels: sides 2 x 1 < 3 */
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 0, "n=%d", n);

  cur_test = "dbnet-two-blobs";
  memset(m, 0, (size_t)H * W * sizeof *m);
  fill_rect(m, W, 5, 5, 44, 14, 0.8f);      /* 40 x 10 */
  fill_rect(m, W, 60, 80, 139, 99, 0.95f);  /* 80 x 20 */
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 2, "n=%d %s", n, err.msg);
  if (n == 2) {
    double ew, eh;
    /* raster order of the first pixel */
    CHECK(b[0].cy < b[1].cy, "order %g %g", b[0].cy, b[1].cy);
    expected_unclip(40, 10, 1.5, &ew, &eh);
    CHECK(NEAR(b[0].width, ew, 1.0) && NEAR(b[0].height, eh, 1.0), "box 0 %gx%g want %gx%g",
          b[0].width, b[0].height, ew, eh);
    expected_unclip(80, 20, 1.5, &ew, &eh);
    CHECK(NEAR(b[1].width, ew, 1.0) && NEAR(b[1].height, eh, 1.0), "box 1 %gx%g want %gx%g",
          b[1].width, b[1].height, ew, eh);
    CHECK(NEAR(b[0].score, 0.8, 1e-3) && NEAR(b[1].score, 0.95, 1e-3), "scores %g %g",
          b[0].score, b[1].score);
  }

  cur_test = "dbnet-max-candidates";
  nd_dbnet_config c1 = cfg;
  c1.max_candidates = 1;
  nd_dbnet *db1 = NULL;
  CHECK(nd_dbnet_new(&c1, &db1, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_dbnet_decode(db1, &t, &b, &n, &err) == ND_OK && n == 1, "n=%d", n);
  nd_dbnet_free(db1);

  cur_test = "dbnet-connectivity";
  memset(m, 0, (size_t)H * W * sizeof *m);
  fill_rect(m, W, 10, 10, 29, 29, 0.9f);
  fill_rect(m, W, 30, 30, 49, 49, 0.9f); /* touches the first at one corner */
  /* the union's rectangle is half empty (score 0.45): a low box threshold */
  nd_dbnet_config c8 = cfg;
  c8.box_threshold = 0.3f;
  nd_dbnet *db8 = NULL;
  CHECK(nd_dbnet_new(&c8, &db8, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_dbnet_decode(db8, &t, &b, &n, &err) == ND_OK && n == 1, "8-connected: n=%d", n);
  nd_dbnet_free(db8);
  nd_dbnet_config c4 = c8;
  c4.connectivity = 4;
  nd_dbnet *db4 = NULL;
  CHECK(nd_dbnet_new(&c4, &db4, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_dbnet_decode(db4, &t, &b, &n, &err) == ND_OK && n == 2, "4-connected: n=%d", n);
  nd_dbnet_free(db4);

  cur_test = "dbnet-u-shape";
  /* a U: one region although its arms start as separate runs */
  memset(m, 0, (size_t)H * W * sizeof *m);
  fill_rect(m, W, 10, 10, 19, 59, 0.9f);
  fill_rect(m, W, 50, 10, 59, 59, 0.9f);
  fill_rect(m, W, 10, 50, 59, 59, 0.9f);
  /* the U's rectangle covers its hole: mean 0.9 * 1300 / 2500 = 0.468 < 0.6 */
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 0, "n=%d", n);
  nd_dbnet_config cu = cfg;
  cu.box_threshold = 0.4f;
  nd_dbnet *dbu = NULL;
  CHECK(nd_dbnet_new(&cu, &dbu, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_dbnet_decode(dbu, &t, &b, &n, &err) == ND_OK && n == 1, "one region: n=%d", n);
  if (n == 1)
    CHECK(NEAR(b[0].score, 0.9 * 1300 / 2500, 0.01), "score %g", b[0].score);
  nd_dbnet_free(dbu);

  cur_test = "dbnet-rotated";
  {
    enum { RH = 200, RW = 240 };
    float *r = calloc((size_t)RH * RW, sizeof *r);
    double a = 30.0 * M_PI / 180.0, L = 120, S = 16, cx = 120, cy = 100;
    for (int y = 0; y < RH; y++)
      for (int x = 0; x < RW; x++) {
        double dx = x - cx, dy = y - cy;
        double u = dx * cos(a) + dy * sin(a), v = -dx * sin(a) + dy * cos(a);
        if (fabs(u) <= L / 2 && fabs(v) <= S / 2)
          r[y * RW + x] = 0.9f;
      }
    nd_tensor rt = map_tensor(r, RH, RW);
    CHECK(nd_dbnet_decode(db, &rt, &b, &n, &err) == ND_OK && n == 1, "n=%d %s", n, err.msg);
    if (n == 1) {
      CHECK(NEAR(b[0].angle, 30, 2.0), "angle %g", b[0].angle);
      CHECK(NEAR(b[0].cx, cx, 1.0) && NEAR(b[0].cy, cy, 1.0), "center %g,%g", b[0].cx, b[0].cy);
      double ew, eh;
      expected_unclip(L + 1, S + 1, 1.5, &ew, &eh);
      CHECK(NEAR(b[0].width, ew, 2.0) && NEAR(b[0].height, eh, 2.0), "size %gx%g want ~%gx%g",
            b[0].width, b[0].height, ew, eh);
      CHECK(b[0].score > 0.8f, "score %g", b[0].score);
      printf("rotated bar: center %.1f,%.1f size %.1fx%.1f angle %.2f score %.3f\n", b[0].cx,
             b[0].cy, b[0].width, b[0].height, b[0].angle, b[0].score);
    }
    /* the other way: -30 degrees */
    memset(r, 0, (size_t)RH * RW * sizeof *r);
    a = -a;
    for (int y = 0; y < RH; y++)
      for (int x = 0; x < RW; x++) {
        double dx = x - cx, dy = y - cy;
        double u = dx * cos(a) + dy * sin(a), v = -dx * sin(a) + dy * cos(a);
        if (fabs(u) <= L / 2 && fabs(v) <= S / 2)
          r[y * RW + x] = 0.9f;
      }
    CHECK(nd_dbnet_decode(db, &rt, &b, &n, &err) == ND_OK && n == 1, "n=%d", n);
    if (n == 1)
      CHECK(NEAR(b[0].angle, -30, 2.0), "angle %g", b[0].angle);

    cur_test = "dbnet-transform";
    /* a frame twice the map size, stretched: everything doubles */
    nd_transform tf;
    CHECK(nd_transform_init(&tf, RW, RH, 2 * RW, 2 * RH, ND_SCALE_STRETCH, &err) == ND_OK, "%s",
          err.msg);
    if (n == 1) {
      nd_rbox fb = b[0];
      nd_detection aabb;
      nd_transform_rbox(&tf, &fb, &aabb);
      CHECK(NEAR(fb.width, 2 * b[0].width, 0.01) && NEAR(fb.height, 2 * b[0].height, 0.01) &&
                NEAR(fb.angle, b[0].angle, 0.01) && NEAR(fb.cx, 2 * b[0].cx, 0.01),
            "mapped %gx%g %g", fb.width, fb.height, fb.angle);
      CHECK(aabb.x0 <= fb.points[0].x && aabb.x1 >= fb.points[2].x && aabb.x0 >= 0 &&
                aabb.x1 <= 2 * RW && aabb.score == b[0].score,
            "aabb %g..%g", aabb.x0, aabb.x1);
    }
    free(r);
  }

  cur_test = "dbnet-malformed";
  nd_tensor bad = t;
  bad.n_dims = 3;
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_RANK && n == 0, "rank: %s", err.msg);
  CHECK(strstr(err.msg, "[1,1,H,W]") != NULL, "message: %s", err.msg);
  bad = t;
  bad.dims[1] = 2;
  bad.dims[3] = W / 2;
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_DIMS, "C=2: %s", err.msg);
  bad = t;
  bad.dims[0] = 2;
  bad.dims[2] = H / 2;
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_DIMS, "N=2: %s", err.msg);
  bad = t;
  bad.dims[2] = 0;
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_DIMS, "H=0: %s", err.msg);
  bad = t;
  bad.dims[2] = 100000;
  bad.dims[3] = 100000;
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_DIMS, "huge: %s", err.msg);
  bad = t;
  bad.dims[2] = 8192;
  bad.dims[3] = 16384; /* under the per-side limit, over the pixel limit */
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_DIMS, "huge area: %s", err.msg);
  bad = t;
  bad.size -= 4;
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_SIZE, "short data: %s", err.msg);
  bad = t;
  bad.dtype = 8; /* string */
  CHECK(nd_dbnet_decode(db, &bad, &b, &n, &err) == ND_ERR_DTYPE, "dtype: %s", err.msg);
  CHECK(nd_dbnet_decode(db, NULL, &b, &n, &err) == ND_ERR_INVALID_ARG, "NULL");
  /* after the errors, the same decoder still decodes */
  memset(m, 0, (size_t)H * W * sizeof *m);
  fill_rect(m, W, 20, 30, 59, 49, 0.9f);
  CHECK(nd_dbnet_decode(db, &t, &b, &n, &err) == ND_OK && n == 1, "n=%d", n);

  cur_test = "dbnet-config";
  nd_dbnet *x = NULL;
  nd_dbnet_config bc = cfg;
  bc.threshold = 1.5f;
  CHECK(nd_dbnet_new(&bc, &x, &err) == ND_ERR_INVALID_ARG && !x, "threshold: %s", err.msg);
  bc = cfg;
  bc.connectivity = 6;
  CHECK(nd_dbnet_new(&bc, &x, &err) == ND_ERR_INVALID_ARG && !x, "connectivity: %s", err.msg);
  bc = cfg;
  bc.max_candidates = 0;
  CHECK(nd_dbnet_new(&bc, &x, &err) == ND_ERR_INVALID_ARG && !x, "max candidates: %s", err.msg);
  bc = cfg;
  bc.unclip_ratio = NAN;
  CHECK(nd_dbnet_new(&bc, &x, &err) == ND_ERR_INVALID_ARG && !x, "unclip NaN: %s", err.msg);

  nd_dbnet_free(db);
  nd_dbnet_free(NULL);
  free(m);
}

/* [N,T,C] with the given argmax per step and its probability, the rest of
 * each row spread evenly. */
static void ctc_fill(float *p, int T, int C, const int *idx, const float *pmax) {
  for (int s = 0; s < T; s++) {
    float rest = (1.0f - pmax[s]) / (float)(C - 1);
    for (int k = 0; k < C; k++)
      p[s * C + k] = k == idx[s] ? pmax[s] : rest;
  }
}

/* Step s of a ctc_fill row: the space class (C - 1) gets probability ps,
 * the classes other than the argmax and the space share what is left. */
static void ctc_space(float *p, int s, int C, float ps) {
  float *row = p + s * C;
  int arg = 0;
  for (int k = 1; k < C; k++)
    if (row[k] > row[arg])
      arg = k;
  float rest = (1.0f - row[arg] - ps) / (float)(C - 2);
  for (int k = 0; k < C; k++)
    if (k != arg)
      row[k] = k == C - 1 ? ps : rest;
}

static nd_tensor ctc_tensor(const float *p, int N, int T, int C) {
  nd_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "softmax_11.tmp_0";
  t.dtype = ND_DTYPE_FLOAT32;
  t.n_dims = 3;
  t.dims[0] = N;
  t.dims[1] = T;
  t.dims[2] = C;
  t.data = p;
  t.size = (size_t)N * T * C * sizeof(float);
  return t;
}

static void test_ctc(void) {
  /* classes: 0 blank, 1 a, 2 b, 3 中, 4 文, 5 space */
  static const char *const dict[] = {"a", "b", "\xe4\xb8\xad", "\xe6\x96\x87"};
  enum { C = 6, T = 6 };
  nd_ctc *c = NULL;
  nd_error err = {0};
  const nd_ctc_result *r = NULL;
  int n = -1;
  float p[2 * T * C];

  cur_test = "ctc-new";
  CHECK(nd_ctc_new_from_strings(dict, 4, &c, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_ctc_num_classes(c) == C, "classes %d", nd_ctc_num_classes(c));

  cur_test = "ctc-merge";
  {
    /* a a - a b b -> "aab" ("aa-a": the blank splits the repeat) */
    int idx[T] = {1, 1, 0, 1, 2, 2};
    float pm[T] = {0.9f, 0.7f, 0.99f, 0.8f, 0.6f, 0.5f};
    ctc_fill(p, T, C, idx, pm);
    nd_tensor t = ctc_tensor(p, 1, T, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1, "%s", err.msg);
    if (n == 1) {
      CHECK(strcmp(r[0].text, "aab") == 0, "text '%s'", r[0].text);
      CHECK(r[0].n_chars == 3, "chars %d", r[0].n_chars);
      /* kept steps: 0 (0.9), 3 (0.8), 4 (0.6) */
      CHECK(NEAR(r[0].confidence, (0.9 + 0.8 + 0.6) / 3, 1e-5), "conf %g", r[0].confidence);
    }
  }
  {
    /* "aa-a" exactly: a a blank a -> "aa" */
    int idx[T] = {1, 1, 0, 1, 0, 0};
    float pm[T] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
    ctc_fill(p, T, C, idx, pm);
    nd_tensor t = ctc_tensor(p, 1, T, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "aa") == 0,
          "text '%s'", n == 1 ? r[0].text : "?");
  }

  cur_test = "ctc-utf8-space";
  {
    /* 中 中 space 文 - 文 -> "中 文文" */
    int idx[T] = {3, 3, 5, 4, 0, 4};
    float pm[T] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
    ctc_fill(p, T, C, idx, pm);
    nd_tensor t = ctc_tensor(p, 1, T, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1, "%s", err.msg);
    if (n == 1)
      CHECK(strcmp(r[0].text, "\xe4\xb8\xad \xe6\x96\x87\xe6\x96\x87") == 0 && r[0].n_chars == 4,
            "text '%s' (%d)", r[0].text, r[0].n_chars);
  }

  cur_test = "ctc-empty";
  {
    int idx[T] = {0, 0, 0, 0, 0, 0};
    float pm[T] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
    ctc_fill(p, T, C, idx, pm);
    nd_tensor t = ctc_tensor(p, 1, T, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && r[0].text[0] == '\0' &&
              r[0].confidence == 0.0f && r[0].n_chars == 0,
          "empty");
    t.dims[1] = 0; /* T = 0 */
    t.size = 0;
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && r[0].text[0] == '\0', "T=0 %s",
          err.msg);
    t.dims[0] = 0; /* N = 0 */
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 0, "N=0 %s", err.msg);
  }

  cur_test = "ctc-batch";
  {
    int i0[T] = {1, 0, 2, 0, 0, 0};
    int i1[T] = {4, 4, 4, 3, 0, 0};
    float pm[T] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
    ctc_fill(p, T, C, i0, pm);
    ctc_fill(p + T * C, T, C, i1, pm);
    nd_tensor t = ctc_tensor(p, 2, T, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 2, "%s", err.msg);
    if (n == 2)
      CHECK(strcmp(r[0].text, "ab") == 0 && strcmp(r[1].text, "\xe6\x96\x87\xe4\xb8\xad") == 0,
            "'%s' '%s'", r[0].text, r[1].text);
    /* rank 2 [T,C] is one row */
    t.n_dims = 2;
    t.dims[0] = T;
    t.dims[1] = C;
    t.size = T * C * sizeof(float);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "ab") == 0,
          "rank 2");
  }

  cur_test = "ctc-logits";
  {
    /* not probabilities: the confidence is the softmax of the maximum */
    float l[1 * 2 * C];
    for (int k = 0; k < 2 * C; k++)
      l[k] = 0.0f;
    l[1] = 2.0f;       /* step 0: a */
    l[C + 2] = 3.0f;   /* step 1: b */
    nd_tensor t = ctc_tensor(l, 1, 2, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "ab") == 0,
          "'%s'", n == 1 ? r[0].text : "?");
    double p0 = exp(2.0) / (exp(2.0) + 5), p1 = exp(3.0) / (exp(3.0) + 5);
    if (n == 1)
      CHECK(NEAR(r[0].confidence, (p0 + p1) / 2, 1e-5), "conf %g want %g", r[0].confidence,
            (p0 + p1) / 2);
  }

  cur_test = "ctc-soft-space";
  {
    /* a, blank (space 0.3), b, blank (space 0.3), a: greedy "aba"; with a
     * threshold of 0.25 "a b a", of 0.35 "aba" again */
    int idx[T] = {1, 0, 2, 0, 1, 0};
    float pm[T] = {0.9f, 0.6f, 0.9f, 0.6f, 0.9f, 0.9f};
    ctc_fill(p, T, C, idx, pm);
    ctc_space(p, 1, C, 0.3f);
    ctc_space(p, 3, C, 0.3f);
    nd_tensor t = ctc_tensor(p, 1, T, C);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "aba") == 0,
          "default (greedy) '%s'", n == 1 ? r[0].text : "?");
    CHECK(nd_ctc_set_space_threshold(c, 0.25f, &err) == ND_OK, "%s", err.msg);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1, "%s", err.msg);
    if (n == 1) {
      CHECK(strcmp(r[0].text, "a b a") == 0 && r[0].n_chars == 5, "0.25: '%s' (%d)", r[0].text,
            r[0].n_chars);
      /* the confidence is the model's kept steps only */
      CHECK(NEAR(r[0].confidence, 0.9, 1e-5), "conf %g", r[0].confidence);
    }
    CHECK(nd_ctc_set_space_threshold(c, 0.35f, &err) == ND_OK, "%s", err.msg);
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "aba") == 0,
          "0.35: '%s'", n == 1 ? r[0].text : "?");

    /* no space before the first character, none after the last, none
     * doubling a space the model wrote; a repeat of the first character
     * counts as a step between */
    CHECK(nd_ctc_set_space_threshold(c, 0.25f, &err) == ND_OK, "%s", err.msg);
    int i2[T] = {0, 1, 1, 5, 0, 2};
    float p2[T] = {0.6f, 0.6f, 0.6f, 0.9f, 0.6f, 0.9f};
    ctc_fill(p, T, C, i2, p2);
    ctc_space(p, 0, C, 0.3f);  /* before 'a' */
    ctc_space(p, 2, C, 0.3f);  /* the repeat of 'a' */
    ctc_space(p, 4, C, 0.3f);  /* after the model's own space */
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "a b") == 0,
          "edges '%s'", n == 1 ? r[0].text : "?");
    int i3[T] = {1, 1, 0, 2, 2, 0};
    float p3[T] = {0.6f, 0.6f, 0.6f, 0.6f, 0.6f, 0.6f};
    ctc_fill(p, T, C, i3, p3);
    ctc_space(p, 1, C, 0.3f);  /* the repeat of 'a': "a b" */
    ctc_space(p, 5, C, 0.3f);  /* trailing: nothing follows */
    CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "a b") == 0,
          "repeat '%s'", n == 1 ? r[0].text : "?");

    /* logits: the space class's softmax is compared, not its logit */
    float l[3 * C];
    for (int k = 0; k < 3 * C; k++)
      l[k] = 0.0f;
    l[1] = 4.0f;            /* step 0: a */
    l[C + 0] = 2.0f;        /* step 1: blank, space logit 1.5 */
    l[C + 5] = 1.5f;
    l[2 * C + 2] = 4.0f;    /* step 2: b */
    nd_tensor tl = ctc_tensor(l, 1, 3, C);
    double ps = exp(1.5) / (exp(2.0) + exp(1.5) + 4);  /* 0.32 */
    CHECK(nd_ctc_set_space_threshold(c, (float)ps - 0.01f, &err) == ND_OK, "%s", err.msg);
    CHECK(nd_ctc_decode(c, &tl, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "a b") == 0,
          "logits below '%s'", n == 1 ? r[0].text : "?");
    CHECK(nd_ctc_set_space_threshold(c, (float)ps + 0.01f, &err) == ND_OK, "%s", err.msg);
    CHECK(nd_ctc_decode(c, &tl, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "ab") == 0,
          "logits above '%s'", n == 1 ? r[0].text : "?");

    /* out of (0, 1]: refused, the threshold unchanged */
    CHECK(nd_ctc_set_space_threshold(c, 0.0f, &err) == ND_ERR_INVALID_ARG, "0");
    CHECK(nd_ctc_set_space_threshold(c, -0.5f, &err) == ND_ERR_INVALID_ARG, "negative");
    CHECK(nd_ctc_set_space_threshold(c, 1.5f, &err) == ND_ERR_INVALID_ARG, "1.5");
    CHECK(nd_ctc_set_space_threshold(c, NAN, &err) == ND_ERR_INVALID_ARG, "NaN");
    CHECK(nd_ctc_set_space_threshold(NULL, 0.5f, &err) == ND_ERR_INVALID_ARG, "NULL");
    CHECK(nd_ctc_decode(c, &tl, &r, &n, &err) == ND_OK && n == 1 && strcmp(r[0].text, "ab") == 0,
          "after refusals '%s'", n == 1 ? r[0].text : "?");
    CHECK(nd_ctc_set_space_threshold(c, 1.0f, &err) == ND_OK, "1 (greedy)");
  }

  cur_test = "ctc-malformed";
  {
    nd_tensor t = ctc_tensor(p, 1, T, C);
    nd_tensor bad = t;
    bad.dims[2] = C + 1;
    bad.dims[1] = 1;
    CHECK(nd_ctc_decode(c, &bad, &r, &n, &err) == ND_ERR_DIMS && n == 0, "C: %s", err.msg);
    CHECK(strstr(err.msg, "needs 6") != NULL, "message: %s", err.msg);
    bad = t;
    bad.n_dims = 4;
    bad.dims[3] = 1;
    CHECK(nd_ctc_decode(c, &bad, &r, &n, &err) == ND_ERR_RANK, "rank 4: %s", err.msg);
    bad = t;
    bad.n_dims = 1;
    CHECK(nd_ctc_decode(c, &bad, &r, &n, &err) == ND_ERR_RANK, "rank 1: %s", err.msg);
    bad = t;
    bad.size -= 1;
    CHECK(nd_ctc_decode(c, &bad, &r, &n, &err) == ND_ERR_SIZE, "size: %s", err.msg);
    bad = t;
    bad.dims[1] = 1000000;
    CHECK(nd_ctc_decode(c, &bad, &r, &n, &err) == ND_ERR_DIMS, "huge T: %s", err.msg);
    bad = t;
    bad.dims[1] = -1;
    CHECK(nd_ctc_decode(c, &bad, &r, &n, &err) == ND_ERR_DIMS, "negative: %s", err.msg);
    CHECK(nd_ctc_decode(c, NULL, &r, &n, &err) == ND_ERR_INVALID_ARG, "NULL");
  }
  nd_ctc_free(c);
  nd_ctc_free(NULL);

  cur_test = "ctc-dictionary-file";
  {
    char path[] = "/tmp/test-ocr-dictXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
      const char body[] = "x\r\n\xe4\xb8\xad\n\xe3\x80\x80\ny"; /* CRLF, U+3000, no final NL */
      CHECK(write(fd, body, sizeof body - 1) == (ssize_t)(sizeof body - 1), "write");
      close(fd);
      CHECK(nd_ctc_new(path, &c, &err) == ND_OK, "%s", err.msg);
      CHECK(nd_ctc_num_classes(c) == 6, "classes %d", nd_ctc_num_classes(c));
      int idx[T] = {1, 2, 3, 4, 5, 0};
      float pm[T] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
      ctc_fill(p, T, C, idx, pm);
      nd_tensor t = ctc_tensor(p, 1, T, C);
      CHECK(nd_ctc_decode(c, &t, &r, &n, &err) == ND_OK && n == 1 &&
                strcmp(r[0].text, "x\xe4\xb8\xad\xe3\x80\x80y ") == 0,
            "'%s'", n == 1 ? r[0].text : "?");
      nd_ctc_free(c);
      unlink(path);
    }
    c = NULL;
    CHECK(nd_ctc_new("/nonexistent/dict.txt", &c, &err) != ND_OK && !c, "missing file");
    CHECK(strstr(err.msg, "nonexistent") != NULL, "message: %s", err.msg);
  }
}

/* ---- the real cases ---------------------------------------------------------- */

static int load_pb(const char *path, nn_tensor *t, nd_tensor *nt) {
  void *buf = NULL;
  size_t size = 0;
  nn_error e = {0};
  if (nn_file_read(path, (size_t)1 << 30, &buf, &size, &e) != NN_OK) {
    fprintf(stderr, "%s\n", e.msg);
    return -1;
  }
  nn_status st = nn_tensor_decode(buf, size, t, NULL, &e);
  nn_file_free(buf);
  if (st != NN_OK) {
    fprintf(stderr, "%s: %s\n", path, e.msg);
    return -1;
  }
  memset(nt, 0, sizeof *nt);
  nt->name = path;
  nt->dtype = (int)t->dtype;
  nt->n_dims = t->rank;
  for (int d = 0; d < t->rank; d++)
    nt->dims[d] = t->dims[d];
  nt->data = t->data;
  nt->size = t->nbytes;
  return 0;
}

static int real_cases(const char *shared, const char *dict) {
  char det[1024], rec[1024];
  snprintf(det, sizeof det, "%s/real-cases/ppocr_v4_det/test_data_set_0/output_0.pb", shared);
  snprintf(rec, sizeof rec, "%s/real-cases/ppocr_v4_rec/test_data_set_0/output_0.pb", shared);
  if (access(det, R_OK) != 0 || access(rec, R_OK) != 0) {
    printf("SKIP: real cases absent (%s, %s)\n", det, rec);
    return 77;
  }
  if (access(dict, R_OK) != 0) {
    printf("SKIP: dictionary %s absent (tools/fetch-media.sh fetches it)\n", dict);
    return 77;
  }
  nn_tensor t;
  nd_tensor nt;
  nd_error err = {0};

  cur_test = "real-det";
  if (load_pb(det, &t, &nt) == 0) {
    CHECK(nt.n_dims == 4 && nt.dims[0] == 1 && nt.dims[1] == 1, "det dims");
    nd_dbnet_config cfg;
    nd_dbnet_config_init(&cfg);
    nd_dbnet *db = NULL;
    const nd_rbox *b = NULL;
    int n = 0;
    CHECK(nd_dbnet_new(&cfg, &db, &err) == ND_OK, "%s", err.msg);
    CHECK(nd_dbnet_decode(db, &nt, &b, &n, &err) == ND_OK, "%s", err.msg);
    int64_t above = 0, total = nn_tensor_numel(&t);
    float mx = 0;
    for (int64_t i = 0; i < total; i++) {
      float v = ((const float *)nt.data)[i];
      if (v > cfg.threshold)
        above++;
      if (v > mx)
        mx = v;
    }
    printf("ppocr_v4_det: map %lldx%lld, max %.3f, %lld pixels > %.1f, %d boxes\n",
           (long long)nt.dims[2], (long long)nt.dims[3], mx, (long long)above, cfg.threshold, n);
    for (int i = 0; i < n; i++) {
      printf("  box %d: center %.1f,%.1f size %.1fx%.1f angle %.1f score %.3f\n", i, b[i].cx,
             b[i].cy, b[i].width, b[i].height, b[i].angle, b[i].score);
      CHECK(b[i].score >= cfg.box_threshold && b[i].score <= 1.0f, "score %g", b[i].score);
      CHECK(b[i].cx >= 0 && b[i].cx <= nt.dims[3] && b[i].cy >= 0 && b[i].cy <= nt.dims[2],
            "center in the map");
    }
    nd_dbnet_free(db);
    nn_aligned_free(t.data);
  } else {
    CHECK(0, "cannot read %s", det);
  }

  cur_test = "real-rec";
  if (load_pb(rec, &t, &nt) == 0) {
    CHECK(nt.n_dims == 3 && nt.dims[2] == 6625, "rec dims [%lld,%lld,%lld]", (long long)nt.dims[0],
          (long long)nt.dims[1], (long long)nt.dims[2]);
    /* softmax inside the model: every step sums to 1 */
    double worst = 0;
    int64_t steps = nt.dims[0] * nt.dims[1], C = nt.dims[2];
    for (int64_t s = 0; s < steps; s++) {
      double sum = 0;
      for (int64_t k = 0; k < C; k++)
        sum += ((const float *)nt.data)[s * C + k];
      if (fabs(sum - 1) > worst)
        worst = fabs(sum - 1);
    }
    printf("ppocr_v4_rec: [%lld,%lld,%lld], rows sum to 1 within %.2g\n", (long long)nt.dims[0],
           (long long)nt.dims[1], (long long)C, worst);
    CHECK(worst < 1e-3, "not probabilities: a step sums to 1 +- %g", worst);
    nd_ctc *c = NULL;
    CHECK(nd_ctc_new(dict, &c, &err) == ND_OK, "%s", err.msg);
    if (c) {
      CHECK(nd_ctc_num_classes(c) == 6625, "dictionary classes %d", nd_ctc_num_classes(c));
      const nd_ctc_result *r = NULL;
      int n = 0;
      CHECK(nd_ctc_decode(c, &nt, &r, &n, &err) == ND_OK, "%s", err.msg);
      for (int i = 0; i < n; i++) {
        printf("  row %d: '%s' (%d chars, confidence %.4f)\n", i, r[i].text, r[i].n_chars,
               r[i].confidence);
        CHECK(r[i].confidence >= 0 && r[i].confidence <= 1, "confidence %g", r[i].confidence);
      }
      nd_ctc_free(c);
    }
    nn_aligned_free(t.data);
  } else {
    CHECK(0, "cannot read %s", rec);
  }
  return 0;
}

/* For ocr_real_image.py: decode one stored output and print the results,
 * one per line ("box cx cy w h angle score x0 y0 .. x3 y3" in map pixels,
 * or "text CONFIDENCE TEXT"). */
static int print_det(const char *pb) {
  nn_tensor t;
  nd_tensor nt;
  nd_error err = {0};
  if (load_pb(pb, &t, &nt) != 0)
    return 1;
  nd_dbnet_config cfg;
  nd_dbnet_config_init(&cfg);
  nd_dbnet *db = NULL;
  const nd_rbox *b = NULL;
  int n = 0, rc = 1;
  if (nd_dbnet_new(&cfg, &db, &err) == ND_OK && nd_dbnet_decode(db, &nt, &b, &n, &err) == ND_OK) {
    printf("map %lld %lld\n", (long long)nt.dims[2], (long long)nt.dims[3]);
    for (int i = 0; i < n; i++) {
      printf("box %.2f %.2f %.2f %.2f %.2f %.4f", b[i].cx, b[i].cy, b[i].width, b[i].height,
             b[i].angle, b[i].score);
      for (int k = 0; k < 4; k++)
        printf(" %.2f %.2f", b[i].points[k].x, b[i].points[k].y);
      printf("\n");
    }
    rc = 0;
  } else {
    fprintf(stderr, "%s\n", err.msg);
  }
  nd_dbnet_free(db);
  nn_aligned_free(t.data);
  return rc;
}

static int print_rec(const char *pb, const char *dict) {
  nn_tensor t;
  nd_tensor nt;
  nd_error err = {0};
  if (load_pb(pb, &t, &nt) != 0)
    return 1;
  nd_ctc *c = NULL;
  const nd_ctc_result *r = NULL;
  int n = 0, rc = 1;
  if (nd_ctc_new(dict, &c, &err) == ND_OK && nd_ctc_decode(c, &nt, &r, &n, &err) == ND_OK) {
    for (int i = 0; i < n; i++)
      printf("text %.4f %s\n", r[i].confidence, r[i].text);
    rc = 0;
  } else {
    fprintf(stderr, "%s\n", err.msg);
  }
  nd_ctc_free(c);
  nn_aligned_free(t.data);
  return rc;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--det-pb") == 0)
    return print_det(argv[2]);
  if (argc == 4 && strcmp(argv[1], "--rec-pb") == 0)
    return print_rec(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "--real") == 0) {
    int rc = real_cases(argv[2], argv[3]);
    if (rc == 77)
      return 77;
  } else {
    test_dbnet();
    test_ctc();
  }
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
