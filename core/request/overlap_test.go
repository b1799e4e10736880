package request

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestOverlapOptions: parallelism.overlap_grad_reduce and overlap_param_gather override
// the framework's default (on for eager, off for cuda-graphs): with the overlap, the
// data-parallel communication is exposed only beyond one microbatch's backward (or
// forward) of the device's stages; without it, whole.
func TestOverlapOptions(t *testing.T) {
	const q = `{"model":{"architecture":{"name":"llama-3.2-1b","seq":1024,"framework":%q}},"cluster":{"device":"h100-sxm","count":8},
		"parallelism":{"pipeline":2,"data":4,"sharding":%q,"overlap_grad_reduce":%q,"overlap_param_gather":%q}}`
	for _, tt := range []struct {
		framework, sharding, grad, param string
		hidden                           bool
	}{
		{"eager", "", "", "", true},
		{"eager", "", "off", "", false},
		{"cuda-graphs", "", "", "", false},
		{"cuda-graphs", "", "on", "", true},
		{"cuda-graphs", "zero1", "", "", false},
		{"cuda-graphs", "zero1", "on", "", true}, // the reduce-scatter; the all-gather stays exposed
		{"cuda-graphs", "zero1", "on", "on", true},
		{"eager", "zero1", "", "off", true},
	} {
		name := fmt.Sprintf("%s %s grad=%q param=%q", tt.framework, tt.sharding, tt.grad, tt.param)
		res := runJSON(t, fmt.Sprintf(q, tt.framework, tt.sharding, tt.grad, tt.param))
		st := res.Step
		all := st.DataParallelAllReduceSeconds + st.DataParallelReduceScatterSeconds + st.DataParallelAllGatherSeconds
		if all <= 0 {
			t.Fatalf("%s: no data-parallel communication", name)
		}
		if hidden := st.DataParallelExposedSeconds < all; hidden != tt.hidden {
			t.Errorf("%s: exposed %v s of %v s, want hidden %v", name, st.DataParallelExposedSeconds, all, tt.hidden)
		}
		if tt.sharding != "" && (tt.param == "off" || tt.framework == "cuda-graphs" && tt.param == "") && st.DataParallelExposedSeconds < st.DataParallelAllGatherSeconds {
			t.Errorf("%s: exposed %v s, less than the all-gather's %v s that nothing hides", name, st.DataParallelExposedSeconds, st.DataParallelAllGatherSeconds)
		}
		if got := st.PipelineSeconds + st.TiedAllReduceSeconds + st.DataParallelExposedSeconds + st.OptimizerSeconds; got != st.StepSeconds {
			t.Errorf("%s: parts %v s, step %v s", name, got, st.StepSeconds)
		}
	}
	for _, tt := range []struct{ req, field string }{
		{fmt.Sprintf(q, "eager", "", "maybe", ""), "parallelism.overlap_grad_reduce"},
		{fmt.Sprintf(q, "eager", "zero1", "", "yes"), "parallelism.overlap_param_gather"},
		{`{"model":{"example":"gpt2-medium"},"cluster":{"device":"a100-80gb","count":4},"parallelism":{"pipeline":2,"data":2,"overlap_grad_reduce":"on"}}`, "parallelism.overlap_grad_reduce"},
	} {
		_, err := Run(context.Background(), decode(t, tt.req))
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%.80s: error %v, want one naming %s", tt.req, err, tt.field)
		}
	}
}
