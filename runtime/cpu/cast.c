/* cast.c - Cast and CastLike between every numeric type the runtime holds
 * and bool.
 *
 * A conversion goes source dtype -> its compute domain -> the target's
 * domain -> target dtype (ew_conv.h), in stack chunks.  The semantics follow
 * numpy's astype, which the ONNX reference uses: float -> integer truncates
 * toward zero (out-of-range values saturate to int64 and then wrap to the
 * target width; NaN gives 0), anything -> bool is "nonzero" (NaN is true),
 * float -> float16/bfloat16 rounds to nearest even.  Strings, complex,
 * float8, float4 and the 2/4-bit integer types are refused as unsupported.
 *
 * BitCast (26) reinterprets the bytes of every element as another type of the
 * same width (float32 <-> int32, bool <-> uint8, ...): a copy, or nothing
 * when the planner lets the output share the input's buffer.  Strings (whose
 * elements are views, not bytes) and types of other widths are refused.
 */
#include <string.h>

#include "cpu/ew_conv.h"
#include "cpu/ops.h"
#include "ops/cast.h"

/* The op layer checked the attributes and set Y (ops/cast.c): the kernel
 * converts between the numeric types and bool, not strings. */
static nn_status cast_prepare(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  const nn_dtype to = n->y[0]->dtype;
  if (!ew_dtype_ok(x->dtype))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "casting from %s (type %d) is not supported",
                   nn_cast_type_name(x->dtype), (int)x->dtype);
  if (!ew_dtype_ok(to))
    return nn_fail(c, NN_ERR_UNSUPPORTED, "casting to %s (type %d) is not supported",
                   nn_cast_type_name(to), (int)to);
  return NN_OK;
}

typedef struct cast_exec {
  nn_dtype dx, dy;
  const char *x;
  char *y;
  size_t ex, ey;
} cast_exec;

static void cast_range(void *arg, int64_t begin, int64_t end) {
  const cast_exec *e = arg;
  const ew_dom from = ew_dom_of(e->dx);
  const char *x = e->x + begin * (int64_t)e->ex;
  char *y = e->y + begin * (int64_t)e->ey;
  const int64_t len = end - begin;
  uint64_t buf[EW_CHUNK], tmp[EW_CHUNK];
  for (int64_t i = 0; i < len; i += EW_CHUNK) {
    int64_t m = len - i < EW_CHUNK ? len - i : EW_CHUNK;
    const void *v = ew_fetch(e->dx, x + i * (int64_t)e->ex, m, from, buf, tmp);
    ew_put(from, v, e->dy, y + i * (int64_t)e->ey, m, tmp);
  }
}

static nn_status cast_run(nn_ctx *c, nn_node *n) {
  const nn_value *x = n->x[0];
  nn_value *y = n->y[0];
  if (x->dtype == y->dtype) {
    if (x->data != y->data)
      memcpy(y->data, x->data, y->nbytes);
    return NN_OK;
  }
  cast_exec e = {x->dtype, y->dtype, x->data, y->data, nn_dtype_size(x->dtype),
                 nn_dtype_size(y->dtype)};
  if (x->numel > 0)
    nn_parallel_for(c, x->numel, EW_GRAIN, cast_range, &e);
  return NN_OK;
}

static nn_status bitcast_run(nn_ctx *c, nn_node *n) {
  (void)c;
  if (n->y[0]->data != n->x[0]->data && n->y[0]->nbytes)
    memcpy(n->y[0]->data, n->x[0]->data, n->y[0]->nbytes);
  return NN_OK;
}

/* BitCast copies bytes: every pair of types ops/cast.c admits is fine. */
const nn_kernel nn_kernels_cast[] = {
  {.name = "Cast", .prepare = cast_prepare, .run = cast_run},
  {.name = "CastLike", .prepare = cast_prepare, .run = cast_run},
  {.name = "BitCast", .run = bitcast_run},
  {0},
};
