#!/bin/sh
# Fails if a program built for the emulated device still takes a cuBLASLt or cuDNN function from
# the real libraries (a function the runtime calls that emulated_cublaslt.cc / emulated_cudnn.cc do
# not define); cudnnGetErrorString, which only formats an error, may come from libcudnn.
# Usage: check_linked_libraries.sh PROGRAM...
status=0
for program in "$@"; do
  left=$(nm -D --undefined-only "$program" | grep -E ' (cudnn|cublasLt)' | grep -v ' cudnnGetErrorString')
  if [ -n "$left" ]; then
    echo "error: $program takes these from the real libraries, not the emulated ones:"
    echo "$left"
    status=1
  fi
done
exit $status
