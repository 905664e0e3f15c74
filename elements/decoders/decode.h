/* decode.h - turn model output tensors into detections, and draw them.
 *
 * The `nndecode` library: plain C11, no GLib or GStreamer types, so it is
 * unit-tested on known tensors without a pipeline.  The GStreamer elements
 * (tensordecoder, roioverlay) are thin wrappers around it.
 *
 *   decoders    BlazeFace (MediaPipe front 128 and back 256), SSD (raw with priors, or
 *               already post-processed), YOLOv5 [1,N,5+C], YOLOv8 [1,4+C,N],
 *               classification top-k.  One nd_decoder per stream.
 *   OCR         DBNet text detection (nd_dbnet: probability map -> rotated
 *               boxes) and CTC text recognition (nd_ctc: -> UTF-8 text),
 *               PaddleOCR's post-processing; objects of their own.
 *   nms         IoU, hard and weighted (MediaPipe) non-maximum suppression.
 *   transform   model input pixels -> frame pixels, through the geometry the
 *               producer recorded (source rectangle, scale, offset) or the
 *               scaling assumed in front of the model (stretch, letterbox,
 *               crop).
 *   labels      a labels file, one label per line.
 *   draw        boxes, points and text labels (pango+cairo) on RGB/BGR/
 *               RGBA/BGRA/RGBx/BGRx/I420/NV12 frames.
 *
 * Ownership: every object returned through an `**out` parameter is
 * caller-owned and released with the matching *_free() function.  Result
 * arrays are decoder-owned, valid until the next decode or free.
 *
 * Errors: functions return an nd_status; when an nd_error is passed it gets
 * the status and a human-readable message naming the tensor and what was
 * expected ("scores 'Identity:0': expected dims [1,N,1], got [1,512,2]").
 * Malformed input never crashes: every dimension and byte count is checked
 * before the data is read.
 *
 * Allocations: nd_decoder_new() allocates what the configuration implies
 * (anchors, labels); the first decode of a given tensor size allocates the
 * candidate scratch; after that, decoding the same sizes allocates nothing.
 *
 * Threading: one nd_decoder / nd_text_renderer must not be used by two
 * threads at once; distinct objects are independent.
 */
#ifndef ND_DECODE_H
#define ND_DECODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ND_MAX_DIMS 8
/* Keypoints per detection: BlazeFace has 6; room for small pose models. */
#define ND_MAX_KEYPOINTS 8

typedef enum nd_status {
  ND_OK = 0,
  ND_ERR_INVALID_ARG,   /* NULL pointer, bad configuration value */
  ND_ERR_MISSING,       /* a tensor the scheme needs is not among the outputs */
  ND_ERR_RANK,          /* a tensor has the wrong number of dimensions */
  ND_ERR_DIMS,          /* a tensor has the wrong dimensions */
  ND_ERR_DTYPE,         /* a tensor's element type is not supported */
  ND_ERR_SIZE,          /* a tensor's byte size does not match its dims */
  ND_ERR_NOMEM,         /* an allocation failed */
  ND_ERR_IO,            /* a file cannot be read */
  ND_ERR_PARSE,         /* a file is malformed */
  ND_ERR_UNSUPPORTED,   /* e.g. a pixel format the drawing code does not know */
  ND_ERR_TEXT,          /* pango/cairo failed to render a label */
} nd_status;

typedef struct nd_error {
  nd_status status;
  char msg[256];
} nd_error;

/* Static name of a status, e.g. "ND_ERR_DIMS". */
const char *nd_status_str(nd_status st);

/* ---- tensors ---------------------------------------------------------------
 * A borrowed view of one model output: the same fields as GstOnnxTensor and
 * nn_tensor, so the elements fill it without copying data. */

/* Element types: the values of ONNX's TensorProto.DataType.  Decoders read
 * float32, float16 and float64 (and uint8/int8 as plain numbers). */
