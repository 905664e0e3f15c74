/* test_models.c - decoders on tensors produced by the runtime.
 *
 * The models come from gen_models.py (built into the build directory):
 * the tails of an SSD (raw, with priors, and TF-OD post-processed), a
 * YOLOv5 and a YOLOv8 head, and a tiny classifier.  Inputs are chosen so
 * the expected detections can be worked out by hand (see each test).
 *
 * Usage: test-decoder-models MODELS_DIR   (exit 77: models missing = skip)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "nn.h"

#include "check.h"

static const char *models_dir;

static float sigm(float x) {
  return 1.0f / (1.0f + expf(-x));
}

/* Run MODEL with the given float inputs; outs get borrowed views of the
 * session's outputs (valid until the session is freed). */
static nn_session *run_model(const char *file, int n_in, float *const *inputs, nd_tensor *outs,
                             int *n_out) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", models_dir, file);
  nn_session *s = NULL;
  nn_error err;
  if (nn_session_create_from_file(path, NULL, &s, &err) != NN_OK) {
    CHECK(0, "create %s: %s", path, err.msg);
    return NULL;
  }
  for (int i = 0; i < n_in; i++) {
    nn_tensor *t;
    if (nn_session_input_tensor(s, i, &t) != NN_OK) {
      CHECK(0, "input %d: %s", i, nn_session_last_error(s));
      nn_session_free(s);
      return NULL;
    }
    memcpy(t->data, inputs[i], t->nbytes);
  }
  if (nn_session_run(s) != NN_OK) {
    CHECK(0, "run %s: %s", file, nn_session_last_error(s));
    nn_session_free(s);
    return NULL;
  }
  int ni = 0, no = 0;
  nn_session_io_count(s, &ni, &no);
  for (int i = 0; i < no && i < 8; i++) {
    nn_io_info info;
    const nn_tensor *ot;
    nn_session_output_info(s, i, &info);
    nn_session_output_tensor(s, i, &ot);
    memset(&outs[i], 0, sizeof outs[i]);
    outs[i].name = info.name;
    outs[i].dtype = (int)ot->dtype;
    outs[i].n_dims = ot->rank;
    for (int d = 0; d < ot->rank; d++)
      outs[i].dims[d] = ot->dims[d];
    outs[i].data = ot->data;
    outs[i].size = ot->nbytes;
  }
  *n_out = no;
  return s;
}

static void test_ssd_raw(void) {
  cur_test = "ssd_raw";
  /* 8 priors on a 4x2 grid: cx = (i%4 + .5)/4, cy = (i/4 + .5)/2, 0.25 x 0.5 */
  float priors[8 * 4];
  for (int i = 0; i < 8; i++) {
    priors[i * 4 + 0] = ((float)(i % 4) + 0.5f) / 4;
    priors[i * 4 + 1] = ((float)(i / 4) + 0.5f) / 2;
    priors[i * 4 + 2] = 0.25f;
    priors[i * 4 + 3] = 0.5f;
  }
  /* prior 5 shifted right by dx = 0.5 -> cx += 0.5 * 0.1 * 0.25 */
  float loc[8 * 4] = {0};
  loc[5 * 4 + 0] = 0.5f;
  /* background everywhere except: prior 1 class 1 (p .995), prior 5 class 2
   * (p .965), prior 6 class 2 (p .787) */
  float conf[8 * 3];
  for (int i = 0; i < 8; i++)
    conf[i * 3] = 5, conf[i * 3 + 1] = 0, conf[i * 3 + 2] = 0;
  conf[1 * 3 + 0] = 0, conf[1 * 3 + 1] = 6;
  conf[5 * 3 + 0] = 0, conf[5 * 3 + 2] = 4;
  conf[6 * 3 + 0] = 0, conf[6 * 3 + 2] = 2;
  float *in[2] = {loc, conf};
  nd_tensor outs[8];
  int no = 0;
  nn_session *s = run_model("ssd_raw.onnx", 2, in, outs, &no);
  if (!s)
    return;
  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_SSD);
  cfg.priors = priors;
  cfg.n_priors = 8;
  cfg.box_format = ND_BOX_CXCYWH;
  cfg.activation = ND_ACT_NONE; /* the model's Softmax did it */
  cfg.background_class = 0;
  cfg.model_width = cfg.model_height = 300;
  nd_decoder *dec = NULL;
  nd_error err = {0};
  const nd_detection *r;
  int n = 0;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, outs, no, &r, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 3, "n=%d", n);
  if (n == 3) {
    CHECK(r[0].class_id == 1 && NEAR(r[0].score, exp(6) / (exp(6) + 2), 1e-5), "r0 %d %f",
          r[0].class_id, r[0].score);
    /* prior 1: cx .375 cy .25 -> x .25-.5, y 0-.5 of 300 */
    CHECK(NEAR(r[0].x0, 75, 1e-3) && NEAR(r[0].x1, 150, 1e-3) && NEAR(r[0].y0, 0, 1e-3) &&
              NEAR(r[0].y1, 150, 1e-3),
          "r0 box %f %f %f %f", r[0].x0, r[0].y0, r[0].x1, r[0].y1);
    CHECK(r[1].class_id == 2 && NEAR(r[1].score, exp(4) / (exp(4) + 2), 1e-5), "r1");
    /* prior 5: cx .375 + .0125 */
    CHECK(NEAR(r[1].x0, (0.3875 - 0.125) * 300, 1e-3), "r1 x0 %f", r[1].x0);
    CHECK(r[2].class_id == 2 && NEAR(r[2].score, exp(2) / (exp(2) + 2), 1e-5), "r2");
  }
  /* the same tensors, everything below a 0.999 threshold */
  nd_decoder_free(dec);
  cfg.score_threshold = 0.999f;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, outs, no, &r, &n, &err) == ND_OK && n == 0, "thr n=%d", n);
  nd_decoder_free(dec);
  nn_session_free(s);
}

