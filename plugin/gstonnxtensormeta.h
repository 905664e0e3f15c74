/* GStreamer onnxinfer plugin
 *
 * gstonnxtensormeta.h: the output tensors of one inference, as buffer meta.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef __GST_ONNX_TENSOR_META_H__
#define __GST_ONNX_TENSOR_META_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * SECTION:gstonnxtensormeta
 * @title: GstOnnxTensorMeta
 * @short_description: output tensors of an inference, attached to the frame
 *
 * Each `onnxinfer` element in a pipeline adds one #GstOnnxTensorMeta to every
 * buffer it lets through.  The meta carries all output tensors of the model
 * (name, data type, dimensions, a pointer to the dense row-major data) and is
 * identified by #GstOnnxTensorMeta.model_id, the quark of the producing
 * element's name, so a cascade of several `onnxinfer` elements leaves one
 * entry per element on the buffer.
 *
 * Lifetime: the tensor data lives in a #GstBuffer from the element's bounded
 * buffer pool (the "storage").  The meta holds a reference on the storage and
 * keeps it mapped, so the pointers in #GstOnnxTensor.data stay valid exactly
 * as long as the meta, i.e. as long as the frame.  When the last frame
 * referring to a result goes away the storage returns to the pool.
 *
 * The tensors are read-only: copies of the frame (gst_buffer_copy(),
 * gst_buffer_make_writable(), video scaling) share the same storage by
 * reference.
 *
 * The consumer functions in this header are `static inline` and need only
 * libgstreamer: an application includes this header and does not link with
 * the plugin.  They find the meta API type by name, so they return %NULL
 * until the `onnxinfer` plugin has been loaded (which happens as soon as an
 * `onnxinfer` element exists).
 *
 * |[<!-- language="C" -->
 * GstOnnxTensorMeta *meta = gst_buffer_get_onnx_tensor_meta (buf, "detector");
 * if (meta) {
 *   const GstOnnxTensor *scores = gst_onnx_tensor_meta_get_by_name (meta, "scores");
 *   const float *s = scores->data;
 *   ...
 * }
 * ]|
 */

/**
 * GST_ONNX_TENSOR_MAX_DIMS:
 *
 * Maximum rank of a tensor (as NN_MAX_RANK in the runtime).
 */
#define GST_ONNX_TENSOR_MAX_DIMS 8

/**
 * GstOnnxTensorDataType:
 * @GST_ONNX_TENSOR_DATA_TYPE_UNDEFINED: not set
 * @GST_ONNX_TENSOR_DATA_TYPE_FLOAT32: 32-bit IEEE float
 * @GST_ONNX_TENSOR_DATA_TYPE_UINT8: unsigned 8-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_INT8: signed 8-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_UINT16: unsigned 16-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_INT16: signed 16-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_INT32: signed 32-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_INT64: signed 64-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_BOOL: one byte per element, 0 or 1
 * @GST_ONNX_TENSOR_DATA_TYPE_FLOAT16: IEEE half float
 * @GST_ONNX_TENSOR_DATA_TYPE_FLOAT64: 64-bit IEEE float
 * @GST_ONNX_TENSOR_DATA_TYPE_UINT32: unsigned 32-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_UINT64: unsigned 64-bit integer
 * @GST_ONNX_TENSOR_DATA_TYPE_BFLOAT16: bfloat16
 *
 * Element type of a tensor.  The values are those of ONNX's
 * `TensorProto.DataType` (and of the runtime's `nn_dtype`).
 */
typedef enum
{
  GST_ONNX_TENSOR_DATA_TYPE_UNDEFINED = 0,
  GST_ONNX_TENSOR_DATA_TYPE_FLOAT32 = 1,
  GST_ONNX_TENSOR_DATA_TYPE_UINT8 = 2,
  GST_ONNX_TENSOR_DATA_TYPE_INT8 = 3,
  GST_ONNX_TENSOR_DATA_TYPE_UINT16 = 4,
  GST_ONNX_TENSOR_DATA_TYPE_INT16 = 5,
  GST_ONNX_TENSOR_DATA_TYPE_INT32 = 6,
  GST_ONNX_TENSOR_DATA_TYPE_INT64 = 7,
  GST_ONNX_TENSOR_DATA_TYPE_BOOL = 9,
  GST_ONNX_TENSOR_DATA_TYPE_FLOAT16 = 10,
  GST_ONNX_TENSOR_DATA_TYPE_FLOAT64 = 11,
  GST_ONNX_TENSOR_DATA_TYPE_UINT32 = 12,
  GST_ONNX_TENSOR_DATA_TYPE_UINT64 = 13,
  GST_ONNX_TENSOR_DATA_TYPE_BFLOAT16 = 16,
} GstOnnxTensorDataType;

