package taskfile

import "time"

// A web attempt costs one generation of a signed-in account and leaves the
// prompt in that account's chat history, so a task's prompt is sent once:
// its file in running/ records the send as it happens, and a later attempt
// (after a crash, a stale reclaim, a dead browser, a timeout) reads that
// record and goes back to the conversation instead of sending again.
//
// The send's state machine, one fenced durable rewrite per step:
//
//	(no record) --right before the click--> sending --page accepted--> sent(conversation)
//
// An attempt that finds `sent` reattaches to the conversation; one that
// finds `sending` cannot know whether the page took the message: it looks
// for it (the site's history) and otherwise sends again, counted as a
// possible double send.

// SendState is how far the last send of a task's prompt went.
type SendState string

const (
	// SendSending: written right before the send; until SendSent the
	// outcome is unknown.
	SendSending SendState = "sending"
	// SendSent: the page accepted the message (it showed the new
	// conversation or started an answer).
	SendSent SendState = "sent"
)

// SendRecord is the task's last send of its prompt.
type SendRecord struct {
	State     SendState `yaml:"state"`
	Attempt   int       `yaml:"attempt"`           // the attempt that sent
	Account   string    `yaml:"account,omitempty"` // the session's account: the conversation is in its history
	SendingAt time.Time `yaml:"sendingAt"`
	SentAt    time.Time `yaml:"sentAt,omitempty"`
	// Conversation is the conversation's URL (the page's location once it
	// showed the new conversation); "" when the page gave none.
	Conversation string `yaml:"conversation,omitempty"`
}

// DeliveryHow is how one attempt delivered the prompt.
type DeliveryHow string

const (
	DeliverySent       DeliveryHow = "sent"       // the first send of the prompt
	DeliveryReattached DeliveryHow = "reattached" // collected from the recorded conversation, nothing sent
	DeliveryResent     DeliveryHow = "resent"     // sent again in a new chat; Reason says why
)

// Delivery is how one attempt delivered the prompt: what the executor
// records (spool.Lease.RecordSend) into the attempt's record.
type Delivery struct {
	Attempt      int
	How          DeliveryHow
	Account      string
	Conversation string
	// Reason (resent, or a reattach that found the conversation by
	// looking): what the attempt found.
	Reason string
	// PossibleDoubleSend: resent after a send whose outcome was unknown
	// (cut off between sending and sent) and that could not be found:
	// the account may have received the prompt twice.
	PossibleDoubleSend bool
	// Attached names the files the attempt put on the page ("" for none):
	// recorded once the page shows them, before the send.
	Attached string
}

// SetDelivery records d in the running attempt's record (the open one of
// attempt d.Attempt); it reports whether there was one.
func (t *Task) SetDelivery(d Delivery) bool {
	last := t.lastOpenAttempt()
	if last == nil || last.N != d.Attempt {
		return false
	}
	last.Delivery, last.Conversation, last.DeliveryReason, last.PossibleDoubleSend = d.How, d.Conversation, d.Reason, d.PossibleDoubleSend
	if d.Attached != "" {
		last.Attached = d.Attached
	}
	return true
}

// LastDelivery is the record of the latest attempt that delivered the
// prompt, or nil.
func (t *Task) LastDelivery() *AttemptRecord {
	for i := len(t.Attempts) - 1; i >= 0; i-- {
		if t.Attempts[i].Delivery != "" {
			return &t.Attempts[i]
		}
	}
	return nil
}

// msTime is t in UTC to the millisecond (zero stays zero): task files
// need no more.
func msTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC().Truncate(time.Millisecond)
}
