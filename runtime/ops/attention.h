/* attention.h - the shapes and attributes of Attention (23, 24) and
 * RotaryEmbedding (23) as typed parameters, for the op layer's shape
 * inference (ops/attention.c) and the CPU kernels (cpu/attention.c), which
 * recompute them at prepare.  Errors go through nn_fail(c); nothing is
 * allocated. */
#ifndef NN_OPS_ATTENTION_H
#define NN_OPS_ATTENTION_H

#include "nn_internal.h"

typedef struct nn_attention_params {
  bool rank3;             /* Q, K, V and Y (B, S, heads * size), else (B, heads, S, size) */
  int64_t B, Hq, Hkv, Sq, Skv, Sp, T, Dqk, Dv;  /* Sp: past length; T = Sp + Skv */
  float scale, softcap;
  int causal, mode;       /* is_causal, qk_matmul_output_mode */
  bool mask_bool;
  int64_t Tm;             /* last dim of the mask; keys at or past it are masked */
  int64_t m_st[4];        /* mask strides over (B, Hq, Sq, Tm), 0 on broadcast */
} nn_attention_params;

/* Q, K, V (same type, all 3-D with q_num_heads / kv_num_heads, or all 4-D),
 * past_key / past_value (together, Q's type), attn_mask (bool or Q's type,
 * broadcasting to (B, Hq, Sq, <= T)), nonpad_kv_seqlen (opset 24: int64 (B))
 * and the attributes. */
nn_status nn_attention_params_init(nn_ctx *c, const nn_node *n, nn_attention_params *p);

typedef struct nn_rope_params {
  int64_t B, S, H, D;     /* the input: (B, H, S, D), or (B, S, H * D) with num_heads */
  int64_t rd;             /* rotary_embedding_dim (even, <= D; 0 -> D) */
  bool interleaved;
  bool has_pos;           /* position_ids given: caches (max_pos, rd / 2) */
  int64_t max_pos;
} nn_rope_params;

/* RotaryEmbedding: X (3-D or 4-D), cos_cache and sin_cache (X's type, one
 * shape: (max_position, rd / 2) with position_ids (int, (B, S)), else
 * (B, S, rd / 2)) and the attributes. */
nn_status nn_rope_params_init(nn_ctx *c, const nn_node *n, nn_rope_params *p);

#endif /* NN_OPS_ATTENTION_H */
