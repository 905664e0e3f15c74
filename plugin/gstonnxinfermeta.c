/* GStreamer onnxinfer plugin
 *
 * gstonnxinfermeta.c: libgstonnxinfermeta-1.0, the introspectable reader of
 * GstOnnxTensorMeta.
 *
 * This library does not link with the plugin and never registers the meta:
 * it reads it with the header's static inline consumer functions, which find
 * the meta API type by name once GStreamer has loaded the onnxinfer plugin
 * (before that, every buffer simply has no result).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <gmodule.h>
#define GST_ONNX_INFER_META_API G_MODULE_EXPORT extern

#include <string.h>

#include <gst/video/video.h>

#include "gstonnxinfermeta.h"
#include "gstonnxtensormeta.h"

/**
 * SECTION:gstonnxinfermeta
 * @title: GstOnnxInfer
 * @short_description: reading onnxinfer results from any language
 *
 * `onnxinfer` attaches its output tensors to every frame as a
 * #GstOnnxTensorMeta, one per producing element (its name is the model id)
 * and, in region mode, one per region of interest.  The meta's C structure
 * is not accessible from language bindings; this library reads it into
 * reference-counted, immutable snapshots:
 *
 * |[<!-- language="Python" -->
 * gi.require_version("GstOnnxInfer", "1.0")
 * from gi.repository import GstOnnxInfer
 * result = GstOnnxInfer.buffer_get_result(buf, None, -1)  # first producer, whole frame
 * for t in result.get_tensors():
 *     print(t.get_name(), t.get_dims(), t.get_data_type())
 *     values = numpy.frombuffer(t.get_data().get_data(), numpy.float32)
 * for roi_id in GstOnnxInfer.buffer_get_roi_ids(buf):
 *     roi = GstVideo.buffer_get_video_region_of_interest_meta_id(buf, roi_id)
 * ]|
 *
 * Memory: a #GstOnnxInferResult holds a reference on the storage buffer of
 * the tensors (and maps it for reading); gst_onnx_infer_tensor_get_data()
 * wraps the data in place, without copying, in a #GBytes that keeps the
 * result alive.  (Python's `GLib.Bytes.get_data()` then makes one copy into a
 * Python `bytes`.)
 */

struct _GstOnnxInferResult
{
  gatomicrefcount ref_count;
  GQuark model_id;
  gint roi_id;
  guint64 inference_id;
  gboolean reused;
  GstOnnxTensorGeometry geometry;
  GstBuffer *storage;           /* owned reference, mapped in map */
  GstMapInfo map;
  guint n_tensors;
  GstOnnxTensor *tensors;       /* copies of the descriptors; data unused */
};

struct _GstOnnxInferTensor
{
  gatomicrefcount ref_count;
  GstOnnxInferResult *result;   /* owned reference */
  const GstOnnxTensor *desc;    /* in result->tensors */
};

G_DEFINE_BOXED_TYPE (GstOnnxInferResult, gst_onnx_infer_result,
    gst_onnx_infer_result_ref, gst_onnx_infer_result_unref);
G_DEFINE_BOXED_TYPE (GstOnnxInferTensor, gst_onnx_infer_tensor,
    gst_onnx_infer_tensor_ref, gst_onnx_infer_tensor_unref);

/* A snapshot of @meta, or NULL when its storage cannot be mapped or a
 * descriptor points outside it. */
static GstOnnxInferResult *
result_new (const GstOnnxTensorMeta * meta)
{
  GstOnnxInferResult *r = g_new0 (GstOnnxInferResult, 1);
  guint i;

  g_atomic_ref_count_init (&r->ref_count);
  r->model_id = meta->model_id;
  r->roi_id = meta->roi_id;
  r->inference_id = meta->inference_id;
  r->reused = meta->reused;
  r->geometry = meta->geometry;

  if (meta->storage == NULL || meta->n_tensors == 0)
    return r;
  if (!gst_buffer_map (meta->storage, &r->map, GST_MAP_READ)) {
    g_free (r);
    return NULL;
  }
  r->storage = gst_buffer_ref (meta->storage);
  r->n_tensors = meta->n_tensors;
  r->tensors = g_memdup2 (meta->tensors,
      (gsize) meta->n_tensors * sizeof (GstOnnxTensor));
  for (i = 0; i < r->n_tensors; i++) {
    const GstOnnxTensor *t = &r->tensors[i];
    if (t->offset > r->map.size || t->size > r->map.size - t->offset ||
        t->n_dims > GST_ONNX_TENSOR_MAX_DIMS) {
      gst_onnx_infer_result_unref (r);
      return NULL;
    }
  }
  return r;
}

