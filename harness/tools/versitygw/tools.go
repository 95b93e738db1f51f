//go:build tools

// Package tools pins the Versity S3 Gateway (github.com/versity/versitygw/cmd/versitygw), the S3-compatible object
// store the platform keeps CloudNativePG's backups in (harness/platform/object-store.ts).
package tools

import _ "github.com/versity/versitygw/cmd/versitygw"
