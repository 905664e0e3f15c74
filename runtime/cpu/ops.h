/* ops.h - the per-family operator tables collected by registry.c.
 * Each family file cpu/<name>.c defines one 0-terminated (name == NULL)
 * table nn_ops_<name>; the families and what each holds are listed once, in
 * ops/families.txt (expanded here through the generated NN_FAMILY_LIST). */
#ifndef NN_CPU_OPS_H
#define NN_CPU_OPS_H

#include "nn_internal.h"
#include "ops/families.h"

#define NN_FAMILY_EXTERN(name) extern const nn_op_def nn_ops_##name[];
NN_FAMILY_LIST(NN_FAMILY_EXTERN)
#undef NN_FAMILY_EXTERN

#endif
