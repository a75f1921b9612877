// One input, for tests that feed it hostile files.
func.func @forward(%x: tensor<4xf32> {braid.input = "x"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
