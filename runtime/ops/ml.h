/* ml.h - what LabelEncoder's and TreeEnsemble's attributes describe, checked
 * once for every backend (cpu/ml.c).  Everything a tree ensemble or a label
 * map is made of comes from attributes: lengths agree, every node and leaf
 * id is in range, the nodes form no cycle, every feature id is inside X's
 * columns, every target id below n_targets.  Errors go through nn_fail(c). */
#ifndef NN_OPS_ML_H
#define NN_OPS_ML_H

#include "nn_internal.h"

/* ---- LabelEncoder ------------------------------------------------------------
 * Keys and values as one class each: integers (compared as int64), reals or
 * strings.  Opset 1 maps classes_strings to their index (a string input) or
 * an index to its string (an int64 input). */
enum { NN_LE_INT, NN_LE_REAL, NN_LE_STR };

/* A typed list from an attribute: strings, ints, floats, or a tensor. */
typedef struct nn_le_list {
  nn_dtype dt;
  int64_t count;
  const int64_t *ints;
  const float *floats;
  char *const *strings;
  const nn_tensor *t;
  bool present;
} nn_le_list;

typedef struct nn_le_types {
  nn_le_list keys, vals;  /* opset 1: the positions have no list (ints, floats, t NULL) */
  nn_dtype vdt;           /* the values' type: the output's */
  int kcls, vcls;
} nn_le_types;

/* The keys and values of node n and their classes, checked against the
 * input's type and each other (and default_tensor against the values). */
nn_status nn_le_types_init(nn_ctx *c, const nn_node *n, nn_le_types *t);

/* ---- TreeEnsemble (5) ----------------------------------------------------------
 * Nodes: featureid, mode (BRANCH_LEQ, LT, GTE, GT, EQ, NEQ, MEMBER), split,
 * true/false successor (a node or, when the *leafs flag is set, a leaf),
 * missing_value_tracks_true.  Leaves: target id and weight.  Per row and
 * target, the trees' leaf weights are aggregated (AVERAGE, SUM, MIN, MAX),
 * then post-transformed (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT). */
enum { NN_TE_LEQ, NN_TE_LT, NN_TE_GTE, NN_TE_GT, NN_TE_EQ, NN_TE_NEQ, NN_TE_MEMBER };
enum { NN_TE_AVERAGE, NN_TE_SUM, NN_TE_MIN, NN_TE_MAX };
enum { NN_TE_NONE, NN_TE_SOFTMAX, NN_TE_LOGISTIC, NN_TE_SOFTMAX_ZERO, NN_TE_PROBIT };

typedef struct nn_te_node {
  int64_t feature;
  double split;
  int64_t next[2]; /* [0] false, [1] true: a node or a leaf index */
  uint8_t leaf[2]; /* next[k] is a leaf */
  uint8_t mode, missing_true;
  int64_t set_begin, set_end; /* MEMBER: its values in nn_tree_ensemble.set */
} nn_te_node;

/* The ensemble as flat arrays: run follows ids without a check and always
 * terminates (the nodes are acyclic). */
typedef struct nn_tree_ensemble {
  int64_t n_nodes, n_leaves, n_trees, n_targets, C;
  int agg, post;
  nn_te_node *nodes;
  int64_t *roots, *leaf_target;
  double *leaf_weight, *set;
} nn_tree_ensemble;

/* Check node n's ensemble against X (input 0, [N, C]) and build it into
 * *out, one nn_calloc block the caller frees with nn_free (a kernel may keep
 * it as its priv). */
nn_status nn_tree_ensemble_build(nn_ctx *c, const nn_node *n, nn_tree_ensemble **out);

#endif /* NN_OPS_ML_H */
