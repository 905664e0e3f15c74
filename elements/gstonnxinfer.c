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
 * is released).  The sink caps derive from the model's image input: width
 * and height are those of the model (free when the model's dimensions are
 * dynamic) and the formats are the packed RGB/BGR formats (and GRAY8), so put
 * `videoconvert ! videoscale` in front of it.  Each frame is converted once,
 * straight into the session's pre-allocated input tensor (layout NCHW or NHWC,
 * float32 or uint8 as the model wants, per-channel `(x - mean) / std`), or
 * read in place when the frame already has the model's exact layout.  Output
 * tensors go into buffers from a bounded pool that travel with the frame.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=astronaut.png ! pngdec ! videoconvert ! \
 *   videoscale ! onnxinfer model-location=face_detection_front_128x128.onnx \
 *   input-mean="<127.5>" input-std="<127.5>" ! fakesink
 * ]| Runs BlazeFace on one image.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! videoscale ! \
 *   onnxinfer model-location=model.onnx inference-interval=3 ! \
 *   videoconvert ! autovideosink
 * ]| Infers one frame in three; the other two carry the last result.
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

GST_DEBUG_CATEGORY_STATIC (gst_onnx_infer_debug);
#define GST_CAT_DEFAULT gst_onnx_infer_debug

#define MAX_CHANNELS 4

#define DEFAULT_MODEL_LOCATION NULL
#define DEFAULT_BACKEND GST_ONNX_INFER_BACKEND_AUTO
#define DEFAULT_THREADS 0
#define MAX_THREADS 256
#define DEFAULT_CHANNEL_ORDER GST_ONNX_INFER_CHANNEL_ORDER_RGB
#define DEFAULT_INFERENCE_INTERVAL 1
#define DEFAULT_OUTPUT_POOL_SIZE 8
#define MIN_OUTPUT_POOL_SIZE 2
#define MAX_OUTPUT_POOL_SIZE 1024
#define DEFAULT_POST_MESSAGES FALSE
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
  PROP_WEIGHTS_BYTES,
  PROP_ARENA_BYTES,
  PROP_DEVICE_BYTES,
  PROP_PEAK_BYTES,
  PROP_FRAMES_INFERRED,
  PROP_LAST_LATENCY_US,
};

typedef enum
{
  LAYOUT_NCHW,                  /* channels before rows: planar */
  LAYOUT_NHWC,                  /* channels last: interleaved */
} TensorLayout;

/* One model output and where it goes in a storage buffer. */
typedef struct
{
  GQuark name;
  nn_dtype dtype;
  int rank;
  int64_t dims[NN_MAX_RANK];
  size_t nbytes;
  gsize offset;
} OutputSlot;

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
  gboolean preproc_dirty;       /* mean/std/order changed while streaming */
  gboolean session_stale;       /* model/backend/threads changed in READY */
  guint64 weights_bytes, arena_bytes, device_bytes, peak_bytes;
  guint64 frames_inferred;
  guint64 last_latency_us;
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
  int src_off[MAX_CHANNELS];    /* byte of each model channel in a pixel; -1: 255 */
  int pstride;
  gboolean gray;
  gfloat lut_f[MAX_CHANNELS][256];
  guint8 lut_u8[MAX_CHANNELS][256];
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

