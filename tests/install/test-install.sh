#!/bin/sh
# test-install.sh BUILD_DIR PREFIX LIBDIR PLUGINDIR CONSUMER.c
#
# What a user of an installed onnxinfer meets: `meson install --destdir` into
# a temporary directory, then an application compiled and linked against the
# installed header and reader library through `pkg-config --cflags --libs
# gstreamer-onnxinfer-1.0` alone, with -O2 -Wall -Wextra -Werror (and C++
# the same way when a C++ compiler is there), run with GStreamer pointed at
# the installed plugin; it reads tensors from a real pipeline (consumer.c).
# The installed typelib is loaded from Python too when introspection was
# built.  Exit 77 (skip) without /usr/bin/python3 + onnx, which write the
# model.  CC: the C compiler (default cc); CXX: the C++ one (default c++).
set -eu

build=$1 prefix=$2 libdir=$3 plugindir=$4 consumer_src=$5
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
case $plugindir in /*) ;; *) plugindir=$prefix/$plugindir ;; esac

py=/usr/bin/python3
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "SKIP: $py with the onnx module (python3-onnx) is needed to write the test model"
  exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/onnxinfer-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dest=$tmp/dest

echo "== meson install --destdir $dest"
meson install -C "$build" --no-rebuild --destdir "$dest" --quiet

fail() { echo "FAIL: $*" >&2; exit 1; }
for f in "$dest$plugindir/libgstonnxinfer.so" \
         "$dest$prefix/include/gstreamer-1.0/gst/onnxinfer/gstonnxtensormeta.h" \
         "$dest$prefix/include/gstreamer-1.0/gst/onnxinfer/gstonnxinfermeta.h" \
         "$dest$libdir/pkgconfig/gstreamer-onnxinfer-1.0.pc"; do
  [ -f "$f" ] || fail "not installed: $f"
  echo "installed: ${f#"$dest"}"
done

# pkg-config finds the installed .pc file; the file is relocatable (its
# prefix is ${pcfiledir}/...), so its flags point into the DESTDIR.
PKG_CONFIG_PATH=$dest$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs gstreamer-onnxinfer-1.0)
echo "pkg-config --cflags --libs gstreamer-onnxinfer-1.0: $flags"
want_inc=$(cd "$dest$prefix/include/gstreamer-1.0" && pwd -P)
found_inc=
for f in $flags; do
  case $f in -I*) [ "$(cd "${f#-I}" 2>/dev/null && pwd -P)" = "$want_inc" ] && found_inc=1 ;; esac
done
[ -n "$found_inc" ] || fail "Cflags do not name the installed include directory $want_inc"
[ "$(pkg-config --variable=pluginsdir gstreamer-onnxinfer-1.0)" = "$plugindir" ] ||
  fail "pluginsdir variable is not $plugindir"

# The consumer, copied away from the source tree so that nothing but the
# installed headers can be found.
cp "$consumer_src" "$tmp/consumer.c"
echo "== ${CC:-cc} -O2 -Wall -Wextra -Werror"
# shellcheck disable=SC2086
${CC:-cc} -O2 -Wall -Wextra -Werror -o "$tmp/consumer" "$tmp/consumer.c" $flags
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
  # C++ applications include the same headers.
  printf '#include <gst/onnxinfer/gstonnxtensormeta.h>\n#include <gst/onnxinfer/gstonnxinfermeta.h>\nint main () { return GST_ONNX_TENSOR_META_API_TYPE == 0 ? 0 : 1; }\n' > "$tmp/cxx.cc"
  echo "== ${CXX:-c++} -O2 -Wall -Wextra -Werror"
  # shellcheck disable=SC2086
  ${CXX:-c++} -O2 -Wall -Wextra -Werror -o "$tmp/cxx" "$tmp/cxx.cc" $flags
fi

echo "== model"
"$py" - "$tmp/mean.onnx" <<'EOF'
import sys
from onnx import TensorProto, helper, save
g = helper.make_graph(
    [helper.make_node("GlobalAveragePool", ["x"], ["mean"]),
     helper.make_node("Flatten", ["mean"], ["flat"], axis=1)],
    "mean_colour",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
    [helper.make_tensor_value_info("mean", TensorProto.FLOAT, [1, 3, 1, 1]),
     helper.make_tensor_value_info("flat", TensorProto.FLOAT, [1, 3])])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
EOF

# GStreamer: the installed plugin (a private registry, so nothing cached
# elsewhere answers), the installed reader library.
GST_PLUGIN_PATH_1_0=$dest$plugindir
GST_REGISTRY_1_0=$tmp/registry.bin
LD_LIBRARY_PATH=$dest$libdir     # not the build tree, which meson test adds
export GST_PLUGIN_PATH_1_0 GST_REGISTRY_1_0 LD_LIBRARY_PATH
unset GST_PLUGIN_PATH || true
echo "== consumer"
"$tmp/consumer" "$tmp/mean.onnx" | tee "$tmp/consumer.out"
grep -q "^plugin: $dest$plugindir/libgstonnxinfer.so " "$tmp/consumer.out" ||
  fail "the consumer did not load the installed plugin"

typelib_dir=$dest$libdir/girepository-1.0
if [ -f "$typelib_dir/GstOnnxInfer-1.0.typelib" ]; then
  echo "== python3-gi with the installed typelib"
  GI_TYPELIB_PATH=$typelib_dir "$py" - "$tmp/mean.onnx" <<'EOF'
import sys
import gi
gi.require_version("Gst", "1.0")
gi.require_version("GstOnnxInfer", "1.0")
from gi.repository import Gst, GstOnnxInfer
Gst.init(None)
p = Gst.parse_launch(
    "videotestsrc num-buffers=1 pattern=solid-color foreground-color=0xff336699 "
    "! video/x-raw,format=RGB,width=16,height=16 ! onnxinfer name=infer "
    "backend=cpu model-location=\"%s\" ! fakesink name=sink" % sys.argv[1])
seen = []
def probe(pad, info):
    r = GstOnnxInfer.buffer_get_result(info.get_buffer(), "infer", -1)
    seen.append([(t.get_name(), list(t.get_dims()), t.get_data_type(),
                  len(t.get_data().get_data())) for t in r.get_tensors()])
    return Gst.PadProbeReturn.OK
p.get_by_name("sink").get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, probe)
p.set_state(Gst.State.PLAYING)
msg = p.get_bus().timed_pop_filtered(60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
p.set_state(Gst.State.NULL)
print("python:", seen)
assert msg is not None and msg.type == Gst.MessageType.EOS, msg
assert seen == [[("mean", [1, 3, 1, 1], "float32", 12), ("flat", [1, 3], "float32", 12)]], seen
EOF
fi
echo "OK"
