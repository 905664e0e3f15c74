/* GStreamer onnxinfer plugin
 *
 * gstonnxinfer.c: runs an ONNX model on video frames.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
/**
 * SECTION:element-onnxinfer
 * @title: onnxinfer
 * @short_description: run an ONNX model on every frame and attach its outputs
 *
 * `onnxinfer` runs an ONNX model on the video frames that pass through it and
 * attaches the model's output tensors to each buffer as a #GstOnnxTensorMeta
 * (see gstonnxtensormeta.h).  The video itself passes unchanged.
 *
 * The element holds one inference session from NULL->READY (the model is
 * read and planned there) to READY->NULL (everything the session allocated
 * is released).  It takes frames of any size in the raw formats decoders and
 * cameras produce (the RGB family, GRAY8, NV12, NV21, I420, YV12, YUY2,
 * UYVY); the video passes through untouched, at its own size and format.
 * Per frame, one pass (the runtime's nn_image.h, on the session's worker
 * threads) maps the frame straight into the session's pre-allocated input
 * tensor: source rectangle, resize to the model's input size
 * (#GstOnnxInfer:scale-mode; bilinear when enlarging, an area filter when
 * shrinking so 1080p into 128x128 does not alias), YUV->RGB with the frame's
 * colorimetry, channel order, `(x - mean) / std`, NCHW or NHWC, float32 or
 * uint8.  A frame that already has the tensor's exact bytes is read in place.
 * How the input was cut from the frame is recorded in the tensor meta's
 * geometry, so `tensordecoder` maps boxes back to the frame by itself.
 *
 * With #GstOnnxInfer:inference-region=roi-list the model runs on each region
 * of interest of the frame instead (the second stage of a cascade: faces
 * found by a detector, then a model on every face), and each region's
 * outputs are attached as their own #GstOnnxTensorMeta whose `roi_id` is the
 * region's id.  Output tensors go into buffers from a bounded pool that
 * travel with the frame.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=video.mp4 ! decodebin ! \
 *   onnxinfer model-location=face_detection_front_128x128.onnx \
 *     input-mean=127.5 input-std=127.5 scale-mode=letterbox ! \
 *   tensordecoder scheme=blazeface ! roioverlay ! videoconvert ! autovideosink
 * ]| Faces on a decoded video, boxes drawn on the original frames.
 * |[
 * gst-launch-1.0 v4l2src ! onnxinfer model-location=detector.onnx ! \
 *   tensordecoder scheme=yolov8 ! \
 *   onnxinfer name=cls model-location=classifier.onnx \
 *     inference-region=roi-list object-class=person ! \
 *   tensordecoder model-id=cls scheme=classify ! roioverlay ! \
 *   videoconvert ! autovideosink
 * ]| A cascade: a classifier on every person the detector found.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <string.h>

#include "gstonnxvideoutil.h"
#include "gstonnxinfer.h"
#include "gstonnxtensormeta.h"
#include "nn.h"
#include "nn_image.h"

GST_DEBUG_CATEGORY_STATIC (gst_onnx_infer_debug);
#define GST_CAT_DEFAULT gst_onnx_infer_debug

#define MAX_CHANNELS 4

#define DEFAULT_MODEL_LOCATION NULL
#define DEFAULT_BACKEND GST_ONNX_INFER_BACKEND_AUTO
#define DEFAULT_THREADS 0
#define MAX_THREADS 256
#define DEFAULT_CHANNEL_ORDER GST_ONNX_INFER_CHANNEL_ORDER_RGB
#define DEFAULT_INFERENCE_INTERVAL 1
#define DEFAULT_OUTPUT_POOL_SIZE 32
#define MIN_OUTPUT_POOL_SIZE 2
#define MAX_OUTPUT_POOL_SIZE 1024
#define DEFAULT_POST_MESSAGES FALSE
#define DEFAULT_SCALE_MODE GST_ONNX_INFER_SCALE_MODE_STRETCH
#define DEFAULT_PAD_VALUE 0.0f
#define DEFAULT_INPUT_SIZE 0
#define MAX_INPUT_SIZE 16384
#define DEFAULT_MAX_INPUT_SIZE 960
#define INPUT_SIZE_MULTIPLE 32
#define DEFAULT_LINE_WIDTH 320  /* PaddleOCR's rec_image_shape 3,48,320 */
#define DEFAULT_REGION GST_ONNX_INFER_REGION_FULL_FRAME
#define DEFAULT_OBJECT_CLASS NULL
#define DEFAULT_ROI_MIN_SIZE 0
#define DEFAULT_MAX_BATCH 1
#define MAX_MAX_BATCH 64
/* Regions inferred per frame at most; each holds one output buffer of the
 * pool until the frame is gone, so the pool is sized for this many per frame
 * in flight (bounded memory, no deadlock on a frame with many regions). */
#define MAX_REGIONS 64
#define SUMMARY_MAX_VALUES 16

enum
{
  PROP_0,
  PROP_MODEL_LOCATION,
  PROP_BACKEND,
  PROP_THREADS,
  PROP_INPUT_MEAN,
  PROP_INPUT_STD,
  PROP_CHANNEL_ORDER,
  PROP_INFERENCE_INTERVAL,
  PROP_OUTPUT_POOL_SIZE,
  PROP_POST_MESSAGES,
  PROP_SCALE_MODE,
  PROP_PAD_VALUE,
  PROP_INPUT_WIDTH,
  PROP_INPUT_HEIGHT,
  PROP_MAX_INPUT_SIZE,
  PROP_INFERENCE_REGION,
  PROP_OBJECT_CLASS,
  PROP_ROI_MIN_SIZE,
  PROP_MAX_BATCH,
  PROP_WEIGHTS_BYTES,
  PROP_ARENA_BYTES,
  PROP_DEVICE_BYTES,
  PROP_PEAK_BYTES,
  PROP_FRAMES_INFERRED,
  PROP_LAST_LATENCY_US,
  PROP_POOL_OVERFLOWS,
};

typedef enum
{
  LAYOUT_NCHW,                  /* channels before rows: planar */
  LAYOUT_NHWC,                  /* channels last: interleaved */
} TensorLayout;

/* One model output and where it goes in a storage buffer.  With a batch of
 * regions, the session's output holds every slot of the batch (dims[0] ==
 * batch) and a storage gets one slot's share (region_dims, region_nbytes). */
typedef struct
{
  GQuark name;
  nn_dtype dtype;
  int rank;
  int64_t dims[NN_MAX_RANK];
  size_t nbytes;
  gboolean batched;             /* dims[0] is the batch: sliced per region */
  int64_t region_dims[NN_MAX_RANK];
  size_t region_nbytes;
  gsize offset;
} OutputSlot;

/* A region of interest picked for inference on the current frame. */
typedef struct
{
  gint id;
  nn_rect rect;                 /* before rotation (a rotated-box: centred) */
  gdouble angle;                /* degrees, about the rect's centre */
  GstOnnxTensorGeometry geometry;
} Region;

struct _GstOnnxInfer
{
  GstBaseTransform parent;

  /* Properties and statistics: GST_OBJECT_LOCK. */
  gchar *model_location;
  GstOnnxInferBackend backend;
  guint threads;
  gfloat mean[MAX_CHANNELS];
  guint n_mean;
  gfloat std[MAX_CHANNELS];
  guint n_std;
  GstOnnxInferChannelOrder channel_order;
  guint interval;
  guint pool_size;
  gboolean post_messages;
  GstOnnxInferScaleMode scale_mode;
  gfloat pad_value;
  guint input_width, input_height;      /* 0: automatic (dynamic models) */
  guint max_input_size;
  GstOnnxInferRegion region_mode;
  gchar *object_class;
  GQuark object_quarks[32];     /* parsed object-class; 0 entries: all */
  guint n_object_quarks;
  guint roi_min_size;
  guint max_batch;
  gboolean preproc_dirty;       /* mean/std/order/scale changed while streaming */
  gboolean session_stale;       /* model/backend/threads changed in READY */
  guint64 weights_bytes, arena_bytes, device_bytes, peak_bytes;
  guint64 frames_inferred;
  guint64 last_latency_us;
  guint64 pool_overflows;
  GstCaps *model_caps;          /* what the model's input accepts */
  gchar *model_desc;            /* e.g. "'x' 1x3x48x192 float32 NCHW" */
  GstBufferPool *pool;          /* also read by change_state (flushing) */

  /* The session.  Created and destroyed in change_state (NULL<->READY, or
   * READY->PAUSED after a property change), used by the streaming thread
   * only between those; never by two threads at once. */
  nn_session *session;
  int input_index;
  TensorLayout layout;
  int rank;
  int c_axis, h_axis, w_axis, n_axis;   /* n_axis -1: no batch dimension */
  int channels;
  int64_t model_dims[NN_MAX_RANK];      /* -1: dynamic */
  nn_dtype in_dtype;
  int n_outputs;
  OutputSlot *outputs;          /* n_outputs, allocated with the session */
  gsize *out_sizes;             /* scratch for the storage layout */
  gsize *out_offsets;

  /* Streaming state: streaming thread (and start/stop). */
  gboolean negotiated;
  GstVideoInfo vinfo;
  nn_tensor *input;             /* the session's pre-allocated input tensor */
  int64_t in_shape[NN_MAX_RANK];        /* input shape in use */
  int in_w, in_h;               /* model input size in use (pixels) */
  int batch;                    /* batch dimension in use (1 for frames) */
  guint max_batch_active;       /* max-batch of the session */
  GstOnnxInferRegion active_region;     /* region mode of the session */
  nn_image_converter *conv;     /* frame -> tensor (scratch reused) */
  nn_pixel_format pix;
  nn_image_params iparams;
  nn_image_dest idest;
  gboolean pad_right;           /* scale-mode=pad-right */
  gboolean line_width;          /* pad-right regions, dynamic width: the
                                   input width follows the regions */
  gint line_min_w, line_max_w;  /* its range */
  GstOnnxTensorGeometry frame_geometry; /* of the last full-frame inference */
  Region regions[MAX_REGIONS];  /* picked on the current frame */
  gboolean warned_regions;
  gboolean warned_overflow;
  guint pool_size_active;       /* buffers the pool recycles */
  gboolean zero_copy;           /* frame layout == tensor layout */
  gboolean zero_copy_failed;
  gboolean outputs_known;       /* slots describe the current outputs */
  gboolean bind_outputs;        /* the runtime takes our output memory */
  gboolean outputs_bound;
  GstOnnxTensorStorageLayout storage_layout;
  GstBuffer *last_storage;      /* result re-attached to skipped frames */
  GQuark model_id;
  guint64 frame_count;
  guint64 inference_id;
};

#define gst_onnx_infer_parent_class parent_class
G_DEFINE_TYPE (GstOnnxInfer, gst_onnx_infer, GST_TYPE_BASE_TRANSFORM);

GST_ELEMENT_REGISTER_DEFINE (onnxinfer, "onnxinfer", GST_RANK_NONE,
    GST_TYPE_ONNX_INFER);

#define VIDEO_FORMATS "{ RGB, BGR, RGBA, BGRA, RGBx, BGRx, xRGB, xBGR, ARGB, " \
  "ABGR, GRAY8, NV12, NV21, I420, YV12, YUY2, UYVY }"

/* The GStreamer formats the pixel converter takes. */
static const struct
{
  GstVideoFormat gst;
  nn_pixel_format nn;
} format_map[] = {
  {GST_VIDEO_FORMAT_RGB, NN_PIX_RGB}, {GST_VIDEO_FORMAT_BGR, NN_PIX_BGR},
  {GST_VIDEO_FORMAT_RGBA, NN_PIX_RGBA}, {GST_VIDEO_FORMAT_BGRA, NN_PIX_BGRA},
  {GST_VIDEO_FORMAT_RGBx, NN_PIX_RGBX}, {GST_VIDEO_FORMAT_BGRx, NN_PIX_BGRX},
  {GST_VIDEO_FORMAT_xRGB, NN_PIX_XRGB}, {GST_VIDEO_FORMAT_xBGR, NN_PIX_XBGR},
  {GST_VIDEO_FORMAT_ARGB, NN_PIX_ARGB}, {GST_VIDEO_FORMAT_ABGR, NN_PIX_ABGR},
  {GST_VIDEO_FORMAT_GRAY8, NN_PIX_GRAY8}, {GST_VIDEO_FORMAT_NV12, NN_PIX_NV12},
  {GST_VIDEO_FORMAT_NV21, NN_PIX_NV21}, {GST_VIDEO_FORMAT_I420, NN_PIX_I420},
  {GST_VIDEO_FORMAT_YV12, NN_PIX_YV12}, {GST_VIDEO_FORMAT_YUY2, NN_PIX_YUY2},
  {GST_VIDEO_FORMAT_UYVY, NN_PIX_UYVY},
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (VIDEO_FORMATS)));

