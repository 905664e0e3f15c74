/* batchnorm.c - BatchNormalization folded into a Conv's weights
 * (batchnorm.h). */
#include <math.h>
#include <string.h>

#include "ops/batchnorm.h"

bool nn_bn_fold_candidate(const nn_node *bn) {
  return bn->domain[0] == '\0' && strcmp(bn->op_type, "BatchNormalization") == 0 && bn->n_in >= 5 &&
         nn_attr_int(bn, "training_mode", 0) == 0;
}

void nn_bn_fold_into_conv(const nn_node *bn, int64_t m, int64_t per, const float *scale,
                          const float *shift, const float *mean, const float *var, float *w,
                          float *b) {
  float eps = nn_attr_float(bn, "epsilon", 1e-5f);
  for (int64_t o = 0; o < m; o++) {
    float s = scale[o] / sqrtf(var[o] + eps);
    for (int64_t j = 0; j < per; j++)
      w[o * per + j] *= s;
    b[o] = (b[o] - mean[o]) * s + shift[o];
  }
}
