/* qdq.c - the QDQ format's groups turned into 8-bit operators, once at
 * load, for a backend with the 8-bit kernels (the CPU's, NN_FUSE_QDQ).
 *
 * ONNX Runtime's quantizer writes 8-bit models by default as float
 * operators between DequantizeLinear and QuantizeLinear:
 *
 *   xq -> DQ -> Conv(., DQ(wq), DQ(bq)) -> Q -> yq
 *
 * Run as written that is a float network with a dequantize and a
 * quantize pass over every activation; ONNX Runtime instead fuses each
 * group into the QOperator node holding the same integers (QLinearConv,
 * QLinearMatMul, com.microsoft QLinearAdd / QLinearMul /
 * QLinearGlobalAveragePool / QLinearAveragePool / QLinearConcat /
 * QLinearSigmoid / QLinearLeakyRelu), and so do we, with its conditions:
 * activations quantized per tensor with constant scale and zero point,
 * weights constant (per tensor or per output channel), the bias int32 with
 * scale x_scale * w_scale and zero point 0, the float result read by its
 * QuantizeLinear only.  The fused node computes in integers and rounds
 * once where the float graph rounds the float sum, so an output can differ
 * from the float graph's by one step; it equals ONNX Runtime's, and the
 * QOperator model of the same integers, byte for byte.
 *
 * Exact rewrites done first, as ONNX Runtime's level-1 optimizer does:
 *  - Relu or Clip read only by a QuantizeLinear whose range lies inside the
 *    activation's goes (the quantizer's clamp does the same);
 *  - DQ -> MaxPool / Flatten / Reshape / Transpose / Squeeze / Unsqueeze ->
 *    Q with the same scale and zero point runs the op on the 8-bit tensor.
 *
 * Dynamically quantized layers (ONNX Runtime's quantize_dynamic, the
 * *_quantized.onnx transformers): MatMulInteger -> Cast -> Mul by the
 * product of the two scales [-> Add bias] becomes com.microsoft
 * MatMulIntegerToFloat, which scales each sum as it stores it (the same
 * float32 steps, the same bytes; ONNX Runtime fuses it too).
 *
 * DequantizeLinear nodes nothing reads afterwards are removed; the weights
 * behind them stay as they are (the 8-bit kernels read them), so the
 * model's memory shrinks by the float copies the planner would have
 * folded.  NN_NO_FUSION=1 keeps the graph as written. */
#include <string.h>

#include <math.h>

#include "graph.h"
#include "knobs.h"
#include "ops/qlinear.h"

typedef struct qdq_pass {
  nn_graph *g;
  nn_kernel_lookup_fn find_kernel;
  int *cons;          /* per value: its one consumer node, -1 when none or several */
  bool changed;
} qdq_pass;

static bool op_is(const nn_node *n, const char *domain, const char *op_type) {
  return n && !n->removed && strcmp(n->domain, domain) == 0 && strcmp(n->op_type, op_type) == 0;
}

static const nn_value *val(const qdq_pass *p, int v) {
  return v >= 0 && v < p->g->n_values ? &p->g->values[v] : NULL;
}

static bool is_const(const nn_value *v) {
  return v && v->kind == NN_VAL_CONST && !v->has_default && v->const_data;
}

static bool is_8bit(nn_dtype t) {
  return t == NN_DTYPE_UINT8 || t == NN_DTYPE_INT8;
}

/* The node producing v when it is op_type in the default domain; NULL
 * otherwise. */
static nn_node *producer(const qdq_pass *p, int v, const char *op_type) {
  const nn_value *x = val(p, v);
  if (!x || x->producer < 0)
    return NULL;
  nn_node *n = &p->g->nodes[x->producer];
  return op_is(n, "", op_type) ? n : NULL;
}

/* The sole consumer of v when it is op_type (default domain). */
static nn_node *sole_consumer(const qdq_pass *p, int v, const char *op_type) {
  const nn_value *x = val(p, v);
  if (!x || x->n_uses != 1 || x->is_graph_output || p->cons[v] < 0)
    return NULL;
  nn_node *c = &p->g->nodes[p->cons[v]];
  return op_is(c, "", op_type) ? c : NULL;
}

