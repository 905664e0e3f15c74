/* attention.c - CPU kernels of the attention blocks of transformer models:
 * Attention (23/24), RotaryEmbedding (23) and SwiGLU (28).
 *
 * Versions list the ONNX since-versions whose semantics the kernels
 * implement; the table at the end registers them (cpu/ops.h). */
#include "cpu/kernel_util.h"
#include "ops/attention.h"

/* Dot product with several partial sums: without -ffast-math the compiler
 * keeps a single serial chain otherwise. */
static inline float attn_dotf(const float *a, const float *b, int64_t n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
    s4 += a[i + 4] * b[i + 4];
    s5 += a[i + 5] * b[i + 5];
    s6 += a[i + 6] * b[i + 6];
    s7 += a[i + 7] * b[i + 7];
  }
  for (; i < n; i++)
    s0 += a[i] * b[i];
  return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* ---- Attention ---------------------------------------------------------------
 * One query row at a time: scores over the whole key sequence live in a
 * per-slot scratch row, so memory stays O(T) per worker instead of the full
 * (B, H, Sq, T) score tensor.  Compute is float for every input type. */

enum { ATTN_Q, ATTN_K, ATTN_V, ATTN_MASK, ATTN_PAST_K, ATTN_PAST_V, ATTN_NONPAD };

typedef struct attn_params {
  int64_t B, Hq, Hkv, Sq, Skv, Sp, T, Dqk, Dv;
  /* element strides (batch, head, sequence) of Q, K, V, Y; the head
   * dimension is contiguous in all four layouts */
  int64_t q_st[3], k_st[3], v_st[3], y_st[3];
  float scale, softcap;
  int causal, mode;
  bool mask_bool;
  int64_t Tm;             /* last dim of the mask; keys at or past it are masked */
  int64_t m_st[4];        /* mask strides over (B, Hq, Sq, Tm), 0 on broadcast */
  int nslots;
  size_t slot_floats;     /* scratch floats per slot, padded for alignment */
} attn_params;

static void attn_strides(bool rank3, int64_t H, int64_t S, int64_t D, int64_t st[3]) {
  if (rank3) { /* (B, S, H*D) */
    st[0] = S * H * D;
    st[1] = D;
    st[2] = H * D;
  } else { /* (B, H, S, D) */
    st[0] = H * S * D;
    st[1] = S * D;
    st[2] = D;
  }
}

static nn_status attn_prepare(nn_ctx *c, nn_node *n) {
  nn_dtype dt = n->x[ATTN_Q]->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16 && dt != NN_DTYPE_BFLOAT16)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported Q type %s", nn_dtype_name(dt));
  /* the op layer's shapes and attributes (ops/attention.h); softmax runs in
   * float whatever softmax_precision asks: float is at least as precise as
   * every type the attribute may name for these inputs */
  nn_attention_params ap;
  nn_status st = nn_attention_params_init(c, n, &ap);
  if (st != NN_OK)
    return st;
  attn_params p;
  memset(&p, 0, sizeof p);
  p.B = ap.B;
  p.Hq = ap.Hq;
  p.Hkv = ap.Hkv;
  p.Sq = ap.Sq;
  p.Skv = ap.Skv;
  p.Sp = ap.Sp;
  p.T = ap.T;
  p.Dqk = ap.Dqk;
  p.Dv = ap.Dv;
  p.scale = ap.scale;
  p.softcap = ap.softcap;
  p.causal = ap.causal;
  p.mode = ap.mode;
  p.mask_bool = ap.mask_bool;
  p.Tm = ap.Tm;
  memcpy(p.m_st, ap.m_st, sizeof p.m_st);
  attn_strides(ap.rank3, p.Hq, p.Sq, p.Dqk, p.q_st);
  attn_strides(ap.rank3, p.Hkv, p.Skv, p.Dqk, p.k_st);
  attn_strides(ap.rank3, p.Hkv, p.Skv, p.Dv, p.v_st);
  attn_strides(ap.rank3, p.Hq, p.Sq, p.Dv, p.y_st);

  /* per slot: q row, k row, v row, accumulator, scores */
  p.nslots = ku_slots(c);
  size_t f = (size_t)(2 * p.Dqk + 2 * p.Dv + p.T);
  p.slot_floats = nn_align_up(f, NN_ALIGN / sizeof(float));
  size_t ws;
  if (nn_mul_overflow_size(p.slot_floats * sizeof(float), (size_t)p.nslots, &ws))
    return nn_fail(c, NN_ERR_LIMIT, "workspace too large");
  n->ws_bytes = ws;
  attn_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

