package apimodel

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A model with endpoint: images is OpenAI's images API
// (POST baseURL/images/generations): the task's prompt and content are
// the picture's prompt, and the answer is the pictures, kept as the
// task's artifacts (lanes/artifacts) and linked from its result. A
// picture comes as b64_json, or as a url fetched at once (an expiring
// link: it is never written to the result or the task file).

type imagesRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	N      int    `json:"n,omitempty"`
}

type imagesResponse struct {
	Data []struct {
		B64JSON       string `json:"b64_json"`
		URL           string `json:"url"`
		RevisedPrompt string `json:"revised_prompt"`
	} `json:"data"`
}

// maxImagesJSON bounds the response (base64 pictures inside JSON).
const maxImagesJSON = 256 << 20

func (m *model) imagesURL() string {
	u, err := url.Parse(m.cfg.BaseURL)
	if err != nil {
		return m.cfg.BaseURL
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/images/generations"
	u.RawPath = ""
	return u.String()
}

// images runs one attempt on the images endpoint.
func (e *Executor) images(ctx context.Context, m *model, job *attempt.Job, timeout time.Duration) (attempt.Result, error) {
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	prompt := job.Task.Content
	if p := strings.TrimSpace(job.Task.Prompt); p != "" && !m.cfg.NeedEmptyPrompt {
		prompt = p + "\n\n" + prompt
	}
	b, err := json.Marshal(imagesRequest{Model: m.cfg.Model, Prompt: prompt})
	if err != nil {
		return attempt.Result{}, fmt.Errorf("encode request: %w", err)
	}
	job.SetStage("calling " + m.cfg.BaseURL + " (images)")
	start := time.Now()
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, m.imagesURL(), bytes.NewReader(b))
	if err != nil {
		return attempt.Result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "spoolgate")
	if m.key != "" {
		req.Header.Set("Authorization", "Bearer "+m.key)
	}
	for k, v := range m.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return attempt.Result{}, m.classify(ctx, callCtx, timeout, err)
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxImagesJSON))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		se := parseErrorBody(data)
		se.Status = resp.StatusCode
		return attempt.Result{}, m.failure(se, fmt.Sprintf("HTTP %d", resp.StatusCode), resp.Header)
	}
	if rerr != nil {
		return attempt.Result{}, m.classify(ctx, callCtx, timeout, rerr)
	}
	job.Beat()
	var ir imagesResponse
	if err := json.Unmarshal(data, &ir); err != nil {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassTransient, "%s: the images endpoint's answer is not JSON: %v", m.cfg.Name, err)
	}
	if len(ir.Data) == 0 {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "%s: the images endpoint returned no picture", m.cfg.Name)
	}
	var files []artifacts.File
	for i, d := range ir.Data {
		var pic []byte
		switch {
		case d.B64JSON != "":
			pic, err = base64.StdEncoding.DecodeString(d.B64JSON)
			if err != nil {
				return attempt.Result{}, attempt.Errorf(taskfile.ClassTransient, "%s: picture %d: b64_json is not base64: %v", m.cfg.Name, i+1, err)
			}
		case d.URL != "":
			pic, err = e.download(callCtx, m, d.URL, e.limits.MaxFile)
			if errors.Is(err, ErrPictureHost) {
				return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "%s: picture %d: %w", m.cfg.Name, i+1, err)
			}
			if err != nil {
				return attempt.Result{}, attempt.Errorf(taskfile.ClassEnvironment, "%s: picture %d: %w", m.cfg.Name, i+1, err)
			}
		default:
			return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "%s: picture %d has neither b64_json nor url", m.cfg.Name, i+1)
		}
		files = append(files, artifacts.File{Title: fmt.Sprintf("Picture %d", i+1), Image: true, Data: pic})
		job.Beat()
	}
	text, list, err := job.KeepArtifacts("", files, e.limits)
	if err != nil {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassEnvironment, "%s: %w", m.cfg.Name, err)
	}
	job.Log.Info("api pictures", "model", m.cfg.Name, "after", time.Since(start).Round(time.Millisecond), "files", len(list))
	return attempt.Result{Text: text, Artifacts: list}, nil
}

// download fetches a picture's url (no key: the link is the vendor's
// storage, signed), at most max bytes, from where pictureHostOK and the
// picture client allow (picturehosts.go).
func (e *Executor) download(ctx context.Context, m *model, u string, max int64) ([]byte, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.User != nil {
		return nil, fmt.Errorf("%w: not an http(s) address", ErrPictureHost)
	}
	if err := m.pictureHostOK(pu); err != nil {
		return nil, err
	}
	ctx = context.WithValue(ctx, internalOKKey{}, m.baseInternal(ctx))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "spoolgate")
	resp, err := e.pictures.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the picture: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch the picture: HTTP %d (a redirect is not followed)", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("fetch the picture: %w", err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes (artifacts.maxFileSize)", artifacts.ErrTooLarge, max)
	}
	return data, nil
}
