package plan

// CORS is a rule's CORS filter: Envoy answers a preflight from an allowed
// origin itself and adds the CORS headers to the backend's responses.
type CORS struct {
	// Origins match the Origin header; an allowed one is echoed back.
	Origins []ValueMatch `json:"origins,omitempty"`
	// Methods and Headers are answered on a preflight; "*" alone echoes
	// what the preflight asks for.
	Methods []string `json:"methods,omitempty"`
	Headers []string `json:"headers,omitempty"`
	// Expose are the response headers scripts may read.
	Expose []string `json:"expose,omitempty"`
	// MaxAge is how long, in seconds, a client may cache a preflight.
	MaxAge      int32 `json:"maxAge,omitempty"`
	Credentials bool  `json:"credentials,omitempty"`
}