/**
 * GstOnnxTensor:
 * @name: quark of the model's output name
 * @data_type: element type
 * @n_dims: number of dimensions (0 for a scalar)
 * @dims: the dimensions, outermost first (row-major)
 * @size: size of the data in bytes
 * @offset: offset of the data in the storage buffer
 * @data: the data, read-only; valid as long as the #GstOnnxTensorMeta
 *
 * One output tensor of an inference.
 */
typedef struct
{
  GQuark name;
  GstOnnxTensorDataType data_type;
  guint n_dims;
  gint64 dims[GST_ONNX_TENSOR_MAX_DIMS];
  gsize size;
  gsize offset;
  gconstpointer data;
} GstOnnxTensor;

/**
 * GstOnnxTensorGeometry:
 * @frame_width: width of the frame the model saw, in pixels (0: unknown,
 *   the rest of the structure is then unset)
 * @frame_height: its height
 * @input_width: width of the model input the frame was mapped into
 * @input_height: its height
 * @src_x: left of the source rectangle, in frame pixels
 * @src_y: top of the source rectangle
 * @src_width: width of the source rectangle
 * @src_height: its height
 * @scale_x: model input pixels per frame pixel, horizontally
 * @scale_y: the same, vertically
 * @offset_x: where @src_x lands in the model input
 * @offset_y: where @src_y lands
 * @angle: rotation of the source rectangle about its centre, in degrees
 *   (image coordinates, y down: positive is clockwise on screen); 0 for an
 *   axis-aligned rectangle.  A rotated region (a `rotated-box` parameter on
 *   its ROI) is cut out upright.
 *
 * How the model input was cut from the frame (`scale-mode`, region crops):
 *
 *   input_x = (frame_x - src_x) * scale_x + offset_x   (same for y)
 *
 * (with @angle != 0 the frame point is first turned by -@angle about the
 * source rectangle's centre), so, for @angle 0, a decoder maps a model
 * coordinate back with `frame_x = (input_x - offset_x) / scale_x + src_x`.  The coordinates are
 * those of the frame as it entered `onnxinfer`; a consumer that sees the
 * frame scaled (the meta survives `videoscale`) multiplies by its own width
 * over @frame_width.
 */
typedef struct
{
  gint frame_width, frame_height;
  gint input_width, input_height;
  gdouble src_x, src_y, src_width, src_height;
  gdouble scale_x, scale_y;
  gdouble offset_x, offset_y;
  gdouble angle;
} GstOnnxTensorGeometry;

typedef struct _GstOnnxTensorMeta GstOnnxTensorMeta;

/**
 * GstOnnxTensorMeta:
 * @meta: parent #GstMeta
 * @model_id: quark identifying the producer (the `onnxinfer` element's name)
 * @inference_id: sequence number of the inference that produced the
 *   tensors, counted per element from 1
 * @reused: %TRUE when the tensors were computed on an earlier frame and
 *   attached again to this one (`inference-interval` > 1)
 * @n_tensors: number of tensors
 * @tensors: (array length=n_tensors): the tensors, in the model's output order
 * @roi_id: -1 when the model ran on the whole frame; otherwise the `id` of
 *   the #GstVideoRegionOfInterestMeta of this frame the model ran on
 *   (`inference-region=roi-list`: one meta per region)
 * @geometry: how the model input was cut from the frame (or the region)
 *
 * The output tensors of one inference.  All fields are read-only.
 */
struct _GstOnnxTensorMeta
{
  GstMeta meta;

  GQuark model_id;
  guint64 inference_id;
  gboolean reused;
  guint n_tensors;
  const GstOnnxTensor *tensors;
  gint roi_id;
  GstOnnxTensorGeometry geometry;

  /*< private >*/
  GstBuffer *storage;
  GstMapInfo map;
  gpointer _gst_reserved[GST_PADDING];
};

/**
 * GST_ONNX_TENSOR_META_API_NAME:
 *
 * Name of the registered meta API type.
 */
#define GST_ONNX_TENSOR_META_API_NAME "GstOnnxTensorMetaAPI"

