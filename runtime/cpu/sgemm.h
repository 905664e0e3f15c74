/* sgemm.h - packed single-precision GEMM with runtime CPU dispatch (being written). */
#ifndef NN_CPU_SGEMM_H
#define NN_CPU_SGEMM_H
#include "nn_internal.h"
#endif
