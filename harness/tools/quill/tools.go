//go:build tools

// Package tools pins quill, which signs Mach-O executables from any platform: the plugin's darwin executables get
// the ad-hoc signature macOS requires of every arm64 program, without a Mac.
package tools

import (
	_ "github.com/anchore/quill/cmd/quill"
)