/* The QuantizeLinear reading v (as its input) and nothing else reading it. */
static nn_node *sole_quantize(const qdq_pass *p, int v) {
  nn_node *q = sole_consumer(p, v, "QuantizeLinear");
  return q && q->in[0] == v ? q : NULL;
}

/* (scale, zero point) of a DequantizeLinear or QuantizeLinear quantizing
 * one tensor as a whole: constant float scalar and 8-bit scalar, no
 * attribute but axis (and saturate, which only float 8 reads). */
static bool per_tensor(const qdq_pass *p, const nn_node *n, float *scale, int *zp, nn_dtype *type) {
  if (n->n_in < 3 || n->n_out != 1)
    return false;
  for (int k = 0; k < n->n_attrs; k++)
    if (strcmp(n->attrs[k].name, "axis") != 0 && strcmp(n->attrs[k].name, "saturate") != 0)
      return false;
  const nn_value *s = val(p, n->in[1]), *z = val(p, n->in[2]);
  if (!is_const(s) || s->dtype != NN_DTYPE_FLOAT || s->numel != 1 || !is_const(z) ||
      !is_8bit(z->dtype) || z->numel != 1)
    return false;
  *scale = ((const float *)s->const_data)[0];
  *zp = z->dtype == NN_DTYPE_UINT8 ? ((const uint8_t *)z->const_data)[0]
                                   : ((const int8_t *)z->const_data)[0];
  *type = z->dtype;
  return isfinite(*scale) && *scale > 0.0f;
}

/* The DequantizeLinear producing v when it dequantizes an 8-bit tensor per
 * tensor. */
static nn_node *act_dq(const qdq_pass *p, int v, float *scale, int *zp, nn_dtype *type) {
  nn_node *d = producer(p, v, "DequantizeLinear");
  return d && per_tensor(p, d, scale, zp, type) ? d : NULL;
}

/* Point node n's output 0 at q's output and remove q. */
static void take_output(qdq_pass *p, nn_node *n, nn_node *q) {
  nn_graph *g = p->g;
  int ni = (int)(n - g->nodes);
  g->values[n->out[0]].producer = -1;
  n->out[0] = q->out[0];
  g->values[q->out[0]].producer = ni;
  q->removed = true;
  p->changed = true;
}

/* Relu / Clip -> Q where Q's range [(qmin - zp) * s, (qmax - zp) * s] lies
 * inside the activation's: Q clamps to the same bytes without it. */
static void drop_activations(qdq_pass *p) {
  nn_graph *g = p->g;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *a = &g->nodes[i];
    bool relu = op_is(a, "", "Relu"), clip = op_is(a, "", "Clip");
    if ((!relu && !clip) || a->n_in < 1 || a->in[0] < 0 || a->n_out != 1)
      continue;
    nn_node *q = sole_quantize(p, a->out[0]);
    float s;
    int zp;
    nn_dtype t;
    if (!q || !per_tensor(p, q, &s, &zp, &t))
      continue;
    int qmin = t == NN_DTYPE_UINT8 ? 0 : -128, qmax = t == NN_DTYPE_UINT8 ? 255 : 127;
    float lo = -INFINITY, hi = INFINITY;
    if (relu) {
      lo = 0.0f;
    } else if (a->version < 11) {
      lo = -3.402823466e38f;
      hi = 3.402823466e38f;
      for (int k = 0; k < a->n_attrs; k++) {
        if (a->attrs[k].type != NN_ATTR_FLOAT)
          continue;
        if (strcmp(a->attrs[k].name, "min") == 0)
          lo = a->attrs[k].f;
        else if (strcmp(a->attrs[k].name, "max") == 0)
          hi = a->attrs[k].f;
      }
    } else {
      bool ok = true;
      for (int k = 1; k < 3 && k < a->n_in; k++) {
        const nn_value *b = val(p, a->in[k]);
        if (!b)
          continue;   /* omitted: no bound on that side */
        if (!is_const(b) || b->dtype != NN_DTYPE_FLOAT || b->numel != 1) {
          ok = false;
          break;
        }
        *(k == 1 ? &lo : &hi) = ((const float *)b->const_data)[0];
      }
      if (!ok)
        continue;
    }
    if (!(lo <= (float)(qmin - zp) * s && hi >= (float)(qmax - zp) * s))
      continue;
    q->in[0] = a->in[0];
    p->cons[a->in[0]] = g->values[a->in[0]].n_uses == 1 ? (int)(q - g->nodes) : -1;
    g->values[a->out[0]].producer = -1;
    a->removed = true;
    p->changed = true;
  }
}

