package export_test

import (
	"strconv"
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/wire"
)

// TestMegatronBucketAndNaNCheckFlags: parallelism.dp_bucket_elements exports to
// Megatron-LM as --ddp-bucket-size (training.py: kwargs['bucket_size'] =
// args.ddp_bucket_size), and the export states the NaN check the plan priced: Megatron-LM
// checks by default (arguments.py: --no-check-for-nan-in-loss-and-grad, store_false), so
// a training plan that priced no check passes the no- flag and one that priced it passes
// nothing; an inference export neither. The other code exports cannot express either
// field, and a training-loop note says so (not exact) where the plan priced it (over
// two or more replicas); the JSON export states the plan as it is.
func TestMegatronBucketAndNaNCheckFlags(t *testing.T) {
	const noCheck = "--no-check-for-nan-in-loss-and-grad"
	for _, tt := range []struct {
		name      string
		elements  int64
		check     bool
		inference bool
		dp        int
	}{
		{"neither", 0, false, false, 2},
		{"bucket_size", 64, false, false, 2},
		{"nan check", 0, true, false, 2},
		{"both", 768_000_000, true, false, 2},
		// one replica: nothing reduced, neither field priced, nothing to note
		{"one replica", 768_000_000, true, false, 1},
		{"inference", 0, false, true, 2},
	} {
		r := archCase{arch: "llama-2-7b", device: "h100-sxm", devices: 2, sched: "1f1b", m: 8, batch: 1, seq: 2048, dp: tt.dp}.request()
		r.Model.Architecture.Framework = "megatron"
		r.Parallelism.OverlapGradReduce = "on"
		r.Parallelism.DPBucketElements = tt.elements
		r.Training.CheckForNaNInGrad = tt.check
		if tt.inference {
			r.Training.Mode, r.Schedule.Name, r.Parallelism.OverlapGradReduce = wire.ModeInference, "", ""
		}
		in := fromRequest(t, r)
		ex, err := export.Make(in, wire.Megatron)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got, want := strings.Contains(ex.Text, "--ddp-bucket-size"), tt.elements > 0; got != want {
			t.Errorf("%s: --ddp-bucket-size named %v, want %v:\n%s", tt.name, got, want, ex.Text)
		}
		if tt.elements > 0 && !strings.Contains(ex.Text, "--ddp-bucket-size "+strconv.FormatInt(tt.elements, 10)+" ") {
			t.Errorf("%s: --ddp-bucket-size is not %d:\n%s", tt.name, tt.elements, ex.Text)
		}
		if got, want := strings.Contains(ex.Text, noCheck), !tt.check && !tt.inference; got != want {
			t.Errorf("%s: %s named %v, want %v:\n%s", tt.name, noCheck, got, want, ex.Text)
		}
		if hasNote(ex, wire.NoteTrainingLoop) {
			t.Errorf("%s: the Megatron-LM export runs both fields, but notes its loop: %v", tt.name, ex.Notes)
		}
		for _, f := range []wire.Format{wire.PyTorch, wire.DeepSpeed, wire.Graphcore, wire.JSON} {
			ex, err := export.Make(in, f)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.name, f, err)
			}
			for _, field := range []struct {
				name string
				set  bool
			}{{"dp_bucket_elements", tt.elements > 0}, {"check_for_nan_in_grad", tt.check}} {
				noted := false
				for _, n := range ex.Notes {
					noted = noted || n.Code == wire.NoteTrainingLoop && strings.Contains(n.Message, field.name)
				}
				if want := field.set && tt.dp > 1 && f != wire.JSON; noted != want {
					t.Errorf("%s %s: %s noted %v, want %v (notes %v)", tt.name, f, field.name, noted, want, ex.Notes)
				}
				if field.set && tt.dp > 1 && f != wire.JSON && ex.Exact {
					t.Errorf("%s %s: exact, though its framework does not run %s", tt.name, f, field.name)
				}
			}
		}
	}
}
