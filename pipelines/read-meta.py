#!/usr/bin/python3
"""read-meta.py IMAGE MODEL - read onnxinfer's results from Python.

Runs

    filesrc location=IMAGE ! decodebin ! onnxinfer model-location=MODEL
      [! tensordecoder scheme=SCHEME] ! appsink

and prints, for each frame, each output tensor's name, data type, shape and
first values (read with the GstOnnxInfer-1.0 introspection library,
libgstonnxinfermeta-1.0), and each region of interest's id, label, box and
confidence (GstVideo's GstVideoRegionOfInterestMeta, listed with
GstOnnxInfer.buffer_get_roi_ids).

IMAGE may be a video file too (every frame is printed; --frames limits it).
With a BlazeFace model (file name with "face_detection" or "blazeface") the
scheme, the normalisation and the scaling default to BlazeFace's: --scheme
blazeface --mean 127.5 --std 127.5 --scale-mode letterbox.

Needs Debian's python3-gi and gir1.2-gst-plugins-base-1.0 (hence
/usr/bin/python3, not a virtualenv's python).  Finds the plugin and the
typelib installed (meson install; GI_TYPELIB_PATH and LD_LIBRARY_PATH for a
prefix other than /usr), or in a build directory of this source tree: the
one named by ONNXINFER_BUILD_DIR, else the newest build*/ holding the
typelib.
"""
import argparse
import glob
import os
import struct
import sys

import gi

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)
TYPELIB = "GstOnnxInfer-1.0.typelib"

# struct format per onnxinfer data type name
FORMATS = {"float32": "f", "float64": "d", "float16": "e", "uint8": "B",
           "int8": "b", "uint16": "H", "int16": "h", "uint32": "I",
           "int32": "i", "uint64": "Q", "int64": "q", "bool": "?",
           "bfloat16": "H"}


def source_build_dir():
    """The build directory to use from the source tree, or None."""
    build = os.environ.get("ONNXINFER_BUILD_DIR")
    if build:
        return os.path.abspath(build)
    try:
        gi.require_version("GstOnnxInfer", "1.0")
        return None                     # installed: use that
    except ValueError:
        pass
    found = glob.glob(os.path.join(SOURCE_ROOT, "build*", "plugin", TYPELIB))
    if not found:
        return None
    return os.path.dirname(os.path.dirname(max(found, key=os.path.getmtime)))


def setup_build_dir(build):
    """Point GStreamer and GObject-introspection at a build directory (before
    Gst.init and before importing GstOnnxInfer)."""
    plugin_dir = os.path.join(build, "plugin", "gstreamer-1.0")
    meta_dir = os.path.join(build, "plugin")
    if not os.path.isfile(os.path.join(meta_dir, TYPELIB)):
        sys.exit("read-meta.py: %s: no %s (introspection not built? needs "
                 "gobject-introspection and libgirepository1.0-dev)"
                 % (meta_dir, TYPELIB))
    path = os.environ.get("GST_PLUGIN_PATH")
    os.environ["GST_PLUGIN_PATH"] = plugin_dir + (":" + path if path else "")
    gi.require_version("GIRepository", "2.0")
    from gi.repository import GIRepository
    GIRepository.Repository.prepend_search_path(meta_dir)
    GIRepository.Repository.prepend_library_path(meta_dir)


