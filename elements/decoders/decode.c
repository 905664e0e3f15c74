/* decode.c - what every scheme shares: errors, configuration, the decoder
 * object and tensor validation. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "decode_internal.h"
#include "nn.h"

const char *nd_status_str(nd_status st) {
  switch (st) {
    case ND_OK: return "ND_OK";
    case ND_ERR_INVALID_ARG: return "ND_ERR_INVALID_ARG";
    case ND_ERR_MISSING: return "ND_ERR_MISSING";
    case ND_ERR_RANK: return "ND_ERR_RANK";
    case ND_ERR_DIMS: return "ND_ERR_DIMS";
    case ND_ERR_DTYPE: return "ND_ERR_DTYPE";
    case ND_ERR_SIZE: return "ND_ERR_SIZE";
    case ND_ERR_NOMEM: return "ND_ERR_NOMEM";
    case ND_ERR_IO: return "ND_ERR_IO";
    case ND_ERR_PARSE: return "ND_ERR_PARSE";
    case ND_ERR_UNSUPPORTED: return "ND_ERR_UNSUPPORTED";
    case ND_ERR_TEXT: return "ND_ERR_TEXT";
  }
  return "ND_ERR_?";
}

nd_status nd_set_error(nd_error *err, nd_status st, const char *fmt, ...) {
  if (err) {
    va_list ap;
    err->status = st;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}

nd_status nd_status_from_nn(int nn_st) {
  switch ((nn_status)nn_st) {
  case NN_OK: return ND_OK;
  case NN_ERR_INVALID_ARG: return ND_ERR_INVALID_ARG;
  case NN_ERR_NOMEM: return ND_ERR_NOMEM;
  case NN_ERR_IO: return ND_ERR_IO;         /* cannot open, not a regular file */
  default: return ND_ERR_PARSE;             /* over a cap, not text */
  }
}

const char *nd_scheme_name(nd_scheme s) {
  switch (s) {
    case ND_SCHEME_BLAZEFACE: return "blazeface";
    case ND_SCHEME_SSD: return "ssd";
    case ND_SCHEME_YOLOV5: return "yolov5";
    case ND_SCHEME_YOLOV8: return "yolov8";
    case ND_SCHEME_CLASSIFY: return "classify";
  }
  return "unknown";
}

void nd_config_init(nd_config *cfg, nd_scheme scheme) {
  memset(cfg, 0, sizeof *cfg);
  cfg->scheme = scheme;
  cfg->box_normalized = 1;
  cfg->variances[0] = cfg->variances[1] = 0.1f;
  cfg->variances[2] = cfg->variances[3] = 0.2f;
  cfg->background_class = -1;
  cfg->top_k = 5;
  switch (scheme) {
    case ND_SCHEME_BLAZEFACE:
      /* MediaPipe: min_score_thresh 0.5 (front) / 0.65 (back), known once
       * the input size is; min_suppression_threshold 0.3, WEIGHTED. */
      cfg->score_threshold = ND_SCORE_DEFAULT;
      cfg->iou_threshold = 0.3f;
      cfg->max_detections = 100;
      cfg->weighted_nms = 1;
      break;
    case ND_SCHEME_SSD:
      cfg->score_threshold = 0.5f;
      cfg->iou_threshold = 0.45f;
      cfg->max_detections = 100;
      cfg->activation = ND_ACT_SIGMOID;
      break;
    case ND_SCHEME_YOLOV5:
    case ND_SCHEME_YOLOV8:
      /* ultralytics defaults: conf 0.25, iou 0.45, max_det 300; exported
       * heads already apply the sigmoid and give input pixels. */
      cfg->score_threshold = 0.25f;
      cfg->iou_threshold = 0.45f;
      cfg->max_detections = 300;
      cfg->activation = ND_ACT_NONE;
      cfg->box_normalized = 0;
      break;
    case ND_SCHEME_CLASSIFY:
      cfg->score_threshold = 0.0f;
      cfg->max_detections = 5;
      cfg->activation = ND_ACT_AUTO;
      break;
  }
}