/* A row of `len` elements at element offset `off` as floats: the tensor
 * itself when it is float, else converted into tmp. */
static inline const float *attn_row(const void *base, nn_dtype dt, int64_t off, int64_t len,
                                    float *tmp) {
  if (dt == NN_DTYPE_FLOAT)
    return (const float *)base + off;
  for (int64_t i = 0; i < len; i++)
    tmp[i] = ku_ldf(base, dt, off + i);
  return tmp;
}

typedef struct attn_job {
  const attn_params *p;
  nn_node *n;
  float *ws;
} attn_job;

/* Element offset of key/value row t of (b, kv head) in the past tensor
 * (t < Sp) or in the new K/V (t >= Sp); *from_past says which. */
static inline int64_t attn_kv_off(const attn_params *p, const int64_t st[3], int64_t D,
                                  int64_t b, int64_t hk, int64_t t, bool *from_past) {
  if (t < p->Sp) {
    *from_past = true;
    return ((b * p->Hkv + hk) * p->Sp + t) * D;
  }
  *from_past = false;
  return b * st[0] + hk * st[1] + (t - p->Sp) * st[2];
}

static void attn_rows(void *arg, int64_t begin, int64_t end) {
  attn_job *job = arg;
  const attn_params *p = job->p;
  nn_node *n = job->n;
  nn_value *Q = n->x[ATTN_Q], *K = n->x[ATTN_K], *V = n->x[ATTN_V];
  nn_value *M = ku_in(n, ATTN_MASK);
  nn_value *PK = ku_in(n, ATTN_PAST_K), *PV = ku_in(n, ATTN_PAST_V);
  nn_value *NP = n->version >= 24 ? ku_in(n, ATTN_NONPAD) : NULL;
  nn_value *Y = n->y[0], *QK = ku_out(n, 3);
  nn_dtype dt = Q->dtype;
  int64_t rows = p->B * p->Hq * p->Sq;
  int64_t group = p->Hq / p->Hkv;
  bool need_raw = QK && p->mode < 2;

  for (int64_t slot = begin; slot < end; slot++) {
    float *qbuf = job->ws + (size_t)slot * p->slot_floats;
    float *kbuf = qbuf + p->Dqk;
    float *vbuf = kbuf + p->Dqk;
    float *acc = vbuf + p->Dv;
    float *sc = acc + p->Dv;
    int64_t r0 = rows * slot / p->nslots, r1 = rows * (slot + 1) / p->nslots;
    for (int64_t r = r0; r < r1; r++) {
      int64_t b = r / (p->Hq * p->Sq), h = (r / p->Sq) % p->Hq, i = r % p->Sq;
      int64_t hk = h / group;
      const float *qr = attn_row(Q->data, dt, b * p->q_st[0] + h * p->q_st[1] + i * p->q_st[2],
                                 p->Dqk, qbuf);
      int64_t kvlen = NP ? ((const int64_t *)NP->data)[b] : p->T;
      /* bottom-right causal alignment: queries follow the keys already cached */
      int64_t offset = PK ? p->Sp : NP ? kvlen - p->Sq : 0;
      int64_t qk_off = ((b * p->Hq + h) * p->Sq + i) * p->T;
      bool any = false;
      for (int64_t t = 0; t < p->T; t++) {
        float bias = 0.0f;
        if (t >= kvlen || (p->causal && t > i + offset) || (M && t >= p->Tm)) {
          bias = -INFINITY;
        } else if (M) {
          int64_t mo = b * p->m_st[0] + h * p->m_st[1] + i * p->m_st[2] + t * p->m_st[3];
          if (p->mask_bool)
            bias = ((const uint8_t *)M->data)[mo] ? 0.0f : -INFINITY;
          else
            bias = ku_ldf(M->data, dt, mo);
        }
        bool masked = bias == -INFINITY;
        if (!masked)
          any = true;
        if (masked && !need_raw) {
          sc[t] = -INFINITY;
          if (QK && p->mode == 2)
            ku_stf(QK->data, dt, qk_off + t, -INFINITY);
          continue;
        }
        bool past;
        int64_t ko = attn_kv_off(p, p->k_st, p->Dqk, b, hk, t, &past);
        const float *kr = attn_row(past ? PK->data : K->data, dt, ko, p->Dqk, kbuf);
        float raw = attn_dotf(qr, kr, p->Dqk) * p->scale;
        float capped = p->softcap > 0.0f ? p->softcap * tanhf(raw / p->softcap) : raw;
        float s = capped + bias;
        if (QK && p->mode < 3)
          ku_stf(QK->data, dt, qk_off + t, p->mode == 0 ? raw : p->mode == 1 ? capped : s);
        sc[t] = s;
      }
      /* a row whose every key is masked attends to nothing (zeros), instead of
       * the NaN a plain softmax over -inf gives */
      if (any) {
        float m = -INFINITY;
        for (int64_t t = 0; t < p->T; t++)
          if (sc[t] > m)
            m = sc[t];
        float sum = 0.0f;
        for (int64_t t = 0; t < p->T; t++) {
          sc[t] = expf(sc[t] - m);
          sum += sc[t];
        }
        float inv = 1.0f / sum;
        for (int64_t t = 0; t < p->T; t++)
          sc[t] *= inv;
      } else {
        for (int64_t t = 0; t < p->T; t++)
          sc[t] = 0.0f;
      }
      if (QK && p->mode == 3)
        for (int64_t t = 0; t < p->T; t++)
          ku_stf(QK->data, dt, qk_off + t, sc[t]);
      for (int64_t d = 0; d < p->Dv; d++)
        acc[d] = 0.0f;
      for (int64_t t = 0; t < p->T; t++) {
        float w = sc[t];
        if (w == 0.0f)
          continue;
        bool past;
        int64_t vo = attn_kv_off(p, p->v_st, p->Dv, b, hk, t, &past);
        const float *vr = attn_row(past ? PV->data : V->data, dt, vo, p->Dv, vbuf);
        for (int64_t d = 0; d < p->Dv; d++)
          acc[d] += w * vr[d];
      }
      int64_t yo = b * p->y_st[0] + h * p->y_st[1] + i * p->y_st[2];
      if (dt == NN_DTYPE_FLOAT)
        memcpy((float *)Y->data + yo, acc, (size_t)p->Dv * sizeof(float));
      else
        for (int64_t d = 0; d < p->Dv; d++)
          ku_stf(Y->data, dt, yo + d, acc[d]);
    }
  }
}

