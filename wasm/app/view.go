package main

import (
	"fmt"
	"pipeplan/core/units"
	"strconv"
	"strings"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// maxStages bounds the stage count the page accepts, so that a typo cannot ask for a
// cluster of a billion devices; counts above the number of layers still reach the planner,
// which explains why they cannot work.
const maxStages = 1024

// parseStages reads a stage count typed by a person or kept in the URL or localStorage.
func parseStages(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > maxStages {
		return 0, fmt.Errorf("stages: enter a whole number from 1 to %d, got %q", maxStages, s)
	}
	return n, nil
}

// initialStages picks the stage count a page load starts with: the URL's, else the one
// kept in localStorage, else the example's default. Values that do not parse are skipped.
func initialStages(fromURL, fromStorage string, def int) int {
	for _, s := range []string{fromURL, fromStorage} {
		if n, err := parseStages(s); err == nil {
			return n
		}
	}
	return def
}

// planView is a plan as the page shows it: a summary line and a table with a row per stage.
type planView struct {
	Summary string
	Header  []string
	Rows    []rowView
	// Boundaries as "0,8,15,22,26", for the table's data-boundaries attribute.
	Boundaries string
}

// rowView is one stage's row.
type rowView struct {
	Cells []string
	// UsedFraction is memory over capacity, for the bar in the last cell.
	UsedFraction float64
	// Bottleneck marks the stage with the largest compute time (the first if several).
	Bottleneck bool
}

// viewHeader names the table's columns.
var viewHeader = []string{"Stage", "Device", "Layers", "First … last", "Time", "Transfer", "Memory", "Capacity", "Used"}

// newPlanView formats a plan of model m on devices of the named kind.
func newPlanView(m *model.Model, device string, p *plan.Plan) planView {
	v := planView{Header: viewHeader}
	bounds := make([]string, len(p.Boundaries))
	for i, b := range p.Boundaries {
		bounds[i] = strconv.Itoa(b)
	}
	v.Boundaries = strings.Join(bounds, ",")
	slowest := 0
	for i, s := range p.Stages {
		if s.Compute > p.Stages[slowest].Compute {
			slowest = i
		}
	}
	for i, s := range p.Stages {
		used := float64(s.MemoryBytes) / float64(s.LimitBytes)
		v.Rows = append(v.Rows, rowView{
			Cells: []string{
				strconv.Itoa(i), s.Device, fmt.Sprintf("%d–%d", s.FirstLayer, s.LastLayer),
				s.FirstName + " … " + s.LastName,
				units.Time(s.Compute, p.Unit), units.Time(s.Transfer, p.Unit),
				units.Bytes(s.MemoryBytes), units.Bytes(s.LimitBytes), fmt.Sprintf("%.0f%%", 100*used),
			},
			UsedFraction: used,
			Bottleneck:   i == slowest,
		})
	}
	v.Summary = fmt.Sprintf("%d layers on %d × %s: bottleneck %s per microbatch on stage %d, highlighted (objective %s).",
		len(m.Layers), len(p.Stages), device, units.Time(p.Bottleneck, p.Unit), slowest, p.Objective)
	return v
}
