package plan

import (
	"errors"
	"fmt"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/schedule"
)

// BenchmarkPlanInterleaved times Make (estimator, split and the step's simulation) under
// interleaved schedules, whose chunks share their device's memory (sharedBudgetSplit):
// equal layers, where the relaxation's split fits ("even"), and layers whose
// activations grow along the model, on devices with the least memory, found by
// bisection before timing, at which they still plan ("tight", where the shared budget's
// exact search runs), up to Megatron-Bridge's 24 chunks a device.
func BenchmarkPlanInterleaved(b *testing.B) {
	for _, tc := range []struct {
		n, p, v, m int
	}{{32, 4, 2, 16}, {64, 8, 4, 32}, {48, 2, 24, 16}, {192, 8, 24, 64}} {
		for _, kind := range []string{"even", "tight"} {
			mdl := &model.Model{Name: kind}
			for l := 0; l < tc.n; l++ {
				act := int64(4 * mib)
				if kind == "tight" {
					act = int64(mib) * int64(1+8*l/tc.n)
				}
				mdl.Layers = append(mdl.Layers, model.Layer{Name: fmt.Sprintf("l%d", l), ForwardSeconds: 1, BackwardSeconds: 2,
					ParamBytes: 8 * mib, OptimizerBytes: 16 * mib, ActivationBytes: act, TemporaryBytes: 2 * mib})
			}
			opt := with(schedule.Config{Kind: schedule.Interleaved, Chunks: tc.v, Microbatches: tc.m})
			b.Run(fmt.Sprintf("%s/n=%d/p=%d/v=%d/m=%d", kind, tc.n, tc.p, tc.v, tc.m), func(b *testing.B) {
				fits := func(mem int64) bool {
					_, err := Make(mdl, devices(tc.p, mem), opt)
					var nf *NoFitError
					if err != nil && !errors.As(err, &nf) {
						b.Fatal(err)
					}
					return err == nil
				}
				lo, hi := int64(0), int64(1)<<40
				for hi-lo > mib {
					if mid := lo + (hi-lo)/2; fits(mid) {
						hi = mid
					} else {
						lo = mid
					}
				}
				mem := hi
				if kind == "even" {
					mem = 4 * hi
				}
				c := devices(tc.p, mem)
				for b.Loop() {
					if _, err := Make(mdl, c, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
