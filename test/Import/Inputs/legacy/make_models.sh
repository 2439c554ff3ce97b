#!/bin/sh
# Encodes the hand-written ONNX models of this directory (text format, so
# that a review reads them) into the .onnx files the tests read. Run from
# this directory; needs protoc and ONNX's onnx.proto (Debian's libonnx-dev).
set -e
for text in *.textproto; do
  protoc --encode=onnx.ModelProto -I/usr/include onnx/onnx.proto \
    < "$text" > "${text%.textproto}.onnx"
done
: > empty.onnx