/* present = concat(past, new) along the sequence, always (B, H, T, D). */
static void attn_present(const attn_params *p, nn_value *out, const nn_value *past,
                         const nn_value *cur, const int64_t st[3], int64_t D) {
  size_t es = nn_dtype_size(out->dtype);
  for (int64_t b = 0; b < p->B; b++)
    for (int64_t h = 0; h < p->Hkv; h++)
      for (int64_t t = 0; t < p->T; t++) {
        bool from_past;
        int64_t so = attn_kv_off(p, st, D, b, h, t, &from_past);
        const char *src = (const char *)(from_past ? past->data : cur->data) + (size_t)so * es;
        char *dst = (char *)out->data + (size_t)(((b * p->Hkv + h) * p->T + t) * D) * es;
        memcpy(dst, src, (size_t)D * es);
      }
}

static nn_status attn_run(nn_ctx *c, nn_node *n) {
  const attn_params *p = n->priv;
  nn_value *NP = n->version >= 24 ? ku_in(n, ATTN_NONPAD) : NULL;
  if (NP) {
    for (int64_t b = 0; b < p->B; b++) {
      int64_t v = ((const int64_t *)NP->data)[b];
      if (v < 0 || v > p->T)
        return nn_fail(c, NN_ERR_RUNTIME, "nonpad_kv_seqlen[%lld] = %lld outside [0, %lld]",
                       (long long)b, (long long)v, (long long)p->T);
    }
  }
  if (ku_out(n, 1))
    attn_present(p, n->y[1], ku_in(n, ATTN_PAST_K), n->x[ATTN_K], p->k_st, p->Dqk);
  if (ku_out(n, 2))
    attn_present(p, n->y[2], ku_in(n, ATTN_PAST_V), n->x[ATTN_V], p->v_st, p->Dv);
  if (p->B * p->Hq * p->Sq == 0)
    return NN_OK;
  attn_job job = {p, n, n->ws};
  nn_parallel_for(c, p->nslots, 1, attn_rows, &job);
  return NN_OK;
}

/* ---- RotaryEmbedding ---------------------------------------------------------- */

typedef struct rope_params {
  int64_t B, S, H, D, rd;
  int64_t st[3];          /* element strides of (batch, seq, head) in the input */
  bool interleaved, has_pos;
  int64_t max_pos;
} rope_params;

