/* GStreamer onnxinfer plugin
 *
 * gsttensordecoder.c: turns the output tensors of `onnxinfer` into
 * GstVideoRegionOfInterestMeta and element messages.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * SECTION:element-tensordecoder
 * @title: tensordecoder
 * @short_description: decode detector / classifier tensors into regions of
 *   interest
 * @see_also: onnxinfer, roioverlay
 *
 * `tensordecoder` reads the #GstOnnxTensorMeta that `onnxinfer` attaches to
 * each frame, decodes it according to #GstTensorDecoder:scheme and adds one
 * #GstVideoRegionOfInterestMeta per result, in the pixel coordinates of the
 * frame it decorates.  Each ROI carries:
 *
 * - `id`: unique on the frame, from 1 + the largest id of the ROIs already
 *   there (at least 1), increasing in result order; `parent_id`: -1 for
 *   results on the whole frame, the id of the region the model ran on in
 *   region mode;
 * - `roi_type`: the label (from #GstTensorDecoder:labels-file, else "face"
 *   for BlazeFace and "class-N" otherwise);
 * - a `detection` parameter structure: `label`, `class-id`, `confidence`
 *   (0..1), `model-id`; for whole-frame classification the structure is
 *   named `classification` and the ROI covers the whole frame;
 * - for BlazeFace a `keypoints` parameter structure with one field per
 *   keypoint (`right-eye`, `left-eye`, `nose-tip`, `mouth-center`,
 *   `right-ear-tragion`, `left-ear-tragion`), each an array `<x, y>` in
 *   frame pixels.
 *
 * Region mode: when `onnxinfer` ran on the frame's regions of interest, it
 * left one tensor meta per region (#GstOnnxTensorMeta.roi_id), all with the
 * same model id, and each of them is decoded.  `scheme=classify` labels the
 * region it ran on: a `classification` structure (`label`, `class-id`,
 * `confidence` of the best class, `labels`, `class-ids`, `confidences` of
 * the top-k, `model-id`) is added to that ROI and no ROI is created.  The
 * detection schemes add their results as new ROIs whose `parent_id` is the
 * region's id.
 *
 * With #GstTensorDecoder:post-messages (the default) it also posts one
 * `tensordecoder` element message per frame listing the results (with the
 * `roi-ids` of the ROIs that carry them and the `parent-ids` of the regions
 * they were computed on), so `gst-launch-1.0 -m` prints them.
 *
 * One element serves every scheme rather than one element per model
 * family: the schemes share all their settings (thresholds, NMS, labels,
 * the mapping back to the frame) and differ only in how the tensors are
 * laid out, so switching models is a property change, not a new pipeline.
 *
 * Coordinates: `onnxinfer` records on the meta how it cut its input from the
 * frame (#GstOnnxTensorGeometry: source rectangle, scale, offset, input
 * size), and the decoder maps boxes and keypoints back through it, exactly,
 * whatever the scale mode or region: frame_x = (input_x - offset_x) /
 * scale_x + src_x.  The model input size the schemes need (BlazeFace's
 * anchors, normalized boxes) is the recorded one.  The result is for the
 * frame the decoder decorates, whose size it takes from its caps -- the
 * tensor meta survives `videoscale`, so the decoder may sit after the
 * frames were scaled: coordinates are multiplied by its width over the
 * recorded frame width -- or for #GstTensorDecoder:frame-width x
 * #GstTensorDecoder:frame-height when those are set (e.g. when the
 * application draws on the original frames elsewhere).  Boxes are clipped
 * to that frame.
 *
 * #GstTensorDecoder:model-width and #GstTensorDecoder:model-height override
 * the recorded input size when set.  Tensors without a recorded geometry
 * (older producers, metas made by hand) are mapped as before: the model
 * size is #GstTensorDecoder:model-width x #GstTensorDecoder:model-height
 * (else the scheme's default) and #GstTensorDecoder:scale-mode says how the
 * frame was fitted into it.  With a geometry, scale-mode only matters when
 * the frame `onnxinfer` saw was itself letterboxed or cropped from the
 * frame this element decorates (`videoscale add-borders=true` in front of
 * `onnxinfer`, the frames scaled back after it); for the same frame, or one
 * only scaled, every mode is the plain scale.
 *
 * OCR: `scheme=dbnet` turns a DBNet probability map (PP-OCRv4 det) into
 * `text` ROIs with a `rotated-box` parameter (cx, cy, width, height, angle
 * in degrees, the four corners as `points`, frame pixels);
 * `scheme=ctc` reads a recogniser's [N,T,C] output (PP-OCRv4 rec) through
 * the dictionary in #GstTensorDecoder:labels-file and puts a `text`
 * parameter (`text`, `confidence`, `model-id`) on the region the model ran
 * on, or on a ROI covering the frame.  `scheme=text-direction` reads PP-OCR's
 * 0/180 degree line classifier ([1,2] scores, run in region mode on the
 * text ROIs): a line it calls upside down (180 degrees with at least
 * #GstTensorDecoder:score-threshold, default 0.9) has its `rotated-box`
 * turned by 180 degrees, so a recogniser after it (`onnxinfer` cuts the
 * box out upright) reads it the right way up; a `text-direction` parameter
 * (`angle` 0 or 180, `confidence`, `turned`) records the call.  See
 * docs/decoders.md.
 *
 * BlazeFace: the front (128x128) and back (256x256) MediaPipe models have
 * the same outputs; which anchors and scale apply follows from the input
 * size.  Other sizes, and outputs that do not cover that model's 896
 * anchors head by head, are refused with an error.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 -m filesrc location=astronaut.png ! pngdec ! videoconvert ! \
 *   videoscale ! video/x-raw,width=128,height=128 ! \
 *   onnxinfer model-location=face_detection_front_128x128.onnx \
 *     input-mean="<127.5>" input-std="<127.5>" ! \
 *   tensordecoder scheme=blazeface ! fakesink
 * ]| Prints one `tensordecoder` message with the face and its keypoints.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! videoscale add-borders=true ! \
 *   video/x-raw,width=640,height=640,pixel-aspect-ratio=1/1 ! \
 *   onnxinfer model-location=yolov8n.onnx input-std="<255>" ! \
 *   tensordecoder scheme=yolov8 scale-mode=letterbox labels-file=coco.txt ! \
 *   roioverlay ! videoconvert ! autovideosink
 * ]| YOLOv8 on a letterboxed camera feed.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "gsttensordecoder.h"
#include "gstonnxtensormeta.h"
#include "decode.h"

GST_DEBUG_CATEGORY_STATIC (gst_tensor_decoder_debug);
#define GST_CAT_DEFAULT gst_tensor_decoder_debug

#define MAX_TENSORS 64
/* frames without any tensor meta from the start before warning */
#define NO_META_WARN_FRAMES 100

#define DEFAULT_SCHEME GST_TENSOR_DECODER_SCHEME_BLAZEFACE
#define DEFAULT_MODEL_ID NULL
#define DEFAULT_SCORE_THRESHOLD -1.0f
#define DEFAULT_IOU_THRESHOLD -1.0f
#define DEFAULT_MAX_DETECTIONS 100
#define MAX_MAX_DETECTIONS 10000
#define DEFAULT_TOP_K 5
#define DEFAULT_NUM_CLASSES 0
#define DEFAULT_LABELS_FILE NULL
#define DEFAULT_MODEL_SIZE 0
#define DEFAULT_FRAME_SIZE 0
#define DEFAULT_SCALE_MODE GST_TENSOR_DECODER_SCALE_MODE_STRETCH
#define DEFAULT_BOX_FORMAT GST_TENSOR_DECODER_BOX_FORMAT_YXYX
#define DEFAULT_BOX_NORMALIZED TRUE
#define DEFAULT_PRIORS_FILE NULL
/* scheme=dbnet (PaddleOCR's DBPostProcess defaults) */
#define DEFAULT_BINARY_THRESHOLD 0.3f
#define DEFAULT_BOX_THRESHOLD 0.6f
#define DEFAULT_UNCLIP_RATIO 1.5f
#define DEFAULT_MIN_SIZE 3.0f
#define DEFAULT_MAX_CANDIDATES 1000
/* measured on the pages of tests/ocr/ (docs/decoders.md): spaces between
 * words kept from 0.05 up, none inside a word down to 0.05 */
#define DEFAULT_SPACE_THRESHOLD 0.1f
#define DEFAULT_BACKGROUND_CLASS -1
#define DEFAULT_ACTIVATION GST_TENSOR_DECODER_ACTIVATION_AUTO
#define DEFAULT_CLASS_AGNOSTIC_NMS FALSE
#define DEFAULT_POST_MESSAGES TRUE

enum
{
  PROP_0,
  PROP_SCHEME,
  PROP_MODEL_ID,
  PROP_SCORE_THRESHOLD,
  PROP_IOU_THRESHOLD,
  PROP_MAX_DETECTIONS,
  PROP_TOP_K,
  PROP_NUM_CLASSES,
  PROP_LABELS_FILE,
  PROP_MODEL_WIDTH,
  PROP_MODEL_HEIGHT,
  PROP_FRAME_WIDTH,
  PROP_FRAME_HEIGHT,
  PROP_SCALE_MODE,
  PROP_BOX_FORMAT,
  PROP_BOX_NORMALIZED,
  PROP_PRIORS_FILE,
  PROP_BACKGROUND_CLASS,
  PROP_ACTIVATION,
  PROP_CLASS_AGNOSTIC_NMS,
  PROP_OUTPUT_TENSOR,
  PROP_BOXES_TENSOR,
  PROP_SCORES_TENSOR,
  PROP_CLASSES_TENSOR,
  PROP_POST_MESSAGES,
  PROP_BINARY_THRESHOLD,
  PROP_BOX_THRESHOLD,
  PROP_UNCLIP_RATIO,
  PROP_MIN_SIZE,
  PROP_MAX_CANDIDATES,
  PROP_SPACE_THRESHOLD,
};

