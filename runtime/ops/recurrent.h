/* recurrent.h - the shapes and attributes of RNN, GRU and LSTM (7, 14) as
 * typed parameters, for the op layer's shape inference (ops/recurrent.c) and
 * the CPU kernel (cpu/recurrent.c), which recomputes them at prepare.  The
 * activation kinds are numbered here; each backend maps them to its own
 * functions.  Errors go through nn_fail(c); nothing is allocated. */
#ifndef NN_OPS_RECURRENT_H
#define NN_OPS_RECURRENT_H

#include "nn_internal.h"

/* The cell: G gates of hidden size H per direction (RNN 1; GRU 3 in order
 * z, r, h; LSTM 4 in order i, o, f, c). */
enum { NN_RNN_CELL_RNN, NN_RNN_CELL_GRU, NN_RNN_CELL_LSTM };

/* The functions the activations attribute may name (matched without case). */
enum {
  NN_RNN_ACT_RELU, NN_RNN_ACT_TANH, NN_RNN_ACT_SIGMOID, NN_RNN_ACT_AFFINE, NN_RNN_ACT_LEAKYRELU,
  NN_RNN_ACT_THRESHOLDEDRELU, NN_RNN_ACT_SCALEDTANH, NN_RNN_ACT_HARDSIGMOID, NN_RNN_ACT_ELU,
  NN_RNN_ACT_SOFTSIGN, NN_RNN_ACT_SOFTPLUS
};

typedef struct nn_rnn_act {
  int kind;               /* NN_RNN_ACT_* */
  float alpha, beta;      /* the attribute's values, else the ONNX defaults */
} nn_rnn_act;

/* layout 0: X (S, B, I), Y (S, D, B, H), Y_h and Y_c (D, B, H);
 * layout 1: X (B, S, I), Y (B, S, D, H), Y_h and Y_c (B, D, H). */
typedef struct nn_rnn_params {
  int cell, G, D, nact;   /* nact: functions per direction (f; f, g; f, g, h) */
  int64_t S, B, I, H;
  bool layout1, reverse_only, lbr, input_forget;  /* lbr: GRU linear_before_reset */
  float clip;             /* 0: no clipping */
  nn_rnn_act act[6];      /* per direction: f, g, h */
} nn_rnn_params;

/* X (a float type, 3-D), W, R (X's type, (D, G*H, I) and (D, G*H, H)), the
 * optional B, sequence_lens (int32/int64 (B)), initial_h, and for LSTM
 * initial_c and P, and the attributes (direction, layout from opset 14,
 * hidden_size, clip, linear_before_reset, input_forget, activations with
 * activation_alpha / activation_beta) of a `cell` (NN_RNN_CELL_*) node. */
nn_status nn_rnn_params_init(nn_ctx *c, const nn_node *n, int cell, nn_rnn_params *p);

/* LinearAttention's input positions, for the op layer and the kernel. */
enum { NN_LA_Q, NN_LA_K, NN_LA_V, NN_LA_PAST, NN_LA_DECAY, NN_LA_BETA, NN_LA_ERASE };

#endif /* NN_OPS_RECURRENT_H */
