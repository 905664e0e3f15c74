#!/bin/sh
# check_case.sh NN_RUN CASE_DIR [nn-run args...]: nn-run --check, skipped
# (exit 77) with a reason when the case data is not on this machine.
nn_run=$1; dir=$2; shift 2
if [ ! -f "$dir/model.onnx" ]; then
  echo "skipped: $dir not found (set NN_SHARED_DIR / the onnx_tests option)"
  exit 77
fi
exec "$nn_run" --check "$dir" "$@"