enum {
  ND_DTYPE_FLOAT32 = 1,
  ND_DTYPE_UINT8 = 2,
  ND_DTYPE_INT8 = 3,
  ND_DTYPE_INT32 = 6,
  ND_DTYPE_INT64 = 7,
  ND_DTYPE_FLOAT16 = 10,
  ND_DTYPE_FLOAT64 = 11,
};

typedef struct nd_tensor {
  const char *name;            /* output name, may be NULL */
  int dtype;                   /* ND_DTYPE_* (ONNX values) */
  int n_dims;                  /* 0 .. ND_MAX_DIMS */
  int64_t dims[ND_MAX_DIMS];
  const void *data;            /* dense, row-major, borrowed */
  size_t size;                 /* bytes readable at data */
} nd_tensor;

/* ---- detections ------------------------------------------------------------ */

typedef struct nd_point {
  float x, y;
} nd_point;

/* One result.  Coordinates are pixels of the model input (0..model_w,
 * 0..model_h) as decoders return them, and frame pixels after
 * nd_transform_detection().  For classification the box covers the whole
 * input. */
typedef struct nd_detection {
  float x0, y0, x1, y1;        /* top-left and bottom-right corners */
  float score;                 /* 0..1 */
  int class_id;                /* index into the labels; BlazeFace: 0 (face) */
  int n_keypoints;
  nd_point keypoints[ND_MAX_KEYPOINTS];
} nd_detection;

/* Intersection over union of two boxes (0 when either is empty). */
float nd_iou(const nd_detection *a, const nd_detection *b);

/* ---- decoders -------------------------------------------------------------- */

typedef enum nd_scheme {
  ND_SCHEME_BLAZEFACE = 0,     /* MediaPipe BlazeFace front 128x128 / back 256x256 */
  ND_SCHEME_SSD,               /* boxes + class scores (raw or post-processed) */
  ND_SCHEME_YOLOV5,            /* [1,N,5+C]: cx,cy,w,h,objectness,classes */
  ND_SCHEME_YOLOV8,            /* [1,4+C,N]: cx,cy,w,h,classes (no objectness) */
  ND_SCHEME_CLASSIFY,          /* [1,C] scores or logits -> top-k */
} nd_scheme;

/* Static lower-case name ("blazeface", "ssd", ...). */
const char *nd_scheme_name(nd_scheme s);

/* How raw box values are laid out (SSD). */
typedef enum nd_box_format {
  ND_BOX_YXYX = 0,             /* ymin,xmin,ymax,xmax (TensorFlow) */
  ND_BOX_XYXY,                 /* xmin,ymin,xmax,ymax */
  ND_BOX_CXCYWH,               /* center x, center y, width, height */
  ND_BOX_CYCXHW,               /* center y, center x, height, width (TF SSD encoding) */
} nd_box_format;

typedef enum nd_activation {
  ND_ACT_AUTO = 0,             /* scheme default (see nd_config) */
  ND_ACT_NONE,                 /* values already are probabilities */
  ND_ACT_SIGMOID,
  ND_ACT_SOFTMAX,              /* over the class axis */
} nd_activation;

typedef enum nd_layout {
  ND_LAYOUT_AUTO = 0,          /* YOLO: the smaller of the two axes holds the channels */
  ND_LAYOUT_CHANNELS_LAST,     /* [1,N,K] */
  ND_LAYOUT_CHANNELS_FIRST,    /* [1,K,N] */
} nd_layout;

/* Decoder configuration.  nd_config_init() fills the scheme's defaults;
 * change what you need, then nd_decoder_new() copies it (pointers inside
 * are not kept). */
/* score_threshold value meaning "the model's default": BlazeFace front 0.5,
 * back 0.65 (MediaPipe's min_score_thresh); other schemes their
 * nd_config_init() value. */
#define ND_SCORE_DEFAULT (-1.0f)

