package ops

import (
	"context"
	"fmt"
	"strings"

	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/request"
)

// calibrateJSON is pipeplan.calibrate's JSON: request.Calibrate of the request (its
// model.architecture) to the profile, the text of a measured profile in pipeplan's native
// model format (as the profiler writes it): the fit (request.Calibration), or an apiError
// naming the bad field ("profile: ..." for the profile's own).
func calibrateJSON(requestJSON, profileText string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	if r.Model.Architecture == nil {
		return mustJSON(errorOf(&model.FieldError{Path: "model.architecture", Reason: "is required: calibration fits an architecture's costs to a measured profile of it"}))
	}
	if len(profileText) == 0 {
		return mustJSON(errorOf(&model.FieldError{Path: "profile", Reason: "is required: the text of a measured profile (pipeplan's native model JSON, as the profiler writes it)"}))
	}
	prof, _, err := load.Model([]byte(profileText))
	if err != nil {
		return mustJSON(profileError(err))
	}
	c, err := request.Calibrate(context.Background(), r, prof)
	if err != nil {
		if fes, ok := model.AsFieldErrors(err); ok && len(fes) > 0 && profileField(fes[0].Path) {
			return mustJSON(profileError(err))
		}
		return mustJSON(errorOf(err))
	}
	return mustJSON(c)
}

// profileField reports whether a field error's path is one of the profile's own
// (layers[3].name, time_unit), not the request's (model.architecture, cluster.device):
// the request's top-level fields, but for layers, which Calibrate does not read.
func profileField(path string) bool {
	if path == "" {
		return false
	}
	head, _, _ := strings.Cut(path, ".")
	head, _, _ = strings.Cut(head, "[")
	switch head {
	case "version", "model", "cluster", "parallelism", "training", "schedule", "objective",
		"memory_proportion", "boundaries", "events":
		return false
	}
	return true
}

// profileError is an error of the profile: its message says so, and its fields are
// under "profile".
func profileError(err error) apiError {
	a := apiError{Error: fmt.Sprintf("profile: %v", err)}
	if fes, ok := model.AsFieldErrors(err); ok {
		for _, fe := range fes {
			p := "profile"
			if fe.Path != "" {
				p += "." + fe.Path
				if fe.Path[0] == '[' {
					p = "profile" + fe.Path
				}
			}
			a.Fields = append(a.Fields, apiField{Path: p, Reason: fe.Reason})
		}
	}
	if len(a.Fields) == 0 {
		a.Fields = []apiField{{Path: "profile", Reason: err.Error()}}
	}
	return a
}
