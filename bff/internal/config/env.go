package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

// applyEnv walks the keys of the config and applies EXHUB_<PATH> overrides (and EXHUB_<PATH>_FILE for secrets),
// then the per-exchange ones.
func applyEnv(c *Config, lookup func(string) (string, bool)) error {
	var errs []error
	walkKeys(reflect.ValueOf(c).Elem(), "", func(path string, v reflect.Value) {
		name := EnvName(path)
		s, ok := lookup(name)
		if v.Type() == secretType {
			file, fromFile := lookup(name + "_FILE")
			switch {
			case fromFile && ok:
				errs = append(errs, fmt.Errorf("config: %s: both %s and %s_FILE are set; set one", path, name, name))
				return
			case fromFile:
				b, err := os.ReadFile(file)
				if err != nil {
					errs = append(errs, fmt.Errorf("config: %s (env %s_FILE): %w", path, name, err))
					return
				}
				s, ok = strings.TrimRight(string(b), "\r\n"), true
			}
		}
		if !ok {
			return
		}
		if err := setValue(v, s); err != nil {
			errs = append(errs, fmt.Errorf("config: %s (env %s): %w", path, name, err))
		}
	})
	for i := range c.Exchanges {
		e := &c.Exchanges[i]
		prefix := exchangeEnvPrefix(e.Slug)
		for field, dst := range map[string]*string{
			"PLUGIN": &e.Plugin, "SHA256": &e.SHA256, "STATUS": &e.Status, "NAME": &e.Name, "WEBSITE": &e.Website,
		} {
			if s, ok := lookup(prefix + field); ok {
				*dst = s
			}
		}
		if s, ok := lookup(prefix + "ENV_ALLOW"); ok {
			e.EnvAllow = SplitList(s)
		}
		// Settings: EXHUB_EXCHANGE_<SLUG>_SETTINGS="key=value,key=value" adds or replaces keys; then
		// EXHUB_EXCHANGE_<SLUG>_SETTING_<KEY> replaces the value of a key that is already set.
		if s, ok := lookup(prefix + "SETTINGS"); ok && strings.TrimSpace(s) != "" {
			for _, kv := range strings.Split(s, ",") {
				k, v, found := strings.Cut(kv, "=")
				k = strings.TrimSpace(k)
				if !found || k == "" {
					errs = append(errs, fmt.Errorf("config: exchanges[%d].settings (env %sSETTINGS): %q is not key=value", i, prefix, kv))
					continue
				}
				if e.Settings == nil {
					e.Settings = map[string]string{}
				}
				e.Settings[k] = strings.TrimSpace(v)
			}
		}
		for k := range e.Settings {
			if s, ok := lookup(prefix + "SETTING_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(k))); ok {
				e.Settings[k] = s
			}
		}
	}
	return errors.Join(errs...)
}

func exchangeEnvPrefix(slug string) string {
	return "EXHUB_EXCHANGE_" + strings.ToUpper(strings.ReplaceAll(slug, "-", "_")) + "_"
}

// EnvName is the environment variable that overrides the YAML key path ("http.addr" -> "EXHUB_HTTP_ADDR").
func EnvName(path string) string {
	return "EXHUB_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

var (
	durationType   = reflect.TypeFor[Duration]()
	goDurationType = reflect.TypeFor[time.Duration]()
	secretType     = reflect.TypeFor[secret.Secret]()
)

// walkKeys calls fn for every key the environment can set: scalars (string, int, bool, durations), lists of strings
// and secrets, in nested sections too (inline ones without a path segment of their own).
func walkKeys(v reflect.Value, prefix string, fn func(path string, v reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := strings.Split(f.Tag.Get("yaml"), ",")
		name, inline := tag[0], strings.Contains(f.Tag.Get("yaml"), ",inline")
		if name == "-" || (name == "" && !inline) {
			continue
		}
		path := prefix
		if !inline {
			path = name
			if prefix != "" {
				path = prefix + "." + name
			}
		}
		fv := v.Field(i)
		switch {
		case f.Type == durationType, f.Type == goDurationType, f.Type == secretType:
			fn(path, fv)
		case fv.Kind() == reflect.Struct:
			walkKeys(fv, path, fn)
		case fv.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
			fn(path, fv)
		case fv.Kind() == reflect.String, fv.Kind() == reflect.Int, fv.Kind() == reflect.Int64, fv.Kind() == reflect.Bool:
			fn(path, fv)
		}
	}
}

func setValue(v reflect.Value, s string) error {
	switch {
	case v.Type() == secretType:
		v.Set(reflect.ValueOf(secret.New(s)))
		return nil
	case v.Type() == durationType || v.Type() == goDurationType:
		if s == "" {
			v.SetInt(0)
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration like 10s or 250ms", s)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.Slice:
		items := SplitList(s)
		l := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, it := range items {
			l.Index(i).SetString(it)
		}
		if len(items) == 0 {
			l = reflect.Zero(v.Type())
		}
		v.Set(l)
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		v.SetBool(b)
	}
	return nil
}

// EnvKeys lists the environment variable of every key (secrets also with their _FILE variant), for documentation
// and the README test.
func EnvKeys() []string {
	c := Default()
	var out []string
	walkKeys(reflect.ValueOf(&c).Elem(), "", func(path string, v reflect.Value) {
		out = append(out, EnvName(path))
		if v.Type() == secretType {
			out = append(out, EnvName(path)+"_FILE")
		}
	})
	sort.Strings(out)
	return out
}

// SecretKeys lists the YAML paths of the secret keys.
func SecretKeys() []string {
	c := Default()
	var out []string
	walkKeys(reflect.ValueOf(&c).Elem(), "", func(path string, v reflect.Value) {
		if v.Type() == secretType {
			out = append(out, path)
		}
	})
	return out
}
