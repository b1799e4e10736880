// Package units formats quantities for people: bytes in binary units, times in seconds
// or cycles with a readable scale, rates with SI prefixes. Every front end and report uses it, so one plan reads
// the same everywhere.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"pipeplan/core/model"
)

// Time formats a time in the given unit for people: cycles as "123 cyc", seconds with a
// readable scale ("58.9 µs", "36.20 ms", "1.25 s"). Values beyond those scales (below
// 0.1 µs, from a million seconds or a trillion cycles up) are in scientific notation
// ("1.0e-12 s", "2.5e+300 s", "1.0e+15 cyc") rather than as "0.0 µs" or hundreds of digits.
func Time(v float64, unit model.TimeUnit) string {
	if unit == model.Cycles {
		if v >= 1e12 {
			return fmt.Sprintf("%.1e cyc", v)
		}
		return fmt.Sprintf("%.0f cyc", v)
	}
	switch {
	case v == 0:
		return "0 s"
	case v < 1e-7 || v >= 1e6:
		return fmt.Sprintf("%.1e s", v)
	case v < 1e-3:
		return fmt.Sprintf("%.1f µs", v*1e6)
	case v < 1:
		return fmt.Sprintf("%.2f ms", v*1e3)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.3f", v), "0") + " s"
}

// Bytes formats a byte count for people, to two decimals: "1.2 GiB", "600 MiB", "512 B".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for (v >= 1024 || v <= -1024) && u < len(units)-1 {
		v /= 1024
		u++
	}
	switch {
	case u == 0:
		return fmt.Sprintf("%d B", n)
	}
	s := strings.TrimRight(fmt.Sprintf("%.2f", v), "0")
	return strings.TrimSuffix(s, ".") + " " + units[u]
}

// ratePrefixes are the SI prefixes Rate scales by, a factor of 1000 apart.
var ratePrefixes = []string{"", "k", "M", "G", "T", "P", "E"}

// Rate formats a rate for people, per the given unit ("tokens/s", "samples/s"), to four
// significant digits with an SI prefix: "191.3k tokens/s" rather than "1.913e+05
// tokens/s", "45.67 samples/s", "2.4M tokens/s". Beyond the prefixes (from 1e21 up), and
// for NaN and the infinities, it writes the number in scientific notation. An empty
// unit gives the number alone ("191.3k"), for a column whose heading names the unit.
func Rate(v float64, unit string) string {
	if unit != "" {
		unit = " " + unit
	}
	if v == 0 {
		return "0" + unit
	}
	a, u := math.Abs(v), 0
	// 999.95 and up would round to 1000 at four digits: that is the next prefix's 1.
	for a >= 999.95 && u < len(ratePrefixes)-1 {
		a /= 1000
		u++
	}
	if a >= 999.95 || math.IsNaN(a) || a < 1e-3 {
		return strconv.FormatFloat(v, 'e', 3, 64) + unit
	}
	if v < 0 {
		a = -a
	}
	return strconv.FormatFloat(a, 'g', 4, 64) + ratePrefixes[u] + unit
}

// Count writes n things: "1 stage", "4 stages" (the plural adds an s, as for every noun
// the planner counts: layer, stage, replica, device, microbatch takes es).
func Count(n int64, noun string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
