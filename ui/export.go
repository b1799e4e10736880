package ui

import (
	"fmt"

	"pipeplan/core/model"
	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// ExportView is one framework's form of the plan, as the Export panel shows it.
type ExportView struct {
	Format, Filename, Text, Summary string
	Exact                           bool
	Notes                           []string
	Err                             string
}

// Exports writes the plan in every format core/export knows (PyTorch pipelining,
// DeepSpeed, Megatron-LM, Graphcore, pipeplan's plan JSON). The planner plans the request
// again for them (export.FromRequest), so they are asked for when the Export panel is
// open, once per request; until the answer comes there are none.
func (a *App) Exports() []ExportView {
	f, err := EncodeFragment(a.Req)
	if err != nil {
		return nil
	}
	if a.exportsFor == f {
		return a.exports
	}
	a.exportsFor, a.exports = f, nil
	r := clone(a.Req)
	a.background(func() {
		var res wire.Exports
		var views []ExportView
		if err := a.call(nil, "exports", &res, r, ""); err != nil {
			views = []ExportView{{Format: "all", Err: "No export: " + err.Error()}}
		} else {
			for _, fm := range wire.Formats {
				for _, u := range res.Unavailable {
					if u.Format == fm {
						views = append(views, ExportView{Format: string(fm), Err: u.Error})
					}
				}
				for _, ex := range res.Exports {
					if ex.Format == fm {
						views = append(views, exportView(ex))
					}
				}
			}
		}
		a.update(func() {
			if a.exportsFor == f {
				a.exports = views
			}
		})
	})
	return a.exports
}

// exportView is how the Export panel shows an export.
func exportView(ex *wire.Export) ExportView {
	v := ExportView{Format: string(ex.Format), Filename: ex.Filename, Text: ex.Text, Exact: ex.Exact}
	v.Summary = fmt.Sprintf("%s: runs the split %s under %s", ex.Filename, joinInts(ex.Boundaries), ex.Schedule)
	if ex.Exact {
		v.Summary += ", exactly as planned"
	} else if ex.Expressed != nil && ex.Planned != nil {
		v.Summary += fmt.Sprintf(" (not exactly as planned: step %s instead of %s)",
			units.Time(ex.Expressed.StepSeconds, model.Seconds), units.Time(ex.Planned.StepSeconds, model.Seconds))
	} else {
		// Another precision or sharding than priced: the notes say what, and it has no price.
		v.Summary += " (not exactly as planned: see the notes)"
	}
	for _, n := range ex.Notes {
		v.Notes = append(v.Notes, n.Message)
	}
	return v
}

// DownloadExport offers one export as a file.
func (a *App) DownloadExport(format string) {
	for _, v := range a.Exports() {
		if v.Format == format && v.Err == "" && a.Host != nil {
			a.Host.Download(v.Filename, "text/plain", []byte(v.Text))
		}
	}
}
