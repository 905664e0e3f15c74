/* recurrent.c - the recurrent family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_recurrent[], collected by ops/registry.c), and
 * the typed parameters of RNN, GRU and LSTM (recurrent.h). */
#include <string.h>
#include <strings.h>

#include "ops/inputs.h"
#include "ops/recurrent.h"

static bool rnn_is_index(nn_dtype dt) { return dt == NN_DTYPE_INT64 || dt == NN_DTYPE_INT32; }

/* activations (matched without case; the list names nact functions per
 * direction) with activation_alpha / activation_beta, else the cell's
 * defaults. */
static nn_status rnn_acts(nn_ctx *c, const nn_node *n, nn_rnn_params *p) {
  static const char *const names[] = {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
                                      "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
                                      "Softsign", "Softplus", NULL};
  static const int defaults[3][3] = {{NN_RNN_ACT_TANH},
                                     {NN_RNN_ACT_SIGMOID, NN_RNN_ACT_TANH},
                                     {NN_RNN_ACT_SIGMOID, NN_RNN_ACT_TANH, NN_RNN_ACT_TANH}};
  /* alpha/beta defaults of the activations that take them (ONNX values) */
  static const float def_alpha[] = {0, 0, 0, 1.0f, 0.01f, 1.0f, 1.0f, 0.2f, 1.0f, 0, 0};
  static const float def_beta[] = {0, 0, 0, 0.0f, 0, 0, 1.0f, 0.5f, 0, 0, 0};
  p->nact = p->cell == NN_RNN_CELL_RNN ? 1 : p->cell == NN_RNN_CELL_GRU ? 2 : 3;
  const nn_attr *acts = nn_attr_get(n, "activations");
  int na, nb;
  const float *al = nn_attr_floats(n, "activation_alpha", &na);
  const float *be = nn_attr_floats(n, "activation_beta", &nb);
  int want = p->nact * p->D;
  if (acts && acts->type == NN_ATTR_STRINGS && acts->n > 0) {
    if (acts->n != want)
      return nn_fail(c, NN_ERR_INVALID_MODEL, "activations lists %d functions, expected %d",
                     acts->n, want);
    int ai = 0, bi = 0;
    for (int k = 0; k < want; k++) {
      int kind = -1;
      for (int j = 0; names[j]; j++)
        if (strcasecmp(acts->strings[k], names[j]) == 0)
          kind = j;
      if (kind < 0)
        return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported activation '%s'", acts->strings[k]);
      p->act[k].kind = kind;
      /* alpha/beta lists are consumed in order by the functions that use them */
      bool ua = def_alpha[kind] != 0.0f;
      bool ub = kind == NN_RNN_ACT_AFFINE || kind == NN_RNN_ACT_SCALEDTANH ||
                kind == NN_RNN_ACT_HARDSIGMOID;
      p->act[k].alpha = ua && al && ai < na ? al[ai++] : def_alpha[kind];
      p->act[k].beta = ub && be && bi < nb ? be[bi++] : def_beta[kind];
    }
  } else {
    for (int k = 0; k < want; k++) {
      p->act[k].kind = defaults[p->cell][k % p->nact];
      p->act[k].alpha = def_alpha[p->act[k].kind];
      p->act[k].beta = def_beta[p->act[k].kind];
    }
  }
  return NN_OK;
}

