package export_test

import (
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// TestMegatronWritesPricedOverlaps: the Megatron-LM export states the communication
// overlaps the plan was priced with (request.PricedOverlaps), and no others.
func TestMegatronWritesPricedOverlaps(t *testing.T) {
	flags := []string{"--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap"}
	for _, c := range []struct {
		framework, overlap string
		want               []bool
	}{
		{"cuda-graphs", "", []bool{false, false, false}}, // Megatron-LM's defaults
		{"cuda-graphs", request.OverlapOn, []bool{true, true, true}},
		{"eager", "", []bool{true, true, false}}, // DDP's bucketed all-reduce
		{"eager", request.OverlapOff, []bool{false, false, false}},
		{"compiled", request.OverlapOn, []bool{true, true, true}}, // async TP, said so
	} {
		r := &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-7b", Seq: 2048, Framework: c.framework}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 2, Data: 2, Tensor: 2, SequenceParallel: true, ZeRO: 1,
				OverlapGradReduce: c.overlap, OverlapParamGather: c.overlap, OverlapTensorComm: c.overlap},
			Schedule: wire.Schedule{Name: "1f1b", Microbatches: 4, MicrobatchSize: 1},
		}
		ex, err := export.Make(fromRequest(t, r), wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range flags {
			if got := strings.Contains(ex.Text, f+" "); got != c.want[i] {
				t.Errorf("%s, overlap %q: %s written %v, want %v", c.framework, c.overlap, f, got, c.want[i])
			}
		}
		if async := strings.Contains(ex.Text, "async TP"); async != (c.framework == "compiled") {
			t.Errorf("%s, overlap %q: the tensor-parallel overlap said to be priced as async TP %v", c.framework, c.overlap, async)
		}
		// The PyTorch export says how to turn async TP on where it was priced.
		pt, err := export.Make(fromRequest(t, r), wire.PyTorch)
		if err != nil {
			t.Fatal(err)
		}
		said := false
		for _, n := range pt.Notes {
			said = said || strings.Contains(n.Message, "_micro_pipeline_tp = True")
		}
		if said != (c.framework == "compiled") {
			t.Errorf("%s, overlap %q: the PyTorch export's notes turn async TP on: %v", c.framework, c.overlap, said)
		}
	}
}

// TestExportsRecordUserbuffersConfig: a plan priced with a tuned userbuffers config
// (parallelism.tp_comm_overlap_config) says so: the plan document's parallelism names
// it, and the Megatron-LM export writes it beside --tp-comm-overlap; priced with
// initialize_ub's defaults, neither names one.
func TestExportsRecordUserbuffersConfig(t *testing.T) {
	const cfg = "ub_cfg_h100_h8192_tp4_mbs1_seqlen4096"
	for _, named := range []string{cfg, "te-default", ""} {
		r := &wire.Request{
			Model:   wire.ModelSpec{Architecture: &wire.Architecture{Name: "llama-2-70b", Seq: 4096, Framework: "cuda-graphs"}},
			Cluster: wire.ClusterSpec{Device: "h100-sxm", DevicesPerNode: 8},
			Parallelism: wire.Parallelism{Pipeline: 8, Data: 2, Tensor: 4, SequenceParallel: true, ZeRO: 1,
				OverlapTensorComm: request.OverlapOn, TPCommOverlapConfig: named},
			Training: wire.Training{Recompute: "full"},
			Schedule: wire.Schedule{Name: "1f1b", Microbatches: 16, MicrobatchSize: 1},
		}
		want := ""
		if named == cfg {
			want = cfg
		}
		js, err := export.Make(fromRequest(t, r), wire.JSON)
		if err != nil {
			t.Fatal(err)
		}
		d, err := export.ReadDocument([]byte(js.Text))
		if err != nil {
			t.Fatal(err)
		}
		if d.Parallelism.TPCommOverlapConfig != want {
			t.Errorf("%q: the document's tp_comm_overlap_config %q, want %q", named, d.Parallelism.TPCommOverlapConfig, want)
		}
		mg, err := export.Make(fromRequest(t, r), wire.Megatron)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(mg.Text, "--tp-comm-overlap-cfg"); got != (want != "") || want != "" && !strings.Contains(mg.Text, want) {
			t.Errorf("%q: the Megatron-LM export names a config: %v", named, got)
		}
	}
}
