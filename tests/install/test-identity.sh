#!/bin/sh
# test-identity.sh PLUGIN_DIR - what gst-inspect-1.0 says about the plugin and
# each of its elements: the license (Apache 2.0, as LICENSE and the sources
# say), an origin and authors that are no placeholder (no example.org
# address, no made-up URL).
set -eu
GST_PLUGIN_PATH_1_0=$1
GST_REGISTRY_1_0=$(mktemp "${TMPDIR:-/tmp}/onnxinfer-registry.XXXXXX")
trap 'rm -f "$GST_REGISTRY_1_0"' EXIT INT TERM
export GST_PLUGIN_PATH_1_0 GST_REGISTRY_1_0
unset GST_PLUGIN_PATH || true

out=$(gst-inspect-1.0 --plugin onnxinfer)
echo "$out"
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
echo "$out" | grep -Eq '^ *License +Apache 2\.0$' || fail "plugin license is not Apache 2.0"
echo "$out" | grep -Eq '^ *Source module +onnxinfer$' || fail "source module"
for element in $(echo "$out" | sed -n "s/^  \([a-z0-9_-]*\): .*/\1/p"); do
  meta=$(gst-inspect-1.0 "$element" | sed -n '/^Factory Details:/,/^$/p;/^Plugin Details:/,/^$/p')
  echo "$meta" | grep -E '^ *(Author|Origin URL|License)'
  case $meta in *example.org*|*example.com*) fail "$element: placeholder e-mail address" ;; esac
  case $meta in *github.com/onnxinfer/onnxinfer*) fail "$element: placeholder origin URL" ;; esac
  echo "$meta" | grep -Eq '^ *Author +[^ ]' || fail "$element: no author"
done
exit $status
