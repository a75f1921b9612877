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