GType
gst_onnx_infer_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ONNX_INFER_BACKEND_AUTO,
        "Vulkan when a Vulkan compute device exists, else CPU", "auto"},
    {GST_ONNX_INFER_BACKEND_CPU, "CPU kernels", "cpu"},
    {GST_ONNX_INFER_BACKEND_VULKAN,
        "Vulkan compute device (fails when there is none)", "vulkan"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstOnnxInferBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_onnx_infer_channel_order_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ONNX_INFER_CHANNEL_ORDER_RGB, "Red, green, blue (, alpha)", "rgb"},
    {GST_ONNX_INFER_CHANNEL_ORDER_BGR, "Blue, green, red (, alpha)", "bgr"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstOnnxInferChannelOrder", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_onnx_infer_scale_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ONNX_INFER_SCALE_MODE_STRETCH,
        "Fill the model input, aspect ratio not kept", "stretch"},
    {GST_ONNX_INFER_SCALE_MODE_LETTERBOX,
        "Keep the aspect ratio, fit inside, pad with pad-value", "letterbox"},
    {GST_ONNX_INFER_SCALE_MODE_CROP,
        "Keep the aspect ratio, cover, cut the overflow (centred)", "crop"},
    {GST_ONNX_INFER_SCALE_MODE_PAD_RIGHT,
          "Fill the input height, keep the aspect ratio, align left, pad the "
          "right (text lines, as PaddleOCR feeds its recogniser)", "pad-right"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstOnnxInferScaleMode", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

GType
gst_onnx_infer_region_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ONNX_INFER_REGION_FULL_FRAME, "The whole frame", "full-frame"},
    {GST_ONNX_INFER_REGION_ROI_LIST,
        "Each region of interest (GstVideoRegionOfInterestMeta) of the frame",
        "roi-list"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstOnnxInferRegion", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void gst_onnx_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_onnx_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_onnx_infer_finalize (GObject * object);
static void close_session (GstOnnxInfer * self);
static GstStateChangeReturn gst_onnx_infer_change_state (GstElement * element,
    GstStateChange transition);
static GstCaps *gst_onnx_infer_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter);
static gboolean gst_onnx_infer_accept_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps);
static gboolean gst_onnx_infer_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
static gboolean gst_onnx_infer_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static gboolean gst_onnx_infer_start (GstBaseTransform * trans);
static gboolean gst_onnx_infer_stop (GstBaseTransform * trans);
static GstFlowReturn gst_onnx_infer_transform_ip (GstBaseTransform * trans,
    GstBuffer * buf);
static GstPadProbeReturn sink_caps_probe (GstPad * pad,
    GstPadProbeInfo * info, gpointer user_data);

/* The runtime's messages (Vulkan fallbacks and validation reports, ...)
 * into this element's debug category: GST_DEBUG=onnxinfer:4 shows them. */
static void
runtime_log (nn_log_level level, const char *msg, void *ud)
{
  GstDebugLevel l = level == NN_LOG_ERROR ? GST_LEVEL_ERROR :
      level == NN_LOG_WARNING ? GST_LEVEL_WARNING :
      level == NN_LOG_INFO ? GST_LEVEL_INFO : GST_LEVEL_DEBUG;

  GST_CAT_LEVEL_LOG (gst_onnx_infer_debug, l, NULL, "runtime: %s", msg);
}

