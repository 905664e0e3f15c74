/* GStreamer onnxinfer plugin
 *
 * gstonnxinfermeta.h: an introspectable reader of the onnxinfer results on a
 * buffer (libgstonnxinfermeta-1.0, GObject-introspection namespace
 * GstOnnxInfer-1.0), for Python, JavaScript and other language bindings and
 * for C programs that prefer reference-counted snapshots to the borrowed
 * pointers of <gst/onnxinfer/gstonnxtensormeta.h>.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef __GST_ONNX_INFER_META_H__
#define __GST_ONNX_INFER_META_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#ifndef GST_ONNX_INFER_META_API
# define GST_ONNX_INFER_META_API extern
#endif

/**
 * GstOnnxInferResult:
 *
 * The output tensors of one inference, read from a #GstOnnxTensorMeta of a
 * buffer: a reference-counted snapshot that holds a reference on the
 * tensors' storage, so it (and the #GstOnnxInferTensor and #GBytes obtained
 * from it) stays valid after the buffer is gone.  While a result is alive
 * its storage does not go back to the producing element's pool (the element
 * then allocates another one and counts it in its `pool-overflows`
 * property): keep results for as long as you need them, not longer.
 *
 * All functions are thread-safe; a result is immutable.
 */
typedef struct _GstOnnxInferResult GstOnnxInferResult;

/**
 * GstOnnxInferTensor:
 *
 * One output tensor of a #GstOnnxInferResult (holds a reference on it).
 */
typedef struct _GstOnnxInferTensor GstOnnxInferTensor;

#define GST_ONNX_INFER_TYPE_RESULT (gst_onnx_infer_result_get_type ())
#define GST_ONNX_INFER_TYPE_TENSOR (gst_onnx_infer_tensor_get_type ())

GST_ONNX_INFER_META_API
GType gst_onnx_infer_result_get_type (void);

GST_ONNX_INFER_META_API
GType gst_onnx_infer_tensor_get_type (void);

/* ---- finding results on a buffer ----------------------------------------- */

GST_ONNX_INFER_META_API
GstOnnxInferResult *gst_onnx_infer_buffer_get_result (GstBuffer * buffer,
    const gchar * model_id, gint roi_id);

GST_ONNX_INFER_META_API
GList *gst_onnx_infer_buffer_get_results (GstBuffer * buffer);

GST_ONNX_INFER_META_API
gint *gst_onnx_infer_buffer_get_roi_ids (GstBuffer * buffer, guint * n_ids);

/* ---- GstOnnxInferResult -------------------------------------------------- */

GST_ONNX_INFER_META_API
GstOnnxInferResult *gst_onnx_infer_result_ref (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
void gst_onnx_infer_result_unref (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
const gchar *gst_onnx_infer_result_get_model_id (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
gint gst_onnx_infer_result_get_roi_id (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
guint64 gst_onnx_infer_result_get_inference_id (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
gboolean gst_onnx_infer_result_is_reused (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
gboolean gst_onnx_infer_result_get_frame_size (GstOnnxInferResult * result,
    gint * width, gint * height);

GST_ONNX_INFER_META_API
gboolean gst_onnx_infer_result_input_to_frame (GstOnnxInferResult * result,
    gdouble input_x, gdouble input_y, gdouble * frame_x, gdouble * frame_y);

GST_ONNX_INFER_META_API
guint gst_onnx_infer_result_get_n_tensors (GstOnnxInferResult * result);

GST_ONNX_INFER_META_API
GstOnnxInferTensor *gst_onnx_infer_result_get_tensor (GstOnnxInferResult *
    result, guint index);

GST_ONNX_INFER_META_API
GstOnnxInferTensor *gst_onnx_infer_result_get_tensor_by_name
    (GstOnnxInferResult * result, const gchar * name);

GST_ONNX_INFER_META_API
GList *gst_onnx_infer_result_get_tensors (GstOnnxInferResult * result);

/* ---- GstOnnxInferTensor -------------------------------------------------- */

GST_ONNX_INFER_META_API
GstOnnxInferTensor *gst_onnx_infer_tensor_ref (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
void gst_onnx_infer_tensor_unref (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
const gchar *gst_onnx_infer_tensor_get_name (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
const gchar *gst_onnx_infer_tensor_get_data_type (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
gint gst_onnx_infer_tensor_get_data_type_id (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
const gint64 *gst_onnx_infer_tensor_get_dims (GstOnnxInferTensor * tensor,
    guint * n_dims);

GST_ONNX_INFER_META_API
gint64 gst_onnx_infer_tensor_get_n_elements (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
gsize gst_onnx_infer_tensor_get_size (GstOnnxInferTensor * tensor);

GST_ONNX_INFER_META_API
GBytes *gst_onnx_infer_tensor_get_data (GstOnnxInferTensor * tensor);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GstOnnxInferResult, gst_onnx_infer_result_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GstOnnxInferTensor, gst_onnx_infer_tensor_unref)

G_END_DECLS

#endif /* __GST_ONNX_INFER_META_H__ */