/* DQ -> op -> Q with one (scale, zero point) on both sides, op moving or
 * selecting elements only: the op runs on the 8-bit tensor. */
static void drop_pairs(qdq_pass *p) {
  static const char *const movers[] = {"MaxPool", "Flatten", "Reshape", "Transpose",
                                       "Squeeze", "Unsqueeze", NULL};
  nn_graph *g = p->g;
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *n = &g->nodes[i];
    bool mover = false;
    for (int k = 0; movers[k] && !mover; k++)
      mover = op_is(n, "", movers[k]);
    if (!mover || n->n_in < 1 || n->n_out < 1)
      continue;
    bool extra = false;   /* MaxPool's Indices read by someone */
    for (int k = 1; k < n->n_out; k++)
      if (n->out[k] >= 0 && g->values[n->out[k]].n_uses > 0)
        extra = true;
    float ds, qs;
    int dz, qz;
    nn_dtype dt, qt;
    nn_node *d = act_dq(p, n->in[0], &ds, &dz, &dt);
    nn_node *q = sole_quantize(p, n->out[0]);
    if (extra || !d || !q || !per_tensor(p, q, &qs, &qz, &qt) || ds != qs || dz != qz || dt != qt)
      continue;
    n->in[0] = d->in[0];
    take_output(p, n, q);
  }
}

/* Give n the op op_type of domain, inputs in[0..n_in). */
static nn_status become(qdq_pass *p, nn_node *n, const char *domain, const char *op_type,
                        const int *in, int n_in, nn_error *err) {
  const nn_op_def *op = nn_op_find(domain, op_type);
  const nn_kernel *kern = op && p->find_kernel ? p->find_kernel(domain, op_type) : NULL;
  int opset = domain[0] ? 1 : nn_graph_opset(p->g, "");
  int version = op ? nn_op_resolve_version(op, opset) : 0;
  if (!op || !kern || version == 0)
    return NN_ERR_UNSUPPORTED;   /* leave the group as written */
  char *t = nn_strdup(op_type), *d = nn_strdup(domain);
  int *ins = nn_malloc(((size_t)n_in + 1) * sizeof(int));
  nn_value **xs = nn_calloc((size_t)n_in + 4, sizeof(nn_value *));   /* the loader's spares */
  if (!t || !d || !ins || !xs) {
    nn_free(t);
    nn_free(d);
    nn_free(ins);
    nn_free(xs);
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  }
  memcpy(ins, in, (size_t)n_in * sizeof(int));
  nn_free(n->op_type);
  nn_free(n->domain);
  nn_free(n->in);
  nn_free(n->x);
  n->op_type = t;
  n->domain = d;
  n->in = ins;
  n->x = xs;
  n->n_in = n->n_in_model = n_in;
  n->op = op;
  n->kern = kern;
  n->opset = opset;
  n->version = version;
  return NN_OK;
}

/* The constant 8-bit weight behind DequantizeLinear d, per tensor or per
 * slice of axis `axis` (n_ch slices): its (w, scale, zero point) inputs. */
