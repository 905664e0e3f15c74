/* misc.c - see ops.h for the ops of this family. */
#include "cpu/ops.h"

const nn_op_def nn_ops_misc[] = {
  {0},
};
