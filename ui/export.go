package ui

import (
	"context"
	"fmt"

	"pipeplan/core/export"
	"pipeplan/core/model"
	"pipeplan/core/units"
)

// ExportView is one framework's form of the plan, as the Export panel shows it.
type ExportView struct {
	Format, Filename, Text, Summary string
	Exact                           bool
	Notes                           []string
	Err                             string
}

// Exports writes the plan in every format core/export knows (PyTorch pipelining,
// DeepSpeed, Megatron-LM, Graphcore, pipeplan's plan JSON). It plans the request again
// (export.FromRequest), so it runs when the Export panel is open, once per request.
func (a *App) Exports() []ExportView {
	f, err := EncodeFragment(a.Req)
	if err != nil {
		return nil
	}
	if a.exportsFor == f {
		return a.exports
	}
	a.exportsFor, a.exports = f, nil
	in, _, err := export.FromRequest(context.Background(), a.Req)
	if err != nil {
		a.exports = []ExportView{{Format: "all", Err: "No export: " + err.Error()}}
		return a.exports
	}
	for _, fm := range export.Formats {
		v := ExportView{Format: string(fm)}
		ex, err := export.Make(in, fm)
		if err != nil {
			v.Err = err.Error()
			a.exports = append(a.exports, v)
			continue
		}
		v.Filename, v.Text, v.Exact = ex.Filename, ex.Text, ex.Exact
		v.Summary = fmt.Sprintf("%s: runs the split %s under %s", ex.Filename, joinInts(ex.Boundaries), ex.Schedule)
		if ex.Exact {
			v.Summary += ", exactly as planned"
		} else if ex.Expressed != nil && ex.Planned != nil {
			v.Summary += fmt.Sprintf(" (not exactly as planned: step %s instead of %s)",
				units.Time(ex.Expressed.StepSeconds, model.Seconds), units.Time(ex.Planned.StepSeconds, model.Seconds))
		}
		for _, n := range ex.Notes {
			v.Notes = append(v.Notes, n.Message)
		}
		a.exports = append(a.exports, v)
	}
	return a.exports
}

// DownloadExport offers one export as a file.
func (a *App) DownloadExport(format string) {
	for _, v := range a.Exports() {
		if v.Format == format && v.Err == "" && a.Host != nil {
			a.Host.Download(v.Filename, "text/plain", []byte(v.Text))
		}
	}
}