#define VIDEO_FORMATS "{ RGB, BGR, RGBA, BGRA, RGBx, BGRx, GRAY8 }"

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
   * channel order: the model gets `(pixel - mean) / std`.  One value applies
   * to every channel; empty means 0.  E.g. `input-mean="<127.5>"
   * input-std="<127.5>"` maps pixels to [-1, 1].
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_MEAN,
      gst_param_spec_array ("input-mean", "Input mean",
          "Per-channel mean subtracted from 0..255 pixel values, in the "
          "model's channel order; one value for all channels; empty = 0. "
          "The model input is (pixel - mean) / std",
          g_param_spec_float ("mean", "Mean", "Mean of one channel",
              -G_MAXFLOAT, G_MAXFLOAT, 0.0f, rw),
          rw | GST_PARAM_MUTABLE_PLAYING));

  /**
   * GstOnnxInfer:input-std:
   *
   * Per-channel divisor, in the model's channel order (see input-mean).
   * One value applies to every channel; empty means 1.  Must not be 0.
   */
  g_object_class_install_property (gobject_class, PROP_INPUT_STD,
      gst_param_spec_array ("input-std", "Input standard deviation",
          "Per-channel divisor applied after subtracting the mean, in the "
          "model's channel order; one value for all channels; empty = 1",
          g_param_spec_float ("std", "Std", "Standard deviation of one "
              "channel (not 0)", -G_MAXFLOAT, G_MAXFLOAT, 1.0f, rw),
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
   * Most results alive at once (frames downstream holding a result, plus
   * the one kept for inference-interval).  When all are in use the element
   * waits for downstream to release one.
   */
  g_object_class_install_property (gobject_class, PROP_OUTPUT_POOL_SIZE,
      g_param_spec_uint ("output-pool-size", "Output pool size",
          "Maximum number of output tensor sets alive at once (bounded pool; "
          "the element waits when all are held downstream)",
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

  gst_element_class_set_static_metadata (element_class,
      "ONNX inference", "Filter/Analyzer/Video",
      "Runs an ONNX model on video frames and attaches the output tensors "
      "as GstOnnxTensorMeta",
      "onnxinfer developers <onnxinfer@example.org>");
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
  self->input_index = -1;

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
  g_free (self->model_desc);
  gst_clear_caps (&self->model_caps);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* ---- properties ---------------------------------------------------------- */

static guint
get_float_array (const GValue * value, gfloat * out, const gchar * name,
    GstOnnxInfer * self)
{
  guint n = gst_value_array_get_size (value), i, used = 0;

  for (i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value (value, i);
    GValue d = G_VALUE_INIT;

    g_value_init (&d, G_TYPE_DOUBLE);
    if (!g_value_transform (v, &d)) {
      GST_WARNING_OBJECT (self, "%s: value %u is not a number", name, i);
      continue;
    }
    if (used < MAX_CHANNELS)
      out[used++] = (gfloat) g_value_get_double (&d);
    else
      GST_WARNING_OBJECT (self, "%s: more than %d values, ignoring the rest",
          name, MAX_CHANNELS);
    g_value_unset (&d);
  }
  return used;
}

static void
set_float_array (GValue * value, const gfloat * in, guint n)
{
  guint i;

  for (i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_FLOAT);
    g_value_set_float (&v, in[i]);
    gst_value_array_append_and_take_value (value, &v);
  }
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
      /* These need a new session: refuse while streaming. */
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
      } else {
        self->pool_size = g_value_get_uint (value);
      }
      /* In READY the session exists: rebuild it at READY->PAUSED. */
      if (prop_id != PROP_OUTPUT_POOL_SIZE && GST_STATE (self) == GST_STATE_READY)
        self->session_stale = TRUE;
      break;
    case PROP_INPUT_MEAN:{
      gfloat m[MAX_CHANNELS];
      guint n = get_float_array (value, m, "input-mean", self);
      memcpy (self->mean, m, sizeof m);
      self->n_mean = n;
      self->preproc_dirty = TRUE;
      break;
    }
    case PROP_INPUT_STD:{
      gfloat s[MAX_CHANNELS];
      guint n = get_float_array (value, s, "input-std", self), i;
      for (i = 0; i < n; i++)
        if (s[i] == 0.0f)
          break;
      if (i < n) {
        GST_OBJECT_UNLOCK (self);
        g_warning ("onnxinfer: input-std values must not be 0; keeping the "
            "previous value");
        return;
      }
      memcpy (self->std, s, sizeof s);
      self->n_std = n;
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
      set_float_array (value, self->mean, self->n_mean);
      break;
    case PROP_INPUT_STD:
      set_float_array (value, self->std, self->n_std);
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
      if (!g_file_test (location, G_FILE_TEST_EXISTS))
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

  if (self->n_axis >= 0 && info.dims[0] > 1) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Model \"%s\" wants a batch of %" G_GINT64_FORMAT " images; "
            "onnxinfer feeds one frame at a time (batch 1 or dynamic).",
            location, info.dims[0]), (NULL));
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

static GstCaps *
build_model_caps (GstOnnxInfer * self, GstOnnxInferChannelOrder order)
{
  static const gchar *rgb3[] = { "RGB", "BGR", "RGBx", "BGRx", "RGBA", "BGRA",
    "GRAY8", NULL
  };
  static const gchar *bgr3[] = { "BGR", "RGB", "BGRx", "RGBx", "BGRA", "RGBA",
    "GRAY8", NULL
  };
  static const gchar *rgb4[] = { "RGBA", "BGRA", "RGBx", "BGRx", NULL };
  static const gchar *bgr4[] = { "BGRA", "RGBA", "BGRx", "RGBx", NULL };
  static const gchar *gray[] = { "GRAY8", NULL };
  const gchar **formats;
  GValue list = G_VALUE_INIT;
  GstStructure *s;
  int64_t h = self->model_dims[self->h_axis], w = self->model_dims[self->w_axis];
  guint i;

  if (self->channels == 1)
    formats = gray;
  else if (self->channels == 3)
    formats = order == GST_ONNX_INFER_CHANNEL_ORDER_BGR ? bgr3 : rgb3;
  else
    formats = order == GST_ONNX_INFER_CHANNEL_ORDER_BGR ? bgr4 : rgb4;

  g_value_init (&list, GST_TYPE_LIST);
  for (i = 0; formats[i]; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_STRING);
    g_value_set_static_string (&v, formats[i]);
    gst_value_list_append_and_take_value (&list, &v);
  }
  s = gst_structure_new_empty ("video/x-raw");
  gst_structure_take_value (s, "format", &list);
  if (w > 0 && w <= G_MAXINT)
    gst_structure_set (s, "width", G_TYPE_INT, (gint) w, NULL);
  else
    gst_structure_set (s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
  if (h > 0 && h <= G_MAXINT)
    gst_structure_set (s, "height", G_TYPE_INT, (gint) h, NULL);
  else
    gst_structure_set (s, "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);

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
  guint threads;
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
  self->frames_inferred = 0;
  self->last_latency_us = 0;
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

  /* A dynamic batch is fixed to one frame now; dynamic height/width wait
   * for the caps. */
  if (self->n_axis == 0 && self->model_dims[0] < 0 &&
      self->model_dims[self->h_axis] > 0 && self->model_dims[self->w_axis] > 0) {
    int64_t dims[NN_MAX_RANK];
    memcpy (dims, self->model_dims, sizeof dims);
    dims[0] = 1;
    st = nn_session_set_input_shape (self->session, self->input_index,
        self->rank, dims);
    if (st != NN_OK) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("Could not set the model's batch size to 1: %s",
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
    self->out_sizes[i] = self->outputs[i].nbytes;
  gst_onnx_tensor_storage_layout_init (&self->storage_layout,
      (guint) self->n_outputs, self->out_sizes, self->out_offsets);
  for (i = 0; i < self->n_outputs; i++)
    self->outputs[i].offset = self->out_offsets[i];

  release_pool (self);

  GST_OBJECT_LOCK (self);
  max = self->pool_size;
  GST_OBJECT_UNLOCK (self);

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
        "input %s, which needs %s. Put 'videoconvert ! videoscale' in front "
        "of onnxinfer.", have, self->model_desc ? self->model_desc : "",
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

static gboolean
recompute_preproc (GstOnnxInfer * self)
{
  const GstVideoFormatInfo *finfo = self->vinfo.finfo;
  gfloat mean[MAX_CHANNELS], std[MAX_CHANNELS];
  guint n_mean, n_std;
  GstOnnxInferChannelOrder order;
  gboolean identity = TRUE;
  int C = self->channels, k, v;

  GST_OBJECT_LOCK (self);
  memcpy (mean, self->mean, sizeof mean);
  memcpy (std, self->std, sizeof std);
  n_mean = self->n_mean;
  n_std = self->n_std;
  order = self->channel_order;
  self->preproc_dirty = FALSE;
  GST_OBJECT_UNLOCK (self);

  if ((n_mean > 1 && n_mean != (guint) C) || (n_std > 1 && n_std != (guint) C)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("input-mean has %u and input-std %u values, but the model has %d "
            "channels: give 1 or %d values.", n_mean, n_std, C, C), (NULL));
    return FALSE;
  }

  self->gray = GST_VIDEO_FORMAT_INFO_IS_GRAY (finfo);
  self->pstride = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 0);
  for (k = 0; k < C; k++) {
    int comp;
    if (self->gray)
      comp = 0;
    else if (k < 3)
      comp = order == GST_ONNX_INFER_CHANNEL_ORDER_BGR ? 2 - k : k;
    else
      comp = GST_VIDEO_FORMAT_INFO_HAS_ALPHA (finfo) ? 3 : -1;
    if (self->gray && C == 4 && k == 3)
      comp = -1;
    self->src_off[k] = comp >= 0 ?
        (int) GST_VIDEO_FORMAT_INFO_POFFSET (finfo, comp) : -1;
  }

  for (k = 0; k < C; k++) {
    gfloat m = n_mean == 0 ? 0.0f : mean[n_mean == 1 ? 0 : k];
    gfloat s = n_std == 0 ? 1.0f : std[n_std == 1 ? 0 : k];
    if (m != 0.0f || s != 1.0f)
      identity = FALSE;
    for (v = 0; v < 256; v++) {
      gfloat f = ((gfloat) v - m) / s;
      self->lut_f[k][v] = f;
      self->lut_u8[k][v] = (guint8) CLAMP (lrintf (f), 0, 255);
    }
  }

  /* The frame can be read in place when its bytes are the tensor's bytes. */
  self->zero_copy = self->in_dtype == NN_DTYPE_UINT8 && identity &&
      (self->layout == LAYOUT_NHWC || C == 1) && self->pstride == C &&
      !self->zero_copy_failed;
  for (k = 0; k < C && self->zero_copy; k++)
    if (self->src_off[k] != k)
      self->zero_copy = FALSE;

  GST_DEBUG_OBJECT (self, "preprocessing: %s, channel bytes %d %d %d %d, "
      "pstride %d, %s", identity ? "identity" : "mean/std",
      self->src_off[0], C > 1 ? self->src_off[1] : -9,
      C > 2 ? self->src_off[2] : -9, C > 3 ? self->src_off[3] : -9,
      self->pstride, self->zero_copy ? "zero-copy" : "convert");
  return TRUE;
}

static gboolean
gst_onnx_infer_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);
  GstVideoInfo vinfo;
  int64_t dims[NN_MAX_RANK];
  nn_status st;
  int i;

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

  memcpy (dims, self->model_dims, sizeof dims);
  if (self->n_axis == 0)
    dims[0] = 1;
  dims[self->h_axis] = GST_VIDEO_INFO_HEIGHT (&vinfo);
  dims[self->w_axis] = GST_VIDEO_INFO_WIDTH (&vinfo);
  if ((self->model_dims[self->h_axis] > 0 &&
          self->model_dims[self->h_axis] != dims[self->h_axis]) ||
      (self->model_dims[self->w_axis] > 0 &&
          self->model_dims[self->w_axis] != dims[self->w_axis])) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Video is %dx%d but the model input %s needs %" G_GINT64_FORMAT "x%"
            G_GINT64_FORMAT ". Put 'videoscale' in front of onnxinfer.",
            GST_VIDEO_INFO_WIDTH (&vinfo), GST_VIDEO_INFO_HEIGHT (&vinfo),
            self->model_desc, self->model_dims[self->w_axis],
            self->model_dims[self->h_axis]), (NULL));
    return FALSE;
  }

  if (self->input == NULL || memcmp (dims, self->in_shape,
          sizeof (int64_t) * self->rank) != 0) {
    gboolean dynamic = FALSE;
    for (i = 0; i < self->rank; i++)
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
            ("The model cannot take %dx%d frames: %s",
                GST_VIDEO_INFO_WIDTH (&vinfo), GST_VIDEO_INFO_HEIGHT (&vinfo),
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

  self->vinfo = vinfo;
  if (!recompute_preproc (self))
    return FALSE;

  GST_INFO_OBJECT (self, "negotiated %s %dx%d for input %s%s",
      GST_VIDEO_INFO_NAME (&vinfo), GST_VIDEO_INFO_WIDTH (&vinfo),
      GST_VIDEO_INFO_HEIGHT (&vinfo), self->model_desc,
      self->zero_copy ? " (zero-copy)" : "");
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

/* Converts the frame into the pre-allocated input tensor, stride-aware. */
static void
convert_frame (GstOnnxInfer * self, const GstVideoFrame * frame)
{
  const int W = GST_VIDEO_FRAME_WIDTH (frame);
  const int H = GST_VIDEO_FRAME_HEIGHT (frame);
  const int C = self->channels;
  const int ps = self->pstride;
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  const guint8 *base = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  const gboolean nchw = self->layout == LAYOUT_NCHW;
  const gsize plane = (gsize) W * H;
  int x, y, k;

  if (self->in_dtype == NN_DTYPE_FLOAT) {
    float *dst = self->input->data;
    for (y = 0; y < H; y++) {
      const guint8 *row = base + (gsize) y * stride;
      if (nchw) {
        for (k = 0; k < C; k++) {
          float *d = dst + k * plane + (gsize) y * W;
          const float *lut = self->lut_f[k];
          const int off = self->src_off[k];
          if (off < 0) {
            for (x = 0; x < W; x++)
              d[x] = lut[255];
          } else {
            const guint8 *p = row + off;
            for (x = 0; x < W; x++, p += ps)
              d[x] = lut[*p];
          }
        }
      } else if (C == 3 && self->src_off[0] >= 0) {
        float *d = dst + (gsize) y * W * 3;
        const float *l0 = self->lut_f[0], *l1 = self->lut_f[1],
            *l2 = self->lut_f[2];
        const guint8 *p = row;
        const int o0 = self->src_off[0], o1 = self->src_off[1],
            o2 = self->src_off[2];
        for (x = 0; x < W; x++, p += ps, d += 3) {
          d[0] = l0[p[o0]];
          d[1] = l1[p[o1]];
          d[2] = l2[p[o2]];
        }
      } else {
        float *d = dst + (gsize) y * W * C;
        const guint8 *p = row;
        for (x = 0; x < W; x++, p += ps, d += C)
          for (k = 0; k < C; k++)
            d[k] = self->lut_f[k][self->src_off[k] < 0 ? 255 :
                p[self->src_off[k]]];
      }
    }
  } else {
    guint8 *dst = self->input->data;
    for (y = 0; y < H; y++) {
      const guint8 *row = base + (gsize) y * stride;
      if (nchw) {
        for (k = 0; k < C; k++) {
          guint8 *d = dst + k * plane + (gsize) y * W;
          const guint8 *lut = self->lut_u8[k];
          const int off = self->src_off[k];
          const guint8 *p = row + MAX (off, 0);
          for (x = 0; x < W; x++, p += ps)
            d[x] = lut[off < 0 ? 255 : *p];
        }
      } else {
        guint8 *d = dst + (gsize) y * W * C;
        const guint8 *p = row;
        for (x = 0; x < W; x++, p += ps, d += C)
          for (k = 0; k < C; k++)
            d[k] = self->lut_u8[k][self->src_off[k] < 0 ? 255 :
                p[self->src_off[k]]];
      }
    }
  }
}

static gboolean
slot_matches (const OutputSlot * slot, const nn_tensor * t)
{
  return slot->dtype == t->dtype && slot->rank == t->rank &&
      slot->nbytes == t->nbytes &&
      memcmp (slot->dims, t->dims, sizeof (int64_t) * t->rank) == 0;
}

/* Runs the session and leaves the outputs in a storage buffer from the pool
 * (written in place by the runtime when it accepts bound outputs, copied
 * otherwise).  Steady state: no allocation. */
static GstFlowReturn
run_inference (GstOnnxInfer * self, GstBuffer ** storage_out)
{
  GstBuffer *storage = NULL;
  GstBufferPool *pool;
  GstMapInfo map;
  gboolean mapped = FALSE;
  GstOnnxTensor *desc;
  GstFlowReturn ret;
  nn_status st;
  int i;

  *storage_out = NULL;

  if (self->outputs_known && self->bind_outputs) {
    GST_OBJECT_LOCK (self);
    pool = self->pool ? gst_object_ref (self->pool) : NULL;
    GST_OBJECT_UNLOCK (self);
    if (pool == NULL)
      return GST_FLOW_FLUSHING;
    ret = gst_buffer_pool_acquire_buffer (pool, &storage, NULL);
    gst_object_unref (pool);
    if (ret != GST_FLOW_OK)
      return ret;
    if (!gst_buffer_map (storage, &map, GST_MAP_WRITE)) {
      gst_buffer_unref (storage);
      return GST_FLOW_ERROR;
    }
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
    const gchar *msg = nn_session_last_error (self->session);
    if (mapped)
      gst_buffer_unmap (storage, &map);
    gst_clear_buffer (&storage);
    /* Do not keep pointers into a buffer we give back. */
    unbind_outputs (self);
    self->outputs_known = FALSE;
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Inference failed: %s", msg[0] ? msg : nn_status_str (st)),
        ("%s", nn_status_str (st)));
    return GST_FLOW_ERROR;
  }

  /* First run, or the outputs changed: describe them and size the pool. */
  if (!self->outputs_known) {
    for (i = 0; i < self->n_outputs; i++) {
      const nn_tensor *t = NULL;
      OutputSlot *slot = &self->outputs[i];
      if (nn_session_output_tensor (self->session, i, &t) != NN_OK || !t) {
        GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
            ("Could not read output %d: %s", i,
                nn_session_last_error (self->session)), (NULL));
        return GST_FLOW_ERROR;
      }
      slot->dtype = t->dtype;
      slot->rank = t->rank;
      memset (slot->dims, 0, sizeof slot->dims);
      memcpy (slot->dims, t->dims, sizeof (int64_t) * t->rank);
      slot->nbytes = t->nbytes;
    }
    if (!setup_pool (self))
      return GST_FLOW_ERROR;
    self->outputs_known = TRUE;
    self->bind_outputs = TRUE;      /* try zero-copy outputs from now on */
  }

  if (!mapped) {
    GST_OBJECT_LOCK (self);
    pool = self->pool ? gst_object_ref (self->pool) : NULL;
    GST_OBJECT_UNLOCK (self);
    if (pool == NULL)
      return GST_FLOW_FLUSHING;
    ret = gst_buffer_pool_acquire_buffer (pool, &storage, NULL);
    gst_object_unref (pool);
    if (ret != GST_FLOW_OK)
      return ret;
    if (!gst_buffer_map (storage, &map, GST_MAP_WRITE)) {
      gst_buffer_unref (storage);
      return GST_FLOW_ERROR;
    }
    mapped = TRUE;
  }

  desc = gst_onnx_tensor_storage_init (map.data, map.size,
      (guint) self->n_outputs);
  for (i = 0; i < self->n_outputs; i++) {
    const OutputSlot *slot = &self->outputs[i];
    const nn_tensor *t = NULL;
    guint8 *dst = map.data + slot->offset;

    if (nn_session_output_tensor (self->session, i, &t) != NN_OK || !t ||
        !slot_matches (slot, t)) {
      /* Shapes moved under us (data-dependent output shapes): start over
       * with copies next time. */
      gst_buffer_unmap (storage, &map);
      gst_buffer_unref (storage);
      unbind_outputs (self);
      self->outputs_known = FALSE;
      GST_ELEMENT_ERROR (self, STREAM, FAILED,
          ("Output %d changed shape between frames; outputs with "
              "data-dependent shapes are not supported.", i), (NULL));
      return GST_FLOW_ERROR;
    }
    if (t->data != (void *) dst && t->nbytes)
      memcpy (dst, t->data, t->nbytes);

    desc[i].name = slot->name;
    desc[i].data_type = (GstOnnxTensorDataType) slot->dtype;
    desc[i].n_dims = (guint) slot->rank;
    memset (desc[i].dims, 0, sizeof desc[i].dims);
    memcpy (desc[i].dims, slot->dims, sizeof (int64_t) * slot->rank);
    desc[i].size = slot->nbytes;
    desc[i].offset = slot->offset;
    desc[i].data = dst;
  }
  gst_buffer_unmap (storage, &map);

  *storage_out = storage;
  return GST_FLOW_OK;
}

