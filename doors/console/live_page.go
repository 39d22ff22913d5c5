package console

import (
	"bytes"
	"html/template"
	"net/http"
)

// liveLabels are the live view's words, in English and Chinese.
type liveLabels struct {
	Lang, Title, Opening, Open, SignedIn, Ended, Close, Back, Hint string
	InUse, NoAccount, Busy, Held, NotOpened, NotOpen               string
	// Holding for sign-in (live.go): the button, what it does, the
	// waits (Waiting, HeldOther: %s the account), a retry's note, the
	// wait given up, a pause that failed.
	Hold, HoldNote, Waiting, HeldOther, Retrying, LeftHeld, NotHeld string
}

var (
	liveEN = liveLabels{Lang: "en", Title: "Sign in from the page", Opening: "opening the account's browser…",
		Open:     "live: click, scroll and type on the image; the account's tasks wait until you close this view",
		SignedIn: "signed in: the page shows the account signed in. Close this view to let its tasks run.",
		Ended:    "the live view has ended", Close: "close the view", Back: "back to the status page",
		Hint:      "Type an SMS code, scan a QR code with your phone, or clear a challenge on the image below. Paste (Ctrl+V) types what you paste.",
		InUse:     "in use by %s (live view since %s): only one operator at a time",
		NoAccount: "account %q is no web session of the config", Busy: "a task is running on account %s: open the view again when it has ended, or hold the account below",
		Held: "account %s is in use by another spoolgate process (a `spoolgate login` or another daemon)", NotOpened: "the live view did not open",
		NotOpen: "the live view is not open (closed, idle or ended): reload the page to open it again",
		Hold:    "hold the account and open when its task ends",
		HoldNote: "The running task is not interrupted; the account takes no new task until this view ends, which resumes it. " +
			"If you leave this page before the view opens, the account stays paused: resume it from the status page if you leave.",
		Waiting:   "account %s is paused for sign-in: waiting for its task to end, then the view opens by itself (asked every 2 s). Resume it from the status page if you leave.",
		HeldOther: "account %s was held already (the status page says why): waiting for its task to end, then the view opens by itself; that hold stays when the view ends.",
		Retrying:  "trying again every 2 s", LeftHeld: "stopped waiting: the account stays paused, resume it from the status page",
		NotHeld: "the account was not paused"}
	liveZH = liveLabels{Lang: "zh-CN", Title: "在网页上登录", Opening: "正在打开该账号的浏览器…",
		Open:     "实时画面：在图上点击、滚动、打字；关闭此画面之前，该账号的任务一直等待",
		SignedIn: "已登录：页面显示该账号已登录。关闭此画面，任务即可继续运行。",
		Ended:    "实时画面已结束", Close: "关闭画面", Back: "返回状态页",
		Hint:      "在下面的图上输入短信验证码、用手机扫二维码或完成安全验证。粘贴（Ctrl+V）会把粘贴的内容输入页面。",
		InUse:     "正由 %s 使用（实时画面自 %s 起）：同一时间只能一位操作员",
		NoAccount: "账号 %q 不是配置中的网页会话", Busy: "账号 %s 正在运行任务：任务结束后再打开，或在下面暂停该账号",
		Held: "账号 %s 正被另一个 spoolgate 进程使用（`spoolgate login` 或另一个守护进程）", NotOpened: "实时画面没有打开",
		NotOpen: "实时画面未打开（已关闭、闲置超时或已结束）：刷新页面可重新打开",
		Hold:    "暂停该账号，任务结束后自动打开",
		HoldNote: "正在运行的任务不会被中断；此画面结束之前该账号不接新任务，画面结束时自动恢复。" +
			"如果在画面打开之前离开此页，该账号会保持暂停：离开后请在状态页恢复它。",
		Waiting:   "账号 %s 已为登录而暂停：正在等待其任务结束，结束后自动打开画面（每 2 秒询问一次）。离开此页后请在状态页恢复该账号。",
		HeldOther: "账号 %s 原已暂停（原因见状态页）：正在等待其任务结束，结束后自动打开画面；画面结束后该暂停保持不变。",
		Retrying:  "每 2 秒重试一次", LeftHeld: "已停止等待：该账号仍处于暂停，请在状态页恢复",
		NotHeld: "未能暂停该账号"}
)

