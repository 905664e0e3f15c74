/* recurrent.c - CPU kernels of the recurrent sequence ops: RNN, GRU and LSTM
 * (7/14; the revision 22 is type-only and needs no entry), and
 * LinearAttention and CausalConvWithState (27), the stateful
 * sequence-mixing blocks of recurrent / hybrid language models.  All of
 * them carry a state along the sequence. */
#include "cpu/kernel_util.h"
#include "cpu/sgemm.h"
#include "cpu/vmath.h"
#include "ops/recurrent.h"

/* ---- RNN, GRU, LSTM -------------------------------------------------------------
 * One kernel for the three cells: G gates of hidden size H per direction
 * (RNN 1; GRU 3 in order z, r, h; LSTM 4 in order i, o, f, c).  Batch rows
 * are independent, so each runs its whole sequence with a small state in the
 * workspace.  layout 0: X (S, B, I), Y (S, D, B, H), Y_h (D, B, H);
 * layout 1: X (B, S, I), Y (B, S, D, H), Y_h (B, D, H). */

/* The op layer's parameters (ops/recurrent.h), which run reads as they are. */
typedef nn_rnn_act rnn_act;
typedef nn_rnn_params rnn_params;

static float rnn_apply(const rnn_act *a, float x) {
  switch (a->kind) {
  case NN_RNN_ACT_RELU: return x > 0.0f ? x : 0.0f;
  case NN_RNN_ACT_TANH: return tanhf(x);
  case NN_RNN_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case NN_RNN_ACT_AFFINE: return a->alpha * x + a->beta;
  case NN_RNN_ACT_LEAKYRELU: return x >= 0.0f ? x : a->alpha * x;
  case NN_RNN_ACT_THRESHOLDEDRELU: return x > a->alpha ? x : 0.0f;
  case NN_RNN_ACT_SCALEDTANH: return a->alpha * tanhf(a->beta * x);
  case NN_RNN_ACT_HARDSIGMOID: {
    float v = a->alpha * x + a->beta;
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
  }
  case NN_RNN_ACT_ELU: return x >= 0.0f ? x : a->alpha * (expf(x) - 1.0f);
  case NN_RNN_ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
  case NN_RNN_ACT_SOFTPLUS: return logf(1.0f + expf(x));
  default: return x;
  }
}

/* float32 runs through the GEMM engine (rnn_run_f32): the input
 * projection of every step at once, then per step the recurrent product of
 * the packed R (a GEMV) and the gates in vectors.  The reference loop below
 * it runs the other float types.  CRNN's bidirectional LSTMs (hidden 256,
 * 39 steps) went from 58.8 ms each to 2.96 (Zen 4, 1 thread). */
typedef struct rnn_priv {
  rnn_params p;
  bool fast;              /* float32: rnn_run_f32 */
  bool r_const;           /* R is a constant: packed once into the priv block */
  bool r_ready;
  int nparts;             /* R's row blocks packed apart: GRU's z, r rows and its h rows */
  int64_t part_rows[2];
  size_t part_bytes[2];   /* packed size of each block (64-byte multiples) */
  size_t dir_bytes;       /* one direction's packed R */
  /* workspace, in floats from its start: h, c, tmp, tmp2, gates, bias (H,
   * H, H, H, GH, GH), the input projection (S * B * GH), a non-constant R
   * packed (D * dir_bytes), then the engine's scratch (gemm_ws bytes) */
  size_t xw_off, rpack_off, gemm_off;
  size_t gemm_ws;
} rnn_priv;
#define RNN_PRIV_HEAD nn_align_up(sizeof(rnn_priv), 64)

/* The shapes and attributes are the op layer's, checked by its infer; the
 * kernel runs every float type, so it refuses nothing. */