nn_status nn_rnn_params_init(nn_ctx *c, const nn_node *n, int cell, nn_rnn_params *p) {
  static const char *const dirs[] = {"forward", "reverse", "bidirectional", NULL};
  const nn_value *x = nn_op_in(n, 0), *w = nn_op_in(n, 1), *r = nn_op_in(n, 2);
  const nn_value *b = nn_op_in(n, 3), *sl = nn_op_in(n, 4), *h0 = nn_op_in(n, 5);
  const nn_value *c0 = cell == NN_RNN_CELL_LSTM ? nn_op_in(n, 6) : NULL;
  const nn_value *pp = cell == NN_RNN_CELL_LSTM ? nn_op_in(n, 7) : NULL;
  memset(p, 0, sizeof *p);
  if (!x || !w || !r)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "X, W and R are required");
  nn_dtype dt = x->dtype;
  if (!nn_dtype_is_float(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  p->cell = cell;
  p->G = cell == NN_RNN_CELL_RNN ? 1 : cell == NN_RNN_CELL_GRU ? 3 : 4;
  int dir;
  nn_status st = nn_op_attr_choice(c, n, "direction", "forward", dirs, &dir);
  if (st != NN_OK)
    return st;
  p->D = dir == 2 ? 2 : 1;
  p->reverse_only = dir == 1;
  int64_t layout = n->version >= 14 ? nn_attr_int(n, "layout", 0) : 0;
  if (layout != 0 && layout != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported layout %lld", (long long)layout);
  p->layout1 = layout == 1;
  p->H = nn_attr_int(n, "hidden_size", 0);
  const nn_attr *ca = nn_attr_get(n, "clip");
  p->clip = ca ? nn_attr_float(n, "clip", 0.0f) : 0.0f;
  if (ca && !(p->clip > 0.0f))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "clip must be positive");
  p->lbr = cell == NN_RNN_CELL_GRU && nn_attr_int(n, "linear_before_reset", 0) != 0;
  p->input_forget = cell == NN_RNN_CELL_LSTM && nn_attr_int(n, "input_forget", 0) != 0;
  if (x->rank != 3)
    return nn_fail(c, NN_ERR_SHAPE, "X must be 3-D");
  p->S = x->dims[p->layout1 ? 1 : 0];
  p->B = x->dims[p->layout1 ? 0 : 1];
  p->I = x->dims[2];
  if (p->H <= 0 && w->rank == 3)
    p->H = w->dims[1] / p->G;
  /* R is (D, G*H, H): a real tensor bounds H, so anything outside is an
   * attribute lying (or W is not 3-D), and G*H or 3*H below would overflow */
  if (p->H <= 0 || p->H > ((int64_t)1 << 31))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "hidden_size %lld is out of range (W must be 3-D)",
                   (long long)p->H);
  int64_t GH = p->G * p->H;
  if (w->dtype != dt || r->dtype != dt || w->rank != 3 || w->dims[0] != p->D ||
      w->dims[1] != GH || w->dims[2] != p->I || r->rank != 3 || r->dims[0] != p->D ||
      r->dims[1] != GH || r->dims[2] != p->H)
    return nn_fail(c, NN_ERR_SHAPE, "W must be (%d, %lld, %lld) and R (%d, %lld, %lld)", p->D,
                   (long long)GH, (long long)p->I, p->D, (long long)GH, (long long)p->H);
  if (b && (b->dtype != dt || b->rank != 2 || b->dims[0] != p->D || b->dims[1] != 2 * GH))
    return nn_fail(c, NN_ERR_SHAPE, "B must be (%d, %lld)", p->D, (long long)(2 * GH));
  if (sl && (!rnn_is_index(sl->dtype) || sl->rank != 1 || sl->dims[0] != p->B))
    return nn_fail(c, NN_ERR_SHAPE, "sequence_lens must be int (batch)");
  int64_t hd[3] = {p->D, p->B, p->H};
  if (p->layout1)
    hd[0] = p->B, hd[1] = p->D;
  if (h0 && (h0->dtype != dt || h0->rank != 3 || memcmp(h0->dims, hd, sizeof hd)))
    return nn_fail(c, NN_ERR_SHAPE, "initial_h has the wrong shape");
  if (c0 && (c0->dtype != dt || c0->rank != 3 || memcmp(c0->dims, hd, sizeof hd)))
    return nn_fail(c, NN_ERR_SHAPE, "initial_c has the wrong shape");
  if (pp && (pp->dtype != dt || pp->rank != 2 || pp->dims[0] != p->D ||
             pp->dims[1] != 3 * p->H))
    return nn_fail(c, NN_ERR_SHAPE, "P must be (%d, %lld)", p->D, (long long)(3 * p->H));
  return rnn_acts(c, n, p);
}

/* ---- shape and dtype inference ---------------------------------------------- */

