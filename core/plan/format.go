package plan

import (
	"fmt"
	"strings"

	"pipeplan/core/model"
)

// Time formats a time in a plan's unit for people: cycles as "123 cyc", seconds with a
// readable scale ("58.9 µs", "36.20 ms", "1.25 s").
func Time(v float64, unit model.TimeUnit) string {
	if unit == model.Cycles {
		return fmt.Sprintf("%.0f cyc", v)
	}
	switch {
	case v == 0:
		return "0 s"
	case v < 1e-3:
		return fmt.Sprintf("%.1f µs", v*1e6)
	case v < 1:
		return fmt.Sprintf("%.2f ms", v*1e3)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.3f", v), "0") + " s"
}
