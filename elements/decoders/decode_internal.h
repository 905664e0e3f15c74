/* decode_internal.h - shared between the nndecode sources; not installed. */
#ifndef ND_DECODE_INTERNAL_H
#define ND_DECODE_INTERNAL_H

#include <math.h>
#include <string.h>

#include "decode.h"

struct nd_decoder {
  nd_config cfg;               /* copy; the strings and priors below are owned */
  char *output_tensor, *boxes_tensor, *scores_tensor, *classes_tensor;
  float *priors;
  int model_w, model_h;        /* the size decodes assume */
  int default_w, default_h;    /* configured (or the scheme's default) size */

  /* scheme hooks */
  nd_status (*decode)(nd_decoder *dec, const nd_tensor *ts, int n, nd_error *err);
  void (*destroy)(nd_decoder *dec);
  /* NULL: any size is fine; else validates w x h and prepares for it
   * (dec->model_w/h are set by the caller on success) */
  nd_status (*set_size)(nd_decoder *dec, int w, int h, nd_error *err);
  const char *(*variant)(const nd_decoder *dec);
  void *priv;

  /* Candidate scratch, grown on demand and kept: the results of a decode
   * are dets[0..n_results). */
  nd_detection *dets;
  int *order;
  int cap;
  int n_results;
};

nd_status nd_set_error(nd_error *err, nd_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The nd_status of a failure of the runtime's file reader (nn_file.h). */
nd_status nd_status_from_nn(int nn_st);

/* Make room for n candidates (allocates only when n exceeds the capacity). */
nd_status nd_decoder_reserve(nd_decoder *dec, int n, nd_error *err);

/* Checks that t can be read as numbers: supported dtype, no negative dim,
 * element count * element size <= t->size, rank <= ND_MAX_DIMS.  role names
 * the tensor in the message ("scores"). */
nd_status nd_tensor_validate(const nd_tensor *t, const char *role, nd_error *err);
int64_t nd_tensor_numel(const nd_tensor *t);
/* "[1,512,16]" */
void nd_dims_str(const nd_tensor *t, char *buf, size_t size);
/* A tensor by exact name; NULL when absent. */
const nd_tensor *nd_find_tensor(const nd_tensor *ts, int n, const char *name);
/* Case-insensitive substring test on t->name (false when NULL). */
int nd_name_has(const nd_tensor *t, const char *sub);
/* "'Identity:0' [1,512,1], 'x' [2]" (for "what did we get" messages) */
void nd_tensors_str(const nd_tensor *ts, int n, char *buf, size_t size);

float nd_half_to_float(uint16_t h);

/* Element i of a validated tensor, as float.  Loads go through memcpy: the
 * data need not be aligned for its type (compilers turn these into plain
 * loads); float32 is the fast path. */
static inline float nd_tget(const nd_tensor *t, int64_t i) {
  const unsigned char *p = (const unsigned char *)t->data;
  switch (t->dtype) {
    case ND_DTYPE_FLOAT32: {
      float v;
      memcpy(&v, p + i * 4, 4);
      return v;
    }
    case ND_DTYPE_FLOAT64: {
      double v;
      memcpy(&v, p + i * 8, 8);
      return (float)v;
    }
    case ND_DTYPE_FLOAT16: {
      uint16_t v;
      memcpy(&v, p + i * 2, 2);
      return nd_half_to_float(v);
    }
    case ND_DTYPE_UINT8: return (float)p[i];
    case ND_DTYPE_INT8: return (float)(int8_t)p[i];
    case ND_DTYPE_INT32: {
      int32_t v;
      memcpy(&v, p + i * 4, 4);
      return (float)v;
    }
    case ND_DTYPE_INT64: {
      int64_t v;
      memcpy(&v, p + i * 8, 8);
      return (float)v;
    }
    default: return 0.0f;
  }
}

static inline float nd_sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

/* scheme constructors (one file each) */
nd_status nd_blazeface_init(nd_decoder *dec, nd_error *err);
nd_status nd_ssd_init(nd_decoder *dec, nd_error *err);
nd_status nd_yolo_init(nd_decoder *dec, nd_error *err);
nd_status nd_classify_init(nd_decoder *dec, nd_error *err);

#endif
