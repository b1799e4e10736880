package share_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"pipeplan/share"
)

// The API over a store in memory, called with the client: a request is stored under its
// content id, and the same request posted again gets the same id.
func Example() {
	srv := httptest.NewServer(share.NewHandler(share.Config{Store: &share.MemStore{}, Plan: share.CorePlanner}))
	defer srv.Close()
	c := share.Client{Server: srv.URL}
	ctx := context.Background()
	req := `{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100-80gb", "count": 4}, "parallelism": {"pipeline": 4}}`
	s, err := c.Share(ctx, []byte(req))
	if err != nil {
		panic(err)
	}
	again, _ := c.Share(ctx, []byte(req))
	doc, err := c.Open(ctx, s.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println("id:", len(s.ID), "hex digits; the same again:", again.ID == s.ID)
	fmt.Println("stored under it:", doc.ID == s.ID, len(doc.Request) > 0, len(doc.Result) > 0)

	_, err = c.Share(ctx, []byte(`{"version": 1, "model": {"example": "gpt2-medium"}, "cluster": {"device": "a100", "count": 4}}`))
	fmt.Println(err)
	// Output:
	// id: 64 hex digits; the same again: true
	// stored under it: true true true
	// invalid request: cluster.device: unknown device "a100"; known devices: a100-40gb, a100-80gb, b200, b300, bow, gaudi3, gb200, gb300, gc200, h100-96gb-500w, h100-sxm, h200, mi300x, mi325x, mi355x, tpu-v4, tpu-v5e, tpu-v5p, tpu-v6e, trainium2
}
