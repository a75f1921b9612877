#!/bin/sh
# A stand-in for ptxas: FAKE_PTXAS_MODE=spill reports that every kernel
# spills, =fail fails with a message; either way it writes the cubin path.
out=
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out=$2; shift; fi
  shift
done
case "$FAKE_PTXAS_MODE" in
  spill)
    echo "ptxas info    : Function properties for k" >&2
    echo "    24 bytes stack frame, 8 bytes spill stores, 16 bytes spill loads" >&2
    echo "ptxas info    : Used 255 registers, used 0 barriers" >&2
    printf 'cubin' > "$out" ;;
  fail)
    echo "ptxas fatal   : Unresolved extern function 'nowhere'" >&2
    exit 255 ;;
esac