def first_values(tensor, count):
    dtype = tensor.get_data_type()
    fmt = FORMATS.get(dtype)
    if fmt is None or count <= 0:
        return ""
    data = tensor.get_data().get_data()  # one copy into a Python bytes
    size = struct.calcsize(fmt)
    n = min(count, len(data) // size)
    values = struct.unpack_from("=%d%s" % (n, fmt), data)
    if dtype == "bfloat16":
        values = [struct.unpack("=f", struct.pack("=I", v << 16))[0]
                  for v in values]
    text = " ".join("%.6g" % v if isinstance(v, float) else str(v)
                    for v in values)
    if tensor.get_n_elements() > n:
        text += " ..."
    return text


def print_frame(index, buf, args, GLib, GstVideo, GstOnnxInfer):
    pts = "none"
    if buf.pts != 2**64 - 1:           # GST_CLOCK_TIME_NONE
        sec, ns = divmod(buf.pts, 10**9)
        pts = "%d:%02d:%02d.%09d" % (sec // 3600, sec // 60 % 60, sec % 60, ns)
    print("frame %d pts %s" % (index, pts))
    for result in GstOnnxInfer.buffer_get_results(buf):
        print("  result %s roi %d inference %d%s: %d tensors"
              % (result.get_model_id(), result.get_roi_id(),
                 result.get_inference_id(),
                 " (reused)" if result.is_reused() else "",
                 result.get_n_tensors()))
        for t in result.get_tensors():
            print("    tensor %s %s [%s]: %s"
                  % (t.get_name(), t.get_data_type(),
                     ", ".join(str(d) for d in t.get_dims()),
                     first_values(t, args.values)))
    for roi_id in GstOnnxInfer.buffer_get_roi_ids(buf) or []:
        roi = GstVideo.buffer_get_video_region_of_interest_meta_id(buf, roi_id)
        if roi is None:
            continue
        extra = ""
        for name in ("detection", "classification"):
            s = roi.get_param(name)
            if s is not None:
                ok, conf = s.get_double("confidence")
                if ok:
                    extra += " %s %.4f" % (name, conf)
        print("  roi %d %s box x=%d y=%d w=%d h=%d parent %d%s"
              % (roi.id, GLib.quark_to_string(roi.roi_type), roi.x, roi.y,
                 roi.w, roi.h, roi.parent_id, extra))


def main():
    ap = argparse.ArgumentParser(
        description="Print onnxinfer's tensors and regions of interest.")
    ap.add_argument("image", help="image or video file")
    ap.add_argument("model", help="ONNX model")
    ap.add_argument("--scheme", default="auto",
                    help="tensordecoder scheme (blazeface, ssd, yolov5, "
                    "yolov8, classify), none, or auto (blazeface for a "
                    "BlazeFace model, else none)")
    ap.add_argument("--mean", help="onnxinfer input-mean, e.g. 127.5")
    ap.add_argument("--std", help="onnxinfer input-std, e.g. 127.5")
    ap.add_argument("--scale-mode", help="stretch, letterbox or crop")
    ap.add_argument("--backend", default="cpu", help="cpu, vulkan or auto")
    ap.add_argument("--frames", type=int, default=0,
                    help="stop after this many frames (0: all)")
    ap.add_argument("--values", type=int, default=6,
                    help="first values to print per tensor")
    args = ap.parse_args()
    for f in (args.image, args.model):
        if not os.path.isfile(f):
            sys.exit("read-meta.py: %s: no such file" % f)

    base = os.path.basename(args.model).lower()
    blazeface = "face_detection" in base or "blazeface" in base
    if args.scheme == "auto":
        args.scheme = "blazeface" if blazeface else "none"
    if args.scheme == "blazeface":
        args.mean = args.mean or "127.5"
        args.std = args.std or "127.5"
        args.scale_mode = args.scale_mode or "letterbox"

    build = source_build_dir()
    if build:
        setup_build_dir(build)
    gi.require_version("Gst", "1.0")
    gi.require_version("GstApp", "1.0")
    gi.require_version("GstVideo", "1.0")
    try:
        gi.require_version("GstOnnxInfer", "1.0")
    except ValueError:
        sys.exit("read-meta.py: GstOnnxInfer-1.0 not found: install onnxinfer "
                 "(meson install; set GI_TYPELIB_PATH and LD_LIBRARY_PATH for "
                 "a prefix other than /usr), or set ONNXINFER_BUILD_DIR")
    from gi.repository import GLib, Gst, GstApp, GstOnnxInfer, GstVideo

    Gst.init(None)
    if Gst.ElementFactory.find("onnxinfer") is None:
        sys.exit("read-meta.py: no onnxinfer element (GST_PLUGIN_PATH?)")

    def quote(s):
        return '"%s"' % s.replace("\\", "\\\\").replace('"', '\\"')

    props = ["model-location=%s" % quote(args.model),
             "backend=%s" % args.backend]
    if args.mean:
        props.append("input-mean=%s" % quote("<%s>" % args.mean))
    if args.std:
        props.append("input-std=%s" % quote("<%s>" % args.std))
    if args.scale_mode:
        props.append("scale-mode=%s" % args.scale_mode)
    decoder = ""
    if args.scheme != "none":
        decoder = "tensordecoder scheme=%s ! " % args.scheme
    desc = ("filesrc location=%s ! decodebin ! onnxinfer name=infer %s ! %s"
            "appsink name=sink sync=false max-buffers=4" % (quote(args.image),
                                              " ".join(props), decoder))
    pipeline = Gst.parse_launch(desc)
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    if pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
        pass                            # the error is on the bus
    frames = 0
    status = 0
    while args.frames == 0 or frames < args.frames:
        sample = sink.try_pull_sample(30 * Gst.SECOND)
        if sample is None:
            break
        print_frame(frames, sample.get_buffer(), args, GLib, GstVideo,
                    GstOnnxInfer)
        frames += 1
    msg = bus.pop_filtered(Gst.MessageType.ERROR)
    if msg is not None:
        err, dbg = msg.parse_error()
        print("read-meta.py: error: %s (%s)" % (err.message, dbg),
              file=sys.stderr)
        status = 1
    elif frames == 0:
        print("read-meta.py: no frame", file=sys.stderr)
        status = 1
    pipeline.set_state(Gst.State.NULL)
    return status


if __name__ == "__main__":
    sys.exit(main())
