// Package input owns what the translator reads: the Inputs (plain,
// immutable objects), the Changes sources report, the index that finds an
// object by namespace/name, and the keys and sorting helpers every stage
// shares. It judges nothing and imports nothing of the translator.
package input
