/* model_builder.h - build small (and deliberately broken) ONNX models in C
 * for the runtime tests, through the same protobuf-c schema the loader uses.
 *
 *   mb m; mb_init(&m, 13);
 *   mb_input(&m, "x", NN_DTYPE_FLOAT, 2, (int64_t[]){2, 3});
 *   mb_node(&m, "Relu", "relu0", "x", "y", NULL);
 *   mb_output(&m, "y");
 *   size_t n; uint8_t *buf = mb_pack(&m, &n);   // free() it
 *   mb_free(&m);
 *
 * Header-only; everything is malloc'd and released by mb_free.
 */
#ifndef NN_TESTS_MODEL_BUILDER_H
#define NN_TESTS_MODEL_BUILDER_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "onnx-subset.pb-c.h"

#define MB_MAX 64

typedef struct mb {
  OnnxSubset__ModelProto model;
  OnnxSubset__GraphProto graph;
  OnnxSubset__OperatorSetIdProto opset;
  OnnxSubset__OperatorSetIdProto *opsets[1];
  OnnxSubset__NodeProto nodes[MB_MAX];
  OnnxSubset__NodeProto *node_ptrs[MB_MAX];
  OnnxSubset__ValueInfoProto vis[MB_MAX];
  OnnxSubset__ValueInfoProto *in_ptrs[MB_MAX], *out_ptrs[MB_MAX];
  OnnxSubset__TypeProto types[MB_MAX];
  OnnxSubset__TypeProto__Tensor ttypes[MB_MAX];
  OnnxSubset__TensorShapeProto shapes[MB_MAX];
  OnnxSubset__TensorShapeProto__Dimension dims[MB_MAX][NN_MAX_RANK];
  OnnxSubset__TensorShapeProto__Dimension *dim_ptrs[MB_MAX][NN_MAX_RANK];
  OnnxSubset__TensorProto inits[MB_MAX];
  OnnxSubset__TensorProto *init_ptrs[MB_MAX];
  OnnxSubset__AttributeProto attrs[MB_MAX];
  OnnxSubset__AttributeProto *attr_ptrs[MB_MAX];
  OnnxSubset__StringStringEntryProto ext[MB_MAX][3];
  OnnxSubset__StringStringEntryProto *ext_ptrs[MB_MAX][3];
  char *strs[MB_MAX * 8];
  int n_strs;
  void *blobs[MB_MAX];
  int n_blobs;
  int n_vis, n_attrs;
} mb;

static inline char *mb_str(mb *m, const char *s) {
  char *d = strdup(s);
  m->strs[m->n_strs++] = d;
  return d;
}

static inline void mb_init(mb *m, int opset) {
  memset(m, 0, sizeof *m);
  onnx_subset__model_proto__init(&m->model);
  onnx_subset__graph_proto__init(&m->graph);
  onnx_subset__operator_set_id_proto__init(&m->opset);
  m->opset.domain = mb_str(m, "");
  m->opset.has_version = 1;
  m->opset.version = opset;
  m->opsets[0] = &m->opset;
  m->model.n_opset_import = 1;
  m->model.opset_import = m->opsets;
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->model.graph = &m->graph;
  m->graph.name = mb_str(m, "test");
  m->graph.node = m->node_ptrs;
  m->graph.input = m->in_ptrs;
  m->graph.output = m->out_ptrs;
  m->graph.initializer = m->init_ptrs;
}

static inline OnnxSubset__ValueInfoProto *mb_vi(mb *m, const char *name, nn_dtype dt, int rank,
                                                const int64_t *dims) {
  int i = m->n_vis++;
  OnnxSubset__ValueInfoProto *vi = &m->vis[i];
  onnx_subset__value_info_proto__init(vi);
  vi->name = mb_str(m, name);
  if (dt == NN_DTYPE_UNDEFINED)
    return vi;
  onnx_subset__type_proto__init(&m->types[i]);
  onnx_subset__type_proto__tensor__init(&m->ttypes[i]);
  m->types[i].value_case = ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE;
  m->types[i].tensor_type = &m->ttypes[i];
  m->ttypes[i].has_elem_type = 1;
  m->ttypes[i].elem_type = (int32_t)dt;
  if (rank >= 0) {
    onnx_subset__tensor_shape_proto__init(&m->shapes[i]);
    for (int d = 0; d < rank; d++) {
      onnx_subset__tensor_shape_proto__dimension__init(&m->dims[i][d]);
      if (dims[d] >= 0) {
        m->dims[i][d].value_case = ONNX_SUBSET__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        m->dims[i][d].dim_value = dims[d];
      } else {
        m->dims[i][d].value_case = ONNX_SUBSET__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        m->dims[i][d].dim_param = mb_str(m, "N");
      }
      m->dim_ptrs[i][d] = &m->dims[i][d];
    }
    m->shapes[i].n_dim = (size_t)rank;
    m->shapes[i].dim = m->dim_ptrs[i];
    m->ttypes[i].shape = &m->shapes[i];
  }
  vi->type = &m->types[i];
  return vi;
}

static inline void mb_input(mb *m, const char *name, nn_dtype dt, int rank, const int64_t *dims) {
  m->in_ptrs[m->graph.n_input++] = mb_vi(m, name, dt, rank, dims);
}

static inline void mb_output(mb *m, const char *name) {
  m->out_ptrs[m->graph.n_output++] = mb_vi(m, name, NN_DTYPE_FLOAT, -1, NULL);
}