static bool const_weight(const qdq_pass *p, const nn_node *d, int axis, int64_t n_ch) {
  if (!d || d->n_in < 3 || d->n_out != 1)
    return false;
  const nn_value *w = val(p, d->in[0]), *s = val(p, d->in[1]), *z = val(p, d->in[2]);
  if (!is_const(w) || !is_8bit(w->dtype) || !is_const(s) || s->dtype != NN_DTYPE_FLOAT ||
      !is_const(z) || z->dtype != w->dtype || z->numel != s->numel)
    return false;
  for (int k = 0; k < d->n_attrs; k++)
    if (strcmp(d->attrs[k].name, "axis") != 0)
      return false;
  if (s->numel == 1)
    return s->rank <= 1;
  int64_t ax = nn_attr_int(d, "axis", 1);
  if (ax < 0)
    ax += w->rank;
  return s->rank == 1 && ax == axis && w->rank > axis && w->dims[axis] == n_ch && s->numel == n_ch;
}

/* DQ(x) -> Conv(., DQ(w), DQ(b)) -> Q  =>  QLinearConv. */
static nn_status fuse_conv(qdq_pass *p, nn_node *n, nn_error *err) {
  float xs, ys;
  int xz, yz;
  nn_dtype xt, yt;
  if (n->n_in < 2 || n->n_out != 1)
    return NN_OK;
  nn_node *dx = act_dq(p, n->in[0], &xs, &xz, &xt);
  nn_node *dw = producer(p, n->in[1], "DequantizeLinear");
  nn_node *q = sole_quantize(p, n->out[0]);
  const nn_value *w = dw ? val(p, dw->in[0]) : NULL;
  if (!dx || !q || !per_tensor(p, q, &ys, &yz, &yt) || xt != yt || !w || w->rank < 3 ||
      !const_weight(p, dw, 0, w->dims[0]))
    return NN_OK;
  int64_t m = w->dims[0];
  int bq = -1;
  if (n->n_in > 2 && n->in[2] >= 0) {
    /* an int32 bias on the accumulator's scale, x_scale * w_scale */
    nn_node *db = producer(p, n->in[2], "DequantizeLinear");
    if (!db || db->n_in < 2)
      return NN_OK;
    const nn_value *b = val(p, db->in[0]), *bs = val(p, db->in[1]);
    const nn_value *bz = db->n_in > 2 ? val(p, db->in[2]) : NULL;
    const nn_value *ws = val(p, dw->in[1]);
    if (!is_const(b) || b->dtype != NN_DTYPE_INT32 || b->numel != m || !is_const(bs) ||
        bs->dtype != NN_DTYPE_FLOAT || (bs->numel != m && bs->numel != 1))
      return NN_OK;
    if (bz && (!is_const(bz) || bz->dtype != NN_DTYPE_INT32))
      return NN_OK;
    for (int64_t c = 0; bz && c < bz->numel; c++)
      if (((const int32_t *)bz->const_data)[c] != 0)
        return NN_OK;
    for (int64_t c = 0; c < m; c++) {
      float want = xs * ((const float *)ws->const_data)[ws->numel == 1 ? 0 : c];
      float have = ((const float *)bs->const_data)[bs->numel == 1 ? 0 : c];
      if (!(fabsf(have - want) <= 1e-5f * want))
        return NN_OK;
    }
    bq = db->in[0];
  }
  int in[9] = {dx->in[0], dx->in[1], dx->in[2], dw->in[0], dw->in[1], dw->in[2],
               q->in[1], q->in[2], bq};
  nn_status st = become(p, n, "", "QLinearConv", in, bq >= 0 ? 9 : 8, err);
  if (st == NN_OK)
    take_output(p, n, q);
  return st == NN_ERR_UNSUPPORTED ? NN_OK : st;
}

/* DQ(a) -> MatMul(., DQ(b constant)) -> Q  =>  QLinearMatMul (b per
 * tensor: the quantizer's choice for MatMul). */
static nn_status fuse_matmul(qdq_pass *p, nn_node *n, nn_error *err) {
  float as, ys;
  int az, yz;
  nn_dtype at, yt;
  if (n->n_in != 2 || n->n_out != 1)
    return NN_OK;
  nn_node *da = act_dq(p, n->in[0], &as, &az, &at);
  nn_node *db = producer(p, n->in[1], "DequantizeLinear");
  nn_node *q = sole_quantize(p, n->out[0]);
  if (!da || !q || !per_tensor(p, q, &ys, &yz, &yt) || at != yt || !const_weight(p, db, 0, 0))
    return NN_OK;
  int in[8] = {da->in[0], da->in[1], da->in[2], db->in[0], db->in[1], db->in[2], q->in[1], q->in[2]};
  nn_status st = become(p, n, "", "QLinearMatMul", in, 8, err);
  if (st == NN_OK)
    take_output(p, n, q);
  return st == NN_ERR_UNSUPPORTED ? NN_OK : st;
}

