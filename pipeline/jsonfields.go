package pipeline

import (
	"bytes"
	"encoding/json"
)

// jsonFields is a JSON object whose keys keep their order, for documents
// whose keys come from a table (the route kinds of /debug/status).
type jsonFields []jsonField

type jsonField struct {
	name  string
	value any
}

func (f jsonFields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(kv.name)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(kv.value)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
