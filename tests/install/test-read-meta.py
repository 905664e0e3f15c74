#!/usr/bin/python3
"""test-read-meta.py READ_META IMAGE MODEL - runs pipelines/read-meta.py on
data/astronaut.png with BlazeFace front 128x128 and checks what it prints:
the four output tensors with their shapes, and one face with id 1.
Exit 77 (skip, with the reason) without the image, the model or the
introspection data (ONNXINFER_HAVE_GIR=0)."""
import os
import re
import subprocess
import sys

script, image, model = sys.argv[1:4]
for f in (image, model):
    if not os.path.isfile(f):
        print("SKIP: %s missing (tools/fetch-media.sh)" % f)
        sys.exit(77)
if os.environ.get("ONNXINFER_HAVE_GIR") == "0":
    print("SKIP: GObject introspection not built (gobject-introspection, "
          "libgirepository1.0-dev)")
    sys.exit(77)

proc = subprocess.run(["/usr/bin/python3", script, image, model],
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                      universal_newlines=True, timeout=100)
print(proc.stdout)
failures = []
if proc.returncode != 0:
    failures.append("read-meta.py exited %d" % proc.returncode)

tensors = re.findall(r"^    tensor (\S+) (\S+) \[([0-9, ]*)\]: (.*)$",
                     proc.stdout, re.M)
shapes = [(name, dtype, shape) for name, dtype, shape, _ in tensors]
want = [("Identity:0", "float32", "1, 512, 1"),
        ("Identity_1:0", "float32", "1, 384, 1"),
        ("Identity_2:0", "float32", "1, 512, 16"),
        ("Identity_3:0", "float32", "1, 384, 16")]
if shapes != want:
    failures.append("tensors %s, expected %s" % (shapes, want))
for name, _, _, values in tensors:
    if len(values.split()) < 6:
        failures.append("tensor %s: no first values" % name)
if not re.search(r"^frame 0 ", proc.stdout, re.M) or \
        re.search(r"^frame 1 ", proc.stdout, re.M):
    failures.append("expected exactly one frame")
if not re.search(r"^  result infer roi -1 inference 1: 4 tensors$",
                 proc.stdout, re.M):
    failures.append("no whole-frame result of 'infer' with 4 tensors")

rois = re.findall(r"^  roi (-?\d+) (\S+) box x=(\d+) y=(\d+) w=(\d+) h=(\d+)"
                  r" parent (-?\d+) detection ([0-9.]+)$", proc.stdout, re.M)
if len(rois) != 1:
    failures.append("%d ROIs, expected one face" % len(rois))
else:
    rid, label, x, y, w, h, parent, conf = rois[0]
    if (rid, label, parent) != ("1", "face", "-1"):
        failures.append("ROI %s %s parent %s, expected 1 face parent -1"
                        % (rid, label, parent))
    # the astronaut's face, 512x512 image: about (180..260, 60..160)
    if not (100 < int(x) < 260 and 20 < int(y) < 160 and
            40 < int(w) < 200 and 40 < int(h) < 200 and float(conf) > 0.5):
        failures.append("face box %s,%s %sx%s confidence %s not plausible"
                        % (x, y, w, h, conf))
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
