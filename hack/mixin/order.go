package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Jsonnet keeps no field order, so a rendered dashboard would come out with sorted keys.
// The dashboards' sources are Grafana's JSON in mixin/dashboards, whose order (uid and title
// first, panels as Grafana exports them) is what people read and diff. writeOrdered lays the
// rendered value out in its source's order: keys the source has come in its order, keys only
// the rendering has follow, sorted. With the defaults that reproduces the source byte for byte.

// shape is the key order of one JSON value and of everything inside it.
type shape struct {
	keys  []string
	field map[string]*shape
	elem  []*shape
}

// readShape decodes the key order of a JSON document.
func readShape(b []byte) (*shape, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	s, err := shapeOf(dec)
	if err != nil {
		return nil, fmt.Errorf("read key order: %w", err)
	}
	return s, nil
}

func shapeOf(dec *json.Decoder) (*shape, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	s := &shape{}
	switch tok {
	case json.Delim('{'):
		s.field = map[string]*shape{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string)
			if s.field[key], err = shapeOf(dec); err != nil {
				return nil, err
			}
			s.keys = append(s.keys, key)
		}
	case json.Delim('['):
		for dec.More() {
			e, err := shapeOf(dec)
			if err != nil {
				return nil, err
			}
			s.elem = append(s.elem, e)
		}
	default:
		return s, nil
	}
	_, err = dec.Token() // the closing delimiter
	return s, err
}

// writeOrdered writes v (decoded with UseNumber) with two-space indents, following ref
// where it has an order (nil: sorted keys).
func writeOrdered(buf *bytes.Buffer, v any, ref *shape, indent string) error {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			buf.WriteString("{}")
			return nil
		}
		var keys, rest []string
		var fields map[string]*shape
		if ref != nil {
			fields = ref.field
			for _, k := range ref.keys {
				if _, ok := x[k]; ok {
					keys = append(keys, k)
				}
			}
		}
		for k := range x {
			if _, ok := fields[k]; !ok {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		buf.WriteString("{\n")
		for i, k := range append(keys, rest...) {
			buf.WriteString(indent + "  ")
			writeString(buf, k)
			buf.WriteString(": ")
			if err := writeOrdered(buf, x[k], fields[k], indent+"  "); err != nil {
				return err
			}
			if i < len(x)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "}")
	case []any:
		if len(x) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteString("[\n")
		for i, e := range x {
			var er *shape
			if ref != nil && i < len(ref.elem) {
				er = ref.elem[i]
			}
			buf.WriteString(indent + "  ")
			if err := writeOrdered(buf, e, er, indent+"  "); err != nil {
				return err
			}
			if i < len(x)-1 {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "]")
	case string:
		writeString(buf, x)
	case json.Number:
		// go-jsonnet prints numbers with 17 digits (0.9 as 0.90000000000000002); JSON
		// editors, Grafana included, write the shortest form that reads back the same.
		f, err := x.Float64()
		if err != nil {
			return err
		}
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		buf.Write(b)
	default: // bool, nil
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// writeString quotes s as encoding/json does, but leaves < > & readable (PromQL is full of them).
func writeString(buf *bytes.Buffer, s string) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.WriteString(strings.TrimSuffix(b.String(), "\n"))
}
