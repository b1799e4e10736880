package plan

import (
	"fmt"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/schedule"
)

// dsCommand is one command of DeepSpeed's TrainSchedule on one stage: a pass ('F', 'B')
// or a transfer ("RA" receive activation, "SG" send gradient, "SA" send activation,
// "RG" receive gradient), of microbatch mb.
type dsCommand struct {
	kind string
	mb   int
}

// dsTrainSchedule is DeepSpeed's TrainSchedule.steps for one stage
// (deepspeed/runtime/pipe/schedule.py at v0.5.4, 2021-10-06, the same at 3401d25),
// transcribed: 2(m + S - 1) steps, a stage's even (or odd) steps forward and the others
// backward by the parity of its id; each forward step receives its input and then sends
// the previous step's gradient back, each backward step sends the previous step's
// activation on and then receives its own gradient; invalid microbatches do nothing.
// The data loads and the final ReduceTiedGrads, ReduceGrads and OptimizerStep are not
// transfers between stages and are left out.
func dsTrainSchedule(stage, stages, m int) []dsCommand {
	valid := func(mb int) bool { return mb >= 0 && mb < m }
	even := func(x int) bool { return x%2 == 0 }
	toMicrobatch := func(step int) (int, bool) {
		switch {
		case even(step) && even(stage):
			return step/2 - stage/2, true // _even_step_forward_id
		case !even(step) && !even(stage):
			return (step-1)/2 - stage/2, true // _odd_step_forward_id
		case even(step) && !even(stage):
			return step/2 - stages + (stage+1)/2, false // _even_step_backward_id
		default:
			return (step-1)/2 - stages + 1 + stage/2, false // _odd_step_backward_id
		}
	}
	var cmds []dsCommand
	prev := -1
	for step := 0; step < 2*(m+stages-1); step++ {
		mb, forward := toMicrobatch(step)
		if forward {
			if valid(mb) && stage > 0 {
				cmds = append(cmds, dsCommand{"RA", mb})
			}
			if valid(prev) && stage > 0 {
				cmds = append(cmds, dsCommand{"SG", prev})
			}
		} else {
			if valid(prev) && stage < stages-1 {
				cmds = append(cmds, dsCommand{"SA", prev})
			}
			if valid(mb) && stage < stages-1 {
				cmds = append(cmds, dsCommand{"RG", mb})
			}
		}
		if valid(mb) {
			if forward {
				cmds = append(cmds, dsCommand{"F", mb})
			} else {
				cmds = append(cmds, dsCommand{"B", mb})
			}
		}
		prev = mb
	}
	return cmds
}

// dsTrainMakespan runs every stage's TrainSchedule commands in order on its own stream,
// a pass taking f or b seconds and each send meeting its receive (blocking, as
// p2p.py's torch.distributed send and recv do): the pair starts when both stages reach
// it and holds both for t seconds. It returns when the last stage is done.
func dsTrainMakespan(t *testing.T, stages, m int, f, b, tr float64) float64 {
	t.Helper()
	cmds := make([][]dsCommand, stages)
	for s := range cmds {
		cmds[s] = dsTrainSchedule(s, stages, m)
	}
	next, clock := make([]int, stages), make([]float64, stages)
	peer := map[string]struct {
		dir  int
		kind string
	}{"SA": {1, "RA"}, "RA": {-1, "SA"}, "SG": {-1, "RG"}, "RG": {1, "SG"}}
	for moved := true; moved; {
		moved = false
		for s := range cmds {
			for next[s] < len(cmds[s]) {
				c := cmds[s][next[s]]
				if c.kind == "F" || c.kind == "B" {
					clock[s] += map[string]float64{"F": f, "B": b}[c.kind]
					next[s]++
					moved = true
					continue
				}
				p := peer[c.kind]
				q := s + p.dir
				if next[q] >= len(cmds[q]) || cmds[q][next[q]] != (dsCommand{p.kind, c.mb}) {
					break
				}
				end := max(clock[s], clock[q]) + tr
				clock[s], clock[q] = end, end
				next[s]++
				next[q]++
				moved = true
			}
		}
	}
	var last float64
	for s := range cmds {
		if next[s] != len(cmds[s]) {
			t.Fatalf("%d stages, %d microbatches: stage %d stopped at command %d of %d (%v): the transcription deadlocks", stages, m, s, next[s], len(cmds[s]), cmds[s][next[s]])
		}
		last = max(last, clock[s])
	}
	return last
}