typedef struct nd_config {
  nd_scheme scheme;
  float score_threshold;       /* keep results with score >= this (0..1), or
                                  ND_SCORE_DEFAULT (BlazeFace's default) */
  float iou_threshold;         /* NMS: suppress when IoU > this (0..1) */
  int max_detections;          /* at most this many results, best first (>= 1) */
  int model_width;             /* model input size in pixels; 0: the scheme's */
  int model_height;            /*   default (BlazeFace 128, YOLO 640, SSD 300);
                                  nd_decoder_set_model_size() changes it */
  int num_classes;             /* 0: from the tensor's dims */

  /* Which outputs to read, by name (NULL: found by shape). */
  const char *output_tensor;   /* YOLO, classify: the one output to read */
  const char *boxes_tensor;    /* BlazeFace (concatenated), SSD */
  const char *scores_tensor;   /* BlazeFace (concatenated), SSD */
  const char *classes_tensor;  /* SSD post-processed: class ids */

  /* SSD */
  nd_box_format box_format;    /* default ND_BOX_YXYX */
  int box_normalized;          /* boxes in 0..1 of the input (1) or pixels (0); default 1 */
  const float *priors;         /* n_priors x (cx,cy,w,h), normalized; NULL: boxes are absolute */
  int n_priors;
  float variances[4];          /* center-size encoding scales; default 0.1,0.1,0.2,0.2 */
  int background_class;        /* class index to ignore; -1: none (default) */
  nd_activation activation;    /* SSD default SIGMOID, classify default AUTO
                                  (softmax unless the values already sum to 1) */
  /* YOLO */
  nd_layout layout;
  int class_agnostic_nms;      /* 1: suppress across classes; default 0 */

  /* classification */
  int top_k;                   /* default 5 */

  /* BlazeFace */
  int weighted_nms;            /* MediaPipe's weighted NMS (default 1 for BlazeFace) */
} nd_config;

void nd_config_init(nd_config *cfg, nd_scheme scheme);

typedef struct nd_decoder nd_decoder;

nd_status nd_decoder_new(const nd_config *cfg, nd_decoder **out, nd_error *err);

/* Decode one inference.  tensors: all outputs of the model (the decoder
 * picks the ones it needs by name or shape).  On success *results points to
 * *n_results detections, best first, owned by the decoder and valid until
 * the next decode or free; *n_results may be 0.  On failure *n_results is 0
 * and err says which tensor is wrong and how. */
nd_status nd_decoder_decode(nd_decoder *dec, const nd_tensor *tensors, int n_tensors,
                            const nd_detection **results, int *n_results,
                            nd_error *err);

/* The model input size the decoder assumes. */
void nd_decoder_model_size(const nd_decoder *dec, int *width, int *height);

/* Decode the following inferences for a model input of width x height
 * pixels (e.g. the producer's recorded input size); 0 for either goes back
 * to the configured size (nd_config.model_width/height, else the scheme's
 * default).  BlazeFace derives its anchors from the size: 128x128 is
 * MediaPipe's face_detection_front (strides 8,16,16,16), 256x256
 * face_detection_back (strides 16,32,32,32); any other size is refused with
 * ND_ERR_UNSUPPORTED and the decoder keeps its previous size.  Allocates
 * only when the size changes (BlazeFace anchors); a no-op otherwise. */
nd_status nd_decoder_set_model_size(nd_decoder *dec, int width, int height, nd_error *err);

/* The model variant in use, a static string: BlazeFace "front" or "back";
 * NULL for the other schemes. */
const char *nd_decoder_variant(const nd_decoder *dec);

/* The configuration in use (decoder-owned). */
const nd_config *nd_decoder_config(const nd_decoder *dec);

void nd_decoder_free(nd_decoder *dec);

/* Names of BlazeFace's six keypoints, in output order (static strings). */
const char *nd_blazeface_keypoint_name(int index);

