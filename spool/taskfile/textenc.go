package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
	xunicode "golang.org/x/text/encoding/unicode"
)

var (
	utf8BOM    = []byte{0xEF, 0xBB, 0xBF}
	utf16LEBOM = []byte{0xFF, 0xFE}
	utf16BEBOM = []byte{0xFE, 0xFF}
	utf32LEBOM = []byte{0xFF, 0xFE, 0x00, 0x00}
	utf32BEBOM = []byte{0x00, 0x00, 0xFE, 0xFF}
)

// textOf returns a task file's bytes as UTF-8 text: UTF-8 (a BOM dropped)
// as it is, UTF-16 with a byte-order mark (LE or BE, what Windows Notepad
// saves as "Unicode") converted. Anything else is refused with a reason
// that names the encoding the file looks like, so its author knows how to
// save it instead.
func textOf(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, utf32LEBOM), bytes.HasPrefix(data, utf32BEBOM):
		return nil, errors.New("file is UTF-32 text: save it as UTF-8 (or UTF-16)")
	case bytes.HasPrefix(data, utf8BOM):
		data = data[len(utf8BOM):]
	case bytes.HasPrefix(data, utf16LEBOM):
		return fromUTF16(data[2:], xunicode.LittleEndian, "LE")
	case bytes.HasPrefix(data, utf16BEBOM):
		return fromUTF16(data[2:], xunicode.BigEndian, "BE")
	}
	if !utf8.Valid(data) {
		if looksBinary(data) {
			return nil, errors.New("file is not text: it looks like binary data")
		}
		return nil, fmt.Errorf("file is not valid UTF-8 text: %s: save it as UTF-8", guessEncoding(data))
	}
	if bytes.IndexByte(data, 0) >= 0 {
		if enc := utf16Guess(data); enc != "" {
			return nil, fmt.Errorf("file contains NUL bytes: it looks like %s: save it as UTF-8, or as UTF-16 with its byte-order mark", enc)
		}
		return nil, errors.New("file is not text: it contains NUL bytes (binary data)")
	}
	return data, nil
}

// fromUTF16 converts UTF-16 text (its BOM already removed) to UTF-8,
// refusing a cut-short file or unpaired surrogates rather than guessing.
func fromUTF16(data []byte, order xunicode.Endianness, name string) ([]byte, error) {
	if len(data)%2 != 0 {
		return nil, fmt.Errorf("file is UTF-16 %s text with an odd number of bytes (cut short?)", name)
	}
	units := make([]uint16, len(data)/2)
	for i := range units {
		if order == xunicode.LittleEndian {
			units[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
		} else {
			units[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		}
	}
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		switch {
		case utf16.IsSurrogate(u) && u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] < 0xE000:
			i++ // a pair
		case utf16.IsSurrogate(u):
			return nil, fmt.Errorf("file is not valid UTF-16 %s text: unpaired surrogate at byte %d", name, 2+2*i)
		}
	}
	out, err := xunicode.UTF16(order, xunicode.IgnoreBOM).NewDecoder().Bytes(data)
	if err != nil {
		return nil, fmt.Errorf("file is not valid UTF-16 %s text: %v", name, err)
	}
	if len(out) > MaxTaskSize {
		return nil, fmt.Errorf("file is larger than 1 MiB once converted from UTF-16 to UTF-8")
	}
	if bytes.IndexByte(out, 0) >= 0 {
		return nil, errors.New("file contains NUL characters: not a text file")
	}
	return out, nil
}

// sample is how much of a file the guesses look at.
const sample = 64 << 10

// utf16Guess names UTF-16 without a byte-order mark, by its zero bytes:
// text in a Latin script has a zero in every other byte, odd for LE, even
// for BE. It returns "" if the zeros show no such pattern.
func utf16Guess(data []byte) string {
	if len(data) > sample {
		data = data[:sample]
	}
	var even, odd int
	for i, b := range data {
		if b == 0 {
			if i%2 == 0 {
				even++
			} else {
				odd++
			}
		}
	}
	half := len(data) / 2
	switch {
	case half == 0:
		return ""
	case odd*10 >= half*3 && even*10 < odd:
		return "UTF-16 LE without a byte-order mark"
	case even*10 >= half*3 && odd*10 < even:
		return "UTF-16 BE without a byte-order mark"
	}
	return ""
}

// looksBinary reports whether more than 1 byte in 20 of the sample is a
// control character that text does not hold (UTF-16 aside, whose zeros
// guessEncoding names).
func looksBinary(data []byte) bool {
	if len(data) > sample {
		data = data[:sample]
	}
	if utf16Guess(data) != "" {
		return false
	}
	ctl := 0
	for _, b := range data {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' && b != '\f' {
			ctl++
		}
	}
	return ctl*20 > len(data)
}

// guessEncoding names what a file that is not UTF-8 looks like.
func guessEncoding(data []byte) string {
	if len(data) > sample {
		data = data[:sample]
		// Do not judge by a character cut at the end of the sample.
		for i := 0; i < 3 && len(data) > 0 && data[len(data)-1] >= 0x80; i++ {
			data = data[:len(data)-1]
		}
	}
	if enc := utf16Guess(data); enc != "" {
		return "it looks like " + enc
	}
	if decodesAs(data, japanese.ShiftJIS, unicode.Hiragana, unicode.Katakana) {
		return `it looks like Shift_JIS (Japanese Windows "ANSI")`
	}
	if decodesAs(data, simplifiedchinese.GB18030, unicode.Han) {
		return `it looks like GBK/GB18030 (Chinese Windows "ANSI")`
	}
	return `it looks like an 8-bit code page such as Windows-1252 (Windows "ANSI") or Latin-1`
}

// decodesAs reports whether data decodes in enc without a replacement
// character and shows at least one character of the given scripts.
func decodesAs(data []byte, enc encoding.Encoding, scripts ...*unicode.RangeTable) bool {
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil || bytes.ContainsRune(out, utf8.RuneError) {
		return false
	}
	for _, r := range string(out) {
		if unicode.In(r, scripts...) {
			return true
		}
	}
	return false
}
