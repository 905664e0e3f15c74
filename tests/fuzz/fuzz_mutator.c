/* fuzz_mutator.c - structure-aware mutations for the model fuzzer
 * (fuzz-model-struct: fuzz_model.c's target + this LLVMFuzzerCustomMutator).
 *
 * Byte-level mutation of a protobuf mostly breaks the encoding, so the plain
 * target spends its time in the decoder.  This mutator decodes the model,
 * changes one to three things an exporter could have written (attribute
 * values, the values of integer constants such as Reshape's shape or Pad's
 * pads, initializer shapes that keep their element count, float constants
 * set to NaN/Inf, graph input dims and types, an op swapped for another of
 * the registry, inputs rewired or dropped, the opset) and re-encodes it: the
 * model still decodes and the mutations reach shape inference, planning and
 * the kernels.  One call in eight falls back to libFuzzer's byte mutations.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ops.h"
#include "onnx-subset.pb-c.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

typedef OnnxSubset__ModelProto ModelProto;
typedef OnnxSubset__GraphProto GraphProto;
typedef OnnxSubset__NodeProto NodeProto;
typedef OnnxSubset__TensorProto TensorProto;
typedef OnnxSubset__AttributeProto AttributeProto;

/* ---- arena: protobuf-c's frees are ignored, everything goes at the end, so
 * mutations may point fields at static strings or at fresh blocks freely ---- */
typedef struct arena {
  void **blocks;
  size_t n, cap;
} arena;

static void *arena_alloc(void *ud, size_t size) {
  arena *a = ud;
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 256;
    void **b = realloc(a->blocks, cap * sizeof *b);
    if (!b)
      return NULL;
    a->blocks = b;
    a->cap = cap;
  }
  void *p = malloc(size ? size : 1);
  if (p)
    a->blocks[a->n++] = p;
  return p;
}

static void arena_free_one(void *ud, void *p) {
  (void)ud;
  (void)p;
}

static void arena_release(arena *a) {
  for (size_t i = 0; i < a->n; i++)
    free(a->blocks[i]);
  free(a->blocks);
}

/* ---- randomness ------------------------------------------------------------------- */
static uint64_t g_rng;

static uint32_t rnd(uint32_t n) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return n ? (uint32_t)(g_rng % n) : 0;
}

static int64_t interesting_int(void) {
  static const int64_t v[] = {0, 1, -1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 64, 127, 128, 255, 256, 1000, 65535,
                              1 << 16, 1 << 20, INT32_MAX, (int64_t)1 << 31, (int64_t)1 << 32,
                              (int64_t)1 << 40, (int64_t)1 << 62, INT64_MAX, INT64_MIN, -2, -3, -8,
                              INT32_MIN, -((int64_t)1 << 40)};
  if (rnd(4) == 0)
    return (int64_t)rnd(12) - 4;
  return v[rnd(sizeof v / sizeof v[0])];
}

static float interesting_float(void) {
  static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-30f, 1e30f, -1e30f, 3.4e38f,
                            1e-45f, 255.0f, 65536.0f, 1e10f};
  switch (rnd(6)) {
  case 0: return NAN;
  case 1: return rnd(2) ? INFINITY : -INFINITY;
  default: return v[rnd(sizeof v / sizeof v[0])];
  }
}

static const char *interesting_string(void) {
  static const char *const v[] = {"", "constant", "reflect", "edge", "wrap", "nearest", "linear", "cubic",
                                  "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "half_pixel",
                                  "pytorch_half_pixel", "asymmetric", "align_corners", "tf_crop_and_resize",
                                  "round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "DCR", "CRD",
                                  "max", "avg", "mean", "sum", "none", "bilinear", "zeros", "border",
                                  "reflection", "stretch", "not_larger", "not_smaller", "LEFT", "RIGHT",
                                  "tanh", "sigmoid", "relu", "forward", "reverse", "bidirectional",
                                  "ij,jk->ik", "...ii->...i", "i,i", "ab,b->", "xyz"};
  return v[rnd(sizeof v / sizeof v[0])];
}

