/* GStreamer onnxinfer plugin
 *
 * gsttensordecoder.h: model output tensors -> regions of interest.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef __GST_TENSOR_DECODER_H__
#define __GST_TENSOR_DECODER_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_TENSOR_DECODER (gst_tensor_decoder_get_type ())
G_DECLARE_FINAL_TYPE (GstTensorDecoder, gst_tensor_decoder, GST,
    TENSOR_DECODER, GstBaseTransform)

/**
 * GstTensorDecoderScheme:
 * @GST_TENSOR_DECODER_SCHEME_BLAZEFACE: MediaPipe BlazeFace (front 128x128 or
 *   back 256x256, by the model input size): faces with six keypoints
 * @GST_TENSOR_DECODER_SCHEME_SSD: SSD boxes + class scores (raw with priors,
 *   or post-processed as the TensorFlow Object Detection API exports)
 * @GST_TENSOR_DECODER_SCHEME_YOLOV5: YOLOv5 [1,N,5+C]
 * @GST_TENSOR_DECODER_SCHEME_YOLOV8: YOLOv8 [1,4+C,N]
 * @GST_TENSOR_DECODER_SCHEME_CLASSIFY: classification, top-k classes
 * @GST_TENSOR_DECODER_SCHEME_DBNET: DBNet text detection (PP-OCR det): a
 *   [1,1,H,W] probability map -> rotated text boxes
 * @GST_TENSOR_DECODER_SCHEME_CTC: CTC text recognition (PP-OCR rec): [N,T,C]
 *   probabilities -> UTF-8 text through a dictionary (labels-file)
 * @GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION: text-line direction (PP-OCR's
 *   0/180 degree classifier) [1,2]: turns the region's `rotated-box` by 180
 *   degrees when the line is upside down
 *
 * How the output tensors are read.
 */
typedef enum
{
  GST_TENSOR_DECODER_SCHEME_BLAZEFACE,
  GST_TENSOR_DECODER_SCHEME_SSD,
  GST_TENSOR_DECODER_SCHEME_YOLOV5,
  GST_TENSOR_DECODER_SCHEME_YOLOV8,
  GST_TENSOR_DECODER_SCHEME_CLASSIFY,
  GST_TENSOR_DECODER_SCHEME_DBNET,
  GST_TENSOR_DECODER_SCHEME_CTC,
  GST_TENSOR_DECODER_SCHEME_TEXT_DIRECTION,
} GstTensorDecoderScheme;

/**
 * GstTensorDecoderScaleMode:
 * @GST_TENSOR_DECODER_SCALE_MODE_STRETCH: the frame was scaled to the model
 *   size without keeping its aspect ratio (plain `videoscale`)
 * @GST_TENSOR_DECODER_SCALE_MODE_LETTERBOX: scaled keeping the aspect ratio,
 *   centered, with borders (`videoscale add-borders=true` and
 *   `pixel-aspect-ratio=1/1` in the caps after it)
 * @GST_TENSOR_DECODER_SCALE_MODE_CROP: cropped to the model's aspect ratio,
 *   centered, then scaled (`aspectratiocrop ! videoscale`)
 *
 * How the frame was fitted into the model input, so boxes can be mapped back
 * when the tensors carry no geometry (#GstOnnxTensorGeometry); with one, how
 * the frame `onnxinfer` saw was fitted from the decorated frame.
 */
typedef enum
{
  GST_TENSOR_DECODER_SCALE_MODE_STRETCH,
  GST_TENSOR_DECODER_SCALE_MODE_LETTERBOX,
  GST_TENSOR_DECODER_SCALE_MODE_CROP,
} GstTensorDecoderScaleMode;

/**
 * GstTensorDecoderBoxFormat:
 * @GST_TENSOR_DECODER_BOX_FORMAT_YXYX: ymin, xmin, ymax, xmax (TensorFlow)
 * @GST_TENSOR_DECODER_BOX_FORMAT_XYXY: xmin, ymin, xmax, ymax
 * @GST_TENSOR_DECODER_BOX_FORMAT_CXCYWH: center x, center y, width, height
 * @GST_TENSOR_DECODER_BOX_FORMAT_CYCXHW: center y, center x, height, width
 *
 * Layout of the four box values of an SSD model.
 */
typedef enum
{
  GST_TENSOR_DECODER_BOX_FORMAT_YXYX,
  GST_TENSOR_DECODER_BOX_FORMAT_XYXY,
  GST_TENSOR_DECODER_BOX_FORMAT_CXCYWH,
  GST_TENSOR_DECODER_BOX_FORMAT_CYCXHW,
} GstTensorDecoderBoxFormat;

/**
 * GstTensorDecoderActivation:
 * @GST_TENSOR_DECODER_ACTIVATION_AUTO: the scheme's default
 * @GST_TENSOR_DECODER_ACTIVATION_NONE: scores are probabilities already
 * @GST_TENSOR_DECODER_ACTIVATION_SIGMOID: scores are logits, one per class
 * @GST_TENSOR_DECODER_ACTIVATION_SOFTMAX: scores are logits over the classes
 *
 * What turns the class scores into probabilities.
 */
typedef enum
{
  GST_TENSOR_DECODER_ACTIVATION_AUTO,
  GST_TENSOR_DECODER_ACTIVATION_NONE,
  GST_TENSOR_DECODER_ACTIVATION_SIGMOID,
  GST_TENSOR_DECODER_ACTIVATION_SOFTMAX,
} GstTensorDecoderActivation;

#define GST_TYPE_TENSOR_DECODER_SCHEME (gst_tensor_decoder_scheme_get_type ())
GType gst_tensor_decoder_scheme_get_type (void);
#define GST_TYPE_TENSOR_DECODER_SCALE_MODE (gst_tensor_decoder_scale_mode_get_type ())
GType gst_tensor_decoder_scale_mode_get_type (void);
#define GST_TYPE_TENSOR_DECODER_BOX_FORMAT (gst_tensor_decoder_box_format_get_type ())
GType gst_tensor_decoder_box_format_get_type (void);
#define GST_TYPE_TENSOR_DECODER_ACTIVATION (gst_tensor_decoder_activation_get_type ())
GType gst_tensor_decoder_activation_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (tensordecoder);

G_END_DECLS

#endif /* __GST_TENSOR_DECODER_H__ */
