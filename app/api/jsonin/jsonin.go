package jsonin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Refusal is a body refused, in words; TooLarge is set for one over the
// cap, which the API answers with its own code.
type Refusal struct {
	TooLarge bool
	Words    string
}

func (r *Refusal) Error() string { return r.Words }

func invalid(format string, args ...any) error {
	return &Refusal{Words: fmt.Sprintf(format, args...)}
}

// Decode reads a JSON object from the body into v: one value only, no
// unknown fields. maxBytes is the cap the server's reader holds the body
// to, said in the refusal of a body over it.
func Decode(r *http.Request, v any, takes string, maxBytes int64) error {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Refusal{TooLarge: true, Words: fmt.Sprintf("The request's body is over %d KiB.", maxBytes>>10)}
	}
	if err != nil {
		return invalid("boxsnap could not read the request's body.")
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return invalid("%s", EmptyBodyWords(takes))
	}
	if strings.Contains(strings.ToLower(string(body)), `\u0000`) {
		return invalid("Text in a request cannot hold a NUL character.")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, takes)
	}
	if dec.More() {
		return invalid("The request's body holds more than one JSON value: send one object with %s.", takes)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("The request's body holds more than one JSON value: send one object with %s.", takes)
	}
	return nil
}

func decodeError(err error, takes string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return invalid("The request's body is not valid JSON: send one object with %s.", takes)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return invalid("The request's body must be a JSON object with %s, not %s.", takes, article(typ.Value))
		}
		return invalid("%s must be %s, not %s.", typ.Field, typeWords(typ.Type.Kind().String()), article(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return invalid("This takes %s: it does not know the field %s.", takes, field)
	}
	return invalid("The request's body is not valid JSON: send one object with %s.", takes)
}

func typeWords(kind string) string {
	switch kind {
	case "bool":
		return "true or false"
	case "string":
		return "text"
	case "int", "int64", "int32", "uint", "uint64":
		return "a whole number"
	case "float64":
		return "a number"
	case "slice":
		return "a list"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "of another type"
}

func article(jsonType string) string {
	switch jsonType {
	case "object", "array":
		return "an " + jsonType
	case "number", "string", "bool":
		return "a " + jsonType
	}
	// A number sent where a whole one goes: a fraction, or one past the
	// field's range, said as it was sent.
	if lit, ok := strings.CutPrefix(jsonType, "number "); ok {
		if f, err := strconv.ParseFloat(lit, 64); err == nil && f == math.Trunc(f) {
			return lit + ", which is out of range"
		}
		return lit
	}
	if strings.HasPrefix(jsonType, "number") {
		return "a number that does not fit"
	}
	return jsonType
}

// EmptyBodyWords refuses an empty body, naming what the endpoint takes.
func EmptyBodyWords(takes string) string {
	return fmt.Sprintf("The request's body is empty: send a JSON object with %s.", takes)
}
