package apiservertest

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
)

// obj is a JSON object with ordered keys: Hermes' payload key order is
// part of its wire shape, and the fake reproduces it.
type obj []kv

type kv struct {
	k string
	v any
}

// set replaces or appends a key.
func (o obj) set(k string, v any) obj {
	for i := range o {
		if o[i].k == k {
			o[i].v = v
			return o
		}
	}
	return append(o, kv{k, v})
}

// pyJSON encodes like Python's json.dumps defaults (", " and ": "
// separators), which is what aiohttp's Hermes server sends.
func pyJSON(v any) []byte {
	var b bytes.Buffer
	writePy(&b, v)
	return b.Bytes()
}

func writePy(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case obj:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, e.k)
			b.WriteString(": ")
			writePy(b, e.v)
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := obj{}
		for _, k := range keys {
			o = append(o, kv{k, x[k]})
		}
		writePy(b, o)
	case []string:
		b.WriteByte('[')
		for i, s := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeString(b, s)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
	case json.RawMessage:
		b.Write(x)
	default:
		raw, _ := json.Marshal(x)
		b.Write(raw)
	}
}

func writeString(b *bytes.Buffer, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimRight(buf.Bytes(), "\n"))
}
