// Package profiler ships pipeplan's PyTorch profiler: a Python script, pipeplan_profile.py,
// that measures a torch.nn.Module's layers on the user's own device for a sample microbatch
// and writes pipeplan's native model JSON (docs/formats.md), with the device it was
// measured on and the microbatch size. `pipeplan profiler` prints it and the page offers it
// for download; the planner then reads its output like any other profile.
//
// # Method
//
// The script follows pytorch_Gpipe's profiler: each layer runs in isolation on
// the inputs it received in one full forward pass, so that its forward and backward times
// and its memory are its own. Times are the median of repeated runs after warm-up, taken
// with CUDA events on a GPU and the wall clock on a CPU. What a layer keeps for its
// backward pass is read from autograd itself through saved-tensor hooks
// (torch.autograd.graph.saved_tensors_hooks), each storage counted once and parameters
// left out; a GPU's peak-memory counter gives the layer's working memory. Tensors are
// followed between layers by identity, so a tensor read by a later layer (a skip
// connection, an attention mask) is carried across the stages between, as pipeplan's
// native format describes.
//
// The script runs with PyTorch 1.13 and 2.x, on CPU and CUDA. Its tests run it with
// Debian's python3-torch on a CPU.
package profiler

import _ "embed"

// FileName is the name the script is saved under, and the module name it is imported as.
const FileName = "pipeplan_profile.py"

// Script is the profiler's source text.
//
//go:embed pipeplan_profile.py
var Script string
