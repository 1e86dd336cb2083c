package snapshots

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// A Feed is what a fleet's xDS streams read, delta and SotW: per type, the served
// resources with their versions, and a log of which names changed at which
// generation. A stream remembers the generation it last caught up with and
// reads only the names changed since, so an update costs each stream its
// size, not the fleet's, and a request that changes nothing costs nothing.
// (go-control-plane's delta caches walk every subscribed resource and build
// a version map of them per request and per stream: at 10,000 clusters,
// that was most of the server's CPU and memory.)
type Feed struct {
	mu      sync.RWMutex
	gen     uint64
	tables  map[string]*feedTable
	changed chan struct{} // closed, then replaced, by every update
	shared  *fullAnswers  // the Publisher's, or nil
	entries *feedEntries  // the Publisher's, or nil
}

// feedTable is one type's share of a Feed.
type feedTable struct {
	typeURL string
	version string // the type's content version: system_version_info
	entries map[string]*FeedEntry
	// log lists, by generation, the names each update added, changed or
	// removed; it is complete for generations after logFrom.
	log     []feedChange
	logFrom uint64

	fullMu  sync.Mutex
	full    *FullAnswer // every entry, encoded; nil once an update changes the type
	fullAny *FullAnswer // the same as SotW resources (EncodedAny); reset with full
	shared  *fullAnswers
	pool    *feedEntries
}

// FullAnswer is every entry of a type, sorted by name and encoded back to
// back: the first answer to a wildcard subscription, which every stream
// connecting before the type changes again shares (and, for SotW, every
// answer to a wildcard CDS or LDS subscription at this content).
type FullAnswer struct {
	Names    []string
	Versions []string // of each name: what a NACK compares with the last ACK
	Encoded  []byte
}

type feedChange struct {
	gen  uint64
	name string
}

// FeedEntry is one served resource. Resource is never mutated; its bytes
// are marshalled once, on first send, and shared by every stream.
type FeedEntry struct {
	Name, Version string
	Resource      types.Resource
	// route puts a route configuration's bytes together from its virtual
	// hosts' (routewire.go); nil: marshal Resource.
	route *routeWire

	once    sync.Once
	encoded []byte
	err     error

	anyOnce    sync.Once
	encodedAny []byte
	anyErr     error
}

// Encoded is the entry as one element of a DeltaDiscoveryResponse's
// resources (field 2): tag, length and a discovery Resource{name, version,
// resource}, marshalled once. Protobuf lets a message be the concatenation
// of its fields, so every stream's response can carry these very bytes.
func (e *FeedEntry) Encoded() ([]byte, error) {
	e.once.Do(func() {
		deterministic := proto.MarshalOptions{Deterministic: true}
		var value *anypb.Any
		if value, e.err = e.asAny(); e.err != nil {
			return
		}
		r, err := deterministic.Marshal(&discoveryv3.Resource{Name: e.Name, Version: e.Version, Resource: value})
		if err != nil {
			e.err = err
			return
		}
		e.encoded = protowire.AppendBytes(protowire.AppendTag(nil, deltaResourcesField, protowire.BytesType), r)
	})
	return e.encoded, e.err
}

// EncodedAny is the entry as one element of a (SotW) DiscoveryResponse's
// resources (field 2): tag, length and a google.protobuf.Any, marshalled
// once and shared by every stream like Encoded.
func (e *FeedEntry) EncodedAny() ([]byte, error) {
	e.anyOnce.Do(func() {
		deterministic := proto.MarshalOptions{Deterministic: true}
		var value *anypb.Any
		if value, e.anyErr = e.asAny(); e.anyErr != nil {
			return
		}
		b, err := deterministic.Marshal(value)
		if err != nil {
			e.anyErr = err
			return
		}
		e.encodedAny = protowire.AppendBytes(protowire.AppendTag(nil, sotwResourcesField, protowire.BytesType), b)
	})
	return e.encodedAny, e.anyErr
}

// asAny is the entry's resource in an Any, a route configuration's from
// its virtual hosts' bytes.
func (e *FeedEntry) asAny() (*anypb.Any, error) {
	if e.route != nil {
		b, err := e.route.bytes()
		if err != nil {
			return nil, err
		}
		return &anypb.Any{TypeUrl: anyTypePrefix + string(e.Resource.ProtoReflect().Descriptor().FullName()), Value: b}, nil
	}
	value := &anypb.Any{}
	err := anypb.MarshalFrom(value, e.Resource, proto.MarshalOptions{Deterministic: true})
	return value, err
}

// anyTypePrefix is what anypb.MarshalFrom puts before a message's name.
const anyTypePrefix = "type.googleapis.com/"

// deltaResourcesField is DeltaDiscoveryResponse.resources; sotwResourcesField
// is DiscoveryResponse.resources.
const (
	deltaResourcesField = 2
	sotwResourcesField  = 2
)

// minLog is the fewest changes a type's log keeps; beyond it the log keeps
// about twice the type's resources, so memory follows the served set while
// a stream a few updates behind still catches up from the log.
const minLog = 4096

// newFeed is an empty feed; shared and entries (may be nil) lend and take
// its full answers and its entries.
func newFeed(shared *fullAnswers, entries *feedEntries) *Feed {
	return &Feed{tables: map[string]*feedTable{}, changed: make(chan struct{}), shared: shared, entries: entries}
}

// update makes snap the feed's content: one generation, logging the names
// whose version differs from what was served.
func (f *Feed) update(snap *servedSnapshot) { f.refresh(snap, nil) }

// patch is update when only the named resources (per type) can differ
// from what the feed holds: it costs the names, not the snapshot.
func (f *Feed) patch(snap *servedSnapshot, names map[string][]string) { f.refresh(snap, names) }

