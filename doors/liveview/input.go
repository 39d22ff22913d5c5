package liveview

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// Input is one event from the operator's page. X and Y are fractions
// (0..1) of the image shown, so the page need not know the viewport.
type Input struct {
	Kind   string  // down, move, up (the mouse), wheel, key, text
	X, Y   float64 // down, move, up, wheel
	Button string  // left (default), middle, right
	DX, DY float64 // wheel, in CSS pixels
	Key    string  // key: the DOM key ("a", "Enter", "Backspace")
	Code   string  // key: the DOM code ("KeyA")
	VK     int64   // key: the key code
	Mods   int64   // Alt=1, Ctrl=2, Meta=4, Shift=8
	Text   string  // text: inserted as typed (a paste)
}

// maxText bounds one text event (a pasted code, not a document).
const maxText = 4096

// ErrBadInput is an input event the view does not take.
type ErrBadInput struct{ Why string }

func (e *ErrBadInput) Error() string { return "bad input: " + e.Why }

// Input sends one event to the page: a mouse button or move at the point
// of the image, a wheel turn, a key press (down and up) or a text.
// Events are sent one at a time, in the order they come.
func (v *View) Input(ctx context.Context, in Input) error {
	v.inMu.Lock()
	defer v.inMu.Unlock()
	v.mu.Lock()
	ended, w, h, p := v.ended, v.frame.Width, v.frame.Height, v.page
	v.lastIn, v.lastSeen = time.Now(), time.Now()
	v.mu.Unlock()
	if ended != "" {
		return fmt.Errorf("%w: %s", ErrEnded, ended)
	}
	if p == nil {
		return ErrOpening
	}
	if w <= 0 || h <= 0 {
		w, h = 800, 600 // no frame yet: headless Chromium's own size
	}
	ictx, cancel := context.WithTimeout(p.Tab(), 10*time.Second)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	return dispatch(ictx, in, w, h)
}

// dispatch sends in to the tab, whose viewport is w×h CSS pixels.
func dispatch(ctx context.Context, in Input, w, h float64) error {
	x, y := clamp01(in.X)*w, clamp01(in.Y)*h
	btn := input.MouseButtonLeft
	buttons := int64(1)
	switch in.Button {
	case "", "left":
	case "middle":
		btn, buttons = input.MouseButtonMiddle, 4
	case "right":
		btn, buttons = input.MouseButtonRight, 2
	default:
		return &ErrBadInput{Why: fmt.Sprintf("button %q", in.Button)}
	}
	mouse := input.DispatchMouseEventParams{X: x, Y: y, Modifiers: in.Mods}
	switch in.Kind {
	case "down":
		mouse.Type, mouse.Button, mouse.Buttons, mouse.ClickCount = input.DispatchMouseEventTypeMousePressed, btn, buttons, 1
	case "up":
		mouse.Type, mouse.Button, mouse.ClickCount = input.DispatchMouseEventTypeMouseReleased, btn, 1
	case "move":
		// A move with the button held drags (a slider).
		mouse.Type, mouse.Button, mouse.Buttons = input.DispatchMouseEventTypeMouseMoved, btn, buttons
	case "wheel":
		mouse.Type, mouse.DeltaX, mouse.DeltaY = input.DispatchMouseEventTypeMouseWheel, in.DX, in.DY
	case "key":
		return key(ctx, in)
	case "text":
		if in.Text == "" || len(in.Text) > maxText || !utf8.ValidString(in.Text) {
			return &ErrBadInput{Why: "text empty, too long or not UTF-8"}
		}
		_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: in.Text})
		return err
	default:
		return &ErrBadInput{Why: fmt.Sprintf("kind %q", in.Kind)}
	}
	_, err := chromedp.Call(ctx, input.DispatchMouseEvent, mouse)
	return err
}

// key presses one key: a key-down that carries the key's text when it
// types one (a single character, or Enter), and a key-up.
func key(ctx context.Context, in Input) error {
	if in.Key == "" || len(in.Key) > 32 || len(in.Code) > 32 || in.VK < 0 || in.VK > 255 {
		return &ErrBadInput{Why: "key"}
	}
	text := ""
	switch {
	case in.Key == "Enter":
		text = "\r"
	case utf8.RuneCountInString(in.Key) == 1 && in.Mods&(1|2|4) == 0:
		text = in.Key
	}
	typ := input.DispatchKeyEventTypeRawKeyDown
	if text != "" {
		typ = input.DispatchKeyEventTypeKeyDown
	}
	down := input.DispatchKeyEventParams{Type: typ, Key: in.Key, Code: in.Code, WindowsVirtualKeyCode: in.VK, NativeVirtualKeyCode: in.VK,
		Text: text, UnmodifiedText: text, Modifiers: in.Mods}
	if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, down); err != nil {
		return err
	}
	up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: in.Key, Code: in.Code, WindowsVirtualKeyCode: in.VK, NativeVirtualKeyCode: in.VK, Modifiers: in.Mods}
	_, err := chromedp.Call(ctx, input.DispatchKeyEvent, up)
	return err
}

func clamp01(f float64) float64 {
	switch {
	case f != f || f < 0: // NaN too
		return 0
	case f > 1:
		return 1
	}
	return f
}
