// common.glsl - shared by the compute shaders: activation functions and the
// grid-stride loop helpers.  Needs GL_GOOGLE_include_directive.
#include "nn_vk_kinds.h"

// erf with |error| < 1.2e-7 (Numerical Recipes erfc, Chebyshev fit): GLSL has
// no erf, and the short Abramowitz-Stegun form is too coarse near 0.
float nn_erf(float x) {
  float z = abs(x);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
            t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
            t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? 1.0 - r : r - 1.0;
}

// Softplus without overflow: log(1 + e^x) = max(x, 0) + log(1 + e^-|x|).
float nn_softplus(float x) { return max(x, 0.0) + log(1.0 + exp(-abs(x))); }

float nn_sigmoid(float x) {
  // split so exp never overflows
  if (x >= 0.0)
    return 1.0 / (1.0 + exp(-x));
  float e = exp(x);
  return e / (1.0 + e);
}

// kind is a specialization constant at every call site, so the switch folds
// away when the pipeline is compiled.
float nn_act(float x, uint kind, float a, float b) {
  switch (kind) {
  case NN_VK_ACT_NONE: return x;
  case NN_VK_ACT_RELU: return x < 0.0 ? 0.0 : x;   // keeps NaN, unlike max()
  case NN_VK_ACT_LEAKY_RELU: return x < 0.0 ? a * x : x;
  case NN_VK_ACT_CLIP: return x < a ? a : (x > b ? b : x);
  case NN_VK_ACT_SIGMOID: return nn_sigmoid(x);
  case NN_VK_ACT_SILU: return x * nn_sigmoid(x);
  case NN_VK_ACT_HARD_SIGMOID: return clamp(a * x + b, 0.0, 1.0);
  case NN_VK_ACT_HARD_SWISH: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
  case NN_VK_ACT_TANH: return tanh(clamp(x, -15.0, 15.0));
  case NN_VK_ACT_ELU: return x < 0.0 ? a * (exp(x) - 1.0) : x;
  case NN_VK_ACT_SELU: return x <= 0.0 ? b * (a * exp(x) - a) : b * x;
  case NN_VK_ACT_SOFTPLUS: return nn_softplus(x);
  case NN_VK_ACT_SOFTSIGN: return x / (1.0 + abs(x));
  case NN_VK_ACT_EXP: return exp(x);
  case NN_VK_ACT_LOG: return log(x);
  case NN_VK_ACT_ABS: return abs(x);
  case NN_VK_ACT_NEG: return -x;
  case NN_VK_ACT_SQRT: return sqrt(x);
  case NN_VK_ACT_RECIPROCAL: return 1.0 / x;
  case NN_VK_ACT_FLOOR: return floor(x);
  case NN_VK_ACT_CEIL: return ceil(x);
  case NN_VK_ACT_ERF: return nn_erf(x);
  case NN_VK_ACT_GELU: return 0.5 * x * (1.0 + nn_erf(x * 0.70710678118654752));
  case NN_VK_ACT_SIN: return sin(x);
  case NN_VK_ACT_COS: return cos(x);
  case NN_VK_ACT_TAN: return tan(x);
  case NN_VK_ACT_ROUND: return roundEven(x);
  case NN_VK_ACT_SIGN: return sign(x);
  case NN_VK_ACT_MISH: return x * tanh(clamp(nn_softplus(x), -15.0, 15.0));
  case NN_VK_ACT_THRESHOLDED_RELU: return x > a ? x : 0.0;
  case NN_VK_ACT_CELU: return max(x, 0.0) + min(0.0, a * (exp(x / a) - 1.0));
  case NN_VK_ACT_SHRINK: return x < -b ? x + a : (x > b ? x - a : 0.0);
  // asin through atan: lavapipe's asin is off by 2e-4 relative
  case NN_VK_ACT_ASIN: return atan(x, sqrt(max(1.0 - x * x, 0.0)));
  case NN_VK_ACT_ACOS: return acos(x);
  case NN_VK_ACT_ATAN: return atan(x);
  case NN_VK_ACT_SINH: return sinh(x);
  case NN_VK_ACT_COSH: return cosh(x);
  case NN_VK_ACT_ASINH: return asinh(x);
  case NN_VK_ACT_ACOSH: return acosh(x);
  case NN_VK_ACT_ATANH: return atanh(x);
  case NN_VK_ACT_GELU_TANH: {
    float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(clamp(u, -15.0, 15.0)));
  }
  }
  return x;
}

// Grid-stride loops: dispatches cap their group count (maxComputeWorkGroup-
// Count is only guaranteed to be 65535), so every invocation walks the index
// space in steps of the whole grid.  Macros, not functions: this file is
// included before the shader declares its local size, and a function body
// here would see the default workgroup size of 1.
#define NN_GID (gl_GlobalInvocationID.x)
#define NN_GSTRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)