static void
gst_onnx_infer_class_init (GstOnnxInferClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  GST_DEBUG_CATEGORY_INIT (gst_onnx_infer_debug, "onnxinfer", 0,
      "ONNX inference element");
  nn_set_log (runtime_log, NULL);

  gobject_class->set_property = gst_onnx_infer_set_property;
  gobject_class->get_property = gst_onnx_infer_get_property;
  gobject_class->finalize = gst_onnx_infer_finalize;

  /**
   * GstOnnxInfer:model-location:
   *
   * Path of the ONNX model.  Read at the NULL->READY state change; changing
   * it is refused (with a warning) in PAUSED and PLAYING.
   */
  g_object_class_install_property (gobject_class, PROP_MODEL_LOCATION,
      g_param_spec_string ("model-location", "Model location",
          "Path of the ONNX model file, read when going from NULL to READY",
          DEFAULT_MODEL_LOCATION, rw | GST_PARAM_MUTABLE_READY));

  /**
   * GstOnnxInfer:backend:
   *
   * Where the model runs.  `auto` takes Vulkan when a Vulkan compute device
   * exists and falls back to the CPU otherwise; the choice is logged (debug
   * category `onnxinfer`, level INFO).
   */
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where the model runs: auto (Vulkan when a device exists, else "
          "CPU), cpu or vulkan", GST_TYPE_ONNX_INFER_BACKEND, DEFAULT_BACKEND,
          rw | GST_PARAM_MUTABLE_READY));

  /**
   * GstOnnxInfer:threads:
   *
   * Worker threads of the CPU kernels; 0 uses one per CPU core.
   */
  g_object_class_install_property (gobject_class, PROP_THREADS,
      g_param_spec_uint ("threads", "Threads",
          "Worker threads for the CPU kernels (0 = one per CPU core)",
          0, MAX_THREADS, DEFAULT_THREADS, rw | GST_PARAM_MUTABLE_READY));

  /**
   * GstOnnxInfer:input-mean:
   *
   * Per-channel mean subtracted from the 0..255 pixel values, in the model's
   * channel order: the model gets `(pixel - mean) / std`.  One number
   * applies to every channel, or one per channel as a comma list
   * (`123.675,116.28,103.53`; GStreamer's `<...>` array syntax works too);
   * empty means 0.  E.g. `input-mean=127.5 input-std=127.5` maps pixels to
   * [-1, 1].  Reads back as a comma list.
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_MEAN,
      g_param_spec_string ("input-mean", "Input mean",
          "Per-channel mean subtracted from 0..255 pixel values, in the "
          "model's channel order: one number for all channels or a comma "
          "list, e.g. 127.5 or 123.675,116.28,103.53; empty = 0. "
          "The model input is (pixel - mean) / std", NULL,
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:input-std:
   *
   * Per-channel divisor, in the model's channel order, same syntax as
   * #GstOnnxInfer:input-mean.  One value applies to every channel; empty
   * means 1.  Must not be 0.
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_STD,
      g_param_spec_string ("input-std", "Input standard deviation",
          "Per-channel divisor applied after subtracting the mean, in the "
          "model's channel order: one number or a comma list, e.g. 127.5 or "
          "58.395,57.12,57.375; empty = 1; not 0", NULL,
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:channel-order:
   *
   * Color channel order the model expects.  Independent of the video
   * format: RGB and BGR frames are both fed in this order.
   */
  g_object_class_install_property (gobject_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum ("channel-order", "Channel order",
          "Color channel order the model expects (independent of the video "
          "format)", GST_TYPE_ONNX_INFER_CHANNEL_ORDER, DEFAULT_CHANNEL_ORDER,
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:inference-interval:
   *
   * Run the model on one frame in N; the other frames carry the last
   * result again (#GstOnnxTensorMeta.reused is %TRUE on them).
   */
  g_object_class_install_property (gobject_class, PROP_INFERENCE_INTERVAL,
      g_param_spec_uint ("inference-interval", "Inference interval",
          "Run the model on every Nth frame; the frames in between carry the "
          "last result", 1, G_MAXUINT, DEFAULT_INFERENCE_INTERVAL,
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:output-pool-size:
   *
   * Output tensor sets the element recycles (frames downstream holding a
   * result, plus the one kept for inference-interval; times 64 in
   * roi-list mode, one per region).  When downstream holds all of them (an
   * encoder's look-ahead, a long queue) the element does not wait, which
   * could deadlock, but allocates another set and counts it in
   * #GstOnnxInfer:pool-overflows: raise this when that count grows.
   */
  g_object_class_install_property (gobject_class, PROP_OUTPUT_POOL_SIZE,
      g_param_spec_uint ("output-pool-size", "Output pool size",
          "Output tensor sets recycled without allocation (when downstream "
          "holds them all, more are allocated, see pool-overflows)",
          MIN_OUTPUT_POOL_SIZE, MAX_OUTPUT_POOL_SIZE, DEFAULT_OUTPUT_POOL_SIZE,
          rw | GST_PARAM_MUTABLE_READY));

  /**
   * GstOnnxInfer:post-messages:
   *
   * Post an element message named `onnxinfer` on the bus after each
   * inference with a summary of every output tensor: name, type, dims,
   * min, max, mean and, for tensors of at most 16 elements, the values.
   * Meant for inspection (`gst-launch-1.0 -m`); it allocates per frame.
   */
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post an 'onnxinfer' element message with a summary of the output "
          "tensors after each inference (for inspection; allocates)",
          DEFAULT_POST_MESSAGES, rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:scale-mode:
   *
   * How the frame (or region) is fitted into the model's input size:
   * stretched, letterboxed (aspect kept, padded with #GstOnnxInfer:pad-value)
   * or cropped (aspect kept, centred, the overflow cut).  The mapping is
   * stored in the tensor meta's geometry; `tensordecoder` reads it.
   *
   * `pad-right` is for text-line models (PP-OCR's recogniser and direction
   * classifier): the region fills the input height, its width follows the
   * aspect ratio (rounded up, at most the input width), it is aligned left
   * and the rest is #GstOnnxInfer:pad-value (PaddleOCR pads with 0 after
   * normalisation: pad-value=127.5 with input-mean/input-std 127.5).  A
   * region at least 1.5 times taller than wide is turned 90 degrees first
   * (vertical text, as PaddleOCR does).  With inference-region=roi-list and
   * a model whose input width is dynamic, the input width follows the
   * regions: the widest region of the frame at the input height, rounded
   * up to a multiple of 32, at least #GstOnnxInfer:input-width (0: 320,
   * PaddleOCR's) and at most #GstOnnxInfer:max-input-size (wider lines are
   * squeezed); with a dynamic batch, the batch is the frame's lines spread
   * evenly over the fewest runs of at most #GstOnnxInfer:max-batch.  Within
   * a stream the width and the batch only grow (each growth re-plans the
   * session once), so a stream settles on one shape and then runs with no
   * re-planning and no allocation; a new stream starts small again.
   */
  g_object_class_install_property (gobject_class, PROP_SCALE_MODE,
      g_param_spec_enum ("scale-mode", "Scale mode",
          "How the frame or region is fitted into the model input: stretch, "
          "letterbox (keep aspect, pad), crop (keep aspect, cut) or "
          "pad-right (text lines: input height, left-aligned, padded right)",
          GST_TYPE_ONNX_INFER_SCALE_MODE, DEFAULT_SCALE_MODE,
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:pad-value:
   *
   * Pixel value (0..255, before input-mean/input-std) of the letterbox
   * borders, in every channel.
   */
  g_object_class_install_property (gobject_class, PROP_PAD_VALUE,
      g_param_spec_float ("pad-value", "Pad value",
          "Pixel value (0-255, before mean/std) of the letterbox padding",
          0.0f, 255.0f, DEFAULT_PAD_VALUE, rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:input-width:
   *
   * Model input width for models whose width is dynamic; 0 derives it
   * from the frame: the frame size scaled down (aspect kept) so that its
   * longer side is at most #GstOnnxInfer:max-input-size, then rounded to a
   * multiple of 32.  Ignored (must be 0 or equal) when the model fixes its
   * width.
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_WIDTH,
      g_param_spec_uint ("input-width", "Input width",
          "Model input width for models with a dynamic width (0 = from the "
          "frame: capped by max-input-size, rounded to a multiple of 32)",
          0, MAX_INPUT_SIZE, DEFAULT_INPUT_SIZE, rw | GST_PARAM_MUTABLE_READY));
  /**
   * GstOnnxInfer:input-height:
   *
   * Model input height for models whose height is dynamic; 0: see
   * #GstOnnxInfer:input-width.
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_HEIGHT,
      g_param_spec_uint ("input-height", "Input height",
          "Model input height for models with a dynamic height (0 = from the "
          "frame: capped by max-input-size, rounded to a multiple of 32)",
          0, MAX_INPUT_SIZE, DEFAULT_INPUT_SIZE, rw | GST_PARAM_MUTABLE_READY));
  /**
   * GstOnnxInfer:max-input-size:
   *
   * For models with dynamic height/width and no input-width/input-height:
   * the longer side of the input derived from the frame is at most this
   * (default 960, PaddleOCR's detector limit).
   */
  g_object_class_install_property (gobject_class, PROP_MAX_INPUT_SIZE,
      g_param_spec_uint ("max-input-size", "Max input size",
          "Longest side of an input size derived from the frame (dynamic "
          "models without input-width/input-height)", INPUT_SIZE_MULTIPLE,
          MAX_INPUT_SIZE, DEFAULT_MAX_INPUT_SIZE, rw | GST_PARAM_MUTABLE_READY));

  /**
   * GstOnnxInfer:inference-region:
   *
   * `full-frame` runs the model on each frame; `roi-list` runs it on each
   * #GstVideoRegionOfInterestMeta of the frame (filtered by
   * #GstOnnxInfer:object-class and #GstOnnxInfer:roi-min-size, at most 64
   * per frame), each region cropped and scaled per #GstOnnxInfer:scale-mode,
   * and attaches one #GstOnnxTensorMeta per region whose `roi_id` is the
   * region's `id`.  Frames without regions pass without tensors.
   */
  g_object_class_install_property (gobject_class, PROP_INFERENCE_REGION,
      g_param_spec_enum ("inference-region", "Inference region",
          "Run on the full frame, or on each region of interest (roi-list)",
          GST_TYPE_ONNX_INFER_REGION, DEFAULT_REGION,
          rw | GST_PARAM_MUTABLE_READY));

  /**
   * GstOnnxInfer:object-class:
   *
   * With inference-region=roi-list: comma-separated labels (the regions'
   * `roi_type`, e.g. "face,person") the model runs on; empty: every region.
   */
  g_object_class_install_property (gobject_class, PROP_OBJECT_CLASS,
      g_param_spec_string ("object-class", "Object class",
          "roi-list mode: comma-separated region labels to run on (empty = "
          "all)", DEFAULT_OBJECT_CLASS, rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:roi-min-size:
   *
   * With inference-region=roi-list: regions narrower or lower than this
   * many pixels are skipped.
   */
  g_object_class_install_property (gobject_class, PROP_ROI_MIN_SIZE,
      g_param_spec_uint ("roi-min-size", "ROI minimum size",
          "roi-list mode: skip regions whose width or height is below this "
          "(pixels)", 0, G_MAXINT, DEFAULT_ROI_MIN_SIZE,
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:max-batch:
   *
   * With inference-region=roi-list and a model whose batch dimension is
   * dynamic: up to this many regions go into one run.  The session is
   * planned once for this batch and always runs it whole (unused slots
   * are computed and dropped), so pick it near the usual number of regions
   * per frame.  A model with a fixed batch N takes N regions a run.
   */
  g_object_class_install_property (gobject_class, PROP_MAX_BATCH,
      g_param_spec_uint ("max-batch", "Max batch",
          "roi-list mode, dynamic batch: regions per run", 1, MAX_MAX_BATCH,
          DEFAULT_MAX_BATCH, rw | GST_PARAM_MUTABLE_READY));

  g_object_class_install_property (gobject_class, PROP_WEIGHTS_BYTES,
      g_param_spec_uint64 ("weights-bytes", "Weights bytes",
          "Bytes of model constants owned by the session (0 without session)",
          0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_ARENA_BYTES,
      g_param_spec_uint64 ("arena-bytes", "Arena bytes",
          "Bytes of the planned arena for intermediate tensors", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_DEVICE_BYTES,
      g_param_spec_uint64 ("device-bytes", "Device bytes",
          "Bytes of GPU memory held by the session (Vulkan backend)", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_PEAK_BYTES,
      g_param_spec_uint64 ("peak-bytes", "Peak bytes",
          "Peak of weights + arena + I/O + device + staging bytes", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_FRAMES_INFERRED,
      g_param_spec_uint64 ("frames-inferred", "Frames inferred",
          "Frames the model ran on since the session was created", 0,
          G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_LAST_LATENCY_US,
      g_param_spec_uint64 ("last-latency-us", "Last latency",
          "Microseconds the last inference took (input conversion, run and "
          "output collection)", 0, G_MAXUINT64, 0, ro));
  g_object_class_install_property (gobject_class, PROP_POOL_OVERFLOWS,
      g_param_spec_uint64 ("pool-overflows", "Pool overflows",
          "Output buffers allocated because downstream held every pooled one "
          "(raise output-pool-size when this grows)", 0, G_MAXUINT64, 0, ro));

  gst_element_class_set_static_metadata (element_class,
      "ONNX inference", "Filter/Analyzer/Video",
      "Runs an ONNX model on video frames and attaches the output tensors "
      "as GstOnnxTensorMeta",
      ONNXINFER_AUTHOR);
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  element_class->change_state = GST_DEBUG_FUNCPTR (gst_onnx_infer_change_state);

  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_onnx_infer_transform_caps);
  trans_class->accept_caps = GST_DEBUG_FUNCPTR (gst_onnx_infer_accept_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_onnx_infer_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_onnx_infer_sink_event);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_onnx_infer_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_onnx_infer_stop);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_onnx_infer_transform_ip);
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;

  gst_type_mark_as_plugin_api (GST_TYPE_ONNX_INFER_BACKEND, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_ONNX_INFER_CHANNEL_ORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_ONNX_INFER_SCALE_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_ONNX_INFER_REGION, 0);
}

static void
gst_onnx_infer_init (GstOnnxInfer * self)
{
  self->model_location = g_strdup (DEFAULT_MODEL_LOCATION);
  self->backend = DEFAULT_BACKEND;
  self->threads = DEFAULT_THREADS;
  self->channel_order = DEFAULT_CHANNEL_ORDER;
  self->interval = DEFAULT_INFERENCE_INTERVAL;
  self->pool_size = DEFAULT_OUTPUT_POOL_SIZE;
  self->scale_mode = DEFAULT_SCALE_MODE;
  self->pad_value = DEFAULT_PAD_VALUE;
  self->input_width = self->input_height = DEFAULT_INPUT_SIZE;
  self->max_input_size = DEFAULT_MAX_INPUT_SIZE;
  self->region_mode = DEFAULT_REGION;
  self->object_class = g_strdup (DEFAULT_OBJECT_CLASS);
  self->roi_min_size = DEFAULT_ROI_MIN_SIZE;
  self->max_batch = DEFAULT_MAX_BATCH;
  self->input_index = -1;
  self->batch = 1;

  /* The video passes unchanged; the buffer is only made writable (no copy
   * when we hold the only reference) to attach the meta. */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
  gst_base_transform_set_qos_enabled (GST_BASE_TRANSFORM (self), FALSE);
  gst_pad_add_probe (GST_BASE_TRANSFORM_SINK_PAD (self),
      GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, sink_caps_probe, self, NULL);
}

static void
gst_onnx_infer_finalize (GObject * object)
{
  GstOnnxInfer *self = GST_ONNX_INFER (object);

  /* The session is gone since READY->NULL; should an application drop the
   * element without setting it to NULL, release it here. */
  if (self->session)
    close_session (self);
  g_free (self->model_location);
  g_free (self->object_class);
  g_free (self->model_desc);
  gst_clear_caps (&self->model_caps);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ---- properties ---------------------------------------------------------- */

/* Parses a per-channel list: "127.5", "127.5,127.5,127.5", "0.5 1 2",
 * "<127.5, 1, 2>" (GStreamer's array syntax, and what a GstValueArray set
 * through g_object_set_property transforms to), "" (none).  Stores up to
 * MAX_CHANNELS values and returns the real count in *n (so a wrong count
 * can be reported as it is); FALSE with *why set when an item is not a
 * finite number. */
static gboolean
parse_channel_values (const gchar * str, gfloat * out, guint * n,
    const gchar ** why)
{
  gchar **items;
  gchar *copy;
  guint i, count = 0;
  gboolean ok = TRUE;

  *n = 0;
  if (str == NULL)
    return TRUE;
  copy = g_strdup (str);
  g_strdelimit (copy, "<>{}[]", ' ');
  items = g_strsplit_set (copy, ", \t;", -1);
  for (i = 0; items[i] && ok; i++) {
    gchar *item = items[i], *end = NULL;
    gdouble d;

    if (*item == '\0')
      continue;
    /* "(float)127.5", as gst_value_serialize writes array members */
    if (item[0] == '(' && strchr (item, ')'))
      item = strchr (item, ')') + 1;
    d = g_ascii_strtod (item, &end);
    if (end == item || *end != '\0' || !isfinite (d) || fabs (d) > G_MAXFLOAT) {
      *why = "not a finite number";
      ok = FALSE;
      break;
    }
    if (count < MAX_CHANNELS)
      out[count] = (gfloat) d;
    count++;
  }
  g_strfreev (items);
  g_free (copy);
  *n = count;
  return ok;
}

/* The canonical form get_property returns: "127.5,1,2". */
static gchar *
format_channel_values (const gfloat * v, guint n)
{
  GString *s = g_string_new (NULL);
  gchar num[G_ASCII_DTOSTR_BUF_SIZE];
  guint i;

  for (i = 0; i < n && i < MAX_CHANNELS; i++) {
    if (i)
      g_string_append_c (s, ',');
    g_string_append (s, g_ascii_formatd (num, sizeof num, "%g", v[i]));
  }
  return g_string_free (s, FALSE);
}

static void
gst_onnx_infer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstOnnxInfer *self = GST_ONNX_INFER (object);
  gboolean refused = FALSE;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL_LOCATION:
    case PROP_BACKEND:
    case PROP_THREADS:
    case PROP_OUTPUT_POOL_SIZE:
    case PROP_INPUT_WIDTH:
    case PROP_INPUT_HEIGHT:
    case PROP_MAX_INPUT_SIZE:
    case PROP_INFERENCE_REGION:
    case PROP_MAX_BATCH:
      /* These need a new session (or new input shape): refuse while
       * streaming. */
      if (GST_STATE (self) > GST_STATE_READY ||
          GST_STATE_PENDING (self) > GST_STATE_READY) {
        refused = TRUE;
        break;
      }
      if (prop_id == PROP_MODEL_LOCATION) {
        g_free (self->model_location);
        self->model_location = g_value_dup_string (value);
      } else if (prop_id == PROP_BACKEND) {
        self->backend = g_value_get_enum (value);
      } else if (prop_id == PROP_THREADS) {
        self->threads = g_value_get_uint (value);
      } else if (prop_id == PROP_INPUT_WIDTH) {
        self->input_width = g_value_get_uint (value);
      } else if (prop_id == PROP_INPUT_HEIGHT) {
        self->input_height = g_value_get_uint (value);
      } else if (prop_id == PROP_MAX_INPUT_SIZE) {
        self->max_input_size = g_value_get_uint (value);
      } else if (prop_id == PROP_INFERENCE_REGION) {
        self->region_mode = g_value_get_enum (value);
      } else if (prop_id == PROP_MAX_BATCH) {
        self->max_batch = g_value_get_uint (value);
      } else {
        self->pool_size = g_value_get_uint (value);
      }
      /* In READY the session exists: rebuild it at READY->PAUSED.  (The
       * input size properties only matter at caps time.) */
      if ((prop_id == PROP_MODEL_LOCATION || prop_id == PROP_BACKEND ||
              prop_id == PROP_THREADS || prop_id == PROP_INFERENCE_REGION ||
              prop_id == PROP_MAX_BATCH) && GST_STATE (self) == GST_STATE_READY)
        self->session_stale = TRUE;
      break;
    case PROP_SCALE_MODE:
      self->scale_mode = g_value_get_enum (value);
      self->preproc_dirty = TRUE;
      break;
    case PROP_PAD_VALUE:
      self->pad_value = g_value_get_float (value);
      self->preproc_dirty = TRUE;
      break;
    case PROP_OBJECT_CLASS:{
      gchar **parts;
      guint i;
      g_free (self->object_class);
      self->object_class = g_value_dup_string (value);
      self->n_object_quarks = 0;
      parts = g_strsplit (self->object_class ? self->object_class : "", ",",
          -1);
      for (i = 0; parts[i]; i++) {
        gchar *label = g_strstrip (parts[i]);
        if (*label == '\0')
          continue;
        if (self->n_object_quarks == G_N_ELEMENTS (self->object_quarks)) {
          GST_WARNING_OBJECT (self, "object-class: more than %u labels, "
              "ignoring the rest", (guint) G_N_ELEMENTS (self->object_quarks));
          break;
        }
        self->object_quarks[self->n_object_quarks++] =
            g_quark_from_string (label);
      }
      g_strfreev (parts);
      break;
    }
    case PROP_ROI_MIN_SIZE:
      self->roi_min_size = g_value_get_uint (value);
      break;
    case PROP_INPUT_MEAN:
    case PROP_INPUT_STD:{
      gfloat v[MAX_CHANNELS] = { 0 };
      guint n = 0, i;
      const gchar *why = NULL;
      const gchar *str = g_value_get_string (value);
      gboolean is_std = prop_id == PROP_INPUT_STD;

      if (!parse_channel_values (str, v, &n, &why)) {
        GST_OBJECT_UNLOCK (self);
        g_warning ("onnxinfer: %s \"%s\": %s; give one number or a comma "
            "list (e.g. 127.5 or 123.675,116.28,103.53); keeping the previous "
            "value", pspec->name, str, why);
        return;
      }
      for (i = 0; is_std && i < MIN (n, MAX_CHANNELS); i++)
        if (v[i] == 0.0f) {
          GST_OBJECT_UNLOCK (self);
          g_warning ("onnxinfer: input-std values must not be 0; keeping the "
              "previous value");
          return;
        }
      if (is_std) {
        memcpy (self->std, v, sizeof v);
        self->n_std = n;
      } else {
        memcpy (self->mean, v, sizeof v);
        self->n_mean = n;
      }
      self->preproc_dirty = TRUE;
      break;
    }

    case PROP_CHANNEL_ORDER:
      self->channel_order = g_value_get_enum (value);
      self->preproc_dirty = TRUE;
      break;
    case PROP_INFERENCE_INTERVAL:
      self->interval = g_value_get_uint (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);

  if (refused) {
    GST_WARNING_OBJECT (self, "Refusing to change '%s' in state %s: only "
        "possible in NULL or READY", pspec->name,
        gst_element_state_get_name (GST_STATE (self)));
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("Cannot change '%s' while the element is PAUSED or PLAYING; set the "
            "pipeline to READY or NULL first.", pspec->name), (NULL));
  }
}

static void
gst_onnx_infer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstOnnxInfer *self = GST_ONNX_INFER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL_LOCATION:
      g_value_set_string (value, self->model_location);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_INPUT_MEAN:
      g_value_take_string (value, format_channel_values (self->mean,
              self->n_mean));
      break;
    case PROP_INPUT_STD:
      g_value_take_string (value, format_channel_values (self->std,
              self->n_std));
      break;
    case PROP_CHANNEL_ORDER:
      g_value_set_enum (value, self->channel_order);
      break;
    case PROP_INFERENCE_INTERVAL:
      g_value_set_uint (value, self->interval);
      break;
    case PROP_OUTPUT_POOL_SIZE:
      g_value_set_uint (value, self->pool_size);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_SCALE_MODE:
      g_value_set_enum (value, self->scale_mode);
      break;
    case PROP_PAD_VALUE:
      g_value_set_float (value, self->pad_value);
      break;
    case PROP_INPUT_WIDTH:
      g_value_set_uint (value, self->input_width);
      break;
    case PROP_INPUT_HEIGHT:
      g_value_set_uint (value, self->input_height);
      break;
    case PROP_MAX_INPUT_SIZE:
      g_value_set_uint (value, self->max_input_size);
      break;
    case PROP_INFERENCE_REGION:
      g_value_set_enum (value, self->region_mode);
      break;
    case PROP_OBJECT_CLASS:
      g_value_set_string (value, self->object_class);
      break;
    case PROP_ROI_MIN_SIZE:
      g_value_set_uint (value, self->roi_min_size);
      break;
    case PROP_MAX_BATCH:
      g_value_set_uint (value, self->max_batch);
      break;
    case PROP_WEIGHTS_BYTES:
      g_value_set_uint64 (value, self->weights_bytes);
      break;
    case PROP_ARENA_BYTES:
      g_value_set_uint64 (value, self->arena_bytes);
      break;
    case PROP_DEVICE_BYTES:
      g_value_set_uint64 (value, self->device_bytes);
      break;
    case PROP_PEAK_BYTES:
      g_value_set_uint64 (value, self->peak_bytes);
      break;
    case PROP_FRAMES_INFERRED:
      g_value_set_uint64 (value, self->frames_inferred);
      break;
    case PROP_LAST_LATENCY_US:
      g_value_set_uint64 (value, self->last_latency_us);
      break;
    case PROP_POOL_OVERFLOWS:
      g_value_set_uint64 (value, self->pool_overflows);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ---- session ------------------------------------------------------------- */

static void
update_stats (GstOnnxInfer * self, gboolean inferred, guint64 latency_us)
{
  nn_stats st;

  if (self->session == NULL || nn_session_stats (self->session, &st) != NN_OK)
    memset (&st, 0, sizeof st);

  GST_OBJECT_LOCK (self);
  self->weights_bytes = st.weights_bytes;
  self->arena_bytes = st.arena_bytes;
  self->device_bytes = st.device_bytes;
  self->peak_bytes = st.peak_bytes;
  if (inferred) {
    self->frames_inferred++;
    self->last_latency_us = latency_us;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
format_dims (GString * s, int rank, const int64_t * dims)
{
  int i;

  for (i = 0; i < rank; i++) {
    if (i)
      g_string_append_c (s, 'x');
    if (dims[i] < 0)
      g_string_append_c (s, '?');
    else
      g_string_append_printf (s, "%" G_GINT64_FORMAT, dims[i]);
  }
  if (rank == 0)
    g_string_append (s, "scalar");
}

/* Posts the error for a failed nn_session_create_*; no lock held. */
static void
post_create_error (GstOnnxInfer * self, nn_status st, const nn_error * err,
    const gchar * location, nn_backend backend)
{
  const gchar *msg = err->msg[0] ? err->msg : nn_status_str (st);

  switch (st) {
    case NN_ERR_IO:
      /* the runtime tells a missing file from a symlink loop, an
       * over-long path or a special file; only the first is "not found" */
      if (strstr (msg, "' does not exist") != NULL)
        GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
            ("Model file \"%s\" does not exist; check the model-location "
                "property.", location), ("%s", msg));
      else
        GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
            ("Could not read model file \"%s\": %s", location, msg), (NULL));
      break;
    case NN_ERR_PARSE:
    case NN_ERR_INVALID_MODEL:
      GST_ELEMENT_ERROR (self, STREAM, WRONG_TYPE,
          ("\"%s\" is not a valid ONNX model: %s", location, msg),
          ("%s", nn_status_str (st)));
      break;
    case NN_ERR_UNSUPPORTED:
      GST_ELEMENT_ERROR (self, STREAM, CODEC_NOT_FOUND,
          ("Model \"%s\" uses something the runtime does not support: %s",
              location, msg), ("%s", nn_status_str (st)));
      break;
    case NN_ERR_NO_DEVICE:
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("No Vulkan device available: %s. Use backend=cpu (or auto).", msg),
          (NULL));
      break;
    case NN_ERR_LIMIT:
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Model \"%s\" exceeds the runtime's limits: %s", location, msg),
          (NULL));
      break;
    case NN_ERR_NOMEM:
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Out of memory loading model \"%s\": %s", location, msg), (NULL));
      break;
    case NN_ERR_BACKEND:
      GST_ELEMENT_ERROR (self, LIBRARY, INIT,
          ("The %s backend failed to load model \"%s\": %s",
              backend == NN_BACKEND_VULKAN ? "Vulkan" : "CPU", location, msg),
          (NULL));
      break;
    default:
      GST_ELEMENT_ERROR (self, LIBRARY, INIT,
          ("Could not load model \"%s\": %s", location, msg),
          ("%s", nn_status_str (st)));
      break;
  }
}

/* Returns the input index of the image input, or -1 after posting an error. */
static gboolean
analyze_input (GstOnnxInfer * self, const gchar * location)
{
  int n_in = 0, n_out = 0, n_req = 0, i;
  nn_io_info info;
  gboolean c1, clast;
  int c_axis, first;

  if (nn_session_io_count (self->session, &n_in, &n_out) != NN_OK)
    goto runtime_error;

  for (i = 0; i < n_in; i++) {
    nn_io_info ii;
    if (nn_session_input_info (self->session, i, &ii) != NN_OK)
      goto runtime_error;
    if (!ii.has_default)
      n_req++;
  }
  if (n_req == 0) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Model \"%s\" has no input to feed the video frames to.", location),
        (NULL));
    return FALSE;
  }
  if (n_req > 1) {
    GString *names = g_string_new (NULL);
    for (i = 0; i < n_in; i++) {
      nn_io_info ii;
      if (nn_session_input_info (self->session, i, &ii) == NN_OK &&
          !ii.has_default) {
        if (names->len)
          g_string_append (names, ", ");
        g_string_append_printf (names, "'%s' ", ii.name);
        format_dims (names, ii.rank, ii.dims);
      }
    }
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Model \"%s\" has %d required inputs (%s); onnxinfer feeds exactly "
            "one image input.", location, n_req, names->str), (NULL));
    g_string_free (names, TRUE);
    return FALSE;
  }

  /* Required inputs come first. */
  if (nn_session_input_info (self->session, 0, &info) != NN_OK)
    goto runtime_error;
  self->input_index = 0;

  if (info.dtype != NN_DTYPE_FLOAT && info.dtype != NN_DTYPE_UINT8)
    goto not_image;
  if (info.rank != 3 && info.rank != 4)
    goto not_image;

  /* NCHW or NHWC: the channel dimension is the one of size 1, 3 or 4 right
   * after the batch or at the end; with both candidates, 3 wins, then
   * NCHW (ONNX's usual layout). */
  first = info.rank == 4 ? 1 : 0;
  c1 = info.dims[first] == 1 || info.dims[first] == 3 || info.dims[first] == 4;
  clast = info.dims[info.rank - 1] == 1 || info.dims[info.rank - 1] == 3 ||
      info.dims[info.rank - 1] == 4;
  if (c1 && clast)
    c_axis = (info.dims[info.rank - 1] == 3 && info.dims[first] != 3) ?
        info.rank - 1 : first;
  else if (c1)
    c_axis = first;
  else if (clast)
    c_axis = info.rank - 1;
  else
    goto not_image;

  self->rank = info.rank;
  self->in_dtype = info.dtype;
  self->n_axis = info.rank == 4 ? 0 : -1;
  self->c_axis = c_axis;
  if (c_axis == first) {
    self->layout = LAYOUT_NCHW;
    self->h_axis = first + 1;
    self->w_axis = first + 2;
  } else {
    self->layout = LAYOUT_NHWC;
    self->h_axis = first;
    self->w_axis = first + 1;
  }
  self->channels = (int) info.dims[c_axis];
  memcpy (self->model_dims, info.dims, sizeof info.dims);

  if (self->n_axis >= 0 && info.dims[0] > 1 &&
      self->active_region == GST_ONNX_INFER_REGION_FULL_FRAME) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Model \"%s\" wants a batch of %" G_GINT64_FORMAT " images; "
            "onnxinfer feeds one frame at a time (batch 1 or dynamic), or "
            "batches of regions with inference-region=roi-list.",
            location, info.dims[0]), (NULL));
    return FALSE;
  }
  if (self->n_axis >= 0 && info.dims[0] > MAX_MAX_BATCH) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Model \"%s\" wants a batch of %" G_GINT64_FORMAT " regions; at "
            "most %d are supported.", location, info.dims[0], MAX_MAX_BATCH),
        (NULL));
    return FALSE;
  }
  if (info.dims[self->h_axis] == 0 || info.dims[self->w_axis] == 0)
    goto not_image;

  {
    GString *d = g_string_new (NULL);
    g_string_append_printf (d, "'%s' ", info.name);
    format_dims (d, info.rank, info.dims);
    g_string_append_printf (d, " %s %s", nn_dtype_name (info.dtype),
        self->layout == LAYOUT_NCHW ? (info.rank == 4 ? "NCHW" : "CHW") :
        (info.rank == 4 ? "NHWC" : "HWC"));
    GST_OBJECT_LOCK (self);
    g_free (self->model_desc);
    self->model_desc = g_string_free (d, FALSE);
    GST_OBJECT_UNLOCK (self);
  }
  return TRUE;

