package attempt

import (
	"errors"

	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ArtifactSaver is where an attempt's generated files go (the issue's
// "artifacts": a chat page's images and downloads, an images endpoint's
// pictures; not the browser's failure artefacts, which are log files).
// The lane installs one that writes durably beside the task's result.
type ArtifactSaver interface {
	// Save writes NAME (a plain file name) and returns its path relative
	// to the result that links it.
	Save(name string, data []byte) (string, error)
	// Stem is the task's output name without its extension when the files
	// go beside its output: ("" otherwise); files are named STEM-NN.ext.
	Stem() string
}

// ErrNoArtifactSaver is KeepArtifacts' error on a Job built without a
// lane's saver.
var ErrNoArtifactSaver = errors.New("no folder for generated files in this attempt")

// SetArtifactSaver installs where KeepArtifacts saves.
func (j *Job) SetArtifactSaver(s ArtifactSaver) {
	j.mu.Lock()
	j.saver = s
	j.mu.Unlock()
}

// KeepArtifacts saves files (sniffed, held to lim), rewrites text's
// references to them to the saved files and returns the new text and the
// task file's list (lanes/artifacts.Keep).
func (j *Job) KeepArtifacts(text string, files []artifacts.File, lim artifacts.Limits) (string, []taskfile.Artifact, error) {
	if len(files) == 0 {
		return text, nil, nil
	}
	j.mu.Lock()
	s := j.saver
	j.mu.Unlock()
	if s == nil {
		return text, nil, ErrNoArtifactSaver
	}
	return artifacts.Keep(text, files, lim, s.Stem(), s.Save)
}
