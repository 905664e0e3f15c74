#!/bin/sh
# Install the Debian 12 packages that building, testing and the demo need.
# Idempotent: apt-get runs only when something is missing.
set -eu

PKGS="meson ninja-build pkg-config gcc clang libclang-rt-14-dev
libprotobuf-c-dev protobuf-c-compiler
libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev gstreamer1.0-tools
gstreamer1.0-plugins-base gstreamer1.0-plugins-good
libcairo2-dev libpango1.0-dev
libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
python3 python3-onnx python3-numpy valgrind nodejs npm ca-certificates
gstreamer1.0-libav fonts-dejavu-core gstreamer1.0-x fonts-wqy-microhei
gobject-introspection libgirepository1.0-dev gir1.2-gstreamer-1.0
gir1.2-gst-plugins-base-1.0 python3-gi"

missing=""
# node/npm may come from elsewhere (e.g. NodeSource); only ask Debian when absent
command -v npm >/dev/null 2>&1 && PKGS=$(echo "$PKGS" | tr ' ' '\n' | grep -vx -e nodejs -e npm)
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
