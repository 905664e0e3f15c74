/* misc_recurrent.h - LinearAttention (27) and CausalConvWithState (27): the
 * stateful sequence-mixing blocks of recurrent / hybrid language models.
 * Included only from misc.c. */
#ifndef NN_MISC_RECURRENT_H
#define NN_MISC_RECURRENT_H

#include "misc_common.h"

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
  nn_value *q = n->x[LA_Q], *k = misc_in(n, LA_K), *v = misc_in(n, LA_V);
  nn_value *past = misc_in(n, LA_PAST), *decay = misc_in(n, LA_DECAY);
  nn_value *beta = misc_in(n, LA_BETA), *erase = misc_in(n, LA_ERASE);
  if (!k || !v)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "query, key and value are required");
  nn_dtype dt = q->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16 && dt != NN_DTYPE_BFLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  if (k->dtype != dt || v->dtype != dt)
    return nn_fail(c, NN_ERR_DTYPE, "query, key and value types differ");
  la_params p;
  memset(&p, 0, sizeof p);
  nn_status st = misc_attr_choice(c, n, "update_rule", "gated_delta", rules, &p.rule);
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
    if (!misc_is_real(past->dtype) || past->rank != 4 || memcmp(past->dims, sd, sizeof sd))
      return nn_fail(c, NN_ERR_SHAPE, "past_state must be (B, kv_heads, d_k, d_v)");
    sdt = past->dtype;
  }
  float sc = nn_attr_float(n, "scale", 0.0f);
  p.scale = sc != 0.0f ? sc : (float)(1.0 / sqrt((double)(p.dk > 0 ? p.dk : 1)));
  int64_t od[3] = {p.B, p.T, p.Hq * p.dv};
  if ((st = nn_set_output(c, n->y[0], dt, 3, od)) != NN_OK)
    return st;
  if (misc_out(n, 1) && (st = nn_set_output(c, n->y[1], sdt, 4, sd)) != NN_OK)
    return st;
  /* per slot: state, corrected value, key row, query row */
  p.nslots = misc_slots(c);
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
  nn_value *past = misc_in(n, LA_PAST), *decay = misc_in(n, LA_DECAY);
  nn_value *beta = misc_in(n, LA_BETA), *erase = misc_in(n, LA_ERASE);
  nn_value *Y = n->y[0], *present = misc_out(n, 1);
  nn_dtype dt = Q->dtype;
  int64_t dk = p->dk, dv = p->dv, group = p->Hq / p->Hkv;
  int64_t units = p->B * p->Hkv;
  for (int64_t slot = begin; slot < end; slot++) {
    float *S = job->ws + (size_t)slot * p->slot_floats;
    float *vt = S + dk * dv, *kt = vt + dv, *qt = kt + dk;
    for (int64_t u = units * slot / p->nslots; u < units * (slot + 1) / p->nslots; u++) {
      int64_t b = u / p->Hkv, h = u % p->Hkv;
      for (int64_t i = 0; i < dk * dv; i++)
        S[i] = past ? misc_ldf(past->data, past->dtype, u * dk * dv + i) : 0.0f;
      for (int64_t t = 0; t < p->T; t++) {
        int64_t bt = b * p->T + t;
        for (int64_t d = 0; d < dk; d++)
          kt[d] = misc_ldf(K->data, dt, (bt * p->Hkv + h) * dk + d);
        for (int64_t m = 0; m < dv; m++)
          vt[m] = misc_ldf(V->data, dt, (bt * p->Hkv + h) * dv + m);
        if (decay) {
          for (int64_t d = 0; d < dk; d++) {
            int64_t gi = p->decay_per_key ? (bt * p->Hkv + h) * dk + d : bt * p->Hkv + h;
            float g = expf(misc_ldf(decay->data, dt, gi));
            for (int64_t m = 0; m < dv; m++)
              S[d * dv + m] *= g;
          }
        }
        if (beta) {
          float bv = misc_ldf(beta->data, dt, bt * p->beta_heads + (p->beta_heads == 1 ? 0 : h));
          for (int64_t m = 0; m < dv; m++) {
            float r = 0.0f;
            for (int64_t d = 0; d < dk; d++) {
              float ke = kt[d];
              if (erase)
                ke *= misc_ldf(erase->data, dt, (bt * p->Hkv + h) * dk + d);
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
            qt[d] = misc_ldf(Q->data, dt, (bt * p->Hq + hq) * dk + d);
          for (int64_t m = 0; m < dv; m++) {
            float o = 0.0f;
            for (int64_t d = 0; d < dk; d++)
              o += qt[d] * S[d * dv + m];
            misc_stf(Y->data, dt, (bt * p->Hq + hq) * dv + m, p->scale * o);
          }
        }
      }
      if (present)
        for (int64_t i = 0; i < dk * dv; i++)
          misc_stf(present->data, present->dtype, u * dk * dv + i, S[i]);
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
  nn_value *x = n->x[0], *w = misc_in(n, 1), *bias = misc_in(n, 2), *past = misc_in(n, 3);
  if (!w)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "weight is required");
  nn_dtype dt = x->dtype;
  if (!misc_is_real(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  int act;
  nn_status st = misc_attr_choice(c, n, "activation", "none", acts, &act);
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
  if (misc_out(n, 1) && (st = nn_set_output(c, n->y[1], dt, 3, sd)) != NN_OK)
    return st;
  return NN_OK;
}

static nn_status ccs_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *x = n->x[0], *w = n->x[1], *bias = misc_in(n, 2), *past = misc_in(n, 3);
  nn_value *y = n->y[0], *present = misc_out(n, 1);
  nn_dtype dt = x->dtype;
  bool silu = strcmp(nn_attr_string(n, "activation", "none"), "none") != 0;
  int64_t B = x->dims[0], C = x->dims[1], L = x->dims[2], k = w->dims[2], P = k - 1;
  for (int64_t bc = 0; bc < B * C; bc++) {
    int64_t ch = bc % C;
    /* position j of the padded sequence: past (or zero) for j < P, else input */
#define CCS_AT(j) ((j) < P ? (past ? misc_ldf(past->data, dt, bc * P + (j)) : 0.0f) \
                           : misc_ldf(x->data, dt, bc * L + (j) - P))
    for (int64_t l = 0; l < L; l++) {
      float acc = bias ? misc_ldf(bias->data, dt, ch) : 0.0f;
      for (int64_t j = 0; j < k; j++)
        acc += misc_ldf(w->data, dt, ch * k + j) * CCS_AT(l + j);
      if (silu) {
        /* the activation sees the convolution rounded to the tensor type */
        misc_stf(y->data, dt, bc * L + l, acc);
        acc = misc_ldf(y->data, dt, bc * L + l);
        acc = acc / (1.0f + expf(-acc));
      }
      misc_stf(y->data, dt, bc * L + l, acc);
    }
    if (present)
      for (int64_t j = 0; j < P; j++)
        misc_stf(present->data, dt, bc * P + j, CCS_AT(L + j));
#undef CCS_AT
  }
  return NN_OK;
}

#endif
