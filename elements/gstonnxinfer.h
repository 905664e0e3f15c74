/* GStreamer onnxinfer plugin
 *
 * gstonnxinfer.h: runs an ONNX model on video frames.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef __GST_ONNX_INFER_H__
#define __GST_ONNX_INFER_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_ONNX_INFER (gst_onnx_infer_get_type ())
G_DECLARE_FINAL_TYPE (GstOnnxInfer, gst_onnx_infer, GST, ONNX_INFER,
    GstBaseTransform)

/**
 * GstOnnxInferBackend:
 * @GST_ONNX_INFER_BACKEND_AUTO: Vulkan when a device exists, else CPU
 * @GST_ONNX_INFER_BACKEND_CPU: the CPU kernels
 * @GST_ONNX_INFER_BACKEND_VULKAN: a Vulkan compute device (error if none)
 */
typedef enum
{
  GST_ONNX_INFER_BACKEND_AUTO,
  GST_ONNX_INFER_BACKEND_CPU,
  GST_ONNX_INFER_BACKEND_VULKAN,
} GstOnnxInferBackend;

/**
 * GstOnnxInferChannelOrder:
 * @GST_ONNX_INFER_CHANNEL_ORDER_RGB: the model wants R, G, B (, A)
 * @GST_ONNX_INFER_CHANNEL_ORDER_BGR: the model wants B, G, R (, A)
 */
typedef enum
{
  GST_ONNX_INFER_CHANNEL_ORDER_RGB,
  GST_ONNX_INFER_CHANNEL_ORDER_BGR,
} GstOnnxInferChannelOrder;

/**
 * GstOnnxInferScaleMode:
 * @GST_ONNX_INFER_SCALE_MODE_STRETCH: the frame (or region) fills the model
 *   input; the aspect ratio is not kept
 * @GST_ONNX_INFER_SCALE_MODE_LETTERBOX: aspect ratio kept, scaled to fit,
 *   centred, the rest padded with #GstOnnxInfer:pad-value
 * @GST_ONNX_INFER_SCALE_MODE_CROP: aspect ratio kept, scaled to cover,
 *   centred, what overflows cut
 * @GST_ONNX_INFER_SCALE_MODE_PAD_RIGHT: scaled to the input height, the
 *   width from the aspect ratio (rounded up, at most the input width),
 *   aligned left, the rest padded with #GstOnnxInfer:pad-value: how
 *   PaddleOCR feeds text lines to its recogniser and direction classifier
 */
typedef enum
{
  GST_ONNX_INFER_SCALE_MODE_STRETCH,
  GST_ONNX_INFER_SCALE_MODE_LETTERBOX,
  GST_ONNX_INFER_SCALE_MODE_CROP,
  GST_ONNX_INFER_SCALE_MODE_PAD_RIGHT,
} GstOnnxInferScaleMode;

/**
 * GstOnnxInferRegion:
 * @GST_ONNX_INFER_REGION_FULL_FRAME: the model runs on the whole frame
 * @GST_ONNX_INFER_REGION_ROI_LIST: the model runs on each region of
 *   interest (#GstVideoRegionOfInterestMeta) of the frame
 */
typedef enum
{
  GST_ONNX_INFER_REGION_FULL_FRAME,
  GST_ONNX_INFER_REGION_ROI_LIST,
} GstOnnxInferRegion;

#define GST_TYPE_ONNX_INFER_SCALE_MODE (gst_onnx_infer_scale_mode_get_type ())
GType gst_onnx_infer_scale_mode_get_type (void);
#define GST_TYPE_ONNX_INFER_REGION (gst_onnx_infer_region_get_type ())
GType gst_onnx_infer_region_get_type (void);

#define GST_TYPE_ONNX_INFER_BACKEND (gst_onnx_infer_backend_get_type ())
GType gst_onnx_infer_backend_get_type (void);
#define GST_TYPE_ONNX_INFER_CHANNEL_ORDER (gst_onnx_infer_channel_order_get_type ())
GType gst_onnx_infer_channel_order_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (onnxinfer);

G_END_DECLS

#endif /* __GST_ONNX_INFER_H__ */
