package dirsource

import (
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlsplane/tlsplane/translator"
)

// setObjects makes parsed what the file at rel defines, and returns the
// keys whose served object may have changed. An object the file defined
// before and still defines the same keeps its pointer, so it is not a
// change: an edit changes what it edits, not the whole file. Within one
// file the first of duplicates wins, as manifests.Merge does.
func (s *Source) setObjects(rel string, st *fileState, parsed translator.Inputs) []objectKey {
	shown := filepath.Join(s.opts.Dir, rel)
	next := make(map[objectKey]metav1.Object, max(len(st.objects), count(&parsed)))
	eachKeyed(&parsed, func(k keyed) {
		if _, dup := next[k.key]; dup {
			s.log.Warn("duplicate object ignored", "reason", fmt.Sprintf("%s: %s %s ignored: already defined in %s", shown, k.key.kind, qualified(k.key), shown))
			return
		}
		if old, ok := st.objects[k.key]; ok && equality.Semantic.DeepEqual(old, k.object) {
			next[k.key] = old
			return
		}
		next[k.key] = k.object
	})
	var touched []objectKey
	for k := range st.objects {
		if _, kept := next[k]; !kept {
			s.holders[k] = deleteHolder(s.holders[k], rel)
			touched = append(touched, k)
		}
	}
	for k, o := range next {
		old, had := st.objects[k]
		if !had {
			s.holders[k] = append(s.holders[k], rel)
		}
		if old != o {
			touched = append(touched, k)
		}
	}
	st.objects = next
	return touched
}

// forget withdraws every object of the file at rel and its state; it
// returns the keys whose served object may have changed.
func (s *Source) forget(rel string) []objectKey {
	st := s.files[rel]
	if st == nil {
		return nil
	}
	touched := make([]objectKey, 0, len(st.objects))
	for k := range st.objects {
		s.holders[k] = deleteHolder(s.holders[k], rel)
		touched = append(touched, k)
	}
	s.held -= st.size
	if st.seen == s.walks {
		s.seen-- // see applyChunk
	}
	delete(s.files, rel)
	delete(s.links, rel)
	s.countsDirty = true
	return touched
}

// keys are the keys of every object the file at rel defines.
func (st *fileState) keys() []objectKey {
	keys := make([]objectKey, 0, len(st.objects))
	for k := range st.objects {
		keys = append(keys, k)
	}
	return keys
}

// resolve serves, for each of keys, the object of the file that wins it,
// and reports whether what is served changed. Files win in path order, as
// `tlsplane translate DIR` merges the same files; kept objects of a path
// that is now a directory come last, so the live manifests that replaced
// them win.
func (s *Source) resolve(keys []objectKey) bool {
	updates := make(map[objectKey]metav1.Object, len(keys))
	for _, k := range keys {
		if _, done := updates[k]; done {
			continue
		}
		rels := s.holders[k]
		if len(rels) == 0 {
			delete(s.holders, k)
			updates[k] = nil
			continue
		}
		winner := rels[0]
		for _, rel := range rels[1:] {
			if s.wins(rel, winner) {
				winner = rel
			}
		}
		for _, rel := range rels {
			if rel != winner {
				s.log.Warn("duplicate object ignored", "reason", fmt.Sprintf("%s: %s %s ignored: already defined in %s",
					filepath.Join(s.opts.Dir, rel), k.kind, qualified(k), filepath.Join(s.opts.Dir, winner)))
			}
		}
		updates[k] = s.files[winner].objects[k]
	}
	return s.view.set(updates)
}

// wins reports whether path a's object is served over path b's.
func (s *Source) wins(a, b string) bool {
	ra, rb := s.files[a].replaced, s.files[b].replaced
	if ra != rb {
		return rb
	}
	return a < b
}

func deleteHolder(rels []string, rel string) []string {
	for i, r := range rels {
		if r == rel {
			return append(rels[:i:i], rels[i+1:]...)
		}
	}
	return rels
}

// qualified is namespace/name, or the name alone for a cluster-scoped object.
func qualified(k objectKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}
