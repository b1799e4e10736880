package cluster

// PartitionedBoundary is the device time DeepSpeed's PipelineEngine spends, per
// microbatch, around the blocking transfers of one stage boundary when the pipeline's
// tensors are partitioned over the tensor-parallel group (engine.py at DeepSpeed
// 3401d25, 2022-02-28: is_pipe_partitioned and is_grad_partitioned are
// is_model_parallel, so on with tensor parallelism): each device of the sending stage
// sends its 1/t slice of the activation (PartitionedTensor, runtime/utils.py), the
// receiving stage gathers the whole tensor back over its tensor-parallel group before
// its forward pass, and, for the backward pass, the sending stage gathers back both its
// own output (whose data it freed after slicing it: "Clear the large output data, but
// save the computation graph") and the gradient, which the receiving stage slices the
// same way. The transfers themselves are priced as before (the slice's bytes over the
// link between the stages); this is the work on the stages' own streams beside them.
type PartitionedBoundary struct {
	// SenderForward: the sending stage's forward pass slices its output
	// (PartitionedTensor.__init__'s _partition_tensor: narrow(...).clone(), one copy
	// of the slice).
	SenderForward float64
	// ReceiverForward: the receiving stage's forward step clones the received slice
	// (_exec_recv_activations: buffer.clone()), clones its inputs again
	// (_exec_forward_pass: t.clone() for each input), gathers the whole tensor
	// (PartitionedTensor.full()) and, training, slices the gradient of its input
	// before sending it back (_exec_send_grads, which TrainSchedule runs in the same
	// step as the next receive).
	ReceiverForward float64
	// SenderBackward: training, the sending stage's backward pass gathers its output
	// and the received gradient (_exec_backward_pass: part_output.full() and
	// part_grad.full()), two whole tensors.
	SenderBackward float64
}

// PartitionedFullSeconds is the time of one PartitionedTensor.full() (DeepSpeed
// runtime/utils.py at 3401d25) of a tensor of n bytes partitioned over members devices
// joined by link l: torch.zeros of the whole flat buffer (n bytes written), a copy of
// the device's own slice into it (n/members read and written), dist.all_gather of the
// slices over the group (a ring all-gather whose result is n bytes,
// RingAllGatherSeconds), and a clone of the result (n read, n written): three copy
// kernels of n(3 + 2/members) bytes at copyBytesPerSecond, kernelSeconds each, and the
// all-gather. 0 for one member or nothing to gather.
func PartitionedFullSeconds(l Link, n float64, members int, copyBytesPerSecond, kernelSeconds float64) float64 {
	if members <= 1 || n <= 0 {
		return 0
	}
	k := float64(members)
	return copySeconds(n*(3+2/k), 3, copyBytesPerSecond, kernelSeconds) + RingAllGatherSeconds(l, n, members)
}

// DeepSpeedPartitionedBoundary is the PartitionedBoundary of a boundary whose whole
// activation (and gradient) is n bytes, partitioned over members devices joined by
// link l, with copies at copyBytesPerSecond and kernelSeconds a kernel. With s = n /
// members (a slice) and F = PartitionedFullSeconds: the sender's forward one copy of
// s (2s bytes, one kernel); the receiver's forward two copies of s and F, and
// training one more copy of s (the gradient's slice); the sender's backward 2F,
// training only. Zero for one member or nothing to send.
func DeepSpeedPartitionedBoundary(l Link, n float64, members int, copyBytesPerSecond, kernelSeconds float64, training bool) PartitionedBoundary {
	if members <= 1 || n <= 0 {
		return PartitionedBoundary{}
	}
	s := n / float64(members)
	full := PartitionedFullSeconds(l, n, members, copyBytesPerSecond, kernelSeconds)
	b := PartitionedBoundary{
		SenderForward:   copySeconds(2*s, 1, copyBytesPerSecond, kernelSeconds),
		ReceiverForward: copySeconds(4*s, 2, copyBytesPerSecond, kernelSeconds) + full,
	}
	if training {
		b.ReceiverForward += copySeconds(2*s, 1, copyBytesPerSecond, kernelSeconds)
		b.SenderBackward = 2 * full
	}
	return b
}

// copySeconds is kernels copy kernels moving bytes in all at bytesPerSecond, each with
// its launch cost kernelSeconds (memory traffic alone when the rate is unknown: 0).
func copySeconds(bytes, kernels, bytesPerSecond, kernelSeconds float64) float64 {
	t := kernels * kernelSeconds
	if bytesPerSecond > 0 {
		t += bytes / bytesPerSecond
	}
	return t
}