static nn_status rnn_prepare_cell(nn_ctx *c, nn_node *n, int cell) {
  rnn_params p;
  nn_status st = nn_rnn_params_init(c, n, cell, &p);
  if (st != NN_OK)
    return st;
  rnn_priv q;
  memset(&q, 0, sizeof q);
  q.p = p;
  const nn_value *x = n->x[0], *w = n->x[1], *r = n->x[2];
  q.fast = x->dtype == NN_DTYPE_FLOAT && w->dtype == NN_DTYPE_FLOAT && r->dtype == NN_DTYPE_FLOAT;
  const int64_t GH = (int64_t)p.G * p.H;
  size_t priv = RNN_PRIV_HEAD, wsf = (size_t)(3 * p.H + GH);   /* the reference loop's */
  if (q.fast) {
    q.nparts = cell == NN_RNN_CELL_GRU ? 2 : 1;
    q.part_rows[0] = cell == NN_RNN_CELL_GRU ? 2 * p.H : GH;
    q.part_rows[1] = p.H;
    for (int i = 0; i < q.nparts; i++) {
      q.part_bytes[i] = nn_align_up(nn_sgemm_pack_a_size(q.part_rows[i], p.H), 64);
      q.dir_bytes += q.part_bytes[i];
    }
    q.r_const = r->known && r->data;
    q.xw_off = (size_t)(4 * p.H + 2 * GH);
    size_t xw = (size_t)(p.S * p.B * GH), rp = q.r_const ? 0 : (size_t)p.D * q.dir_bytes / sizeof(float);
    q.rpack_off = nn_align_up(q.xw_off + xw, 16);
    q.gemm_off = nn_align_up(q.rpack_off + rp, 16);
    size_t g1 = nn_sgemm_workspace(p.S * p.B, GH, p.I, c->threads > 1 ? c->threads : 1);
    size_t g2 = nn_sgemm_workspace(GH, 1, p.H, c->threads > 1 ? c->threads : 1);
    q.gemm_ws = g1 > g2 ? g1 : g2;
    wsf = q.gemm_off + nn_align_up(q.gemm_ws, 64) / sizeof(float);
    if (q.r_const)
      priv += (size_t)p.D * q.dir_bytes;
  }
  n->ws_bytes = wsf * sizeof(float);
  rnn_priv *pp = nn_malloc(priv);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = q;
  n->priv = pp;
  /* the packed copy of R is a second set of weights: count it as such */
  n->priv_const_bytes = priv - RNN_PRIV_HEAD;
  return NN_OK;
}

/* An activation over an array: the vector routines for the default
 * sigmoid and tanh, the scalar function for the rest. */
static void rnn_act_array(const rnn_act *a, float *v, int64_t n) {
  if ((a->kind == NN_RNN_ACT_SIGMOID && nn_vmath_f32(NN_VM_SIGMOID, v, v, n)) ||
      (a->kind == NN_RNN_ACT_TANH && nn_vmath_f32(NN_VM_TANH, v, v, n)))
    return;
  for (int64_t i = 0; i < n; i++)
    v[i] = rnn_apply(a, v[i]);
}

static inline float rnn_clip(const rnn_params *p, float v) {
  if (p->clip > 0.0f)
    v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
  return v;
}

static nn_status rnn_run_f32(nn_ctx *c, nn_node *n);