/* DQ(a), DQ(b) -> Add / Mul -> Q  =>  com.microsoft QLinearAdd / QLinearMul;
 * DQ(x) -> GlobalAveragePool / AveragePool / Sigmoid / LeakyRelu -> Q  =>
 * QLinearGlobalAveragePool / QLinearAveragePool / QLinearSigmoid /
 * QLinearLeakyRelu (the node's attributes are the QLinear op's too). */
static nn_status fuse_elementwise(qdq_pass *p, nn_node *n, const char *qop, nn_error *err) {
  static const char *const pool_attrs[] = {"auto_pad", "ceil_mode", "count_include_pad",
                                           "kernel_shape", "pads", "strides", NULL};
  static const char *const alpha[] = {"alpha", NULL}, *const none[] = {NULL};
  float s[3];
  int z[3];
  nn_dtype t[3];
  int arity = n->n_in;
  if ((arity != 1 && arity != 2) || n->n_out != 1)
    return NN_OK;
  /* an attribute the QLinear op does not take (AveragePool's dilations)
   * keeps the group as written */
  const char *const *known = strcmp(qop, "QLinearAveragePool") == 0 ? pool_attrs
                             : strcmp(qop, "QLinearLeakyRelu") == 0  ? alpha
                                                                     : none;
  for (int a = 0; a < n->n_attrs; a++) {
    bool ok = false;
    for (int k = 0; known[k] && !ok; k++)
      ok = strcmp(n->attrs[a].name, known[k]) == 0;
    if (!ok)
      return NN_OK;
  }
  nn_node *d[2] = {NULL, NULL};
  for (int k = 0; k < arity; k++)
    if (!(d[k] = act_dq(p, n->in[k], &s[k], &z[k], &t[k])))
      return NN_OK;
  nn_node *q = sole_quantize(p, n->out[0]);
  if (!q || !per_tensor(p, q, &s[2], &z[2], &t[2]) || t[0] != t[2] || t[arity - 1] != t[2])
    return NN_OK;
  int in[8], k = 0;
  for (int a = 0; a < arity; a++) {
    in[k++] = d[a]->in[0];
    in[k++] = d[a]->in[1];
    in[k++] = d[a]->in[2];
  }
  in[k++] = q->in[1];
  in[k++] = q->in[2];
  nn_status st = become(p, n, NN_QLINEAR_DOMAIN, qop, in, k, err);
  if (st == NN_OK)
    take_output(p, n, q);
  return st == NN_ERR_UNSUPPORTED ? NN_OK : st;
}

/* DQ(x0), DQ(x1), ... -> Concat -> Q  =>  com.microsoft QLinearConcat
 * (y_scale, y_zero_point, then each input's triple; axis kept). */
static nn_status fuse_concat(qdq_pass *p, nn_node *n, nn_error *err) {
  if (n->n_in < 1 || n->n_in > 64 || n->n_out != 1 || n->n_attrs != 1 ||
      strcmp(n->attrs[0].name, "axis") != 0)
    return NN_OK;
  float ys, s;
  int yz, z;
  nn_dtype yt, t;
  nn_node *q = sole_quantize(p, n->out[0]);
  if (!q || !per_tensor(p, q, &ys, &yz, &yt))
    return NN_OK;
  int in[2 + 3 * 64], k = 0;
  in[k++] = q->in[1];
  in[k++] = q->in[2];
  for (int a = 0; a < n->n_in; a++) {
    nn_node *d = act_dq(p, n->in[a], &s, &z, &t);
    if (!d || t != yt)
      return NN_OK;
    in[k++] = d->in[0];
    in[k++] = d->in[1];
    in[k++] = d->in[2];
  }
  nn_status st = become(p, n, NN_QLINEAR_DOMAIN, "QLinearConcat", in, k, err);
  if (st == NN_OK)
    take_output(p, n, q);
  return st == NN_ERR_UNSUPPORTED ? NN_OK : st;
}

