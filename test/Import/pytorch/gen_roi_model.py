#!/usr/bin/python3
"""A detection head pooling regions with torchvision's RoIAlign, exported by
torch.onnx.export, for test/Import/pytorch-roi.test; the layout and the
references are gen_models.py's (see its docstring).

  roi-aligned, roi-unaligned
        a 3x3 convolution over two feature maps, the regions (boxes given
        at run time, as a region proposal network's; image indices in
        their first column, as torchvision's) pooled to 4 x 4 by
        torchvision.ops.roi_align at a spatial scale of 1/2 with
        sampling_ratio=2 (torchvision's MultiScaleRoIAlign), then a linear
        classifier and a cross-entropy. The gradient reaches the
        convolution through RoIAlign's bilinear weights (boxes partly
        outside the map, one smaller than a bin).

torchvision 0.14 exports roi_align with RoiAlign-10's attributes, which
mean output_half_pixel at opset 10 to 15 and half_pixel from opset 16 (its
default changed): unaligned (Mask R-CNN's) is exported at opset 12,
aligned (Detectron2's) at opset 16, each the way it means what PyTorch
computes. Run with Debian's python3-torch and python3-torchvision (PyTorch 1.13,
torchvision 0.14, CPU) and onnx from this directory:

    python3 gen_roi_model.py
"""
import torch
import torch.nn as nn
from torchvision.ops import roi_align

from gen_models import export, save_reference


class RoiHead(nn.Module):
    CLASSES = 3

    def __init__(self, aligned):
        super().__init__()
        self.aligned = aligned
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, self.CLASSES)

    def forward(self, images, boxes, labels):
        features = torch.relu(self.conv(images))
        pooled = roi_align(features, boxes, (4, 4), spatial_scale=0.5,
                           sampling_ratio=2, aligned=self.aligned)
        logits = self.fc(pooled.flatten(1))
        return nn.functional.cross_entropy(logits, labels), logits


if __name__ == "__main__":
    torch.manual_seed(7)
    boxes = torch.tensor([[0, 1.0, 2.0, 17.0, 13.0],
                          [1, 4.0, 4.0, 9.5, 7.0],
                          [1, -3.0, 10.0, 8.0, 30.0],
                          [0, 6.0, 6.0, 6.5, 6.2]])
    inputs = {"images": torch.randn(2, 2, 8, 10), "boxes": boxes,
              "labels": torch.tensor([0, 2, 1, 2])}
    for name, aligned, opset in [("roi-unaligned", False, 12),
                                 ("roi-aligned", True, 16)]:
        torch.manual_seed(0)
        model = RoiHead(aligned)
        save_reference(name, model, inputs)
        export(name, model, inputs, opset, False, training=True)
