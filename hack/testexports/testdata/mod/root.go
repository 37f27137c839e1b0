// Package fixture is the fixture module's root package.
package fixture

// Gateway is the plugin's handler: exported for the programs that embed it.
type Gateway struct{ Fall bool }

// OnlyOwnTests is used by the root's own test alone.
func OnlyOwnTests() {}

// writer implements an interface of another module.
type writer struct{}

// WriteMsg is called through dns.ResponseWriter.
func (writer) WriteMsg() error { return nil }
