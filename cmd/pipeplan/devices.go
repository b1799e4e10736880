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
	Note string       `json:"note"`
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
		out.Devices = append(out.Devices, deviceJSON{Device: d.Device, Perf: d.Perf, Link: d.Link, Note: d.Note})
	}
	for _, name := range cluster.LinkNames() {
		l, _ := cluster.LookupLink(name)
		out.Links = append(out.Links, linkJSON{Name: l.Name, Link: l.Link, SecondsPerByte: l.SecondsPerByte(), Note: l.Note})
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "device\tmemory\tusable\t16-bit TFLOP/s\tfp32 TFLOP/s\tmemory GB/s\tmatmul eff\tmemory eff\tkernel µs\tlink\t")
	for _, d := range out.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.1f\t%.0f\t%.2f\t%.2f\t%.1f\t%s\t\n", d.Name, units.Bytes(d.MemoryBytes),
			units.Bytes(d.MemoryLimitBytes(1)), d.FLOPSPerSecond/1e12, d.Perf.FP32FLOPSPerSecond/1e12,
			d.Perf.MemoryBytesPerSecond/1e9, d.Perf.MatmulEfficiency, d.Perf.MemoryEfficiency, d.Perf.KernelSeconds*1e6, d.Link)
	}
	tw.Flush()
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
