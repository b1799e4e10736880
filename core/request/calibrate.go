package request

import (
	"context"
	"fmt"
	"strings"

	"pipeplan/core/analytic"
	"pipeplan/core/calibrate"
	"pipeplan/core/cluster"
	"pipeplan/core/load"
	"pipeplan/core/model"
	"pipeplan/core/wire"
)

// Calibration is a fit of an architecture's device figures to a measured profile of the
// same model (core/calibrate), with the figures as the request's fields.
type Calibration struct {
	// Calibration is the fit as data (its JSON), with the request's model.architecture
	// with the fitted figures.
	wire.Calibration
	// Estimate is the analytic estimate the fit compared the profile with.
	Estimate *analytic.Result `json:"-"`
}

// Calibrate fits the efficiencies and host costs of the request's device and framework
// to profile, a measured profile of the request's architecture (model.architecture).
// What the request leaves out comes from the profile: the cluster's device from its
// measured_on, the microbatch size from its microbatch_size, the sequence length from its
// tokens_per_sample; and a profile that measures each block in two layers (attention and
// MLP) is matched against the architecture split by sublayers, unless the request names
// a split. The whole model is costed on one device.
//
// Errors name their field: the request's by its path ("model.architecture"), the
// profile's under "profile" ("profile.layers[5].name", "profile.time_unit"), so that
// every front end tells the two apart alike.
func Calibrate(ctx context.Context, r *wire.Request, profile *model.Model) (*Calibration, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r == nil || r.Model.Architecture == nil {
		return nil, &model.FieldError{Path: "model.architecture", Reason: "is required: calibration fits an architecture's costs to a profile of it"}
	}
	if profile == nil {
		return nil, &model.FieldError{Path: "profile", Reason: "is required: a measured profile of the architecture"}
	}
	if err := profile.Validate(); err != nil {
		return nil, ProfileError(err)
	}
	c := clone(r)
	a := *c.Model.Architecture
	c.Model.Architecture = &a
	if c.Cluster.Device == "" && len(c.Cluster.Document) == 0 && profile.MeasuredOn != nil {
		// The profile's device, which must be a preset to fit: a CPU run is not, and the
		// error is the profile's, not a cluster.device nobody gave.
		if _, err := cluster.LookupDevice(profile.MeasuredOn.Name); err != nil {
			return nil, &model.FieldError{Path: "profile.measured_on.name", Reason: fmt.Sprintf("the profile was measured on %q, which is no device preset (pipeplan devices lists them): name the device to fit in cluster.device (--device)", profile.MeasuredOn.Name)}
		}
		c.Cluster.Device = profile.MeasuredOn.Name
	}
	if c.Cluster.Device == "" && len(c.Cluster.Document) == 0 {
		return nil, &model.FieldError{Path: "cluster.device", Reason: "is required: the profile does not say what it was measured on (measured_on)"}
	}
	if c.Parallelism.Pipeline == 0 {
		c.Parallelism.Pipeline = 1
	}
	if c.Schedule.MicrobatchSize == 0 {
		c.Schedule.MicrobatchSize = profile.MicrobatchSize
	}
	if a.Seq == 0 {
		a.Seq = profile.TokensPerSample
	}
	p, err := prepare(c)
	if err != nil {
		return nil, err
	}
	if a.Split == "" && sublayered(p.est, profile) {
		a.Split = string(analytic.Sublayers)
		if p, err = prepare(c); err != nil {
			return nil, err
		}
	}
	if p.est == nil {
		return nil, &model.FieldError{Path: "model.architecture", Reason: "is required"}
	}
	fit, err := calibrate.Fit(p.est, p.target, profile)
	if err != nil {
		return nil, ProfileError(err)
	}
	f := fit.Fitted
	arch := *p.req.Model.Architecture
	arch.MatmulEfficiency, arch.MemoryEfficiency = f.MatmulEfficiency, f.MemoryEfficiency
	arch.KernelSeconds, arch.HostKernelSeconds, arch.HostLayerSeconds = &f.KernelSeconds, &f.HostKernelSeconds, &f.HostLayerSeconds
	out := &Calibration{Calibration: wire.Calibration{Device: fit.Device, Framework: fit.Framework,
		Preset: wire.CalibrationFigures(fit.Preset), Fitted: wire.CalibrationFigures(fit.Fitted), RMSBefore: fit.RMSBefore,
		RMSAfter: fit.RMSAfter, Iterations: fit.Iterations, Notes: fit.Notes, Architecture: &arch}, Estimate: p.est}
	if fit.Residuals != nil {
		out.Residuals = make([]wire.CalibrationResidual, len(fit.Residuals))
		for i, r := range fit.Residuals {
			out.Residuals[i] = wire.CalibrationResidual(r)
		}
	}
	return out, nil
}

// CalibrateText is Calibrate of a profile given as a file's text (any model format
// core/load reads; the profiler writes pipeplan's native JSON). An empty text, or one
// that does not load, is an error under "profile".
func CalibrateText(ctx context.Context, r *wire.Request, profileText []byte) (*Calibration, error) {
	if r == nil || r.Model.Architecture == nil {
		return nil, &model.FieldError{Path: "model.architecture", Reason: "is required: calibration fits an architecture's costs to a profile of it"}
	}
	if len(profileText) == 0 {
		return nil, &model.FieldError{Path: "profile", Reason: "is required: the text of a measured profile (pipeplan's native model JSON, as the profiler writes it)"}
	}
	prof, _, err := load.Model(profileText)
	if err != nil {
		return nil, ProfileError(err)
	}
	return Calibrate(ctx, r, prof)
}

// ProfileError puts an error of a profile's own fields under "profile": each field
// error's path is prefixed ("layers[3].name" becomes "profile.layers[3].name", a path
// of its own "profile"), and an error without fields becomes one on "profile".
func ProfileError(err error) error {
	under := func(path string) string {
		switch {
		case path == "":
			return "profile"
		case strings.HasPrefix(path, "["):
			return "profile" + path
		}
		return "profile." + path
	}
	fes, ok := model.AsFieldErrors(err)
	if !ok || len(fes) == 0 {
		return &model.FieldError{Path: "profile", Reason: err.Error()}
	}
	out := make(model.Errors, len(fes))
	for i, fe := range fes {
		out[i] = &model.FieldError{Path: under(fe.Path), Reason: fe.Reason}
	}
	return out
}

// sublayered reports whether the profile measures each of the estimate's blocks in two
// layers (calibrate.Match sums them against one).
func sublayered(est *analytic.Result, prof *model.Model) bool {
	if est == nil {
		return false
	}
	groups, err := calibrate.Match(est, prof)
	if err != nil {
		return false
	}
	blocks := 0
	for _, g := range groups {
		if g.EstimateEnd-g.EstimateFirst == 1 && est.Layers[g.EstimateFirst].Kind == "block" {
			if g.ProfileEnd-g.ProfileFirst != 2 {
				return false
			}
			blocks++
		}
	}
	return blocks > 0
}