not_image:
  {
    GString *d = g_string_new (NULL);
    format_dims (d, info.rank, info.dims);
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Model input '%s' (%s, %s) is not an image input: onnxinfer needs "
            "rank 3 or 4 with 1, 3 or 4 channels first or last, of type "
            "float32 or uint8.", info.name, d->str,
            nn_dtype_name (info.dtype)), (NULL));
    g_string_free (d, TRUE);
    return FALSE;
  }
runtime_error:
  GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
      ("Could not inspect model \"%s\": %s", location,
          nn_session_last_error (self->session)), (NULL));
  return FALSE;
}

/* The formats the element takes, those that feed the model in place (or
 * with the least work) first: upstream picks the first it can produce. */
static GstCaps *
build_model_caps (GstOnnxInfer * self, GstOnnxInferChannelOrder order)
{
  static const gchar *rgb3[] = { "RGB", "BGR", "RGBx", "BGRx", "RGBA", "BGRA",
    NULL
  };
  static const gchar *bgr3[] = { "BGR", "RGB", "BGRx", "RGBx", "BGRA", "RGBA",
    NULL
  };
  static const gchar *rgb4[] = { "RGBA", "BGRA", "RGBx", "BGRx", NULL };
  static const gchar *bgr4[] = { "BGRA", "RGBA", "BGRx", "RGBx", NULL };
  static const gchar *gray[] = { "GRAY8", NULL };
  const gchar **first;
  GValue list = G_VALUE_INIT;
  GstStructure *s;
  guint i, j;

  if (self->channels == 1)
    first = gray;
  else if (self->channels == 3)
    first = order == GST_ONNX_INFER_CHANNEL_ORDER_BGR ? bgr3 : rgb3;
  else
    first = order == GST_ONNX_INFER_CHANNEL_ORDER_BGR ? bgr4 : rgb4;

  g_value_init (&list, GST_TYPE_LIST);
  for (i = 0; first[i]; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_static_string (&v, first[i]);
    gst_value_list_append_and_take_value (&list, &v);
  }
  for (i = 0; i < G_N_ELEMENTS (format_map); i++) {
    const gchar *name = gst_video_format_to_string (format_map[i].gst);
    gboolean listed = FALSE;
    GValue v = G_VALUE_INIT;
    for (j = 0; first[j]; j++)
      if (strcmp (first[j], name) == 0)
        listed = TRUE;
    if (listed)
      continue;
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_static_string (&v, name);
    gst_value_list_append_and_take_value (&list, &v);
  }
  s = gst_structure_new_empty ("video/x-raw");
  gst_structure_take_value (s, "format", &list);
  gst_structure_set (s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT,
      "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);

  return gst_caps_new_full (s, NULL);
}

static void
close_session (GstOnnxInfer * self)
{
  nn_session *s;

  s = self->session;
  self->session = NULL;
  self->input = NULL;
  self->input_index = -1;
  self->outputs_known = FALSE;
  self->bind_outputs = FALSE;
  self->outputs_bound = FALSE;
  g_clear_pointer (&self->outputs, g_free);
  g_clear_pointer (&self->out_sizes, g_free);
  g_clear_pointer (&self->out_offsets, g_free);
  self->n_outputs = 0;
  g_clear_pointer (&self->conv, nn_image_converter_free);

  GST_OBJECT_LOCK (self);
  gst_clear_caps (&self->model_caps);
  self->session_stale = FALSE;
  GST_OBJECT_UNLOCK (self);

  if (s) {
    nn_status st = nn_session_dispose (s);
    if (st != NN_OK)
      GST_WARNING_OBJECT (self, "dispose: %s", nn_status_str (st));
    nn_session_free (s);
    GST_DEBUG_OBJECT (self, "session disposed");
  }
  update_stats (self, FALSE, 0);
}

/* NULL->READY (or READY->PAUSED after a property change): read the model and
 * create the session.  Posts an error and returns FALSE on failure, with
 * nothing left allocated.  No lock held. */
static gboolean
open_session (GstOnnxInfer * self)
{
  gchar *location;
  GstOnnxInferBackend backend_prop;
  GstOnnxInferChannelOrder order;
  guint threads, max_batch;
  nn_options opt;
  nn_error err;
  nn_status st;
  int n_in = 0, n_out = 0, i;
  GstCaps *caps;

  GST_OBJECT_LOCK (self);
  location = g_strdup (self->model_location);
  backend_prop = self->backend;
  threads = self->threads;
  order = self->channel_order;
  self->active_region = self->region_mode;
  max_batch = self->max_batch;
  self->frames_inferred = 0;
  self->last_latency_us = 0;
  self->pool_overflows = 0;
  GST_OBJECT_UNLOCK (self);

  if (location == NULL || location[0] == '\0') {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No model given; set the model-location property."), (NULL));
    g_free (location);
    return FALSE;
  }

  nn_options_init (&opt);
  opt.threads = threads ? (int) threads : (int) g_get_num_processors ();
  memset (&err, 0, sizeof err);

  switch (backend_prop) {
    case GST_ONNX_INFER_BACKEND_CPU:
      opt.backend = NN_BACKEND_CPU;
      GST_INFO_OBJECT (self, "backend=cpu");
      break;
    case GST_ONNX_INFER_BACKEND_VULKAN:
      st = nn_vulkan_available (&err);
      if (st == NN_ERR_UNSUPPORTED) {
        GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
            ("backend=vulkan, but this build of onnxinfer has no Vulkan "
                "support. Use backend=cpu (or auto)."), ("%s", err.msg));
        g_free (location);
        return FALSE;
      } else if (st != NN_OK) {
        GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
            ("backend=vulkan, but no Vulkan device is available%s%s. Use "
                "backend=cpu (or auto).", err.msg[0] ? ": " : "", err.msg),
            ("%s", nn_status_str (st)));
        g_free (location);
        return FALSE;
      }
      opt.backend = NN_BACKEND_VULKAN;
      GST_INFO_OBJECT (self, "backend=vulkan: %s", err.msg);
      break;
    case GST_ONNX_INFER_BACKEND_AUTO:
    default:
      /* the runtime decides: a Vulkan GPU when there is one, else the CPU
       * (a CPU Vulkan driver such as lavapipe counts as no GPU); the choice
       * is logged below from the session's stats */
      opt.backend = NN_BACKEND_AUTO;
      break;
  }

  memset (&err, 0, sizeof err);
  st = nn_session_create_from_file (location, &opt, &self->session, &err);
  if (st != NN_OK && backend_prop == GST_ONNX_INFER_BACKEND_AUTO &&
      (st == NN_ERR_BACKEND || st == NN_ERR_NO_DEVICE)) {
    GST_WARNING_OBJECT (self, "backend=auto: Vulkan failed (%s), using the "
        "CPU", err.msg);
    opt.backend = NN_BACKEND_CPU;
    memset (&err, 0, sizeof err);
    st = nn_session_create_from_file (location, &opt, &self->session, &err);
  }
  if (st != NN_OK) {
    self->session = NULL;
    post_create_error (self, st, &err, location, opt.backend);
    g_free (location);
    return FALSE;
  }

  if (backend_prop == GST_ONNX_INFER_BACKEND_AUTO) {
    nn_stats chosen;
    if (nn_session_stats (self->session, &chosen) == NN_OK)
      GST_INFO_OBJECT (self, "backend=auto: using %s",
          chosen.backend == NN_BACKEND_VULKAN ? "a Vulkan GPU" :
          "the CPU (no Vulkan GPU; CPU Vulkan drivers are not used by auto)");
  }

  if (!analyze_input (self, location))
    goto fail;

  /* Frames go one at a time; regions up to max-batch a run (a fixed batch
   * takes as many as it has slots). */
  self->max_batch_active = MAX (max_batch, 1);
  if (self->n_axis < 0)
    self->batch = 1;
  else if (self->model_dims[0] > 0)
    self->batch = (int) self->model_dims[0];
  else
    self->batch = self->active_region == GST_ONNX_INFER_REGION_ROI_LIST ?
        (int) max_batch : 1;

  if (nn_image_converter_new (&self->conv) != NN_OK) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Out of memory creating the frame converter."), (NULL));
    goto fail;
  }

  /* A dynamic batch is fixed now; dynamic height/width wait for the caps. */
  if (self->n_axis == 0 && self->model_dims[0] < 0 &&
      self->model_dims[self->h_axis] > 0 && self->model_dims[self->w_axis] > 0) {
    int64_t dims[NN_MAX_RANK];
    memcpy (dims, self->model_dims, sizeof dims);
    dims[0] = self->batch;
    st = nn_session_set_input_shape (self->session, self->input_index,
        self->rank, dims);
    if (st != NN_OK) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("Could not set the model's batch size to %d: %s", self->batch,
              nn_session_last_error (self->session)), (NULL));
      goto fail;
    }
  }

  nn_session_io_count (self->session, &n_in, &n_out);
  self->n_outputs = n_out;
  self->outputs = g_new0 (OutputSlot, MAX (n_out, 1));
  self->out_sizes = g_new0 (gsize, MAX (n_out, 1));
  self->out_offsets = g_new0 (gsize, MAX (n_out, 1));
  for (i = 0; i < n_out; i++) {
    nn_io_info oi;
    if (nn_session_output_info (self->session, i, &oi) == NN_OK)
      self->outputs[i].name = g_quark_from_string (oi.name);
  }

  caps = build_model_caps (self, order);
  GST_OBJECT_LOCK (self);
  gst_caps_replace (&self->model_caps, caps);
  self->session_stale = FALSE;
  GST_OBJECT_UNLOCK (self);
  gst_caps_unref (caps);

  {
    nn_stats stats;
    if (nn_session_stats (self->session, &stats) == NN_OK)
      GST_INFO_OBJECT (self, "session for %s: %s, backend %s, %d outputs, "
          "weights %" G_GSIZE_FORMAT " B, arena %" G_GSIZE_FORMAT " B "
          "(naive %" G_GSIZE_FORMAT " B), io %" G_GSIZE_FORMAT " B, device %"
          G_GSIZE_FORMAT " B, peak %" G_GSIZE_FORMAT " B", location,
          self->model_desc, stats.backend == NN_BACKEND_VULKAN ? "vulkan" :
          "cpu", n_out, stats.weights_bytes, stats.arena_bytes,
          stats.arena_naive_bytes, stats.io_bytes, stats.device_bytes,
          stats.peak_bytes);
  }
  update_stats (self, FALSE, 0);
  g_free (location);
  return TRUE;

