package schedule

import (
	"errors"
	"math"

	"pipeplan/core/model"
)

// stepOp is one operation of a device's order, as the fast step simulation keeps it.
type stepOp struct {
	kind  uint8 // 0 F, 1 B, 2 W (kindIndex)
	stage int32
	mb    int32
}

// direct reports whether the schedule's dependencies are the common ones only, with no
// lockstep barriers and no dummy inputs: SimulateStep then runs simulateDirect.
func direct(k Kind) bool {
	switch k {
	case GPipe, OneFOneB, ZBH1, Interleaved, Inference:
		return true
	}
	return false
}

// simulateDirect is SimulateStep without the schedule graph, for the schedules whose
// operations depend only on their device's previous operation and on the same
// microbatch's F on the stage before (F), or B on the stage after (B): a search
// simulates thousands of steps, and the graph (operations, an index, dependency and
// successor lists) cost more than the simulation itself.
//
// # Method
//
// Each device's order comes from the same rules (graph.orderOps, visiting). Devices are
// swept in turn, each running its next operations while their inputs from other devices
// have ended (the operations of the same stage, F before B before W, run on one device
// in its order); a sweep that runs nothing would be a deadlock. An operation starts at
// the latest of its device's previous end and each input's end plus its transfer: the
// same longest path, with the same floating-point operations (max is exact, and an
// input on the same device has ended before the device's previous operation), as the
// graph's topological pass, so the start and end of every operation are bit for bit the
// graph's. Counts and memory follow each device's order, as in sim.result: they do not
// depend on the times.
func simulateDirect(p *Pipeline, cfg Config) (*Result, error) {
	S := len(p.Stages)
	D, m := cfg.Devices(S), cfg.Microbatches
	perStage := 2 * m
	switch cfg.Kind {
	case ZBH1:
		perStage = 3 * m
	case Inference:
		perStage = m
	}
	perDevice := perStage * (S / D)
	all := make([]stepOp, D*perDevice)
	fill := make([]int, D)
	if cfg.Kind == Interleaved {
		g := &graph{cfg: cfg, S: S, D: D, m: m}
		g.visit = func(k OpKind, stage, mb int) {
			d := stage % D
			all[d*perDevice+fill[d]] = stepOp{kind: uint8(kindIndex(k)), stage: int32(stage), mb: int32(mb)}
			fill[d]++
		}
		g.orderOps()
	} else {
		for d := 0; d < D; d++ {
			fill[d] = len(orderDevice(cfg.Kind, d, D, m, all[d*perDevice:d*perDevice]))
		}
	}
	for d := range fill {
		if fill[d] != perDevice {
			return nil, errors.New("schedule: internal error: a device's order is not the size expected")
		}
	}

	// endF and endB of every stage's microbatches, and whether they have run.
	ends := make([]float64, 2*S*m)
	endF, endB := ends[:S*m], ends[S*m:]
	doneF := make([]int32, S) // F ops run per stage: F of a stage runs microbatches in order
	doneB := make([]bool, S*m)
	pos := make([]int, D)
	last := make([]float64, D) // end of each device's previous operation
	zb := cfg.Kind == ZBH1
	train := cfg.Training()
	r := &Result{
		Schedule: cfg.String(), Microbatches: m, Recompute: cfg.Recompute, Devices: D,
		StageDevices: make([]int, S), BusySeconds: make([]float64, D),
		PeakMemoryBytes: make([]int64, D), MaxInFlight: make([]int, S),
	}
	for st := range r.StageDevices {
		r.StageDevices[st] = st % D
	}
	left := D * perDevice
	for left > 0 {
		progress := false
		for d := 0; d < D; d++ {
			ops := all[d*perDevice : (d+1)*perDevice]
			k := pos[d]
			t0 := last[d]
			for ; k < len(ops); k++ {
				o := ops[k]
				st, j := int(o.stage), int(o.mb)
				x := &p.Stages[st]
				t := t0
				if k == 0 {
					t = 0
				}
				var dur float64
				switch o.kind {
				case 0: // F
					if st > 0 {
						if int(doneF[st-1]) <= j {
							goto blocked
						}
						t = max(t, endF[(st-1)*m+j]+p.transfer(st-1))
					}
					dur = x.ForwardSeconds
					endF[st*m+j] = t + dur
					if int(doneF[st]) != j {
						return nil, errors.New("schedule: internal error: a stage's forwards run out of order")
					}
					doneF[st]++
				case 1: // B
					if st < S-1 {
						if !doneB[(st+1)*m+j] {
							goto blocked
						}
						t = max(t, endB[(st+1)*m+j]+p.transfer(st))
					}
					dur = x.BackwardSeconds
					if zb {
						dur -= x.WeightGradSeconds
					}
					if cfg.Recompute {
						dur += x.ForwardSeconds
					}
					endB[st*m+j] = t + dur
					doneB[st*m+j] = true
				default: // W
					dur = x.WeightGradSeconds
				}
				t0 = t + dur
				r.BusySeconds[d] += t0 - t
				r.MakespanSeconds = max(r.MakespanSeconds, t0)
			}
		blocked:
			if k > pos[d] {
				progress = true
				left -= k - pos[d]
				pos[d], last[d] = k, t0
			}
		}
		if !progress {
			return nil, errors.New("schedule: internal error: the schedule's orders deadlock")
		}
	}

	// In flight and memory, in each device's order (sim.result's rules).
	cur := make([]int, S)
	work := make([]int64, D)
	seen := make([]bool, D)
	for st, x := range p.Stages {
		d := st % D
		peak := model.WorkingPeakBytes(x.PeakBytes, x.ActivationBytes)
		switch {
		case !train:
		case cfg.Recompute:
			peak -= x.InputBytes
		default:
			peak -= x.ActivationBytes
		}
		if !seen[d] || peak > work[d] {
			work[d], seen[d] = peak, true
		}
		r.PeakMemoryBytes[d] += x.StaticBytes
	}
	temp := make([]int64, D)
	if train {
		for st, x := range p.Stages {
			temp[st%D] += x.OptimizerTempBytes
		}
	}
	for d := 0; d < D; d++ {
		var mem, most int64
		for _, o := range all[d*perDevice : (d+1)*perDevice] {
			st := int(o.stage)
			x := &p.Stages[st]
			unit := x.ActivationBytes
			if cfg.Recompute {
				unit = x.InputBytes
			}
			switch {
			case !train:
				cur[st]++
				r.MaxInFlight[st] = max(r.MaxInFlight[st], cur[st])
				cur[st]--
			case o.kind == 0:
				cur[st]++
				r.MaxInFlight[st] = max(r.MaxInFlight[st], cur[st])
				mem += unit
				most = max(most, mem)
			case o.kind == 1:
				cur[st]--
				mem -= unit
				if zb {
					mem += x.WeightGradBytes
					most = max(most, mem)
				}
			default:
				mem -= x.WeightGradBytes
			}
		}
		// The optimizer step follows the passes: the device's peak is the larger; then
		// the allocator's reserve and the framework's fixed memory (sim.result's rules).
		alloc := r.PeakMemoryBytes[d] + max(most+work[d], temp[d])
		var reserve int64
		if p.AllocatorReserve > 0 && alloc > 0 {
			reserve = int64(math.Ceil(float64(alloc) * p.AllocatorReserve))
		}
		r.PeakMemoryBytes[d] = alloc + reserve + p.FixedBytes
	}
	var busy float64
	for _, b := range r.BusySeconds {
		busy += b
	}
	if r.MakespanSeconds > 0 {
		r.BubbleFraction = 1 - busy/(float64(D)*r.MakespanSeconds)
		size := max(1, p.MicrobatchSize)
		r.Throughput = float64(m*size) / r.MakespanSeconds
	}
	return r, nil
}