/* ---- text detection: DBNet probability map -> rotated boxes ----------------
 * PaddleOCR's DBPostProcess (box_type 'quad', score_mode 'fast') on the
 * output of ch_PP-OCRv4_det and other DBNet exports: a [1,1,H,W]
 * probability map (H, W = the model input, any size up to ND_DBNET_MAX_DIM).
 *   binary map p > threshold -> connected regions (8- or 4-connectivity,
 *   run-based union-find, no recursion; 8 matches OpenCV's findContours)
 *   -> convex hull of each region (pixel centers) -> minimum-area rectangle
 *   (each hull edge tried as a side, the rotating-calipers theorem)
 *   -> shortest side < min_size: dropped
 *   -> score = mean probability of the pixels inside the rectangle;
 *      score < box_threshold: dropped
 *   -> unclipped: width and height grow by 2 * area * unclip_ratio / perimeter
 *   -> shortest side < min_size + 2: dropped (PaddleOCR's second check).
 * At most max_candidates regions are examined (PaddleOCR: the first 1000
 * contours), in raster order of their first pixel; boxes come out in that
 * order.  Coordinates are pixels of the map (= the model input), pixel
 * centers at integer coordinates, as OpenCV's contours. */

#define ND_DBNET_MAX_DIM 16384                 /* H and W each */
#define ND_DBNET_MAX_PIXELS ((int64_t)1 << 26)  /* H * W (8192 x 8192) */

/* A rotated rectangle.  points: the corners in PaddleOCR's order: top-left,
 * top-right, bottom-right, bottom-left (the two leftmost corners are the
 * left side, each side's upper one first).  width = |p1 - p0|, height =
 * |p3 - p0|, angle = the direction of p0 -> p1 in degrees, (-90, 90],
 * positive clockwise on screen (y points down). */
typedef struct nd_rbox {
  float cx, cy, width, height, angle;
  nd_point points[4];
  float score;                 /* mean probability inside, before unclip */
} nd_rbox;

typedef struct nd_dbnet_config {
  float threshold;             /* binarisation, (0,1); default 0.3 */
  float box_threshold;         /* minimum box score, [0,1]; default 0.6 */
  float unclip_ratio;          /* [0, 10]; default 1.5 */
  float min_size;              /* shortest side before unclip, map pixels, >= 0; default 3 */
  int max_candidates;          /* regions examined, >= 1; default 1000 */
  int connectivity;            /* 4 or 8; default 8 */
} nd_dbnet_config;

void nd_dbnet_config_init(nd_dbnet_config *cfg);

typedef struct nd_dbnet nd_dbnet;

/* Copies cfg (checked: an out-of-range value is ND_ERR_INVALID_ARG). */
nd_status nd_dbnet_new(const nd_dbnet_config *cfg, nd_dbnet **out, nd_error *err);
/* map: [1,1,H,W], float32/float16/float64/uint8.  *boxes: decoder-owned,
 * valid until the next decode or free; *n may be 0.  The scratch (runs of
 * text pixels, points) grows with the most text seen so far and is kept:
 * in steady state a decode allocates nothing. */
nd_status nd_dbnet_decode(nd_dbnet *db, const nd_tensor *map, const nd_rbox **boxes, int *n,
                          nd_error *err);
void nd_dbnet_free(nd_dbnet *db);

/* ---- text recognition: CTC greedy decoding ----------------------------------
 * PaddleOCR's CTCLabelDecode on [N,T,C] (or [T,C]) probabilities: argmax
 * per time step, repeats merged, blanks (index 0) dropped; index i in
 * 1..n is line i of the dictionary, n+1 is a space (use_space_char), so C
 * must be n + 2.  confidence: mean of the kept steps' maximum probability
 * (0 for an empty text).  The model's outputs should be probabilities
 * (PP-OCR's end in a softmax); rows that do not sum to 1 are taken as
 * logits and the confidence is their softmax.
 *
 * Spaces (nd_ctc_set_space_threshold): greedy decoding keeps a space only
 * where the space class wins a step, and PP-OCR's recogniser often puts it
 * second between words (0.25 to 0.5 where a reader sees a space, below 0.2
 * inside words on the pages of tests/ocr/).  With a threshold t in (0, 1),
 * a space also goes between two characters when the space class's
 * probability reaches t at a step between them (a blank or a repeat of the
 * first); t = 1 (the default of nd_ctc_new) is PaddleOCR's plain greedy
 * decoding.  An inserted space counts in n_chars, not in the confidence. */

