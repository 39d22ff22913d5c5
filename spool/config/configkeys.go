package config

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
	"gopkg.in/yaml.v3"
)

// The config is checked key by key against the Config type before it is
// decoded: yaml.v3's KnownFields stops at a type with its own UnmarshalYAML
// (api: is one), and its messages name Go types. This walk names every
// unknown key by its path (api.concurency, models[writer].baseUrl) with
// the keys known there, and every value of the wrong kind by its path and
// what it wants, in words.

// maxConfigNodes bounds the walk, which follows aliases: an alias bomb is
// refused instead of walked.
const maxConfigNodes = 100000

type keyWalk struct{ nodes int }

var unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// checkConfigKeys checks the document node doc against Config.
func checkConfigKeys(doc *yaml.Node) *ConfigError {
	w := &keyWalk{}
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	if isNull(root) {
		return nil
	}
	if deref(root).Kind != yaml.MappingNode {
		return &ConfigError{Msg: fmt.Sprintf("line %d: the config must be a mapping of keys (such as spool: ./spool)", root.Line)}
	}
	return w.check(root, reflect.TypeOf(Config{}), "")
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func (w *keyWalk) check(n *yaml.Node, t reflect.Type, path string) *ConfigError {
	w.nodes++
	if w.nodes > maxConfigNodes {
		return &ConfigError{Key: path, Msg: "too many nodes (an alias bomb?)"}
	}
	n = deref(n)
	if isNull(n) {
		return nil // an empty value: the defaults
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(want string) *ConfigError {
		return &ConfigError{Key: path, Msg: fmt.Sprintf("line %d: want %s, got %s", n.Line, want, describeNode(n))}
	}
	if t.Kind() != reflect.Struct && reflect.PointerTo(t).Implements(unmarshalerType) {
		// A type that reads itself (Duration, Command): its own reading
		// says what is wrong, here with the key's path.
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return &ConfigError{Key: path, Msg: taskfile.YAMLError(err).Error()}
		}
		return nil
	}
	if t.Kind() == reflect.Struct && n.Kind == yaml.ScalarNode && reflect.PointerTo(t).Implements(unmarshalerType) {
		// A struct that also reads a short scalar form (a console user's
		// hash alone): its own reading decides.
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return &ConfigError{Key: path, Msg: taskfile.YAMLError(err).Error()}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return bad("a mapping of keys")
		}
		fields := yamlFields(t)
		return w.mapping(n, path, func(key string, kn, vn *yaml.Node) *ConfigError {
			ft, ok := fields[key]
			if !ok {
				return &ConfigError{Key: join(path, key), Msg: fmt.Sprintf("line %d: unknown key (%s)", kn.Line, knownKeys(path, fields))}
			}
			return w.check(vn, ft, join(path, key))
		}, t)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad("a mapping of names")
		}
		return w.mapping(n, path, func(key string, kn, vn *yaml.Node) *ConfigError {
			return w.check(vn, t.Elem(), join(path, key))
		}, t)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return bad("a list")
		}
		for i, e := range n.Content {
			if err := w.check(e, t.Elem(), path+"["+itemName(e, i)+"]"); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return bad("text")
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return bad("true or false")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return bad("a whole number")
		}
		if _, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err != nil {
			return bad("a whole number")
		}
	case reflect.Float64, reflect.Float32:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			return bad("a number")
		}
	}
	return nil
}

// mapping walks a mapping's pairs, following merge keys (<<) into the
// mappings they merge, as yaml.v3 does when it decodes.
func (w *keyWalk) mapping(n *yaml.Node, path string, pair func(key string, kn, vn *yaml.Node) *ConfigError, t reflect.Type) *ConfigError {
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := deref(n.Content[i]), n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return &ConfigError{Key: path, Msg: fmt.Sprintf("line %d: a key must be a plain name", kn.Line)}
		}
		if kn.ShortTag() == "!!merge" {
			v := deref(vn)
			merged := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				merged = v.Content
			}
			for _, m := range merged {
				if err := w.check(m, t, path); err != nil {
					return err
				}
			}
			continue
		}
		if err := pair(kn.Value, kn, vn); err != nil {
			return err
		}
	}
	return nil
}

// yamlFields maps a struct's YAML keys to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, _, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" || tag == "" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

func knownKeys(path string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	where := "here"
	if path != "" {
		where = "under " + path
	}
	return "known keys " + where + ": " + strings.Join(names, ", ")
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// join adds a key to a path, quoting a key that is not a plain name so a
// path stays readable and one line.
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		key = strconv.Quote(taskfile.Clip(key))
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// itemName names a list item by its `name:` if it has one (models), else
// by its index.
func itemName(n *yaml.Node, i int) string {
	n = deref(n)
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == "name" {
				if v := deref(n.Content[j+1]); v.Kind == yaml.ScalarNode && plainKey.MatchString(v.Value) {
					return v.Value
				}
			}
		}
	}
	return strconv.Itoa(i)
}

// describeNode says what a value is, in words.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(taskfile.Clip(n.Value))
}

// yamlTypeNames match Go type names in yaml.v3's messages ("into int",
// "into map[string]config.SiteConfig", "in type config.Config"), which mean
// nothing to whoever writes the config.
var yamlTypeNames = regexp.MustCompile(`\s*(into|in type) [\w.*\[\]]+`)

// plainYAMLError rewrites a yaml.v3 error into one line without Go type
// names; the walk catches the usual cases first, this is the safety net.
func plainYAMLError(err error) string {
	s := taskfile.YAMLError(err).Error()
	s = yamlTypeNames.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "cannot unmarshal", "a value of the wrong kind:")
	return s
}