/* Y, Y_h and (LSTM) Y_c, all of X's type; Y_c's shape is Y_h's. */
static nn_status rnn_infer_cell(nn_ctx *c, nn_node *n, int cell) {
  nn_rnn_params p;
  nn_status st = nn_rnn_params_init(c, n, cell, &p);
  if (st != NN_OK)
    return st;
  nn_dtype dt = n->x[0]->dtype;
  int64_t yd[4] = {p.S, p.D, p.B, p.H}, hd[3] = {p.D, p.B, p.H};
  if (p.layout1) {
    yd[0] = p.B, yd[1] = p.S, yd[2] = p.D;
    hd[0] = p.B, hd[1] = p.D;
  }
  if ((st = nn_set_output(c, nn_op_out(n, 0), dt, 4, yd)) != NN_OK ||
      (st = nn_set_output(c, nn_op_out(n, 1), dt, 3, hd)) != NN_OK)
    return st;
  if (cell == NN_RNN_CELL_LSTM)
    return nn_set_output(c, nn_op_out(n, 2), dt, 3, hd);
  return NN_OK;
}

static nn_status rnn_infer(nn_ctx *c, nn_node *n) {
  return rnn_infer_cell(c, n, NN_RNN_CELL_RNN);
}
static nn_status gru_infer(nn_ctx *c, nn_node *n) {
  return rnn_infer_cell(c, n, NN_RNN_CELL_GRU);
}
static nn_status lstm_infer(nn_ctx *c, nn_node *n) {
  return rnn_infer_cell(c, n, NN_RNN_CELL_LSTM);
}

/* LinearAttention: query, key, value packed (B, T, H*D) of one float type,
 * q_num_heads a multiple of kv_num_heads; decay, beta and erase_gate present
 * exactly as the update_rule uses them; past_state (B, Hkv, dk, dv) of any
 * float type, which present_state keeps.  Y is (B, T, Hq*dv). */
enum { LA_LINEAR, LA_GATED, LA_DELTA, LA_GATED_DELTA };

static nn_status la_infer(nn_ctx *c, nn_node *n) {
  static const char *const rules[] = {"linear", "gated", "delta", "gated_delta", NULL};
  const nn_value *q = nn_op_in(n, NN_LA_Q), *k = nn_op_in(n, NN_LA_K), *v = nn_op_in(n, NN_LA_V);
  const nn_value *past = nn_op_in(n, NN_LA_PAST), *decay = nn_op_in(n, NN_LA_DECAY);
  const nn_value *beta = nn_op_in(n, NN_LA_BETA), *erase = nn_op_in(n, NN_LA_ERASE);
  if (!q || !k || !v)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "query, key and value are required");
  nn_dtype dt = q->dtype;
  if (!nn_dtype_is_float(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  if (k->dtype != dt || v->dtype != dt)
    return nn_fail(c, NN_ERR_DTYPE, "query, key and value types differ");
  int rule;
  nn_status st = nn_op_attr_choice(c, n, "update_rule", "gated_delta", rules, &rule);
  if (st != NN_OK)
    return st;
  int64_t Hq = nn_attr_int(n, "q_num_heads", 0), Hkv = nn_attr_int(n, "kv_num_heads", 0);
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv)
    return nn_fail(c, NN_ERR_INVALID_MODEL,
                   "q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)",
                   (long long)Hq, (long long)Hkv);
  if (q->rank != 3 || k->rank != 3 || v->rank != 3)
    return nn_fail(c, NN_ERR_SHAPE, "query, key and value must be 3-D (B, T, H*D)");
  int64_t B = q->dims[0], T = q->dims[1];
  if (k->dims[0] != B || v->dims[0] != B || k->dims[1] != T || v->dims[1] != T)
    return nn_fail(c, NN_ERR_SHAPE, "query, key and value batch/sequence differ");
  if (q->dims[2] % Hq || k->dims[2] % Hkv || v->dims[2] % Hkv)
    return nn_fail(c, NN_ERR_SHAPE, "hidden sizes are not multiples of the head counts");
  int64_t dk = q->dims[2] / Hq, dv = v->dims[2] / Hkv;
  if (k->dims[2] / Hkv != dk)
    return nn_fail(c, NN_ERR_SHAPE, "query and key head sizes differ");
  bool gating = rule == LA_GATED || rule == LA_GATED_DELTA;
  bool delta = rule == LA_DELTA || rule == LA_GATED_DELTA;
  if (gating != (decay != NULL))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "update_rule '%s' %s the decay input", rules[rule],
                   gating ? "requires" : "forbids");
  if (delta != (beta != NULL))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "update_rule '%s' %s the beta input", rules[rule],
                   delta ? "requires" : "forbids");
  if (erase && !delta)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "update_rule '%s' forbids erase_gate", rules[rule]);
  if (decay && (decay->dtype != dt || decay->rank != 3 || decay->dims[0] != B ||
                decay->dims[1] != T || (decay->dims[2] != Hkv && decay->dims[2] != Hkv * dk)))
    return nn_fail(c, NN_ERR_SHAPE, "decay must be (B, T, kv_heads) or (B, T, kv_heads*d_k)");
  if (beta && (beta->dtype != dt || beta->rank != 3 || beta->dims[0] != B ||
               beta->dims[1] != T || (beta->dims[2] != Hkv && beta->dims[2] != 1)))
    return nn_fail(c, NN_ERR_SHAPE, "beta must be (B, T, kv_heads) or (B, T, 1)");
  if (erase && (erase->dtype != dt || erase->rank != 3 || erase->dims[0] != B ||
                erase->dims[1] != T || erase->dims[2] != Hkv * dk))
    return nn_fail(c, NN_ERR_SHAPE, "erase_gate must be (B, T, kv_heads*d_k)");
  int64_t sd[4] = {B, Hkv, dk, dv};
  nn_dtype sdt = dt;
  if (past) {
    if (!nn_dtype_is_float(past->dtype) || past->rank != 4 || memcmp(past->dims, sd, sizeof sd))
      return nn_fail(c, NN_ERR_SHAPE, "past_state must be (B, kv_heads, d_k, d_v)");
    sdt = past->dtype;
  }
  int64_t od[3] = {B, T, Hq * dv};
  if ((st = nn_set_output(c, nn_op_out(n, 0), dt, 3, od)) != NN_OK)
    return st;
  return nn_set_output(c, nn_op_out(n, 1), sdt, 4, sd);
}

