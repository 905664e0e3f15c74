/* attention.c - the attention family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_attention[], collected by ops/registry.c),
 * and Attention's and RotaryEmbedding's typed parameters (attention.h). */
#include <math.h>
#include <string.h>

#include "ops/attention.h"

enum { ATTN_Q, ATTN_K, ATTN_V, ATTN_MASK, ATTN_PAST_K, ATTN_PAST_V, ATTN_NONPAD };

/* Optional inputs and outputs: absent when omitted in the model or trailing. */
static nn_value *att_in(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }
static nn_value *att_out(const nn_node *n, int i) { return i < n->n_out ? n->y[i] : NULL; }

/* ---- Attention ----------------------------------------------------------------- */

nn_status nn_attention_params_init(nn_ctx *c, const nn_node *n, nn_attention_params *p) {
  memset(p, 0, sizeof *p);
  const nn_value *q = att_in(n, ATTN_Q), *k = att_in(n, ATTN_K), *v = att_in(n, ATTN_V);
  const nn_value *mask = att_in(n, ATTN_MASK);
  const nn_value *pk = att_in(n, ATTN_PAST_K), *pv = att_in(n, ATTN_PAST_V);
  const nn_value *nonpad = n->version >= 24 ? att_in(n, ATTN_NONPAD) : NULL;
  if (!q || !k || !v)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "Q, K and V are required");
  nn_dtype dt = q->dtype;
  if (k->dtype != dt || v->dtype != dt)
    return nn_fail(c, NN_ERR_DTYPE, "Q, K and V must have the same type");
  if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
    return nn_fail(c, NN_ERR_SHAPE, "Q, K and V must all be 3-D or all 4-D (ranks %d, %d, %d)",
                   q->rank, k->rank, v->rank);
  if (n->version < 24 && n->n_in > ATTN_NONPAD && n->x[ATTN_NONPAD])
    return nn_fail(c, NN_ERR_INVALID_MODEL, "nonpad_kv_seqlen needs opset 24");

  bool rank3 = p->rank3 = q->rank == 3;
  p->B = q->dims[0];
  if (k->dims[0] != p->B || v->dims[0] != p->B)
    return nn_fail(c, NN_ERR_SHAPE, "Q, K and V batch sizes differ");
  if (rank3) {
    int64_t qh = nn_attr_int(n, "q_num_heads", 0), kvh = nn_attr_int(n, "kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0)
      return nn_fail(c, NN_ERR_INVALID_MODEL,
                     "3-D inputs need positive q_num_heads and kv_num_heads");
    if (q->dims[2] % qh || k->dims[2] % kvh || v->dims[2] % kvh)
      return nn_fail(c, NN_ERR_SHAPE, "hidden sizes %lld/%lld/%lld are not multiples of the "
                     "head counts %lld/%lld", (long long)q->dims[2], (long long)k->dims[2],
                     (long long)v->dims[2], (long long)qh, (long long)kvh);
    p->Hq = qh;
    p->Hkv = kvh;
    p->Sq = q->dims[1];
    p->Skv = k->dims[1];
    p->Dqk = q->dims[2] / qh;
    if (k->dims[2] / kvh != p->Dqk)
      return nn_fail(c, NN_ERR_SHAPE, "Q and K head sizes differ");
    p->Dv = v->dims[2] / kvh;
    if (v->dims[1] != p->Skv)
      return nn_fail(c, NN_ERR_SHAPE, "K and V sequence lengths differ");
  } else {
    p->Hq = q->dims[1];
    p->Hkv = k->dims[1];
    p->Sq = q->dims[2];
    p->Skv = k->dims[2];
    p->Dqk = q->dims[3];
    p->Dv = v->dims[3];
    if (v->dims[1] != p->Hkv || v->dims[2] != p->Skv)
      return nn_fail(c, NN_ERR_SHAPE, "K and V heads or sequence lengths differ");
    if (k->dims[3] != p->Dqk)
      return nn_fail(c, NN_ERR_SHAPE, "Q and K head sizes differ");
  }
  if (p->Hkv <= 0 || p->Hq % p->Hkv)
    return nn_fail(c, NN_ERR_SHAPE, "q heads (%lld) must be a multiple of kv heads (%lld)",
                   (long long)p->Hq, (long long)p->Hkv);

  if ((pk == NULL) != (pv == NULL))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "past_key and past_value go together");
  if (pk) {
    if (pk->dtype != dt || pv->dtype != dt)
      return nn_fail(c, NN_ERR_DTYPE, "past_key/past_value must have Q's type");
    if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != p->B || pk->dims[1] != p->Hkv ||
        pk->dims[3] != p->Dqk || pv->dims[0] != p->B || pv->dims[1] != p->Hkv ||
        pv->dims[2] != pk->dims[2] || pv->dims[3] != p->Dv)
      return nn_fail(c, NN_ERR_SHAPE, "past_key/past_value must be (B, kv_heads, past, head_size)");
    p->Sp = pk->dims[2];
  }
  p->T = p->Sp + p->Skv;

  if (mask) {
    if (mask->dtype == NN_DTYPE_BOOL)
      p->mask_bool = true;
    else if (mask->dtype != dt)
      return nn_fail(c, NN_ERR_DTYPE, "attn_mask must be bool or Q's type");
    if (mask->rank < 1 || mask->rank > 4)
      return nn_fail(c, NN_ERR_SHAPE, "attn_mask rank %d not in 1..4", mask->rank);
    int64_t want[4] = {p->B, p->Hq, p->Sq, 0};
    int64_t md[4] = {1, 1, 1, 1};
    for (int i = 0; i < mask->rank; i++)
      md[4 - mask->rank + i] = mask->dims[i];
    p->Tm = md[3];
    if (p->Tm > p->T)
      return nn_fail(c, NN_ERR_SHAPE, "attn_mask last dim %lld exceeds the total sequence %lld",
                     (long long)p->Tm, (long long)p->T);
    int64_t s = 1;
    for (int i = 3; i >= 0; i--) {
      if (i < 3 && md[i] != 1 && md[i] != want[i])
        return nn_fail(c, NN_ERR_SHAPE,
                       "attn_mask does not broadcast to (B, q_heads, q_seq, total)");
      p->m_st[i] = md[i] == 1 ? 0 : s;
      s *= md[i];
    }
  }
  if (nonpad) {
    if (nonpad->dtype != NN_DTYPE_INT64 || nonpad->rank != 1 || nonpad->dims[0] != p->B)
      return nn_fail(c, NN_ERR_SHAPE, "nonpad_kv_seqlen must be int64 (batch)");
  }

  p->causal = (int)nn_attr_int(n, "is_causal", 0);
  if (p->causal != 0 && p->causal != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported is_causal %d", p->causal);
  int64_t mode = nn_attr_int(n, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported qk_matmul_output_mode %lld",
                   (long long)mode);
  p->mode = (int)mode;
  p->softcap = nn_attr_float(n, "softcap", 0.0f);
  if (!(p->softcap >= 0.0f) || isinf(p->softcap))
    return nn_fail(c, NN_ERR_INVALID_MODEL, "softcap must be finite and >= 0");
  const nn_attr *sc = nn_attr_get(n, "scale");
  p->scale = sc ? nn_attr_float(n, "scale", 1.0f)
                : (float)(1.0 / sqrt((double)(p->Dqk > 0 ? p->Dqk : 1)));
  /* the float types ONNX lets softmax_precision name */
  int64_t sp = nn_attr_int(n, "softmax_precision", NN_DTYPE_FLOAT);
  if (sp != NN_DTYPE_FLOAT && sp != NN_DTYPE_FLOAT16 && sp != NN_DTYPE_BFLOAT16 &&
      sp != NN_DTYPE_DOUBLE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported softmax_precision %lld", (long long)sp);
  return NN_OK;
}

/* Y as Q's layout with V's head size; present_key / present_value the past
 * and the new keys / values, (B, kv_heads, T, size); the optional QK product
 * (B, q_heads, Sq, T).  All of Q's type. */
static nn_status attn_infer(nn_ctx *c, nn_node *n) {
  nn_attention_params p;
  nn_status st = nn_attention_params_init(c, n, &p);
  if (st != NN_OK)
    return st;
  nn_dtype dt = n->x[ATTN_Q]->dtype;
  int64_t yd[4];
  if (p.rank3) {
    yd[0] = p.B, yd[1] = p.Sq, yd[2] = p.Hq * p.Dv;
  } else {
    yd[0] = p.B, yd[1] = p.Hq, yd[2] = p.Sq, yd[3] = p.Dv;
  }
  if ((st = nn_set_output(c, n->y[0], dt, p.rank3 ? 3 : 4, yd)) != NN_OK)
    return st;
  int64_t pkd[4] = {p.B, p.Hkv, p.T, p.Dqk}, pvd[4] = {p.B, p.Hkv, p.T, p.Dv};
  int64_t qkd[4] = {p.B, p.Hq, p.Sq, p.T};
  if (att_out(n, 1) && (st = nn_set_output(c, n->y[1], dt, 4, pkd)) != NN_OK)
    return st;
  if (att_out(n, 2) && (st = nn_set_output(c, n->y[2], dt, 4, pvd)) != NN_OK)
    return st;
  if (att_out(n, 3) && (st = nn_set_output(c, n->y[3], dt, 4, qkd)) != NN_OK)
    return st;
  return NN_OK;
}

/* ---- RotaryEmbedding ------------------------------------------------------------- */

nn_status nn_rope_params_init(nn_ctx *c, const nn_node *n, nn_rope_params *p) {
  memset(p, 0, sizeof *p);
  const nn_value *x = n->x[0], *cs = att_in(n, 1), *sn = att_in(n, 2), *pos = att_in(n, 3);
  if (!cs || !sn)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "cos_cache and sin_cache are required");
  if (cs->dtype != x->dtype || sn->dtype != x->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "caches must have the input's type");
  p->B = x->dims[0];
  if (x->rank == 4) { /* (B, H, S, D) */
    p->H = x->dims[1];
    p->S = x->dims[2];
    p->D = x->dims[3];
  } else if (x->rank == 3) { /* (B, S, H*D) */
    int64_t nh = nn_attr_int(n, "num_heads", 0);
    if (nh <= 0 || x->dims[2] % nh)
      return nn_fail(c, NN_ERR_INVALID_MODEL,
                     "3-D input needs num_heads dividing the hidden size %lld",
                     (long long)x->dims[2]);
    p->H = nh;
    p->S = x->dims[1];
    p->D = x->dims[2] / nh;
  } else {
    return nn_fail(c, NN_ERR_SHAPE, "input must be 3-D or 4-D, got rank %d", x->rank);
  }
  p->rd = nn_attr_int(n, "rotary_embedding_dim", 0);
  if (p->rd == 0)
    p->rd = p->D;
  if (p->rd < 0 || p->rd > p->D || p->rd % 2)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "rotary_embedding_dim %lld must be even and <= %lld",
                   (long long)p->rd, (long long)p->D);
  int64_t il = nn_attr_int(n, "interleaved", 0);
  if (il != 0 && il != 1)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported interleaved %lld", (long long)il);
  p->interleaved = il;
  int64_t half = p->rd / 2;
  if (cs->rank != sn->rank || memcmp(cs->dims, sn->dims, sizeof(int64_t) * (size_t)cs->rank))
    return nn_fail(c, NN_ERR_SHAPE, "cos_cache and sin_cache shapes differ");
  if (pos) {
    bool index = pos->dtype == NN_DTYPE_INT64 || pos->dtype == NN_DTYPE_INT32;
    if (!index || pos->rank != 2 || pos->dims[0] != p->B || pos->dims[1] != p->S)
      return nn_fail(c, NN_ERR_SHAPE, "position_ids must be int (batch, seq)");
    if (cs->rank != 2 || cs->dims[1] != half)
      return nn_fail(c, NN_ERR_SHAPE, "caches must be (max_position, %lld)", (long long)half);
    p->has_pos = true;
    p->max_pos = cs->dims[0];
  } else {
    if (cs->rank != 3 || cs->dims[0] != p->B || cs->dims[1] != p->S || cs->dims[2] != half)
      return nn_fail(c, NN_ERR_SHAPE, "without position_ids the caches must be (batch, seq, %lld)",
                     (long long)half);
  }
  return NN_OK;
}

