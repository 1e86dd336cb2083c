package xds

// fewNames is how many names seenNames compares one by one before it
// builds a map: a change usually touches a few resources of a type, and
// every stream answers every change.
const fewNames = 8

// seenNames is the set of names an answer has already taken, so a name
// both changed and pending (or changed in several generations) is sent
// once. The zero value is empty.
type seenNames struct {
	few  [fewNames]string // the first len names, while many is nil
	len  int
	many map[string]struct{}
}

// newSeenNames is a set for about n names: without a map when they are few.
func newSeenNames(n int) seenNames {
	if n > fewNames {
		return seenNames{many: make(map[string]struct{}, n)}
	}
	return seenNames{}
}

// add reports whether name is new to the set, and adds it.
func (s *seenNames) add(name string) bool {
	if s.many != nil {
		if _, ok := s.many[name]; ok {
			return false
		}
		s.many[name] = struct{}{}
		return true
	}
	for _, n := range s.few[:s.len] {
		if n == name {
			return false
		}
	}
	if s.len < fewNames {
		s.few[s.len] = name
		s.len++
		return true
	}
	s.many = make(map[string]struct{}, 2*fewNames)
	for _, n := range s.few {
		s.many[n] = struct{}{}
	}
	s.many[name] = struct{}{}
	return true
}
