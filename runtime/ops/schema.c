/* schema.c - what every backend may take for granted about a node: the
 * operator version it resolves to and the rules of the ONNX checker for
 * that version (input / output counts, required slots, the attribute set
 * and types), checked once at load for every kernel of every backend.
 * The table is generated (tools/gen-op-schema.py -> schema_table.h). */
#include <stdio.h>
#include <string.h>

#include "nn_internal.h"

/* What the ONNX schema of an operator version fixes (tools/gen-op-schema.py
 * writes the table of every implemented operator version: schema_table.h). */
typedef struct nn_attr_spec {
  const char *name;
  int type; /* nn_attr_type */
} nn_attr_spec;

typedef struct nn_op_schema {
  const char *op;
  int since;
  int min_in, max_in, min_out, max_out; /* max -1: variadic, unbounded */
  uint32_t req_in, req_out;             /* slots < 32 that must not be empty */
  int req_in_from, req_out_from;        /* every slot from here on (variadic) too */
  const nn_attr_spec *attrs;            /* the version's whole set, NULL-terminated;
                                             NULL when unknown (not checked) */
} nn_op_schema;

#include "ops/schema_table.h"

bool nn_op_domain_is_default(const char *d) {
  return d == NULL || d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

int nn_op_resolve_version(const nn_op_def *op, int opset) {
  int best = 0;
  for (int i = 0; i < NN_MAX_VERSIONS && op->versions[i]; i++)
    if (op->versions[i] <= opset)
      best = op->versions[i];
  return best;
}

static const char *attr_type_name(int t) {
  static const char *const names[] = {"UNDEFINED",      "FLOAT",      "INT",        "STRING",
                                      "TENSOR",         "GRAPH",      "FLOATS",     "INTS",
                                      "STRINGS",        "TENSORS",    "GRAPHS",     "SPARSE_TENSOR",
                                      "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
  return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "?";
}

/* The rules of the ONNX checker for a node (input and output counts in
 * range, required slots not empty, only the attributes the operator version
 * defines, each of its declared type) are what
 * every kernel relies on when it reads n->x[0] or n->y[0] without a check or
 * reads an attribute through a typed getter: enforce them once, for all
 * kernels, at load. */
nn_status nn_op_check_schema(const nn_node *n, nn_error *err) {
  if (!nn_op_domain_is_default(n->domain))
    return NN_OK; /* ops of other domains have no schema here: their kernels check */
  const nn_op_schema *best = NULL;
  for (size_t i = 0; i < sizeof op_schema_table / sizeof op_schema_table[0]; i++) {
    const nn_op_schema *a = &op_schema_table[i];
    if (a->since <= n->opset && strcmp(a->op, n->op_type) == 0 && (!best || a->since > best->since))
      best = a;
  }
  if (!best)
    return NN_OK;
  const char *what[2] = {"inputs", "outputs"};
  for (int io = 0; io < 2; io++) {
    int cnt = io ? n->n_out : n->n_in_model;
    const int *slots = io ? n->out : n->in;
    int mn = io ? best->min_out : best->min_in, mx = io ? best->max_out : best->max_in;
    uint32_t req = io ? best->req_out : best->req_in;
    int from = io ? best->req_out_from : best->req_in_from;
    if (cnt < mn || (mx >= 0 && cnt > mx)) {
      char range[32];
      if (mx < 0)
        snprintf(range, sizeof range, "at least %d", mn);
      else if (mn == mx)
        snprintf(range, sizeof range, "%d", mn);
      else
        snprintf(range, sizeof range, "%d to %d", mn, mx);
      return nn_error_set(err, NN_ERR_INVALID_MODEL,
                          "node '%s' (%s-%d) has %d %s, the operator takes %s", n->name, n->op_type,
                          best->since, cnt, what[io], range);
    }
    for (int k = 0; k < cnt; k++)
      if (slots[k] < 0 && ((k < 32 && (req >> k & 1u)) || k >= from))
        return nn_error_set(err, NN_ERR_INVALID_MODEL, "node '%s' (%s): required %s %d is empty",
                            n->name, n->op_type, io ? "output" : "input", k);
  }
  for (int i = 0; best->attrs && i < n->n_attrs; i++) {
    const nn_attr *a = &n->attrs[i];
    const nn_attr_spec *sp = best->attrs;
    while (sp->name && strcmp(sp->name, a->name) != 0)
      sp++;
    /* an attribute this version does not define is refused, as the ONNX
       checker does: ReduceSum-13 takes its axes as an input, and an `axes`
       attribute left over from opset 11 would silently reduce over all */
    if (!sp->name)
      return nn_error_set(err, NN_ERR_INVALID_MODEL,
                          "node '%s' (%s-%d): attribute '%s' is not defined by the operator at "
                          "opset %d",
                          n->name, n->op_type, best->since, a->name, n->opset);
    /* UNDEFINED reads as absent; an INT where a FLOAT is declared reads as
       that number (nn_attr_float): both harmless, so both tolerated */
    bool ok = (int)a->type == sp->type || a->type == NN_ATTR_UNDEFINED ||
              (sp->type == NN_ATTR_FLOAT && a->type == NN_ATTR_INT);
    if (!ok)
      return nn_error_set(err, NN_ERR_INVALID_MODEL,
                          "node '%s' (%s): attribute '%s' has type %s, the operator declares %s",
                          n->name, n->op_type, a->name, attr_type_name((int)a->type),
                          attr_type_name(sp->type));
  }
  /* Constant: exactly one of its value attributes (the rule of the ONNX
     Constant schema); with two, which one the kernel reads is arbitrary */
  if (strcmp(n->op_type, "Constant") == 0) {
    const char *first = NULL;
    int values = 0;
    for (int i = 0; i < n->n_attrs; i++)
      if (strcmp(n->attrs[i].name, "value") == 0 || strncmp(n->attrs[i].name, "value_", 6) == 0 ||
          strcmp(n->attrs[i].name, "sparse_value") == 0) {
        if (values++ == 1)
          return nn_error_set(err, NN_ERR_INVALID_MODEL,
                              "node '%s' (Constant): attributes '%s' and '%s' both give the value; "
                              "exactly one is allowed",
                              n->name, first, n->attrs[i].name);
        first = n->attrs[i].name;
      }
    if (values == 0)
      return nn_error_set(err, NN_ERR_INVALID_MODEL, "node '%s' (Constant) has no value attribute",
                          n->name);
  }
  return NN_OK;
}
