/* misc.c - ops that fit no other family (see ops.h).
 *
 * The kernels live in private headers grouped by theme; this file is the
 * only translation unit and holds the table:
 *   misc_attention.h   Attention, RotaryEmbedding, SwiGLU
 *   misc_recurrent.h   LinearAttention, CausalConvWithState
 *   misc_rnn.h         RNN, GRU, LSTM
 *   misc_loss.h        NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
 *   misc_linalg.h      Einsum, Det
 *   misc_quant.h       QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
 *   misc_sample.h      GridSample, AffineGrid, Col2Im, RoiAlign
 *   misc_nms.h         NonMaxSuppression
 *   misc_select.h      Unique, NonZero
 *   misc_signal.h      Hann/Hamming/BlackmanWindow, MelWeightMatrix
 *   misc_fft.h         DFT, STFT
 *   misc_text.h        TfIdfVectorizer
 * Versions list the ONNX since-versions whose semantics the kernels
 * implement; type-only revisions (NLL-13/22, SCE-13, Det-22, GridSample-22,
 * RoiAlign-22, RNN/GRU/LSTM-22, ...) need none.  Ops whose output size is
 * the data (NonMaxSuppression, Unique, NonZero) declare the deciding inputs
 * as shape inputs, so the planner hands their values to prepare. */
#include "misc_common.h"

#include "misc_attention.h"
#include "misc_fft.h"
#include "misc_linalg.h"
#include "misc_loss.h"
#include "misc_nms.h"
#include "misc_quant.h"
#include "misc_recurrent.h"
#include "misc_rnn.h"
#include "misc_sample.h"
#include "misc_select.h"
#include "misc_signal.h"
#include "misc_text.h"

const nn_op_def nn_ops_misc[] = {
  {"Attention", NULL, {23, 24}, 0, 0, attn_prepare, attn_run},
  {"RotaryEmbedding", NULL, {23}, 0, 0, rope_prepare, rope_run},
  {"LinearAttention", NULL, {27}, 0, 0, la_prepare, la_run},
  {"CausalConvWithState", NULL, {27}, 0, 0, ccs_prepare, ccs_run},
  {"RNN", NULL, {7, 14}, 0, 0, rnn_prepare, rnn_run},
  {"GRU", NULL, {7, 14}, 0, 0, gru_prepare, rnn_run},
  {"LSTM", NULL, {7, 14}, 0, 0, lstm_prepare, rnn_run},
  {"SwiGLU", NULL, {28}, 0, NN_OP_ELEMENTWISE, swiglu_prepare, swiglu_run},
  {"NegativeLogLikelihoodLoss", NULL, {12}, 0, 0, nll_prepare, nll_run},
  {"SoftmaxCrossEntropyLoss", NULL, {12}, 0, 0, sce_prepare, sce_run},
  {"Einsum", NULL, {12}, 0, 0, einsum_prepare, einsum_run},
  {"Det", NULL, {11}, 0, 0, det_prepare, det_run},
  {"DequantizeLinear", NULL, {10, 13, 19, 21, 23, 25}, 0, 0, dequant_prepare, dequant_run},
  {"QuantizeLinear", NULL, {10, 13, 19, 21, 23, 25}, 0, 0, quant_prepare, quant_run},
  {"DynamicQuantizeLinear", NULL, {11}, 0, 0, dynq_prepare, dynq_run},
  {"GridSample", NULL, {16, 20}, 0, 0, gs_prepare, gs_run},
  {"AffineGrid", NULL, {20}, 1u << 1, 0, affine_prepare, affine_run},
  {"Col2Im", NULL, {18}, (1u << 1) | (1u << 2), 0, col2im_prepare, col2im_run},
  {"RoiAlign", NULL, {10, 16}, 0, 0, roi_prepare, roi_run},
  /* every NMS input decides how many boxes survive, hence the output shape */
  {"NonMaxSuppression", NULL, {10, 11}, 0x1f, 0, nms_prepare, nms_run},
  {"Unique", NULL, {11}, 1u << 0, 0, uniq_prepare, uniq_run},
  {"NonZero", NULL, {9, 13}, 1u << 0, 0, nz_prepare, nz_run},
  {"HannWindow", NULL, {17}, 1u << 0, 0, window_prepare, hann_run},
  {"HammingWindow", NULL, {17}, 1u << 0, 0, window_prepare, hamming_run},
  {"BlackmanWindow", NULL, {17}, 1u << 0, 0, window_prepare, blackman_run},
  {"DFT", NULL, {17, 20}, (1u << 1) | (1u << 2), 0, dft_prepare, dft_run},
  {"STFT", NULL, {17}, (1u << 1) | (1u << 3), 0, stft_prepare, stft_run},
  {"TfIdfVectorizer", NULL, {9}, 0, 0, tfidf_prepare, tfidf_run},
  {"MelWeightMatrix", NULL, {17}, (1u << 0) | (1u << 1), 0, mel_prepare, mel_run},
  {0},
};
