//go:build tools

package tools

import _ "github.com/crossplane/crossplane/cmd/crossplane"