static const char *interesting_attr_name(void) {
  static const char *const v[] = {"axis", "axes", "perm", "keepdims", "pads", "strides", "dilations",
                                  "kernel_shape", "group", "alpha", "beta", "transA", "transB", "mode",
                                  "epsilon", "to", "value", "split", "num_outputs", "starts", "ends",
                                  "blocksize", "k", "largest", "sorted", "exclusive", "reverse", "ceil_mode",
                                  "count_include_pad", "auto_pad", "output_padding", "output_shape",
                                  "hidden_size", "direction", "layout", "batch_dims", "reduction", "p",
                                  "noop_with_empty_axes", "select_last_index", "upper", "seed", "dtype",
                                  "num_heads", "kv_num_heads", "q_num_heads", "rotary_embedding_dim",
                                  "is_causal", "scale", "softcap", "stash_type", "equation", "spatial"};
  return v[rnd(sizeof v / sizeof v[0])];
}

static const char *random_op(void) {
#define FUZZ_FAMILY(name) nn_ops_##name,
  static const nn_op_def *const fam[] = {NN_FAMILY_LIST(FUZZ_FAMILY)};
#undef FUZZ_FAMILY
  const nn_op_def *t = fam[rnd(sizeof fam / sizeof fam[0])];
  int n = 0;
  while (t[n].name)
    n++;
  return n ? t[rnd((uint32_t)n)].name : "Relu";
}

/* ---- mutations --------------------------------------------------------------------- */
static NodeProto *pick_node(GraphProto *g) {
  return g->n_node ? g->node[rnd((uint32_t)g->n_node)] : NULL;
}

/* Any value name of the graph (input, initializer, node output). */
static char *pick_name(GraphProto *g) {
  size_t total = g->n_input + g->n_initializer;
  for (size_t i = 0; i < g->n_node; i++)
    total += g->node[i]->n_output;
  if (!total)
    return NULL;
  size_t k = rnd((uint32_t)total);
  if (k < g->n_input)
    return g->input[k]->name;
  k -= g->n_input;
  if (k < g->n_initializer)
    return g->initializer[k]->name;
  k -= g->n_initializer;
  for (size_t i = 0; i < g->n_node; i++) {
    if (k < g->node[i]->n_output)
      return g->node[i]->output[k];
    k -= g->node[i]->n_output;
  }
  return NULL;
}

static void mutate_attr(arena *a, NodeProto *n) {
  if (!n->n_attribute || rnd(5) == 0) {
    /* add an attribute of a random type under a plausible name */
    AttributeProto **arr = arena_alloc(a, (n->n_attribute + 1) * sizeof *arr);
    AttributeProto *at = arena_alloc(a, sizeof *at);
    int64_t *ints = arena_alloc(a, 4 * sizeof(int64_t));
    if (!arr || !at || !ints)
      return;
    if (n->n_attribute)
      memcpy(arr, n->attribute, n->n_attribute * sizeof *arr);
    onnx_subset__attribute_proto__init(at);
    at->name = (char *)interesting_attr_name();
    at->has_type = 1;
    switch (rnd(4)) {
    case 0: at->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT; at->has_i = 1; at->i = interesting_int(); break;
    case 1: at->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT; at->has_f = 1; at->f = interesting_float(); break;
    case 2:
      at->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
      at->has_s = 1;
      at->s.data = (uint8_t *)interesting_string();
      at->s.len = strlen((const char *)at->s.data);
      break;
    default:
      at->type = ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
      at->n_ints = rnd(5);
      for (size_t i = 0; i < at->n_ints; i++)
        ints[i] = interesting_int();
      at->ints = ints;
      break;
    }
    arr[n->n_attribute++] = at;
    n->attribute = arr;
    return;
  }
  AttributeProto *at = n->attribute[rnd((uint32_t)n->n_attribute)];
  if (at->n_ints) {
    if (rnd(4) == 0 && at->n_ints > 0) {
      at->n_ints -= 1 + rnd((uint32_t)at->n_ints); /* shorter list */
    } else {
      at->ints[rnd((uint32_t)at->n_ints)] = interesting_int();
    }
  } else if (at->n_floats) {
    at->floats[rnd((uint32_t)at->n_floats)] = interesting_float();
  } else if (at->has_i || at->type == ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
    at->has_i = 1;
    at->i = interesting_int();
  } else if (at->has_f || at->type == ONNX_SUBSET__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
    at->has_f = 1;
    at->f = interesting_float();
  } else if (at->has_s) {
    at->s.data = (uint8_t *)interesting_string();
    at->s.len = strlen((const char *)at->s.data);
  } else if (at->t) {
    at->t->n_dims = at->t->n_dims ? at->t->n_dims - 1 : 0;
  }
}