static char *dup_or_null(const char *s) {
  if (!s || !*s)
    return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

void nd_decoder_free(nd_decoder *dec) {
  if (!dec)
    return;
  if (dec->destroy)
    dec->destroy(dec);
  free(dec->output_tensor);
  free(dec->boxes_tensor);
  free(dec->scores_tensor);
  free(dec->classes_tensor);
  free(dec->priors);
  free(dec->dets);
  free(dec->order);
  free(dec);
}

nd_status nd_decoder_new(const nd_config *cfg, nd_decoder **out, nd_error *err) {
  if (!out)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "out is NULL");
  *out = NULL;
  if (!cfg)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "config is NULL");
  if ((unsigned)cfg->scheme > ND_SCHEME_CLASSIFY)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "unknown scheme %d", (int)cfg->scheme);
  if (cfg->score_threshold != ND_SCORE_DEFAULT &&
      !(cfg->score_threshold >= 0.0f && cfg->score_threshold <= 1.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "score threshold %g is not in [0,1]",
                        (double)cfg->score_threshold);
  if (!(cfg->iou_threshold >= 0.0f && cfg->iou_threshold <= 1.0f))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "IoU threshold %g is not in [0,1]",
                        (double)cfg->iou_threshold);
  if (cfg->max_detections < 1)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "max detections %d < 1", cfg->max_detections);
  if (cfg->model_width < 0 || cfg->model_height < 0 || cfg->num_classes < 0)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "negative model size or class count");
  if (cfg->scheme == ND_SCHEME_CLASSIFY && cfg->top_k < 1)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "top-k %d < 1", cfg->top_k);
  if (cfg->n_priors < 0 || (cfg->n_priors > 0 && !cfg->priors))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "priors: %d given without data", cfg->n_priors);

  nd_decoder *dec = calloc(1, sizeof *dec);
  if (!dec)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
  dec->cfg = *cfg;
  dec->output_tensor = dup_or_null(cfg->output_tensor);
  dec->boxes_tensor = dup_or_null(cfg->boxes_tensor);
  dec->scores_tensor = dup_or_null(cfg->scores_tensor);
  dec->classes_tensor = dup_or_null(cfg->classes_tensor);
  dec->cfg.output_tensor = dec->output_tensor;
  dec->cfg.boxes_tensor = dec->boxes_tensor;
  dec->cfg.scores_tensor = dec->scores_tensor;
  dec->cfg.classes_tensor = dec->classes_tensor;
  dec->cfg.priors = NULL;
  if (cfg->n_priors > 0) {
    dec->priors = malloc((size_t)cfg->n_priors * 4 * sizeof(float));
    if (!dec->priors) {
      nd_decoder_free(dec);
      return nd_set_error(err, ND_ERR_NOMEM, "out of memory");
    }
    memcpy(dec->priors, cfg->priors, (size_t)cfg->n_priors * 4 * sizeof(float));
    dec->cfg.priors = dec->priors;
  }
  dec->model_w = cfg->model_width;
  dec->model_h = cfg->model_height;
  if (dec->cfg.score_threshold == ND_SCORE_DEFAULT && cfg->scheme != ND_SCHEME_BLAZEFACE) {
    nd_config d;
    nd_config_init(&d, cfg->scheme);
    dec->cfg.score_threshold = d.score_threshold;
  }

  nd_status st = ND_OK;
  switch (cfg->scheme) {
    case ND_SCHEME_BLAZEFACE: st = nd_blazeface_init(dec, err); break;
    case ND_SCHEME_SSD: st = nd_ssd_init(dec, err); break;
    case ND_SCHEME_YOLOV5:
    case ND_SCHEME_YOLOV8: st = nd_yolo_init(dec, err); break;
    case ND_SCHEME_CLASSIFY: st = nd_classify_init(dec, err); break;
  }
  if (st != ND_OK) {
    nd_decoder_free(dec);
    return st;
  }
  dec->default_w = dec->model_w;
  dec->default_h = dec->model_h;
  *out = dec;
  return ND_OK;
}

nd_status nd_decoder_decode(nd_decoder *dec, const nd_tensor *tensors, int n_tensors,
                            const nd_detection **results, int *n_results, nd_error *err) {
  if (results)
    *results = NULL;
  if (n_results)
    *n_results = 0;
  if (!dec || !results || !n_results || n_tensors < 0 || (n_tensors > 0 && !tensors))
    return nd_set_error(err, ND_ERR_INVALID_ARG, "NULL decoder, tensors or result pointers");
  dec->n_results = 0;
  nd_status st = dec->decode(dec, tensors, n_tensors, err);
  if (st != ND_OK) {
    dec->n_results = 0;
    return st;
  }
  *results = dec->dets;
  *n_results = dec->n_results;
  return ND_OK;
}

void nd_decoder_model_size(const nd_decoder *dec, int *width, int *height) {
  if (width)
    *width = dec ? dec->model_w : 0;
  if (height)
    *height = dec ? dec->model_h : 0;
}

nd_status nd_decoder_set_model_size(nd_decoder *dec, int width, int height, nd_error *err) {
  if (!dec || width < 0 || height < 0)
    return nd_set_error(err, ND_ERR_INVALID_ARG, "model size: NULL decoder or %dx%d", width,
                        height);
  int w = width > 0 ? width : dec->default_w;
  int h = height > 0 ? height : dec->default_h;
  if (w == dec->model_w && h == dec->model_h)
    return ND_OK;
  if (dec->set_size) {
    nd_status st = dec->set_size(dec, w, h, err);
    if (st != ND_OK)
      return st;
  }
  dec->model_w = w;
  dec->model_h = h;
  return ND_OK;
}

const char *nd_decoder_variant(const nd_decoder *dec) {
  return dec && dec->variant ? dec->variant(dec) : NULL;
}

const nd_config *nd_decoder_config(const nd_decoder *dec) {
  return dec ? &dec->cfg : NULL;
}

