package lanes

import "github.com/spoolgate/spoolgate/lanes/attempt"

// releaseExec lets the session's executor give up what it keeps between
// attempts (a warm browser: attempt.Releaser); wait blocks until it is
// gone (the lane's Stop).
func (s *session) releaseExec(wait bool) {
	if r, ok := s.exec.(attempt.Releaser); ok {
		r.Release(wait)
	}
}
