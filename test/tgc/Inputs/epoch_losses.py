"""Reads `tgc train --log-every 1` output on stdin and checks that every
epoch of STEPS steps sums to the same loss (each visits every example once;
run with a learning rate of 0) while its steps differ (the batches are
other examples), and that the epochs are not all in one order:
epoch_losses.py STEPS."""
import re
import sys

steps = int(sys.argv[1])
losses = [float(x) for x in re.findall(r"^step \d+: loss (\S+)$",
                                       sys.stdin.read(), re.M)]
epochs = [sum(losses[i:i + steps]) for i in range(0, len(losses), steps)]
if len(epochs) < 2 or any(abs(e - epochs[0]) > 1e-5 * abs(epochs[0])
                          for e in epochs):
    sys.exit("epochs sum to different losses: %s" % epochs)
if len(set(losses[:steps])) < steps:
    sys.exit("the steps of an epoch have equal losses: %s" % losses)
if all(loss == losses[i % steps] for i, loss in enumerate(losses)):
    sys.exit("every epoch takes the same batches: %s" % losses)
print("%d epochs of %d steps, each summing to %.6f" %
      (len(epochs), steps, epochs[0]))