fail:
  g_free (location);
  close_session (self);
  return FALSE;
}

/* ---- output pool --------------------------------------------------------- */

static void
unbind_outputs (GstOnnxInfer * self)
{
  int i;

  if (!self->outputs_bound || self->session == NULL)
    return;
  for (i = 0; i < self->n_outputs; i++)
    nn_session_bind_output (self->session, i, NULL);
  self->outputs_bound = FALSE;
}

static void
release_pool (GstOnnxInfer * self)
{
  GstBufferPool *pool;

  GST_OBJECT_LOCK (self);
  pool = self->pool;
  self->pool = NULL;
  GST_OBJECT_UNLOCK (self);

  if (pool) {
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
  }
}

static gboolean
setup_pool (GstOnnxInfer * self)
{
  GstBufferPool *pool;
  GstStructure *config;
  GstAllocationParams params;
  guint max;
  int i;

  for (i = 0; i < self->n_outputs; i++)
    self->out_sizes[i] = self->outputs[i].region_nbytes;
  gst_onnx_tensor_storage_layout_init (&self->storage_layout,
      (guint) self->n_outputs, self->out_sizes, self->out_offsets);
  for (i = 0; i < self->n_outputs; i++)
    self->outputs[i].offset = self->out_offsets[i];

  release_pool (self);

  GST_OBJECT_LOCK (self);
  max = self->pool_size;
  GST_OBJECT_UNLOCK (self);
  /* every region of a frame holds a storage as long as the frame: room for
   * the most regions a frame gets, times the frames in flight (buffers are
   * allocated on demand, so this bounds memory, it does not reserve it) */
  if (self->active_region == GST_ONNX_INFER_REGION_ROI_LIST)
    max *= MAX_REGIONS;
  self->pool_size_active = max;

  pool = gst_buffer_pool_new ();
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, NULL,
      (guint) self->storage_layout.total_size, MIN (2, max), max);
  gst_allocation_params_init (&params);
  params.align = 63;
  gst_buffer_pool_config_set_allocator (config, NULL, &params);
  if (!gst_buffer_pool_set_config (pool, config) ||
      !gst_buffer_pool_set_active (pool, TRUE)) {
    gst_object_unref (pool);
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate the output tensor pool (%u x %" G_GSIZE_FORMAT
            " bytes).", max, self->storage_layout.total_size), (NULL));
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "output pool: %u buffers max of %" G_GSIZE_FORMAT
      " bytes (%d tensors)", max, self->storage_layout.total_size,
      self->n_outputs);

  GST_OBJECT_LOCK (self);
  self->pool = pool;
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static void
set_pool_flushing (GstOnnxInfer * self, gboolean flushing)
{
  GstBufferPool *pool;

  GST_OBJECT_LOCK (self);
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (pool) {
    gst_buffer_pool_set_flushing (pool, flushing);
    gst_object_unref (pool);
  }
}

/* ---- caps ---------------------------------------------------------------- */

static GstCaps *
gst_onnx_infer_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);
  GstCaps *model, *ret;

  GST_OBJECT_LOCK (self);
  model = self->model_caps ? gst_caps_ref (self->model_caps) : NULL;
  GST_OBJECT_UNLOCK (self);

  /* The video passes unchanged: the other side accepts the same caps,
   * restricted to what the model takes (in the model's order of
   * preference). */
  if (model) {
    ret = gst_caps_intersect_full (model, caps, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (model);
  } else {
    ret = gst_caps_ref (caps);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, ret,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (ret);
    ret = tmp;
  }
  GST_DEBUG_OBJECT (self, "%s caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, ret);
  return ret;
}

/* Why @caps cannot feed the model (allocates; only on failures). */
static gchar *
describe_mismatch (GstOnnxInfer * self, GstCaps * caps)
{
  gchar *reason, *have, *want;

  have = gst_caps_to_string (caps);
  GST_OBJECT_LOCK (self);
  want = self->model_caps ? gst_caps_to_string (self->model_caps) : NULL;
  if (want)
    reason = g_strdup_printf ("the video caps (%s) do not fit the model "
        "input %s, which takes %s. Put 'videoconvert' in front of "
        "onnxinfer.", have, self->model_desc ? self->model_desc : "",
        want);
  else
    reason = g_strdup_printf ("the video caps (%s) are not supported", have);
  GST_OBJECT_UNLOCK (self);
  g_free (have);
  g_free (want);
  return reason;
}

static gboolean
gst_onnx_infer_accept_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);
  gboolean ret;

  ret = GST_BASE_TRANSFORM_CLASS (parent_class)->accept_caps (trans,
      direction, caps);
  if (!ret && gst_debug_category_get_threshold (GST_CAT_DEFAULT) >=
      GST_LEVEL_DEBUG) {
    gchar *reason = describe_mismatch (self, caps);
    GST_DEBUG_OBJECT (self, "refusing caps: %s", reason);
    g_free (reason);
  }
  return ret;
}

/* A CAPS event reaches this probe before the pad checks it against
 * accept-caps (which refuses it silently: upstream then only reports
 * "not-negotiated").  Caps that upstream actually sends and the model cannot
 * take are an error the user can fix: say how. */
static GstPadProbeReturn
sink_caps_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstOnnxInfer *self = GST_ONNX_INFER (user_data);
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT (info);
  GstCaps *caps, *model;
  gboolean fits = TRUE;

  if (GST_EVENT_TYPE (event) != GST_EVENT_CAPS)
    return GST_PAD_PROBE_OK;

  gst_event_parse_caps (event, &caps);
  GST_OBJECT_LOCK (self);
  model = self->model_caps ? gst_caps_ref (self->model_caps) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (model) {
    fits = gst_caps_can_intersect (caps, model);
    gst_caps_unref (model);
  }
  if (!fits) {
    gchar *reason = describe_mismatch (self, caps);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Video does not match the model: %s", reason), (NULL));
    g_free (reason);
  }
  return GST_PAD_PROBE_OK;
}

/* scale-mode=pad-right, and whether the input width follows the regions
 * (roi-list on a dynamic width) within [line_min_w, line_max_w].  Takes
 * the object lock. */
static void
latch_line_mode (GstOnnxInfer * self, GstOnnxInferScaleMode mode)
{
  guint iw, max_side;

  GST_OBJECT_LOCK (self);
  iw = self->input_width;
  max_side = self->max_input_size;
  GST_OBJECT_UNLOCK (self);
  self->pad_right = mode == GST_ONNX_INFER_SCALE_MODE_PAD_RIGHT;
  self->line_width = self->pad_right &&
      self->active_region == GST_ONNX_INFER_REGION_ROI_LIST &&
      self->model_dims[self->w_axis] < 0;
  self->line_min_w = iw ? (gint) iw : DEFAULT_LINE_WIDTH;
  self->line_max_w = MAX ((gint) max_side, self->line_min_w);
}