static gdouble
tensor_value (const GstOnnxTensor * t, gint64 i)
{
  switch (t->data_type) {
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
post_summary (GstOnnxInfer * self, GstBuffer * buf, guint64 frame,
    guint64 latency_us)
{
  GstOnnxTensorMeta *meta;
  GstStructure *s;
  guint i;

  meta = gst_buffer_get_onnx_tensor_meta (buf, GST_OBJECT_NAME (self));
  if (meta == NULL)
    return;

  s = gst_structure_new ("onnxinfer",
      "frame", G_TYPE_UINT64, frame,
      "pts", G_TYPE_UINT64, GST_BUFFER_PTS (buf),
      "inference-id", G_TYPE_UINT64, meta->inference_id,
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

static GstFlowReturn
gst_onnx_infer_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstOnnxInfer *self = GST_ONNX_INFER (trans);
  GstVideoFrame frame;
  GstBuffer *storage = NULL;
  GstFlowReturn ret;
  gboolean dirty, post, bound_input = FALSE;
  guint interval;
  guint64 n;
  gint64 t0, t1;

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
  if (interval > 1 && (n % interval) != 0 && self->last_storage) {
    GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": reusing inference %"
        G_GUINT64_FORMAT, n, self->inference_id);
    if (!gst_buffer_add_onnx_tensor_meta (buf, self->model_id,
            self->last_storage, self->inference_id, TRUE))
      return GST_FLOW_ERROR;
    return GST_FLOW_OK;
  }

  t0 = g_get_monotonic_time ();
  if (!gst_video_frame_map (&frame, &self->vinfo, buf, GST_MAP_READ)) {
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

  if (self->zero_copy && GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) ==
      GST_VIDEO_FRAME_WIDTH (&frame) * self->channels) {
    nn_tensor t = *self->input;
    nn_status st;
    t.data = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
    st = nn_session_bind_input (self->session, self->input_index, &t);
    if (st == NN_OK) {
      bound_input = TRUE;
    } else {
      GST_INFO_OBJECT (self, "zero-copy input refused (%s: %s); converting",
          nn_status_str (st), nn_session_last_error (self->session));
      self->zero_copy_failed = TRUE;
      self->zero_copy = FALSE;
    }
  }
  if (!bound_input)
    convert_frame (self, &frame);

  ret = run_inference (self, &storage);

  if (bound_input)
    nn_session_reset_input (self->session, self->input_index);
  gst_video_frame_unmap (&frame);

  if (ret != GST_FLOW_OK)
    return ret;

  self->inference_id++;
  if (!gst_buffer_add_onnx_tensor_meta (buf, self->model_id, storage,
          self->inference_id, FALSE)) {
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
    post_summary (self, buf, n, (guint64) (t1 - t0));
  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": inference %"
      G_GUINT64_FORMAT " took %" G_GINT64_FORMAT " us", n, self->inference_id,
      t1 - t0);
  return GST_FLOW_OK;
}
