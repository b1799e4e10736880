package ops

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/export"
	"pipeplan/core/profiler"
	"pipeplan/core/wire"
)

func exampleRequestJSON(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(exampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pipeplan.export gives what core/export gives for the request.
func TestExportJSONGivesCoreExport(t *testing.T) {
	req := exampleRequestJSON(t)
	in, _, err := export.FromRequest(context.Background(), exampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want, err := export.Make(in, wire.DeepSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if got := exportJSON(req, `{"format": "deepspeed"}`); got != mustJSON(want) {
		t.Errorf("exportJSON differs from core/export's:\n%s", got)
	}
}

// The request's tensor parallelism reaches every export: the plan is costed with it and
// Megatron-LM's arguments state it.
func TestExportJSONTensorParallel(t *testing.T) {
	req := `{"model": {"architecture": {"name": "llama-2-7b", "seq": 4096}}, "cluster": {"device": "h100-sxm"},
		"parallelism": {"pipeline": 4, "tensor": 2, "sequence_parallel": true}, "schedule": {"microbatches": 8}}`
	var ex wire.Export
	if err := json.Unmarshal([]byte(exportJSON(req, `{"format": "megatron"}`)), &ex); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"--tensor-model-parallel-size 2\n", "--sequence-parallel\n", "Launch on 8 GPUs", "tensor parallel 2 with sequence parallelism"} {
		if !strings.Contains(ex.Text, s) {
			t.Errorf("the export lacks %q:\n%s", s, ex.Text)
		}
	}
	var res wire.Exports
	if err := json.Unmarshal([]byte(exportsJSON(req, "")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Exports) != 4 || len(res.Unavailable) != 1 || res.Unavailable[0].Format != wire.Graphcore ||
		!strings.Contains(res.Unavailable[0].Error, "tensor parallelism") {
		t.Errorf("exports of a tensor-parallel plan: %d, unavailable %+v", len(res.Exports), res.Unavailable)
	}
	for _, e := range res.Exports {
		if e.Planned == nil || e.Planned.StepSeconds != res.Exports[0].Planned.StepSeconds {
			t.Errorf("%s: priced %+v", e.Format, e.Planned)
		}
	}
}

func TestExportsJSON(t *testing.T) {
	var res wire.Exports
	if err := json.Unmarshal([]byte(exportsJSON(exampleRequestJSON(t), "")), &res); err != nil {
		t.Fatal(err)
	}
	var got []wire.Format
	for _, e := range res.Exports {
		got = append(got, e.Format)
		if e.Text == "" || len(e.Boundaries) != 5 {
			t.Errorf("%s: %+v", e.Format, e)
		}
	}
	if strings.Join(fmtNames(got), ",") != "pytorch,deepspeed,graphcore,json" ||
		len(res.Unavailable) != 1 || res.Unavailable[0].Format != wire.Megatron || !strings.Contains(res.Unavailable[0].Error, "needs a transformer architecture") {
		t.Errorf("exports %v, unavailable %+v", got, res.Unavailable)
	}
}

func fmtNames(fs []wire.Format) []string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f))
	}
	return s
}

func TestExportJSONErrors(t *testing.T) {
	req := exampleRequestJSON(t)
	badRequest := `{"model": {"hf_config": 1}}`
	for _, tc := range []struct {
		name, request, options string
		want                   apiError
	}{
		{"no format", req, `{}`, apiError{Error: `options.format: unknown export format "": use pytorch, deepspeed, megatron, graphcore, json`,
			Fields: []apiField{{"options.format", `unknown export format "": use pytorch, deepspeed, megatron, graphcore, json`}}}},
		{"unknown option", req, `{"format": "json", "stages": 2}`, apiError{Error: `options: must be {format}: json: unknown field "stages"`,
			Fields: []apiField{{"options", `must be {format}: json: unknown field "stages"`}}}},
		{"tensor_parallel option", req, `{"format": "megatron", "tensor_parallel": 2}`, apiError{
			Error:  "options.tensor_parallel: is the request's now: set parallelism.tensor (docs/request.md), which the plan is costed with",
			Fields: []apiField{{"options.tensor_parallel", "is the request's now: set parallelism.tensor (docs/request.md), which the plan is costed with"}}}},
		{"bad request", badRequest, `{"format": "json"}`, apiError{Error: "model.hf_config: is not a field of the request (docs/request.md lists them)",
			Fields: []apiField{{"model.hf_config", "is not a field of the request (docs/request.md lists them)"}}}},
		{"megatron of a profile", req, `{"format": "megatron"}`, apiError{Error: "megatron export needs a transformer architecture (plan --hf-config, or a request's model.architecture): a profile's layers are not Megatron-LM's"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := exportJSON(tc.request, tc.options), mustJSON(tc.want); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
	// A valid request that fits no split: nothing to export, and no_plan says so.
	tiny := `{"model": {"architecture": {"name": "llama-2-70b"}}, "cluster": {"device": "a100-80gb", "count": 1}}`
	var a apiError
	if err := json.Unmarshal([]byte(exportJSON(tiny, `{"format": "json"}`)), &a); err != nil || !a.NoPlan || !strings.Contains(a.Error, "no plan to export") {
		t.Errorf("no fit: %+v (%v)", a, err)
	}
	if got := exportsJSON(req, `{"format": "json"}`); !strings.Contains(got, "exports writes every format") {
		t.Errorf("exports with a format: %s", got)
	}
}

func TestProfilerJSON(t *testing.T) {
	var p struct{ Filename, Text string }
	if err := json.Unmarshal([]byte(profilerJSON()), &p); err != nil || p.Filename != profiler.FileName || p.Text != profiler.Script {
		t.Errorf("profiler: %q, %d bytes, %v", p.Filename, len(p.Text), err)
	}
}