/* Node with comma-separated input and output names ("" entries allowed). */
static inline OnnxSubset__NodeProto *mb_node(mb *m, const char *op, const char *name, const char *ins,
                                             const char *outs) {
  OnnxSubset__NodeProto *n = &m->nodes[m->graph.n_node];
  m->node_ptrs[m->graph.n_node++] = n;
  onnx_subset__node_proto__init(n);
  n->op_type = mb_str(m, op);
  n->name = mb_str(m, name);
  const char *lists[2] = {ins, outs};
  for (int l = 0; l < 2; l++) {
    char **arr = calloc(16, sizeof(char *));
    m->blobs[m->n_blobs++] = arr;
    size_t cnt = 0;
    if (lists[l] && lists[l][0]) {
      const char *p = lists[l];
      for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char tmp[128];
        memcpy(tmp, p, len);
        tmp[len] = '\0';
        arr[cnt++] = mb_str(m, tmp);
        if (!c)
          break;
        p = c + 1;
      }
    }
    if (l == 0) {
      n->input = arr;
      n->n_input = cnt;
    } else {
      n->output = arr;
      n->n_output = cnt;
    }
  }
  return n;
}

static inline void mb_attr_int(mb *m, OnnxSubset__NodeProto *n, const char *name, int64_t v) {
  OnnxSubset__AttributeProto *a = &m->attrs[m->n_attrs];
  m->attr_ptrs[m->n_attrs++] = a;
  onnx_subset__attribute_proto__init(a);
  a->name = mb_str(m, name);
  a->has_type = 1;
  a->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = 1;
  a->i = v;
  if (!n->attribute)
    n->attribute = &m->attr_ptrs[m->n_attrs - 1];
  n->n_attribute++;
}

/* Float initializer (copied). */
static inline OnnxSubset__TensorProto *mb_init_f32(mb *m, const char *name, int rank, const int64_t *dims,
                                                   const float *data) {
  OnnxSubset__TensorProto *t = &m->inits[m->graph.n_initializer];
  m->init_ptrs[m->graph.n_initializer++] = t;
  onnx_subset__tensor_proto__init(t);
  t->name = mb_str(m, name);
  t->has_data_type = 1;
  t->data_type = NN_DTYPE_FLOAT;
  int64_t *d = calloc(NN_MAX_RANK, sizeof(int64_t));
  m->blobs[m->n_blobs++] = d;
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    d[i] = dims[i];
    n *= (size_t)dims[i];
  }
  t->dims = d;
  t->n_dims = (size_t)rank;
  if (data) {
    float *f = malloc(n * sizeof(float) + 1);
    memcpy(f, data, n * sizeof(float));
    m->blobs[m->n_blobs++] = f;
    t->float_data = f;
    t->n_float_data = n;
  }
  return t;
}

/* Mark an initializer as external data. */
static inline void mb_external(mb *m, OnnxSubset__TensorProto *t, const char *location, long offset,
                               long length) {
  int i = (int)(t - m->inits);
  char buf[32];
  const char *keys[3] = {"location", "offset", "length"};
  for (int k = 0; k < 3; k++) {
    onnx_subset__string_string_entry_proto__init(&m->ext[i][k]);
    m->ext[i][k].key = mb_str(m, keys[k]);
    if (k == 0)
      m->ext[i][k].value = mb_str(m, location);
    else {
      snprintf(buf, sizeof buf, "%ld", k == 1 ? offset : length);
      m->ext[i][k].value = mb_str(m, buf);
    }
    m->ext_ptrs[i][k] = &m->ext[i][k];
  }
  t->external_data = m->ext_ptrs[i];
  t->n_external_data = 3;
  t->has_data_location = 1;
  t->data_location = ONNX_SUBSET__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  t->float_data = NULL;
  t->n_float_data = 0;
}

/* Serialize; the buffer is malloc'd, free() it. */
static inline uint8_t *mb_pack(mb *m, size_t *len) {
  *len = onnx_subset__model_proto__get_packed_size(&m->model);
  uint8_t *buf = malloc(*len + 1);
  onnx_subset__model_proto__pack(&m->model, buf);
  return buf;
}

static inline void mb_free(mb *m) {
  for (int i = 0; i < m->n_strs; i++)
    free(m->strs[i]);
  for (int i = 0; i < m->n_blobs; i++)
    free(m->blobs[i]);
}

/* A session that is only there for its worker threads (nn_image_convert,
 * nn_session_parallel_for): a 1x4 Relu on `threads` workers.  Caller-owned
 * (nn_session_free); NULL on failure, with err (optional) saying why. */
static inline nn_session *mb_worker_session(int threads, nn_error *err) {
  mb m;
  mb_init(&m, 13);
  mb_input(&m, "x", NN_DTYPE_FLOAT, 2, (int64_t[]){1, 4});
  mb_node(&m, "Relu", "relu0", "x", "y");
  mb_output(&m, "y");
  size_t len;
  uint8_t *buf = mb_pack(&m, &len);
  mb_free(&m);
  nn_options o;
  nn_options_init(&o);
  o.threads = threads;
  nn_session *s = NULL;
  if (nn_session_create_from_memory(buf, len, &o, &s, err) != NN_OK)
    s = NULL;
  free(buf);
  return s;
}

#endif
