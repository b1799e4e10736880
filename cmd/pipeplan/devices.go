package main

import (
	"fmt"
	"io"
	"pipeplan/core/units"
	"text/tabwriter"

	"pipeplan/core/cluster"
)

func init() {
	register(&command{name: "devices", summary: "list the device and link presets with their figures", run: runDevices})
}

// devicesJSON is the --json form of pipeplan devices.
type devicesJSON struct {
	Devices []deviceJSON `json:"devices"`
	Links   []linkJSON   `json:"links"`
}

type deviceJSON struct {
	cluster.Device
	Perf cluster.Perf `json:"perf"`
	Link string       `json:"link"`
	// Network is the usual link between nodes; ScaleUpDevices the size of the scale-up
	// domain (devices on one Link fabric: 8 on an HGX board, 72 in an NVL72 rack).
	Network        string `json:"network,omitempty"`
	ScaleUpDevices int    `json:"scale_up_devices,omitempty"`
	Note           string `json:"note"`
}

type linkJSON struct {
	Name string `json:"name"`
	cluster.Link
	SecondsPerByte float64 `json:"seconds_per_byte"`
	Note           string  `json:"note"`
}

func runDevices(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", stderr)
	asJSON := fs.Bool("json", false, "print the presets as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	var out devicesJSON
	for _, name := range cluster.DeviceNames() {
		d, _ := cluster.LookupDevice(name) // a listed name always resolves
		out.Devices = append(out.Devices, deviceJSON{Device: d.Device, Perf: d.Perf, Link: d.Link, Network: d.Network, ScaleUpDevices: d.ScaleUpDevices, Note: d.Note})
	}
	for _, name := range cluster.LinkNames() {
		l, _ := cluster.LookupLink(name)
		out.Links = append(out.Links, linkJSON{Name: l.Name, Link: l.Link, SecondsPerByte: l.SecondsPerByte(), Note: l.Note})
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "device\tmemory\tusable\t16-bit TFLOP/s\tfp8 TFLOP/s\tfp32 TFLOP/s\tmemory GB/s\tmatmul eff\tfp8 eff\tmemory eff\tkernel µs\tlink\tnetwork\tscale-up\t")
	for _, d := range out.Devices {
		fp8, fp8eff := "-", "-"
		if d.Perf.FP8FLOPSPerSecond > 0 {
			fp8, fp8eff = fmt.Sprintf("%.0f", d.Perf.FP8FLOPSPerSecond/1e12), fmt.Sprintf("%.2f", d.Perf.FP8Efficiency())
			if d.Perf.MXFP8 {
				fp8 += " mx"
			}
		}
		network, scaleUp := "-", "-"
		if d.Network != "" {
			network = d.Network
		}
		if d.ScaleUpDevices > 0 {
			scaleUp = fmt.Sprint(d.ScaleUpDevices)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%s\t%.1f\t%.0f\t%.2f\t%s\t%.2f\t%.1f\t%s\t%s\t%s\t\n", d.Name, units.Bytes(d.MemoryBytes),
			units.Bytes(d.MemoryLimitBytes(1)), d.FLOPSPerSecond/1e12, fp8, d.Perf.FP32FLOPSPerSecond/1e12,
			d.Perf.MemoryBytesPerSecond/1e9, d.Perf.MatmulEfficiency, fp8eff, d.Perf.MemoryEfficiency, d.Perf.KernelSeconds*1e6, d.Link, network, scaleUp)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "fp8 \"mx\": microscaling MXFP8 at the fp8 rate; scale-up: devices on one link fabric (8 on a board, 72 in an NVL72 rack)")
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "link\talpha µs\tbeta ps/B\tGB/s\t")
	for _, l := range out.Links {
		fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.1f\t\n", l.Name, l.LatencySeconds*1e6, l.SecondsPerByte*1e12, l.BytesPerSecond/1e9)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nsources:")
	for _, d := range out.Devices {
		fmt.Fprintf(stdout, "  %s: %s\n", d.Name, d.Note)
	}
	for _, l := range out.Links {
		fmt.Fprintf(stdout, "  %s: %s\n", l.Name, l.Note)
	}
	return nil
}
