package kube

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tlsplane/tlsplane/crds"
)

// tlsplaneJudge admits objects with tlsplane's own crds package, as
// directory mode does.
type tlsplaneJudge struct {
	v *crds.Validator
}

func newTLSPlaneJudge(channel string) (*tlsplaneJudge, error) {
	v, err := crds.Load(channel)
	if err != nil {
		return nil, err
	}
	return &tlsplaneJudge{v: v}, nil
}

// judge admits obj after a trip through JSON and crds.Decode, so it sees
// the numbers a file read by directory mode holds.
func (j *tlsplaneJudge) judge(obj map[string]any) verdict {
	data, err := json.Marshal(obj)
	if err != nil {
		return verdict{message: "encode: " + err.Error()}
	}
	decoded, err := crds.Decode(data)
	if err != nil {
		return verdict{message: "decode: " + err.Error()}
	}
	errs, warnings, err := j.v.Admit(decoded)
	var notServed *crds.NotServedError
	switch {
	case errors.As(err, &notServed):
		return verdict{message: notServed.Error(), warnings: warnings}
	case err != nil:
		return verdict{message: fmt.Sprintf("not admitted: %v", err), warnings: warnings}
	case len(errs) > 0:
		v := verdict{message: errs.ToAggregate().Error(), warnings: warnings}
		for _, e := range errs {
			if e.Field != "" && e.Field != "<nil>" {
				v.fields = append(v.fields, e.Field)
			}
		}
		return v
	}
	return verdict{accepted: true, defaulted: decoded, warnings: warnings}
}