#define ND_CTC_MAX_STEPS 65536                 /* T */
#define ND_CTC_MAX_BATCH 4096                  /* N */

typedef struct nd_ctc nd_ctc;

typedef struct nd_ctc_result {
  const char *text;            /* UTF-8, decoder-owned */
  float confidence;            /* 0..1 */
  int n_chars;                 /* dictionary entries (characters) in text */
} nd_ctc_result;

/* A PaddleOCR dictionary: one character (or string) per line. */
nd_status nd_ctc_new(const char *dictionary_path, nd_ctc **out, nd_error *err);
/* The same from n strings (copied). */
nd_status nd_ctc_new_from_strings(const char *const *chars, int n, nd_ctc **out, nd_error *err);
/* Classes the model must output: dictionary entries + 2. */
int nd_ctc_num_classes(const nd_ctc *c);
/* t in (0, 1]: see "Spaces" above; ND_ERR_INVALID_ARG outside it. */
nd_status nd_ctc_set_space_threshold(nd_ctc *c, float t, nd_error *err);
/* *rows: one per batch row, decoder-owned, valid until the next decode or
 * free.  Buffers grow on the first tensor of a size and are reused. */
nd_status nd_ctc_decode(nd_ctc *c, const nd_tensor *t, const nd_ctc_result **rows, int *n_rows,
                        nd_error *err);
void nd_ctc_free(nd_ctc *c);

/* ---- SSD anchors (MediaPipe SsdAnchorsCalculator) -------------------------- */

#define ND_MAX_ANCHOR_LAYERS 8

typedef struct nd_anchor_options {
  int input_width, input_height;
  int num_layers;
  float min_scale, max_scale;
  float anchor_offset_x, anchor_offset_y;
  int strides[ND_MAX_ANCHOR_LAYERS];
  float aspect_ratios[ND_MAX_ANCHOR_LAYERS];
  int n_aspect_ratios;
  float interpolated_scale_aspect_ratio;  /* <= 0: none */
  int reduce_boxes_in_lowest_layer;
  int fixed_anchor_size;
} nd_anchor_options;

/* The options of MediaPipe's face_detection_front (128x128, 896 anchors). */
void nd_anchor_options_blazeface_front(nd_anchor_options *opt);
/* The options of MediaPipe's face_detection_back (256x256, 896 anchors:
 * 16x16 cells x 2 at stride 16, 8x8 x 6 at stride 32). */
void nd_anchor_options_blazeface_back(nd_anchor_options *opt);

/* Generate anchors as (cx, cy, w, h), normalized, into anchors (capacity
 * entries of 4 floats).  *n gets the number needed even when it exceeds
 * capacity (then ND_ERR_INVALID_ARG is returned). */
nd_status nd_anchors_generate(const nd_anchor_options *opt, float *anchors, int capacity,
                              int *n, nd_error *err);

/* Read priors from a text file: one prior per line, "cx cy w h" (commas or
 * blanks), normalized; '#' starts a comment.  *priors is caller-owned
 * (free()). */
nd_status nd_priors_load(const char *path, float **priors, int *n_priors, nd_error *err);

/* ---- non-maximum suppression ---------------------------------------------- */

typedef enum nd_nms_kind {
  ND_NMS_HARD = 0,             /* keep the best, drop overlapping ones */
  ND_NMS_WEIGHTED,             /* MediaPipe: the kept box is the score-weighted
                                  mean of the cluster it suppresses */
} nd_nms_kind;

/* Suppress in place.  dets[0..n) are candidates in any order; order is
 * scratch for n ints.  Returns the number kept, sorted by score, compacted
 * at the start of dets (at most max_out).  Boxes of different class_id do
 * not suppress each other unless class_agnostic. */
int nd_nms(nd_detection *dets, int n, int *order, float iou_threshold, int max_out,
           int class_agnostic, nd_nms_kind kind);