/* Integer constants decide shapes (Reshape, Slice, Pad, Tile, Expand, ...):
 * set one element to an interesting value. */
static void mutate_init_values(TensorProto *t) {
  int64_t v = interesting_int();
  if (t->has_raw_data && t->raw_data.len) {
    size_t es = t->data_type == NN_DTYPE_INT64 || t->data_type == NN_DTYPE_DOUBLE ? 8
                : t->data_type == NN_DTYPE_INT32 || t->data_type == NN_DTYPE_FLOAT ? 4 : 1;
    size_t cnt = t->raw_data.len / es;
    if (!cnt)
      return;
    uint8_t *p = t->raw_data.data + rnd((uint32_t)cnt) * es;
    if (t->data_type == NN_DTYPE_FLOAT) {
      float f = rnd(2) ? interesting_float() : (float)v;
      memcpy(p, &f, 4);
    } else if (t->data_type == NN_DTYPE_DOUBLE) {
      double d = rnd(2) ? (double)interesting_float() : (double)v;
      memcpy(p, &d, 8);
    } else {
      memcpy(p, &v, es); /* little-endian: the low bytes */
    }
  } else if (t->n_int64_data) {
    t->int64_data[rnd((uint32_t)t->n_int64_data)] = v;
  } else if (t->n_int32_data) {
    t->int32_data[rnd((uint32_t)t->n_int32_data)] = (int32_t)v;
  } else if (t->n_float_data) {
    t->float_data[rnd((uint32_t)t->n_float_data)] = interesting_float();
  }
}

/* A new shape with the same element count: permuted dims, flattened, or a
 * unit dim added or removed. */
static void mutate_init_shape(arena *a, TensorProto *t) {
  int64_t *d = arena_alloc(a, 9 * sizeof(int64_t));
  if (!d)
    return;
  size_t r = t->n_dims;
  if (r > 8)
    return;
  if (r)
    memcpy(d, t->dims, r * sizeof(int64_t));
  switch (rnd(4)) {
  case 0:
    if (r >= 2) {
      size_t i = rnd((uint32_t)r), j = rnd((uint32_t)r);
      int64_t tmp = d[i];
      d[i] = d[j];
      d[j] = tmp;
    }
    break;
  case 1: {
    int64_t n = 1;
    for (size_t i = 0; i < r; i++)
      n *= d[i];
    d[0] = n;
    r = 1;
    break;
  }
  case 2:
    if (r < 8) {
      size_t at = rnd((uint32_t)r + 1);
      memmove(d + at + 1, d + at, (r - at) * sizeof(int64_t));
      d[at] = 1;
      r++;
    }
    break;
  default:
    r = r ? r - 1 : 0; /* drop the last dim: the count no longer matches */
    break;
  }
  t->dims = d;
  t->n_dims = r;
}