static gboolean
recompute_preproc (GstOnnxInfer * self)
{
  gfloat mean[MAX_CHANNELS], std[MAX_CHANNELS];
  guint n_mean, n_std;
  GstOnnxInferChannelOrder order;
  GstOnnxInferScaleMode mode;
  gfloat pad;
  gboolean identity = TRUE;
  nn_image_params *p = &self->iparams;
  nn_image_dest *d = &self->idest;
  int C = self->channels, k;

  GST_OBJECT_LOCK (self);
  memcpy (mean, self->mean, sizeof mean);
  memcpy (std, self->std, sizeof std);
  n_mean = self->n_mean;
  n_std = self->n_std;
  order = self->channel_order;
  mode = self->scale_mode;
  pad = self->pad_value;
  self->preproc_dirty = FALSE;
  GST_OBJECT_UNLOCK (self);

  if ((n_mean > 1 && n_mean != (guint) C) || (n_std > 1 && n_std != (guint) C)) {
    gboolean bad_mean = n_mean > 1 && n_mean != (guint) C;
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("%s has %u values, but the model input has %d channels: give 1 "
            "or %d values.", bad_mean ? "input-mean" : "input-std",
            bad_mean ? n_mean : n_std, C, C), (NULL));
    return FALSE;
  }

  nn_image_params_init (p);
  /* pad-right: stretched into a content rectangle chosen per region */
  p->mode = mode == GST_ONNX_INFER_SCALE_MODE_LETTERBOX ? NN_RESIZE_LETTERBOX :
      mode == GST_ONNX_INFER_SCALE_MODE_CROP ? NN_RESIZE_CROP :
      NN_RESIZE_STRETCH;
  latch_line_mode (self, mode);
  p->pad_value = pad;
  p->bgr = order == GST_ONNX_INFER_CHANNEL_ORDER_BGR;
  for (k = 0; k < C; k++) {
    p->mean[k] = n_mean == 0 ? 0.0f : mean[n_mean == 1 ? 0 : k];
    p->std[k] = n_std == 0 ? 1.0f : std[n_std == 1 ? 0 : k];
    if (p->mean[k] != 0.0f || p->std[k] != 1.0f)
      identity = FALSE;
  }

  memset (d, 0, sizeof *d);
  d->data = self->input->data;
  d->nbytes = self->input->nbytes;
  d->dtype = self->in_dtype;
  d->layout = self->layout == LAYOUT_NCHW ? NN_LAYOUT_NCHW : NN_LAYOUT_NHWC;
  d->channels = C;
  d->width = self->in_w;
  d->height = self->in_h;

  /* The frame can be read in place when its bytes are the tensor's bytes:
   * same size, uint8, interleaved, the model's channels in the model's
   * order and nothing else in a pixel. */
  self->zero_copy = self->in_dtype == NN_DTYPE_UINT8 && identity &&
      (self->layout == LAYOUT_NHWC || C == 1) && self->batch == 1 &&
      self->active_region == GST_ONNX_INFER_REGION_FULL_FRAME &&
      GST_VIDEO_INFO_WIDTH (&self->vinfo) == self->in_w &&
      GST_VIDEO_INFO_HEIGHT (&self->vinfo) == self->in_h &&
      !self->zero_copy_failed &&
      ((C == 1 && self->pix == NN_PIX_GRAY8) ||
      (C == 3 && self->pix == (p->bgr ? NN_PIX_BGR : NN_PIX_RGB)) ||
      (C == 4 && self->pix == (p->bgr ? NN_PIX_BGRA : NN_PIX_RGBA)));

  GST_DEBUG_OBJECT (self, "preprocessing: %s %dx%d -> %dx%d %s, %s, %s%s",
      nn_pixel_format_name (self->pix), GST_VIDEO_INFO_WIDTH (&self->vinfo),
      GST_VIDEO_INFO_HEIGHT (&self->vinfo), self->in_w, self->in_h,
      self->model_desc, mode == GST_ONNX_INFER_SCALE_MODE_LETTERBOX ?
      "letterbox" : mode == GST_ONNX_INFER_SCALE_MODE_CROP ? "crop" :
      mode == GST_ONNX_INFER_SCALE_MODE_PAD_RIGHT ? "pad-right" : "stretch",
      identity ? "identity" : "mean/std",
      self->zero_copy ? ", zero-copy" : "");
  return TRUE;
}

static gint
round_to_multiple (gdouble v)
{
  gint r = (gint) (v / INPUT_SIZE_MULTIPLE + 0.5) * INPUT_SIZE_MULTIPLE;
  return MAX (r, INPUT_SIZE_MULTIPLE);
}

/* The model input size for frames of fw x fh: the model's own where it
 * fixes it, else input-width/input-height, else the frame's, capped by
 * max-input-size and rounded to a multiple of 32.  FALSE after posting an
 * error. */
static gboolean
choose_input_size (GstOnnxInfer * self, gint fw, gint fh, gint * w, gint * h)
{
  int64_t mw = self->model_dims[self->w_axis], mh = self->model_dims[self->h_axis];
  guint iw, ih, max_side;
  gdouble scale;

  GST_OBJECT_LOCK (self);
  iw = self->input_width;
  ih = self->input_height;
  max_side = self->max_input_size;
  GST_OBJECT_UNLOCK (self);

  if ((mw > 0 && iw != 0 && (int64_t) iw != mw) ||
      (mh > 0 && ih != 0 && (int64_t) ih != mh)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("input-width/input-height (%ux%u) differ from the model's fixed "
            "input size %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "; leave them "
            "at 0 for this model.", iw, ih, mw, mh), (NULL));
    return FALSE;
  }
  *w = mw > 0 ? (gint) mw : (gint) iw;
  *h = mh > 0 ? (gint) mh : (gint) ih;
  if (*w > 0 && *h > 0)
    return TRUE;

  /* Derive what is missing from the frame, keeping its aspect ratio. */
  if (*w > 0) {
    *h = round_to_multiple ((gdouble) *w * fh / fw);
  } else if (*h > 0) {
    *w = round_to_multiple ((gdouble) *h * fw / fh);
  } else {
    scale = MIN (1.0, (gdouble) max_side / MAX (fw, fh));
    *w = round_to_multiple (fw * scale);
    *h = round_to_multiple (fh * scale);
  }
  if (*w > MAX_INPUT_SIZE || *h > MAX_INPUT_SIZE) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("The model input derived from the frame (%dx%d) exceeds %d pixels; "
            "set input-width/input-height.", *w, *h, MAX_INPUT_SIZE), (NULL));
    return FALSE;
  }
  return TRUE;
}

/* Fixes the session's input at w x h (and the batch in use).  A change
 * re-plans the session on its next run; the outputs are described again
 * then.  FALSE after posting an error. */
static gboolean
set_input_size (GstOnnxInfer * self, gint w, gint h)
{
  int64_t dims[NN_MAX_RANK];
  nn_status st;
  guint i;

  memcpy (dims, self->model_dims, sizeof dims);
  if (self->n_axis == 0)
    dims[0] = self->batch;
  dims[self->h_axis] = h;
  dims[self->w_axis] = w;

  if (self->input == NULL || memcmp (dims, self->in_shape,
          sizeof (int64_t) * self->rank) != 0) {
    gboolean dynamic = FALSE;
    for (i = 0; i < (guint) self->rank; i++)
      if (self->model_dims[i] < 0)
        dynamic = TRUE;

    /* Outputs may change shape: collect them again on the next run, and
     * do not re-attach a result computed for the old size. */
    unbind_outputs (self);
    self->outputs_known = FALSE;
    gst_clear_buffer (&self->last_storage);

    if (dynamic) {
      st = nn_session_set_input_shape (self->session, self->input_index,
          self->rank, dims);
      if (st != NN_OK) {
        GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
            ("The model cannot take a %dx%d input: %s", w, h,
                nn_session_last_error (self->session)), (NULL));
        return FALSE;
      }
    }
    self->input = NULL;
    st = nn_session_input_tensor (self->session, self->input_index,
        &self->input);
    if (st != NN_OK || self->input == NULL) {
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
          ("Could not get the model's input tensor: %s",
              nn_session_last_error (self->session)), (NULL));
      self->input = NULL;
      return FALSE;
    }
    if (self->input->rank != self->rank ||
        memcmp (self->input->dims, dims, sizeof (int64_t) * self->rank) != 0 ||
        self->input->dtype != self->in_dtype) {
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
          ("The runtime's input tensor does not have the expected shape."),
          (NULL));
      self->input = NULL;
      return FALSE;
    }
    memcpy (self->in_shape, dims, sizeof dims);
  }
  self->in_w = w;
  self->in_h = h;
  /* the converter writes into the (possibly new) tensor */
  self->idest.data = self->input->data;
  self->idest.nbytes = self->input->nbytes;
  self->idest.width = w;
  self->idest.height = h;
  return TRUE;
}

static gboolean
gst_onnx_infer_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);
  GstOnnxInferScaleMode mode;
  GstVideoInfo vinfo;
  gint w = 0, h = 0;
  guint i;

  self->negotiated = FALSE;
  if (self->session == NULL) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("No model loaded."), (NULL));
    return FALSE;
  }
  if (!gst_video_info_from_caps (&vinfo, incaps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Invalid video caps %" GST_PTR_FORMAT, incaps), (NULL));
    return FALSE;
  }
  for (i = 0; i < G_N_ELEMENTS (format_map); i++)
    if (format_map[i].gst == GST_VIDEO_INFO_FORMAT (&vinfo))
      break;
  if (i == G_N_ELEMENTS (format_map)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("onnxinfer does not take %s video; put 'videoconvert' in front.",
            GST_VIDEO_INFO_NAME (&vinfo)), (NULL));
    return FALSE;
  }
  self->pix = format_map[i].nn;

  if (!choose_input_size (self, GST_VIDEO_INFO_WIDTH (&vinfo),
          GST_VIDEO_INFO_HEIGHT (&vinfo), &w, &h))
    return FALSE;

  GST_OBJECT_LOCK (self);
  mode = self->scale_mode;
  GST_OBJECT_UNLOCK (self);
  latch_line_mode (self, mode);
  if (self->line_width) {
    /* a new stream starts small: the lines make it grow */
    w = self->line_min_w;
    if (self->n_axis == 0 && self->model_dims[0] < 0)
      self->batch = 1;
  }

  if (!set_input_size (self, w, h))
    return FALSE;

  self->vinfo = vinfo;
  if (!recompute_preproc (self))
    return FALSE;

  GST_INFO_OBJECT (self, "negotiated %s %dx%d for input %s (%dx%d, batch %d,"
      " %s)%s", GST_VIDEO_INFO_NAME (&vinfo), GST_VIDEO_INFO_WIDTH (&vinfo),
      GST_VIDEO_INFO_HEIGHT (&vinfo), self->model_desc, w, h, self->batch,
      self->active_region == GST_ONNX_INFER_REGION_ROI_LIST ? "regions" :
      "full frame", self->zero_copy ? " (zero-copy)" : "");
  self->negotiated = TRUE;
  return TRUE;
}

/* ---- events and state ---------------------------------------------------- */

static gboolean
gst_onnx_infer_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      /* Unblock a streaming thread waiting for a free output buffer. */
      set_pool_flushing (self, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      set_pool_flushing (self, FALSE);
      /* A flush (seek) starts a new run of frames: the first one is
       * inferred, never decorated with a result kept (inference-interval)
       * from before the flush.  Serialized: the sink pad's stream lock is
       * held, transform_ip does not run. */
      gst_clear_buffer (&self->last_storage);
      self->frame_count = 0;
      break;
    default:
      break;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static gboolean
gst_onnx_infer_start (GstBaseTransform * trans)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);

  self->frame_count = 0;
  self->negotiated = FALSE;
  self->zero_copy_failed = FALSE;
  self->warned_regions = FALSE;
  self->warned_overflow = FALSE;
  self->model_id = g_quark_from_string (GST_OBJECT_NAME (self));
  return TRUE;
}

static gboolean
gst_onnx_infer_stop (GstBaseTransform * trans)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);

  /* The session must not keep pointers into storage we give back. */
  unbind_outputs (self);
  self->outputs_known = FALSE;
  gst_clear_buffer (&self->last_storage);
  release_pool (self);
  self->negotiated = FALSE;
  return TRUE;
}

static GstStateChangeReturn
gst_onnx_infer_change_state (GstElement * element, GstStateChange transition)
{
  GstOnnxInfer *self = GST_ONNX_INFER (element);
  GstStateChangeReturn ret;
  gboolean stale;

  switch (transition) {
    case GST_STATE_CHANGE_NULL_TO_READY:
      if (!open_session (self))
        return GST_STATE_CHANGE_FAILURE;
      break;
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      GST_OBJECT_LOCK (self);
      stale = self->session_stale;
      GST_OBJECT_UNLOCK (self);
      if (stale || self->session == NULL) {
        close_session (self);
        if (!open_session (self))
          return GST_STATE_CHANGE_FAILURE;
      }
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      set_pool_flushing (self, TRUE);
      break;
    default:
      break;
  }

  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  if (ret == GST_STATE_CHANGE_FAILURE) {
    if (transition == GST_STATE_CHANGE_NULL_TO_READY)
      close_session (self);
    return ret;
  }

  switch (transition) {
    case GST_STATE_CHANGE_READY_TO_NULL:
      close_session (self);
      break;
    default:
      break;
  }
  return ret;
}

/* ---- streaming ----------------------------------------------------------- */

/* A borrowed view of a mapped frame for the pixel converter. */
static void
frame_to_image (GstOnnxInfer * self, const GstVideoFrame * frame,
    nn_image * img)
{
  const GstVideoColorimetry *cm = &frame->info.colorimetry;
  guint i;

  memset (img, 0, sizeof *img);
  img->format = self->pix;
  img->width = GST_VIDEO_FRAME_WIDTH (frame);
  img->height = GST_VIDEO_FRAME_HEIGHT (frame);
  for (i = 0; i < GST_VIDEO_FRAME_N_PLANES (frame) && i < 3; i++) {
    img->planes[i] = GST_VIDEO_FRAME_PLANE_DATA (frame, i);
    img->strides[i] = GST_VIDEO_FRAME_PLANE_STRIDE (frame, i);
  }
  switch (cm->matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT709:
      img->matrix = NN_YUV_BT709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      img->matrix = NN_YUV_BT2020;
      break;
    default:
      img->matrix = NN_YUV_BT601;
      break;
  }
  img->range = cm->range == GST_VIDEO_COLOR_RANGE_0_255 ? NN_YUV_FULL :
      NN_YUV_LIMITED;
}

/* Width a pad-right region of aspect ratio `aspect` (width / height) takes
 * in an input of w x h: PaddleOCR's resize_norm_img, ceil(h * aspect)
 * capped by the input width. */
static gint
pad_right_width (gdouble aspect, gint w, gint h)
{
  gdouble cw = ceil (h * aspect);

  return cw >= w ? w : MAX ((gint) cw, 1);
}

/* Maps the source rectangle (NULL: the whole frame), turned by `angle`
 * degrees about its centre, of img into batch slot `slot` of the input
 * tensor and records the geometry.  No allocation once the converter has
 * seen the sizes.  FALSE after posting an error. */