// refresh is update (names nil) or patch.
func (f *Feed) refresh(snap *servedSnapshot, names map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	for _, typeURL := range servedTypes {
		t := f.tables[typeURL]
		if t == nil {
			t = &feedTable{typeURL: typeURL, entries: map[string]*FeedEntry{}, logFrom: f.gen - 1, shared: f.shared, pool: f.entries}
			f.tables[typeURL] = t
		}
		if t.version == snap.GetVersion(typeURL) {
			continue // a type's version hashes all of its resources' versions
		}
		t.version, t.full, t.fullAny = snap.GetVersion(typeURL), nil, nil
		if names == nil {
			for name := range snap.byType[typeURL] {
				t.set(f.gen, snap, typeURL, name)
			}
			for name := range t.entries {
				t.set(f.gen, snap, typeURL, name)
			}
		} else {
			for _, name := range names[typeURL] {
				t.set(f.gen, snap, typeURL, name)
			}
		}
		t.trim()
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// set brings one name up to snap: added, changed (a new version) or
// removed, and logged; nothing when the feed holds it already.
func (t *feedTable) set(gen uint64, snap *servedSnapshot, typeURL, name string) {
	r, served := snap.byType[typeURL][name]
	old := t.entries[name]
	switch {
	case !served && old == nil:
		return
	case !served:
		delete(t.entries, name)
	default:
		version := snap.VersionMap[typeURL][name]
		if old != nil && old.Version == version {
			return
		}
		t.entries[name] = t.pool.entry(r, version, func() *FeedEntry {
			e := &FeedEntry{Name: name, Version: version, Resource: r}
			if typeURL == resource.RouteType {
				e.route = snap.routeWires[name] // a listener may have the same name
			}
			return e
		})
	}
	t.log = append(t.log, feedChange{gen: gen, name: name})
}

// trim drops the older half of a log grown past its bound, whole
// generations at a time.
func (t *feedTable) trim() {
	if len(t.log) <= max(minLog, 2*len(t.entries)) {
		return
	}
	cut := len(t.log) / 2
	for cut < len(t.log) && t.log[cut].gen == t.log[cut-1].gen {
		cut++
	}
	t.logFrom = t.log[cut-1].gen
	t.log = append([]feedChange(nil), t.log[cut:]...)
}

// Changed is closed by the next update after the call.
func (f *Feed) Changed() <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.changed
}

// FeedView is a consistent read of one type of a Feed at one generation.
type FeedView struct {
	Gen     uint64
	Version string
	table   *feedTable
}

// Entry is the named resource, or nil when it is not served.
func (v FeedView) Entry(name string) *FeedEntry {
	if v.table == nil {
		return nil
	}
	return v.table.entries[name]
}

// Each calls fn for every served resource, in no particular order.
func (v FeedView) Each(fn func(*FeedEntry)) {
	if v.table == nil {
		return
	}
	for _, e := range v.table.entries {
		fn(e)
	}
}

// ChangedSince lists the names added, changed or removed after generation
// since, each once; ok is false when the log no longer reaches back that far.
func (v FeedView) ChangedSince(since uint64) (names []string, ok bool) {
	if v.table == nil {
		return nil, true
	}
	if since < v.table.logFrom {
		return nil, false
	}
	log := v.table.log
	// The log is in generation order: the changes after since are its tail.
	i := len(log)
	for i > 0 && log[i-1].gen > since {
		i--
	}
	seen := make(map[string]bool, len(log)-i)
	for _, c := range log[i:] {
		if !seen[c.name] {
			seen[c.name] = true
			names = append(names, c.name)
		}
	}
	return names, true
}

// Full is every entry of the view, encoded once per content of the type.
func (v FeedView) Full() (*FullAnswer, error) {
	if v.table == nil {
		return &FullAnswer{}, nil
	}
	return v.full(&v.table.full, false, (*FeedEntry).Encoded)
}

// FullAny is Full for SotW: every entry as DiscoveryResponse resources
// (EncodedAny), built once per content of the type and shared by every
// stream it answers.
func (v FeedView) FullAny() (*FullAnswer, error) {
	if v.table == nil {
		return &FullAnswer{}, nil
	}
	return v.full(&v.table.fullAny, true, (*FeedEntry).EncodedAny)
}

// full returns *cached, taking it from another feed of the same content
// or building it from every entry with encode first.
func (v FeedView) full(cached **FullAnswer, sotw bool, encode func(*FeedEntry) ([]byte, error)) (*FullAnswer, error) {
	t := v.table
	t.fullMu.Lock() // readers share the feed's read lock; updates exclude them
	defer t.fullMu.Unlock()
	if *cached != nil {
		return *cached, nil
	}
	entries := make([]*FeedEntry, 0, len(t.entries))
	for _, e := range t.entries {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *FeedEntry) int { return strings.Compare(a.Name, b.Name) })
	key := fullKey{typeURL: t.typeURL, version: t.version, sotw: sotw}
	if full := t.shared.lookup(key, entries); full != nil {
		*cached = full
		return full, nil
	}
	full := &FullAnswer{Names: make([]string, 0, len(entries)), Versions: make([]string, 0, len(entries))}
	for _, e := range entries {
		b, err := encode(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name, err)
		}
		full.Names = append(full.Names, e.Name)
		full.Versions = append(full.Versions, e.Version)
		full.Encoded = append(full.Encoded, b...)
	}
	*cached = full
	t.shared.store(key, full)
	return full, nil
}

// Read calls fn with a view of typeURL that no update changes meanwhile.
// fn must not block: updates wait for it.
func (f *Feed) Read(typeURL string, fn func(FeedView)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tables[typeURL]
	v := FeedView{Gen: f.gen, table: t}
	if t != nil {
		v.Version = t.version
	}
	fn(v)
}
