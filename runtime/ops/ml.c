/* ml.c - the ml family in the op layer: its operators, their versions and
 * their shape and dtype inference (nn_ops_ml[], collected by ops/registry.c). */
#include "nn_internal.h"

/* The family's operators (ops/registry.c); infer = NULL: the CPU kernel's
 * prepare still infers the shapes. */
const nn_op_def nn_ops_ml[] = {
  {.name = "ArrayFeatureExtractor", .domain = "ai.onnx.ml", .versions = {1}},
  {.name = "Binarizer", .domain = "ai.onnx.ml", .versions = {1}, .flags = NN_OP_ELEMENTWISE},
  {.name = "LabelEncoder", .domain = "ai.onnx.ml", .versions = {1, 2, 4}},
  {.name = "TreeEnsemble", .domain = "ai.onnx.ml", .versions = {5}},
  {0},
};
