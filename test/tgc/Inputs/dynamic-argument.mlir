// A dynamically shaped argument (size-overflow.test): refused at load.

func.func @dynamic(%a: tensor<?xf32> {tg.role = "param"}) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
