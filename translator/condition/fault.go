package condition

// AddFault adds one fault to a condition's reason and message, as a
// verdict collects them: the first reason stays unless the new one is
// outranking; messages add up, joined by "; ".
func AddFault[R ~string](reason *R, message *string, r R, msg string, outranking R) {
	if *reason == "" || r == outranking {
		*reason = r
	}
	if *message != "" {
		msg = *message + "; " + msg
	}
	*message = msg
}