// orderDevice appends device d's operations (one stage per device) to out in the order of
// graph.orderOps's rules for gpipe, 1f1b, zb-h1 and inference, without a graph or a
// callback per operation. TestSimulateDirectIsGraph checks it against the rules.
func orderDevice(k Kind, d, p, m int, out []stepOp) []stepOp {
	st := int32(d)
	f := func(j int) { out = append(out, stepOp{kind: 0, stage: st, mb: int32(j)}) }
	b := func(j int) { out = append(out, stepOp{kind: 1, stage: st, mb: int32(j)}) }
	w := func(j int) { out = append(out, stepOp{kind: 2, stage: st, mb: int32(j)}) }
	switch k {
	case GPipe:
		for j := 0; j < m; j++ {
			f(j)
		}
		for j := 0; j < m; j++ {
			b(j)
		}
	case Inference:
		for j := 0; j < m; j++ {
			f(j)
		}
	case OneFOneB, ZBH1:
		zb := k == ZBH1
		warm := min(p-1-d, m)
		for j := 0; j < warm; j++ {
			f(j)
		}
		for i := 0; i < m-warm; i++ {
			f(warm + i)
			b(i)
			if zb && i >= d {
				w(i - d)
			}
		}
		for j := m - warm; j < m; j++ {
			b(j)
			if zb && j >= d {
				w(j - d)
			}
		}
		if zb {
			for j := max(0, m-d); j < m; j++ {
				w(j)
			}
		}
	}
	return out
}