static nn_status rnn_run(nn_ctx *c, nn_node *n) {
  const rnn_priv *q = n->priv;
  if (q->fast)
    return rnn_run_f32(c, n);
  const rnn_params *p = &q->p;
  nn_value *x = n->x[0], *w = n->x[1], *r = n->x[2], *b = ku_in(n, 3);
  nn_value *sl = ku_in(n, 4), *h0 = ku_in(n, 5);
  bool lstm = p->cell == NN_RNN_CELL_LSTM;
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
          bool gru_h = p->cell == NN_RNN_CELL_GRU && j >= 2 * H;
          if (!gru_h) {
            a += b ? ku_ldf(b->data, dt, bo + GH + j) : 0.0f;
            for (int64_t k = 0; k < H; k++)
              a += hp[k] * ku_ldf(r->data, dt, ro + j * H + k);
          }
          g[j] = a;
        }
        if (p->cell == NN_RNN_CELL_RNN) {
          for (int64_t k = 0; k < H; k++)
            h[k] = rnn_apply(af, rnn_clip(p, g[k]));
        } else if (p->cell == NN_RNN_CELL_GRU) {
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

static void rnn_clip_array(const rnn_params *p, float *v, int64_t n) {
  if (p->clip > 0.0f)
    for (int64_t i = 0; i < n; i++)
      v[i] = v[i] < -p->clip ? -p->clip : v[i] > p->clip ? p->clip : v[i];
}

/* float32: per direction, X's rows times W^T (+ the biases) for every step
 * in one product; per batch row and step, gates = that row + R h (the
 * packed R as a GEMV), then the cell in vectors.  The same arithmetic as
 * the reference loop, in another order of summation. */
static nn_status rnn_run_f32(nn_ctx *c, nn_node *n) {
  const rnn_priv *q = n->priv;
  const rnn_params *p = &q->p;
  const bool lstm = p->cell == NN_RNN_CELL_LSTM, gru = p->cell == NN_RNN_CELL_GRU;
  const nn_value *bv = ku_in(n, 3), *sl = ku_in(n, 4), *h0 = ku_in(n, 5);
  const nn_value *c0 = lstm ? ku_in(n, 6) : NULL, *P = lstm ? ku_in(n, 7) : NULL;
  nn_value *Y = ku_out(n, 0), *Yh = ku_out(n, 1), *Yc = lstm ? ku_out(n, 2) : NULL;
  const float *X = n->x[0]->data, *W = n->x[1]->data, *R = n->x[2]->data;
  const float *Bb = bv ? bv->data : NULL, *Pp = P ? P->data : NULL;
  const int64_t H = p->H, I = p->I, S = p->S, B = p->B, GH = (int64_t)p->G * H;
  float *ws = n->ws;
  float *h = ws, *cs = h + H, *tmp = cs + H, *tmp2 = tmp + H, *g = tmp2 + H, *bias = g + GH;
  float *xw = ws + q->xw_off;
  void *gws = ws + q->gemm_off;
  unsigned char *rpack = q->r_const ? (unsigned char *)q + RNN_PRIV_HEAD : (unsigned char *)(ws + q->rpack_off);
  if (!q->r_const || !q->r_ready) {   /* priv is the node's own: written once, before any use */
    for (int d = 0; d < p->D; d++) {
      unsigned char *dst = rpack + (size_t)d * q->dir_bytes;
      const float *rd = R + (int64_t)d * GH * H;
      for (int i = 0; i < q->nparts; i++) {
        nn_sgemm_pack_a(0, q->part_rows[i], H, rd, H, dst);
        rd += q->part_rows[i] * H;
        dst += q->part_bytes[i];
      }
    }
    if (q->r_const)
      ((rnn_priv *)q)->r_ready = true;
  }
  if (Y)
    memset(Y->data, 0, Y->nbytes);
  for (int d = 0; d < p->D; d++) {
    const bool rev = p->reverse_only || d == 1;
    const rnn_act *af = &p->act[d * p->nact], *ag = af + 1, *ah = af + 2;
    const float *bd = Bb ? Bb + (int64_t)d * 2 * GH : NULL;
    /* W's bias and R's (GRU's h rows: W's only; R's goes inside the reset) */
    for (int64_t j = 0; j < GH; j++)
      bias[j] = bd ? bd[j] + (gru && j >= 2 * H ? 0.0f : bd[GH + j]) : 0.0f;
    nn_sgemm_epi e;
    memset(&e, 0, sizeof e);
    e.lo = -INFINITY;
    e.hi = INFINITY;
    e.bias_kind = NN_SGEMM_BIAS_COL;
    e.bias = bias;
    /* X's rows in storage order: (t, b) in layout 0, (b, t) in layout 1 */
    nn_status st = nn_sgemm_compute(c, 0, 1, S * B, GH, I, 1.0f, X, I, W + (int64_t)d * GH * I, I,
                                    0.0f, xw, GH, &e, gws, q->gemm_ws);
    if (st)
      return nn_fail(c, st, "the input projection failed");
    const unsigned char *rd = rpack + (size_t)d * q->dir_bytes;
    const float *pi = Pp ? Pp + (int64_t)d * 3 * H : NULL, *po = pi ? pi + H : NULL,
                *pf = pi ? pi + 2 * H : NULL;
    for (int64_t bt = 0; bt < B; bt++) {
      int64_t len = sl ? nn_value_get_int(sl, bt) : S;
      if (len < 0 || len > S)
        return nn_fail(c, NN_ERR_RUNTIME, "sequence_lens[%lld] = %lld outside [0, %lld]",
                       (long long)bt, (long long)len, (long long)S);
      int64_t ho = p->layout1 ? (bt * p->D + d) * H : (d * B + bt) * H;
      for (int64_t k = 0; k < H; k++) {
        h[k] = h0 ? ((const float *)h0->data)[ho + k] : 0.0f;
        cs[k] = c0 ? ((const float *)c0->data)[ho + k] : 0.0f;
      }
      for (int64_t step = 0; step < len; step++) {
        int64_t t = rev ? len - 1 - step : step;
        memcpy(g, xw + (p->layout1 ? bt * S + t : t * B + bt) * GH, sizeof(float) * (size_t)GH);
        st = nn_sgemm_compute_pa(c, 0, q->part_rows[0], 1, H, 1.0f, rd, h, 1, 1.0f, g, 1, NULL, gws,
                                 q->gemm_ws);
        if (st)
          return nn_fail(c, st, "the recurrent product failed");
        if (p->cell == NN_RNN_CELL_RNN) {
          rnn_clip_array(p, g, H);
          rnn_act_array(af, g, H);
          memcpy(h, g, sizeof(float) * (size_t)H);
        } else if (gru) {
          float *z = g, *rg = g + H, *hh = g + 2 * H;
          const float *rbh = bd ? bd + GH + 2 * H : NULL;
          rnn_clip_array(p, g, 2 * H);
          rnn_act_array(af, g, 2 * H);
          const float *hin = h;
          if (!p->lbr) {   /* R_h (r * h) */
            for (int64_t k = 0; k < H; k++)
              tmp2[k] = rg[k] * h[k];
            hin = tmp2;
          }
          st = nn_sgemm_compute_pa(c, 0, H, 1, H, 1.0f, rd + q->part_bytes[0], hin, 1, 0.0f, tmp, 1,
                                   NULL, gws, q->gemm_ws);
          if (st)
            return nn_fail(c, st, "the recurrent product failed");
          for (int64_t k = 0; k < H; k++) {
            float rb = rbh ? rbh[k] : 0.0f;
            hh[k] += p->lbr ? rg[k] * (tmp[k] + rb) : tmp[k] + rb;
          }
          rnn_clip_array(p, hh, H);
          rnn_act_array(ag, hh, H);
          for (int64_t k = 0; k < H; k++)
            h[k] = (1.0f - z[k]) * hh[k] + z[k] * h[k];
        } else {
          float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
          if (pi)
            for (int64_t k = 0; k < H; k++)
              gi[k] += pi[k] * cs[k];
          rnn_clip_array(p, gi, H);
          rnn_act_array(af, gi, H);
          if (p->input_forget) {
            for (int64_t k = 0; k < H; k++)
              gf[k] = 1.0f - gi[k];
          } else {
            if (pf)
              for (int64_t k = 0; k < H; k++)
                gf[k] += pf[k] * cs[k];
            rnn_clip_array(p, gf, H);
            rnn_act_array(af, gf, H);
          }
          rnn_clip_array(p, gc, H);
          rnn_act_array(ag, gc, H);
          for (int64_t k = 0; k < H; k++)
            cs[k] = gf[k] * cs[k] + gi[k] * gc[k];
          if (po)
            for (int64_t k = 0; k < H; k++)
              go[k] += po[k] * cs[k];
          rnn_clip_array(p, go, H);
          rnn_act_array(af, go, H);
          memcpy(tmp, cs, sizeof(float) * (size_t)H);
          rnn_act_array(ah, tmp, H);
          for (int64_t k = 0; k < H; k++)
            h[k] = go[k] * tmp[k];
        }
        if (Y) {
          int64_t yo = p->layout1 ? ((bt * S + t) * p->D + d) * H : ((t * p->D + d) * B + bt) * H;
          memcpy((float *)Y->data + yo, h, sizeof(float) * (size_t)H);
        }
      }
      if (Yh)
        memcpy((float *)Yh->data + ho, h, sizeof(float) * (size_t)H);
      if (Yc)
        memcpy((float *)Yc->data + ho, cs, sizeof(float) * (size_t)H);
    }
  }
  return NN_OK;
}

static nn_status rnn_prepare(nn_ctx *c, nn_node *n) {
  return rnn_prepare_cell(c, n, NN_RNN_CELL_RNN);
}
static nn_status gru_prepare(nn_ctx *c, nn_node *n) {
  return rnn_prepare_cell(c, n, NN_RNN_CELL_GRU);
}
static nn_status lstm_prepare(nn_ctx *c, nn_node *n) {
  return rnn_prepare_cell(c, n, NN_RNN_CELL_LSTM);
}

/* ---- LinearAttention -----------------------------------------------------------
 * Per (batch, kv head) a dk x dv float state runs through the sequence; the
 * query heads of a group all read the same state.  Inputs are packed 3-D
 * (B, T, H*D); state is (B, Hkv, dk, dv). */


typedef struct la_params {
  int64_t B, T, Hq, Hkv, dk, dv;
  bool decay_per_key;   /* decay (B, T, Hkv*dk) rather than (B, T, Hkv) */
  int64_t beta_heads;   /* beta last dim: Hkv or 1 */
  float scale;
  int nslots;
  size_t slot_floats;
} la_params;

/* The shapes, the update rule and the optional inputs it asks for were
 * checked by the op's infer; the kernel keeps the head geometry, the scale
 * and its scratch slots. */
static nn_status la_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *q = n->x[NN_LA_Q], *v = n->x[NN_LA_V];
  const nn_value *decay = ku_in(n, NN_LA_DECAY), *beta = ku_in(n, NN_LA_BETA);
  nn_dtype dt = q->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16 && dt != NN_DTYPE_BFLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  la_params p;
  memset(&p, 0, sizeof p);
  p.Hq = nn_attr_int(n, "q_num_heads", 0);
  p.Hkv = nn_attr_int(n, "kv_num_heads", 0);
  p.B = q->dims[0];
  p.T = q->dims[1];
  p.dk = q->dims[2] / p.Hq;
  p.dv = v->dims[2] / p.Hkv;
  p.decay_per_key = decay && decay->dims[2] == p.Hkv * p.dk && p.dk != 1;
  p.beta_heads = beta ? beta->dims[2] : 0;
  float sc = nn_attr_float(n, "scale", 0.0f);
  p.scale = sc != 0.0f ? sc : (float)(1.0 / sqrt((double)(p.dk > 0 ? p.dk : 1)));
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
  nn_value *Q = n->x[NN_LA_Q], *K = n->x[NN_LA_K], *V = n->x[NN_LA_V];
  nn_value *past = ku_in(n, NN_LA_PAST), *decay = ku_in(n, NN_LA_DECAY);
  nn_value *beta = ku_in(n, NN_LA_BETA), *erase = ku_in(n, NN_LA_ERASE);
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
 * optional SiLU; present_state keeps the last k-1 positions of that sequence.
 * The op's infer checks and sets everything; the kernel runs every float
 * type and needs no parameters nor workspace, so it has no prepare. */

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
  {.name = "CausalConvWithState", .run = ccs_run},
  {.name = "RNN", .prepare = rnn_prepare, .run = rnn_run},
  {.name = "GRU", .prepare = gru_prepare, .run = rnn_run},
  {.name = "LSTM", .prepare = lstm_prepare, .run = rnn_run},
  {0},
};