static void mutate_input_type(GraphProto *g) {
  if (!g->n_input)
    return;
  OnnxSubset__ValueInfoProto *vi = g->input[rnd((uint32_t)g->n_input)];
  if (!vi->type || vi->type->value_case != ONNX_SUBSET__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return;
  OnnxSubset__TypeProto__Tensor *tt = vi->type->tensor_type;
  if (rnd(4) == 0) {
    static const int types[] = {1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 16, 8, 0};
    tt->elem_type = types[rnd(sizeof types / sizeof types[0])];
    tt->has_elem_type = 1;
    return;
  }
  if (!tt->shape || !tt->shape->n_dim)
    return;
  OnnxSubset__TensorShapeProto__Dimension *d = tt->shape->dim[rnd((uint32_t)tt->shape->n_dim)];
  if (rnd(3) == 0) {
    tt->shape->n_dim--; /* another rank */
    return;
  }
  static const int64_t small[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 33, -1};
  d->value_case = ONNX_SUBSET__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  d->dim_value = small[rnd(sizeof small / sizeof small[0])];
}

static void mutate_node_io(arena *a, GraphProto *g, NodeProto *n) {
  switch (rnd(4)) {
  case 0:
    if (n->n_input) {
      char *nm = pick_name(g);
      n->input[rnd((uint32_t)n->n_input)] = nm ? nm : (char *)"";
    }
    break;
  case 1:
    if (n->n_input)
      n->input[rnd((uint32_t)n->n_input)] = (char *)"";
    break;
  case 2:
    if (n->n_input)
      n->n_input--;
    break;
  default: {
    char **in = arena_alloc(a, (n->n_input + 1) * sizeof *in);
    char *nm = pick_name(g);
    if (!in || !nm)
      break;
    if (n->n_input)
      memcpy(in, n->input, n->n_input * sizeof *in);
    in[n->n_input++] = nm;
    n->input = in;
    break;
  }
  }
}

static void mutate_once(arena *a, ModelProto *m) {
  GraphProto *g = m->graph;
  NodeProto *n = pick_node(g);
  switch (rnd(10)) {
  case 0:
  case 1:
    if (n)
      mutate_attr(a, n);
    break;
  case 2:
  case 3:
    if (g->n_initializer)
      mutate_init_values(g->initializer[rnd((uint32_t)g->n_initializer)]);
    break;
  case 4:
    if (g->n_initializer)
      mutate_init_shape(a, g->initializer[rnd((uint32_t)g->n_initializer)]);
    break;
  case 5:
    mutate_input_type(g);
    break;
  case 6:
    if (n)
      n->op_type = (char *)random_op();
    break;
  case 7:
    if (n)
      mutate_node_io(a, g, n);
    break;
  case 8:
    if (m->n_opset_import) {
      static const int64_t opsets[] = {1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 28};
      m->opset_import[rnd((uint32_t)m->n_opset_import)]->version = opsets[rnd(sizeof opsets / sizeof opsets[0])];
    }
    break;
  default:
    if (g->n_initializer) {
      TensorProto *t = g->initializer[rnd((uint32_t)g->n_initializer)];
      static const int types[] = {1, 2, 3, 6, 7, 9, 10, 11, 16};
      /* reinterpret the bytes: same size types keep the raw_data valid */
      int nt = types[rnd(sizeof types / sizeof types[0])];
      if (nn_dtype_size((nn_dtype)nt) == nn_dtype_size((nn_dtype)t->data_type) || rnd(4) == 0)
        t->data_type = nt;
    }
    break;
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  g_rng = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
  if (rnd(8) == 0)
    return LLVMFuzzerMutate(data, size, max_size);
  arena a = {0};
  ProtobufCAllocator alloc = {arena_alloc, arena_free_one, &a};
  ModelProto *m = onnx_subset__model_proto__unpack(&alloc, size, data);
  if (!m || !m->graph) {
    arena_release(&a);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  int k = 1 + (int)rnd(3);
  for (int i = 0; i < k; i++)
    mutate_once(&a, m);
  size_t n = onnx_subset__model_proto__get_packed_size(m);
  if (n > max_size) {
    arena_release(&a);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  onnx_subset__model_proto__pack(m, data);
  arena_release(&a);
  return n;
}
