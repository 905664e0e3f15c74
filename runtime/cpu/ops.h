/* ops.h - the per-family CPU kernel tables collected by registry.c.
 * Each family file cpu/<name>.c defines one 0-terminated (name == NULL)
 * table nn_kernels_<name>, the kernels of the ops that ops/<name>.c defines;
 * the families are listed once, in ops/families.txt (expanded here through
 * the generated NN_FAMILY_LIST). */
#ifndef NN_CPU_OPS_H
#define NN_CPU_OPS_H

#include "nn_internal.h"
#include "ops/families.h"

#define NN_FAMILY_EXTERN(name) extern const nn_kernel nn_kernels_##name[];
NN_FAMILY_LIST(NN_FAMILY_EXTERN)
#undef NN_FAMILY_EXTERN

#endif
