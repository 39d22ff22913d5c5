package artifacts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/spoolgate/spoolgate/spool/config"
)

// Issue 49: a signed-in chat account is the crown jewel, and an answer's
// addresses are whatever the model wrote, so whatever a task asked it to
// write. Policy decides, before any fetch, whether a generated file may
// be fetched and with whose session, and, after it, whether the bytes may
// be kept: nothing but the files the site itself generated leaves the
// signed-in browser.

// Route is how an address may be fetched.
type Route int

const (
	// Skip: not fetched at all; the address stays a plain link.
	Skip Route = iota
	// Page: made by the page itself (blob:, data:): no request carries
	// the session anywhere it was not already.
	Page
	// Session: fetched with the account's cookies, because the site's
	// artifactsFrom names it as where its generated files live.
	Session
	// Anonymous: another origin, fetched with no credentials at all.
	Anonymous
)

func (r Route) String() string {
	switch r {
	case Page:
		return "page"
	case Session:
		return "session"
	case Anonymous:
		return "anonymous"
	}
	return "skip"
}

// ErrRefused is a generated file the policy does not keep: its address
// stays a plain link in the result.
var ErrRefused = errors.New("generated file refused")

// DefaultTypes are the kinds of non-image file kept when the config's
// artifacts.types says nothing (config.DefaultArtifactTypes).
var DefaultTypes = config.DefaultArtifactTypes

// Policy is where a site's generated files may come from and what they
// may be.
type Policy struct {
	// From is the site's artifactsFrom: URL prefixes, absolute
	// (https://cdn.example/gen/) or a path on the page's origin
	// (/files/). Only these are fetched with the account's session.
	From []string
	// Types are the non-image kinds kept (DefaultTypes when nil).
	Types []string
	// Avoid are the addresses the task's own text names (TextAddresses):
	// never fetched with the session, whatever From says.
	Avoid *Addresses
}

// Decision is the route of one address, with why when it is Skip.
type Decision struct {
	Route Route
	// Exact: From names this address's path exactly (not as a prefix):
	// only then may text, JSON or HTML be kept from the session.
	Exact bool
	Why   string
}

// Decide routes address abs (absolute, as the page resolved it) of a
// page at pageURL.
func (p Policy) Decide(pageURL, abs string) Decision {
	switch {
	case strings.HasPrefix(abs, "blob:") || strings.HasPrefix(abs, "data:"):
		return Decision{Route: Page}
	}
	u, err := url.Parse(abs)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Decision{Why: "not an http(s) address"}
	}
	page, _ := url.Parse(pageURL)
	sameOrigin := page != nil && strings.EqualFold(page.Scheme, u.Scheme) && strings.EqualFold(page.Host, u.Host)
	if p.Avoid.Has(u, page) {
		if sameOrigin {
			return Decision{Why: "the task's own text names this address"}
		}
		return Decision{Route: Anonymous}
	}
	for _, f := range p.From {
		if ok, exact := prefixMatch(f, u, page); ok {
			return Decision{Route: Session, Exact: exact}
		}
	}
	if sameOrigin {
		return Decision{Why: "the site's origin, outside artifactsFrom"}
	}
	return Decision{Route: Anonymous}
}

// prefixMatch reports whether u lies under prefix f (absolute, or a path
// on page's origin), and whether f names u's path exactly.
func prefixMatch(f string, u, page *url.URL) (ok, exact bool) {
	pu, err := url.Parse(f)
	if err != nil {
		return false, false
	}
	if pu.Host == "" {
		if page == nil {
			return false, false
		}
		pu = page.ResolveReference(pu)
	}
	if !strings.EqualFold(pu.Scheme, u.Scheme) || !strings.EqualFold(pu.Host, u.Host) {
		return false, false
	}
	p := cleanPath(u.EscapedPath())
	want := pu.EscapedPath()
	if want == "" {
		want = "/"
	}
	if p == want {
		return true, true
	}
	// A prefix is a folder: /files/ takes /files/a.png, and /files takes
	// /files/a.png but never /filesystem.
	dir := want
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	return strings.HasPrefix(p, dir), false
}

// cleanPath is an escaped path with dot segments resolved, as a server
// would read it, so /files/../api/x is not under /files/.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// Admit decides whether data, fetched for a reference that claims to be
// an image or a file, may be kept: an image must sniff as an image; any
// other file must be of a kind in p.Types; text, JSON and HTML fetched
// with the session only from a path From names exactly. contentType is
// what the server said (it can only make a kind stricter: a JSON answer
// named .csv is JSON).
func (p Policy) Admit(d Decision, image bool, data []byte, hint, contentType string) error {
	typ, ext := Sniff(data, hint)
	isImage := strings.HasPrefix(typ, "image/") || isSVG(data) || isISOImage(data)
	switch {
	case image && !isImage:
		return fmt.Errorf("%w: it is shown as an image but its bytes are %s", ErrRefused, typ)
	case isImage:
		return nil
	case d.Route == Session && d.Exact:
		return nil // the operator named this very address as the site's
	}
	kind := Kind(data, typ, ext, contentType)
	if d.Route == Session && (kind == "txt" || kind == "json" || kind == "html" || kind == "xml" || kind == "yaml" || kind == "bin") {
		return fmt.Errorf("%w: %s from the account's session is kept only from a path artifactsFrom names exactly", ErrRefused, kindName(kind))
	}
	types := p.Types
	if types == nil {
		types = DefaultTypes
	}
	for _, t := range types {
		if t == kind {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not among artifacts.types (%s)", ErrRefused, kindName(kind), strings.Join(types, ", "))
}

func kindName(k string) string {
	switch k {
	case "txt":
		return "plain text"
	case "bin":
		return "a file of unknown type"
	}
	return strings.ToUpper(k)
}

// Kind is a file's kind for artifacts.types: what its bytes are, made
// stricter by what the server said (JSON or HTML stays JSON or HTML
// whatever the name) and, for text, by content that parses as JSON or
// looks like HTML.
func Kind(data []byte, typ, ext, contentType string) string {
	ct, _, _ := mime.ParseMediaType(contentType)
	switch {
	case ct == "application/json" || strings.HasSuffix(ct, "+json"):
		return "json"
	case ct == "text/html" || ct == "application/xhtml+xml":
		return "html"
	}
	if strings.HasPrefix(typ, "text/") || typ == "application/json" {
		t := bytes.TrimSpace(data)
		switch {
		case typ == "text/html":
			return "html"
		case len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t):
			return "json"
		case typ == "text/xml":
			return "xml"
		}
		switch e := strings.TrimPrefix(ext, "."); e {
		case "csv", "tsv", "md", "json", "xml", "yaml":
			return e
		case "yml":
			return "yaml"
		}
		return "txt"
	}
	switch e := strings.TrimPrefix(ext, "."); e {
	case "jpg", "png", "gif", "webp", "bmp", "ico":
		return "image"
	case "bin", "":
		return "bin"
	default:
		return e
	}
}

var svgStart = regexp.MustCompile(`^(?s)\s*(<\?xml[^>]*>\s*)?(<!--.*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]`)

func isSVG(data []byte) bool {
	if len(data) > 4096 {
		data = data[:4096]
	}
	return svgStart.Match(data)
}

// isISOImage: an AVIF or HEIF picture (an ISO media file whose brand is a
// still image's), which net/http's sniffer does not know.
func isISOImage(data []byte) bool {
	if len(data) < 12 || string(data[4:8]) != "ftyp" {
		return false
	}
	switch string(data[8:12]) {
	case "avif", "avis", "heic", "heix", "mif1", "msf1":
		return true
	}
	return false
}