nd_status nd_decoder_reserve(nd_decoder *dec, int n, nd_error *err) {
  if (n <= dec->cap)
    return ND_OK;
  /* Grow to what this tensor size needs, once: the next frames of the same
   * model fit without allocating. */
  nd_detection *d = realloc(dec->dets, (size_t)n * sizeof *d);
  if (!d)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory for %d candidates", n);
  dec->dets = d;
  int *o = realloc(dec->order, (size_t)n * sizeof *o);
  if (!o)
    return nd_set_error(err, ND_ERR_NOMEM, "out of memory for %d candidates", n);
  dec->order = o;
  dec->cap = n;
  return ND_OK;
}

/* ---- tensors ---------------------------------------------------------------- */

static size_t dtype_size(int dtype) {
  switch (dtype) {
    case ND_DTYPE_FLOAT32: return 4;
    case ND_DTYPE_FLOAT64: return 8;
    case ND_DTYPE_FLOAT16: return 2;
    case ND_DTYPE_UINT8: return 1;
    case ND_DTYPE_INT8: return 1;
    case ND_DTYPE_INT32: return 4;
    case ND_DTYPE_INT64: return 8;
    default: return 0;
  }
}

int64_t nd_tensor_numel(const nd_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->n_dims && i < ND_MAX_DIMS; i++)
    n *= t->dims[i];
  return n;
}

void nd_dims_str(const nd_tensor *t, char *buf, size_t size) {
  size_t used = 0;
  if (size == 0)
    return;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < t->n_dims && i < ND_MAX_DIMS && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "," : "",
                             (long long)t->dims[i]);
  if (used < size)
    snprintf(buf + used, size - used, "]");
}

void nd_tensors_str(const nd_tensor *ts, int n, char *buf, size_t size) {
  size_t used = 0;
  if (size == 0)
    return;
  buf[0] = '\0';
  for (int i = 0; i < n && used < size; i++) {
    char d[96];
    nd_dims_str(&ts[i], d, sizeof d);
    used += (size_t)snprintf(buf + used, size - used, "%s'%s' %s", i ? ", " : "",
                             ts[i].name ? ts[i].name : "?", d);
  }
  if (n == 0)
    snprintf(buf, size, "none");
}

nd_status nd_tensor_validate(const nd_tensor *t, const char *role, nd_error *err) {
  const char *name = t->name ? t->name : "?";
  if (t->n_dims < 0 || t->n_dims > ND_MAX_DIMS)
    return nd_set_error(err, ND_ERR_RANK, "%s '%s': rank %d out of range", role, name,
                        t->n_dims);
  size_t es = dtype_size(t->dtype);
  if (es == 0)
    return nd_set_error(err, ND_ERR_DTYPE,
                        "%s '%s': element type %d is not a number type the decoder reads "
                        "(float32, float16, float64, (u)int8, int32, int64)",
                        role, name, t->dtype);
  /* Overflow-safe element count: each dim <= 2^31 and the product capped. */
  int64_t n = 1;
  for (int i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || t->dims[i] > (INT64_C(1) << 31))
      return nd_set_error(err, ND_ERR_DIMS, "%s '%s': dimension %d is %lld", role, name, i,
                          (long long)t->dims[i]);
    n *= t->dims[i];
    if (n > (INT64_C(1) << 40))
      return nd_set_error(err, ND_ERR_DIMS, "%s '%s': too many elements", role, name);
  }
  if (n > 0 && !t->data)
    return nd_set_error(err, ND_ERR_SIZE, "%s '%s': no data", role, name);
  if ((uint64_t)n * es > (uint64_t)t->size)
    return nd_set_error(err, ND_ERR_SIZE, "%s '%s': %lld elements need %llu bytes, %zu given",
                        role, name, (long long)n, (unsigned long long)((uint64_t)n * es),
                        t->size);
  return ND_OK;
}

const nd_tensor *nd_find_tensor(const nd_tensor *ts, int n, const char *name) {
  if (!name)
    return NULL;
  for (int i = 0; i < n; i++)
    if (ts[i].name && strcmp(ts[i].name, name) == 0)
      return &ts[i];
  return NULL;
}

int nd_name_has(const nd_tensor *t, const char *sub) {
  if (!t->name)
    return 0;
  size_t ls = strlen(sub);
  for (const char *p = t->name; *p; p++)
    if (strncasecmp(p, sub, ls) == 0)
      return 1;
  return 0;
}

float nd_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      /* subnormal: normalize */
      int e = -1;
      do {
        e++;
        man <<= 1;
      } while (!(man & 0x400));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

float nd_iou(const nd_detection *a, const nd_detection *b) {
  float aw = a->x1 - a->x0, ah = a->y1 - a->y0;
  float bw = b->x1 - b->x0, bh = b->y1 - b->y0;
  if (!(aw > 0 && ah > 0 && bw > 0 && bh > 0))
    return 0.0f;
  float ix0 = fmaxf(a->x0, b->x0), iy0 = fmaxf(a->y0, b->y0);
  float ix1 = fminf(a->x1, b->x1), iy1 = fminf(a->y1, b->y1);
  float iw = ix1 - ix0, ih = iy1 - iy0;
  if (!(iw > 0 && ih > 0))
    return 0.0f;
  float inter = iw * ih;
  return inter / (aw * ah + bw * bh - inter);
}
