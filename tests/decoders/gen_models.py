#!/usr/bin/env python3
"""Small ONNX models whose outputs the decoder tests know in advance.

Each model is the tail of a real detector or classifier (the part that
produces the tensors the decoders read), so the tensors come out of the
runtime exactly as they would from a full model: same ops, same layouts,
same output names.  test_models.c feeds chosen inputs and checks the
decoded detections.

  ssd_raw.onnx      loc [1,8,4] -> boxes (Identity), conf [1,8,3] -> scores
                    (Softmax over classes): raw SSD head with priors.
  ssd_post.onnx     raw [1,5,6] -> detection_boxes [1,5,4], detection_scores
                    [1,5], detection_classes [1,5], num_detections [1]
                    (TF Object Detection API layout, NMS already done).
  yolov5.onnx       head [1,32,8] (cx,cy,w,h in pixels, objectness and 3
                    class logits) -> output0 [1,32,8] with sigmoid applied
                    to columns 4.. (what the exported Detect layer does).
  yolov8.onnx       head [1,32,7] (cx,cy,w,h, 3 class logits) -> output0
                    [1,7,32]: sigmoid on the classes, transposed.
  classify.onnx     images [1,3,4,4] -> GlobalAveragePool -> Flatten ->
                    Gemm (3 -> 4 classes) -> Softmax -> prob [1,4].

Usage: gen_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid('', 13)]


def save(graph, path):
    model = helper.make_model(graph, opset_imports=OPSET, producer_name='onnxinfer-tests')
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const_i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def ssd_raw(path):
    nodes = [
        helper.make_node('Identity', ['loc'], ['boxes']),
        helper.make_node('Softmax', ['conf'], ['scores'], axis=2),
    ]
    g = helper.make_graph(nodes, 'ssd_raw', [vi('loc', [1, 8, 4]), vi('conf', [1, 8, 3])],
                          [vi('boxes', [1, 8, 4]), vi('scores', [1, 8, 3])])
    save(g, path)


def ssd_post(path):
    # raw[..., 0:4] boxes (ymin,xmin,ymax,xmax), [4] score, [5] class;
    # num_detections = count of rows with score > 0 (padding rows are 0).
    inits = [const_i64('s0', [0]), const_i64('s4', [4]), const_i64('s5', [5]),
             const_i64('s6', [6]), const_i64('ax2', [2]), const_i64('ax1', [1]),
             numpy_helper.from_array(np.array(0.0, dtype=np.float32), 'zero')]
    nodes = [
        helper.make_node('Slice', ['raw', 's0', 's4', 'ax2'], ['detection_boxes']),
        helper.make_node('Slice', ['raw', 's4', 's5', 'ax2'], ['score3']),
        helper.make_node('Squeeze', ['score3', 'ax2'], ['detection_scores']),
        helper.make_node('Slice', ['raw', 's5', 's6', 'ax2'], ['class3']),
        helper.make_node('Squeeze', ['class3', 'ax2'], ['detection_classes']),
        helper.make_node('Greater', ['detection_scores', 'zero'], ['valid']),
        helper.make_node('Cast', ['valid'], ['validf'], to=TensorProto.FLOAT),
        helper.make_node('ReduceSum', ['validf', 'ax1'], ['num_detections'], keepdims=0),
    ]
    g = helper.make_graph(nodes, 'ssd_post', [vi('raw', [1, 5, 6])],
                          [vi('detection_boxes', [1, 5, 4]), vi('detection_scores', [1, 5]),
                           vi('detection_classes', [1, 5]), vi('num_detections', [1])],
                          initializer=inits)
    save(g, path)


def yolov5(path):
    inits = [const_i64('s0', [0]), const_i64('s4', [4]), const_i64('s8', [8]),
             const_i64('ax2', [2])]
    nodes = [
        helper.make_node('Slice', ['head', 's0', 's4', 'ax2'], ['xywh']),
        helper.make_node('Slice', ['head', 's4', 's8', 'ax2'], ['logits']),
        helper.make_node('Sigmoid', ['logits'], ['probs']),
        helper.make_node('Concat', ['xywh', 'probs'], ['output0'], axis=2),
    ]
    g = helper.make_graph(nodes, 'yolov5_tail', [vi('head', [1, 32, 8])],
                          [vi('output0', [1, 32, 8])], initializer=inits)
    save(g, path)


def yolov8(path):
    inits = [const_i64('s0', [0]), const_i64('s4', [4]), const_i64('s7', [7]),
             const_i64('ax2', [2])]
    nodes = [
        helper.make_node('Slice', ['head', 's0', 's4', 'ax2'], ['xywh']),
        helper.make_node('Slice', ['head', 's4', 's7', 'ax2'], ['logits']),
        helper.make_node('Sigmoid', ['logits'], ['probs']),
        helper.make_node('Concat', ['xywh', 'probs'], ['rows'], axis=2),
        helper.make_node('Transpose', ['rows'], ['output0'], perm=[0, 2, 1]),
    ]
    g = helper.make_graph(nodes, 'yolov8_tail', [vi('head', [1, 32, 7])],
                          [vi('output0', [1, 7, 32])], initializer=inits)
    save(g, path)


def classify(path):
    # logits = W . channel_means + b with W picking R, G, B and (R+G+B)/3 - 0.5
    w = np.array([[4, 0, 0], [0, 4, 0], [0, 0, 4], [1.33, 1.33, 1.33]], dtype=np.float32)
    b = np.array([0, 0, 0, -0.5], dtype=np.float32)
    inits = [numpy_helper.from_array(w, 'W'), numpy_helper.from_array(b, 'B')]
    nodes = [
        helper.make_node('GlobalAveragePool', ['images'], ['pooled']),
        helper.make_node('Flatten', ['pooled'], ['flat'], axis=1),
        helper.make_node('Gemm', ['flat', 'W', 'B'], ['logits'], transB=1),
        helper.make_node('Softmax', ['logits'], ['prob'], axis=1),
    ]
    g = helper.make_graph(nodes, 'classify_tail', [vi('images', [1, 3, 4, 4])],
                          [vi('prob', [1, 4])], initializer=inits)
    save(g, path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else '.'
    os.makedirs(out, exist_ok=True)
    ssd_raw(os.path.join(out, 'ssd_raw.onnx'))
    ssd_post(os.path.join(out, 'ssd_post.onnx'))
    yolov5(os.path.join(out, 'yolov5.onnx'))
    yolov8(os.path.join(out, 'yolov8.onnx'))
    classify(os.path.join(out, 'classify.onnx'))


if __name__ == '__main__':
    main()
