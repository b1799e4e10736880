package ui

import "fmt"

// TimelineChart draws a Timeline: the schedule's operations per device and the
// microbatches in flight per stage.
type TimelineChart struct {
	T            Timeline
	Drawn, Total int
}

func (c *TimelineChart) viewBox() string {
	return fmt.Sprintf("0 0 %g %g", c.T.Width, c.T.Height)
}

func (c *TimelineChart) label() string {
	return fmt.Sprintf("Schedule timeline of %d devices over %s", len(c.T.Rows), c.T.Makespan)
}

func (c *TimelineChart) clipped() string {
	s := fmt.Sprintf("Showing the first %d of %d operations", c.Drawn, c.Total)
	if c.T.Window != "" {
		s += ", those that start in the first " + c.T.Window + " of the " + c.T.Makespan + " step"
	}
	if len(c.T.Rows) < c.T.Devices {
		s += fmt.Sprintf(", on the first %d of %d devices", len(c.T.Rows), c.T.Devices)
	} else if c.T.Window != "" {
		s += ", on every device"
	}
	return s + "."
}

func (c *TimelineChart) inFlightTitle() string {
	return fmt.Sprintf("Microbatches in flight (the scale tops at %d)", c.T.MaxInFlight)
}
