//go:build tools

// Package tools pins promtool (github.com/prometheus/prometheus/cmd/promtool), which checks the alert and recording
// rules synth writes, exactly as Prometheus would load them.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
