/* cast.h - names of the data types Cast may be asked for, for the messages
 * of every backend (ops/cast.c, cpu/cast.c). */
#ifndef NN_OPS_CAST_H
#define NN_OPS_CAST_H

#include "nn_internal.h"

/* nn_dtype_name knows only the types the runtime holds; this names the
 * others too (complex, float8, float4, 2/4-bit integers) so that
 * "unsupported" says which type. */
const char *nn_cast_type_name(int dt);

#endif
