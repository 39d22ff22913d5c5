package browser

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// attachTo gives job's task the files (name → bytes, in order of names)
// as intake would have recorded them, written to a temp folder.
func attachTo(t *testing.T, job *attempt.Job, files map[string][]byte, names ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, files[n], 0o600); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(files[n])
		job.Task.Attachments = append(job.Task.Attachments, p)
		job.Task.AttachmentsChecked = append(job.Task.AttachmentsChecked, taskfile.Attachment{Name: n, Path: p, Type: "image/jpeg", Size: len(files[n]), SHA256: hex.EncodeToString(sum[:])})
	}
}

// TestExecutor_Attach: files go onto the modern stand-in page through its
// paperclip button (file chooser intercepted) or straight into its file
// input, count once the chips show them, and reach the stand-in byte for
// byte with the message. A reattach to a sent conversation uploads
// nothing; an attempt after one that uploaded and never sent uploads
// again and says so; a file changed since intake fails the attempt as
// invalid before anything is uploaded.
func TestExecutor_Attach(t *testing.T) {
	e := reattachEnv(t)
	files := map[string][]byte{"ref.jpg": append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 3000)...), "说明.txt": []byte("写一段文案\n")}
	sums := map[string]string{}
	for n, b := range files {
		s := sha256.Sum256(b)
		sums[n] = hex.EncodeToString(s[:])
	}
	uploaded := func(from int) []string {
		var got []string
		for _, u := range e.stand.Uploads()[from:] {
			if sums[u.Name] != u.SHA256 {
				t.Errorf("upload %s: SHA-256 %s, want %s", u.Name, u.SHA256, sums[u.Name])
			}
			got = append(got, u.Name)
		}
		return got
	}
	message := func(content string) chatstand.Message {
		for _, m := range e.stand.Received() {
			if m.Content == content {
				return m
			}
		}
		t.Fatalf("no message %q", content)
		return chatstand.Message{}
	}

	// Through the button: a first send with two files.
	job, log := e.job(t, "chat-web", "", "look at the two files")
	attachTo(t, job, files, "ref.jpg", "说明.txt")
	if _, err := e.exec.Execute(context.Background(), job); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	ds := job.Deliveries()
	if got := strings.Join(uploaded(0), ", "); got != "ref.jpg, 说明.txt" || ds[len(ds)-1].Attached != got {
		t.Fatalf("uploaded %q, delivery %+v\nlog:\n%s", got, ds, log)
	}
	if m := message("look at the two files"); strings.Join(m.Files, ",") != sums["ref.jpg"]+","+sums["说明.txt"] {
		t.Fatalf("the message carried %v", m.Files)
	}

	// A reattach to the sent conversation uploads nothing.
	n := len(e.stand.Uploads())
	job2, log2 := e.job(t, "chat-web", "", "look at the two files")
	attachTo(t, job2, files, "ref.jpg", "说明.txt")
	job2.Task.Attempt, job2.Task.Send = 2, job.Task.Send
	if _, err := e.exec.Execute(context.Background(), job2); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log2)
	}
	if d := job2.Deliveries(); len(d) == 0 || d[len(d)-1].How != taskfile.DeliveryReattached || len(e.stand.Uploads()) != n {
		t.Fatalf("reattach: deliveries %+v, %d uploads more\nlog:\n%s", d, len(e.stand.Uploads())-n, log2)
	}

	// Attempt 1 attached and ended before its send: attempt 2 uploads
	// again, straight into the file input this time, and says why.
	site := e.cfg.Sites["standin"]
	site.Upload = "input[type=file]"
	e.cfg.Sites["standin"] = site
	job3, log3 := e.job(t, "chat-web", "", "the crash came after the upload")
	attachTo(t, job3, files, "ref.jpg")
	job3.Task.Attempt = 2
	job3.Task.Attempts = []taskfile.AttemptRecord{{N: 1, Attached: "ref.jpg", Outcome: taskfile.AttemptReturned}, {N: 2}}
	if _, err := e.exec.Execute(context.Background(), job3); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log3)
	}
	d := job3.Deliveries()
	if got := uploaded(n); len(got) != 1 || !strings.Contains(d[len(d)-1].Reason, "uploaded again: attempt 1 attached the files") {
		t.Fatalf("uploads %v, delivery %+v\nlog:\n%s", got, d, log3)
	}

	// A file edited since intake: invalid, nothing uploaded or sent.
	n, sent := len(e.stand.Uploads()), len(e.stand.Received())
	job4, _ := e.job(t, "chat-web", "", "an edited file")
	attachTo(t, job4, files, "ref.jpg")
	if err := os.WriteFile(job4.Task.AttachmentsChecked[0].Path, []byte("edited"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := e.exec.Execute(context.Background(), job4)
	var te *attempt.TaskError
	if !errors.As(err, &te) || te.Class != taskfile.ClassInvalid || !strings.Contains(err.Error(), "changed since intake") {
		t.Fatalf("an edited file: %v", err)
	}
	if len(e.stand.Uploads()) != n || len(e.stand.Received()) != sent {
		t.Fatal("an edited file was uploaded or its message sent")
	}
}

// reupload reads the attempts: only an earlier attempt that attached and
// never delivered makes this one's upload a second one.
func TestReupload(t *testing.T) {
	tk := &taskfile.Task{Attempt: 3, Attempts: []taskfile.AttemptRecord{{N: 1, Attached: "a.jpg", Delivery: taskfile.DeliverySent}, {N: 3}}}
	if got := reupload(tk); got != "" {
		t.Fatalf("after a delivered attempt: %q", got)
	}
	tk.Attempts = append([]taskfile.AttemptRecord{{N: 2, Attached: "a.jpg"}}, tk.Attempts...)
	if got := reupload(tk); !strings.HasPrefix(got, "uploaded again: attempt 2") {
		t.Fatalf("after an attempt that attached and never sent: %q", got)
	}
}