static void test_ssd_post(void) {
  cur_test = "ssd_post";
  /* rows: ymin xmin ymax xmax score class; rows 3-4 are padding (score 0) */
  float raw[5 * 6] = {
      0.1f, 0.2f, 0.3f, 0.4f, 0.9f, 1,   /* kept */
      0.5f, 0.5f, 0.8f, 0.9f, 0.4f, 3,   /* below 0.5 */
      0.2f, 0.6f, 0.6f, 0.95f, 0.7f, 18, /* kept */
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  };
  float *in[1] = {raw};
  nd_tensor outs[8];
  int no = 0;
  nn_session *s = run_model("ssd_post.onnx", 1, in, outs, &no);
  if (!s)
    return;
  CHECK(no == 4, "outputs %d", no);
  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_SSD);
  cfg.model_width = 640;
  cfg.model_height = 480;
  nd_decoder *dec = NULL;
  nd_error err = {0};
  const nd_detection *r;
  int n = 0;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, outs, no, &r, &n, &err) == ND_OK, "%s", err.msg);
  CHECK(n == 2, "n=%d", n);
  if (n == 2) {
    CHECK(r[0].class_id == 1 && NEAR(r[0].score, 0.9, 1e-6), "r0");
    CHECK(NEAR(r[0].x0, 0.2 * 640, 1e-3) && NEAR(r[0].y0, 0.1 * 480, 1e-3) &&
              NEAR(r[0].x1, 0.4 * 640, 1e-3) && NEAR(r[0].y1, 0.3 * 480, 1e-3),
          "r0 box");
    CHECK(r[1].class_id == 18 && NEAR(r[1].score, 0.7, 1e-6), "r1");
  }
  nd_decoder_free(dec);
  nn_session_free(s);
}

static void yolo_rows(float *h, int k, int v5) {
  /* 32 rows; default: objectness/classes very negative */
  for (int i = 0; i < 32 * k; i++)
    h[i] = (i % k) >= 4 ? -10.0f : 10.0f;
  const float rows[3][8] = {
      {320, 240, 100, 200, 3, 2, -2, -2},    /* class 0 */
      {330, 240, 100, 200, 2, 1.5f, -2, -2}, /* overlaps row 0, same class */
      {100, 100, 50, 50, 1, -2, -2, 2},      /* class 2 */
  };
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 4; c++)
      h[r * k + c] = rows[r][c];
    if (v5) {
      for (int c = 4; c < 8; c++) /* objectness + 3 classes */
        h[r * k + c] = rows[r][c];
    } else {
      for (int c = 0; c < 3; c++) /* no objectness column */
        h[r * k + 4 + c] = rows[r][5 + c];
    }
  }
}

