/* make-test-models - writes the small synthetic ONNX models the gst-check
 * tests use (built at build time with tests/model_builder.h).
 *
 *   make-test-models OUTDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_builder.h"

static int
write_model (mb * m, const char *dir, const char *name)
{
  char path[4096];
  size_t n;
  uint8_t *buf = mb_pack (m, &n);
  FILE *f;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  f = fopen (path, "wb");
  if (!f || fwrite (buf, 1, n, f) != n) {
    fprintf (stderr, "make-test-models: cannot write %s\n", path);
    free (buf);
    if (f)
      fclose (f);
    return 1;
  }
  fclose (f);
  free (buf);
  mb_free (m);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *dir;
  int rc = 0;
  mb m;

  if (argc != 2) {
    fprintf (stderr, "usage: make-test-models OUTDIR\n");
    return 2;
  }
  dir = argv[1];

  /* Float NCHW, dynamic batch/height/width: y = Relu(x) = x for x >= 0. */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {-1, 3, -1, -1});
  mb_node (&m, "Relu", "relu0", "x", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "relu-f32-nchw-dyn.onnx");

  /* Float NHWC, fixed 6x4 (w x h). */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 4, 6, 3});
  mb_node (&m, "Relu", "relu0", "x", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "relu-f32-nhwc-6x4.onnx");

  /* Float NCHW gray, dynamic. */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 1, -1, -1});
  mb_node (&m, "Relu", "relu0", "x", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "relu-f32-gray-dyn.onnx");

  /* uint8 NHWC 8x8 RGB: the frame is the tensor (zero-copy); y = float(x). */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_UINT8, 4, (int64_t[]) {1, 8, 8, 3});
  {
    OnnxSubset__NodeProto *n = mb_node (&m, "Cast", "cast0", "x", "y");
    mb_attr_int (&m, n, "to", NN_DTYPE_FLOAT);
  }
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "cast-u8-nhwc-8x8.onnx");

  /* uint8 NCHW 8x8 RGB, two outputs (y = float(x), z = Relu(y)). */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_UINT8, 4, (int64_t[]) {1, 3, 8, 8});
  {
    OnnxSubset__NodeProto *n = mb_node (&m, "Cast", "cast0", "x", "y");
    mb_attr_int (&m, n, "to", NN_DTYPE_FLOAT);
  }
  mb_node (&m, "Relu", "relu0", "y", "z");
  mb_output (&m, "y");
  mb_output (&m, "z");
  rc |= write_model (&m, dir, "cast-u8-nchw-8x8.onnx");

  /* The mean colour of the input (region tests: each crop can be checked
   * exactly, since shrinking by the area filter keeps the mean): dynamic
   * batch, and batch 1. */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {-1, 3, 16, 16});
  mb_node (&m, "GlobalAveragePool", "gap0", "x", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "mean-colour-dyn.onnx");
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 3, 16, 16});
  mb_node (&m, "GlobalAveragePool", "gap0", "x", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "mean-colour-b1.onnx");

  /* A run-time failure that depends on the pixels: y = table[x] with a
   * table of 10 entries, so any pixel value >= 10 is an index out of range
   * (the error must reach the application with the runtime's text). */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_UINT8, 4, (int64_t[]) {1, 8, 8, 3});
  {
    static const float table[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    OnnxSubset__NodeProto *n = mb_node (&m, "Cast", "cast0", "x", "idx");
    mb_attr_int (&m, n, "to", NN_DTYPE_INT64);
    mb_init_f32 (&m, "table", 1, (int64_t[]) {10}, table);
    mb_node (&m, "Gather", "lookup_node", "table,idx", "y");
  }
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "gather-u8-8x8.onnx");

  /* Half-precision outputs (post-messages summaries must read them). */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 4, 6, 3});
  {
    OnnxSubset__NodeProto *n = mb_node (&m, "Cast", "cast16", "x", "h");
    mb_attr_int (&m, n, "to", NN_DTYPE_FLOAT16);
    n = mb_node (&m, "Cast", "castbf", "x", "b");
    mb_attr_int (&m, n, "to", NN_DTYPE_BFLOAT16);
  }
  mb_output (&m, "h");
  mb_output (&m, "b");
  rc |= write_model (&m, dir, "cast-half-6x4.onnx");

  /* An operator nobody implements. */
  mb_init (&m, 13);
  mb_input (&m, "x", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 3, 8, 8});
  mb_node (&m, "FrobnicateOp", "frob_node_7", "x", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "unsupported-op.onnx");

  /* Two image inputs. */
  mb_init (&m, 13);
  mb_input (&m, "left", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 3, 8, 8});
  mb_input (&m, "right", NN_DTYPE_FLOAT, 4, (int64_t[]) {1, 3, 8, 8});
  mb_node (&m, "Add", "add0", "left,right", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "two-inputs.onnx");

  /* An input that is no image (int64 vector). */
  mb_init (&m, 13);
  mb_input (&m, "ids", NN_DTYPE_INT64, 1, (int64_t[]) {16});
  mb_node (&m, "Identity", "id0", "ids", "y");
  mb_output (&m, "y");
  rc |= write_model (&m, dir, "not-an-image.onnx");

  /* Not ONNX at all: a wire type protobuf rejects. */
  {
    char path[4096];
    static const unsigned char junk[] = "\xff\xff\xff\xff\x0f not an onnx model\n";
    FILE *f;
    snprintf (path, sizeof path, "%s/not-onnx.onnx", dir);
    f = fopen (path, "wb");
    if (!f || fwrite (junk, 1, sizeof junk - 1, f) != sizeof junk - 1)
      rc = 1;
    if (f)
      fclose (f);
  }
  return rc;
}
