// Package input owns what the translator reads: the Inputs (plain,
// immutable objects), the description of each kind of them (ObjectKinds;
// RouteKinds adds, per route kind, its resource and CRD, parent and
// backend refs and where its status lives: the table sources, informers,
// CRD discovery, the status store and the status writer read, so adding a
// route kind is a row there plus its judging), the Changes sources
// report, the index that finds an object by namespace/name, and the keys
// and sorting helpers every stage shares. It judges nothing, talks to no
// API server and imports nothing of the translator.
package input
