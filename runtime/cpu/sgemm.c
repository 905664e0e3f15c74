/* sgemm.c - packed single-precision GEMM (being written). */
#include "cpu/sgemm.h"
