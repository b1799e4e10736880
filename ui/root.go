package ui

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"pipeplan/core/units"
	"pipeplan/core/wire"
)

// Root is the page: the plan at a glance, then the panels; or, with App.Embed, the
// compact read-only view for an iframe.
type Root struct {
	A *App
	// formOf and formMemo keep the cluster form of the cluster last drawn: the panel
	// reads it once per device preset, and a form of thousands of devices is not free.
	formOf   wire.ClusterSpec
	formMemo *ClusterForm
	// overrides is whether the person opened the per-device overrides.
	overrides bool
}

func (c *Root) rootClass() string {
	if c.A.Embed {
		return "pp embed-mode"
	}
	return "pp"
}

func (c *Root) title() string {
	if m := c.A.Model(); m != nil && m.Name != "" {
		return m.Name
	}
	switch c.A.ModelSource() {
	case "architecture":
		return c.A.Req.Model.Architecture.Name
	case "example":
		return c.A.Req.Model.Example
	}
	return "imported model"
}

func (c *Root) cluster() string {
	f := c.A.Form()
	if f.FromFile {
		return "on a cluster from a file"
	}
	for _, d := range f.Devices {
		if d != f.Device {
			return fmt.Sprintf("on %d devices (%s and others)", len(f.Devices), f.Device)
		}
	}
	if f.Nodes > 1 {
		return fmt.Sprintf("on %d nodes × %d %s", f.Nodes, f.PerNode, f.Device)
	}
	if f.Device == "" {
		return ""
	}
	return fmt.Sprintf("on %d × %s", len(f.Devices), f.Device)
}

func (c *Root) barCaption() string {
	s := c.title() + " " + c.cluster()
	if len(c.A.Req.Boundaries) > 0 {
		s += ": your split"
	}
	return s
}

// SummaryLine is the line under the stage bar.
func (c *Root) SummaryLine() string { return c.summaryLine(c.A.Summary()) }

func (c *Root) summaryLine(s Summary) string {
	if s.Stages == 0 {
		return ""
	}
	kind := "optimal split"
	if s.Manual {
		kind = "manual split"
	}
	line := fmt.Sprintf("%s on %s (%s): bottleneck %s per microbatch", units.Count(int64(s.Layers), "layer"), units.Count(int64(s.Stages), "stage"), kind, s.Bottleneck)
	if s.Step != "" {
		line += fmt.Sprintf("; %s: step %s, %s, bubble %s", s.Schedule, s.Step, s.Throughput, s.Bubble)
	}
	return line + "."
}

func (c *Root) noticeClass() string {
	if c.A.NoticeBad {
		return "notice bad"
	}
	return "notice"
}

func (c *Root) noticeRole() string {
	if c.A.NoticeBad {
		return "alert"
	}
	return "status"
}

func (c *Root) noticeTag() string {
	if c.A.NoticeBad {
		return "✖ Error:"
	}
	return "✔"
}

func (c *Root) selected(id string) string { return strconv.FormatBool(c.A.Tab == id) }

func (c *Root) tabKey(e vugu.DOMEvent) {
	before := c.A.Tab
	c.A.TabKey(e.PropString("key"))
	if c.A.Tab != before && c.A.Host != nil {
		e.PreventDefault()
		c.A.Host.Focus("#tab-" + c.A.Tab)
	}
}

func (c *Root) form() ClusterForm {
	cs, m := c.A.Req.Cluster, c.formOf
	if c.formMemo == nil || !bytes.Equal(m.Document, cs.Document) || m.Device != cs.Device || m.Count != cs.Count ||
		m.Link != cs.Link || m.DataLink != cs.DataLink || m.FreeTransfers != cs.FreeTransfers ||
		m.DevicesPerNode != cs.DevicesPerNode || m.LinkIntra != cs.LinkIntra || m.LinkInter != cs.LinkInter {
		f := c.A.Form()
		c.formOf, c.formMemo = cs, &f
	}
	return *c.formMemo
}

func (c *Root) shareLabel() string {
	switch {
	case c.A.Sharing:
		return "Sharing…"
	case c.A.Server != "":
		return "Share: store on the server, copy the link"
	}
	return "Share: copy the link"
}

