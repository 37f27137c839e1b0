package harness

import "flag"

// NoTests reports whether the test binary runs no test: it only lists them
// (-test.list) or its -test.run pattern is ^$. A TestMain then calls m.Run
// at once: it builds nothing and touches no cluster, which may be another
// run's.
func NoTests() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	return noTests(flagValue("test.list"), flagValue("test.run"))
}

func noTests(list, run string) bool { return list != "" || run == "^$" }

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
