package taskfile

// Artifact is one file a model generated with its answer (an image or a
// download the chat page showed, an images endpoint's picture), saved
// beside the result, byte for byte. The issue spells the task file's key
// "artifacts"; the browser's failure artefacts (a failed attempt's
// screenshot and page, browser/artefacts.go) are another thing and are
// never listed here.
type Artifact struct {
	// Name is the saved file's name: NN.ext (01.png), or the output's
	// stem and NN.ext (cover-01.png) when the task has output:.
	Name string `yaml:"name" json:"name"`
	// Path is where the file is, relative to the result that links it:
	// the task file's folder (../outputs/ID/01.png) or, with output:, the
	// output file's folder. The result's Markdown links this same path.
	Path string `yaml:"path" json:"path"`
	// Type is the sniffed media type (net/http.DetectContentType).
	Type string `yaml:"type" json:"type"`
	Size int64  `yaml:"size" json:"size"`
	// SHA256 is the hex SHA-256 of the saved bytes.
	SHA256 string `yaml:"sha256" json:"sha256"`
	// Title is the image's alt text or the link's text, when it had one.
	Title string `yaml:"title,omitempty" json:"title,omitempty"`
	// Source is where the bytes came from, only when that address is not
	// bound to a signed-in session or signed to expire (never a chat
	// page's URL, never an images endpoint's signed link).
	Source string `yaml:"source,omitempty" json:"source,omitempty"`
}

// cloneArtifacts copies a list so a clone shares nothing mutable.
func cloneArtifacts(a []Artifact) []Artifact {
	if a == nil {
		return nil
	}
	return append([]Artifact(nil), a...)
}