// totalDevices says how many devices the nodes hold.
func (c *Root) totalDevices() string {
	f := c.A.Form()
	if f.Nodes < 2 {
		return ""
	}
	return fmt.Sprintf("%d × %d = %d devices", f.Nodes, f.PerNode, f.Nodes*f.PerNode)
}

func (c *Root) linkLabel() string {
	if c.A.Form().Nodes < 2 {
		return "Link between devices"
	}
	return "Link within a node"
}

// usualLabel labels the default of a link picker: the device's usual link (intra) or
// network (between nodes), named.
func (c *Root) usualLabel(intra bool) string {
	f := c.A.Form()
	in, out := UsualLinks(f.Device)
	switch {
	case intra && in != "":
		return "the device's usual link (" + in + ")"
	case intra:
		return "the device's usual link"
	case out != "":
		return "the device's usual network (" + out + ")"
	}
	return "as within a node"
}

// overridesOpen says whether the per-device overrides are open: as the person left
// them, and always for a mixed cluster. Closed, their rows are not drawn (a select of
// every preset per device: hundreds of elements that each render would send again).
func (c *Root) overridesOpen() bool { return c.overrides || c.mixed() }

func (c *Root) toggleOverrides(open bool) { c.overrides = open }

func (c *Root) mixed() bool {
	f := c.form()
	for _, d := range f.Devices {
		if d != f.Device {
			return true
		}
	}
	return false
}

func (c *Root) layerRange() string {
	n := c.A.LayerCount()
	end := min(n, c.A.LayerStart+LayerPageSize)
	return fmt.Sprintf("layers %d–%d of %d", c.A.LayerStart, end-1, n)
}

func (c *Root) gotoLayer(e vugu.DOMEvent) {
	n, err := strconv.Atoi(strings.TrimSpace(e.PropString("target", "value")))
	if err == nil {
		c.A.PageLayers(0, n)
	}
}

func (c *Root) rowClass(r StageRow) string {
	var s []string
	if r.Bottleneck {
		s = append(s, "bottleneck")
	}
	if r.Over {
		s = append(s, "over")
	}
	return strings.Join(s, " ")
}

func (c *Root) width(pct float64) string { return fmt.Sprintf("width:%.2f%%", pct) }

func (c *Root) timelineOK() bool {
	_, d, _ := c.A.Timeline()
	return d > 0
}

func (c *Root) tl() Timeline {
	t, _, _ := c.A.Timeline()
	return t
}

func (c *Root) tlDrawn() int {
	_, d, _ := c.A.Timeline()
	return d
}

func (c *Root) tlTotal() int {
	_, _, n := c.A.Timeline()
	return n
}

// pick reads the file chosen in the file input.
func (c *Root) pick(e vugu.DOMEvent) {
	if c.A.Host != nil {
		c.A.Host.ImportFile(e, c.A.ImportAnswer)
	}
}

// pickProfile reads the measured profile picked for calibration.
func (c *Root) pickProfile(e vugu.DOMEvent) {
	if c.A.Host != nil {
		c.A.Host.ReadFile(e, c.A.Calibrate)
	}
}

func (c *Root) dragOver(e vugu.DOMEvent) {
	if !c.A.Embed {
		e.PreventDefault()
	}
}

// drop reads a file dropped on the page.
func (c *Root) drop(e vugu.DOMEvent) {
	if c.A.Embed || c.A.Host == nil {
		return
	}
	e.PreventDefault()
	c.A.Host.ImportFile(e, c.A.ImportAnswer)
}

func (c *Root) chartBox() string {
	ch := c.A.Chart()
	return fmt.Sprintf("0 0 %g %g", ch.Width, ch.Height)
}

func (c *Root) resultsCaption() string {
	return fmt.Sprintf("%d of %d rows: the best first, then the fastest; alike configurations as one (click a column to sort)", len(c.A.Results()), c.A.RowCount())
}

func (c *Root) sortMark(col string) string {
	switch c.A.AriaSort(col) {
	case "ascending":
		return " ▲"
	case "descending":
		return " ▼"
	}
	return ""
}

func (c *Root) resultClass(r ResultRow) string {
	if r.Best {
		return "best"
	}
	return ""
}

func severityLabel(s string) string {
	switch s {
	case "error":
		return "✖ Error"
	case "warning":
		return "⚠ Warning"
	}
	return "ℹ Note" // core's "note": what the planner assumed
}

func itoa(i int) string { return strconv.Itoa(i) }
