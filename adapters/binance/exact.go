package binance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// decodeExact decodes a JSON object into a struct matching keys to json tags EXACTLY. encoding/json matches keys
// case-insensitively when no field has the exact name, and Binance's WebSocket events use single letters whose case
// is the meaning ("t" open time and "T" close time, "l" low and "L" last trade id, "m" maker and "M" ignore): a
// missing exact field would let the other letter overwrite the value. Nested structs, pointers to structs and slices
// of structs are decoded the same way; other fields use their own UnmarshalJSON. Unknown keys are ignored.
func decodeExact(body []byte, v any, what string) error {
	if t := bytes.TrimSpace(body); len(t) == 0 || string(t) == "null" {
		return fmt.Errorf("%s: %w", what, errEmpty)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("%s: decode target is not a pointer", what)
	}
	if err := exactInto(body, rv.Elem()); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func exactInto(raw json.RawMessage, v reflect.Value) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case v.Kind() == reflect.Struct && !hasUnmarshaler(v):
		if string(raw) == "null" {
			return nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			val, ok := obj[name]
			if !ok {
				continue
			}
			if err := exactInto(val, v.Field(i)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct && !hasUnmarshaler(reflect.New(v.Type().Elem()).Elem()):
		if string(raw) == "null" {
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := exactInto(raw, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		if string(raw) == "null" {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return err
		}
		s := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, it := range items {
			if err := exactInto(it, s.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		v.Set(s)
		return nil
	}
	if !v.CanAddr() {
		return errors.New("unaddressable field")
	}
	return json.Unmarshal(raw, v.Addr().Interface())
}

func hasUnmarshaler(v reflect.Value) bool {
	_, ok := reflect.New(v.Type()).Interface().(json.Unmarshaler)
	return ok
}
