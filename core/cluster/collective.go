package cluster

// Collectives other than the all-reduce, in the same alpha-beta form (Colossal-AUTO's
// T = alpha + beta x n; Patarasuk and Yuan 2009 for the ring). NCCL's performance notes
// ("NCCL tests: performance", the bus bandwidth) give the bytes each rank moves per byte
// of the operation's size n: 2(k-1)/k for a ring all-reduce, (k-1)/k for an all-gather
// or a reduce-scatter of n bytes in all (n/k per rank before the gather or after the
// scatter). An all-to-all sends (k-1)/k of each rank's n bytes, k-1 messages.

// RingAllGatherSeconds is the time of a ring all-gather among members devices over link
// l whose result is n bytes on every device (each holds n/members before it):
// (k-1)/k * n / bandwidth + (k-1) * latency. 0 for one member or nothing to gather.
func RingAllGatherSeconds(l Link, n float64, members int) float64 {
	return halfRing(l, n, members)
}

// RingReduceScatterSeconds is the time of a ring reduce-scatter among members devices
// over link l of n bytes on every device (each ends with its reduced n/members):
// (k-1)/k * n / bandwidth + (k-1) * latency, half of RingAllReduceSeconds. 0 for one
// member or nothing to reduce.
func RingReduceScatterSeconds(l Link, n float64, members int) float64 {
	return halfRing(l, n, members)
}

// AllToAllSeconds is the time of an all-to-all among members devices over link l in
// which each device holds n bytes and keeps 1/members of them: (k-1)/k * n / bandwidth
// + (k-1) * latency (pairwise exchange, one message to each peer). 0 for one member.
func AllToAllSeconds(l Link, n float64, members int) float64 {
	return halfRing(l, n, members)
}

// PointToPointSeconds is the time to send n bytes to one peer over link l:
// latency + n / bandwidth. 0 for nothing to send.
func PointToPointSeconds(l Link, n float64) float64 {
	if n <= 0 {
		return 0
	}
	t := l.LatencySeconds
	if l.BytesPerSecond > 0 {
		t += n / l.BytesPerSecond
	}
	return t
}

func halfRing(l Link, n float64, members int) float64 {
	if members <= 1 || n <= 0 {
		return 0
	}
	k := float64(members)
	t := (k - 1) * l.LatencySeconds
	if l.BytesPerSecond > 0 {
		t += (k - 1) / k * n / l.BytesPerSecond
	}
	return t
}
