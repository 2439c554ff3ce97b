# The collectives of a compiled step, counted by phase (fwd before the loss
# op, tg.cross_entropy; loss from it to its gradient, tg.cross_entropy_grad,
# and the loss's own reduction; bwd after), kind and local types:
#   fwd all_reduce tensor<4x16x64xf32> -> tensor<4x16x64xf32>: 4
# sorted after a header line, so that a test pins every line with
# CHECK-NEXT.
/tg\.cross_entropy / { loss = 1 }
/tg\.cross_entropy_grad / { backward = 1 }
match($0, /shard\.(all_reduce|all_gather|reduce_scatter|all_to_all|all_slice)/) {
  kind = substr($0, RSTART + 6, RLENGTH - 6)
  if (kind == "all_slice")
    next
  match($0, /: tensor<[^>]*> -> tensor<[^>]*>/)
  types = substr($0, RSTART + 2, RLENGTH - 2)
  phase = backward ? "bwd" : loss ? "loss" : "fwd"
  if ($0 ~ /shard\.[a-z_]+ %loss /)
    phase = "loss"
  count[phase " " kind " " types]++
}
END {
  n = 0
  for (key in count)
    lines[++n] = key ": " count[key]
  # Insertion sort: awk's own sort is not portable.
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && lines[j - 1] > lines[j]; j--) {
      t = lines[j]; lines[j] = lines[j - 1]; lines[j - 1] = t
    }
  print "collectives:"
  for (i = 1; i <= n; i++)
    print lines[i]
}
