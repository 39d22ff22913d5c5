package browser

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
)

// The streams below follow public captures of each protocol (their
// event types, field names, nesting and order), with texts of our own.
// Each answer starts with a heading mark: a reader that drops the
// first piece loses it.
const (
	protoAnswer   = "# spoolgate 2.6\n\n- **快** start\n- 中文 🚀"
	protoThinking = "用户想要发布说明。\n先写标题。"
)

// protoStreams are, by protocol, a stream of protoAnswer (and, where
// the protocol carries one, protoThinking).
var protoStreams = map[string]string{
	"openai-chat": `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"用户想要发布说明。"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"\n先写标题。"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"# "},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"spoolgate 2.6\n\n- **快** start"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"\n- 中文 🚀"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1732591576,"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":40,"total_tokens":52}}

data: [DONE]

`,
	"anthropic-messages": `event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"用户想要发布说明。\n"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"先写标题。"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"# spoolgate 2.6\n\n"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"- **快** start\n- 中文 🚀"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":42}}

event: message_stop
data: {"type":"message_stop"}

`,
	"ai-sdk-ui": `data: {"type":"start","messageId":"msg-1"}

data: {"type":"start-step"}

data: {"type":"reasoning-start","id":"reasoning-0"}

data: {"type":"reasoning-delta","id":"reasoning-0","delta":"用户想要发布说明。"}

data: {"type":"reasoning-delta","id":"reasoning-0","delta":"\n先写标题。"}

data: {"type":"reasoning-end","id":"reasoning-0"}

data: {"type":"text-start","id":"text-1"}

data: {"type":"text-delta","id":"text-1","delta":"# spoolgate"}

data: {"type":"text-delta","id":"text-1","delta":" 2.6\n\n- **快** start\n- 中文 🚀"}

data: {"type":"text-end","id":"text-1"}

data: {"type":"finish-step"}

data: {"type":"finish"}

data: [DONE]

`,
	"deepseek-web": `event: ready
data: {"request_message_id":1,"response_message_id":2}

event: update_session
data: {"updated_at":1763793566.476625}

data: {"v": {"response": {"message_id": 2, "parent_id": 1, "model": "", "role": "ASSISTANT", "thinking_enabled": true, "ban_edit": false, "ban_regenerate": false, "status": "WIP", "accumulated_token_usage": null, "files": [], "inserted_at": 1763793566.445, "search_enabled": false, "feedback": null, "has_pending_fragment": true, "auto_continue": false, "conversation_mode": "DEFAULT", "fragments": []}}}

data: {"v": [{"id": 1, "type": "THINK", "content": "用户想要", "elapsed_secs": null, "references": [], "stage_id": 1}], "p": "response/fragments", "o": "APPEND"}

data: {"v": "发布说明。", "p": "response/fragments/-1/content", "o": "APPEND"}

data: {"v": "\n先写标题。"}

data: {"v": 2.4, "p": "response/fragments/-1/elapsed_secs", "o": "SET"}

data: {"v": [{"v": false, "p": "has_pending_fragment"}, {"v": [{"id": 2, "type": "RESPONSE", "content": "# ", "references": [], "stage_id": 1}], "p": "fragments", "o": "APPEND"}], "p": "response", "o": "BATCH"}

data: {"v": "spoolgate", "p": "response/fragments/-1/content", "o": "APPEND"}

data: {"v": " 2.6\n\n- **快** start"}

data: {"v": "\n- 中文 🚀"}

data: {"v": [{"v": 57, "p": "accumulated_token_usage"}, {"v": "FINISHED", "p": "quasi_status"}], "p": "response", "o": "BATCH"}

data: {"v": "FINISHED", "p": "response/status", "o": "SET"}

event: close
data: {"click_behavior":"none","auto_resume":false}

`,
	"doubao-web": `id: 0
event: SSE_HEARTBEAT
data: {}

id: 0
event: SSE_ACK
data: {"query_list":[{"question_id":"30310952846766850","local_message_id":"7ef89f70","message_index":26}],"ack_client_meta":{"conversation_id":"30303300814870018","conversation_type":3,"section_id":"30303300814870274"}}

id: 1
event: FULL_MSG_NOTIFY
data: {"message":{"conversation_id":"30303300814870018","message_id":"30310952846766850","user_type":1,"content_type":9999,"content":"[{\"block_type\":10000,\"content\":{\"text_block\":{\"text\":\"写一份发布说明\"}}}]","content_block":[{"block_type":10000,"block_id":"0b63341b","content":{"text_block":{"text":"写一份发布说明"}},"is_finish":false}],"tts_content":""}}

id: 5
event: STREAM_MSG_NOTIFY
data: {"content":{"content_block":[{"block_type":10000,"block_id":"30387402865563394","content":{"text_block":{"text":"# "}},"is_finish":false,"patch_type":1}],"content_status":100,"content_type":9999,"tts_content":"# "},"meta":{"message_id":"30310952846767362","conversation_id":"30303300814870018","user_type":2}}

id: 8
event: STREAM_CHUNK
data: {"message_id":"30310952846767362","patch_op":[{"patch_object":1,"patch_type":1,"patch_value":{"content_block":[{"block_type":10000,"block_id":"30387402865563394","content":{"text_block":{"text":"spoolgate 2.6\n\n"}},"is_finish":false,"patch_type":1}]}},{"patch_object":111,"patch_type":1,"patch_value":{"tts_content":"spoolgate 2.6\n\n"}}]}

id: 11
event: STREAM_CHUNK
data: {"message_id":"30310952846767362","patch_op":[{"patch_object":1,"patch_type":1,"patch_value":{"content_block":[{"block_type":10000,"block_id":"30387402865563394","content":{"text_block":{"text":"- **快** start\n- 中文 🚀"}},"is_finish":false,"patch_type":1}]}},{"patch_object":111,"patch_type":1,"patch_value":{"tts_content":"- **快** start\n- 中文 🚀"}}]}

id: 64
event: STREAM_CHUNK
data: {"message_id":"30310952846767362","patch_op":[{"patch_object":1,"patch_type":1,"patch_value":{"content_block":[{"block_type":10000,"block_id":"30387402865563394","content":{"text_block":{}},"is_finish":true,"patch_type":1}]}}]}

id: 66
event: SSE_REPLY_END
data: {"end_type":1,"msg_finish_attr":{"msgid":"30310952846767362","badge_count":27,"brief":"# spoolgate 2.6\n\n- **快** start\n- 中文 🚀"}}

id: 67
event: SSE_REPLY_END
data: {"end_type":2,"answer_finish_attr":{"has_suggest":true}}

id: 71
event: SSE_REPLY_END
data: {"end_type":3}

`,
	"chatgpt-legacy": `data: {"message": {"id": "m1", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1700000000.1, "update_time": null, "content": {"content_type": "text", "parts": ["# spoolgate"]}, "status": "in_progress", "end_turn": null, "weight": 1.0, "metadata": {"message_type": "next", "model_slug": "gpt-4"}, "recipient": "all"}, "conversation_id": "c1", "error": null}

data: {"message": {"id": "m1", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1700000000.1, "update_time": null, "content": {"content_type": "text", "parts": ["# spoolgate 2.6\n\n- **快** start"]}, "status": "in_progress", "end_turn": null, "weight": 1.0, "metadata": {"message_type": "next", "model_slug": "gpt-4"}, "recipient": "all"}, "conversation_id": "c1", "error": null}

data: {"message": {"id": "m1", "author": {"role": "assistant", "name": null, "metadata": {}}, "create_time": 1700000000.1, "update_time": null, "content": {"content_type": "text", "parts": ["# spoolgate 2.6\n\n- **快** start\n- 中文 🚀"]}, "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"message_type": "next", "model_slug": "gpt-4"}, "recipient": "all"}, "conversation_id": "c1", "error": null}

data: {"message": {"id": "m2", "author": {"role": "tool", "name": "title", "metadata": {}}, "create_time": 1700000001.1, "content": {"content_type": "text", "parts": ["Release notes"]}, "status": "finished_successfully", "recipient": "all"}, "conversation_id": "c1", "error": null}

data: [DONE]

`,
}

