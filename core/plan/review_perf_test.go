package plan

import (
	"fmt"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/estimate"
	"pipeplan/core/model"
	"pipeplan/core/partition"
)

// Transfers that dominate compute: the compute+transfer Pareto walk visits every frontier point.
func reviewTransferHeavy(n int) *model.Model {
	m := &model.Model{}
	for k := 0; k < n; k++ {
		l := model.Layer{Name: fmt.Sprint(k), ForwardSeconds: 1, Outputs: []model.Tensor{{ID: fmt.Sprint("t", k), Bytes: int64(k+1) * 1000}}}
		if k > 0 {
			l.InputIDs = []string{fmt.Sprint("t", k-1)}
		}
		m.Layers = append(m.Layers, l)
	}
	return m
}

func BenchmarkReviewTransferHeavy(b *testing.B) {
	for _, np := range [][2]int{{100, 8}, {200, 16}} {
		m := reviewTransferHeavy(np[0])
		c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 40}, np[1], cluster.Link{BytesPerSecond: 1000}, nil)
		b.Run(fmt.Sprintf("n=%d/p=%d", np[0], np[1]), func(b *testing.B) {
			for b.Loop() {
				e, _ := estimate.New(m, c, estimate.Options{})
				if _, err := partition.Solve(Costs{e}, partition.MaxComputePlusTransfer); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