/**
 * GST_ONNX_TENSOR_META_API_TYPE:
 *
 * The #GType of the #GstOnnxTensorMeta API (0 until the plugin is loaded).
 */
#define GST_ONNX_TENSOR_META_API_TYPE (gst_onnx_tensor_meta_api_get_type ())

/**
 * gst_onnx_tensor_meta_api_get_type:
 *
 * Returns: the #GType of the #GstOnnxTensorMeta API, or 0 while the
 *   `onnxinfer` plugin is not loaded.
 */
static inline GType
gst_onnx_tensor_meta_api_get_type (void)
{
  /* The type is cached once found; a gpointer slot read and written as a
   * gpointer (no type-punned access: the header builds with
   * -Werror=strict-aliasing), 0 is not cached: the plugin may load later. */
  static gpointer type = NULL;
  GType t = (GType) GPOINTER_TO_SIZE (g_atomic_pointer_get (&type));

  if (G_UNLIKELY (t == 0)) {
    t = g_type_from_name (GST_ONNX_TENSOR_META_API_NAME);
    if (t != 0)
      g_atomic_pointer_set (&type, GSIZE_TO_POINTER (t));
  }
  return t;
}

/**
 * gst_buffer_get_onnx_tensor_meta:
 * @buffer: a #GstBuffer
 * @model_id: (nullable): name of the producing `onnxinfer` element, or %NULL
 *   for the first #GstOnnxTensorMeta on @buffer
 *
 * Returns: (transfer none) (nullable): the meta, owned by @buffer
 */
static inline GstOnnxTensorMeta *
gst_buffer_get_onnx_tensor_meta (GstBuffer * buffer, const gchar * model_id)
{
  GType api = gst_onnx_tensor_meta_api_get_type ();
  GQuark id = 0;
  gpointer state = NULL;
  GstMeta *meta;

  if (api == 0)
    return NULL;
  if (model_id != NULL) {
    id = g_quark_try_string (model_id);
    if (id == 0)
      return NULL;
  }
  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state, api))) {
    GstOnnxTensorMeta *tmeta = (GstOnnxTensorMeta *) meta;
    if (id == 0 || tmeta->model_id == id)
      return tmeta;
  }
  return NULL;
}

/**
 * gst_buffer_get_onnx_tensor_meta_for_roi:
 * @buffer: a #GstBuffer
 * @model_id: (nullable): name of the producing `onnxinfer` element, or %NULL
 *   for any producer
 * @roi_id: the `id` of a #GstVideoRegionOfInterestMeta of @buffer, or -1 for
 *   the whole-frame result
 *
 * Returns: (transfer none) (nullable): the tensors computed on that region
 */
static inline GstOnnxTensorMeta *
gst_buffer_get_onnx_tensor_meta_for_roi (GstBuffer * buffer,
    const gchar * model_id, gint roi_id)
{
  GType api = gst_onnx_tensor_meta_api_get_type ();
  GQuark id = 0;
  gpointer state = NULL;
  GstMeta *meta;

  if (api == 0)
    return NULL;
  if (model_id != NULL) {
    id = g_quark_try_string (model_id);
    if (id == 0)
      return NULL;
  }
  while ((meta = gst_buffer_iterate_meta_filtered (buffer, &state, api))) {
    GstOnnxTensorMeta *tmeta = (GstOnnxTensorMeta *) meta;
    if ((id == 0 || tmeta->model_id == id) && tmeta->roi_id == roi_id)
      return tmeta;
  }
  return NULL;
}

/**
 * gst_buffer_get_n_onnx_tensor_metas:
 * @buffer: a #GstBuffer
 *
 * Returns: how many #GstOnnxTensorMeta @buffer carries (one per producer).
 */
static inline guint
gst_buffer_get_n_onnx_tensor_metas (GstBuffer * buffer)
{
  GType api = gst_onnx_tensor_meta_api_get_type ();
  gpointer state = NULL;
  guint n = 0;

  if (api == 0)
    return 0;
  while (gst_buffer_iterate_meta_filtered (buffer, &state, api))
    n++;
  return n;
}

/**
 * gst_onnx_tensor_meta_get_by_name:
 * @meta: a #GstOnnxTensorMeta
 * @name: an output name of the model
 *
 * Returns: (transfer none) (nullable): the tensor, owned by @meta
 */