// protoThinks: the protocols whose stream above carries the thinking.
var protoThinks = map[string]bool{"openai-chat": true, "anthropic-messages": true, "ai-sdk-ui": true, "deepseek-web": true}

// Every named protocol reads its stream exactly: the answer whole from
// its first piece (the heading mark), the thinking apart, no echo of the
// user's message, no speech copy, no closing status.
func TestNetSpec_Protocols(t *testing.T) {
	if len(protoStreams) != len(config.Protocols) {
		t.Fatalf("%d streams for %d protocols", len(protoStreams), len(config.Protocols))
	}
	for name, body := range protoStreams {
		t.Run(name, func(t *testing.T) {
			spec := NetSpec{Protocol: name}.Resolved()
			if err := spec.Check(); err != nil {
				t.Fatal(err)
			}
			ans, think, err := extractBoth(spec, []byte(body))
			want := ""
			if protoThinks[name] {
				want = protoThinking
			}
			if err != nil || ans != protoAnswer || think != want {
				t.Fatalf("answer %q\nthinking %q\nerr %v\nwant %q and %q", ans, think, err, protoAnswer, want)
			}
		})
	}
}

// Each rule of the data keys, switched on and off: without it the
// stream reads wrong.
func TestNetSpec_ProtocolRules(t *testing.T) {
	ds := protoStreams["deepseek-web"]
	db := protoStreams["doubao-web"]
	for _, c := range []struct {
		name string
		spec NetSpec
		body string
		want string
	}{
		{"when keeps the answer's type apart from the thinking's", NetSpec{Format: NetSSE, Path: "delta", When: map[string]string{"type": "text-delta"}}, protoStreams["ai-sdk-ui"], protoAnswer},
		{"without when the thinking is read into the answer", NetSpec{Format: NetSSE, Path: "delta"}, protoStreams["ai-sdk-ui"], protoThinking + protoAnswer},
		{"a nested when (anthropic's delta.type)", NetSpec{Format: NetSSE, Path: "delta.thinking", When: map[string]string{"delta.type": "thinking_delta"}}, protoStreams["anthropic-messages"], protoThinking},
		{"patches: BATCH's first piece, bare continuations, no FINISHED", NetSpec{Format: NetSSE, Mode: NetPatch, Path: "response.fragments.*.content", When: map[string]string{"type": "RESPONSE"}}, ds, protoAnswer},
		{"patches: the thinking fragment", NetSpec{Format: NetSSE, Mode: NetPatch, Path: "response.fragments.*.content", When: map[string]string{"type": "THINK"}}, ds, protoThinking},
		{"patches without when: every fragment", NetSpec{Format: NetSSE, Mode: NetPatch, Path: "response.fragments.*.content"}, ds, protoThinking + protoAnswer},
		{"path v, as a generic reader has it: pieces lost, FINISHED read", NetSpec{Format: NetSSE, Path: "v"}, ds, "发布说明。\n先写标题。spoolgate 2.6\n\n- **快** start\n- 中文 🚀FINISHED"},
		{"doubao: the final whole answer is preferred", NetSpec{Format: NetSSE, Path: "patch_op.*.patch_value.tts_content", Final: "msg_finish_attr.brief"}, db, protoAnswer},
		{"doubao without final: both paths, the first piece included", NetSpec{Format: NetSSE, Path: "content.content_block.*.content.text_block.text|patch_op.*.patch_value.content_block.*.content.text_block.text"}, db, protoAnswer},
		{"doubao: the chunks alone lose the first piece", NetSpec{Format: NetSSE, Path: "patch_op.*.patch_value.content_block.*.content.text_block.text"}, db, "spoolgate 2.6\n\n- **快** start\n- 中文 🚀"},
		{"doubao: the speech copy beside the text reads it twice", NetSpec{Format: NetSSE, Path: "patch_op.*.patch_value.content_block.*.content.text_block.text|patch_op.*.patch_value.tts_content"}, db,
			"spoolgate 2.6\n\nspoolgate 2.6\n\n- **快** start\n- 中文 🚀- **快** start\n- 中文 🚀"},
		{"events keep the echo out", NetSpec{Format: NetSSE, Events: []string{"STREAM_MSG_NOTIFY"}, Path: "content.content_block.0.content.text_block.text|message.content_block.0.content.text_block.text"}, db, "# "},
		{"without events the echo is read", NetSpec{Format: NetSSE, Path: "content.content_block.0.content.text_block.text|message.content_block.0.content.text_block.text"}, db, "写一份发布说明# "},
		{"a number in when", NetSpec{Format: NetSSE, Path: "patch_op.*.patch_value.content_block.*.content.text_block.text", When: map[string]string{"block_type": "10001"}}, db, ""},
		{"cumulative, the assistant's only", NetSpec{Format: NetSSE, Mode: NetFull, Path: "message.content.parts.0", When: map[string]string{"message.author.role": "assistant"}}, protoStreams["chatgpt-legacy"], protoAnswer},
		{"cumulative without when: the title tool's message last", NetSpec{Format: NetSSE, Mode: NetFull, Path: "message.content.parts.0"}, protoStreams["chatgpt-legacy"], "Release notes"},
		{"websocket frames, records apart by U+001E", NetSpec{Format: NetWebSocket, Path: "arguments.0.text", When: map[string]string{"type": "1"}},
			"{\"type\":6}\x1e{\"type\":1,\"target\":\"update\",\"arguments\":[{\"text\":\"# spool\"}]}\x1e{\"type\":1,\"target\":\"update\",\"arguments\":[{\"text\":\"gate\"}]}\x1e{\"type\":3,\"invocationId\":\"0\"}\x1e", "# spoolgate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := extract(c.spec, []byte(c.body))
			if c.want == "" {
				if err == nil {
					t.Fatalf("%q, want no text", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("%q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// site new's probe: a named protocol that reads the stream is proposed
// (url and protocol), and used unchanged it reads the answer exactly.
func TestBestNet_Protocols(t *testing.T) {
	for name, body := range protoStreams {
		t.Run(name, func(t *testing.T) {
			shown := "spoolgate 2.6\n快 start\n中文 🚀" // the page's text of the answer
			all := []netState{{URL: "http://h/api/x/stream?conv=9", Seen: true, Ended: true, Body: []byte(body)}}
			spec, score, text := bestNet(all, shown)
			if score < netMatch {
				t.Fatalf("no proposal (%.2f)", score)
			}
			if plainProtocol(name) {
				if spec.Protocol != "" || protocolOf(spec) != name {
					t.Errorf("%+v: want %s's keys as they are", spec, name)
				}
			} else if !spec.Equal(NetSpec{Protocol: name, URL: "/api/x/stream"}) {
				t.Errorf("%+v, want protocol %s", spec, name)
			}
			if text != protoAnswer {
				t.Errorf("text %q", text)
			}
			if ans, _, err := extractBoth(spec.Resolved(), []byte(body)); err != nil || ans != protoAnswer {
				t.Errorf("the proposal reads %q, %v", ans, err)
			}
		})
	}
}

// Paths are ranked by the answer's own text before the cap: a stream
// with many metadata fields still has its whole-answer field tried.
func TestStringPaths_RankedBeforeCap(t *testing.T) {
	var b strings.Builder
	for i := range 3 {
		b.WriteString(`data: {"meta":{`)
		for k := range 2 * maxPaths {
			if k > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"f%03d":"x%d"`, k, i)
		}
		b.WriteString(`},"piece":"Hel"}` + "\n\n")
	}
	b.WriteString(`data: {"end":{"brief":"Hello there, the whole answer."}}` + "\n\n")
	evs := sseData([]byte(b.String()))
	paths := stringPaths(evs, "Hello there, the whole answer.")
	if len(paths) != maxPaths || paths[0] != "end.brief" {
		t.Fatalf("%d paths, first %q; want %d, end.brief first", len(paths), paths[0], maxPaths)
	}
	spec, score, _ := bestNet([]netState{{URL: "http://h/api/chat", Seen: true, Ended: true, Body: []byte(b.String())}}, "Hello there, the whole answer.")
	if score < 0.99 || spec.Path != "end.brief" {
		t.Fatalf("%+v %.2f, want end.brief", spec, score)
	}
}

func TestNetSpec_CheckProtocol(t *testing.T) {
	for _, c := range []struct {
		spec NetSpec
		want string
	}{
		{NetSpec{Protocol: "deepseek-web"}, ""},
		{NetSpec{Protocol: "doubao-web", URL: "/x"}, ""},
		{NetSpec{Protocol: "kimi"}, `protocol: "kimi": want one of ai-sdk-ui, anthropic-messages, chatgpt-legacy, deepseek-web, doubao-web, openai-chat`},
		{NetSpec{URL: "/a", Format: NetNDJSON, Path: "x", Events: []string{"a"}}, "events: only an SSE body"},
		{NetSpec{URL: "/a", Format: NetSSE, Path: "x", ReasoningWhen: map[string]string{"t": "r"}}, "reasoningWhen: without reasoning"},
		{NetSpec{URL: "/a", Format: NetText, When: map[string]string{"t": "r"}}, "when: a text body"},
		{NetSpec{URL: "/a", Format: NetSSE, Path: "a.b*.c"}, "a * stands for a whole key"},
		{NetSpec{URL: "/a", Format: NetWebSocket, Path: "x", Mode: NetPatch}, ""},
	} {
		err := c.spec.Check()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	// A key's own fields win over its protocol's.
	if r := (NetSpec{Protocol: "openai-chat", URL: "/v1/x", Reasoning: "choices.0.delta.reasoning"}).Resolved(); r.URL != "/v1/x" || r.Reasoning != "choices.0.delta.reasoning" || r.Path != "choices.0.delta.content" {
		t.Errorf("resolved %+v", r)
	}
}

// An open WebSocket's body is its frames so far, and it has not ended;
// once it closes, it has.
func TestNetResp_StateWebSocket(t *testing.T) {
	r := &netResp{url: "ws://h/hub", ws: true, chunks: [][]byte{[]byte(`{"t":"a"}` + wsSep), []byte(`{"t":"b"}` + wsSep)}}
	st := r.state()
	if !st.WS || st.Ended || string(st.Body) != `{"t":"a"}`+wsSep+`{"t":"b"}`+wsSep {
		t.Fatalf("open: %+v", st)
	}
	if got, err := extract(NetSpec{Format: NetWebSocket, Path: "t"}, st.Body); err != nil || got != "ab" {
		t.Fatalf("open: %q, %v", got, err)
	}
	r.finished, r.body = time.Now(), joinChunks(r.chunks)
	if st := r.state(); !st.Ended || string(st.Body) != string(r.body) {
		t.Fatalf("closed: %+v", st)
	}
}
