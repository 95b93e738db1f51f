// Package auth is the part of the github.com/nebius/gosdk/auth API that provider-kubernetes calls (see ../gosdk.go).
package auth

import "time"

// BearerToken is an IAM token.
type BearerToken struct {
	Token     string
	ExpiresAt time.Time
}

// ServiceAccountReader reads a service account's credentials.
type ServiceAccountReader interface{ serviceAccountReader() }

// PrivateKeyParser holds an authorized key; the stub never uses it.
type PrivateKeyParser struct{}

func (*PrivateKeyParser) serviceAccountReader() {}

// NewPrivateKeyParser returns a reader that is never read.
func NewPrivateKeyParser([]byte, string, string) *PrivateKeyParser { return &PrivateKeyParser{} }
