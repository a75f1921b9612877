// RUN: braid-opt %s --braid-profile-ops --split-input-file --verify-diagnostics

// A module is profiled once: its ops already carry their timers.
// expected-error @+1 {{braid-profile-ops: the module is already profiled ('braid.profiled_ops' is set)}}
module attributes {braid.profiled_ops = ["linear"]} {
}

// -----

// The timers' names are the runtime's.
// expected-error @+1 {{braid-profile-ops: the module already defines '@braidrt_op_begin'}}
module {
  func.func private @braidrt_op_begin(i32)
}

// -----

// A per-rank program's function is one block; the last timer brackets its
// return.
// expected-error @+1 {{braid-profile-ops needs functions of one block}}
func.func @branches(%c: i1) {
  cf.cond_br %c, ^a, ^b
^a:
  return
^b:
  return
}