static gboolean
convert_into_input (GstOnnxInfer * self, const nn_image * img,
    const nn_rect * rect, gdouble angle, int slot,
    GstOnnxTensorGeometry * geo)
{
  nn_image_params p = self->iparams;
  nn_image_dest d = self->idest;
  nn_image_geometry g;
  nn_error err;
  nn_status st;

  if (rect)
    p.src = *rect;
  p.angle = angle;
  if (self->pad_right) {
    gdouble aspect = rect && rect->width > 0 && rect->height > 0 ?
        rect->width / rect->height : (gdouble) img->width / img->height;
    p.content.x = 0;
    p.content.y = 0;
    p.content.width = pad_right_width (aspect, d.width, d.height);
    p.content.height = d.height;
  }
  d.batch_index = slot;
  err.msg[0] = '\0';
  st = nn_image_convert (self->conv, img, &p, &d, self->session, &g, &err);
  if (st != NN_OK) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Could not map the frame into the model input: %s",
            err.msg[0] ? err.msg : nn_status_str (st)),
        ("%s %dx%d -> %dx%d", nn_pixel_format_name (img->format), img->width,
            img->height, d.width, d.height));
    return FALSE;
  }
  geo->frame_width = img->width;
  geo->frame_height = img->height;
  geo->input_width = d.width;
  geo->input_height = d.height;
  geo->src_x = g.src_x;
  geo->src_y = g.src_y;
  geo->src_width = g.src_width;
  geo->src_height = g.src_height;
  geo->scale_x = g.scale_x;
  geo->scale_y = g.scale_y;
  geo->offset_x = g.offset_x;
  geo->offset_y = g.offset_y;
  geo->angle = g.angle;
  return TRUE;
}

static gboolean
slot_matches (const OutputSlot * slot, const nn_tensor * t)
{
  return slot->dtype == t->dtype && slot->rank == t->rank &&
      slot->nbytes == t->nbytes &&
      memcmp (slot->dims, t->dims, sizeof (int64_t) * t->rank) == 0;
}

/* A storage buffer from the pool.  When downstream holds every one (an
 * encoder with a look-ahead, a long queue), waiting would deadlock: those
 * frames are only released once later frames arrive.  So the pool never
 * blocks: an extra buffer is allocated instead (counted, logged once), and
 * the pool's size is only what the steady state recycles without
 * allocating. */
static GstFlowReturn
acquire_storage (GstOnnxInfer * self, GstBuffer ** storage, GstMapInfo * map)
{
  GstBufferPoolAcquireParams params = { 0, };
  GstBufferPool *pool;
  GstFlowReturn ret;

  GST_OBJECT_LOCK (self);
  pool = self->pool ? gst_object_ref (self->pool) : NULL;
  GST_OBJECT_UNLOCK (self);
  if (pool == NULL)
    return GST_FLOW_FLUSHING;
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  ret = gst_buffer_pool_acquire_buffer (pool, storage, &params);
  gst_object_unref (pool);
  if (ret == GST_FLOW_EOS) {
    GstAllocationParams ap;

    gst_allocation_params_init (&ap);
    ap.align = 63;
    *storage = gst_buffer_new_allocate (NULL,
        self->storage_layout.total_size, &ap);
    if (*storage == NULL)
      return GST_FLOW_ERROR;
    GST_OBJECT_LOCK (self);
    self->pool_overflows++;
    GST_OBJECT_UNLOCK (self);
    if (!self->warned_overflow)
      GST_WARNING_OBJECT (self, "downstream holds all %u output buffers "
          "(an encoder's look-ahead or a queue): allocating more instead of "
          "waiting; raise output-pool-size to keep the per-frame path "
          "allocation-free", self->pool_size_active);
    self->warned_overflow = TRUE;
    ret = GST_FLOW_OK;
  }
  if (ret != GST_FLOW_OK)
    return ret;
  if (!gst_buffer_map (*storage, map, GST_MAP_WRITE)) {
    gst_clear_buffer (storage);
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* First run, or the outputs changed: describe them and size the pool. */
static gboolean
describe_outputs (GstOnnxInfer * self)
{
  int i;

  for (i = 0; i < self->n_outputs; i++) {
    const nn_tensor *t = NULL;
    OutputSlot *slot = &self->outputs[i];
    if (nn_session_output_tensor (self->session, i, &t) != NN_OK || !t) {
      GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
          ("Could not read output %d: %s", i,
              nn_session_last_error (self->session)), (NULL));
      return FALSE;
    }
    slot->dtype = t->dtype;
    slot->rank = t->rank;
    memset (slot->dims, 0, sizeof slot->dims);
    memcpy (slot->dims, t->dims, sizeof (int64_t) * t->rank);
    slot->nbytes = t->nbytes;
    /* with a batch of regions, an output whose first dim is the batch is
     * split; any other output is the same for every region */
    slot->batched = self->batch > 1 && t->rank >= 1 && t->dims[0] == self->batch;
    memcpy (slot->region_dims, slot->dims, sizeof slot->dims);
    slot->region_nbytes = slot->nbytes;
    if (slot->batched) {
      slot->region_dims[0] = 1;
      slot->region_nbytes = slot->nbytes / (size_t) self->batch;
    }
    GST_DEBUG_OBJECT (self, "output %d '%s': %s, rank %d, %" G_GSIZE_FORMAT
        " bytes%s", i, g_quark_to_string (slot->name),
        nn_dtype_name (slot->dtype), slot->rank, slot->nbytes,
        slot->batched ? " (split per region)" : "");
  }
  if (!setup_pool (self))
    return FALSE;
  self->outputs_known = TRUE;
  /* zero-copy outputs from now on, unless a batch is split */
  self->bind_outputs = self->batch == 1;
  return TRUE;
}

/* Runs the session on the input as filled and leaves the outputs of the
 * first n_used batch slots in storage buffers from the pool (one each),
 * written in place by the runtime when it accepts bound outputs (batch 1),
 * copied otherwise.  Steady state: no allocation.  On failure every storage
 * is released (storages[] all NULL). */
static GstFlowReturn
run_inference (GstOnnxInfer * self, guint n_used, GstBuffer ** storages)
{
  GstBuffer *storage = NULL;
  GstMapInfo map;
  gboolean mapped = FALSE;
  GstOnnxTensor *desc;
  GstFlowReturn ret;
  nn_status st;
  guint k;
  int i;

  for (k = 0; k < n_used; k++)
    storages[k] = NULL;

  if (self->outputs_known && self->bind_outputs) {
    ret = acquire_storage (self, &storage, &map);
    if (ret != GST_FLOW_OK)
      return ret;
    mapped = TRUE;
    for (i = 0; i < self->n_outputs; i++) {
      OutputSlot *slot = &self->outputs[i];
      nn_tensor t;
      t.dtype = slot->dtype;
      t.rank = slot->rank;
      memcpy (t.dims, slot->dims, sizeof t.dims);
      t.data = map.data + slot->offset;
      t.nbytes = slot->nbytes;
      st = nn_session_bind_output (self->session, i, &t);
      if (st != NN_OK) {
        GST_INFO_OBJECT (self, "runtime does not take output memory (%s: %s);"
            " copying outputs", nn_status_str (st),
            nn_session_last_error (self->session));
        self->outputs_bound = TRUE;
        unbind_outputs (self);
        self->bind_outputs = FALSE;
        break;
      }
      self->outputs_bound = TRUE;
    }
  }

  st = nn_session_run (self->session);
  if (st != NN_OK) {
    /* the message lives in the session and the unbind below clears it */
    gchar *msg = g_strdup (nn_session_last_error (self->session));
    if (mapped)
      gst_buffer_unmap (storage, &map);
    gst_clear_buffer (&storage);
    /* Do not keep pointers into a buffer we give back. */
    unbind_outputs (self);
    self->outputs_known = FALSE;
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Inference failed: %s", msg[0] ? msg : nn_status_str (st)),
        ("%s", nn_status_str (st)));
    g_free (msg);
    return GST_FLOW_ERROR;
  }

  if (!self->outputs_known && !describe_outputs (self)) {
    if (mapped)
      gst_buffer_unmap (storage, &map);
    gst_clear_buffer (&storage);
    return GST_FLOW_ERROR;
  }

  for (k = 0; k < n_used; k++) {
    if (!mapped) {
      ret = acquire_storage (self, &storage, &map);
      if (ret != GST_FLOW_OK)
        goto fail;
      mapped = TRUE;
    }
    desc = gst_onnx_tensor_storage_init (map.data, map.size,
        (guint) self->n_outputs);
    for (i = 0; i < self->n_outputs; i++) {
      const OutputSlot *slot = &self->outputs[i];
      const nn_tensor *t = NULL;
      guint8 *dst = map.data + slot->offset;
      const guint8 *src;

      if (nn_session_output_tensor (self->session, i, &t) != NN_OK || !t ||
          !slot_matches (slot, t)) {
        /* Shapes moved under us (data-dependent output shapes). */
        gst_buffer_unmap (storage, &map);
        gst_clear_buffer (&storage);
        unbind_outputs (self);
        self->outputs_known = FALSE;
        GST_ELEMENT_ERROR (self, STREAM, FAILED,
            ("Output %d changed shape between frames; outputs with "
                "data-dependent shapes are not supported.", i), (NULL));
        ret = GST_FLOW_ERROR;
        goto fail;
      }
      src = (const guint8 *) t->data +
          (slot->batched ? k * slot->region_nbytes : 0);
      if (src != dst && slot->region_nbytes)
        memcpy (dst, src, slot->region_nbytes);

      desc[i].name = slot->name;
      desc[i].data_type = (GstOnnxTensorDataType) slot->dtype;
      desc[i].n_dims = (guint) slot->rank;
      memset (desc[i].dims, 0, sizeof desc[i].dims);
      memcpy (desc[i].dims, slot->region_dims, sizeof (int64_t) * slot->rank);
      desc[i].size = slot->region_nbytes;
      desc[i].offset = slot->offset;
      desc[i].data = dst;
    }
    gst_buffer_unmap (storage, &map);
    mapped = FALSE;
    storages[k] = storage;
    storage = NULL;
  }
  return GST_FLOW_OK;

fail:
  for (k = 0; k < n_used; k++)
    gst_clear_buffer (&storages[k]);
  return ret;
}

