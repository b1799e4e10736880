package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"pipeplan/core/export"
	"pipeplan/core/model"
	"pipeplan/core/profiler"
	"pipeplan/core/request"
	"pipeplan/core/wire"
)

// exportOptions is the options argument of pipeplan.export and pipeplan.exports. The
// plan's parallelism (tensor and sequence parallel included) is the request's.
type exportOptions struct {
	// Format: pytorch, deepspeed, megatron, graphcore or json (pipeplan.export only).
	Format string `json:"format,omitempty"`
}

// decodeExportOptions reads the options (empty or null: the defaults); errors name the
// field under "options".
func decodeExportOptions(text string) (exportOptions, error) {
	var o exportOptions
	s := bytes.TrimSpace([]byte(text))
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return o, nil
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(s, &keys) == nil {
		if _, ok := keys["tensor_parallel"]; ok { // an option before the request had it
			return o, &model.FieldError{Path: "options.tensor_parallel", Reason: "is the request's now: set parallelism.tensor (docs/request.md), which the plan is costed with"}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, &model.FieldError{Path: "options", Reason: fmt.Sprintf("must be {format}: %v", err)}
	}
	return o, nil
}

// exportInput plans the request for an export; a plan that does not exist is an error
// with no_plan set.
func exportInput(requestJSON string) (*export.Input, *apiError) {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		a := errorOf(err)
		return nil, &a
	}
	in, _, err := export.FromRequest(context.Background(), r)
	if err != nil {
		a := errorOf(err)
		a.NoPlan = errors.Is(err, export.ErrNoPlan)
		return nil, &a
	}
	return in, nil
}

// exportJSON is pipeplan.export's JSON: the request planned and written in
// options.format (docs/export.md), or an apiError.
func exportJSON(requestJSON, optionsJSON string) string {
	o, err := decodeExportOptions(optionsJSON)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	f, err := export.ParseFormat(o.Format)
	if err != nil {
		return mustJSON(errorOf(&model.FieldError{Path: "options.format", Reason: err.Error()}))
	}
	in, aerr := exportInput(requestJSON)
	if aerr != nil {
		return mustJSON(aerr)
	}
	ex, err := export.Make(in, f)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	return mustJSON(ex)
}

// exportsJSON is pipeplan.exports's JSON: the request planned once and written in every
// format (options.format must be empty).
func exportsJSON(requestJSON, optionsJSON string) string {
	o, err := decodeExportOptions(optionsJSON)
	if err != nil {
		return mustJSON(errorOf(err))
	}
	if o.Format != "" {
		return mustJSON(errorOf(&model.FieldError{Path: "options.format", Reason: "exports writes every format: leave format out, or call export"}))
	}
	in, aerr := exportInput(requestJSON)
	if aerr != nil {
		return mustJSON(aerr)
	}
	res := wire.Exports{Exports: []*wire.Export{}}
	for _, f := range wire.Formats {
		ex, err := export.Make(in, f)
		if err != nil {
			res.Unavailable = append(res.Unavailable, wire.ExportUnavailable{Format: f, Error: err.Error()})
			continue
		}
		res.Exports = append(res.Exports, ex)
	}
	return mustJSON(res)
}

// profilerJSON is pipeplan.profiler's JSON: the profiler script, to offer for download.
func profilerJSON() string {
	return mustJSON(struct {
		Filename string `json:"filename"`
		Text     string `json:"text"`
	}{profiler.FileName, profiler.Script})
}
