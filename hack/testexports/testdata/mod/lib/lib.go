// Package lib is the fixture's package under check.
package lib

// Used is used by app.
func Used() {}

// OnlyTests is used by app's test alone.
func OnlyTests() {}

// Unused is used by nobody: not a test-only name.
func Unused() {}

// Config is used by app; its fields are checked one by one.
type Config struct {
	Set       bool // set by app
	TestSeam  bool // set by lib's test alone
	Low, High int  // one group: app uses Low
	Tagged    bool `json:"tagged"` // encoded by name
}

// Run is called by app.
func (c Config) Run() {}

// Inspect is called by lib's test alone.
func (c Config) Inspect() {}

// String is called by fmt, through an interface.
func (c Config) String() string { return "" }

// Level is a type of a constant group.
type Level int

// One value of the group is used by app, so all are.
const (
	LevelLow Level = iota
	LevelHigh
)

// Choose has a parameter of an exported type that only tests name.
func Choose(o *Option) {}

// Option is named only by tests, but Choose's signature exports it.
type Option struct{}

// UsedByCommand is used by a command in production.
func UsedByCommand() {}
