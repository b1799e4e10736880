package analytic

import "slices"

// SameLayers reports whether a and b are equal as reflect.DeepEqual compares them (the
// same length and nil-ness, every field equal by ==, floats too, so NaN is unequal to
// itself; MegatronParams the same elements and nil-ness), without reflection: the
// search compares the estimates of two recomputations layer by layer for every
// configuration it costs (core/search/evaluate's twins). TestSameLayersEveryField holds
// it to every field of Layer.
func SameLayers(a, b []Layer) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if !a[i].same(&b[i]) {
			return false
		}
	}
	return true
}

// same is SameLayers for one layer.
func (l *Layer) same(m *Layer) bool {
	return l.Name == m.Name && l.Kind == m.Kind &&
		l.Params == m.Params && l.ParamBytes == m.ParamBytes && l.GradBytes == m.GradBytes &&
		l.OptimizerBytes == m.OptimizerBytes && l.GradCopyBytes == m.GradCopyBytes && l.FP8WeightBytes == m.FP8WeightBytes &&
		l.FwdFLOPs == m.FwdFLOPs && l.BwdFLOPs == m.BwdFLOPs && l.FwdSeconds == m.FwdSeconds && l.BwdSeconds == m.BwdSeconds &&
		l.SavedActivationBytes == m.SavedActivationBytes && l.OutputBytes == m.OutputBytes && l.TemporaryBytes == m.TemporaryBytes &&
		l.TiedParams == m.TiedParams && l.TensorAllReduceSeconds == m.TensorAllReduceSeconds && l.ContextSeconds == m.ContextSeconds &&
		l.ExpertParams == m.ExpertParams && l.ExpertGradBytes == m.ExpertGradBytes &&
		l.ExpertCommSeconds == m.ExpertCommSeconds && l.ExpertExposedSeconds == m.ExpertExposedSeconds &&
		l.FwdKernels == m.FwdKernels && l.BwdKernels == m.BwdKernels && l.FwdHostSeconds == m.FwdHostSeconds && l.BwdHostSeconds == m.BwdHostSeconds &&
		l.FwdDeviceSeconds == m.FwdDeviceSeconds && l.BwdDeviceSeconds == m.BwdDeviceSeconds && l.ParamTensors == m.ParamTensors &&
		(l.MegatronParams == nil) == (m.MegatronParams == nil) && slices.Equal(l.MegatronParams, m.MegatronParams) &&
		l.FwdTerms == m.FwdTerms && l.BwdTerms == m.BwdTerms &&
		l.usesTied == m.usesTied && l.extraFLOPs == m.extraFLOPs && l.bf16Dropped == m.bf16Dropped &&
		l.fp8Weights == m.fp8Weights && l.fp8ExpertWeights == m.fp8ExpertWeights && l.fp8Gathered == m.fp8Gathered
}
