package load_test

import (
	"fmt"

	"pipeplan/core/load"
)

// A PipeDream graph.txt becomes layers in topological order; each node's output is a
// tensor its successors read, and a source node reads a model input of its own size.
func ExampleModel_pipeDream() {
	graph := `node2 -- Conv2d(3, 64) -- forward_compute_time=22.307, backward_compute_time=24.613, activation_size=1644167168.000, parameter_size=7168.000
node1 -- Input -- forward_compute_time=17.972, backward_compute_time=0.000, activation_size=77070336.000, parameter_size=0.000
	node1 -- node2
`
	m, format, err := load.Model([]byte(graph))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(format, m.Inputs[0].ID, m.Inputs[0].Bytes)
	for _, l := range m.Layers {
		fmt.Printf("%s %q %.6fs reads %v\n", l.Name, l.Kind, l.ForwardSeconds+l.BackwardSeconds, l.InputIDs)
	}
	// Output:
	// pipedream node1:input 77070336
	// node1 "Input" 0.017972s reads [node1:input]
	// node2 "Conv2d(3, 64)" 0.046920s reads [node1]
}

// A Graphcore IPUClusterInfo becomes one device per connection entry.
func ExampleCluster_graphcore() {
	info := `{"clock": 1850000000, "memory": 894,
	  "connection": [{"recvGBps": 7, "recvIdleCycle": 50000, "sendGBps": 70, "sendIdleCycle": 3000},
	                 {"recvGBps": 70, "recvIdleCycle": 3000, "sendGBps": 7, "sendIdleCycle": 50000}]}`
	c, err := load.Cluster([]byte(info))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range c.Devices {
		fmt.Printf("%s: %d MiB at %.2f GHz, receive %v GBps + %d cycles, send %v GBps + %d cycles\n",
			d.Name, d.MemoryBytes>>20, d.ClockHz/1e9, d.Recv.GBps, d.Recv.IdleCycles, d.Send.GBps, d.Send.IdleCycles)
	}
	// Output:
	// ipu0: 894 MiB at 1.85 GHz, receive 7 GBps + 50000 cycles, send 70 GBps + 3000 cycles
	// ipu1: 894 MiB at 1.85 GHz, receive 70 GBps + 3000 cycles, send 7 GBps + 50000 cycles
}

// Errors name the field in the source format.
func ExampleModel_errors() {
	_, _, err := load.Model([]byte(`{"layerName": ["a"], "layerInfo": [{"cycle": {"forward": -5}}]}`))
	fmt.Println(err)
	_, _, err = load.Model([]byte("a -- A -- forward_compute_time=1, backward_compute_time=x, activation_size=0, parameter_size=0\n"))
	fmt.Println(err)
	// Output:
	// layerInfo[0].cycle.forward: must be >= 0, got -5
	// line 1: backward_compute_time: must be a number, got "x"
}
