package ops

import (
	"context"

	"pipeplan/core/request"
)

// calibrateJSON is pipeplan.calibrate's JSON: request.CalibrateText of the request (its
// model.architecture) to the profile, the text of a measured profile in pipeplan's native
// model format (as the profiler writes it): the fit (request.Calibration), or an apiError
// naming the bad fields, the profile's under "profile" (core's paths).
func calibrateJSON(requestJSON, profileText string) string {
	r, err := request.Decode([]byte(requestJSON))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	c, err := request.CalibrateText(context.Background(), r, []byte(profileText))
	if err != nil {
		return mustJSON(errorOf(err))
	}
	return mustJSON(c)
}
