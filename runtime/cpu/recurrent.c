/* recurrent.c - CPU kernels of the recurrent sequence ops: RNN, GRU and LSTM
 * (7/14; the revision 22 is type-only and needs no entry), and
 * LinearAttention and CausalConvWithState (27), the stateful
 * sequence-mixing blocks of recurrent / hybrid language models.  All of
 * them carry a state along the sequence. */
#include <strings.h>

#include "cpu/kernel_util.h"

/* ---- RNN, GRU, LSTM -------------------------------------------------------------
 * One kernel for the three cells: G gates of hidden size H per direction
 * (RNN 1; GRU 3 in order z, r, h; LSTM 4 in order i, o, f, c).  Batch rows
 * are independent, so each runs its whole sequence with a small state in the
 * workspace.  layout 0: X (S, B, I), Y (S, D, B, H), Y_h (D, B, H);
 * layout 1: X (B, S, I), Y (B, S, D, H), Y_h (B, D, H). */

enum { RNN_CELL_RNN, RNN_CELL_GRU, RNN_CELL_LSTM };
enum {
  ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKYRELU, ACT_THRESHOLDEDRELU,
  ACT_SCALEDTANH, ACT_HARDSIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS
};

typedef struct rnn_act {
  int kind;
  float alpha, beta;
} rnn_act;

typedef struct rnn_params {
  int cell, G, D, nact;
  int64_t S, B, I, H;
  bool layout1, reverse_only, lbr, input_forget;
  float clip;
  rnn_act act[6];   /* per direction: f, g, h */
} rnn_params;

static float rnn_apply(const rnn_act *a, float x) {
  switch (a->kind) {
  case ACT_RELU: return x > 0.0f ? x : 0.0f;
  case ACT_TANH: return tanhf(x);
  case ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case ACT_AFFINE: return a->alpha * x + a->beta;
  case ACT_LEAKYRELU: return x >= 0.0f ? x : a->alpha * x;
  case ACT_THRESHOLDEDRELU: return x > a->alpha ? x : 0.0f;
  case ACT_SCALEDTANH: return a->alpha * tanhf(a->beta * x);
  case ACT_HARDSIGMOID: {
    float v = a->alpha * x + a->beta;
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
  }
  case ACT_ELU: return x >= 0.0f ? x : a->alpha * (expf(x) - 1.0f);
  case ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
  case ACT_SOFTPLUS: return logf(1.0f + expf(x));
  default: return x;
  }
}