/* Y: X's type and shape. */
static nn_status rope_infer(nn_ctx *c, nn_node *n) {
  nn_rope_params p;
  nn_status st = nn_rope_params_init(c, n, &p);
  const nn_value *x = n->x[0];
  return st ? st : nn_set_output(c, n->y[0], x->dtype, x->rank, x->dims);
}

/* ---- SwiGLU ------------------------------------------------------------------------ */

/* Y = A * sigmoid(alpha * A) * B: A and B of one type and shape. */
static nn_status swiglu_infer(nn_ctx *c, nn_node *n) {
  const nn_value *a = n->x[0], *b = att_in(n, 1);
  if (!b)
    return nn_fail(c, NN_ERR_INVALID_MODEL, "SwiGLU needs two inputs");
  if (b->dtype != a->dtype)
    return nn_fail(c, NN_ERR_DTYPE, "A and B types differ");
  if (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
    return nn_fail(c, NN_ERR_SHAPE, "A and B must have identical shapes");
  return nn_set_output(c, n->y[0], a->dtype, a->rank, a->dims);
}

/* The family's operators (ops/registry.c), each with its shape and dtype
 * inference; the kernels' prepare (cpu/attention.c) refuses the types they
 * do not compute and sizes their scratch. */
const nn_op_def nn_ops_attention[] = {
  {.name = "Attention", .versions = {23, 24}, .infer = attn_infer},
  {.name = "RotaryEmbedding", .versions = {23}, .infer = rope_infer},
  {.name = "SwiGLU", .versions = {28}, .flags = NN_OP_ELEMENTWISE, .infer = swiglu_infer},
  {0},
};
