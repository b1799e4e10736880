package partition

import "fmt"

// ParseObjective reads an objective as String writes it: "compute" or "compute+transfer".
func ParseObjective(s string) (Objective, error) {
	for _, o := range []Objective{MaxCompute, MaxComputePlusTransfer} {
		if s == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("must be %q or %q, got %q", MaxCompute.String(), MaxComputePlusTransfer.String(), s)
}
