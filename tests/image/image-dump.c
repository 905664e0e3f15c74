/* image-dump.c - one nn_image_convert() from files, for
 * tests/image/reference.py.
 *
 *   image-dump IN OUT key=value...
 *
 * IN holds the image's planes one after the other, each strideN * rows
 * bytes.  OUT gets the whole destination (nbatch slots, zero-filled before
 * the conversion).  Keys: format (GStreamer name), width, height, stride0..2,
 * matrix (601|709|2020), range (limited|full), mode (stretch|letterbox|crop),
 * rect=x,y,w,h, angle (degrees), content=x,y,w,h, pad, bgr, mean=a,b,c,d,
 * std=a,b,c,d, dtype (float|uint8), layout (nchw|nhwc), channels, dw, dh,
 * batch, nbatch, threads, simd (0|1).
 * Prints "geo" and the 13 numbers of nn_image_geometry (the angle last), or
 * "error" and the message (exit status 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model_builder.h"
#include "image/image_internal.h"
#include "nn_image.h"

static int parse_list(const char *s, double *v, int n) {
  int k = 0;
  while (k < n && *s) {
    char *end;
    v[k++] = strtod(s, &end);
    if (*end != ',')
      break;
    s = end + 1;
  }
  return k;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: image-dump IN OUT key=value...\n");
    return 1;
  }
  nn_image img;
  memset(&img, 0, sizeof img);
  nn_image_params p;
  nn_image_params_init(&p);
  nn_image_dest d;
  memset(&d, 0, sizeof d);
  d.dtype = NN_DTYPE_FLOAT;
  d.channels = 3;
  int nbatch = 1, threads = 1, simd = -1;
  img.format = NN_PIX_COUNT;
  for (int i = 3; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) {
      fprintf(stderr, "bad argument %s\n", argv[i]);
      return 1;
    }
    *eq = '\0';
    const char *k = argv[i], *v = eq + 1;
    double l[4] = {0, 0, 0, 0};
    if (!strcmp(k, "format")) {
      for (int f = 0; f < NN_PIX_COUNT; f++)
        if (!strcmp(v, nn_pixel_format_name((nn_pixel_format)f)))
          img.format = (nn_pixel_format)f;
    } else if (!strcmp(k, "width")) {
      img.width = atoi(v);
    } else if (!strcmp(k, "height")) {
      img.height = atoi(v);
    } else if (!strncmp(k, "stride", 6) && k[6] >= '0' && k[6] <= '2') {
      img.strides[k[6] - '0'] = atoi(v);
    } else if (!strcmp(k, "matrix")) {
      img.matrix = !strcmp(v, "709") ? NN_YUV_BT709 : !strcmp(v, "2020") ? NN_YUV_BT2020 : NN_YUV_BT601;
    } else if (!strcmp(k, "range")) {
      img.range = !strcmp(v, "full") ? NN_YUV_FULL : NN_YUV_LIMITED;
    } else if (!strcmp(k, "mode")) {
      p.mode = !strcmp(v, "letterbox") ? NN_RESIZE_LETTERBOX
               : !strcmp(v, "crop")    ? NN_RESIZE_CROP
                                       : NN_RESIZE_STRETCH;
    } else if (!strcmp(k, "rect")) {
      parse_list(v, l, 4);
      p.src = (nn_rect){l[0], l[1], l[2], l[3]};
    } else if (!strcmp(k, "angle")) {
      p.angle = atof(v);
    } else if (!strcmp(k, "content")) {
      parse_list(v, l, 4);
      p.content = (nn_rect){l[0], l[1], l[2], l[3]};
    } else if (!strcmp(k, "pad")) {
      p.pad_value = (float)atof(v);
    } else if (!strcmp(k, "bgr")) {
      p.bgr = atoi(v);
    } else if (!strcmp(k, "mean") || !strcmp(k, "std")) {
      int n = parse_list(v, l, 4);
      for (int c = 0; c < n; c++)
        (k[0] == 'm' ? p.mean : p.std)[c] = (float)l[c];
    } else if (!strcmp(k, "dtype")) {
      d.dtype = !strcmp(v, "uint8") ? NN_DTYPE_UINT8 : NN_DTYPE_FLOAT;
    } else if (!strcmp(k, "layout")) {
      d.layout = !strcmp(v, "nhwc") ? NN_LAYOUT_NHWC : NN_LAYOUT_NCHW;
    } else if (!strcmp(k, "channels")) {
      d.channels = atoi(v);
    } else if (!strcmp(k, "dw")) {
      d.width = atoi(v);
    } else if (!strcmp(k, "dh")) {
      d.height = atoi(v);
    } else if (!strcmp(k, "batch")) {
      d.batch_index = atoi(v);
    } else if (!strcmp(k, "nbatch")) {
      nbatch = atoi(v);
    } else if (!strcmp(k, "threads")) {
      threads = atoi(v);
    } else if (!strcmp(k, "simd")) {
      simd = atoi(v);
    } else {
      fprintf(stderr, "unknown key %s\n", k);
      return 1;
    }
  }
  if (simd >= 0)
    nn_image_simd_set(simd);

  int rc = 1;
  uint8_t *in = NULL, *out = NULL;
  nn_session *s = NULL;
  nn_image_converter *cv = NULL;
  FILE *fi = fopen(argv[1], "rb");
  if (!fi) {
    perror(argv[1]);
    goto done;
  }
  fseek(fi, 0, SEEK_END);
  long n = ftell(fi);
  fseek(fi, 0, SEEK_SET);
  in = malloc(n > 0 ? (size_t)n : 1);
  if (!in || fread(in, 1, (size_t)n, fi) != (size_t)n) {
    fclose(fi);
    fprintf(stderr, "cannot read %s\n", argv[1]);
    goto done;
  }
  fclose(fi);
  /* planes one after the other: rows of each from the format's layout */
  {
    size_t off = 0;
    const int np = nn_pixel_format_planes(img.format);
    for (int pl = 0; pl < np; pl++) {
      const int sub = (img.format == NN_PIX_NV12 || img.format == NN_PIX_NV21 ||
                       img.format == NN_PIX_I420 || img.format == NN_PIX_YV12) && pl > 0;
      const size_t rows = sub ? (size_t)(img.height + 1) / 2 : (size_t)img.height;
      img.planes[pl] = in + off;
      off += (size_t)img.strides[pl] * rows;
    }
    if (off > (size_t)n) {
      fprintf(stderr, "%s: %ld bytes, the planes need %zu\n", argv[1], n, off);
      goto done;
    }
  }
  d.nbytes = (size_t)d.channels * d.width * d.height * nn_dtype_size(d.dtype) * (size_t)nbatch;
  out = calloc(1, d.nbytes ? d.nbytes : 1);
  d.data = out;
  if (threads > 1 && !(s = mb_worker_session(threads, NULL))) {
    fprintf(stderr, "no session\n");
    goto done;
  }
  if (nn_image_converter_new(&cv) != NN_OK)
    goto done;
  nn_image_geometry g;
  nn_error err;
  if (nn_image_convert(cv, &img, &p, &d, s, &g, &err) != NN_OK) {
    printf("error %s\n", err.msg);
    rc = 2;
    goto done;
  }
  printf("geo %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n",
         g.src_x, g.src_y, g.src_width, g.src_height, g.scale_x, g.scale_y, g.offset_x, g.offset_y,
         g.content_x, g.content_y, g.content_width, g.content_height, g.angle);
  FILE *fo = fopen(argv[2], "wb");
  if (!fo || fwrite(out, 1, d.nbytes, fo) != d.nbytes) {
    perror(argv[2]);
    if (fo)
      fclose(fo);
    goto done;
  }
  fclose(fo);
  rc = 0;
done:
  nn_image_converter_free(cv);
  nn_session_free(s);
  free(in);
  free(out);
  return rc;
}