/* v is one value whatever the input: a constant of one element, or
 * DynamicQuantizeLinear's scale or zero point (outputs 1 and 2). */
static bool scalar_for_sure(const qdq_pass *p, int v) {
  const nn_value *x = val(p, v);
  if (!x)
    return false;
  if (is_const(x))
    return x->numel == 1;
  if (x->producer < 0)
    return false;
  const nn_node *d = &p->g->nodes[x->producer];
  return op_is(d, "", "DynamicQuantizeLinear") && d->n_out == 3 && (d->out[1] == v || d->out[2] == v);
}

/* ONNX Runtime's quantize_dynamic: MatMulInteger(A, B, a_zp, b_zp) -> Cast
 * to float -> Mul by Mul(a_scale, b_scale) [-> Add of a bias along the
 * last axis]  =>  com.microsoft MatMulIntegerToFloat(A, B, a_scale,
 * b_scale, a_zp, b_zp[, bias]), which scales each sum as it stores it (the
 * same float32 steps: the same bytes).  Only where every operand's size is
 * known here: B a constant matrix, a_scale and a_zp one value for sure
 * (constants, or DynamicQuantizeLinear's), b_scale, b_zp and the bias
 * constants of one or N values. */
static nn_status fuse_mmi_float(qdq_pass *p, nn_node *n, nn_error *err) {
  if (n->n_in < 2 || n->n_out != 1)
    return NN_OK;
  const nn_value *b = val(p, n->in[1]);
  if (!is_const(b) || b->rank != 2)
    return NN_OK;
  const int64_t N = b->dims[1];
  const int za = n->n_in > 2 ? n->in[2] : -1, zb = n->n_in > 3 ? n->in[3] : -1;
  if ((za >= 0 && !scalar_for_sure(p, za)) ||
      (zb >= 0 && (!is_const(val(p, zb)) || (val(p, zb)->numel != 1 && val(p, zb)->numel != N))))
    return NN_OK;
  nn_node *cast = sole_consumer(p, n->out[0], "Cast");
  if (!cast || cast->n_out != 1 || nn_attr_int(cast, "to", 0) != NN_DTYPE_FLOAT || cast->n_attrs != 1)
    return NN_OK;
  nn_node *mul = sole_consumer(p, cast->out[0], "Mul");
  if (!mul || mul->n_in != 2 || mul->n_out != 1)
    return NN_OK;
  const int s = mul->in[0] == cast->out[0] ? mul->in[1] : mul->in[0];
  nn_node *sm = producer(p, s, "Mul");
  if (!sm || sm->n_in != 2 || sm->n_out != 1)
    return NN_OK;
  int as = -1, bs = -1;   /* the scalar one is a_scale, the constant one b_scale */
  for (int k = 0; k < 2 && as < 0; k++) {
    const nn_value *c = val(p, sm->in[1 - k]);
    if (scalar_for_sure(p, sm->in[k]) && is_const(c) && c->dtype == NN_DTYPE_FLOAT &&
        (c->numel == 1 || (c->numel == N && c->rank == 1)))
      as = sm->in[k], bs = sm->in[1 - k];
  }
  if (as < 0)
    return NN_OK;
  nn_node *last = mul, *add = sole_consumer(p, mul->out[0], "Add");
  int bias = -1;
  if (add && add->n_in == 2 && add->n_out == 1) {
    const int o = add->in[0] == mul->out[0] ? add->in[1] : add->in[0];
    const nn_value *c = val(p, o);
    if (is_const(c) && c->dtype == NN_DTYPE_FLOAT && c->rank == 1 && c->numel == N)
      bias = o, last = add;
  }
  const int in[7] = {n->in[0], n->in[1], as, bs, za, zb, bias};
  nn_status st = become(p, n, "com.microsoft", "MatMulIntegerToFloat", in, bias >= 0 ? 7 : 6, err);
  if (st != NN_OK)
    return st == NN_ERR_UNSUPPORTED ? NN_OK : st;
  nn_graph *g = p->g;
  g->values[n->out[0]].producer = -1;
  n->out[0] = last->out[0];
  g->values[last->out[0]].producer = (int)(n - g->nodes);
  cast->removed = mul->removed = true;
  g->values[cast->out[0]].producer = -1;
  if (last == add) {
    add->removed = true;
    g->values[mul->out[0]].producer = -1;
  }
  p->changed = true;
  return NN_OK;
}