static nn_status rope_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  nn_dtype dt = x->dtype;
  if (dt != NN_DTYPE_FLOAT && dt != NN_DTYPE_FLOAT16 && dt != NN_DTYPE_BFLOAT16 &&
      dt != NN_DTYPE_DOUBLE)
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported input type %s", nn_dtype_name(dt));
  nn_rope_params rp;
  nn_status st = nn_rope_params_init(c, n, &rp);
  if (st != NN_OK)
    return st;
  rope_params p;
  memset(&p, 0, sizeof p);
  p.B = rp.B;
  p.S = rp.S;
  p.H = rp.H;
  p.D = rp.D;
  p.rd = rp.rd;
  p.interleaved = rp.interleaved;
  p.has_pos = rp.has_pos;
  p.max_pos = rp.max_pos;
  if (x->rank == 4) { /* (B, H, S, D) */
    p.st[0] = p.H * p.S * p.D;
    p.st[1] = p.D;
    p.st[2] = p.S * p.D;
  } else { /* (B, S, H*D) */
    p.st[0] = p.S * p.H * p.D;
    p.st[1] = p.H * p.D;
    p.st[2] = p.D;
  }
  rope_params *pp = nn_malloc(sizeof *pp);
  if (!pp)
    return nn_fail(c, NN_ERR_NOMEM, "out of memory");
  *pp = p;
  n->priv = pp;
  return NN_OK;
}

static nn_status rope_run(nn_ctx *c, nn_node *n) {
  const rope_params *p = n->priv;
  nn_value *x = n->x[0], *cs = n->x[1], *sn = n->x[2], *pos = ku_in(n, 3), *y = n->y[0];
  nn_dtype dt = x->dtype;
  int64_t half = p->rd / 2;
  for (int64_t b = 0; b < p->B; b++)
    for (int64_t s = 0; s < p->S; s++) {
      int64_t crow;
      if (p->has_pos) {
        int64_t pid = nn_value_get_int(pos, b * p->S + s);
        if (pid < 0 || pid >= p->max_pos)
          return nn_fail(c, NN_ERR_RUNTIME, "position id %lld outside [0, %lld)",
                         (long long)pid, (long long)p->max_pos);
        crow = pid * half;
      } else {
        crow = (b * p->S + s) * half;
      }
      for (int64_t h = 0; h < p->H; h++) {
        int64_t base = b * p->st[0] + s * p->st[1] + h * p->st[2];
        for (int64_t j = 0; j < half; j++) {
          int64_t i1 = p->interleaved ? 2 * j : j;
          int64_t i2 = p->interleaved ? 2 * j + 1 : j + half;
          double x1 = ku_ldd(x->data, dt, base + i1), x2 = ku_ldd(x->data, dt, base + i2);
          double co = ku_ldd(cs->data, dt, crow + j), si = ku_ldd(sn->data, dt, crow + j);
          ku_std(y->data, dt, base + i1, co * x1 - si * x2);
          ku_std(y->data, dt, base + i2, si * x1 + co * x2);
        }
        if (y->data != x->data)
          for (int64_t d = p->rd; d < p->D; d++)
            ku_std(y->data, dt, base + d, ku_ldd(x->data, dt, base + d));
      }
    }
  return NN_OK;
}

/* ---- SwiGLU: y = a * sigmoid(alpha * a) * b ----------------------------------- */

static nn_status swiglu_prepare(nn_ctx *c, nn_node *n) {
  nn_dtype dt = n->x[0]->dtype;
  if (!ku_is_real(dt))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "unsupported type %s", nn_dtype_name(dt));
  return NN_OK;
}

static nn_status swiglu_run(nn_ctx *c, nn_node *n) {
  (void)c;
  nn_value *a = n->x[0], *b = n->x[1], *y = n->y[0];
  double alpha = nn_attr_float(n, "alpha", 1.0f);
  for (int64_t i = 0; i < y->numel; i++) {
    double av = ku_ldd(a->data, a->dtype, i), bv = ku_ldd(b->data, b->dtype, i);
    ku_std(y->data, y->dtype, i, av / (1.0 + exp(-alpha * av)) * bv);
  }
  return NN_OK;
}

const nn_kernel nn_kernels_attention[] = {
  {.name = "Attention", .prepare = attn_prepare, .run = attn_run},
  {.name = "RotaryEmbedding", .prepare = rope_prepare, .run = rope_run},
  {.name = "SwiGLU", .prepare = swiglu_prepare, .run = swiglu_run},
  {0},
};
