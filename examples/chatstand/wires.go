package chatstand

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// The modern page can speak the stream protocols of the chat sites and
// APIs users bring (Options.Wire, ?wire=NAME): the same answer and
// thinking, on the wire as each protocol carries them, shaped after
// public captures of the real streams (the texts are the stand-in's own).
// The page reads each one itself (page.html, wireReader), so a reader
// that misreads a protocol shows an answer the page does not.
//
//	openai-chat         chat.completion.chunk deltas, reasoning_content for the thinking, [DONE]
//	anthropic-messages  message_start, content_block_start/delta/stop (thinking_delta, then text_delta), message_delta, message_stop
//	ai-sdk-ui           the AI SDK's UI message stream: start, reasoning-start/delta/end, text-start/delta/end, finish, [DONE]
//	deepseek-web        JSON patches to one response: {"v":{"response":…}}, a THINK fragment, a BATCH whose
//	                    APPEND carries the RESPONSE fragment with the answer's first piece, then
//	                    {"p":"response/fragments/-1/content","o":"APPEND","v":…} and bare {"v":…}, a closing
//	                    BATCH (quasi_status FINISHED) and {"p":"response/status","o":"SET","v":"FINISHED"}
//	doubao-web          SSE_ACK, FULL_MSG_NOTIFY (the user's own message echoed), STREAM_MSG_NOTIFY (the first
//	                    piece, and again in tts_content), STREAM_CHUNK patch_ops (each piece, and again in
//	                    tts_content), SSE_REPLY_END with the whole answer in msg_finish_attr.brief; no thinking
//	chatgpt-legacy      each event the whole message so far (message.content.parts.0); no thinking
//
// Each response carries X-Wire (the protocol, for the page) and
// X-Conversation (the conversation, which no protocol's events name the
// same way).
var Wires = []string{"openai-chat", "anthropic-messages", "ai-sdk-ui", "deepseek-web", "doubao-web", "chatgpt-legacy"}

// wireOf is the protocol r's stream speaks ("" for the stand-in's own).
func (s *Server) wireOf(r *http.Request) string {
	if q := r.URL.Query().Get("wire"); slices.Contains(Wires, q) {
		return q
	}
	return s.opts.Wire
}

// wireWriter writes one answer in a protocol: start once, then the
// thinking's pieces, then the answer's, then fail or end.
type wireWriter interface {
	start()
	think(piece string)
	text(piece string)
	fail(msg string)
	end()
}

// wireBase is what every protocol writer shares: the events' writer, the
// conversation and what it wrote so far.
type wireBase struct {
	e              *sseWriter
	conv, content  string
	thought, said  string // the thinking and the answer so far
	thinks, speaks int    // pieces written of each
	created        int64
}

// sse writes one SSE event: its type (when not "") and its JSON data.
func (b *wireBase) sse(name string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	var ev bytes.Buffer
	if name != "" {
		ev.WriteString("event: " + name + "\n")
	}
	ev.WriteString("data: ")
	ev.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	ev.WriteString("\n\n")
	b.e.raw(ev.Bytes())
}

func (b *wireBase) done() { b.e.raw([]byte("data: [DONE]\n\n")) }

type obj = map[string]any

func newWire(name string, e *sseWriter, conv, content string) wireWriter {
	b := wireBase{e: e, conv: conv, content: content, created: time.Now().Unix()}
	switch name {
	case "openai-chat":
		return &openaiWire{b}
	case "anthropic-messages":
		return &anthropicWire{wireBase: b}
	case "ai-sdk-ui":
		return &aisdkWire{b}
	case "deepseek-web":
		return &deepseekWire{b}
	case "doubao-web":
		return &doubaoWire{b}
	}
	return &chatgptWire{b}
}

type openaiWire struct{ wireBase }