struct _GstTensorDecoder
{
  GstBaseTransform parent;

  /* Properties: GST_OBJECT_LOCK.  Any change sets `dirty`; the streaming
   * thread rebuilds the decoder before the next frame. */
  GstTensorDecoderScheme scheme;
  gchar *model_id;
  gfloat score_threshold;
  gboolean direction_ready;     /* scheme=text-direction configured */
  gfloat direction_threshold;   /* its score threshold */
  gfloat iou_threshold;
  guint max_detections;
  guint top_k;
  guint num_classes;
  gchar *labels_file;
  gint model_width, model_height;
  gint frame_width, frame_height;
  GstTensorDecoderScaleMode scale_mode;
  GstTensorDecoderBoxFormat box_format;
  gboolean box_normalized;
  gchar *priors_file;
  gint background_class;
  GstTensorDecoderActivation activation;
  gboolean class_agnostic_nms;
  gchar *output_tensor, *boxes_tensor, *scores_tensor, *classes_tensor;
  gboolean post_messages;
  gfloat binary_threshold, box_threshold, unclip_ratio, min_size;
  guint max_candidates;
  gfloat space_threshold;
  gboolean dirty;

  /* Streaming state: only the streaming thread (and start/stop) touch it. */
  nd_decoder *decoder;
  nd_dbnet *dbnet;              /* scheme=dbnet (decoder is NULL then) */
  nd_ctc *ctc;                  /* scheme=ctc (decoder is NULL then) */
  gboolean warned_ctc_batch;
  gchar *active_output_tensor;  /* OCR schemes: output-tensor, or NULL */
  nd_labels *labels;
  GstTensorDecoderScheme active_scheme;
  nd_scale_mode active_scale_mode;
  gint active_frame_width, active_frame_height;
  gint active_model_width, active_model_height;
  gchar *active_model_id;
  gboolean active_post_messages;
  GstVideoInfo info;
  gboolean have_info;
  guint64 frames;
  gboolean warned_no_meta;
  gboolean seen_meta;
  guint64 frames_without_meta;
  gboolean warned_model_size;
  nd_tensor tensors[MAX_TENSORS];
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw; video/x-raw(ANY)"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("video/x-raw; video/x-raw(ANY)"));

#define gst_tensor_decoder_parent_class parent_class
G_DEFINE_TYPE (GstTensorDecoder, gst_tensor_decoder, GST_TYPE_BASE_TRANSFORM);

GST_ELEMENT_REGISTER_DEFINE (tensordecoder, "tensordecoder", GST_RANK_NONE,
    GST_TYPE_TENSOR_DECODER);

static void gst_tensor_decoder_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_tensor_decoder_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_tensor_decoder_finalize (GObject * object);
static gboolean gst_tensor_decoder_start (GstBaseTransform * trans);
static gboolean gst_tensor_decoder_stop (GstBaseTransform * trans);
static gboolean gst_tensor_decoder_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
static GstFlowReturn gst_tensor_decoder_transform_ip (GstBaseTransform *
    trans, GstBuffer * buf);

/* ---- enums ---------------------------------------------------------------- */

GType
gst_tensor_decoder_scheme_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_DECODER_SCHEME_BLAZEFACE,
        "MediaPipe BlazeFace front 128x128 or back 256x256 (by the model "
          "input size): faces and 6 keypoints", "blazeface"},
    {GST_TENSOR_DECODER_SCHEME_SSD,
        "SSD: boxes [1,N,4] + scores [1,N,C] (optionally with priors), or "
          "TF Object Detection API post-processed outputs", "ssd"},
    {GST_TENSOR_DECODER_SCHEME_YOLOV5,
        "YOLOv5 [1,N,5+C]: box, objectness, class scores", "yolov5"},
    {GST_TENSOR_DECODER_SCHEME_YOLOV8,
        "YOLOv8 [1,4+C,N]: box, class scores", "yolov8"},
    {GST_TENSOR_DECODER_SCHEME_CLASSIFY,
        "Classification [1,C]: top-k classes", "classify"},
    {GST_TENSOR_DECODER_SCHEME_DBNET,
          "DBNet text detection (PP-OCR det) [1,1,H,W] probability map: "
          "rotated text boxes", "dbnet"},
    {GST_TENSOR_DECODER_SCHEME_CTC,
          "CTC text recognition (PP-OCR rec) [N,T,C]: text through the "
          "dictionary in labels-file", "ctc"},
    {GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION,
          "Text-line direction (PP-OCR 0/180 classifier) [1,2]: turns "
          "upside-down regions' rotated-box by 180 degrees", "text-direction"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorDecoderScheme", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_tensor_decoder_scale_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_DECODER_SCALE_MODE_STRETCH,
        "Scaled to the model size, aspect ratio not kept", "stretch"},
    {GST_TENSOR_DECODER_SCALE_MODE_LETTERBOX,
          "Scaled keeping the aspect ratio, centered with borders "
          "(videoscale add-borders=true)", "letterbox"},
    {GST_TENSOR_DECODER_SCALE_MODE_CROP,
          "Center-cropped to the model's aspect ratio, then scaled",
        "crop"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorDecoderScaleMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_tensor_decoder_box_format_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_DECODER_BOX_FORMAT_YXYX, "ymin, xmin, ymax, xmax", "yxyx"},
    {GST_TENSOR_DECODER_BOX_FORMAT_XYXY, "xmin, ymin, xmax, ymax", "xyxy"},
    {GST_TENSOR_DECODER_BOX_FORMAT_CXCYWH, "center x, center y, width, height",
        "cxcywh"},
    {GST_TENSOR_DECODER_BOX_FORMAT_CYCXHW, "center y, center x, height, width",
        "cycxhw"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorDecoderBoxFormat", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_tensor_decoder_activation_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_TENSOR_DECODER_ACTIVATION_AUTO,
          "Scheme default (SSD: sigmoid; YOLO: none; classify: softmax unless "
          "the scores already sum to 1)", "auto"},
    {GST_TENSOR_DECODER_ACTIVATION_NONE, "Scores are probabilities", "none"},
    {GST_TENSOR_DECODER_ACTIVATION_SIGMOID, "Sigmoid of each score",
        "sigmoid"},
    {GST_TENSOR_DECODER_ACTIVATION_SOFTMAX, "Softmax over the classes",
        "softmax"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstTensorDecoderActivation", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* ---- class ---------------------------------------------------------------- */

#define PROP_FLAGS_LIVE (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | \
    GST_PARAM_MUTABLE_PLAYING)