static void test_yolo(int v5) {
  cur_test = v5 ? "yolov5" : "yolov8";
  const int k = v5 ? 8 : 7;
  float head[32 * 8];
  yolo_rows(head, k, v5);
  float *in[1] = {head};
  nd_tensor outs[8];
  int no = 0;
  nn_session *s = run_model(v5 ? "yolov5.onnx" : "yolov8.onnx", 1, in, outs, &no);
  if (!s)
    return;
  CHECK(no == 1 && outs[0].n_dims == 3 && outs[0].dims[1] == (v5 ? 32 : 7), "layout");
  nd_config cfg;
  nd_config_init(&cfg, v5 ? ND_SCHEME_YOLOV5 : ND_SCHEME_YOLOV8);
  nd_decoder *dec = NULL;
  nd_error err = {0};
  const nd_detection *r;
  int n = 0;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, outs, no, &r, &n, &err) == ND_OK, "%s", err.msg);
  /* row 1 overlaps row 0 (IoU 0.82) with the same class: suppressed */
  CHECK(n == 2, "n=%d", n);
  float s0 = v5 ? sigm(3) * sigm(2) : sigm(2);
  float s2 = v5 ? sigm(1) * sigm(2) : sigm(2);
  if (n == 2) {
    /* v8: both scores are sigmoid(2); the tie is broken by position */
    const nd_detection *a = &r[0], *b = &r[1];
    if (!v5 && a->class_id != 0) {
      const nd_detection *t = a;
      a = b, b = t;
    }
    CHECK(a->class_id == 0 && NEAR(a->score, s0, 1e-5), "r0 %d %f", a->class_id, a->score);
    CHECK(b->class_id == 2 && NEAR(b->score, s2, 1e-5), "r1 %d %f", b->class_id, b->score);
    /* Back to a 1280x720 frame letterboxed into 640x640 (content 640x360 at
     * y 140, scale 2): row 0 (270..370, 140..340) -> (540..740, 0..400) */
    nd_transform tf;
    CHECK(nd_transform_init(&tf, 640, 640, 1280, 720, ND_SCALE_LETTERBOX, &err) == ND_OK, "%s",
          err.msg);
    nd_detection d = *a;
    nd_transform_detection(&tf, &d);
    CHECK(NEAR(d.x0, 540, 1e-2) && NEAR(d.x1, 740, 1e-2) && NEAR(d.y0, 0, 1e-2) &&
              NEAR(d.y1, 400, 1e-2),
          "frame box %f %f %f %f", d.x0, d.y0, d.x1, d.y1);
  }
  /* nothing above threshold: every score logit very negative */
  for (int i = 0; i < 32; i++)
    for (int c = 4; c < k; c++)
      head[i * k + c] = -10.0f;
  nn_session_free(s);
  s = run_model(v5 ? "yolov5.onnx" : "yolov8.onnx", 1, in, outs, &no);
  if (s) {
    CHECK(nd_decoder_decode(dec, outs, no, &r, &n, &err) == ND_OK && n == 0, "empty n=%d", n);
    nn_session_free(s);
  }
  nd_decoder_free(dec);
}

static void test_classify(void) {
  cur_test = "classify";
  /* channel means R .2, G .9, B .1 -> logits 4*mean and 1.33*sum - .5 */
  float img[3 * 16];
  const float mean[3] = {0.2f, 0.9f, 0.1f};
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 16; i++)
      img[c * 16 + i] = mean[c] + ((i & 1) ? 0.05f : -0.05f);
  float *in[1] = {img};
  nd_tensor outs[8];
  int no = 0;
  nn_session *s = run_model("classify.onnx", 1, in, outs, &no);
  if (!s)
    return;
  char path[1024];
  snprintf(path, sizeof path, "%s/colors.txt", models_dir);
  FILE *f = fopen(path, "w");
  fputs("red\ngreen\nblue\ngray\n", f);
  fclose(f);
  nd_labels *labels = NULL;
  nd_error err = {0};
  CHECK(nd_labels_load(path, &labels, &err) == ND_OK, "%s", err.msg);
  nd_config cfg;
  nd_config_init(&cfg, ND_SCHEME_CLASSIFY);
  cfg.top_k = 2;
  nd_decoder *dec = NULL;
  const nd_detection *r;
  int n = 0;
  CHECK(nd_decoder_new(&cfg, &dec, &err) == ND_OK, "%s", err.msg);
  CHECK(nd_decoder_decode(dec, outs, no, &r, &n, &err) == ND_OK && n == 2, "n=%d %s", n,
        err.msg);
  double lg[4] = {0.8, 3.6, 0.4, 1.33 * 1.2 - 0.5}, den = 0;
  for (int i = 0; i < 4; i++)
    den += exp(lg[i]);
  if (n == 2) {
    CHECK(strcmp(nd_labels_get(labels, r[0].class_id), "green") == 0, "top1 %s",
          nd_labels_get(labels, r[0].class_id));
    CHECK(NEAR(r[0].score, exp(3.6) / den, 1e-4), "p %f vs %f", r[0].score, exp(3.6) / den);
    CHECK(strcmp(nd_labels_get(labels, r[1].class_id), "gray") == 0, "top2 %s",
          nd_labels_get(labels, r[1].class_id));
  }
  nd_decoder_free(dec);
  nd_labels_free(labels);
  nn_session_free(s);
}

int main(int argc, char **argv) {
  models_dir = argc > 1 ? argv[1] : ".";
  char probe[1024];
  snprintf(probe, sizeof probe, "%s/yolov8.onnx", models_dir);
  if (access(probe, R_OK) != 0) {
    printf("SKIP: %s missing (python3 with onnx needed to generate it)\n", probe);
    return 77;
  }
  test_ssd_raw();
  test_ssd_post();
  test_yolo(1);
  test_yolo(0);
  test_classify();
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