func liveLabelsFor(r *http.Request) liveLabels {
	if labelsFor(r).Lang == labelsZH.Lang {
		return liveZH
	}
	return liveEN
}

type liveView struct {
	L                              liveLabels
	Account, Site, CSRF, User, Err string
	Nonce                          string
}

// renderLive sends the live page: its own CSP, which lets its one inline
// script (by nonce) fetch from this server and show blob: images.
func (h *httpServer) renderLive(w http.ResponseWriter, v *liveView, code int) {
	v.Nonce = randomToken()
	var buf bytes.Buffer
	if err := liveTmpl.Execute(&buf, v); err != nil {
		h.log.Error("page", "page", "live", "err", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' blob:; connect-src 'self'; script-src 'nonce-"+v.Nonce+"'; form-action 'self'; frame-ancestors 'none'")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

var liveTmpl = template.Must(template.New("live").Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8"><title>{{.L.Title}}: {{.Account}}</title>
<style>body{font-family:system-ui,sans-serif;margin:1em} #status{padding:.4em .6em;border-radius:4px;background:#eef}
#status[data-state=signed-in]{background:#dfd} #status[data-state=ended],#status[data-state=error],#status[data-state=in-use]{background:#fdd}
#status[data-state=busy],#status[data-state=waiting]{background:#ffd}
#screen{display:inline-block;border:1px solid #888;outline:none;line-height:0;cursor:crosshair} #screen:focus{border-color:#06c;box-shadow:0 0 0 2px #9cf}
#img{max-width:100%;user-select:none;-webkit-user-drag:none}</style></head><body>
<h1>{{.L.Title}}: {{.Account}}{{if .Site}} ({{.Site}}){{end}}</h1>
{{if .Err}}<p id="status" data-state="in-use">{{.Err}}</p><p><a href="/">{{.L.Back}}</a></p>{{else}}
<p class="hint">{{.L.Hint}}</p>
<p id="status" data-state="opening">{{.L.Opening}}</p>
<div id="hold-box" hidden><p><button id="hold">{{.L.Hold}}</button></p><p class="hint">{{.L.HoldNote}}</p></div>
<div id="screen" tabindex="0"><img id="img" alt="" draggable="false" data-seq="0"></div>
<p><button id="close">{{.L.Close}}</button> <a href="/">{{.L.Back}}</a></p>
<script nonce="{{.Nonce}}">
(() => {
const acct = {{.Account}}, csrf = {{.CSRF}};
const L = {open: {{.L.Open}}, signedIn: {{.L.SignedIn}}, ended: {{.L.Ended}}, waiting: {{printf .L.Waiting .Account}},
  heldOther: {{printf .L.HeldOther .Account}}, retrying: {{.L.Retrying}}, leftHeld: {{.L.LeftHeld}}};
const st = document.getElementById('status'), img = document.getElementById('img'), scr = document.getElementById('screen');
const holdBox = document.getElementById('hold-box'), holdBtn = document.getElementById('hold');
let seq = 0, ended = false, waiting = false, queue = Promise.resolve();
const say = (state, text) => { st.dataset.state = state; st.textContent = text; };
const stop = (state, text) => { ended = true; say(state, text); };
const base = '/live/' + encodeURIComponent(acct);
const form = (f) => { const b = new URLSearchParams(f); b.set('csrf', csrf); return b; };
async function post(path, f) {
  const r = await fetch(path, {method: 'POST', body: form(f), credentials: 'same-origin'});
  if (!r.ok) throw Object.assign(new Error(await r.text()), {status: r.status, retry: r.headers.get('X-Live-Retry'), hold: r.headers.get('X-Live-Hold')});
  return r;
}
const send = (ev) => { if (!ended) queue = queue.then(() => post(base + '/input', ev)).catch((e) => { if (e.status === 410) stop('ended', e.message); else say('error', e.message); }); };
const at = (e) => { const b = img.getBoundingClientRect(); return {x: (e.clientX - b.left) / b.width, y: (e.clientY - b.top) / b.height}; };
const btn = (e) => ['left', 'middle', 'right'][e.button] || 'left';
const mods = (e) => (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
let down = null, lastMove = 0;
img.addEventListener('mousedown', (e) => { e.preventDefault(); scr.focus(); down = btn(e); send({kind: 'down', button: down, mods: mods(e), ...at(e)}); });
window.addEventListener('mouseup', (e) => { if (down === null) return; send({kind: 'up', button: down, mods: mods(e), ...at(e)}); down = null; });
img.addEventListener('mousemove', (e) => { const t = Date.now(); if (down === null || t - lastMove < 50) return; lastMove = t; send({kind: 'move', button: down, ...at(e)}); });
img.addEventListener('contextmenu', (e) => e.preventDefault());
scr.addEventListener('wheel', (e) => { e.preventDefault(); send({kind: 'wheel', dx: e.deltaX, dy: e.deltaY, ...at(e)}); }, {passive: false});
scr.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && (e.key === 'v' || e.key === 'V')) return; // the paste event types it
  e.preventDefault(); send({kind: 'key', key: e.key, code: e.code, vk: e.keyCode, mods: mods(e)});
});
scr.addEventListener('paste', (e) => { e.preventDefault(); const t = (e.clipboardData || window.clipboardData).getData('text'); if (t) send({kind: 'text', text: t}); });
document.getElementById('close').addEventListener('click', () => {
  if (waiting) { waiting = false; stop('ended', L.leftHeld); return; } // no view yet: the pause stays (the status page releases it)
  post(base + '/close', {}).catch(() => {}).finally(() => stop('ended', L.ended));
});
window.addEventListener('pagehide', () => { if (!ended) navigator.sendBeacon(base + '/close', form({})); });
async function frames() {
  while (!ended) {
    let r;
    try { r = await fetch(base + '/frame?after=' + seq, {credentials: 'same-origin', cache: 'no-store'}); }
    catch (e) { await new Promise((ok) => setTimeout(ok, 1000)); continue; }
    if (r.status === 200) {
      const n = +r.headers.get('X-Live-Seq'), w = r.headers.get('X-Live-Width'), h = r.headers.get('X-Live-Height');
      const u = URL.createObjectURL(await r.blob()), old = img.src;
      img.onload = () => { if (old.startsWith('blob:')) URL.revokeObjectURL(old); img.dataset.seq = String(n); };
      img.dataset.w = w; img.dataset.h = h; img.src = u; seq = n;
    } else if (r.status !== 204) { stop(r.status === 409 ? 'in-use' : 'ended', await r.text()); break; }
    if (r.headers.get('X-Live-Signed-In') === 'true') say('signed-in', L.signedIn); else say('open', L.open);
  }
}
// Held for sign-in: ask to open every 2 s until the account's task has
// ended (the server never waits); another operator's view is waited out
// too; a network error (a restart) is asked again.
async function wait(text) {
  waiting = true; holdBox.hidden = true; say('waiting', text);
  while (waiting) {
    await new Promise((ok) => setTimeout(ok, 2000));
    if (!waiting) return;
    try { await post(base + '/open', {}); } catch (e) {
      if (e.status === undefined || (e.status === 409 && e.retry)) {
        st.dataset.asked = String(+(st.dataset.asked || 0) + 1); // how many asks were refused, for a reader (a test)
        say('waiting', e.retry === 'in-use' ? e.message + ' · ' + L.retrying : text);
        continue;
      }
      waiting = false; stop(e.status === 409 ? 'in-use' : 'error', e.message); return;
    }
    waiting = false; return frames();
  }
}
holdBtn.addEventListener('click', () => {
  holdBtn.disabled = true;
  post(base + '/open', {hold: '1'}).then(() => { holdBox.hidden = true; return frames(); }, (e) => {
    if (e.status === 409 && e.retry) return wait(e.hold === 'other' ? L.heldOther : L.waiting);
    holdBtn.disabled = false; say('error', e.message);
  });
});
post(base + '/open', {}).then(frames, (e) => {
  if (e.status === 409 && e.retry === 'busy') { say('busy', e.message); holdBox.hidden = false; return; }
  stop(e.status === 409 ? 'in-use' : 'error', e.message);
});
})();
</script>{{end}}
</body></html>`))
