package engine

// WithRMPP is withRMPP for the external tests (the RMPP driver's
// conformance run).
var WithRMPP = withRMPP