static nn_status rnn_acts(nn_ctx *c, const nn_node *n, rnn_params *p) {
  static const char *const names[] = {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
                                      "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
                                      "Softsign", "Softplus", NULL};
  static const int defaults[3][3] = {{ACT_TANH}, {ACT_SIGMOID, ACT_TANH},
                                     {ACT_SIGMOID, ACT_TANH, ACT_TANH}};
  /* alpha/beta defaults of the activations that take them (ONNX values) */
  static const float def_alpha[] = {0, 0, 0, 1.0f, 0.01f, 1.0f, 1.0f, 0.2f, 1.0f, 0, 0};
  static const float def_beta[] = {0, 0, 0, 0.0f, 0, 0, 1.0f, 0.5f, 0, 0, 0};
  p->nact = p->cell == RNN_CELL_RNN ? 1 : p->cell == RNN_CELL_GRU ? 2 : 3;
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
      bool ub = kind == ACT_AFFINE || kind == ACT_SCALEDTANH || kind == ACT_HARDSIGMOID;
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

static nn_status rnn_prepare_cell(nn_ctx *c, nn_node *n, int cell) {
  static const char *const dirs[] = {"forward", "reverse", "bidirectional", NULL};
  nn_value *x = n->x[0], *w = ku_in(n, 1), *r = ku_in(n, 2), *b = ku_in(n, 3);
  nn_value *sl = ku_in(n, 4), *h0 = ku_in(n, 5);
  nn_value *c0 = cell == RNN_CELL_LSTM ? ku_in(n, 6) : NULL;
  nn_value *pp_in = cell == RNN_CELL_LSTM ? ku_in(n, 7) : NULL;
  if (!w || !r)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "X, W and R are required");
  nn_dtype dt = x->dtype;
  if (!ku_is_real(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  rnn_params p;
  memset(&p, 0, sizeof p);
  p.cell = cell;
  p.G = cell == RNN_CELL_RNN ? 1 : cell == RNN_CELL_GRU ? 3 : 4;
  int dir;
  nn_status st = ku_attr_choice(c, n, "direction", "forward", dirs, &dir);
  if (st != NN_OK)
    return st;
  p.D = dir == 2 ? 2 : 1;
  p.reverse_only = dir == 1;
  int64_t layout = n->version >= 14 ? nn_attr_int(n, "layout", 0) : 0;
  if (layout != 0 && layout != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported layout %lld", (long long)layout);
  p.layout1 = layout == 1;
  p.H = nn_attr_int(n, "hidden_size", 0);
  const nn_attr *ca = nn_attr_get(n, "clip");
  p.clip = ca ? nn_attr_float(n, "clip", 0.0f) : 0.0f;
  if (ca && !(p.clip > 0.0f))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "clip must be positive");
  p.lbr = cell == RNN_CELL_GRU && nn_attr_int(n, "linear_before_reset", 0) != 0;
  p.input_forget = cell == RNN_CELL_LSTM && nn_attr_int(n, "input_forget", 0) != 0;
  if (x->rank != 3)
    return nn_fail(c, NN_ERR_SHAPE, "X must be 3-D");
  p.S = x->dims[p.layout1 ? 1 : 0];
  p.B = x->dims[p.layout1 ? 0 : 1];
  p.I = x->dims[2];
  if (p.H <= 0 && w->rank == 3)
    p.H = w->dims[1] / p.G;
  /* R is (D, G*H, H): a real tensor bounds H, so anything outside is an
   * attribute lying (or W is not 3-D), and G*H or 3*H below would overflow */
  if (p.H <= 0 || p.H > ((int64_t)1 << 31))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "hidden_size %lld is out of range (W must be 3-D)",
                   (long long)p.H);
  int64_t GH = p.G * p.H;
  if (p.H <= 0 || w->dtype != dt || r->dtype != dt || w->rank != 3 || w->dims[0] != p.D ||
      w->dims[1] != GH || w->dims[2] != p.I || r->rank != 3 || r->dims[0] != p.D ||
      r->dims[1] != GH || r->dims[2] != p.H)
    return nn_fail(c, NN_ERR_SHAPE, "W must be (%d, %lld, %lld) and R (%d, %lld, %lld)", p.D,
                   (long long)GH, (long long)p.I, p.D, (long long)GH, (long long)p.H);
  if (b && (b->dtype != dt || b->rank != 2 || b->dims[0] != p.D || b->dims[1] != 2 * GH))
    return nn_fail(c, NN_ERR_SHAPE, "B must be (%d, %lld)", p.D, (long long)(2 * GH));
  if (sl && (!ku_is_index(sl->dtype) || sl->rank != 1 || sl->dims[0] != p.B))
    return nn_fail(c, NN_ERR_SHAPE, "sequence_lens must be int (batch)");
  int64_t hd[3] = {p.D, p.B, p.H};
  if (p.layout1)
    hd[0] = p.B, hd[1] = p.D;
  if (h0 && (h0->dtype != dt || h0->rank != 3 || memcmp(h0->dims, hd, sizeof hd)))
    return nn_fail(c, NN_ERR_SHAPE, "initial_h has the wrong shape");
  if (c0 && (c0->dtype != dt || c0->rank != 3 || memcmp(c0->dims, hd, sizeof hd)))
    return nn_fail(c, NN_ERR_SHAPE, "initial_c has the wrong shape");
  if (pp_in && (pp_in->dtype != dt || pp_in->rank != 2 || pp_in->dims[0] != p.D ||
                pp_in->dims[1] != 3 * p.H))
    return nn_fail(c, NN_ERR_SHAPE, "P must be (%d, %lld)", p.D, (long long)(3 * p.H));
  if ((st = rnn_acts(c, n, &p)) != NN_OK)
    return st;
  int64_t yd[4] = {p.S, p.D, p.B, p.H};
  if (p.layout1)
    yd[0] = p.B, yd[1] = p.S, yd[2] = p.D;
  if (ku_out(n, 0) && (st = nn_set_output(c, n->y[0], dt, 4, yd)) != NN_OK)
    return st;
  if (ku_out(n, 1) && (st = nn_set_output(c, n->y[1], dt, 3, hd)) != NN_OK)
    return st;
  if (cell == RNN_CELL_LSTM && ku_out(n, 2) && (st = nn_set_output(c, n->y[2], dt, 3, hd)))
    return st;
  /* h, c, previous h, gates */
  n->ws_bytes = (size_t)(3 * p.H + GH) * sizeof(float);
  rnn_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static inline float rnn_clip(const rnn_params *p, float v) {
  if (p->clip > 0.0f)
    v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
  return v;
}

static nn_status rnn_run(nn_ctx *c, nn_node *n) {
  const rnn_params *p = n->priv;
  nn_value *x = n->x[0], *w = n->x[1], *r = n->x[2], *b = ku_in(n, 3);
  nn_value *sl = ku_in(n, 4), *h0 = ku_in(n, 5);
  bool lstm = p->cell == RNN_CELL_LSTM;
  nn_value *c0 = lstm ? ku_in(n, 6) : NULL, *P = lstm ? ku_in(n, 7) : NULL;
  nn_value *Y = ku_out(n, 0), *Yh = ku_out(n, 1), *Yc = lstm ? ku_out(n, 2) : NULL;
  nn_dtype dt = x->dtype;
  int64_t H = p->H, I = p->I, GH = p->G * H;
  float *h = n->ws, *cs = h + H, *hp = cs + H, *g = hp + H;
  if (Y)
    for (int64_t i = 0; i < Y->numel; i++)
      ku_stf(Y->data, dt, i, 0.0f);
  for (int d = 0; d < p->D; d++) {
    bool rev = p->reverse_only || d == 1;
    const rnn_act *af = &p->act[d * p->nact], *ag = af + 1, *ah = af + 2;
    int64_t wo = (int64_t)d * GH * I, ro = (int64_t)d * GH * H, bo = (int64_t)d * 2 * GH;
    for (int64_t bt = 0; bt < p->B; bt++) {
      int64_t len = sl ? nn_value_get_int(sl, bt) : p->S;
      if (len < 0 || len > p->S)
        return nn_fail(c, NN_ERR_RUNTIME, "sequence_lens[%lld] = %lld outside [0, %lld]",
                       (long long)bt, (long long)len, (long long)p->S);
      int64_t ho = p->layout1 ? (bt * p->D + d) * H : (d * p->B + bt) * H;
      for (int64_t k = 0; k < H; k++) {
        h[k] = h0 ? ku_ldf(h0->data, dt, ho + k) : 0.0f;
        cs[k] = c0 ? ku_ldf(c0->data, dt, ho + k) : 0.0f;
      }
      for (int64_t step = 0; step < len; step++) {
        int64_t t = rev ? len - 1 - step : step;
        int64_t xo = (p->layout1 ? bt * p->S + t : t * p->B + bt) * I;
        memcpy(hp, h, (size_t)H * sizeof(float));
        for (int64_t j = 0; j < GH; j++) {
          float a = b ? ku_ldf(b->data, dt, bo + j) : 0.0f;
          for (int64_t i = 0; i < I; i++)
            a += ku_ldf(x->data, dt, xo + i) * ku_ldf(w->data, dt, wo + j * I + i);
          /* GRU's candidate gate mixes the recurrence after the reset gate */
          bool gru_h = p->cell == RNN_CELL_GRU && j >= 2 * H;
          if (!gru_h) {
            a += b ? ku_ldf(b->data, dt, bo + GH + j) : 0.0f;
            for (int64_t k = 0; k < H; k++)
              a += hp[k] * ku_ldf(r->data, dt, ro + j * H + k);
          }
          g[j] = a;
        }
        if (p->cell == RNN_CELL_RNN) {
          for (int64_t k = 0; k < H; k++)
            h[k] = rnn_apply(af, rnn_clip(p, g[k]));
        } else if (p->cell == RNN_CELL_GRU) {
          float *z = g, *rg = g + H, *hh = g + 2 * H;
          for (int64_t k = 0; k < 2 * H; k++)
            g[k] = rnn_apply(af, rnn_clip(p, g[k]));
          for (int64_t k = 0; k < H; k++) {
            int64_t j = 2 * H + k;
            float rb = b ? ku_ldf(b->data, dt, bo + GH + j) : 0.0f;
            float acc = 0.0f;
            if (p->lbr) {
              for (int64_t m = 0; m < H; m++)
                acc += hp[m] * ku_ldf(r->data, dt, ro + j * H + m);
              hh[k] += rg[k] * (acc + rb);
            } else {
              for (int64_t m = 0; m < H; m++)
                acc += rg[m] * hp[m] * ku_ldf(r->data, dt, ro + j * H + m);
              hh[k] += acc + rb;
            }
          }
          for (int64_t k = 0; k < H; k++) {
            float cand = rnn_apply(ag, rnn_clip(p, hh[k]));
            h[k] = (1.0f - z[k]) * cand + z[k] * hp[k];
          }
        } else {
          float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
          for (int64_t k = 0; k < H; k++) {
            float pi = P ? ku_ldf(P->data, dt, (int64_t)d * 3 * H + k) : 0.0f;
            float po = P ? ku_ldf(P->data, dt, (int64_t)d * 3 * H + H + k) : 0.0f;
            float pf = P ? ku_ldf(P->data, dt, (int64_t)d * 3 * H + 2 * H + k) : 0.0f;
            float it = rnn_apply(af, rnn_clip(p, gi[k] + pi * cs[k]));
            float ft = p->input_forget ? 1.0f - it : rnn_apply(af, rnn_clip(p, gf[k] + pf * cs[k]));
            float ct = rnn_apply(ag, rnn_clip(p, gc[k]));
            cs[k] = ft * cs[k] + it * ct;
            float ot = rnn_apply(af, rnn_clip(p, go[k] + po * cs[k]));
            h[k] = ot * rnn_apply(ah, cs[k]);
          }
        }
        if (Y) {
          int64_t yo = p->layout1 ? ((bt * p->S + t) * p->D + d) * H
                                  : ((t * p->D + d) * p->B + bt) * H;
          for (int64_t k = 0; k < H; k++)
            ku_stf(Y->data, dt, yo + k, h[k]);
        }
      }
      for (int64_t k = 0; k < H; k++) {
        if (Yh)
          ku_stf(Yh->data, dt, ho + k, h[k]);
        if (Yc)
          ku_stf(Yc->data, dt, ho + k, cs[k]);
      }
    }
  }
  return NN_OK;
}

static nn_status rnn_prepare(nn_ctx *c, nn_node *n) {
  return rnn_prepare_cell(c, n, RNN_CELL_RNN);
}
static nn_status gru_prepare(nn_ctx *c, nn_node *n) {
  return rnn_prepare_cell(c, n, RNN_CELL_GRU);
}
static nn_status lstm_prepare(nn_ctx *c, nn_node *n) {
  return rnn_prepare_cell(c, n, RNN_CELL_LSTM);
}

/* ---- LinearAttention -----------------------------------------------------------
 * Per (batch, kv head) a dk x dv float state runs through the sequence; the
 * query heads of a group all read the same state.  Inputs are packed 3-D
 * (B, T, H*D); state is (B, Hkv, dk, dv). */

enum { LA_Q, LA_K, LA_V, LA_PAST, LA_DECAY, LA_BETA, LA_ERASE };
enum { LA_LINEAR, LA_GATED, LA_DELTA, LA_GATED_DELTA };

typedef struct la_params {
  int64_t B, T, Hq, Hkv, dk, dv;
  int rule;
  bool decay_per_key;   /* decay (B, T, Hkv*dk) rather than (B, T, Hkv) */
  int64_t beta_heads;   /* beta last dim: Hkv or 1 */
  float scale;
  int nslots;
  size_t slot_floats;
} la_params;

static nn_status la_prepare(nn_ctx *c, nn_node *n) {
  static const char *const rules[] = {"linear", "gated", "delta", "gated_delta", NULL};
  nn_value *q = n->x[LA_Q], *k = ku_in(n, LA_K), *v = ku_in(n, LA_V);
  nn_value *past = ku_in(n, LA_PAST), *decay = ku_in(n, LA_DECAY);
  nn_value *beta = ku_in(n, LA_BETA), *erase = ku_in(n, LA_ERASE);
  if (!k || !v)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "query, key and value are required");
  nn_dtype dt = q->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16 && dt != NN_DTYPE_BFLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  if (k->dtype != dt || v->dtype != dt)
    return nn_fail(c, NN_ERR_DTYPE, "query, key and value types differ");
  la_params p;
  memset(&p, 0, sizeof p);
  nn_status st = ku_attr_choice(c, n, "update_rule", "gated_delta", rules, &p.rule);
  if (st != NN_OK)
    return st;
  p.Hq = nn_attr_int(n, "q_num_heads", 0);
  p.Hkv = nn_attr_int(n, "kv_num_heads", 0);
  if (p.Hq <= 0 || p.Hkv <= 0 || p.Hq % p.Hkv)
    return nn_fail(c, NN_ERR_INVALID_MODEL,
                   "q_num_heads (%lld) must be a positive multiple of kv_num_heads (%lld)",
                   (long long)p.Hq, (long long)p.Hkv);
  if (q->rank != 3 || k->rank != 3 || v->rank != 3)
    return nn_fail(c, NN_ERR_SHAPE, "query, key and value must be 3-D (B, T, H*D)");
  p.B = q->dims[0];
  p.T = q->dims[1];
  if (k->dims[0] != p.B || v->dims[0] != p.B || k->dims[1] != p.T || v->dims[1] != p.T)
    return nn_fail(c, NN_ERR_SHAPE, "query, key and value batch/sequence differ");
  if (q->dims[2] % p.Hq || k->dims[2] % p.Hkv || v->dims[2] % p.Hkv)
    return nn_fail(c, NN_ERR_SHAPE, "hidden sizes are not multiples of the head counts");
  p.dk = q->dims[2] / p.Hq;
  p.dv = v->dims[2] / p.Hkv;
  if (k->dims[2] / p.Hkv != p.dk)
    return nn_fail(c, NN_ERR_SHAPE, "query and key head sizes differ");
  bool gating = p.rule == LA_GATED || p.rule == LA_GATED_DELTA;
  bool delta = p.rule == LA_DELTA || p.rule == LA_GATED_DELTA;
  if (gating != (decay != NULL))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "update_rule '%s' %s the decay input",
                   rules[p.rule], gating ? "requires" : "forbids");
  if (delta != (beta != NULL))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "update_rule '%s' %s the beta input",
                   rules[p.rule], delta ? "requires" : "forbids");
  if (erase && !delta)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "update_rule '%s' forbids erase_gate", rules[p.rule]);
  if (decay) {
    if (decay->dtype != dt || decay->rank != 3 || decay->dims[0] != p.B || decay->dims[1] != p.T ||
        (decay->dims[2] != p.Hkv && decay->dims[2] != p.Hkv * p.dk))
      return nn_fail(c, NN_ERR_SHAPE, "decay must be (B, T, kv_heads) or (B, T, kv_heads*d_k)");
    p.decay_per_key = decay->dims[2] == p.Hkv * p.dk && p.dk != 1;
  }
  if (beta) {
    if (beta->dtype != dt || beta->rank != 3 || beta->dims[0] != p.B || beta->dims[1] != p.T ||
        (beta->dims[2] != p.Hkv && beta->dims[2] != 1))
      return nn_fail(c, NN_ERR_SHAPE, "beta must be (B, T, kv_heads) or (B, T, 1)");
    p.beta_heads = beta->dims[2];
  }
  if (erase && (erase->dtype != dt || erase->rank != 3 || erase->dims[0] != p.B ||
                erase->dims[1] != p.T || erase->dims[2] != p.Hkv * p.dk))
    return nn_fail(c, NN_ERR_SHAPE, "erase_gate must be (B, T, kv_heads*d_k)");
  int64_t sd[4] = {p.B, p.Hkv, p.dk, p.dv};
  nn_dtype sdt = dt;
  if (past) {
    if (!ku_is_real(past->dtype) || past->rank != 4 || memcmp(past->dims, sd, sizeof sd))
      return nn_fail(c, NN_ERR_SHAPE, "past_state must be (B, kv_heads, d_k, d_v)");
    sdt = past->dtype;
  }
  float sc = nn_attr_float(n, "scale", 0.0f);
  p.scale = sc != 0.0f ? sc : (float)(1.0 / sqrt((double)(p.dk > 0 ? p.dk : 1)));
  int64_t od[3] = {p.B, p.T, p.Hq * p.dv};
  if ((st = nn_set_output(c, n->y[0], dt, 3, od)) != NN_OK)
    return st;
  if (ku_out(n, 1) && (st = nn_set_output(c, n->y[1], sdt, 4, sd)) != NN_OK)
    return st;
  /* per slot: state, corrected value, key row, query row */
  p.nslots = ku_slots(c);
  p.slot_floats = nn_align_up((size_t)(p.dk * p.dv + p.dv + 2 * p.dk), NN_ALIGN / sizeof(float));
  if (nn_mul_overflow_size(p.slot_floats * sizeof(float), (size_t)p.nslots, &n->ws_bytes))
    return nn_fail(c, NN_ERR_LIMIT, "workspace too large");
  la_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

