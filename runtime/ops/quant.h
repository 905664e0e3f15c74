/* quant.h - the linear quantizers' parameter layouts, for every backend
 * (cpu/quant.c).
 *
 * (De)QuantizeLinear: scale and zero point come per tensor (one element),
 * per axis (1-D of the axis length) or blocked (the input's rank, the axis
 * dim divided into blocks of block_size).  With the input viewed as
 * (outer, A, inner) around the axis, element (o, a, i) uses parameter 0, a,
 * or (o, a / bs, i).
 *
 * QLinearMatMul: numpy matmul broadcasting of the batch dims (1-D operands
 * promoted and the promoted dim dropped).  Scales and zero points: per
 * tensor (one element), a's per row (M elements), b's and y's per column
 * (N elements).
 *
 * Errors go through nn_fail(c).  Nothing is allocated. */
#ifndef NN_OPS_QUANT_H
#define NN_OPS_QUANT_H

#include "nn_internal.h"

enum { NN_QUANT_TENSOR, NN_QUANT_AXIS, NN_QUANT_BLOCK };

typedef struct nn_quant_layout {
  int kind;
  int64_t outer, A, inner, block, SA;
} nn_quant_layout;

/* Classify the scale's shape (input 1) against x (input 0), with the zero
 * point (input 2) when present, and fill the (outer, A, inner) view. */
nn_status nn_quant_layout_init(nn_ctx *c, const nn_node *n, nn_quant_layout *l);

typedef struct nn_qlmm_geom {
  int64_t M, K, N, batch;
  int brank;                   /* rank of the broadcast batch dims */
  int64_t bdims[NN_MAX_RANK], astr[NN_MAX_RANK], bstr[NN_MAX_RANK];
  bool a_row, b_col, y_col;    /* per-row / per-column parameters */
} nn_qlmm_geom;

/* QLinearMatMul's inputs checked (count, types, shapes, parameter sizes)
 * and its geometry. */
nn_status nn_qlmm_geom_init(nn_ctx *c, const nn_node *n, nn_qlmm_geom *g);

#endif /* NN_OPS_QUANT_H */