/* Remove the nodes the fusions left unread: DequantizeLinear of weights
 * and activations, the Mul of the two scales a MatMulIntegerToFloat took
 * over (pure functions of their inputs: nothing else changes). */
static void drop_dead_nodes(nn_graph *g) {
  for (int i = 0; i < g->n_nodes; i++) {
    nn_node *d = &g->nodes[i];
    if ((!op_is(d, "", "DequantizeLinear") && !op_is(d, "", "Mul")) || d->n_out != 1 || d->out[0] < 0)
      continue;
    nn_value *y = &g->values[d->out[0]];
    if (y->n_uses == 0 && !y->is_graph_output) {
      d->removed = true;
      y->producer = -1;
    }
  }
}

nn_status nn_graph_fuse_qdq(nn_graph *g, nn_kernel_lookup_fn find_kernel, nn_error *err) {
  if (nn_knobs().no_fusion)
    return NN_OK;
  bool any = false;
  for (int i = 0; i < g->n_nodes && !any; i++)
    any = op_is(&g->nodes[i], "", "QuantizeLinear") || op_is(&g->nodes[i], "", "MatMulInteger");
  if (!any)
    return NN_OK;
  qdq_pass p = {.g = g, .find_kernel = find_kernel};
  p.cons = nn_malloc(((size_t)g->n_values + 1) * sizeof(int));
  if (!p.cons)
    return nn_error_set(err, NN_ERR_NOMEM, "out of memory");
  for (int v = 0; v < g->n_values; v++)
    p.cons[v] = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const nn_node *n = &g->nodes[i];
    for (int k = 0; !n->removed && k < n->n_in; k++)
      if (n->in[k] >= 0)
        p.cons[n->in[k]] = g->values[n->in[k]].n_uses == 1 ? i : -1;
  }
  drop_activations(&p);
  drop_pairs(&p);
  nn_status st = NN_OK;
  for (int i = 0; i < g->n_nodes && st == NN_OK; i++) {
    nn_node *n = &g->nodes[i];
    if (op_is(n, "", "Conv"))
      st = fuse_conv(&p, n, err);
    else if (op_is(n, "", "MatMul"))
      st = fuse_matmul(&p, n, err);
    else if (op_is(n, "", "Add"))
      st = fuse_elementwise(&p, n, "QLinearAdd", err);
    else if (op_is(n, "", "Mul"))
      st = fuse_elementwise(&p, n, "QLinearMul", err);
    else if (op_is(n, "", "GlobalAveragePool"))
      st = fuse_elementwise(&p, n, "QLinearGlobalAveragePool", err);
    else if (op_is(n, "", "AveragePool"))
      st = fuse_elementwise(&p, n, "QLinearAveragePool", err);
    else if (op_is(n, "", "Sigmoid"))
      st = fuse_elementwise(&p, n, "QLinearSigmoid", err);
    else if (op_is(n, "", "LeakyRelu"))
      st = fuse_elementwise(&p, n, "QLinearLeakyRelu", err);
    else if (op_is(n, "", "Concat"))
      st = fuse_concat(&p, n, err);
    else if (op_is(n, "", "MatMulInteger"))
      st = fuse_mmi_float(&p, n, err);
  }
  if (p.changed) {
    nn_graph_count_uses(g);
    drop_dead_nodes(g);
    nn_graph_count_uses(g);
    nn_graph_resolve_pointers(g);
  }
  nn_free(p.cons);
  return st;
}