static inline const GstOnnxTensor *
gst_onnx_tensor_meta_get_by_name (const GstOnnxTensorMeta * meta,
    const gchar * name)
{
  GQuark q = g_quark_try_string (name);
  guint i;

  if (q == 0)
    return NULL;
  for (i = 0; i < meta->n_tensors; i++)
    if (meta->tensors[i].name == q)
      return &meta->tensors[i];
  return NULL;
}

/**
 * gst_onnx_tensor_meta_get:
 * @meta: a #GstOnnxTensorMeta
 * @index: index of the output, < @meta->n_tensors
 *
 * Returns: (transfer none) (nullable): the tensor, owned by @meta
 */
static inline const GstOnnxTensor *
gst_onnx_tensor_meta_get (const GstOnnxTensorMeta * meta, guint index)
{
  return index < meta->n_tensors ? &meta->tensors[index] : NULL;
}

/**
 * gst_onnx_tensor_get_n_elements:
 * @tensor: a #GstOnnxTensor
 *
 * Returns: the number of elements (1 for a scalar)
 */
static inline gint64
gst_onnx_tensor_get_n_elements (const GstOnnxTensor * tensor)
{
  gint64 n = 1;
  guint i;

  for (i = 0; i < tensor->n_dims; i++)
    n *= tensor->dims[i];
  return n;
}

/**
 * gst_onnx_tensor_data_type_get_name:
 * @data_type: a #GstOnnxTensorDataType
 *
 * Returns: a static lower-case name, e.g. "float32"
 */
static inline const gchar *
gst_onnx_tensor_data_type_get_name (GstOnnxTensorDataType data_type)
{
  switch (data_type) {
    case GST_ONNX_TENSOR_DATA_TYPE_FLOAT32: return "float32";
    case GST_ONNX_TENSOR_DATA_TYPE_UINT8: return "uint8";
    case GST_ONNX_TENSOR_DATA_TYPE_INT8: return "int8";
    case GST_ONNX_TENSOR_DATA_TYPE_UINT16: return "uint16";
    case GST_ONNX_TENSOR_DATA_TYPE_INT16: return "int16";
    case GST_ONNX_TENSOR_DATA_TYPE_INT32: return "int32";
    case GST_ONNX_TENSOR_DATA_TYPE_INT64: return "int64";
    case GST_ONNX_TENSOR_DATA_TYPE_BOOL: return "bool";
    case GST_ONNX_TENSOR_DATA_TYPE_FLOAT16: return "float16";
    case GST_ONNX_TENSOR_DATA_TYPE_FLOAT64: return "float64";
    case GST_ONNX_TENSOR_DATA_TYPE_UINT32: return "uint32";
    case GST_ONNX_TENSOR_DATA_TYPE_UINT64: return "uint64";
    case GST_ONNX_TENSOR_DATA_TYPE_BFLOAT16: return "bfloat16";
    default: return "undefined";
  }
}

/* ---- producer API: exported by the onnxinfer plugin library --------------- */

/**
 * GstOnnxTensorStorageLayout:
 * @n_tensors: number of tensors
 * @header_size: bytes used by the descriptors at the start of the storage
 * @total_size: size the storage buffer must have
 *
 * Where the descriptors and the data of each tensor lie in a storage buffer:
 * the #GstOnnxTensor array first, then each tensor's data at a 64-byte
 * aligned offset.  Fill it with gst_onnx_tensor_storage_layout_init().
 */
typedef struct
{
  guint n_tensors;
  gsize header_size;
  gsize total_size;
} GstOnnxTensorStorageLayout;

extern
const GstMetaInfo *gst_onnx_tensor_meta_get_info (void);

extern
GType gst_onnx_tensor_meta_api_register (void);

extern
void gst_onnx_tensor_storage_layout_init (GstOnnxTensorStorageLayout * layout,
    guint n_tensors, const gsize * sizes, gsize * offsets);

extern
GstOnnxTensor *gst_onnx_tensor_storage_init (guint8 * data, gsize size,
    guint n_tensors);

extern
GstOnnxTensorMeta *gst_buffer_add_onnx_tensor_meta (GstBuffer * buffer,
    GQuark model_id, GstBuffer * storage, guint64 inference_id,
    gboolean reused);

extern
GstOnnxTensorMeta *gst_buffer_add_onnx_tensor_meta_full (GstBuffer * buffer,
    GQuark model_id, gint roi_id, GstBuffer * storage, guint64 inference_id,
    gboolean reused, const GstOnnxTensorGeometry * geometry);

G_END_DECLS

#endif /* __GST_ONNX_TENSOR_META_H__ */
