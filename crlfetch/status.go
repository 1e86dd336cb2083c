package crlfetch

import "time"

// PointStatus is one wanted distribution point, for /debug/status.
type PointStatus struct {
	URL        string     `json:"url"`
	FetchedAt  *time.Time `json:"fetchedAt,omitempty"` // the last good fetch
	ThisUpdate *time.Time `json:"thisUpdate,omitempty"`
	NextUpdate *time.Time `json:"nextUpdate,omitempty"`
	Expired    bool       `json:"expired,omitempty"`
	Error      string     `json:"error,omitempty"`
	ErrorSince *time.Time `json:"errorSince,omitempty"`
	NextFetch  time.Time  `json:"nextFetch"`
}

// Status lists the wanted points, by URL.
func (f *Fetcher) Status() []PointStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]PointStatus, 0, len(f.points))
	for _, u := range sortedKeys(f.points) {
		p := f.points[u]
		s := PointStatus{URL: u, NextFetch: p.next}
		if l := p.list; l != nil {
			s.Expired, s.Error = l.Expired, l.Error
			s.FetchedAt, s.ThisUpdate, s.NextUpdate, s.ErrorSince = when(p.fetchedAt), when(l.ThisUpdate), when(l.NextUpdate), when(l.ErrorSince)
		}
		out = append(out, s)
	}
	return out
}

func when(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
