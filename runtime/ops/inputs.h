/* inputs.h - reading what an op needs to know at prepare: integer-list
 * inputs (Slice's starts, Pad's pads, a reduction's axes...), axis lists and
 * string attributes that pick one of a few modes.
 * For the op layer's parsers and the CPU kernels alike (cpu/shp_common.h
 * names them for the kernels).  Errors go through nn_fail(c); nothing is
 * allocated. */
#ifndef NN_OPS_INPUTS_H
#define NN_OPS_INPUTS_H

#include "nn_internal.h"

/* Input / output i of a node, NULL when omitted (empty name) or absent. */
static inline nn_value *nn_op_in(const nn_node *n, int i) { return i < n->n_in ? n->x[i] : NULL; }
static inline nn_value *nn_op_out(const nn_node *n, int i) {
  return i < n->n_out ? n->y[i] : NULL;
}

/* Refuse a value whose dtype the runtime cannot hold (complex, sub-byte:
 * nn_dtype_size 0): the ops that only move elements take every other one. */
nn_status nn_op_held(nn_ctx *c, const nn_value *v);

/* A 1-D (or scalar) integer input whose values are needed at prepare, into
 * out[<= max]; *count = its length.  Refused, with the reason, when it is
 * unknown, not integer, of rank > 1 or longer than max. */
nn_status nn_op_ints(nn_ctx *c, const nn_value *v, const char *what, int64_t *out, int max,
                     int *count);

/* n axes normalized against rank into out; an axis out of range or repeated
 * is refused (`what` names the list in the message). */
nn_status nn_op_norm_axes(nn_ctx *c, const int64_t *axes, int n, int rank, int *out,
                          const char *what);

/* Index of a string attribute's value in `choices` (NULL-terminated) into
 * *out; an unknown value is refused as unsupported, naming the attribute. */
nn_status nn_op_attr_choice(nn_ctx *c, const nn_node *n, const char *name, const char *def,
                            const char *const *choices, int *out);

#endif /* NN_OPS_INPUTS_H */
