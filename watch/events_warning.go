package watch

// Warning emits a Warning Event with reason and message about ref, through
// the same rate limits and de-duplication as the plugin's own Events. It is
// for Events that no index key names, such as a refused dynamic update on the
// Secret of its TSIG key.
func (e *Events) Warning(ref ObjectRef, reason, message string) {
	e.writer.emit(ref, eventWarning, reason, message)
}
