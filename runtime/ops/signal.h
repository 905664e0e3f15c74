/* signal.h - the transforms of DFT and STFT, for every backend
 * (cpu/signal.c).  Signals carry a trailing dim of 1 (real) or 2 (real,
 * imaginary).  DFT's dft_length and (from opset 20) axis, STFT's frame_step
 * and frame_length are shape inputs: their values are known at prepare.
 * Errors go through nn_fail(c).  Nothing is allocated. */
#ifndef NN_OPS_SIGNAL_H
#define NN_OPS_SIGNAL_H

#include "nn_internal.h"

typedef struct nn_dft_geom {
  int64_t n;                 /* transform length */
  int axis;                  /* DFT: the signal axis of input 0 */
  int64_t outer, inner;      /* elements before / after the axis (trailing dim excluded) */
  int64_t in_len, out_len;   /* along the axis */
  int64_t cin, cout;         /* trailing dims: 1 real, 2 complex */
  bool inverse, irfft;
  /* STFT framing */
  int64_t frames, step;
} nn_dft_geom;

nn_status nn_dft_geom_init(nn_ctx *c, const nn_node *n, nn_dft_geom *g);
nn_status nn_stft_geom_init(nn_ctx *c, const nn_node *n, nn_dft_geom *g);

#endif /* NN_OPS_SIGNAL_H */
