package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pipeplan/core/cluster"
	"pipeplan/core/model"
)

func layers(params ...int64) []model.Layer {
	ls := make([]model.Layer, len(params))
	for i, p := range params {
		ls[i] = model.Layer{Name: fmt.Sprintf("l%d", i), ForwardSeconds: 1, ParamBytes: p}
	}
	return ls
}

func TestExplain(t *testing.T) {
	const MiB = 1 << 20
	dev := cluster.Device{Name: "small", MemoryBytes: 760 * MiB}
	tied := layers(1, 1, 1, 1)
	tied[0].TieGroup, tied[3].TieGroup = "emb", "emb"
	bigTie := layers(400*MiB, 1, 400*MiB)
	bigTie[0].TieGroup, bigTie[2].TieGroup = "w", "w"
	tests := []struct {
		name   string
		layers []model.Layer
		stages int
		want   string
	}{
		{"too few layers", layers(1, 1), 3, "the model has 2 layers but the cluster has 3 stages, and every stage needs at least one layer: use at most 2 stages"},
		{"ties leave too few cuts", tied, 2, "tie groups leave only 0 places to cut the model, and 2 stages need 1: use at most 1 stages"},
		{"one layer too big", layers(1, 1229*MiB, 1), 3, "layer 1 (l1) alone needs 1.2 GiB; device 0 (small) holds 760 MiB"},
		{"tied layers too big", append(bigTie, layers(1)...), 2, "layers 0..2 (l0 .. l2, tied: they must share a stage) need 800 MiB; device 0 (small) holds 760 MiB"},
		{"short overall", layers(700*MiB, 700*MiB, 700*MiB), 2, "need 2.05 GiB, and the 2 devices hold 1.48 GiB together"},
		{"no split", layers(500*MiB, 500*MiB, 1, 500*MiB), 2, "every layer fits a device alone, but every split of 4 layers into 2 stages puts more on some stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &model.Model{Layers: tt.layers}
			c := cluster.Homogeneous(dev, tt.stages, cluster.Link{}, nil)
			_, err := Make(m, c, Options{})
			if !errors.Is(err, ErrNoFit) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Make() = %v\nwant ErrNoFit containing %q", err, tt.want)
			}
		})
	}
}