typedef struct la_job {
  const la_params *p;
  nn_node *n;
  float *ws;
} la_job;

static void la_range(void *arg, int64_t begin, int64_t end) {
  la_job *job = arg;
  const la_params *p = job->p;
  nn_node *n = job->n;
  nn_value *Q = n->x[LA_Q], *K = n->x[LA_K], *V = n->x[LA_V];
  nn_value *past = ku_in(n, LA_PAST), *decay = ku_in(n, LA_DECAY);
  nn_value *beta = ku_in(n, LA_BETA), *erase = ku_in(n, LA_ERASE);
  nn_value *Y = n->y[0], *present = ku_out(n, 1);
  nn_dtype dt = Q->dtype;
  int64_t dk = p->dk, dv = p->dv, group = p->Hq / p->Hkv;
  int64_t units = p->B * p->Hkv;
  for (int64_t slot = begin; slot < end; slot++) {
    float *S = job->ws + (size_t)slot * p->slot_floats;
    float *vt = S + dk * dv, *kt = vt + dv, *qt = kt + dk;
    for (int64_t u = units * slot / p->nslots; u < units * (slot + 1) / p->nslots; u++) {
      int64_t b = u / p->Hkv, h = u % p->Hkv;
      for (int64_t i = 0; i < dk * dv; i++)
        S[i] = past ? ku_ldf(past->data, past->dtype, u * dk * dv + i) : 0.0f;
      for (int64_t t = 0; t < p->T; t++) {
        int64_t bt = b * p->T + t;
        for (int64_t d = 0; d < dk; d++)
          kt[d] = ku_ldf(K->data, dt, (bt * p->Hkv + h) * dk + d);
        for (int64_t m = 0; m < dv; m++)
          vt[m] = ku_ldf(V->data, dt, (bt * p->Hkv + h) * dv + m);
        if (decay) {
          for (int64_t d = 0; d < dk; d++) {
            int64_t gi = p->decay_per_key ? (bt * p->Hkv + h) * dk + d : bt * p->Hkv + h;
            float g = expf(ku_ldf(decay->data, dt, gi));
            for (int64_t m = 0; m < dv; m++)
              S[d * dv + m] *= g;
          }
        }
        if (beta) {
          float bv = ku_ldf(beta->data, dt, bt * p->beta_heads + (p->beta_heads == 1 ? 0 : h));
          for (int64_t m = 0; m < dv; m++) {
            float r = 0.0f;
            for (int64_t d = 0; d < dk; d++) {
              float ke = kt[d];
              if (erase)
                ke *= ku_ldf(erase->data, dt, (bt * p->Hkv + h) * dk + d);
              r += S[d * dv + m] * ke;
            }
            vt[m] = bv * (vt[m] - r);
          }
        }
        for (int64_t d = 0; d < dk; d++)
          for (int64_t m = 0; m < dv; m++)
            S[d * dv + m] += kt[d] * vt[m];
        for (int64_t hq = h * group; hq < (h + 1) * group; hq++) {
          for (int64_t d = 0; d < dk; d++)
            qt[d] = ku_ldf(Q->data, dt, (bt * p->Hq + hq) * dk + d);
          for (int64_t m = 0; m < dv; m++) {
            float o = 0.0f;
            for (int64_t d = 0; d < dk; d++)
              o += qt[d] * S[d * dv + m];
            ku_stf(Y->data, dt, (bt * p->Hq + hq) * dv + m, p->scale * o);
          }
        }
      }
      if (present)
        for (int64_t i = 0; i < dk * dv; i++)
          ku_stf(present->data, present->dtype, u * dk * dv + i, S[i]);
    }
  }
}