// TestBlockingTransfersMatchDeepSpeedTrainSchedule: the plan's rule for DeepSpeed's
// blocking transfers (ScheduleOptions.BlockingTransfers: each transfer added to the two
// passes it joins, then the 1F1B pipeline of those stage times) against a brute-force
// run of DeepSpeed's own TrainSchedule (dsTrainSchedule) whose sends and receives
// meet: with free transfers both take exactly (m + S - 1)(F + B), and with transfers of
// T seconds the plan's step is never shorter than the engine's and longer by at most
// 4T a slot of the fill and drain, (S - 1)4T (the engine overlaps some of a stage's
// waits at the pipeline's ends). So the engine's schedule gives no longer pipeline
// than the plan prices: MT-NLG's 35 stages with 240 microbatches take 274 slots either
// way, not the 2(S - 1) slots of fill a least-squares fit to its published steps would
// want.
func TestBlockingTransfersMatchDeepSpeedTrainSchedule(t *testing.T) {
	const f, b = 1.0, 3.0
	for _, c := range []struct {
		stages, m int
		tr        float64
	}{
		{2, 1, 0}, {4, 8, 0}, {5, 7, 0}, {35, 240, 0}, {35, 160, 0},
		{4, 8, 0.05}, {5, 3, 0.1}, {6, 64, 0.02}, {12, 32, 0.05}, {35, 240, 0.01}, {35, 160, 0.01},
	} {
		t.Run(fmt.Sprintf("S%d_m%d_T%g", c.stages, c.m, c.tr), func(t *testing.T) {
			engine := dsTrainMakespan(t, c.stages, c.m, f, b, c.tr)
			bytes := int64(1 << 20)
			cl := cluster.Homogeneous(cluster.Device{Name: "d", MemoryBytes: 1 << 50}, c.stages, cluster.Link{BytesPerSecond: float64(bytes) / max(c.tr, 1e-300)}, nil)
			if c.tr == 0 {
				cl = cluster.Homogeneous(cluster.Device{Name: "d", MemoryBytes: 1 << 50}, c.stages, cluster.Link{}, nil)
			}
			md := chain(c.stages, 0, 0, bytes)
			for i := range md.Layers {
				md.Layers[i].ForwardSeconds, md.Layers[i].BackwardSeconds = f, b
			}
			bounds := make([]int, c.stages+1)
			for i := range bounds {
				bounds[i] = i
			}
			r, err := Simulate(md, cl, bounds, Options{Schedule: &ScheduleOptions{Config: schedule.Config{Kind: schedule.OneFOneB, Microbatches: c.m}, BlockingTransfers: true}})
			if err != nil {
				t.Fatal(err)
			}
			plan := r.MakespanSeconds
			if c.tr == 0 {
				if want := float64(c.m+c.stages-1) * (f + b); plan != want || engine != want {
					t.Errorf("free transfers: plan %v s, DeepSpeed's TrainSchedule %v s, want both %v s", plan, engine, want)
				}
				return
			}
			if slack := float64(c.stages-1) * 4 * c.tr; plan < engine-1e-9 || plan > engine+slack+1e-9 {
				t.Errorf("plan %v s, DeepSpeed's TrainSchedule %v s: want the plan at least the engine's and at most %v s longer", plan, engine, slack)
			}
			t.Logf("plan %.3f s, DeepSpeed's TrainSchedule %.3f s (%d slots of %g s)", plan, engine, c.m+c.stages-1, f+b+4*c.tr)
		})
	}
}
