// Package libtest is a test support package: its exports exist for tests.
package libtest

// Fake is used by tests alone.
func Fake() {}
