package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// forkCountRangeWords refuse a fork's count below 1.
const forkCountRangeWords = "count is how many boxes to fork into, 1 or more; leave it out for one."

// countSent says whether a fork's body sends count (null aside). A count
// left out is one fork, and the field's zero cannot tell that from a 0
// sent, which openapi.json's minimum of 1 refuses; so it is told apart
// here, before the decode. It reads at most the body's cap, and leaves the
// body to the decode as it came, its error too.
func countSent(r *http.Request) bool {
	if r.Body == nil {
		return false
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(raw), errReader{err}, r.Body))
	var v struct {
		Count json.RawMessage `json:"count"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	return len(v.Count) > 0 && string(v.Count) != "null"
}