/* ---- model -> frame coordinates ------------------------------------------- */

typedef enum nd_scale_mode {
  ND_SCALE_STRETCH = 0,        /* frame scaled to the model size, aspect not kept
                                  (videoscale without borders) */
  ND_SCALE_LETTERBOX,          /* aspect kept, borders added, centered
                                  (videoscale add-borders=true with
                                  pixel-aspect-ratio=1/1 caps) */
  ND_SCALE_CROP,               /* aspect kept, centered, the overflow cropped
                                  (aspectratiocrop ! videoscale) */
} nd_scale_mode;

/* frame = model * scale + shift */
typedef struct nd_transform {
  double scale_x, scale_y;
  double shift_x, shift_y;
  int frame_width, frame_height;
} nd_transform;

nd_status nd_transform_init(nd_transform *t, int model_width, int model_height,
                            int frame_width, int frame_height, nd_scale_mode mode,
                            nd_error *err);

/* How a producer cut the model input from a frame (GstOnnxTensorGeometry):
 *   input_x = (frame_x - src_x) * scale_x + offset_x     (same for y)
 * The source rectangle is the whole frame, or a region of it. */
typedef struct nd_geometry {
  int frame_width, frame_height;   /* the frame the model saw */
  int input_width, input_height;   /* the model input */
  double src_x, src_y, src_width, src_height;
  double scale_x, scale_y;         /* input pixels per frame pixel (> 0) */
  double offset_x, offset_y;       /* where src_x/src_y land in the input */
} nd_geometry;

/* The transform of decoded coordinates back to the frame through g:
 *   frame_x = (input_x - offset_x) / scale_x + src_x
 * model_width/height: the pixel space the decoder worked in, when it is not
 * g's input size (0: g->input_width/height); its coordinates are first
 * scaled by input_width / model_width.  out_width/height: the frame the
 * results are for, when it was scaled after the model ran (0: g's frame);
 * the frame coordinates are scaled by out_width / frame_width, and
 * nd_transform_detection() clips boxes to out_width x out_height. */
nd_status nd_transform_init_geometry(nd_transform *t, const nd_geometry *g, int model_width,
                                     int model_height, int out_width, int out_height,
                                     nd_error *err);

/* t followed by then: t maps into then's model space (then's frame is the
 * result's, for clipping). */
void nd_transform_then(nd_transform *t, const nd_transform *then);
void nd_transform_point(const nd_transform *t, float *x, float *y);
/* Box and keypoints; the box is clipped to the frame. */
void nd_transform_detection(const nd_transform *t, nd_detection *d);
/* A rotated box: its corners are mapped and clipped to the frame
 * (PaddleOCR clips each coordinate), then center, sides and angle are
 * recomputed from them; *aabb (may be NULL) gets the corners' bounding box
 * (score copied, class_id 0, no keypoints). */
void nd_transform_rbox(const nd_transform *t, nd_rbox *b, nd_detection *aabb);

/* ---- labels ----------------------------------------------------------------- */

typedef struct nd_labels nd_labels;

/* One label per line (blank lines count, trailing CR/blanks trimmed). */
nd_status nd_labels_load(const char *path, nd_labels **out, nd_error *err);
int nd_labels_count(const nd_labels *l);
/* Borrowed, valid until nd_labels_free(); NULL when id is out of range. */
const char *nd_labels_get(const nd_labels *l, int id);
void nd_labels_free(nd_labels *l);

/* ---- drawing ---------------------------------------------------------------- */

typedef enum nd_pixfmt {
  ND_FMT_RGB = 0,
  ND_FMT_BGR,
  ND_FMT_RGBA,
  ND_FMT_BGRA,
  ND_FMT_RGBX,
  ND_FMT_BGRX,
  ND_FMT_I420,
  ND_FMT_NV12,
} nd_pixfmt;