/* CausalConvWithState: input (B, C, L) of a float type, a depthwise weight
 * (C, 1, k), bias (C), past_state (B, C, k-1); Y is the input's shape and
 * present_state past_state's. */
static nn_status ccs_infer(nn_ctx *c, nn_node *n) {
  static const char *const acts[] = {"none", "silu", "swish", NULL};
  const nn_value *x = nn_op_in(n, 0), *w = nn_op_in(n, 1), *bias = nn_op_in(n, 2);
  const nn_value *past = nn_op_in(n, 3);
  if (!x || !w)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "input and weight are required");
  nn_dtype dt = x->dtype;
  if (!nn_dtype_is_float(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  int act;
  nn_status st = nn_op_attr_choice(c, n, "activation", "none", acts, &act);
  if (st != NN_OK)
    return st;
  if (x->rank != 3 || w->rank != 3 || w->dtype != dt || w->dims[0] != x->dims[1] ||
      w->dims[1] != 1 || w->dims[2] < 1)
    return nn_fail(c, NN_ERR_SHAPE, "expects input (B, C, L) and weight (C, 1, k >= 1)");
  int64_t B = x->dims[0], C = x->dims[1], k = w->dims[2];
  if (bias && (bias->dtype != dt || bias->rank != 1 || bias->dims[0] != C))
    return nn_fail(c, NN_ERR_SHAPE, "bias must be (C)");
  int64_t sd[3] = {B, C, k - 1};
  if (past && (past->dtype != dt || past->rank != 3 || memcmp(past->dims, sd, sizeof sd)))
    return nn_fail(c, NN_ERR_SHAPE, "past_state must be (B, C, k-1)");
  if ((st = nn_set_output(c, nn_op_out(n, 0), dt, 3, x->dims)) != NN_OK)
    return st;
  return nn_set_output(c, nn_op_out(n, 1), dt, 3, sd);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference.  RNN, GRU and LSTM list 7 and 14 (layout); their revision 22
 * only widens the types and needs no entry. */
const nn_op_def nn_ops_recurrent[] = {
  {.name = "LinearAttention", .versions = {27}, .infer = la_infer},
  {.name = "CausalConvWithState", .versions = {27}, .infer = ccs_infer},
  {.name = "RNN", .versions = {7, 14}, .infer = rnn_infer},
  {.name = "GRU", .versions = {7, 14}, .infer = gru_infer},
  {.name = "LSTM", .versions = {7, 14}, .infer = lstm_infer},
  {0},
};