static nn_status la_run(nn_ctx *c, nn_node *n) {
  const la_params *p = n->priv;
  la_job job = {p, n, n->ws};
  nn_parallel_for(c, p->nslots, 1, la_range, &job);
  return NN_OK;
}

/* ---- CausalConvWithState ----------------------------------------------------------
 * Depthwise 1-D convolution over [past_state | input] (zeros without a past),
 * optional SiLU; present_state keeps the last k-1 positions of that sequence. */

static nn_status ccs_prepare(nn_ctx *c, nn_node *n) {
  static const char *const acts[] = {"none", "silu", "swish", NULL};
  nn_value *x = n->x[0], *w = ku_in(n, 1), *bias = ku_in(n, 2), *past = ku_in(n, 3);
  if (!w)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "weight is required");
  nn_dtype dt = x->dtype;
  if (!ku_is_real(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  int act;
  nn_status st = ku_attr_choice(c, n, "activation", "none", acts, &act);
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
  if ((st = nn_set_output(c, n->y[0], dt, 3, x->dims)) != NN_OK)
    return st;
  if (ku_out(n, 1) && (st = nn_set_output(c, n->y[1], dt, 3, sd)) != NN_OK)
    return st;
  return NN_OK;
}

static nn_status ccs_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *x = n->x[0], *w = n->x[1], *bias = ku_in(n, 2), *past = ku_in(n, 3);
  nn_value *y = n->y[0], *present = ku_out(n, 1);
  nn_dtype dt = x->dtype;
  bool silu = strcmp(nn_attr_string(n, "activation", "none"), "none") != 0;
  int64_t B = x->dims[0], C = x->dims[1], L = x->dims[2], k = w->dims[2], P = k - 1;
  for (int64_t bc = 0; bc < B * C; bc++) {
    int64_t ch = bc % C;
    /* position j of the padded sequence: past (or zero) for j < P, else input */
#define CCS_AT(j) ((j) < P ? (past ? ku_ldf(past->data, dt, bc * P + (j)) : 0.0f) \
                           : ku_ldf(x->data, dt, bc * L + (j) - P))
    for (int64_t l = 0; l < L; l++) {
      float acc = bias ? ku_ldf(bias->data, dt, ch) : 0.0f;
      for (int64_t j = 0; j < k; j++)
        acc += ku_ldf(w->data, dt, ch * k + j) * CCS_AT(l + j);
      if (silu) {
        /* the activation sees the convolution rounded to the tensor type */
        ku_stf(y->data, dt, bc * L + l, acc);
        acc = ku_ldf(y->data, dt, bc * L + l);
        acc = acc / (1.0f + expf(-acc));
      }
      ku_stf(y->data, dt, bc * L + l, acc);
    }
    if (present)
      for (int64_t j = 0; j < P; j++)
        ku_stf(present->data, dt, bc * P + j, CCS_AT(L + j));
#undef CCS_AT
  }
  return NN_OK;
}

const nn_kernel nn_kernels_recurrent[] = {
  {.name = "LinearAttention", .prepare = la_prepare, .run = la_run},
  {.name = "CausalConvWithState", .prepare = ccs_prepare, .run = ccs_run},
  {.name = "RNN", .prepare = rnn_prepare, .run = rnn_run},
  {.name = "GRU", .prepare = gru_prepare, .run = rnn_run},
  {.name = "LSTM", .prepare = lstm_prepare, .run = rnn_run},
  {0},
};