/* A mapped frame (borrowed planes).  I420: Y, U, V; NV12: Y, UV. */
typedef struct nd_frame {
  nd_pixfmt format;
  int width, height;
  uint8_t *planes[3];
  int strides[3];
} nd_frame;

/* Straight (non-premultiplied) sRGB color. */
typedef struct nd_color {
  uint8_t r, g, b, a;
} nd_color;

/* A distinct, saturated color for a class id (stable across runs). */
nd_color nd_palette_color(int class_id);

/* Outline of the box [x0,x1) x [y0,y1), thickness pixels inward, clipped
 * to the frame.  Alpha blends; 255 is opaque. */
void nd_draw_rect(nd_frame *f, int x0, int y0, int x1, int y1, int thickness, nd_color c);
/* Filled box, clipped. */
void nd_fill_rect(nd_frame *f, int x0, int y0, int x1, int y1, nd_color c);
/* Filled disc of the given radius around (x, y) (keypoints). */
void nd_draw_point(nd_frame *f, int x, int y, int radius, nd_color c);

/* Text through pango+cairo.  Each distinct (text, colors) is rendered once
 * into a small ARGB surface and kept in an LRU cache, so a label that stays
 * on screen costs a blend per frame, not a layout. */
typedef struct nd_text_renderer nd_text_renderer;

/* font: a pango font description ("Sans Bold 12"); NULL: "Sans Bold 12".
 * cache_entries: labels kept rendered (0: 64). */
nd_status nd_text_renderer_new(const char *font, int cache_entries, nd_text_renderer **out,
                               nd_error *err);
/* Size in pixels the label text would take (padding included). */
nd_status nd_text_size(nd_text_renderer *r, const char *text, int *width, int *height,
                       nd_error *err);
/* Draw text on a filled background with its top-left at (x, y); clipped to
 * the frame. */
nd_status nd_draw_text(nd_text_renderer *r, nd_frame *f, int x, int y, const char *text,
                       nd_color fg, nd_color bg, nd_error *err);
/* Cache statistics (tests): renders done and hits. */
void nd_text_renderer_stats(const nd_text_renderer *r, uint64_t *renders, uint64_t *hits);
void nd_text_renderer_free(nd_text_renderer *r);

/* Draw one detection the way roioverlay does: box in the class color, the
 * label "text" above it (inside when there is no room), keypoints as dots.
 * r may be NULL (no text); text may be NULL. */
nd_status nd_draw_detection(nd_text_renderer *r, nd_frame *f, const nd_detection *d,
                            const char *text, nd_color color, int thickness, nd_error *err);

/* Most vertices nd_draw_polygon() takes; further ones are ignored. */
#define ND_POLYGON_MAX 64
/* Bytes of a label the text renderer keeps, NUL included; a longer label is
 * cut at a UTF-8 character boundary. */
#define ND_LABEL_MAX 96

/* Outline of the closed polygon of the n points xy[0..2n) (x, y pairs in
 * frame pixels, pixel (i, j) covering [i, i+1) x [j, j+1)): the pixels whose
 * centre lies within thickness / 2 of an edge (round joins), clipped to the
 * frame, each blended once (a translucent color does not darken where edges
 * meet).  n = 2 is a thick line, n = 1 a dot; n < 1, xy NULL or a
 * non-finite coordinate draws nothing.  Allocates nothing. */
void nd_draw_polygon(nd_frame *f, const float *xy, int n, int thickness, nd_color c);

/* nd_draw_detection() with the polygon of the n points xy as the outline
 * instead of d's box (a rotated box: its corners top-left, top-right,
 * bottom-right, bottom-left); the label is anchored at the first point, above
 * it when it fits, else below it, and kept inside the frame (none when the
 * polygon is outside it).  n is capped at ND_POLYGON_MAX. */
nd_status nd_draw_detection_polygon(nd_text_renderer *r, nd_frame *f, const nd_detection *d,
                                    const float *xy, int n, const char *text, nd_color color,
                                    int thickness, nd_error *err);

#ifdef __cplusplus
}
#endif

#endif /* ND_DECODE_H */
