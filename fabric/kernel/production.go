package kernel

// Production reports true: a kernel Transport is on a real fabric, where
// the engine refuses Set methods unless the run allows them
// (engine.Production).
func (t *Transport) Production() bool { return true }
