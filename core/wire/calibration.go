package wire

// Calibration is a fit of an architecture's device figures to a measured profile of the
// same model (core/request.Calibrate, core/calibrate.Fit): the preset's figures and the
// fitted ones, each measured pass before and after the fit, and the request's
// architecture with the fitted figures.
type Calibration struct {
	Device    string             `json:"device"`
	Framework string             `json:"framework"`
	Preset    CalibrationFigures `json:"preset"`
	Fitted    CalibrationFigures `json:"fitted"`
	// Residuals, one per measured pass.
	Residuals []CalibrationResidual `json:"residuals"`
	// RMSBefore and RMSAfter: the root mean square of the relative errors.
	RMSBefore float64 `json:"rms_error_before"`
	RMSAfter  float64 `json:"rms_error_after"`
	// Iterations of the host/device assignment.
	Iterations int `json:"iterations"`
	// Notes: what the fit could not determine or had to clamp.
	Notes []string `json:"notes,omitempty"`
	// Architecture is the request's model.architecture with the fitted figures: put it in
	// a request to plan with them at other batch sizes, sequence lengths and clusters.
	Architecture *Architecture `json:"architecture"`
}

// CalibrationFigures are what a calibration fits: a device's efficiencies and launch
// cost, and a framework's host costs (model.architecture's fields of the same names).
type CalibrationFigures struct {
	MatmulEfficiency  float64 `json:"matmul_efficiency"`
	MemoryEfficiency  float64 `json:"memory_efficiency"`
	KernelSeconds     float64 `json:"kernel_seconds"`
	HostKernelSeconds float64 `json:"host_kernel_seconds"`
	HostLayerSeconds  float64 `json:"host_layer_seconds"`
}

// CalibrationResidual compares one layer's measured pass with the estimate before and
// after the fit.
type CalibrationResidual struct {
	Layer string `json:"layer"`
	// Pass is forward or backward.
	Pass     string  `json:"pass"`
	Measured float64 `json:"measured_seconds"`
	// Before and After: the estimate with the preset's figures and with the fitted ones.
	Before float64 `json:"before_seconds"`
	After  float64 `json:"after_seconds"`
	// Error is (After - Measured) / Measured.
	Error float64 `json:"error"`
	// HostBound: the fitted host time is longer than the device time.
	HostBound bool `json:"host_bound"`
}
