//go:build tools

// Package tools pins krew, kubectl's plugin manager, and its manifest validator: the krew manifest synth writes is
// validated and installed with them, offline, as `kubectl krew install --manifest --archive` would.
package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