/**
 * gst_onnx_infer_buffer_get_result:
 * @buffer: a #GstBuffer
 * @model_id: (nullable): the name of the producing `onnxinfer` element, or
 *   %NULL for any producer
 * @roi_id: -1 for the result computed on the whole frame, else the `id` of
 *   the #GstVideoRegionOfInterestMeta the model ran on (region mode)
 *
 * Returns: (transfer full) (nullable): a snapshot of the matching result
 *   (the first one with %NULL @model_id), or %NULL when @buffer has none
 *   (also while no `onnxinfer` element has been created in this process)
 */
GstOnnxInferResult *
gst_onnx_infer_buffer_get_result (GstBuffer * buffer, const gchar * model_id,
    gint roi_id)
{
  GstOnnxTensorMeta *meta;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  meta = gst_buffer_get_onnx_tensor_meta_for_roi (buffer, model_id, roi_id);
  return meta ? result_new (meta) : NULL;
}

/**
 * gst_onnx_infer_buffer_get_results:
 * @buffer: a #GstBuffer
 *
 * Returns: (transfer full) (element-type GstOnnxInferResult): every result
 *   on @buffer (one per producer and region), in the order they were added
 */
GList *
gst_onnx_infer_buffer_get_results (GstBuffer * buffer)
{
  GType api;
  gpointer state = NULL;
  GstMeta *m;
  GList *list = NULL;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  api = gst_onnx_tensor_meta_api_get_type ();
  if (api == 0)
    return NULL;
  while ((m = gst_buffer_iterate_meta_filtered (buffer, &state, api))) {
    GstOnnxInferResult *r = result_new ((const GstOnnxTensorMeta *) m);
    if (r)
      list = g_list_prepend (list, r);
  }
  return g_list_reverse (list);
}

/**
 * gst_onnx_infer_buffer_get_roi_ids:
 * @buffer: a #GstBuffer
 * @n_ids: (out): number of ids returned
 *
 * The ids of the #GstVideoRegionOfInterestMeta of @buffer (the decoders give
 * each region a unique id), for language bindings that cannot iterate a
 * buffer's metas: read each region with
 * gst_buffer_get_video_region_of_interest_meta_id().
 *
 * Returns: (transfer full) (array length=n_ids) (nullable): the ids, in the
 *   order of the metas on @buffer; free with g_free(); %NULL when there is
 *   none
 */
