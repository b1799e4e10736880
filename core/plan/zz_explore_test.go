package plan

import (
	"os"
	"testing"
	"time"

	"pipeplan/core/cluster"
	"pipeplan/core/load"
)

func TestZZExplore(t *testing.T) {
	for _, name := range []string{"resnet50", "gnmt", "vgg16", "alexnet"} {
		data, _ := os.ReadFile("../load/testdata/pipedream/" + name + ".graph.txt")
		m, _, err := load.Model(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int{2, 4, 8, 16} {
			c := cluster.Homogeneous(cluster.Device{MemoryBytes: 1 << 50}, p, cluster.Link{}, nil)
			t0 := time.Now()
			a, err := Make(m, c, Options{})
			t1 := time.Now()
			g, err2 := Make(m, c, Options{Graph: true})
			t2 := time.Now()
			if err != nil || err2 != nil {
				t.Log(name, p, err, err2)
				continue
			}
			t.Logf("%s p=%d chain %.6f (%v) graph %.6f (%v) split=%q fb=%v order=%v", name, p, a.Bottleneck, t1.Sub(t0), g.Bottleneck, t2.Sub(t1), g.Split, g.GraphFallback, g.LayerOrder != nil)
		}
	}
}
