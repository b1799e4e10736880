package model_test

import (
	"fmt"
	"testing"

	"pipeplan/core/model"
)

// TestWorkingPeakBytes: a microbatch's working peak is its layers' peak where that is at
// least what it keeps, and otherwise what it keeps (a peak of 0 included); in inference
// (nothing kept) it is the peak.
func TestWorkingPeakBytes(t *testing.T) {
	tests := []struct {
		name                   string
		peak, activation, want int64
	}{
		{"temporaries above the activations", 30, 20, 30},
		{"equal", 20, 20, 20},
		{"temporaries below the activations", 12, 20, 20},
		{"no temporaries, one layer", 0, 20, 20},
		{"inference", 7, 0, 7},
		{"nothing", 0, 0, 0},
	}
	for _, tt := range tests {
		if got := model.WorkingPeakBytes(tt.peak, tt.activation); got != tt.want {
			t.Errorf("%s: WorkingPeakBytes(%d, %d) = %d, want %d", tt.name, tt.peak, tt.activation, got, tt.want)
		}
	}
}

// A two-layer stage whose layers keep 4 and 6 GiB for the backward pass and state 1 GiB
// of temporaries each: the running peak, 4 + 1 GiB at the second layer, is below the
// 10 GiB the microbatch holds where its forward ends.
func ExampleWorkingPeakBytes() {
	const gib int64 = 1 << 30
	running := max(0+1*gib, 4*gib+1*gib) // temporaries + activations of the layers before
	fmt.Println(model.WorkingPeakBytes(running, 4*gib+6*gib) / gib)
	// Output: 10
}
