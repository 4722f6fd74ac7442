#!/usr/bin/env bash
# Writes the small Chakra execution trace that configs/chakra_diamond.yaml replays:
# OUT_PREFIX.<rank>.et for RANKS ranks (default configs/traces/diamond, 4 ranks). Each rank:
#   A compute 5 us -> { B all-reduce 1 MiB, C compute 3 us } -> D all-reduce 256 KiB (a
#   diamond) -> E send 64 KiB to rank+1, F receive 64 KiB from rank-1 -> G compute 2 us
#   after F.
# Messages are encoded by protoc from text format against fabrics/workloads/chakra_et.proto
# and written length-delimited (a varint length before each), as Chakra's tools write them.
#   scripts/make_chakra_trace.sh [OUT_PREFIX] [RANKS]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-configs/traces/diamond}
ranks=${2:-4}
command -v protoc >/dev/null || { echo "make_chakra_trace: protoc not found (apt-get install protobuf-compiler)" >&2; exit 2; }

varint() {  # the length prefix
  local n=$1 out=""
  while [ "$n" -ge 128 ]; do out+=$(printf '\\%03o' $(((n & 127) | 128))); n=$((n >> 7)); done
  out+=$(printf '\\%03o' "$n")
  printf "$out"
}
msg() {  # msg TYPE TEXT: one length-delimited message
  local tmp; tmp=$(mktemp)
  printf '%s' "$2" | protoc --encode="fabricsim.chakra.$1" -I fabrics/workloads chakra_et.proto >"$tmp"
  varint "$(stat -c %s "$tmp")"
  cat "$tmp"
  rm -f "$tmp"
}
int_attr() { printf 'attr { name: "%s" int64_val: %s } ' "$1" "$2"; }

mkdir -p "$(dirname "$prefix")"
for ((r = 0; r < ranks; r++)); do
  next=$(((r + 1) % ranks)); prev=$(((r + ranks - 1) % ranks))
  {
    msg GlobalMetadata 'version: "0.0.4"'
    msg Node 'id: 1 name: "A" type: COMP_NODE duration_micros: 5'
    msg Node "id: 2 name: \"B\" type: COMM_COLL_NODE data_deps: 1 $(int_attr comm_type 0) $(int_attr comm_size 1048576)"
    msg Node 'id: 3 name: "C" type: COMP_NODE data_deps: 1 duration_micros: 3'
    msg Node "id: 4 name: \"D\" type: COMM_COLL_NODE data_deps: 2 data_deps: 3 $(int_attr comm_type 0) $(int_attr comm_size 262144)"
    msg Node "id: 5 name: \"E\" type: COMM_SEND_NODE ctrl_deps: 4 $(int_attr comm_dst $next) $(int_attr comm_size 65536) $(int_attr comm_tag 7)"
    msg Node "id: 6 name: \"F\" type: COMM_RECV_NODE ctrl_deps: 4 $(int_attr comm_src $prev) $(int_attr comm_size 65536) $(int_attr comm_tag 7)"
    msg Node 'id: 7 name: "G" type: COMP_NODE data_deps: 6 duration_micros: 2'
  } >"$prefix.$r.et"
done
echo "make_chakra_trace: wrote $prefix.{0..$((ranks - 1))}.et"
