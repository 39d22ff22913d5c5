package config

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ArtifactsConfig is `artifacts:`: the files a model generates with its
// answer (a chat page's images and downloads, an images endpoint's
// pictures), kept beside the result. The issue spells them "artifacts";
// the browser's failure artefacts (screenshots of a failed attempt) are
// another thing and have no keys here.
type ArtifactsConfig struct {
	// MaxFileSize bounds each file (default 20MB); MaxTaskSize all the
	// files of one task (default 100MB). A size is bytes or a number with
	// KB, MB or GB (powers of 1024).
	MaxFileSize string `yaml:"maxFileSize"`
	MaxTaskSize string `yaml:"maxTaskSize"`
	// Optional: a generated file that cannot be fetched or kept is logged
	// and left out (its link stays as the site gave it) instead of failing
	// the attempt as environment. Default false: nothing lost silently.
	Optional bool `yaml:"optional"`
	// Types are the kinds of generated file other than pictures that are
	// kept (DefaultArtifactTypes when empty); a file of another kind
	// stays a plain link. A picture is kept only when its bytes are a
	// picture. Kinds: ArtifactKinds.
	Types []string `yaml:"types"`

	maxFile, maxTask int64
}

// DefaultArtifactTypes are the kinds of non-picture file kept when
// artifacts.types says nothing: documents, tables, archives and media a
// chat site generates. Plain text, JSON and HTML are not among them: they
// are what an account's own API answers with (issue 49).
var DefaultArtifactTypes = []string{"pdf", "csv", "tsv", "md", "xlsx", "docx", "pptx", "zip", "mp3", "wav", "ogg", "mp4", "webm"}

// ArtifactKinds are the kinds artifacts.types may name: the extension a
// kind is saved with, bin for bytes of no known kind.
var ArtifactKinds = []string{"pdf", "csv", "tsv", "md", "txt", "json", "xml", "html", "yaml", "xlsx", "docx", "pptx", "zip", "mp3", "wav", "ogg", "mp4", "webm", "woff", "woff2", "bin"}

// ArtifactTypes is artifacts.types, or its default.
func (a ArtifactsConfig) ArtifactTypes() []string {
	if len(a.Types) == 0 {
		return DefaultArtifactTypes
	}
	return a.Types
}

// Default artifact limits.
const (
	DefaultArtifactMaxFile = 20 << 20
	DefaultArtifactMaxTask = 100 << 20
)

// MaxFile is the per-file limit in bytes.
func (a ArtifactsConfig) MaxFile() int64 {
	if a.maxFile > 0 {
		return a.maxFile
	}
	return DefaultArtifactMaxFile
}

// MaxTask is the per-task limit in bytes.
func (a ArtifactsConfig) MaxTask() int64 {
	if a.maxTask > 0 {
		return a.maxTask
	}
	return DefaultArtifactMaxTask
}

// The values of an api model's endpoint: key.
const (
	EndpointChat   = "chat"   // /chat/completions (the default)
	EndpointImages = "images" // /images/generations: the answer is pictures
)

// ParseSize reads "20MB", "512KB", "1GB" or a plain number of bytes.
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with KB, MB or GB)", s)
	}
	return n * mult, nil
}

// checkArtifacts reads artifacts:'s sizes and checks each model's
// endpoint: key.
func (c *Config) checkArtifacts() error {
	a := &c.Artifacts
	for _, f := range []struct {
		k   string
		v   string
		out *int64
	}{{"maxFileSize", a.MaxFileSize, &a.maxFile}, {"maxTaskSize", a.MaxTaskSize, &a.maxTask}} {
		if f.v == "" {
			continue
		}
		n, err := ParseSize(f.v)
		if err != nil {
			return &ConfigError{Key: "artifacts." + f.k, Msg: err.Error()}
		}
		*f.out = n
	}
	for i, t := range a.Types {
		if !slices.Contains(ArtifactKinds, t) {
			return &ConfigError{Key: fmt.Sprintf("artifacts.types[%d]", i), Msg: fmt.Sprintf("%q is not a kind of file: want one of %s", t, strings.Join(ArtifactKinds, ", "))}
		}
	}
	if a.MaxFile() > a.MaxTask() {
		return &ConfigError{Key: "artifacts.maxFileSize", Msg: fmt.Sprintf("%d bytes is more than artifacts.maxTaskSize (%d bytes)", a.MaxFile(), a.MaxTask())}
	}
	for i := range c.Models {
		m := &c.Models[i]
		key := fmt.Sprintf("models[%s].endpoint", m.Name)
		switch {
		case m.Endpoint == "":
		case m.Kind != taskfile.KindAPI:
			return &ConfigError{Key: key, Msg: "only an api model has an endpoint (a web model's files come from its page)"}
		case m.Endpoint != EndpointChat && m.Endpoint != EndpointImages:
			return &ConfigError{Key: key, Msg: fmt.Sprintf("%q: want chat (the default) or images", m.Endpoint)}
		}
		for j, h := range m.ImageHosts {
			k := fmt.Sprintf("models[%s].imageHosts[%d]", m.Name, j)
			if m.Kind != taskfile.KindAPI {
				return &ConfigError{Key: k, Msg: "only an api model fetches pictures from hosts"}
			}
			if u, err := url.Parse("http://" + h); h == "" || err != nil || u.Host != h || u.Port() != "" || strings.ContainsAny(h, "/?#@*") {
				return &ConfigError{Key: k, Msg: fmt.Sprintf("%q: want a host name, no scheme, port or path (files.vendor.example)", h)}
			}
		}
	}
	return nil
}

// checkArtifactsFrom checks a site's artifactsFrom: each an absolute
// http(s) URL with a host and no credentials, query or fragment, or a
// path beginning with a slash.
func checkArtifactsFrom(key string, from []string) *ConfigError {
	for i, f := range from {
		k := fmt.Sprintf("%s[%d]", key, i)
		u, err := url.Parse(f)
		switch {
		case err != nil:
			return &ConfigError{Key: k, Msg: fmt.Sprintf("%q is not an address: %v", f, err)}
		case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
			return &ConfigError{Key: k, Msg: fmt.Sprintf("%q: a prefix has no query, fragment or credentials", f)}
		case u.Scheme == "" && u.Host == "" && strings.HasPrefix(f, "/") && !strings.HasPrefix(f, "//"):
		case (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
		default:
			return &ConfigError{Key: k, Msg: fmt.Sprintf("%q: want an http(s) address with a host, or a path beginning with /", f)}
		}
		if strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/..") || strings.Contains(u.Path, "/./") {
			return &ConfigError{Key: k, Msg: fmt.Sprintf("%q: a prefix has no dot segments", f)}
		}
	}
	return nil
}