gint *
gst_onnx_infer_buffer_get_roi_ids (GstBuffer * buffer, guint * n_ids)
{
  GArray *ids;
  gpointer state = NULL;
  GstMeta *m;

  g_return_val_if_fail (n_ids != NULL, NULL);
  *n_ids = 0;
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  ids = g_array_new (FALSE, FALSE, sizeof (gint));
  while ((m = gst_buffer_iterate_meta_filtered (buffer, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    gint id = ((GstVideoRegionOfInterestMeta *) m)->id;
    g_array_append_val (ids, id);
  }
  *n_ids = ids->len;
  return (gint *) g_array_free (ids, ids->len == 0);
}

/**
 * gst_onnx_infer_result_ref:
 * @result: a #GstOnnxInferResult
 *
 * Returns: (transfer full): @result
 */
GstOnnxInferResult *
gst_onnx_infer_result_ref (GstOnnxInferResult * result)
{
  g_return_val_if_fail (result != NULL, NULL);
  g_atomic_ref_count_inc (&result->ref_count);
  return result;
}

/**
 * gst_onnx_infer_result_unref:
 * @result: (transfer full): a #GstOnnxInferResult
 *
 * Drops a reference; the last one releases the storage.
 */
void
gst_onnx_infer_result_unref (GstOnnxInferResult * result)
{
  g_return_if_fail (result != NULL);
  if (!g_atomic_ref_count_dec (&result->ref_count))
    return;
  if (result->storage) {
    gst_buffer_unmap (result->storage, &result->map);
    gst_buffer_unref (result->storage);
  }
  g_free (result->tensors);
  g_free (result);
}

/**
 * gst_onnx_infer_result_get_model_id:
 * @result: a #GstOnnxInferResult
 *
 * Returns: (transfer none): the producer's name (static string)
 */
const gchar *
gst_onnx_infer_result_get_model_id (GstOnnxInferResult * result)
{
  g_return_val_if_fail (result != NULL, NULL);
  return result->model_id ? g_quark_to_string (result->model_id) : "";
}

/**
 * gst_onnx_infer_result_get_roi_id:
 * @result: a #GstOnnxInferResult
 *
 * Returns: -1 for a whole-frame result, else the id of the region of
 *   interest the model ran on
 */
gint
gst_onnx_infer_result_get_roi_id (GstOnnxInferResult * result)
{
  g_return_val_if_fail (result != NULL, -1);
  return result->roi_id;
}

/**
 * gst_onnx_infer_result_get_inference_id:
 * @result: a #GstOnnxInferResult
 *
 * Returns: the sequence number of the inference, per element from 1
 */
guint64
gst_onnx_infer_result_get_inference_id (GstOnnxInferResult * result)
{
  g_return_val_if_fail (result != NULL, 0);
  return result->inference_id;
}

/**
 * gst_onnx_infer_result_is_reused:
 * @result: a #GstOnnxInferResult
 *
 * Returns: %TRUE when the tensors were computed on an earlier frame
 *   (`inference-interval` > 1)
 */
gboolean
gst_onnx_infer_result_is_reused (GstOnnxInferResult * result)
{
  g_return_val_if_fail (result != NULL, FALSE);
  return result->reused;
}

/**
 * gst_onnx_infer_result_get_frame_size:
 * @result: a #GstOnnxInferResult
 * @width: (out) (optional): width of the frame as it entered `onnxinfer`
 * @height: (out) (optional): its height
 *
 * Returns: %FALSE when the producer did not record the geometry
 */
gboolean
gst_onnx_infer_result_get_frame_size (GstOnnxInferResult * result,
    gint * width, gint * height)
{
  g_return_val_if_fail (result != NULL, FALSE);
  if (width)
    *width = result->geometry.frame_width;
  if (height)
    *height = result->geometry.frame_height;
  return result->geometry.frame_width > 0;
}

/**
 * gst_onnx_infer_result_input_to_frame:
 * @result: a #GstOnnxInferResult
 * @input_x: a horizontal coordinate in model input pixels
 * @input_y: a vertical one
 * @frame_x: (out): where it lies in the frame, in frame pixels
 * @frame_y: (out): the same, vertically
 *
 * Maps a point of the model input back to the frame (undoing the scaling,
 * letterboxing or region crop of `onnxinfer`).
 *
 * Returns: %FALSE (and the input unchanged) when the geometry is unknown
 */
gboolean
gst_onnx_infer_result_input_to_frame (GstOnnxInferResult * result,
    gdouble input_x, gdouble input_y, gdouble * frame_x, gdouble * frame_y)
{
  const GstOnnxTensorGeometry *g;

  g_return_val_if_fail (result != NULL, FALSE);
  g = &result->geometry;
  if (g->frame_width <= 0 || g->scale_x == 0.0 || g->scale_y == 0.0) {
    if (frame_x)
      *frame_x = input_x;
    if (frame_y)
      *frame_y = input_y;
    return FALSE;
  }
  if (frame_x)
    *frame_x = (input_x - g->offset_x) / g->scale_x + g->src_x;
  if (frame_y)
    *frame_y = (input_y - g->offset_y) / g->scale_y + g->src_y;
  return TRUE;
}

/**
 * gst_onnx_infer_result_get_n_tensors:
 * @result: a #GstOnnxInferResult
 *
 * Returns: the number of output tensors
 */
guint
gst_onnx_infer_result_get_n_tensors (GstOnnxInferResult * result)
{
  g_return_val_if_fail (result != NULL, 0);
  return result->n_tensors;
}

static GstOnnxInferTensor *
tensor_new (GstOnnxInferResult * result, guint index)
{
  GstOnnxInferTensor *t = g_new0 (GstOnnxInferTensor, 1);

  g_atomic_ref_count_init (&t->ref_count);
  t->result = gst_onnx_infer_result_ref (result);
  t->desc = &result->tensors[index];
  return t;
}

/**
 * gst_onnx_infer_result_get_tensor:
 * @result: a #GstOnnxInferResult
 * @index: index of the output, in the model's output order
 *
 * Returns: (transfer full) (nullable): the tensor, %NULL when @index is out
 *   of range
 */
GstOnnxInferTensor *
gst_onnx_infer_result_get_tensor (GstOnnxInferResult * result, guint index)
{
  g_return_val_if_fail (result != NULL, NULL);
  return index < result->n_tensors ? tensor_new (result, index) : NULL;
}

/**
 * gst_onnx_infer_result_get_tensor_by_name:
 * @result: a #GstOnnxInferResult
 * @name: an output name of the model
 *
 * Returns: (transfer full) (nullable): the tensor, %NULL when the model has
 *   no output of that name
 */
GstOnnxInferTensor *
gst_onnx_infer_result_get_tensor_by_name (GstOnnxInferResult * result,
    const gchar * name)
{
  GQuark q;
  guint i;

  g_return_val_if_fail (result != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);

  q = g_quark_try_string (name);
  if (q == 0)
    return NULL;
  for (i = 0; i < result->n_tensors; i++)
    if (result->tensors[i].name == q)
      return tensor_new (result, i);
  return NULL;
}

/**
 * gst_onnx_infer_result_get_tensors:
 * @result: a #GstOnnxInferResult
 *
 * Returns: (transfer full) (element-type GstOnnxInferTensor): all output
 *   tensors, in the model's output order
 */
GList *
gst_onnx_infer_result_get_tensors (GstOnnxInferResult * result)
{
  GList *list = NULL;
  guint i;

  g_return_val_if_fail (result != NULL, NULL);
  for (i = result->n_tensors; i > 0; i--)
    list = g_list_prepend (list, tensor_new (result, i - 1));
  return list;
}

/**
 * gst_onnx_infer_tensor_ref:
 * @tensor: a #GstOnnxInferTensor
 *
 * Returns: (transfer full): @tensor
 */
GstOnnxInferTensor *
gst_onnx_infer_tensor_ref (GstOnnxInferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  g_atomic_ref_count_inc (&tensor->ref_count);
  return tensor;
}

/**
 * gst_onnx_infer_tensor_unref:
 * @tensor: (transfer full): a #GstOnnxInferTensor
 */
void
gst_onnx_infer_tensor_unref (GstOnnxInferTensor * tensor)
{
  g_return_if_fail (tensor != NULL);
  if (!g_atomic_ref_count_dec (&tensor->ref_count))
    return;
  gst_onnx_infer_result_unref (tensor->result);
  g_free (tensor);
}

/**
 * gst_onnx_infer_tensor_get_name:
 * @tensor: a #GstOnnxInferTensor
 *
 * Returns: (transfer none): the model's name of this output (static string)
 */
const gchar *
gst_onnx_infer_tensor_get_name (GstOnnxInferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return tensor->desc->name ? g_quark_to_string (tensor->desc->name) : "";
}

/**
 * gst_onnx_infer_tensor_get_data_type:
 * @tensor: a #GstOnnxInferTensor
 *
 * Returns: (transfer none): the element type as a static lower-case name:
 *   "float32", "uint8", "int8", "uint16", "int16", "int32", "int64", "bool",
 *   "float16", "float64", "uint32", "uint64", "bfloat16" (the numpy dtype
 *   name, except "bfloat16")
 */
const gchar *
gst_onnx_infer_tensor_get_data_type (GstOnnxInferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return gst_onnx_tensor_data_type_get_name (tensor->desc->data_type);
}

/**
 * gst_onnx_infer_tensor_get_data_type_id:
 * @tensor: a #GstOnnxInferTensor
 *
 * Returns: the element type as ONNX's `TensorProto.DataType` value (1:
 *   float32, 2: uint8, 7: int64, ...), as #GstOnnxTensorDataType
 */
gint
gst_onnx_infer_tensor_get_data_type_id (GstOnnxInferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, 0);
  return (gint) tensor->desc->data_type;
}

/**
 * gst_onnx_infer_tensor_get_dims:
 * @tensor: a #GstOnnxInferTensor
 * @n_dims: (out): the rank (0 for a scalar)
 *
 * Returns: (transfer none) (array length=n_dims): the dimensions, outermost
 *   first (row-major data); owned by @tensor
 */
const gint64 *
gst_onnx_infer_tensor_get_dims (GstOnnxInferTensor * tensor, guint * n_dims)
{
  g_return_val_if_fail (n_dims != NULL, NULL);
  *n_dims = 0;
  g_return_val_if_fail (tensor != NULL, NULL);
  *n_dims = tensor->desc->n_dims;
  return tensor->desc->dims;
}

/**
 * gst_onnx_infer_tensor_get_n_elements:
 * @tensor: a #GstOnnxInferTensor
 *
 * Returns: the number of elements (the product of the dimensions)
 */
gint64
gst_onnx_infer_tensor_get_n_elements (GstOnnxInferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, 0);
  return gst_onnx_tensor_get_n_elements (tensor->desc);
}

/**
 * gst_onnx_infer_tensor_get_size:
 * @tensor: a #GstOnnxInferTensor
 *
 * Returns: the size of the data in bytes
 */
gsize
gst_onnx_infer_tensor_get_size (GstOnnxInferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, 0);
  return tensor->desc->size;
}

/**
 * gst_onnx_infer_tensor_get_data:
 * @tensor: a #GstOnnxInferTensor
 *
 * The data, dense, row-major, in native byte order.  No copy: the #GBytes
 * points into the storage buffer and holds a reference on the result; it is
 * read-only and valid until it is unreferenced.
 *
 * Returns: (transfer full): the data
 */
GBytes *
gst_onnx_infer_tensor_get_data (GstOnnxInferTensor * tensor)
{
  GstOnnxInferResult *r;

  g_return_val_if_fail (tensor != NULL, NULL);
  r = tensor->result;
  if (r->storage == NULL || tensor->desc->size == 0)
    return g_bytes_new (NULL, 0);
  return g_bytes_new_with_free_func (r->map.data + tensor->desc->offset,
      tensor->desc->size, (GDestroyNotify) gst_onnx_infer_result_unref,
      gst_onnx_infer_result_ref (r));
}