static void
gst_tensor_decoder_class_init (GstTensorDecoderClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  GST_DEBUG_CATEGORY_INIT (gst_tensor_decoder_debug, "tensordecoder", 0,
      "Tensor decoder");

  gobject_class->set_property = gst_tensor_decoder_set_property;
  gobject_class->get_property = gst_tensor_decoder_get_property;
  gobject_class->finalize = gst_tensor_decoder_finalize;

  /**
   * GstTensorDecoder:scheme:
   *
   * How to read the model's outputs.
   */
  g_object_class_install_property (gobject_class, PROP_SCHEME,
      g_param_spec_enum ("scheme", "Scheme",
          "How the model's output tensors are laid out",
          GST_TYPE_TENSOR_DECODER_SCHEME, DEFAULT_SCHEME, PROP_FLAGS_LIVE));
  /**
   * GstTensorDecoder:model-id:
   *
   * Name of the `onnxinfer` element whose tensors to decode, for pipelines
   * with several models; %NULL takes the first tensor meta on the buffer.
   */
  g_object_class_install_property (gobject_class, PROP_MODEL_ID,
      g_param_spec_string ("model-id", "Model id",
          "Name of the onnxinfer element whose tensors to decode "
          "(NULL: the first tensor meta of the buffer)", DEFAULT_MODEL_ID,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_SCORE_THRESHOLD,
      g_param_spec_float ("score-threshold", "Score threshold",
          "Keep results scoring at least this (0..1); -1: the scheme's "
          "default (BlazeFace front 0.5, back 0.65, SSD 0.5, YOLO 0.25, "
          "classify 0, text-direction 0.9: a line is turned when the 180 "
          "degree score reaches it)",
          -1.0f, 1.0f, DEFAULT_SCORE_THRESHOLD, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_float ("iou-threshold", "IoU threshold",
          "Non-maximum suppression: drop (or, for BlazeFace, merge) boxes "
          "overlapping a better one by more than this intersection over "
          "union; -1: the scheme's default (BlazeFace 0.3, others 0.45)",
          -1.0f, 1.0f, DEFAULT_IOU_THRESHOLD, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_MAX_DETECTIONS,
      g_param_spec_uint ("max-detections", "Max detections",
          "Keep at most this many results per frame, best first",
          1, MAX_MAX_DETECTIONS, DEFAULT_MAX_DETECTIONS, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_TOP_K,
      g_param_spec_uint ("top-k", "Top k",
          "Classification: report the k best classes", 1, 1000,
          DEFAULT_TOP_K, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_NUM_CLASSES,
      g_param_spec_uint ("num-classes", "Number of classes",
          "Expected number of classes, checked against the tensors "
          "(0: whatever the tensors say)", 0, 100000, DEFAULT_NUM_CLASSES,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_LABELS_FILE,
      g_param_spec_string ("labels-file", "Labels file",
          "Text file with one label per line; line N names class N-1",
          DEFAULT_LABELS_FILE, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_MODEL_WIDTH,
      g_param_spec_int ("model-width", "Model width",
          "Width of the model input in pixels, overriding the one onnxinfer "
          "recorded (0: the recorded width, else the scheme's default: "
          "BlazeFace 128, YOLO 640, SSD 300)", 0, 65535, DEFAULT_MODEL_SIZE,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_MODEL_HEIGHT,
      g_param_spec_int ("model-height", "Model height",
          "Height of the model input in pixels, overriding the one onnxinfer "
          "recorded (0: the recorded height, else the scheme's default)",
          0, 65535, DEFAULT_MODEL_SIZE, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_FRAME_WIDTH,
      g_param_spec_int ("frame-width", "Frame width",
          "Width of the frame the coordinates refer to (0: the frame this "
          "element decorates)", 0, 65535, DEFAULT_FRAME_SIZE,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_FRAME_HEIGHT,
      g_param_spec_int ("frame-height", "Frame height",
          "Height of the frame the coordinates refer to (0: the frame this "
          "element decorates)", 0, 65535, DEFAULT_FRAME_SIZE,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_SCALE_MODE,
      g_param_spec_enum ("scale-mode", "Scale mode",
          "How the frame was fitted into the model input, for tensors "
          "without a recorded geometry; with one, how the frame onnxinfer saw "
          "was fitted from this one (no effect when they are the same frame "
          "or only scaled)",
          GST_TYPE_TENSOR_DECODER_SCALE_MODE, DEFAULT_SCALE_MODE,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_BOX_FORMAT,
      g_param_spec_enum ("box-format", "Box format",
          "SSD: layout of the four box values",
          GST_TYPE_TENSOR_DECODER_BOX_FORMAT, DEFAULT_BOX_FORMAT,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_BOX_NORMALIZED,
      g_param_spec_boolean ("box-normalized", "Normalized boxes",
          "SSD: box values are fractions of the input size (else pixels)",
          DEFAULT_BOX_NORMALIZED, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_PRIORS_FILE,
      g_param_spec_string ("priors-file", "Priors file",
          "SSD: text file of priors (anchors), one 'cx cy w h' line each, "
          "normalized; the boxes are then offsets against them, scaled by "
          "variances 0.1, 0.1, 0.2, 0.2 (box-format cxcywh or cycxhw)",
          DEFAULT_PRIORS_FILE, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_BACKGROUND_CLASS,
      g_param_spec_int ("background-class", "Background class",
          "SSD: index of the background class to ignore (-1: none)",
          -1, 100000, DEFAULT_BACKGROUND_CLASS, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_ACTIVATION,
      g_param_spec_enum ("score-activation", "Score activation",
          "What turns the class scores into probabilities",
          GST_TYPE_TENSOR_DECODER_ACTIVATION, DEFAULT_ACTIVATION,
          PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_CLASS_AGNOSTIC_NMS,
      g_param_spec_boolean ("class-agnostic-nms", "Class-agnostic NMS",
          "Boxes of different classes suppress each other too",
          DEFAULT_CLASS_AGNOSTIC_NMS, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_OUTPUT_TENSOR,
      g_param_spec_string ("output-tensor", "Output tensor",
          "YOLO, classify: name of the output to read (NULL: found by shape)",
          NULL, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_BOXES_TENSOR,
      g_param_spec_string ("boxes-tensor", "Boxes tensor",
          "SSD, BlazeFace (single-head exports): name of the boxes / "
          "regressors output (NULL: found by shape)", NULL, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_SCORES_TENSOR,
      g_param_spec_string ("scores-tensor", "Scores tensor",
          "SSD, BlazeFace (single-head exports): name of the scores output "
          "(NULL: found by shape)", NULL, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_CLASSES_TENSOR,
      g_param_spec_string ("classes-tensor", "Classes tensor",
          "SSD post-processed: name of the class ids output (NULL: the "
          "output whose name contains 'class')", NULL, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post a 'tensordecoder' element message with the detections of "
          "every frame", DEFAULT_POST_MESSAGES, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_BINARY_THRESHOLD,
      g_param_spec_float ("binary-threshold", "Binary threshold",
          "scheme=dbnet: text pixels have a probability above this",
          0.01f, 0.99f, DEFAULT_BINARY_THRESHOLD, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_BOX_THRESHOLD,
      g_param_spec_float ("box-threshold", "Box threshold",
          "scheme=dbnet: keep boxes whose mean probability is at least this",
          0.0f, 1.0f, DEFAULT_BOX_THRESHOLD, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_UNCLIP_RATIO,
      g_param_spec_float ("unclip-ratio", "Unclip ratio",
          "scheme=dbnet: boxes grow by 2 * area * ratio / perimeter",
          0.0f, 10.0f, DEFAULT_UNCLIP_RATIO, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_MIN_SIZE,
      g_param_spec_float ("min-size", "Minimum size",
          "scheme=dbnet: drop boxes whose shorter side is under this, in "
          "probability-map pixels (before unclipping; after it, min-size + 2)",
          0.0f, 4096.0f, DEFAULT_MIN_SIZE, PROP_FLAGS_LIVE));
  g_object_class_install_property (gobject_class, PROP_MAX_CANDIDATES,
      g_param_spec_uint ("max-candidates", "Maximum candidates",
          "scheme=dbnet: text regions examined per frame",
          1, 100000, DEFAULT_MAX_CANDIDATES, PROP_FLAGS_LIVE));
  /**
   * GstTensorDecoder:space-threshold:
   *
   * scheme=ctc: a space also goes between two characters when the
   * recogniser's space class reaches this probability at a step between
   * them without winning it; 1 keeps PaddleOCR's greedy decoding, where a
   * space needs to be the most probable class.  PP-OCRv4 often puts the
   * space second between words; on the nine hand-transcribed images of
   * tests/ocr/ the default 0.1 keeps them (word accuracy 81.5 -> 97.1 %)
   * and splits no word (the first split word appears at 0.03).
   */
  g_object_class_install_property (gobject_class, PROP_SPACE_THRESHOLD,
      g_param_spec_float ("space-threshold", "Space threshold",
          "scheme=ctc: insert a space between two characters when the space "
          "class reaches this probability between them (1: only where it is "
          "the most probable, PaddleOCR's greedy decoding)",
          0.01f, 1.0f, DEFAULT_SPACE_THRESHOLD, PROP_FLAGS_LIVE));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Tensor decoder", "Filter/Analyzer/Video",
      "Decodes the output tensors of onnxinfer (BlazeFace, SSD, YOLOv5/v8, "
      "classification, DBNet text detection, CTC text recognition) into "
      "region-of-interest metas and messages",
      ONNXINFER_AUTHOR);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_tensor_decoder_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_tensor_decoder_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_tensor_decoder_set_caps);
  trans_class->transform_ip =
      GST_DEBUG_FUNCPTR (gst_tensor_decoder_transform_ip);
  /* Metas are added, so the buffer must be writable: never passthrough. */
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;

  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_DECODER_SCHEME, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_DECODER_SCALE_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_DECODER_BOX_FORMAT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_TENSOR_DECODER_ACTIVATION, 0);
}

static void
gst_tensor_decoder_init (GstTensorDecoder * self)
{
  self->scheme = DEFAULT_SCHEME;
  self->model_id = g_strdup (DEFAULT_MODEL_ID);
  self->score_threshold = DEFAULT_SCORE_THRESHOLD;
  self->iou_threshold = DEFAULT_IOU_THRESHOLD;
  self->max_detections = DEFAULT_MAX_DETECTIONS;
  self->top_k = DEFAULT_TOP_K;
  self->num_classes = DEFAULT_NUM_CLASSES;
  self->model_width = self->model_height = DEFAULT_MODEL_SIZE;
  self->frame_width = self->frame_height = DEFAULT_FRAME_SIZE;
  self->scale_mode = DEFAULT_SCALE_MODE;
  self->box_format = DEFAULT_BOX_FORMAT;
  self->box_normalized = DEFAULT_BOX_NORMALIZED;
  self->background_class = DEFAULT_BACKGROUND_CLASS;
  self->activation = DEFAULT_ACTIVATION;
  self->class_agnostic_nms = DEFAULT_CLASS_AGNOSTIC_NMS;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->binary_threshold = DEFAULT_BINARY_THRESHOLD;
  self->box_threshold = DEFAULT_BOX_THRESHOLD;
  self->unclip_ratio = DEFAULT_UNCLIP_RATIO;
  self->min_size = DEFAULT_MIN_SIZE;
  self->max_candidates = DEFAULT_MAX_CANDIDATES;
  self->space_threshold = DEFAULT_SPACE_THRESHOLD;
  self->dirty = TRUE;
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void
gst_tensor_decoder_finalize (GObject * object)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (object);

  g_free (self->model_id);
  g_free (self->labels_file);
  g_free (self->priors_file);
  g_free (self->output_tensor);
  g_free (self->boxes_tensor);
  g_free (self->scores_tensor);
  g_free (self->classes_tensor);
  g_free (self->active_model_id);
  g_free (self->active_output_tensor);
  nd_decoder_free (self->decoder);
  nd_dbnet_free (self->dbnet);
  nd_ctc_free (self->ctc);
  nd_labels_free (self->labels);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
replace_string (gchar ** dst, const GValue * value)
{
  const gchar *s = g_value_get_string (value);
  g_free (*dst);
  /* "" means unset, as NULL: gst-launch cannot pass NULL */
  *dst = s && *s ? g_strdup (s) : NULL;
}

static void
gst_tensor_decoder_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SCHEME:
      self->scheme = g_value_get_enum (value);
      break;
    case PROP_MODEL_ID:
      replace_string (&self->model_id, value);
      break;
    case PROP_SCORE_THRESHOLD:
      self->score_threshold = g_value_get_float (value);
      break;
    case PROP_IOU_THRESHOLD:
      self->iou_threshold = g_value_get_float (value);
      break;
    case PROP_MAX_DETECTIONS:
      self->max_detections = g_value_get_uint (value);
      break;
    case PROP_TOP_K:
      self->top_k = g_value_get_uint (value);
      break;
    case PROP_NUM_CLASSES:
      self->num_classes = g_value_get_uint (value);
      break;
    case PROP_LABELS_FILE:
      replace_string (&self->labels_file, value);
      break;
    case PROP_MODEL_WIDTH:
      self->model_width = g_value_get_int (value);
      break;
    case PROP_MODEL_HEIGHT:
      self->model_height = g_value_get_int (value);
      break;
    case PROP_FRAME_WIDTH:
      self->frame_width = g_value_get_int (value);
      break;
    case PROP_FRAME_HEIGHT:
      self->frame_height = g_value_get_int (value);
      break;
    case PROP_SCALE_MODE:
      self->scale_mode = g_value_get_enum (value);
      break;
    case PROP_BOX_FORMAT:
      self->box_format = g_value_get_enum (value);
      break;
    case PROP_BOX_NORMALIZED:
      self->box_normalized = g_value_get_boolean (value);
      break;
    case PROP_PRIORS_FILE:
      replace_string (&self->priors_file, value);
      break;
    case PROP_BACKGROUND_CLASS:
      self->background_class = g_value_get_int (value);
      break;
    case PROP_ACTIVATION:
      self->activation = g_value_get_enum (value);
      break;
    case PROP_CLASS_AGNOSTIC_NMS:
      self->class_agnostic_nms = g_value_get_boolean (value);
      break;
    case PROP_OUTPUT_TENSOR:
      replace_string (&self->output_tensor, value);
      break;
    case PROP_BOXES_TENSOR:
      replace_string (&self->boxes_tensor, value);
      break;
    case PROP_SCORES_TENSOR:
      replace_string (&self->scores_tensor, value);
      break;
    case PROP_CLASSES_TENSOR:
      replace_string (&self->classes_tensor, value);
      break;
    case PROP_BINARY_THRESHOLD:
      self->binary_threshold = g_value_get_float (value);
      break;
    case PROP_BOX_THRESHOLD:
      self->box_threshold = g_value_get_float (value);
      break;
    case PROP_UNCLIP_RATIO:
      self->unclip_ratio = g_value_get_float (value);
      break;
    case PROP_MIN_SIZE:
      self->min_size = g_value_get_float (value);
      break;
    case PROP_MAX_CANDIDATES:
      self->max_candidates = g_value_get_uint (value);
      break;
    case PROP_SPACE_THRESHOLD:
      self->space_threshold = g_value_get_float (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      GST_OBJECT_UNLOCK (self);
      return;
  }
  self->dirty = TRUE;
  GST_OBJECT_UNLOCK (self);
}

static void
gst_tensor_decoder_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SCHEME:
      g_value_set_enum (value, self->scheme);
      break;
    case PROP_MODEL_ID:
      g_value_set_string (value, self->model_id);
      break;
    case PROP_SCORE_THRESHOLD:
      g_value_set_float (value, self->score_threshold);
      break;
    case PROP_IOU_THRESHOLD:
      g_value_set_float (value, self->iou_threshold);
      break;
    case PROP_MAX_DETECTIONS:
      g_value_set_uint (value, self->max_detections);
      break;
    case PROP_TOP_K:
      g_value_set_uint (value, self->top_k);
      break;
    case PROP_NUM_CLASSES:
      g_value_set_uint (value, self->num_classes);
      break;
    case PROP_LABELS_FILE:
      g_value_set_string (value, self->labels_file);
      break;
    case PROP_MODEL_WIDTH:
      g_value_set_int (value, self->model_width);
      break;
    case PROP_MODEL_HEIGHT:
      g_value_set_int (value, self->model_height);
      break;
    case PROP_FRAME_WIDTH:
      g_value_set_int (value, self->frame_width);
      break;
    case PROP_FRAME_HEIGHT:
      g_value_set_int (value, self->frame_height);
      break;
    case PROP_SCALE_MODE:
      g_value_set_enum (value, self->scale_mode);
      break;
    case PROP_BOX_FORMAT:
      g_value_set_enum (value, self->box_format);
      break;
    case PROP_BOX_NORMALIZED:
      g_value_set_boolean (value, self->box_normalized);
      break;
    case PROP_PRIORS_FILE:
      g_value_set_string (value, self->priors_file);
      break;
    case PROP_BACKGROUND_CLASS:
      g_value_set_int (value, self->background_class);
      break;
    case PROP_ACTIVATION:
      g_value_set_enum (value, self->activation);
      break;
    case PROP_CLASS_AGNOSTIC_NMS:
      g_value_set_boolean (value, self->class_agnostic_nms);
      break;
    case PROP_OUTPUT_TENSOR:
      g_value_set_string (value, self->output_tensor);
      break;
    case PROP_BOXES_TENSOR:
      g_value_set_string (value, self->boxes_tensor);
      break;
    case PROP_SCORES_TENSOR:
      g_value_set_string (value, self->scores_tensor);
      break;
    case PROP_CLASSES_TENSOR:
      g_value_set_string (value, self->classes_tensor);
      break;
    case PROP_BINARY_THRESHOLD:
      g_value_set_float (value, self->binary_threshold);
      break;
    case PROP_BOX_THRESHOLD:
      g_value_set_float (value, self->box_threshold);
      break;
    case PROP_UNCLIP_RATIO:
      g_value_set_float (value, self->unclip_ratio);
      break;
    case PROP_MIN_SIZE:
      g_value_set_float (value, self->min_size);
      break;
    case PROP_MAX_CANDIDATES:
      g_value_set_uint (value, self->max_candidates);
      break;
    case PROP_SPACE_THRESHOLD:
      g_value_set_float (value, self->space_threshold);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ---- configuration -------------------------------------------------------- */

static const nd_scheme scheme_map[] = {
  [GST_TENSOR_DECODER_SCHEME_BLAZEFACE] = ND_SCHEME_BLAZEFACE,
  [GST_TENSOR_DECODER_SCHEME_SSD] = ND_SCHEME_SSD,
  [GST_TENSOR_DECODER_SCHEME_YOLOV5] = ND_SCHEME_YOLOV5,
  [GST_TENSOR_DECODER_SCHEME_YOLOV8] = ND_SCHEME_YOLOV8,
  [GST_TENSOR_DECODER_SCHEME_CLASSIFY] = ND_SCHEME_CLASSIFY,
};

static gboolean
is_ocr_scheme (GstTensorDecoderScheme scheme)
{
  return scheme == GST_TENSOR_DECODER_SCHEME_DBNET ||
      scheme == GST_TENSOR_DECODER_SCHEME_CTC ||
      scheme == GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION;
}

static const gchar *
scheme_name (GstTensorDecoderScheme scheme)
{
  if (scheme == GST_TENSOR_DECODER_SCHEME_DBNET)
    return "dbnet";
  if (scheme == GST_TENSOR_DECODER_SCHEME_CTC)
    return "ctc";
  if (scheme == GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION)
    return "text-direction";
  return nd_scheme_name (scheme_map[scheme]);
}

/* The OCR schemes have decoders of their own (nd_dbnet, nd_ctc): built
 * here, from the same lock-protected properties; the dictionary is read
 * here, never per frame. */
/* The properties every scheme reads, copied for the streaming thread while
 * the object lock is held (both configure paths). */
static void
latch_common_locked (GstTensorDecoder * self)
{
  g_free (self->active_model_id);
  self->active_model_id = g_strdup (self->model_id);
  self->active_scale_mode = (nd_scale_mode) self->scale_mode;
  self->active_frame_width = self->frame_width;
  self->active_frame_height = self->frame_height;
  self->active_model_width = self->model_width;
  self->active_model_height = self->model_height;
  self->active_post_messages = self->post_messages;
  self->dirty = FALSE;
}

static gboolean
gst_tensor_decoder_configure_ocr (GstTensorDecoder * self)
{
  nd_dbnet_config dcfg;
  nd_error err = { 0 };
  nd_dbnet *db = NULL;
  nd_ctc *ctc = NULL;
  gchar *dictionary;
  gfloat space_threshold;
  GstTensorDecoderScheme scheme;
  nd_status st;

  nd_dbnet_config_init (&dcfg);
  GST_OBJECT_LOCK (self);
  scheme = self->active_scheme = self->scheme;
  dcfg.threshold = self->binary_threshold;
  dcfg.box_threshold = self->box_threshold;
  dcfg.unclip_ratio = self->unclip_ratio;
  dcfg.min_size = self->min_size;
  dcfg.max_candidates = (int) self->max_candidates;
  dictionary = g_strdup (self->labels_file);
  space_threshold = self->space_threshold;
  /* PaddleOCR's cls_thresh */
  self->direction_threshold = self->score_threshold >= 0.0f ?
      self->score_threshold : 0.9f;
  g_free (self->active_output_tensor);
  self->active_output_tensor = g_strdup (self->output_tensor);
  latch_common_locked (self);
  GST_OBJECT_UNLOCK (self);

  if (scheme == GST_TENSOR_DECODER_SCHEME_DBNET) {
    st = nd_dbnet_new (&dcfg, &db, &err);
  } else if (scheme == GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION) {
    st = ND_OK;                 /* no decoder state: two scores a region */
  } else if (!dictionary) {
    st = ND_ERR_INVALID_ARG;
    g_snprintf (err.msg, sizeof err.msg, "scheme=ctc needs labels-file: the "
        "recogniser's dictionary (PaddleOCR: ppocr_keys_v1.txt)");
  } else {
    st = nd_ctc_new (dictionary, &ctc, &err);
    if (st == ND_OK)
      st = nd_ctc_set_space_threshold (ctc, space_threshold, &err);
  }
  g_free (dictionary);
  if (st != ND_OK) {
    nd_ctc_free (ctc);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Cannot set up the %s decoder: %s", scheme_name (scheme), err.msg),
        ("%s", nd_status_str (st)));
    return FALSE;
  }
  nd_decoder_free (self->decoder);
  self->decoder = NULL;
  nd_dbnet_free (self->dbnet);
  self->dbnet = db;
  nd_ctc_free (self->ctc);
  self->ctc = ctc;
  nd_labels_free (self->labels);
  self->labels = NULL;
  self->warned_ctc_batch = FALSE;
  self->direction_ready = scheme == GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION;
  if (self->direction_ready)
    GST_DEBUG_OBJECT (self, "decoder text-direction: 180 degrees at score >= "
        "%.2f", self->direction_threshold);
  else if (db)
    GST_DEBUG_OBJECT (self, "decoder dbnet: binary > %.2f, box >= %.2f, "
        "unclip %.2f, min size %.1f, max %d candidates", dcfg.threshold,
        dcfg.box_threshold, dcfg.unclip_ratio, dcfg.min_size,
        dcfg.max_candidates);
  else
    GST_DEBUG_OBJECT (self, "decoder ctc: %d classes, space threshold %.2f",
        nd_ctc_num_classes (ctc), space_threshold);
  return TRUE;
}

/* (Re)build the decoder from the properties.  Called from start() and from
 * the streaming thread when a property changed; files are read here, never
 * per frame.  Posts an element error and returns FALSE on failure. */
static gboolean
gst_tensor_decoder_configure (GstTensorDecoder * self)
{
  nd_config cfg;
  nd_error err = { 0 };
  nd_decoder *dec = NULL;
  nd_labels *labels = NULL;
  float *priors = NULL;
  int n_priors = 0;
  gchar *labels_file, *priors_file, *output_tensor, *boxes_tensor,
      *scores_tensor, *classes_tensor;
  nd_status st = ND_OK;

  GST_OBJECT_LOCK (self);
  if (is_ocr_scheme (self->scheme)) {
    GST_OBJECT_UNLOCK (self);
    return gst_tensor_decoder_configure_ocr (self);
  }
  nd_config_init (&cfg, scheme_map[self->scheme]);
  self->active_scheme = self->scheme;
  if (self->score_threshold >= 0.0f)
    cfg.score_threshold = self->score_threshold;
  if (self->iou_threshold >= 0.0f)
    cfg.iou_threshold = self->iou_threshold;
  cfg.max_detections = (int) self->max_detections;
  cfg.top_k = (int) self->top_k;
  cfg.num_classes = (int) self->num_classes;
  cfg.model_width = self->model_width;
  cfg.model_height = self->model_height;
  cfg.box_format = (nd_box_format) self->box_format;
  if (cfg.scheme == ND_SCHEME_SSD)
    cfg.box_normalized = self->box_normalized;
  cfg.background_class = self->background_class;
  if (self->activation != GST_TENSOR_DECODER_ACTIVATION_AUTO ||
      cfg.scheme == ND_SCHEME_CLASSIFY)
    cfg.activation = (nd_activation) self->activation;
  cfg.class_agnostic_nms = self->class_agnostic_nms;
  labels_file = g_strdup (self->labels_file);
  priors_file = g_strdup (self->priors_file);
  output_tensor = g_strdup (self->output_tensor);
  boxes_tensor = g_strdup (self->boxes_tensor);
  scores_tensor = g_strdup (self->scores_tensor);
  classes_tensor = g_strdup (self->classes_tensor);
  latch_common_locked (self);
  GST_OBJECT_UNLOCK (self);

  cfg.output_tensor = output_tensor;
  cfg.boxes_tensor = boxes_tensor;
  cfg.scores_tensor = scores_tensor;
  cfg.classes_tensor = classes_tensor;

  if (labels_file)
    st = nd_labels_load (labels_file, &labels, &err);
  if (st == ND_OK && priors_file) {
    st = nd_priors_load (priors_file, &priors, &n_priors, &err);
    cfg.priors = priors;
    cfg.n_priors = n_priors;
  }
  if (st == ND_OK)
    st = nd_decoder_new (&cfg, &dec, &err);

  g_free (labels_file);
  g_free (priors_file);
  g_free (output_tensor);
  g_free (boxes_tensor);
  g_free (scores_tensor);
  g_free (classes_tensor);
  g_free (priors);              /* the decoder keeps its own copy */

  if (st != ND_OK) {
    nd_labels_free (labels);
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("Cannot set up the %s decoder: %s", nd_scheme_name (cfg.scheme),
            err.msg), ("%s", nd_status_str (st)));
    return FALSE;
  }
  nd_decoder_free (self->decoder);
  self->decoder = dec;
  nd_dbnet_free (self->dbnet);
  self->dbnet = NULL;
  nd_ctc_free (self->ctc);
  self->ctc = NULL;
  nd_labels_free (self->labels);
  self->labels = labels;
  GST_DEBUG_OBJECT (self, "decoder %s: score >= %.2f, IoU %.2f, max %d",
      nd_scheme_name (cfg.scheme), cfg.score_threshold, cfg.iou_threshold,
      cfg.max_detections);
  return TRUE;
}

static gboolean
gst_tensor_decoder_start (GstBaseTransform * trans)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (trans);

  self->frames = 0;
  self->warned_no_meta = FALSE;
  self->seen_meta = FALSE;
  self->frames_without_meta = 0;
  self->warned_model_size = FALSE;
  self->have_info = FALSE;
  /* Fail the state change on a missing labels/priors file or a bad
   * setting, before any data flows. */
  return gst_tensor_decoder_configure (self);
}

static gboolean
gst_tensor_decoder_stop (GstBaseTransform * trans)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (trans);

  nd_decoder_free (self->decoder);
  self->decoder = NULL;
  nd_dbnet_free (self->dbnet);
  self->dbnet = NULL;
  nd_ctc_free (self->ctc);
  self->ctc = NULL;
  nd_labels_free (self->labels);
  self->labels = NULL;
  GST_OBJECT_LOCK (self);
  self->dirty = TRUE;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_tensor_decoder_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (trans);

  if (!gst_video_info_from_caps (&self->info, incaps)) {
    GST_ERROR_OBJECT (self, "invalid caps %" GST_PTR_FORMAT, incaps);
    return FALSE;
  }
  self->have_info = TRUE;
  return TRUE;
}

/* ---- streaming ------------------------------------------------------------ */

static const gchar *
label_of (GstTensorDecoder * self, const nd_detection * d, gchar * buf,
    gsize size)
{
  const gchar *l = nd_labels_get (self->labels, d->class_id);

  if (l && *l)
    return l;
  if (self->active_scheme == GST_TENSOR_DECODER_SCHEME_BLAZEFACE)
    return "face";
  g_snprintf (buf, size, "class-%d", d->class_id);
  return buf;
}

static GstStructure *
keypoints_structure (const nd_detection * d, const gchar * name)
{
  GstStructure *s = gst_structure_new_empty (name);
  gint k;

  for (k = 0; k < d->n_keypoints; k++) {
    GValue arr = G_VALUE_INIT, v = G_VALUE_INIT;
    const gchar *kname = nd_blazeface_keypoint_name (k);

    g_value_init (&arr, GST_TYPE_ARRAY);
    g_value_init (&v, G_TYPE_DOUBLE);
    g_value_set_double (&v, d->keypoints[k].x);
    gst_value_array_append_value (&arr, &v);
    g_value_set_double (&v, d->keypoints[k].y);
    gst_value_array_append_value (&arr, &v);
    g_value_unset (&v);
    if (kname)
      gst_structure_take_value (s, kname, &arr);
    else
      g_value_unset (&arr);
  }
  return s;
}

static void
append_uint (GValue * arr, guint u)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, G_TYPE_UINT);
  g_value_set_uint (&v, u);
  gst_value_array_append_and_take_value (arr, &v);
}

static void
append_double (GValue * arr, gdouble d)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, G_TYPE_DOUBLE);
  g_value_set_double (&v, d);
  gst_value_array_append_and_take_value (arr, &v);
}

static void
append_int (GValue * arr, gint i)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, G_TYPE_INT);
  g_value_set_int (&v, i);
  gst_value_array_append_and_take_value (arr, &v);
}

static void
append_string (GValue * arr, const gchar * s)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, G_TYPE_STRING);
  g_value_set_string (&v, s);
  gst_value_array_append_and_take_value (arr, &v);
}

/* The per-frame message fields: parallel arrays, one entry per result
 * (arrays of numbers print without escaping in gst-launch -m, unlike
 * nested structures). */
typedef struct
{
  GValue labels, class_ids, confs, boxes, kps, roi_ids, parent_ids;
  guint count;
} ResultList;

static void
result_list_init (ResultList * r)
{
  memset (r, 0, sizeof *r);
  g_value_init (&r->labels, GST_TYPE_ARRAY);
  g_value_init (&r->class_ids, GST_TYPE_ARRAY);
  g_value_init (&r->confs, GST_TYPE_ARRAY);
  g_value_init (&r->boxes, GST_TYPE_ARRAY);
  g_value_init (&r->kps, GST_TYPE_ARRAY);
  g_value_init (&r->roi_ids, GST_TYPE_ARRAY);
  g_value_init (&r->parent_ids, GST_TYPE_ARRAY);
}

static void
result_list_clear (ResultList * r)
{
  g_value_unset (&r->labels);
  g_value_unset (&r->class_ids);
  g_value_unset (&r->confs);
  g_value_unset (&r->boxes);
  g_value_unset (&r->kps);
  g_value_unset (&r->roi_ids);
  g_value_unset (&r->parent_ids);
}

static void
result_list_add (ResultList * r, const gchar * label, const nd_detection * d,
    guint x, guint y, guint w, guint h, gint roi_id, gint parent_id)
{
  GValue arr = G_VALUE_INIT;
  gint k;

  append_string (&r->labels, label);
  append_int (&r->class_ids, d->class_id);
  append_double (&r->confs, d->score);
  /* <x, y, width, height> in frame pixels, as the ROI meta */
  g_value_init (&arr, GST_TYPE_ARRAY);
  append_uint (&arr, x);
  append_uint (&arr, y);
  append_uint (&arr, w);
  append_uint (&arr, h);
  gst_value_array_append_and_take_value (&r->boxes, &arr);
  if (d->n_keypoints > 0) {
    /* <x0, y0, x1, y1, ...> in the order of keypoint-names */
    g_value_init (&arr, GST_TYPE_ARRAY);
    for (k = 0; k < d->n_keypoints; k++) {
      append_double (&arr, d->keypoints[k].x);
      append_double (&arr, d->keypoints[k].y);
    }
    gst_value_array_append_and_take_value (&r->kps, &arr);
  }
  append_int (&r->roi_ids, roi_id);
  append_int (&r->parent_ids, parent_id);
  r->count++;
}

/* The first id for the ROIs this element adds to buf: one more than any id
 * already there, and at least 1 (0 is the id of a ROI whose producer set
 * none). */
static gint
first_free_roi_id (GstBuffer * buf)
{
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  gint max = 0;

  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    max = MAX (max, roi->id);
  return max < G_MAXINT ? max + 1 : max;
}

static gboolean
has_geometry (const GstOnnxTensorMeta * tmeta)
{
  const GstOnnxTensorGeometry *g = &tmeta->geometry;

  return g->frame_width > 0 && g->frame_height > 0 && g->input_width > 0 &&
      g->input_height > 0;
}

/* Labels region roi with the classification results res[0..n): the best in
 * the `label`, `class-id`, `confidence` fields, all of them best first in
 * `labels`, `class-ids`, `confidences`. */
static void
label_region (GstTensorDecoder * self, GstVideoRegionOfInterestMeta * roi,
    GQuark model_id, const nd_detection * res, gint n)
{
  GValue labels = G_VALUE_INIT, ids = G_VALUE_INIT, confs = G_VALUE_INIT;
  GstStructure *s;
  gchar tmp[32];
  gint i;

  g_value_init (&labels, GST_TYPE_ARRAY);
  g_value_init (&ids, GST_TYPE_ARRAY);
  g_value_init (&confs, GST_TYPE_ARRAY);
  for (i = 0; i < n; i++) {
    append_string (&labels, label_of (self, &res[i], tmp, sizeof tmp));
    append_int (&ids, res[i].class_id);
    append_double (&confs, res[i].score);
  }
  s = gst_structure_new ("classification",
      "label", G_TYPE_STRING, label_of (self, &res[0], tmp, sizeof tmp),
      "class-id", G_TYPE_INT, res[0].class_id,
      "confidence", G_TYPE_DOUBLE, (gdouble) res[0].score,
      "model-id", G_TYPE_STRING, g_quark_to_string (model_id), NULL);
  gst_structure_take_value (s, "labels", &labels);
  gst_structure_take_value (s, "class-ids", &ids);
  gst_structure_take_value (s, "confidences", &confs);
  gst_video_region_of_interest_meta_add_param (roi, s);
}

/* The tensor an OCR scheme reads: output-tensor by name, else the first
 * output.  NULL (and err set) when absent. */
static const nd_tensor *
ocr_tensor (GstTensorDecoder * self, gint n_t, nd_error * err)
{
  const gchar *want = self->active_output_tensor;
  gint i;

  if (!want) {
    if (n_t > 0)
      return &self->tensors[0];
    g_snprintf (err->msg, sizeof err->msg, "no output tensors");
    err->status = ND_ERR_MISSING;
    return NULL;
  }
  for (i = 0; i < n_t; i++)
    if (self->tensors[i].name && strcmp (self->tensors[i].name, want) == 0)
      return &self->tensors[i];
  g_snprintf (err->msg, sizeof err->msg, "output '%s' not found", want);
  err->status = ND_ERR_MISSING;
  return NULL;
}

/* The `rotated-box` parameter of a text ROI, in frame pixels. */
static GstStructure *
rotated_box_structure (const nd_rbox * b)
{
  GValue pts = G_VALUE_INIT;
  GstStructure *s;
  gint k;

  g_value_init (&pts, GST_TYPE_ARRAY);
  for (k = 0; k < 4; k++) {
    GValue p = G_VALUE_INIT;

    g_value_init (&p, GST_TYPE_ARRAY);
    append_double (&p, b->points[k].x);
    append_double (&p, b->points[k].y);
    gst_value_array_append_and_take_value (&pts, &p);
  }
  s = gst_structure_new ("rotated-box",
      "cx", G_TYPE_DOUBLE, (gdouble) b->cx,
      "cy", G_TYPE_DOUBLE, (gdouble) b->cy,
      "width", G_TYPE_DOUBLE, (gdouble) b->width,
      "height", G_TYPE_DOUBLE, (gdouble) b->height,
      "angle", G_TYPE_DOUBLE, (gdouble) b->angle, NULL);
  gst_structure_take_value (s, "points", &pts);
  return s;
}

static GstStructure *
text_structure (const nd_ctc_result * r, GQuark model_id)
{
  return gst_structure_new ("text",
      "text", G_TYPE_STRING, r->text,
      "confidence", G_TYPE_DOUBLE, (gdouble) r->confidence,
      "model-id", G_TYPE_STRING, g_quark_to_string (model_id), NULL);
}

/* scheme=ctc: in region mode the text goes onto the region the model ran
 * on (one row per region meta); on the whole frame each row becomes a ROI
 * covering the frame. */
static gboolean
gst_tensor_decoder_decode_ctc (GstTensorDecoder * self, GstBuffer * buf,
    GstOnnxTensorMeta * tmeta, gint n_t, gint fw, gint fh, gint * next_id,
    ResultList * results)
{
  const nd_tensor *t;
  const nd_ctc_result *rows = NULL;
  nd_error err = { 0 };
  gint n_rows = 0, i;
  const gint parent_id = tmeta->roi_id >= 0 ? tmeta->roi_id : -1;
  nd_status st = ND_ERR_MISSING;

  t = ocr_tensor (self, n_t, &err);
  if (t)
    st = nd_ctc_decode (self->ctc, t, &rows, &n_rows, &err);
  if (st != ND_OK) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("The tensors of '%s' do not fit scheme 'ctc': %s",
            g_quark_to_string (tmeta->model_id), err.msg),
        ("%s", nd_status_str (st)));
    return FALSE;
  }

  if (tmeta->roi_id >= 0) {
    GstVideoRegionOfInterestMeta *region =
        gst_buffer_get_video_region_of_interest_meta_id (buf, tmeta->roi_id);
    nd_detection d = { 0 };

    if (!region) {
      GST_WARNING_OBJECT (self, "no region of interest with id %d on the "
          "frame for the tensors of '%s': text dropped", tmeta->roi_id,
          g_quark_to_string (tmeta->model_id));
      return TRUE;
    }
    if (n_rows > 1 && !self->warned_ctc_batch) {
      GST_WARNING_OBJECT (self, "'%s' gave %d rows for region %d: one per "
          "region expected, the first is used",
          g_quark_to_string (tmeta->model_id), n_rows, tmeta->roi_id);
      self->warned_ctc_batch = TRUE;
    }
    if (n_rows < 1)
      return TRUE;
    gst_video_region_of_interest_meta_add_param (region,
        text_structure (&rows[0], tmeta->model_id));
    if (results) {
      d.score = rows[0].confidence;
      result_list_add (results, rows[0].text, &d, region->x, region->y,
          region->w, region->h, region->id, parent_id);
    }
    GST_LOG_OBJECT (self, "region %d: '%s' (%.3f)", tmeta->roi_id,
        rows[0].text, rows[0].confidence);
    return TRUE;
  }

  for (i = 0; i < n_rows; i++) {
    GstVideoRegionOfInterestMeta *roi;
    nd_detection d = { 0 };

    roi = gst_buffer_add_video_region_of_interest_meta (buf, "text", 0, 0,
        (guint) fw, (guint) fh);
    roi->id = (*next_id)++;
    roi->parent_id = -1;
    gst_video_region_of_interest_meta_add_param (roi,
        text_structure (&rows[i], tmeta->model_id));
    if (results) {
      d.score = rows[i].confidence;
      result_list_add (results, rows[i].text, &d, 0, 0, (guint) fw,
          (guint) fh, roi->id, -1);
    }
  }
  return TRUE;
}

/* The rotated box of region roi turned by 180 degrees: angle + 180 (in
 * (-180, 180]) and the corners two places on, so `points` still starts at
 * the corner that is the line's top-left when read.  A region without one
 * gets one from its rectangle.  The structure is edited in place (the
 * buffer is writable here). */
static void
turn_region_180 (GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "rotated-box");
  const GValue *pts = s ? gst_structure_get_value (s, "points") : NULL;
  nd_rbox b;
  gdouble v[5];
  gint k;

  memset (&b, 0, sizeof b);
  if (s && gst_structure_get_double (s, "cx", &v[0]) &&
      gst_structure_get_double (s, "cy", &v[1]) &&
      gst_structure_get_double (s, "width", &v[2]) &&
      gst_structure_get_double (s, "height", &v[3]) &&
      gst_structure_get_double (s, "angle", &v[4]) && pts &&
      GST_VALUE_HOLDS_ARRAY (pts) && gst_value_array_get_size (pts) == 4) {
    b.cx = (float) v[0];
    b.cy = (float) v[1];
    b.width = (float) v[2];
    b.height = (float) v[3];
    b.angle = (float) v[4];
    for (k = 0; k < 4; k++) {
      const GValue *p = gst_value_array_get_value (pts, (guint) k);
      if (!GST_VALUE_HOLDS_ARRAY (p) || gst_value_array_get_size (p) != 2 ||
          !G_VALUE_HOLDS_DOUBLE (gst_value_array_get_value (p, 0)) ||
          !G_VALUE_HOLDS_DOUBLE (gst_value_array_get_value (p, 1)))
        break;
      b.points[k].x = (float)
          g_value_get_double (gst_value_array_get_value (p, 0));
      b.points[k].y = (float)
          g_value_get_double (gst_value_array_get_value (p, 1));
    }
    if (k < 4)
      s = NULL;                 /* malformed corners: rebuild from the box */
  } else {
    s = NULL;
  }
  if (s == NULL) {
    /* no (usable) rotated box: the ROI's rectangle, upright */
    b.cx = roi->x + roi->w / 2.0f;
    b.cy = roi->y + roi->h / 2.0f;
    b.width = (float) roi->w;
    b.height = (float) roi->h;
    b.angle = 0.0f;
    b.points[0] = (nd_point) { (float) roi->x, (float) roi->y };
    b.points[1] = (nd_point) { (float) (roi->x + roi->w), (float) roi->y };
    b.points[2] = (nd_point) { (float) (roi->x + roi->w),
      (float) (roi->y + roi->h)
    };
    b.points[3] = (nd_point) { (float) roi->x, (float) (roi->y + roi->h) };
  }
  {
    nd_point p0 = b.points[0], p1 = b.points[1];
    b.points[0] = b.points[2];
    b.points[1] = b.points[3];
    b.points[2] = p0;
    b.points[3] = p1;
  }
  b.angle = b.angle > 0.0f ? b.angle - 180.0f : b.angle + 180.0f;
  /* replace the parameter: remove the old one, add the new one */
  if (roi->params) {
    GList *l;
    for (l = roi->params; l; l = l->next)
      if (gst_structure_has_name (l->data, "rotated-box")) {
        gst_structure_free (l->data);
        roi->params = g_list_delete_link (roi->params, l);
        break;
      }
  }
  gst_video_region_of_interest_meta_add_param (roi, rotated_box_structure (&b));
}

/* scheme=text-direction: PP-OCR's line classifier gives [1,2] scores (0 and
 * 180 degrees) per region; a line it calls upside down with at least the
 * threshold is turned (its rotated-box), so the recogniser after reads it
 * the right way up.  A `text-direction` parameter records the call. */
static gboolean
gst_tensor_decoder_decode_direction (GstTensorDecoder * self, GstBuffer * buf,
    GstOnnxTensorMeta * tmeta, gint n_t, ResultList * results)
{
  GstVideoRegionOfInterestMeta *region;
  const nd_tensor *t;
  nd_error err = { 0 };
  const float *p;
  gfloat score;
  gboolean turn;
  gint angle;

  t = ocr_tensor (self, n_t, &err);
  if (t && (t->dtype != ND_DTYPE_FLOAT32 || t->size != 2 * sizeof (float) ||
          t->data == NULL)) {
    g_snprintf (err.msg, sizeof err.msg, "two float scores (0 and 180 "
        "degrees, [1,2]) a region expected, got %" G_GSIZE_FORMAT " bytes "
        "of type %d", t->size, t->dtype);
    t = NULL;
  }
  if (!t || tmeta->roi_id < 0) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("The tensors of '%s' do not fit scheme 'text-direction': %s",
            g_quark_to_string (tmeta->model_id), tmeta->roi_id < 0 && t ?
            "it reads regions (run the classifier with "
            "inference-region=roi-list)" : err.msg), (NULL));
    return FALSE;
  }
  region = gst_buffer_get_video_region_of_interest_meta_id (buf,
      tmeta->roi_id);
  if (!region) {
    GST_WARNING_OBJECT (self, "no region of interest with id %d for the "
        "tensors of '%s'", tmeta->roi_id, g_quark_to_string (tmeta->model_id));
    return TRUE;
  }
  p = t->data;
  turn = p[1] > p[0] && p[1] >= self->direction_threshold;
  score = p[1] > p[0] ? p[1] : p[0];
  angle = p[1] > p[0] ? 180 : 0;
  if (turn)
    turn_region_180 (region);
  gst_video_region_of_interest_meta_add_param (region,
      gst_structure_new ("text-direction",
          "angle", G_TYPE_INT, angle,
          "confidence", G_TYPE_DOUBLE, (gdouble) score,
          "turned", G_TYPE_BOOLEAN, turn,
          "model-id", G_TYPE_STRING, g_quark_to_string (tmeta->model_id),
          NULL));
  if (results) {
    nd_detection d = { 0 };
    d.score = score;
    d.class_id = angle == 180;
    result_list_add (results, angle == 180 ? "180" : "0", &d, region->x,
        region->y, region->w, region->h, region->id, region->parent_id);
  }
  return TRUE;
}

/* Decodes one tensor meta (the whole frame, or one region) into ROIs on
 * buf, in the coordinates of an fw x fh frame.  New ROIs get ids from
 * *next_id on.  Posts an element error and returns FALSE when the tensors
 * do not fit. */
static gboolean
gst_tensor_decoder_decode_meta (GstTensorDecoder * self, GstBuffer * buf,
    GstOnnxTensorMeta * tmeta, gint fw, gint fh, gint * next_id,
    ResultList * results)
{
  const nd_detection *res = NULL;
  const nd_rbox *rboxes = NULL;
  gint n_rboxes = 0;
  GstVideoRegionOfInterestMeta *region = NULL;
  nd_error err = { 0 };
  nd_transform tf;
  gint n_res = 0, i, mw = 0, mh = 0;
  guint n_t;
  gboolean classify, geometry = has_geometry (tmeta);
  const gint parent_id = tmeta->roi_id >= 0 ? tmeta->roi_id : -1;
  nd_status st;

  /* Borrowed views: the tensor data lives as long as the meta, i.e. this
   * buffer, which outlives the decode. */
  n_t = MIN (tmeta->n_tensors, MAX_TENSORS);
  for (i = 0; i < (gint) n_t; i++) {
    const GstOnnxTensor *t = &tmeta->tensors[i];
    nd_tensor *nt = &self->tensors[i];
    guint d;

    memset (nt, 0, sizeof *nt);
    nt->name = g_quark_to_string (t->name);
    nt->dtype = (int) t->data_type;
    nt->n_dims = (int) MIN (t->n_dims, ND_MAX_DIMS);
    for (d = 0; d < (guint) nt->n_dims; d++)
      nt->dims[d] = t->dims[d];
    nt->data = t->data;
    nt->size = t->size;
  }

  /* The model input size: model-width/height when set, else the one the
   * producer recorded, else the scheme's default. */
  if (!geometry && self->active_model_width == 0 &&
      self->active_scheme == GST_TENSOR_DECODER_SCHEME_BLAZEFACE &&
      !self->warned_model_size) {
    GST_INFO_OBJECT (self, "the tensors of '%s' carry no geometry and "
        "model-width is not set: assuming the 128x128 BlazeFace front model "
        "(set model-width=256 for the back model)",
        g_quark_to_string (tmeta->model_id));
    self->warned_model_size = TRUE;
  }
  if (self->ctc)
    return gst_tensor_decoder_decode_ctc (self, buf, tmeta, (gint) n_t, fw, fh,
        next_id, results);
  if (self->direction_ready)
    return gst_tensor_decoder_decode_direction (self, buf, tmeta, (gint) n_t,
        results);
  if (self->dbnet) {
    const nd_tensor *map = ocr_tensor (self, (gint) n_t, &err);

    st = map ? nd_dbnet_decode (self->dbnet, map, &rboxes, &n_rboxes,
        &err) : ND_ERR_MISSING;
    if (st == ND_OK) {
      /* boxes are in map pixels; the geometry's input size (or the frame,
       * without one) is what the map covers */
      mw = (gint) map->dims[3];
      mh = (gint) map->dims[2];
    }
  } else {
    st = nd_decoder_set_model_size (self->decoder,
        geometry && self->active_model_width == 0 ?
        tmeta->geometry.input_width : 0, geometry &&
        self->active_model_height == 0 ? tmeta->geometry.input_height : 0,
        &err);
    if (st == ND_OK)
      st = nd_decoder_decode (self->decoder, self->tensors, (int) n_t, &res,
          &n_res, &err);
  }
  if (st != ND_OK) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("The tensors of '%s' do not fit scheme '%s': %s",
            g_quark_to_string (tmeta->model_id),
            scheme_name (self->active_scheme), err.msg),
        ("%s", nd_status_str (err.status)));
    return FALSE;
  }
  if (self->decoder)
    nd_decoder_model_size (self->decoder, &mw, &mh);
  classify = self->active_scheme == GST_TENSOR_DECODER_SCHEME_CLASSIFY;

  if (tmeta->roi_id >= 0) {
    region = gst_buffer_get_video_region_of_interest_meta_id (buf,
        tmeta->roi_id);
    if (!region) {
      /* the region was removed between the model and here */
      GST_WARNING_OBJECT (self, "no region of interest with id %d on the "
          "frame for the tensors of '%s': results dropped", tmeta->roi_id,
          g_quark_to_string (tmeta->model_id));
      return TRUE;
    }
  }

  if (classify && region) {
    /* the class describes the region the model ran on */
    if (n_res > 0) {
      label_region (self, region, tmeta->model_id, res, n_res);
      for (i = 0; results && i < n_res; i++) {
        gchar tmp[32];
        result_list_add (results, label_of (self, &res[i], tmp, sizeof tmp),
            &res[i], region->x, region->y, region->w, region->h, region->id,
            parent_id);
      }
    }
    GST_LOG_OBJECT (self, "region %d: %d classes", tmeta->roi_id, n_res);
    return TRUE;
  }

  if (geometry) {
    nd_geometry g;

    g.frame_width = tmeta->geometry.frame_width;
    g.frame_height = tmeta->geometry.frame_height;
    g.input_width = tmeta->geometry.input_width;
    g.input_height = tmeta->geometry.input_height;
    g.src_x = tmeta->geometry.src_x;
    g.src_y = tmeta->geometry.src_y;
    g.src_width = tmeta->geometry.src_width;
    g.src_height = tmeta->geometry.src_height;
    g.scale_x = tmeta->geometry.scale_x;
    g.scale_y = tmeta->geometry.scale_y;
    g.offset_x = tmeta->geometry.offset_x;
    g.offset_y = tmeta->geometry.offset_y;
    if ((mw != g.input_width || mh != g.input_height) && !self->dbnet &&
        !self->warned_model_size) {
      GST_WARNING_OBJECT (self, "model-width/height %dx%d override the "
          "input size %dx%d recorded by '%s'", mw, mh, g.input_width,
          g.input_height, g_quark_to_string (tmeta->model_id));
      self->warned_model_size = TRUE;
    }
    /* model input -> the frame onnxinfer saw; then -> this frame, as
     * scale-mode says (a plain scale unless that frame was letterboxed or
     * cropped from this one in front of onnxinfer; the identity when they
     * are the same) */
    st = nd_transform_init_geometry (&tf, &g, mw, mh, 0, 0, &err);
    if (st == ND_OK) {
      nd_transform seen;

      st = nd_transform_init (&seen, g.frame_width, g.frame_height, fw, fh,
          self->active_scale_mode, &err);
      nd_transform_then (&tf, &seen);
    }
  } else if (region) {
    /* no record of the crop: the region was scaled to the model input as
     * scale-mode says, and is in the coordinates of the caps */
    gdouble rx = (gdouble) fw / GST_VIDEO_INFO_WIDTH (&self->info);
    gdouble ry = (gdouble) fh / GST_VIDEO_INFO_HEIGHT (&self->info);

    st = nd_transform_init (&tf, mw, mh, MAX (1, region->w),
        MAX (1, region->h), self->active_scale_mode, &err);
    tf.scale_x *= rx;
    tf.scale_y *= ry;
    tf.shift_x = (tf.shift_x + region->x) * rx;
    tf.shift_y = (tf.shift_y + region->y) * ry;
    tf.frame_width = fw;
    tf.frame_height = fh;
  } else {
    st = nd_transform_init (&tf, mw, mh, fw, fh, self->active_scale_mode,
        &err);
  }
  if (st != ND_OK) {
    GST_ELEMENT_ERROR (self, STREAM, DECODE,
        ("Cannot map the results of '%s' to the frame: %s",
            g_quark_to_string (tmeta->model_id), err.msg), (NULL));
    return FALSE;
  }

  for (i = 0; i < n_rboxes; i++) {
    /* scheme=dbnet: rotated text boxes */
    nd_rbox b = rboxes[i];
    nd_detection d;
    GstVideoRegionOfInterestMeta *roi;
    guint x, y, w, h;

    nd_transform_rbox (&tf, &b, &d);
    x = (guint) lrintf (d.x0);
    y = (guint) lrintf (d.y0);
    w = (guint) MAX (0, lrintf (d.x1) - (long) x);
    h = (guint) MAX (0, lrintf (d.y1) - (long) y);
    roi = gst_buffer_add_video_region_of_interest_meta (buf, "text", x, y, w,
        h);
    roi->id = (*next_id)++;
    roi->parent_id = parent_id;
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("detection", "label", G_TYPE_STRING, "text",
            "class-id", G_TYPE_INT, 0,
            "confidence", G_TYPE_DOUBLE, (gdouble) d.score,
            "model-id", G_TYPE_STRING, g_quark_to_string (tmeta->model_id),
            NULL));
    gst_video_region_of_interest_meta_add_param (roi,
        rotated_box_structure (&b));
    if (results)
      result_list_add (results, "text", &d, x, y, w, h, roi->id, parent_id);
  }

  for (i = 0; i < n_res; i++) {
    nd_detection d = res[i];
    GstVideoRegionOfInterestMeta *roi;
    GstStructure *s;
    gchar tmp[32];
    const gchar *label = label_of (self, &d, tmp, sizeof tmp);
    guint x, y, w, h;

    if (classify) {
      /* a class describes the whole frame */
      x = y = 0;
      w = (guint) fw;
      h = (guint) fh;
    } else {
      nd_transform_detection (&tf, &d);
      x = (guint) lrintf (d.x0);
      y = (guint) lrintf (d.y0);
      w = (guint) MAX (0, lrintf (d.x1) - (long) x);
      h = (guint) MAX (0, lrintf (d.y1) - (long) y);
    }
    roi = gst_buffer_add_video_region_of_interest_meta (buf, label, x, y, w,
        h);
    roi->id = (*next_id)++;
    roi->parent_id = parent_id;
    s = gst_structure_new (classify ? "classification" : "detection",
        "label", G_TYPE_STRING, label,
        "class-id", G_TYPE_INT, d.class_id,
        "confidence", G_TYPE_DOUBLE, (gdouble) d.score,
        "model-id", G_TYPE_STRING, g_quark_to_string (tmeta->model_id), NULL);
    gst_video_region_of_interest_meta_add_param (roi, s);
    if (d.n_keypoints > 0)
      gst_video_region_of_interest_meta_add_param (roi,
          keypoints_structure (&d, "keypoints"));
    if (results)
      result_list_add (results, label, &d, x, y, w, h, roi->id, parent_id);
  }
  GST_LOG_OBJECT (self, "%s %d: %d results", region ? "region" : "frame",
      region ? region->id : -1, n_res);
  return TRUE;
}

static GstFlowReturn
gst_tensor_decoder_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstTensorDecoder *self = GST_TENSOR_DECODER (trans);
  GstOnnxTensorMeta *tmeta, *first = NULL;
  GType api = gst_onnx_tensor_meta_api_get_type ();
  gpointer state = NULL;
  GQuark model_q = 0;
  ResultList results;
  gint fw, fh, next_id;
  guint n_metas = 0;
  gboolean dirty;

  GST_OBJECT_LOCK (self);
  dirty = self->dirty;
  GST_OBJECT_UNLOCK (self);
  if ((dirty || (!self->decoder && !self->dbnet && !self->ctc &&
              !self->direction_ready)) &&
      !gst_tensor_decoder_configure (self))
    return GST_FLOW_ERROR;

  if (!self->have_info) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("received a buffer before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }

  /* The model: model-id, else the producer of the first tensor meta.  Its
   * metas are one for the whole frame, or one per region it ran on. */
  if (api != 0 && (!self->active_model_id ||
          (model_q = g_quark_try_string (self->active_model_id)) != 0)) {
    while ((tmeta = (GstOnnxTensorMeta *)
            gst_buffer_iterate_meta_filtered (buf, &state, api))) {
      if (model_q == 0 || tmeta->model_id == model_q) {
        first = tmeta;
        model_q = tmeta->model_id;
        break;
      }
    }
  }
  if (!first) {
    /* A frame without tensors: pass it on untouched.  A producer in region
     * mode attaches nothing to a frame without regions, so only a stream
     * that has had no tensors for NO_META_WARN_FRAMES frames from its start
     * means something is missing (the model element is elsewhere, or
     * another model-id): say so once. */
    self->frames_without_meta++;
    if (!self->warned_no_meta && !self->seen_meta &&
        self->frames_without_meta >= NO_META_WARN_FRAMES) {
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("No tensors on the first %d frames (model-id '%s')",
              NO_META_WARN_FRAMES,
              self->active_model_id ? self->active_model_id : "(any)"),
          ("buffer %" GST_PTR_FORMAT " has no GstOnnxTensorMeta; is an "
              "onnxinfer element upstream?", buf));
      self->warned_no_meta = TRUE;
    }
    return GST_FLOW_OK;
  }
  self->seen_meta = TRUE;

  fw = self->active_frame_width > 0 ? self->active_frame_width :
      GST_VIDEO_INFO_WIDTH (&self->info);
  fh = self->active_frame_height > 0 ? self->active_frame_height :
      GST_VIDEO_INFO_HEIGHT (&self->info);
  next_id = first_free_roi_id (buf);
  if (self->active_post_messages)
    result_list_init (&results);

  /* from the first meta of the model on: the metas added while decoding
   * are ROI metas, which the filtered iteration skips */
  tmeta = first;
  while (tmeta) {
    if (tmeta->model_id == model_q) {
      n_metas++;
      if (!gst_tensor_decoder_decode_meta (self, buf, tmeta, fw, fh, &next_id,
              self->active_post_messages ? &results : NULL)) {
        if (self->active_post_messages)
          result_list_clear (&results);
        return GST_FLOW_ERROR;
      }
    }
    tmeta = (GstOnnxTensorMeta *) gst_buffer_iterate_meta_filtered (buf,
        &state, api);
  }

  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": %u tensor metas",
      self->frames, n_metas);

  if (self->active_post_messages) {
    GstSegment *seg = &trans->segment;
    GstClockTime ts = GST_BUFFER_PTS (buf);
    GstStructure *s = gst_structure_new ("tensordecoder",
        "timestamp", G_TYPE_UINT64, ts,
        "stream-time", G_TYPE_UINT64,
        gst_segment_to_stream_time (seg, GST_FORMAT_TIME, ts),
        "running-time", G_TYPE_UINT64,
        gst_segment_to_running_time (seg, GST_FORMAT_TIME, ts),
        "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf),
        "frame", G_TYPE_UINT64, self->frames,
        "scheme", G_TYPE_STRING,
        scheme_name (self->active_scheme),
        "model-id", G_TYPE_STRING, g_quark_to_string (model_q),
        "inference-id", G_TYPE_UINT64, first->inference_id,
        "width", G_TYPE_INT, fw, "height", G_TYPE_INT, fh,
        "regions", G_TYPE_UINT, first->roi_id >= 0 ? n_metas : 0,
        "count", G_TYPE_UINT, results.count, NULL);
    gst_structure_take_value (s, "labels", &results.labels);
    gst_structure_take_value (s, "class-ids", &results.class_ids);
    gst_structure_take_value (s, "confidences", &results.confs);
    gst_structure_take_value (s, "boxes", &results.boxes);
    gst_structure_take_value (s, "roi-ids", &results.roi_ids);
    gst_structure_take_value (s, "parent-ids", &results.parent_ids);
    if (self->active_scheme == GST_TENSOR_DECODER_SCHEME_BLAZEFACE) {
      GValue names = G_VALUE_INIT;
      gint k;

      g_value_init (&names, GST_TYPE_ARRAY);
      for (k = 0; nd_blazeface_keypoint_name (k); k++)
        append_string (&names, nd_blazeface_keypoint_name (k));
      gst_structure_take_value (s, "keypoint-names", &names);
      gst_structure_take_value (s, "keypoints", &results.kps);
    } else {
      g_value_unset (&results.kps);
    }
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self), s));
  }
  self->frames++;
  return GST_FLOW_OK;
}
