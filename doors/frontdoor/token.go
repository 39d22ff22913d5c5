package frontdoor

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/spoolgate/spoolgate/spool/config"
)

// TokenPrefix begins every token spoolgate makes, so a token pasted where
// it should not be is recognisable.
const TokenPrefix = "sgt_"

// NewToken makes a token of 256 random bits and its hash for `tokens:`.
// A fast hash is enough: the token is not a password a person chose, so
// no dictionary or guessing attack on the stored hash can succeed, and a
// request pays microseconds, not a slow hash's tens of milliseconds.
func NewToken() (tok, hash string) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	tok = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return tok, HashToken(tok)
}

// HashToken is tok's value for a token's `hash:` key.
func HashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return config.TokenHashPrefix + hex.EncodeToString(sum[:])
}

type tokenKey struct{}

func withToken(ctx context.Context, tk *token) context.Context {
	return context.WithValue(ctx, tokenKey{}, tk)
}

func tokenOf(ctx context.Context) *token {
	tk, _ := ctx.Value(tokenKey{}).(*token)
	return tk
}