/* IEEE half -> double (subnormals, infinities and NaN included). */
static gdouble
half_to_double (guint16 h)
{
  gint e = (h >> 10) & 0x1f, m = h & 0x3ff;
  gdouble v;

  if (e == 0)
    v = ldexp (m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = ldexp (m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

static gdouble
tensor_value (const GstOnnxTensor * t, gint64 i)
{
  switch (t->data_type) {
    case GST_ONNX_TENSOR_DATA_TYPE_FLOAT16:
      return half_to_double (((const guint16 *) t->data)[i]);
    case GST_ONNX_TENSOR_DATA_TYPE_BFLOAT16:{
      guint32 bits = (guint32) ((const guint16 *) t->data)[i] << 16;
      gfloat f;
      memcpy (&f, &bits, sizeof f);
      return f;
    }
    case GST_ONNX_TENSOR_DATA_TYPE_FLOAT32:
      return ((const gfloat *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_FLOAT64:
      return ((const gdouble *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_UINT8:
    case GST_ONNX_TENSOR_DATA_TYPE_BOOL:
      return ((const guint8 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_INT8:
      return ((const gint8 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_UINT16:
      return ((const guint16 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_INT16:
      return ((const gint16 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_INT32:
      return ((const gint32 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_UINT32:
      return ((const guint32 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_INT64:
      return (gdouble) ((const gint64 *) t->data)[i];
    case GST_ONNX_TENSOR_DATA_TYPE_UINT64:
      return (gdouble) ((const guint64 *) t->data)[i];
    default:
      return NAN;
  }
}

/* post-messages=true: one element message per inference, e.g.
 * onnxinfer, frame=(guint64)0, ..., output-0=(string)"scores float32 1x896x1
 *   min=... max=... mean=... argmax=...", output-1=... */
static void
post_summary (GstOnnxInfer * self, GstBuffer * buf,
    const GstOnnxTensorMeta * meta, guint64 frame, guint64 latency_us)
{
  GstStructure *s;
  guint i;

  s = gst_structure_new ("onnxinfer",
      "frame", G_TYPE_UINT64, frame,
      "pts", G_TYPE_UINT64, GST_BUFFER_PTS (buf),
      "inference-id", G_TYPE_UINT64, meta->inference_id,
      "roi-id", G_TYPE_INT, meta->roi_id,
      "latency-us", G_TYPE_UINT64, latency_us,
      "n-outputs", G_TYPE_UINT, meta->n_tensors, NULL);
  for (i = 0; i < meta->n_tensors; i++) {
    const GstOnnxTensor *t = &meta->tensors[i];
    gint64 n = gst_onnx_tensor_get_n_elements (t), j;
    gdouble mn = INFINITY, mx = -INFINITY, sum = 0.0;
    gint64 argmax = -1;
    GString *str = g_string_new (NULL);
    gchar field[32];
    int64_t dims[GST_ONNX_TENSOR_MAX_DIMS];

    memcpy (dims, t->dims, sizeof dims);
    g_string_append_printf (str, "%s %s ", g_quark_to_string (t->name),
        gst_onnx_tensor_data_type_get_name (t->data_type));
    format_dims (str, (int) t->n_dims, dims);
    for (j = 0; j < n; j++) {
      gdouble x = tensor_value (t, j);
      if (x > mx) {
        mx = x;
        argmax = j;
      }
      mn = MIN (mn, x);
      sum += x;
    }
    if (n > 0)
      g_string_append_printf (str, " min=%.6g max=%.6g mean=%.6g argmax=%"
          G_GINT64_FORMAT, mn, mx, sum / (gdouble) n, argmax);
    if (n > 0 && n <= SUMMARY_MAX_VALUES) {
      g_string_append (str, " values=[");
      for (j = 0; j < n; j++)
        g_string_append_printf (str, "%s%.6g", j ? " " : "",
            tensor_value (t, j));
      g_string_append_c (str, ']');
    }
    g_snprintf (field, sizeof field, "output-%u", i);
    gst_structure_set (s, field, G_TYPE_STRING, str->str, NULL);
    g_string_free (str, TRUE);
  }
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
}

/* The `rotated-box` parameter of a ROI (tensordecoder scheme=dbnet: cx, cy,
 * width, height, angle in frame pixels and degrees), when it has a usable
 * one.  Reads the structure in place: no allocation. */
static gboolean
rotated_box_of (GstVideoRegionOfInterestMeta * roi, gdouble * cx, gdouble * cy,
    gdouble * w, gdouble * h, gdouble * angle)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "rotated-box");

  if (s == NULL)
    return FALSE;
  if (!gst_structure_get_double (s, "cx", cx) ||
      !gst_structure_get_double (s, "cy", cy) ||
      !gst_structure_get_double (s, "width", w) ||
      !gst_structure_get_double (s, "height", h) ||
      !gst_structure_get_double (s, "angle", angle))
    return FALSE;
  /* what nn_image_convert accepts: finite, sides >= 1/1024 pixel and within
   * 2^30 (a hostile parameter falls back to the ROI's rectangle) */
  if (!isfinite (*cx) || !isfinite (*cy) || !isfinite (*angle) ||
      !isfinite (*w) || !isfinite (*h) || *w < 1.0 / 1024 || *h < 1.0 / 1024
      || *w > 1073741824.0 || *h > 1073741824.0 || fabs (*cx) > 1073741824.0
      || fabs (*cy) > 1073741824.0)
    return FALSE;
  return TRUE;
}

/* Where region r is cut from: the ROI's rectangle, or its rotated box
 * (turned upright); with pad-right, a region at least 1.5 times taller than
 * wide is turned 90 degrees more (vertical text read as a line, as
 * PaddleOCR's get_rotate_crop_image does). */
static void
region_from_roi (GstOnnxInfer * self, GstVideoRegionOfInterestMeta * roi,
    Region * r)
{
  gdouble cx, cy, w, h, angle;

  r->id = roi->id;
  if (rotated_box_of (roi, &cx, &cy, &w, &h, &angle)) {
    r->angle = angle;
  } else {
    w = roi->w;
    h = roi->h;
    cx = roi->x + w / 2.0;
    cy = roi->y + h / 2.0;
    r->angle = 0.0;
  }
  if (self->pad_right && h >= 1.5 * w) {
    gdouble t = w;
    w = h;
    h = t;
    /* np.rot90 of the upright crop (counter-clockwise): the new x axis is
     * the old y axis, so the top of a vertical line comes out on the left */
    r->angle += 90.0;
  }
  r->rect.x = cx - w / 2.0;
  r->rect.y = cy - h / 2.0;
  r->rect.width = w;
  r->rect.height = h;
  GST_LOG_OBJECT (self, "region %d: %.1fx%.1f at (%.1f, %.1f), %.2f degrees",
      r->id, w, h, cx, cy, r->angle);
}

/* Picks the regions of interest of buf the model runs on (object-class,
 * roi-min-size; at most MAX_REGIONS, ids unique).  No allocation. */
static guint
collect_regions (GstOnnxInfer * self, GstBuffer * buf)
{
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  GQuark classes[G_N_ELEMENTS (self->object_quarks)];
  guint n_classes, min_size, n = 0, i;
  gboolean dup;

  GST_OBJECT_LOCK (self);
  n_classes = self->n_object_quarks;
  memcpy (classes, self->object_quarks, sizeof classes);
  min_size = self->roi_min_size;
  GST_OBJECT_UNLOCK (self);

  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    if (roi->w == 0 || roi->h == 0 || roi->w < min_size || roi->h < min_size)
      continue;
    if (n_classes > 0) {
      for (i = 0; i < n_classes; i++)
        if (classes[i] == roi->roi_type)
          break;
      if (i == n_classes)
        continue;
    }
    /* results are attached by region id: two regions with one id would
     * share (and overwrite) one result */
    dup = FALSE;
    for (i = 0; i < n; i++)
      if (self->regions[i].id == roi->id)
        dup = TRUE;
    if (dup) {
      if (!self->warned_regions)
        GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("Several regions of "
                "interest on a frame share id %d; only the first is "
                "inferred (the element that added them should give each its "
                "own id).", roi->id), (NULL));
      self->warned_regions = TRUE;
      continue;
    }
    if (n == MAX_REGIONS) {
      if (!self->warned_regions)
        GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("More than %d regions of "
                "interest on a frame; inferring the first %d.", MAX_REGIONS,
                MAX_REGIONS), (NULL));
      self->warned_regions = TRUE;
      break;
    }
    region_from_roi (self, roi, &self->regions[n]);
    n++;
  }
  return n;
}

/* Text lines on a dynamic input width: the width the frame's widest region
 * takes at the input height (pad-right), rounded up to a multiple of 32,
 * within [line_min_w, line_max_w]; with a dynamic batch too, the batch is
 * the frame's lines spread evenly over the fewest runs of at most
 * max-batch (13 lines, max-batch 6: 3 runs of 5, not 6 + 6 + 1 with 5
 * slots computed for nothing).  Within a stream both only grow (each
 * growth re-plans the session once), so a stream settles on one shape and
 * then runs with no re-planning and no allocation whatever the number and
 * size of its lines; a new stream (caps) starts small again.  FALSE after
 * posting an error. */
static gboolean
choose_line_shape (GstOnnxInfer * self, guint n_regions)
{
  gdouble widest = 0.0;
  gint need, batch = self->batch;
  guint k;

  for (k = 0; k < n_regions; k++) {
    const nn_rect *r = &self->regions[k].rect;
    gdouble cw = ceil (self->in_h * r->width / r->height);
    widest = MAX (widest, cw);
  }
  if (widest >= self->line_max_w)
    need = self->line_max_w;
  else
    need = MIN (((gint) widest + INPUT_SIZE_MULTIPLE - 1) /
        INPUT_SIZE_MULTIPLE * INPUT_SIZE_MULTIPLE, self->line_max_w);
  need = MAX (need, self->line_min_w);
  need = MAX (need, self->in_w);

  if (self->n_axis == 0 && self->model_dims[0] < 0 && n_regions > 0) {
    guint runs = (n_regions + self->max_batch_active - 1) /
        self->max_batch_active;
    gint want = (gint) ((n_regions + runs - 1) / runs);
    batch = MAX (batch, want);
  }
  if (need == self->in_w && batch == self->batch)
    return TRUE;
  GST_DEBUG_OBJECT (self, "text lines: input %dx%d batch %d -> %dx%d batch "
      "%d", self->in_w, self->in_h, self->batch, need, self->in_h, batch);
  self->batch = batch;
  return set_input_size (self, need, self->in_h);
}

/* inference-region=roi-list: the model on every picked region, a batch of
 * self->batch regions a run, one tensor meta per region. */
static GstFlowReturn
infer_regions (GstOnnxInfer * self, GstBuffer * buf, const nn_image * img,
    guint n_regions, guint64 frame, gboolean post, gint64 t0)
{
  GstBuffer *storages[MAX_MAX_BATCH];
  GstFlowReturn ret;
  guint start, k, used;
  gint64 t1;

  if (self->line_width && !choose_line_shape (self, n_regions))
    return GST_FLOW_ERROR;

  for (start = 0; start < n_regions; start += used) {
    used = MIN ((guint) self->batch, n_regions - start);
    for (k = 0; k < used; k++)
      if (!convert_into_input (self, img, &self->regions[start + k].rect,
              self->regions[start + k].angle, (int) k,
              &self->regions[start + k].geometry))
        return GST_FLOW_ERROR;
    ret = run_inference (self, used, storages);
    if (ret != GST_FLOW_OK)
      return ret;
    t1 = g_get_monotonic_time ();
    update_stats (self, TRUE, (guint64) (t1 - t0));
    for (k = 0; k < used; k++) {
      const Region *r = &self->regions[start + k];
      GstOnnxTensorMeta *meta;

      self->inference_id++;
      meta = gst_buffer_add_onnx_tensor_meta_full (buf, self->model_id, r->id,
          storages[k], self->inference_id, FALSE, &r->geometry);
      gst_buffer_unref (storages[k]);   /* the meta holds its own */
      storages[k] = NULL;
      if (meta == NULL) {
        for (k = k + 1; k < used; k++)
          gst_clear_buffer (&storages[k]);
        return GST_FLOW_ERROR;
      }
      if (G_UNLIKELY (post))
        post_summary (self, buf, meta, frame, (guint64) (t1 - t0));
    }
    t0 = g_get_monotonic_time ();
  }
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_onnx_infer_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);
  GstVideoFrame frame;
  GstBuffer *storage = NULL;
  GstOnnxTensorMeta *meta;
  GstFlowReturn ret;
  gboolean dirty, post, bound_input = FALSE;
  guint interval, n_regions;
  guint64 n;
  gint64 t0, t1;
  nn_image img;

  if (G_UNLIKELY (self->session == NULL || self->input == NULL))
    return GST_FLOW_NOT_NEGOTIATED;

  GST_OBJECT_LOCK (self);
  interval = self->interval;
  dirty = self->preproc_dirty;
  post = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  if (G_UNLIKELY (dirty) && !recompute_preproc (self))
    return GST_FLOW_NOT_NEGOTIATED;

  n = self->frame_count++;
  if (interval > 1 && (n % interval) != 0) {
    /* Regions change from frame to frame (and so do their ids): a region
     * result is never carried over; a frame result is. */
    if (self->active_region == GST_ONNX_INFER_REGION_ROI_LIST)
      return GST_FLOW_OK;
    if (self->last_storage) {
      GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": reusing inference %"
          G_GUINT64_FORMAT, n, self->inference_id);
      if (!gst_buffer_add_onnx_tensor_meta_full (buf, self->model_id, -1,
              self->last_storage, self->inference_id, TRUE,
              &self->frame_geometry))
        return GST_FLOW_ERROR;
      return GST_FLOW_OK;
    }
  }

  n_regions = 0;
  if (self->active_region == GST_ONNX_INFER_REGION_ROI_LIST) {
    n_regions = collect_regions (self, buf);
    if (n_regions == 0)
      return GST_FLOW_OK;
  }

  t0 = g_get_monotonic_time ();
  /* NO_REF: region results are attached while the frame is mapped, and a
   * second reference would make buf read-only */
  if (!gst_video_frame_map (&frame, &self->vinfo, buf,
          GST_MAP_READ | GST_VIDEO_FRAME_MAP_FLAG_NO_REF)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the video frame."),
        (NULL));
    return GST_FLOW_ERROR;
  }
  if (!gst_onnx_video_frame_in_bounds (&frame)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Invalid video frame: its "
            "layout (stride %d, plane offset) puts rows outside the buffer.",
            GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0)),
        ("%dx%d, %" G_GSIZE_FORMAT " bytes mapped",
            GST_VIDEO_FRAME_WIDTH (&frame), GST_VIDEO_FRAME_HEIGHT (&frame),
            frame.map[0].size));
    gst_video_frame_unmap (&frame);
    return GST_FLOW_ERROR;
  }
  frame_to_image (self, &frame, &img);

  if (self->active_region == GST_ONNX_INFER_REGION_ROI_LIST) {
    ret = infer_regions (self, buf, &img, n_regions, n, post, t0);
    gst_video_frame_unmap (&frame);
    return ret;
  }

  if (self->zero_copy && GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) ==
      GST_VIDEO_FRAME_WIDTH (&frame) * self->channels) {
    nn_tensor t = *self->input;
    nn_status st;
    t.data = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
    st = nn_session_bind_input (self->session, self->input_index, &t);
    if (st == NN_OK) {
      bound_input = TRUE;
      /* the identity mapping */
      memset (&self->frame_geometry, 0, sizeof self->frame_geometry);
      self->frame_geometry.frame_width = img.width;
      self->frame_geometry.frame_height = img.height;
      self->frame_geometry.input_width = self->in_w;
      self->frame_geometry.input_height = self->in_h;
      self->frame_geometry.src_width = img.width;
      self->frame_geometry.src_height = img.height;
      self->frame_geometry.scale_x = self->frame_geometry.scale_y = 1.0;
    } else {
      GST_INFO_OBJECT (self, "zero-copy input refused (%s: %s); converting",
          nn_status_str (st), nn_session_last_error (self->session));
      self->zero_copy_failed = TRUE;
      self->zero_copy = FALSE;
    }
  }
  if (!bound_input &&
      !convert_into_input (self, &img, NULL, 0.0, 0, &self->frame_geometry)) {
    gst_video_frame_unmap (&frame);
    return GST_FLOW_ERROR;
  }

  ret = run_inference (self, 1, &storage);

  if (bound_input)
    nn_session_reset_input (self->session, self->input_index);
  gst_video_frame_unmap (&frame);

  if (ret != GST_FLOW_OK)
    return ret;

  self->inference_id++;
  meta = gst_buffer_add_onnx_tensor_meta_full (buf, self->model_id, -1,
      storage, self->inference_id, FALSE, &self->frame_geometry);
  if (meta == NULL) {
    gst_buffer_unref (storage);
    return GST_FLOW_ERROR;
  }
  /* Keep the result for the frames that skip inference. */
  if (self->last_storage)
    gst_buffer_unref (self->last_storage);
  self->last_storage = storage;

  t1 = g_get_monotonic_time ();
  update_stats (self, TRUE, (guint64) (t1 - t0));
  if (G_UNLIKELY (post))
    post_summary (self, buf, meta, n, (guint64) (t1 - t0));
  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": inference %"
      G_GUINT64_FORMAT " took %" G_GINT64_FORMAT " us", n, self->inference_id,
      t1 - t0);
  return GST_FLOW_OK;
}