func (w *openaiWire) chunk(delta obj, finish any) {
	w.sse("", obj{"id": "chatcmpl-" + w.conv, "object": "chat.completion.chunk", "created": w.created, "model": "standin-chat", "system_fingerprint": "fp_standin",
		"choices": []obj{{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}})
}
func (w *openaiWire) start()         { w.chunk(obj{"role": "assistant", "content": ""}, nil) }
func (w *openaiWire) think(p string) { w.chunk(obj{"content": nil, "reasoning_content": p}, nil) }
func (w *openaiWire) text(p string)  { w.chunk(obj{"content": p}, nil) }
func (w *openaiWire) fail(msg string) {
	w.sse("", obj{"error": obj{"message": msg, "type": "server_error"}})
}
func (w *openaiWire) end() { w.chunk(obj{}, "stop"); w.done() }
func (w *anthropicWire) block(kind string) {
	if w.open {
		w.sse("content_block_stop", obj{"type": "content_block_stop", "index": w.index})
		w.index++
	}
	w.open, w.kind = true, kind
	cb := obj{"type": kind, kind: ""}
	if kind == "thinking" {
		cb["signature"] = ""
	}
	w.sse("content_block_start", obj{"type": "content_block_start", "index": w.index, "content_block": cb})
}

type anthropicWire struct {
	wireBase
	index int
	open  bool
	kind  string
}

func (w *anthropicWire) start() {
	w.sse("message_start", obj{"type": "message_start", "message": obj{"id": "msg_" + w.conv, "type": "message", "role": "assistant", "model": "standin-sonnet",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": obj{"input_tokens": 25, "output_tokens": 1}}})
	w.sse("ping", obj{"type": "ping"})
}

func (w *anthropicWire) think(p string) {
	if w.kind != "thinking" {
		w.block("thinking")
	}
	w.sse("content_block_delta", obj{"type": "content_block_delta", "index": w.index, "delta": obj{"type": "thinking_delta", "thinking": p}})
}

func (w *anthropicWire) text(p string) {
	if w.kind == "thinking" {
		w.sse("content_block_delta", obj{"type": "content_block_delta", "index": w.index, "delta": obj{"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}})
	}
	if w.kind != "text" {
		w.block("text")
	}
	w.sse("content_block_delta", obj{"type": "content_block_delta", "index": w.index, "delta": obj{"type": "text_delta", "text": p}})
}

func (w *anthropicWire) fail(msg string) {
	w.sse("error", obj{"type": "error", "error": obj{"type": "overloaded_error", "message": msg}})
}

func (w *anthropicWire) end() {
	if w.open {
		w.sse("content_block_stop", obj{"type": "content_block_stop", "index": w.index})
	}
	w.sse("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": obj{"output_tokens": 120}})
	w.sse("message_stop", obj{"type": "message_stop"})
}

type aisdkWire struct{ wireBase }

func (w *aisdkWire) start() {
	w.sse("", obj{"type": "start", "messageId": "msg-" + w.conv})
	w.sse("", obj{"type": "start-step"})
}

func (w *aisdkWire) think(p string) {
	if w.thinks == 0 {
		w.sse("", obj{"type": "reasoning-start", "id": "reasoning-0"})
	}
	w.thinks++
	w.sse("", obj{"type": "reasoning-delta", "id": "reasoning-0", "delta": p})
}

func (w *aisdkWire) text(p string) {
	if w.speaks == 0 {
		if w.thinks > 0 {
			w.sse("", obj{"type": "reasoning-end", "id": "reasoning-0"})
		}
		w.sse("", obj{"type": "text-start", "id": "text-1"})
	}
	w.speaks++
	w.sse("", obj{"type": "text-delta", "id": "text-1", "delta": p})
}

func (w *aisdkWire) fail(msg string) { w.sse("", obj{"type": "error", "errorText": msg}) }

func (w *aisdkWire) end() {
	if w.speaks > 0 {
		w.sse("", obj{"type": "text-end", "id": "text-1"})
	}
	w.sse("", obj{"type": "finish-step"})
	w.sse("", obj{"type": "finish"})
	w.done()
}

type deepseekWire struct{ wireBase }

func (w *deepseekWire) start() {
	w.sse("ready", obj{"request_message_id": 1, "response_message_id": 2})
	w.sse("update_session", obj{"updated_at": float64(w.created) + 0.47})
	w.sse("", obj{"v": obj{"response": obj{"message_id": 2, "parent_id": 1, "model": "", "role": "ASSISTANT", "thinking_enabled": false, "ban_edit": false,
		"ban_regenerate": false, "status": "WIP", "accumulated_token_usage": nil, "files": []any{}, "inserted_at": float64(w.created) + 0.44,
		"search_enabled": false, "feedback": nil, "has_pending_fragment": true, "auto_continue": false, "conversation_mode": "DEFAULT", "fragments": []any{}}}})
}

// piece writes the next piece of the last fragment: the first with its
// path, the rest as bare values that go on from it.
func (w *deepseekWire) piece(n int, p string) {
	if n == 1 {
		w.sse("", obj{"v": p, "p": "response/fragments/-1/content", "o": "APPEND"})
		return
	}
	w.sse("", obj{"v": p})
}

func (w *deepseekWire) think(p string) {
	if w.thinks == 0 {
		w.sse("", obj{"v": []obj{{"id": 1, "type": "THINK", "content": p, "elapsed_secs": nil, "references": []any{}, "stage_id": 1}}, "p": "response/fragments", "o": "APPEND"})
	} else {
		w.piece(w.thinks, p)
	}
	w.thinks++
}

func (w *deepseekWire) text(p string) {
	if w.speaks == 0 {
		if w.thinks > 0 {
			w.sse("", obj{"v": 2.4, "p": "response/fragments/-1/elapsed_secs", "o": "SET"})
		}
		// The answer's first piece comes inside a BATCH, in the new
		// fragment's own content.
		w.sse("", obj{"v": []obj{{"v": false, "p": "has_pending_fragment"},
			{"v": []obj{{"id": 2, "type": "RESPONSE", "content": p, "references": []any{}, "stage_id": 1}}, "p": "fragments", "o": "APPEND"}}, "p": "response", "o": "BATCH"})
	} else {
		w.piece(w.speaks, p)
	}
	w.speaks++
}

func (w *deepseekWire) fail(msg string) { w.sse("error", obj{"error": msg}) }

func (w *deepseekWire) end() {
	w.sse("", obj{"v": []obj{{"v": 57, "p": "accumulated_token_usage"}, {"v": "FINISHED", "p": "quasi_status"}}, "p": "response", "o": "BATCH"})
	w.sse("", obj{"v": "FINISHED", "p": "response/status", "o": "SET"})
	w.sse("update_session", obj{"updated_at": float64(w.created) + 3.1})
	w.sse("close", obj{"click_behavior": "none", "auto_resume": false})
}

type doubaoWire struct{ wireBase }

func (w *doubaoWire) ids() (msg, block string) { return "3031" + w.conv[1:9], "3038" + w.conv[9:] }

func (w *doubaoWire) start() {
	w.sse("SSE_HEARTBEAT", obj{})
	w.sse("SSE_ACK", obj{"query_list": []obj{{"question_id": "30310952846766850", "local_message_id": "7ef89f70-" + w.conv[1:5], "message_index": 26}},
		"ack_client_meta": obj{"conversation_id": w.conv, "conversation_type": 3, "section_id": "30303300814870274"},
		"timeout_conf":    obj{"answer_first_pending_time": 180000, "packet_interval_time": 120000}})
	// The user's own message, echoed back first.
	blocks, _ := json.Marshal([]obj{{"block_type": 10000, "block_id": "0b63341b", "content": obj{"text_block": obj{"text": w.content}}}})
	w.sse("FULL_MSG_NOTIFY", obj{"message": obj{"conversation_id": w.conv, "message_id": "30310952846766850", "message_body_version": 1, "user_type": 1,
		"content_type": 9999, "content": string(blocks), "index_in_conv": 26, "create_time": w.created,
		"content_block": []obj{{"block_type": 10000, "block_id": "0b63341b", "content": obj{"text_block": obj{"text": w.content}}, "is_finish": false}},
		"tts_content":   "", "ext": obj{"use_deep_think": "0", "model_type": "38"}}})
}

func (w *doubaoWire) think(string) {} // the stand-in's Doubao streams no thinking

func (w *doubaoWire) text(p string) {
	msg, block := w.ids()
	cb := []obj{{"block_type": 10000, "block_id": block, "content": obj{"text_block": obj{"text": p}}, "is_finish": false, "patch_type": 1}}
	if w.speaks == 0 {
		w.sse("STREAM_MSG_NOTIFY", obj{"content": obj{"content_block": cb, "content_status": 100, "ext": obj{"agent_name": "豆包", "model_type": "38"}, "content_type": 9999, "tts_content": p},
			"meta": obj{"message_id": msg, "conversation_id": w.conv, "section_id": "30303300814870274", "user_type": 2, "create_time": w.created, "index_in_conv": 27}})
	} else {
		w.sse("STREAM_CHUNK", obj{"message_id": msg, "patch_op": []obj{{"patch_object": 1, "patch_type": 1, "patch_value": obj{"content_block": cb}},
			{"patch_object": 111, "patch_type": 1, "patch_value": obj{"tts_content": p}}}})
	}
	w.speaks++
	w.said += p
}

func (w *doubaoWire) fail(msg string) {
	w.sse("STREAM_ERROR", obj{"error_code": 710022002, "error_msg": msg})
}

func (w *doubaoWire) end() {
	msg, block := w.ids()
	w.sse("STREAM_CHUNK", obj{"message_id": msg, "patch_op": []obj{{"patch_object": 1, "patch_type": 1, "patch_value": obj{"content_block": []obj{
		{"block_type": 10000, "block_id": block, "content": obj{"text_block": obj{}}, "is_finish": true, "patch_type": 1}}}}}})
	w.sse("STREAM_CHUNK", obj{"message_id": msg, "patch_op": []obj{{"patch_object": 3, "patch_type": 2, "patch_value": obj{}}, {"patch_object": 50, "patch_type": 1, "patch_value": obj{"ext": obj{"is_finish": "1"}}}}})
	w.sse("SSE_REPLY_END", obj{"end_type": 1, "msg_finish_attr": obj{"msgid": msg, "badge_count": 27, "brief": w.said}})
	w.sse("SSE_REPLY_END", obj{"end_type": 2, "answer_finish_attr": obj{"has_suggest": false}})
	w.sse("SSE_HEARTBEAT", obj{})
	w.sse("SSE_REPLY_END", obj{"end_type": 3})
}

type chatgptWire struct{ wireBase }

func (w *chatgptWire) message(status string, endTurn any) {
	w.sse("", obj{"message": obj{"id": "m" + w.conv[1:], "author": obj{"role": "assistant", "name": nil, "metadata": obj{}}, "create_time": w.created, "update_time": nil,
		"content": obj{"content_type": "text", "parts": []string{w.said}}, "status": status, "end_turn": endTurn, "weight": 1.0,
		"metadata": obj{"message_type": "next", "model_slug": "standin"}, "recipient": "all"}, "conversation_id": w.conv, "error": nil})
}
func (w *chatgptWire) start()        {}
func (w *chatgptWire) think(string)  {} // the legacy stream carries no thinking
func (w *chatgptWire) text(p string) { w.said += p; w.message("in_progress", nil) }
func (w *chatgptWire) fail(msg string) {
	w.sse("", obj{"message": nil, "conversation_id": w.conv, "error": msg})
}
func (w *chatgptWire) end() { w.message("finished_successfully", true); w.done() }

// followWire is follow for a protocol: t from its start to its end, the
// client leaving or the server closing.
func (s *Server) followWire(w http.ResponseWriter, r *http.Request, id string, t *turn, wire string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Conversation", id)
	w.Header().Set("X-Wire", wire)
	if wire == "ai-sdk-ui" {
		w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	}
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	ww := newWire(wire, &sseWriter{w: w, fl: fl, ctx: r.Context()}, id, t.content)
	ww.start()
	sent := 0
	for {
		s.mu.Lock()
		n, state, changed := t.n, t.state, t.changed
		s.mu.Unlock()
		if n > sent && sent == 0 && n > 1 {
			// Catching up: the thinking so far and the answer so far, a
			// piece each.
			if k := min(n, len(t.think)); k > 0 {
				ww.think(t.thinking(k))
			}
			if n > len(t.think) {
				ww.text(t.text(n))
			}
			sent = n
		}
		for i := sent; i < n; i++ {
			if i < len(t.think) {
				ww.think(t.thinking(i + 1)[len(t.thinking(i)):])
			} else {
				ww.text(t.text(i + 1)[len(t.text(i)):])
			}
			sent = i + 1
		}
		if state != TurnStreaming && state != TurnPending {
			if state == TurnError {
				ww.fail(ErrTurn)
			}
			ww.end()
			s.mu.Lock()
			if t.doneSent.IsZero() {
				t.doneSent = time.Now()
			}
			s.mu.Unlock()
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}
